package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"

	"github.com/quarryhq/quarry"
)

// groupNotFound answers a group id that names no group.
func groupNotFound(id int64) error {
	return quarry.Errorf(quarry.ENOTFOUND, "User group %d does not exist", id)
}

// CreateGroup creates a user group with the given members and cc-pairs,
// granted basic (as every group is).
func (db *DB) CreateGroup(ctx context.Context, c *quarry.Caller, in quarry.UserGroupInput) (*quarry.UserGroup, error) {
	var g *quarry.UserGroup
	err := db.update(ctx, func(tx *Tx) error {
		if err := in.CheckNew(); err != nil {
			return err
		}
		if err := tx.checkGroupName(ctx, *in.Name, 0); err != nil {
			return err
		}
		id, err := tx.insertGroup(ctx, *in.Name)
		if err != nil {
			return err
		}
		if err := tx.setGroupMembers(ctx, c, id, in.UserIDs); err != nil {
			return err
		}
		if err := tx.setGroupPairs(ctx, id, in.CCPairIDs); err != nil {
			return err
		}
		tx.changed(ChangePair, in.CCPairIDs...)
		if err := tx.audit(ctx, c, "user_group.create", "user_group", id, []string{"name", "user_ids", "cc_pair_ids"}); err != nil {
			return err
		}
		g, err = tx.group(ctx, c, id)
		return err
	})
	return g, err
}

// insertGroup makes a group named name, with no members, granted basic:
// every group is, whether the admin API or the directory makes it,
// as in Onyx v4.6.1. It returns the group's id.
func (tx *Tx) insertGroup(ctx context.Context, name string) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO user_groups (name, name_key, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id`,
		name, quarry.FoldCase(name), tx.now.Micros()).Scan(&id); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO group_permissions (group_id, permission, granted_at) VALUES ($1, $2, $3)`,
		id, quarry.PermBasic, tx.now.Micros()); err != nil {
		return 0, err
	}
	return id, nil
}

func (tx *Tx) checkGroupName(ctx context.Context, name string, self int64) error {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM user_groups WHERE name = $1`, name).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case id != self:
		return quarry.Errorf(quarry.ECONFLICT, "User group with name '%s' already exists. Please choose a different name.", name)
	}
	return nil
}

// checkUsersExist fails with quarry.ErrUsersNotFound, naming in the order
// given every id of userIDs that names no user.
func (tx *Tx) checkUsersExist(ctx context.Context, userIDs []string) error {
	var missing []string
	for _, u := range userIDs {
		ok, err := tx.userExists(ctx, u)
		if err != nil {
			return err
		}
		if !ok && !slices.Contains(missing, u) {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		return quarry.ErrUsersNotFound(missing)
	}
	return nil
}

// setGroupMembers makes userIDs the members of group id, keeping the curator
// flag of members who stay, and demoting curators who curate nothing after.
func (tx *Tx) setGroupMembers(ctx context.Context, c *quarry.Caller, id int64, userIDs []string) error {
	if userIDs == nil {
		return nil
	}
	if err := tx.checkUsersExist(ctx, userIDs); err != nil {
		return err
	}
	userIDs = dedupe(userIDs)
	curated, err := tx.members(ctx, id)
	if err != nil {
		return err
	}
	for u, isCurator := range curated {
		if slices.Contains(userIDs, u) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2`, id, u); err != nil {
			return err
		}
		if !isCurator {
			continue
		}
		if err := tx.syncCuratorRole(ctx, c, u); err != nil { // The member lost a flag.
			return err
		}
	}
	for _, u := range userIDs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_group_members (group_id, user_id, is_curator) VALUES ($1, $2, FALSE)
			ON CONFLICT (group_id, user_id) DO NOTHING`, id, u); err != nil {
			return err
		}
	}
	return nil
}

// setGroupPairs makes pairIDs the cc-pairs shared with group id.
func (tx *Tx) setGroupPairs(ctx context.Context, id int64, pairIDs []int64) error {
	if pairIDs == nil {
		return nil
	}
	pairIDs = dedupe(pairIDs)
	for _, p := range pairIDs {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM cc_pairs WHERE id = $1`, p).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.ErrNoSuchPair(p)
		}
		if err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM cc_pair_groups WHERE group_id = $1`, id); err != nil {
		return err
	}
	for _, p := range pairIDs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cc_pair_groups (cc_pair_id, group_id) VALUES ($1, $2)`, p, id); err != nil {
			return err
		}
	}
	return nil
}

// checkGroupsExist fails with the contract's message for the first id that
// names no group, and refuses to share with a default group
// (quarry.CheckNotDefault): ids are the groups an object is to be shared
// with.
func (tx *Tx) checkGroupsExist(ctx context.Context, ids []int64) error {
	var defaults []string
	for _, id := range ids {
		var (
			name      string
			isDefault bool
		)
		err := tx.QueryRowContext(ctx, `SELECT name, is_default FROM user_groups WHERE id = $1`, id).Scan(&name, &isDefault)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.Errorf(quarry.EINVALID, "User group %d does not exist", id)
		}
		if err != nil {
			return err
		}
		if isDefault {
			defaults = append(defaults, name)
		}
	}
	return quarry.CheckNotDefault(defaults)
}

// Groups returns the user groups, ascending by id, with the cc-pairs
// shared with them that c may see; the default groups only if
// includeDefault.
func (db *DB) Groups(ctx context.Context, c *quarry.Caller, includeDefault bool) ([]*quarry.UserGroup, error) {
	gs, err := db.groups(ctx, db.read, c, 0)
	if err != nil || includeDefault {
		return gs, err
	}
	return slices.DeleteFunc(gs, func(g *quarry.UserGroup) bool { return g.IsDefault }), nil
}

// Group returns user group id, with the cc-pairs shared with it that c may
// see.
func (db *DB) Group(ctx context.Context, c *quarry.Caller, id int64) (*quarry.UserGroup, error) {
	gs, err := db.groups(ctx, db.read, c, id)
	if err != nil {
		return nil, err
	}
	if len(gs) == 0 {
		return nil, groupNotFound(id)
	}
	return gs[0], nil
}

// group returns user group id as Group does, or without the details of its
// cc-pairs (CCPairs nil) if c is nil.
func (tx *Tx) group(ctx context.Context, c *quarry.Caller, id int64) (*quarry.UserGroup, error) {
	gs, err := tx.db.groups(ctx, tx, c, id)
	if err != nil {
		return nil, err
	}
	if len(gs) == 0 {
		return nil, groupNotFound(id)
	}
	return gs[0], nil
}

// groups loads one group (id > 0) or all, in three statements, and then,
// unless c is nil, the details of their cc-pairs that c may see (see
// ccPairInfos).
func (db *DB) groups(ctx context.Context, q querier, c *quarry.Caller, id int64) ([]*quarry.UserGroup, error) {
	rows, err := q.QueryContext(ctx, `SELECT g.id, g.name, g.is_default, g.created_at, g.updated_at, sg.group_id IS NOT NULL
		FROM user_groups g LEFT JOIN scim_groups sg ON sg.group_id = g.id WHERE g.id BETWEEN $1 AND $2 ORDER BY g.id`, idRange(id)...)
	if err != nil {
		return nil, mapError(err)
	}
	groups := []*quarry.UserGroup{}
	byID := map[int64]*quarry.UserGroup{}
	for rows.Next() {
		g := &quarry.UserGroup{Users: []quarry.User{}, CuratorIDs: []string{}, CCPairIDs: []int64{}, SCIMMemberIDs: []string{}}
		var created, updated int64
		if err := rows.Scan(&g.ID, &g.Name, &g.IsDefault, &created, &updated, &g.SCIMSynced); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		g.CreatedAt, g.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
		groups = append(groups, g)
		byID[g.ID] = g
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `
		SELECT `+userColumns+`, m.group_id, m.is_curator, s.user_id IS NOT NULL
		FROM user_group_members m JOIN users u ON u.id = m.user_id LEFT JOIN scim_users s ON s.user_id = m.user_id
		WHERE m.group_id BETWEEN $1 AND $2 ORDER BY m.group_id, u.email`, idRange(id)...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var (
			gid                  int64
			isCurator, directory bool
			u                    quarry.User
		)
		if err := scanUser(rows, &u, &gid, &isCurator, &directory); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if g := byID[gid]; g != nil {
			g.Users = append(g.Users, u)
			if isCurator {
				g.CuratorIDs = append(g.CuratorIDs, u.ID)
			}
			if directory {
				g.SCIMMemberIDs = append(g.SCIMMemberIDs, u.ID)
			}
		}
	}
	for _, g := range groups {
		slices.Sort(g.SCIMMemberIDs)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT group_id, cc_pair_id FROM cc_pair_groups WHERE group_id BETWEEN $1 AND $2 ORDER BY group_id, cc_pair_id`, idRange(id)...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var gid, pid int64
		if err := rows.Scan(&gid, &pid); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if g := byID[gid]; g != nil {
			g.CCPairIDs = append(g.CCPairIDs, pid)
		}
	}
	if err := closeRows(rows); err != nil || c == nil || len(groups) == 0 {
		return groups, err
	}
	pairs, err := db.ccPairInfos(ctx, q, c, `p.id IN (SELECT cc_pair_id FROM cc_pair_groups WHERE group_id BETWEEN $1 AND $2)`, idRange(id))
	if err != nil {
		return nil, err
	}
	byPair := make(map[int64]*quarry.CCPairInfo, len(pairs))
	for _, p := range pairs {
		byPair[p.ID] = p
	}
	for _, g := range groups {
		g.CCPairs = []*quarry.CCPairInfo{}
		for _, pid := range g.CCPairIDs {
			if p := byPair[pid]; p != nil {
				g.CCPairs = append(g.CCPairs, p)
			}
		}
	}
	return groups, nil
}

// UpdateGroup changes the name, members or cc-pairs of group id, as c may
// (quarry.Caller.CheckChangeGroup): those who manage groups any group,
// curators the groups they curate, checked before the group is looked up.
// A curator may share with the group, or take from it, only cc-pairs it
// may change (quarry.Caller.CheckChangePair).
func (db *DB) UpdateGroup(ctx context.Context, c *quarry.Caller, id int64, in quarry.UserGroupInput) (*quarry.UserGroup, error) {
	var g *quarry.UserGroup
	err := db.update(ctx, func(tx *Tx) error {
		if err := c.CheckGroupScope(id); err != nil {
			return err
		}
		old, err := tx.group(ctx, nil, id)
		if err != nil {
			return err
		}
		if err := c.CheckChangeGroup(old, in); err != nil {
			return err
		}
		oldIDs := make([]string, len(old.Users))
		for i, u := range old.Users {
			oldIDs[i] = u.ID
		}
		renamed := in.Name != nil && *in.Name != old.Name
		var added, removed []string
		if in.UserIDs != nil {
			added, removed = diffMembers(oldIDs, dedupe(in.UserIDs))
		}
		if err := tx.checkDirectoryGroupChange(ctx, c, old, renamed, added, removed); err != nil {
			return err
		}
		var fields []string
		if renamed {
			if err := tx.checkGroupName(ctx, *in.Name, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET name = $1, name_key = $2 WHERE id = $3`,
				*in.Name, quarry.FoldCase(*in.Name), id); err != nil {
				return err
			}
			fields = append(fields, "name")
		}
		if in.UserIDs != nil {
			if !slices.Equal(dedupe(in.UserIDs), dedupe(oldIDs)) {
				fields = append(fields, "user_ids")
			}
			if err := tx.setGroupMembers(ctx, c, id, in.UserIDs); err != nil {
				return err
			}
		}
		if in.CCPairIDs != nil {
			next := dedupe(in.CCPairIDs)
			if !slices.Equal(next, old.CCPairIDs) {
				fields = append(fields, "cc_pair_ids")
			}
			if err := tx.checkPairsMoved(ctx, c, old.CCPairIDs, next); err != nil {
				return err
			}
			if err := tx.setGroupPairs(ctx, id, in.CCPairIDs); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET updated_at = $1 WHERE id = $2`, later(tx.now, old.UpdatedAt).Micros(), id); err != nil {
			return err
		}
		if in.CCPairIDs != nil {
			tx.changed(ChangePair, old.CCPairIDs...)
			tx.changed(ChangePair, in.CCPairIDs...)
		}
		if err := tx.audit(ctx, c, "user_group.update", "user_group", id, fields); err != nil {
			return err
		}
		g, err = tx.group(ctx, c, id)
		return err
	})
	return g, err
}

// checkPairsMoved checks that c may share with a group, or take from it,
// the cc-pairs in which old (the group's pairs) and next differ: anyone
// who manages groups any pair; others the pairs they may change, which
// they must see (a pair they cannot see does not exist for them).
func (tx *Tx) checkPairsMoved(ctx context.Context, c *quarry.Caller, old, next []int64) error {
	if c.ManagesGroups() {
		return nil
	}
	for _, id := range next {
		if slices.Contains(old, id) {
			continue
		}
		if err := tx.checkPairMove(ctx, c, id); err != nil {
			return err
		}
	}
	for _, id := range old {
		if slices.Contains(next, id) {
			continue
		}
		if err := tx.checkPairMove(ctx, c, id); err != nil {
			return err
		}
	}
	return nil
}

// checkPairMove checks that c sees and may change cc-pair id.
func (tx *Tx) checkPairMove(ctx context.Context, c *quarry.Caller, id int64) error {
	p, err := tx.pair(ctx, id)
	if quarry.ErrorCode(err) == quarry.ENOTFOUND || (err == nil && !c.CanSeePair(p)) {
		return quarry.ErrNoSuchPair(id)
	}
	if err != nil {
		return err
	}
	return c.CheckChangePair(p)
}

// AddGroupMembers adds users to group id, as c may
// (quarry.Caller.CheckChangeGroup, checked before the group is looked up);
// members stay as they are, curator flags included. Every user must exist
// (404, naming those that do not).
func (db *DB) AddGroupMembers(ctx context.Context, c *quarry.Caller, id int64, userIDs []string) (*quarry.UserGroup, error) {
	var g *quarry.UserGroup
	err := db.update(ctx, func(tx *Tx) error {
		if err := c.CheckGroupScope(id); err != nil {
			return err
		}
		old, err := tx.group(ctx, nil, id)
		if err != nil {
			return err
		}
		if err := tx.checkUsersExist(ctx, userIDs); err != nil {
			return err
		}
		members := make([]string, 0, len(old.Users)+len(userIDs))
		for _, u := range old.Users {
			members = append(members, u.ID)
		}
		if err := c.CheckChangeGroup(old, quarry.UserGroupInput{UserIDs: append(slices.Clone(members), userIDs...)}); err != nil {
			return err
		}
		added, _ := diffMembers(members, dedupe(userIDs))
		if err := tx.checkDirectoryGroupChange(ctx, c, old, false, added, nil); err != nil {
			return err
		}
		if err := tx.setGroupMembers(ctx, c, id, append(members, userIDs...)); err != nil {
			return err
		}
		var fields []string
		if len(dedupe(append(members, userIDs...))) != len(members) {
			fields = []string{"user_ids"}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET updated_at = $1 WHERE id = $2`, later(tx.now, old.UpdatedAt).Micros(), id); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "user_group.update", "user_group", id, fields); err != nil {
			return err
		}
		g, err = tx.group(ctx, c, id)
		return err
	})
	return g, err
}

// DeleteGroup deletes group id (see deleteGroup), as an admin: the default
// groups stay (quarry.UserGroup.CheckDelete), and a group the directory
// manages is deleted there (quarry.Caller.CheckDirectoryGroupDelete).
func (db *DB) DeleteGroup(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		g, err := tx.group(ctx, nil, id)
		if err != nil {
			return err
		}
		if err := g.CheckDelete(); err != nil {
			return err
		}
		if err := c.CheckDirectoryGroupDelete(g); err != nil {
			return err
		}
		return tx.deleteGroup(ctx, c, id)
	})
}

// deleteGroup deletes group id; what was shared with it is no longer shared
// with it, and curators who curate nothing after become basic users.
func (tx *Tx) deleteGroup(ctx context.Context, c *quarry.Caller, id int64) error {
	g, err := tx.group(ctx, nil, id)
	if err != nil {
		return err
	}
	// Its credentials lose a group: their representation, so their
	// version (ETag), changes.
	var creds []int64
	err = eachInts(ctx, tx, `SELECT credential_id, group_id FROM credential_groups WHERE group_id = $1`, []any{id},
		func(cred, _ int64) { creds = append(creds, cred) })
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE credentials SET version = version + 1
		WHERE id IN (SELECT credential_id FROM credential_groups WHERE group_id = $1)`, id); err != nil {
		return err
	}
	tx.changed(ChangeCredential, creds...)
	tx.changed(ChangePair, g.CCPairIDs...)
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE id = $1`, id); err != nil {
		return err
	}
	for _, u := range g.CuratorIDs {
		if err := tx.syncCuratorRole(ctx, c, u); err != nil {
			return err
		}
	}
	return tx.audit(ctx, c, "user_group.delete", "user_group", id, nil)
}

// checkDirectoryGroupChange applies quarry.Caller.CheckDirectoryGroupChange to a change of
// group g by c that renames it or not, and adds and removes the given
// members.
func (tx *Tx) checkDirectoryGroupChange(ctx context.Context, c *quarry.Caller, g *quarry.UserGroup, renamed bool, added, removed []string) error {
	if !g.SCIMSynced || (!renamed && len(added)+len(removed) == 0) {
		return nil
	}
	people, err := tx.directoryPeople(ctx, slices.Concat(added, removed))
	if err != nil {
		return err
	}
	return c.CheckDirectoryGroupChange(g, renamed, added, removed, people)
}

// SetCurator sets or clears the curator flag of member userID of group id.
// Setting it makes a basic user a curator; clearing the last one makes a
// curator a basic user again. The user must exist (404), and the flag
// apply to it (quarry.UserGroup.CheckCuratorFlag).
func (db *DB) SetCurator(ctx context.Context, c *quarry.Caller, id int64, userID string, isCurator bool) error {
	return db.update(ctx, func(tx *Tx) error {
		g, err := tx.group(ctx, nil, id)
		if err != nil {
			return err
		}
		u := &quarry.User{}
		err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1`, userID), u)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.ErrUserNotFound(userID)
		}
		if err != nil {
			return err
		}
		var was bool
		err = tx.QueryRowContext(ctx, `SELECT is_curator FROM user_group_members WHERE group_id = $1 AND user_id = $2`, id, userID).Scan(&was)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := g.CheckCuratorFlag(u, err == nil); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE user_group_members SET is_curator = $1 WHERE group_id = $2 AND user_id = $3`, isCurator, id, userID); err != nil {
			return err
		}
		if isCurator != was {
			if err := tx.syncCuratorRole(ctx, c, userID); err != nil {
				return err
			}
		}
		return tx.audit(ctx, c, "user_group.set_curator", "user_group", id, []string{"is_curator"})
	})
}

// GroupPermissions returns the permissions granted to group id, in
// quarry.Permission's order.
func (db *DB) GroupPermissions(ctx context.Context, id int64) ([]quarry.Permission, error) {
	var (
		out []quarry.Permission
		err error
	)
	err = db.snapshot(ctx, func(q querier) error {
		out, err = groupPermissions(ctx, q, id)
		return err
	})
	return out, err
}

// groupPermissions reads the permissions granted to group id.
func groupPermissions(ctx context.Context, q querier, id int64) ([]quarry.Permission, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM user_groups WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, groupNotFound(id)
	}
	if err != nil {
		return nil, mapError(err)
	}
	rows, err := q.QueryContext(ctx, `SELECT permission FROM group_permissions WHERE group_id = $1`, id)
	if err != nil {
		return nil, mapError(err)
	}
	var grants []quarry.Permission
	for rows.Next() {
		var p quarry.Permission
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		grants = append(grants, p)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	return quarry.GrantList(grants), nil
}

// SetGroupPermission grants permission p to group id (enabled) or takes it
// back, if p may be toggled (quarry.Permission.CheckToggle); granting a
// permission the group has, or taking back one it has not, changes
// nothing. The members hold the change from their next request on.
func (db *DB) SetGroupPermission(ctx context.Context, c *quarry.Caller, id int64, p quarry.Permission, enabled bool) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := tx.group(ctx, nil, id); err != nil {
			return err
		}
		if err := p.CheckToggle(); err != nil {
			return err
		}
		var (
			res sql.Result
			err error
		)
		if enabled {
			res, err = tx.ExecContext(ctx, `INSERT INTO group_permissions (group_id, permission, granted_by, granted_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (group_id, permission) DO NOTHING`, id, p, c.ID, tx.now.Micros())
		} else {
			res, err = tx.ExecContext(ctx, `DELETE FROM group_permissions WHERE group_id = $1 AND permission = $2`, id, p)
		}
		if err != nil {
			return err
		}
		var fields []string
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			fields = []string{"permissions"}
		}
		return tx.audit(ctx, c, "user_group.set_permission", "user_group", id, fields)
	})
}

// syncDefaultGroups makes user id a member of the default group of its
// role (quarry.DefaultGroupFor) and of no other default group: after it is
// made, after its role changes, and when it is activated. The service
// account of a revoked key belongs to none.
func (tx *Tx) syncDefaultGroups(ctx context.Context, id string) error {
	var (
		role    quarry.Role
		service bool
		keys    int
	)
	if err := tx.QueryRowContext(ctx, `SELECT role, service_account, (SELECT COUNT(*) FROM api_keys WHERE user_id = $1) FROM users WHERE id = $1`,
		id).Scan(&role, &service, &keys); err != nil {
		return err
	}
	name := quarry.DefaultGroupFor(role)
	if service && keys == 0 {
		name = ""
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_group_members WHERE user_id = $1
		AND group_id IN (SELECT id FROM user_groups WHERE is_default AND name <> $2)`, id, name); err != nil {
		return err
	}
	if name == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO user_group_members (group_id, user_id, is_curator)
		SELECT id, $1, FALSE FROM user_groups WHERE is_default AND name = $2
		ON CONFLICT (group_id, user_id) DO NOTHING`, id, name)
	return err
}

// idRange returns the bounds of a BETWEEN that selects the row with id, or
// every row for id 0: unlike "$1 = 0 OR id = $1", it lets SQLite use the
// index.
func idRange(id int64) []any {
	if id == 0 {
		return []any{int64(math.MinInt64), int64(math.MaxInt64)}
	}
	return []any{id, id}
}

// dedupe returns s sorted without duplicates.
func dedupe[T int64 | string](s []T) []T {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// members returns the members of group id, each with its curator flag.
func (tx *Tx) members(ctx context.Context, id int64) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT user_id, is_curator FROM user_group_members WHERE group_id = $1`, id)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for rows.Next() {
		var (
			u         string
			isCurator bool
		)
		if err := rows.Scan(&u, &isCurator); err != nil {
			rows.Close()
			return nil, err
		}
		out[u] = isCurator
	}
	return out, closeRows(rows)
}

// queryInts runs a query that returns one integer column.
func queryInts(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, mapError(err)
	}
	out := []int64{}
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		out = append(out, n)
	}
	return out, closeRows(rows)
}

// closeRows closes rows and returns the iteration error, if any.
func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	return mapError(errors.Join(err, rows.Close()))
}
