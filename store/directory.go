package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
)

// The company's directory (SCIM): the people and groups it provisions. A
// person it manages has a row in scim_users (and their emails in
// scim_user_emails) beside their account; a group it manages a row in
// scim_groups. Every group is visible to it (it takes one made by hand
// over by changing it), but only its people are. The rules are the root
// package's (quarry.DirectoryUser.Prepare, quarry.CheckDirectoryGroupName,
// ...); package scim applies the protocol's changes to copies that the
// functions here compare and write.

// forUpdate is the clause that locks the rows a write transaction reads,
// so that two changes of one resource at once on PostgreSQL do not both
// start from the same state. SQLite has one writer.
func (db *DB) forUpdate() string {
	if db.dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// directoryUserColumns are the columns scanDirectoryUser reads, of
// scim_users s joined with users u.
const directoryUserColumns = `u.id, u.email, u.name, u.is_active, u.role, u.created_at, u.updated_at,
	s.user_name, s.external_id, s.display_name, s.given_name, s.family_name, s.formatted, s.department, s.manager,
	s.active, s.updated_at`

// directoryUser is a directory person with what the rules need beside the
// representation: the account's role, and whether the directory says the
// person is active.
type directoryUser struct {
	*quarry.DirectoryUser
	role            quarry.Role
	directoryActive bool
}

// scanDirectoryUser scans directoryUserColumns, then the rest into more.
func scanDirectoryUser(s interface{ Scan(...any) error }, more ...any) (*directoryUser, error) {
	u := &directoryUser{DirectoryUser: &quarry.DirectoryUser{}}
	var created, updated, scimUpdated int64
	if err := s.Scan(append([]any{&u.ID, &u.Email, &u.Name, &u.Active, &u.role, &created, &updated,
		&u.UserName, &u.ExternalID, &u.DisplayName, &u.GivenName, &u.FamilyName, &u.Formatted, &u.Department, &u.Manager,
		&u.directoryActive, &scimUpdated}, more...)...); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(max(updated, scimUpdated))
	u.Groups = []quarry.GroupBrief{}
	return u, nil
}

// fillGroupNameKeys gives the groups made before the migration that adds
// user_groups.name_key their keys (quarry.FoldCase of their names), which
// SQL cannot compute. It writes nothing once every group has its key.
func (db *DB) fillGroupNameKeys(ctx context.Context) error {
	type row struct {
		id   int64
		name string
	}
	var groups []row
	rows, err := db.read.QueryContext(ctx, `SELECT id, name FROM user_groups WHERE name_key IS NULL`)
	if err != nil {
		return mapError(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.name); err != nil {
			rows.Close()
			return mapError(err)
		}
		groups = append(groups, r)
	}
	if err := closeRows(rows); err != nil || len(groups) == 0 {
		return err
	}
	return db.update(ctx, func(tx *Tx) error {
		for _, g := range groups {
			if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET name_key = $1 WHERE id = $2 AND name = $3`,
				quarry.FoldCase(g.name), g.id, g.name); err != nil {
				return err
			}
		}
		return nil
	})
}

// DirectoryUsers returns the page of directory people that f selects (nil:
// all), from the start-th (1-based), at most count, in the order they were
// provisioned, and how many f selects in all, read from one snapshot.
func (db *DB) DirectoryUsers(ctx context.Context, f *quarry.DirectoryFilter, start, count int) ([]*quarry.DirectoryUser, int, error) {
	b := &filterSQL{db: db, users: true}
	where, err := b.compile(f)
	if err != nil {
		return nil, 0, err
	}
	var (
		users []*quarry.DirectoryUser
		total int
	)
	// The page and the count in one statement (a provider's lookup by
	// userName is the commonest request: every round trip counts), and the
	// count alone when the page is empty.
	err = db.snapshot(ctx, func(q querier) error {
		const from = ` FROM scim_users s JOIN users u ON u.id = s.user_id WHERE `
		users = []*quarry.DirectoryUser{}
		if count > 0 {
			n := len(b.args)
			list, err := readDirectoryUsers(ctx, q, &total, `SELECT `+directoryUserColumns+`, COUNT(*) OVER ()`+from+where+
				fmt.Sprintf(` ORDER BY s.seq LIMIT $%d OFFSET $%d`, n+1, n+2), append(b.args, count, start-1)...)
			if err != nil || len(list) > 0 {
				for _, u := range list {
					users = append(users, u.DirectoryUser)
				}
				return err
			}
		}
		return mapError(q.QueryRowContext(ctx, `SELECT COUNT(*)`+from+where, b.args...).Scan(&total))
	})
	return users, total, err
}

// DirectoryUser returns directory person id (404 for anybody else).
func (db *DB) DirectoryUser(ctx context.Context, id string) (*quarry.DirectoryUser, error) {
	var u *directoryUser
	err := db.snapshot(ctx, func(q querier) error {
		var err error
		u, err = readDirectoryUser(ctx, q, id, "")
		return err
	})
	if err != nil {
		return nil, err
	}
	return u.DirectoryUser, nil
}

// errDirectoryUserNotFound answers an id that names no directory person.
func errDirectoryUserNotFound(id string) error {
	return quarry.Errorf(quarry.ENOTFOUND, "User %s not found", id)
}

// readDirectoryUser reads directory person id, with lock appended to its
// query (db.forUpdate in a write transaction).
func readDirectoryUser(ctx context.Context, q querier, id, lock string) (*directoryUser, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, errDirectoryUserNotFound(id)
	}
	us, err := readDirectoryUsers(ctx, q, nil, `SELECT `+directoryUserColumns+` FROM scim_users s JOIN users u ON u.id = s.user_id
		WHERE s.user_id = $1`+lock, strings.ToLower(id))
	if err != nil {
		return nil, err
	}
	if len(us) == 0 {
		return nil, errDirectoryUserNotFound(id)
	}
	return us[0], nil
}

// readDirectoryUsers runs query, which returns directoryUserColumns (and,
// when total is not nil, a count into it), and reads the emails and groups
// of the people it returns, in one statement more.
func readDirectoryUsers(ctx context.Context, q querier, total *int, query string, args ...any) ([]*directoryUser, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, mapError(err)
	}
	var (
		users []*directoryUser
		ids   []any
	)
	byID := map[string]*directoryUser{}
	for rows.Next() {
		var more []any
		if total != nil {
			more = []any{total}
		}
		u, err := scanDirectoryUser(rows, more...)
		if err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		users = append(users, u)
		byID[u.ID] = u
		ids = append(ids, u.ID)
	}
	if err := closeRows(rows); err != nil || len(users) == 0 {
		return users, err
	}
	var inArgs []any
	emailsIn := sqlIn("user_id", ids, &inArgs)
	groupsIn := sqlIn("m.user_id", ids, &inArgs)
	rows, err = q.QueryContext(ctx, `SELECT 0, user_id, ordinal, value, type, is_primary, display FROM scim_user_emails WHERE `+emailsIn+`
		UNION ALL SELECT 1, m.user_id, g.id, g.name, NULL, FALSE, NULL FROM user_group_members m JOIN user_groups g ON g.id = m.group_id
		WHERE `+groupsIn+` ORDER BY 1, 2, 3`, inArgs...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var (
			kind, n int64
			uid     string
			value   string
			e       quarry.DirectoryEmail
		)
		if err := rows.Scan(&kind, &uid, &n, &value, &e.Type, &e.Primary, &e.Display); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if kind == 0 {
			e.Value = value
			byID[uid].Emails = append(byID[uid].Emails, e)
		} else {
			byID[uid].Groups = append(byID[uid].Groups, quarry.GroupBrief{ID: n, Name: value})
		}
	}
	return users, closeRows(rows)
}

// CreateDirectoryUser provisions person in, as the directory c: a new
// account (basic, without a password: the person signs in with single
// sign-on), or, when a person who is not the directory's already has its
// email, that person's account, which the directory manages from then on
// (user.adopt); an adopted account whose email nobody had proven is handed
// over (Tx.handOver: its password, identities, sessions and tokens end).
// Its userName, email and externalId must be no other
// directory person's (409). A new account's email must pass the rules of
// new accounts (quarry.CheckNewEmail, no lookalike, domains).
func (db *DB) CreateDirectoryUser(ctx context.Context, c *quarry.Caller, in *quarry.DirectoryUser, domains quarry.EmailDomains) (*quarry.DirectoryUser, error) {
	if err := in.Prepare(); err != nil {
		return nil, err
	}
	var out *quarry.DirectoryUser
	// Two creations of one person at once (a provider's retries) on
	// PostgreSQL: the second fails on a unique index, and runs again to
	// answer as it would have, had it come second.
	err := db.retryConflict(ctx, func(tx *Tx) error {
		if err := tx.checkDirectoryUserUnique(ctx, "", in); err != nil {
			return err
		}
		key := quarry.EmailKey(in.Email)
		u := &quarry.User{}
		var managed, proven bool
		err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+`, EXISTS (SELECT 1 FROM scim_users s WHERE s.user_id = u.id), u.email_verified
			FROM users u WHERE u.email_key = $1`+tx.db.forUpdate(), key), u, &managed, &proven)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if err := tx.checkNewDirectoryEmail(ctx, in.Email, domains); err != nil {
				return err
			}
			if _, err := tx.markHasPeople(ctx); err != nil {
				return err
			}
			u = &quarry.User{ID: uuid.NewString(), Email: in.Email, Name: in.Name, Role: quarry.RoleBasic, IsActive: in.Active, CreatedAt: tx.now}
			// The company's directory says whose email it is: proven
			// (an account it adopts is handed over unless proven).
			if err := tx.insertUser(ctx, u, nil, true); err != nil {
				return err // ErrEmailTaken: made meanwhile, see retryConflict
			}
			if err := tx.audit(ctx, c, "user.create", "user", u.ID, quarry.DirectoryUserChangedFields(nil, in)); err != nil {
				return err
			}
		case err != nil:
			return err
		case managed || u.ServiceAccount:
			// The same person, made since the first check by a request at
			// the same time, is refused as the first check would have.
			if err := tx.checkDirectoryUserUnique(ctx, "", in); err != nil {
				return err
			}
			return quarry.ErrDirectoryUserTaken("email " + in.Email)
		default:
			// A person who is not the directory's yet: adopted.
			if in.Name != nil && (u.Name == nil || *u.Name != *in.Name) {
				if err := tx.setName(ctx, u.ID, in.Name); err != nil {
					return err
				}
			}
			if err := tx.setActive(ctx, c, u, in.Active); err != nil {
				return err
			}
			fields := quarry.DirectoryUserChangedFields(nil, in)
			if u.HandsOver(proven) {
				// Whoever registered the email proved nothing; the
				// directory says whose it is: the account is handed over.
				if err := tx.handOver(ctx, u.ID); err != nil {
					return err
				}
				fields = handOverFields(fields...)
			}
			if err := tx.audit(ctx, c, "user.adopt", "user", u.ID, fields); err != nil {
				return err
			}
		}
		in.ID = u.ID
		if err := tx.insertDirectoryUser(ctx, in); err != nil {
			return err
		}
		got, err := readDirectoryUser(ctx, tx, u.ID, "")
		if err == nil {
			out = got.DirectoryUser
		}
		return err
	})
	if errors.Is(err, errConflict) || errors.Is(err, quarry.ErrEmailTaken) {
		// Made again meanwhile, after the second try.
		return nil, quarry.ErrDirectoryUserTaken("userName " + in.UserName)
	}
	return out, err
}

// checkDirectoryUserUnique fails with 409 when another directory person
// than id has u's userName or externalId (read in one statement, so that
// requests at once get the answer they would get one after the other).
func (tx *Tx) checkDirectoryUserUnique(ctx context.Context, id string, u *quarry.DirectoryUser) error {
	rows, err := tx.QueryContext(ctx, `SELECT user_name_key = $1 FROM scim_users
		WHERE (user_name_key = $1 OR external_id = $3) AND user_id <> $2`, quarry.FoldCase(u.UserName), id, u.ExternalID)
	if err != nil {
		return err
	}
	sameName, sameExternal := false, false
	for rows.Next() {
		var name bool
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		sameName, sameExternal = sameName || name, sameExternal || !name
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	switch {
	case sameName:
		return quarry.ErrDirectoryUserTaken("userName " + u.UserName)
	case sameExternal:
		return quarry.ErrDirectoryUserTaken("externalId " + *u.ExternalID)
	}
	return nil
}

// checkNewDirectoryEmail applies the rules of a new account's email to
// email, which the directory gives a person: one script
// (quarry.CheckNewEmail), like no account's (lookalikes), of the allowed
// domains.
func (tx *Tx) checkNewDirectoryEmail(ctx context.Context, email string, domains quarry.EmailDomains) error {
	if err := quarry.CheckNewEmail(email); err != nil {
		return err
	}
	key := quarry.EmailKey(email)
	if err := domains.Check(key); err != nil {
		return err
	}
	return checkLookalike(ctx, tx, key)
}

// insertDirectoryUser writes what the directory says of person u, whose
// account exists.
func (tx *Tx) insertDirectoryUser(ctx context.Context, u *quarry.DirectoryUser) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO scim_users (user_id, user_name, user_name_key, external_id, display_name, given_name,
			family_name, formatted, department, manager, active, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
		u.ID, u.UserName, quarry.FoldCase(u.UserName), u.ExternalID, u.DisplayName, u.GivenName, u.FamilyName, u.Formatted,
		u.Department, u.Manager, u.Active, tx.now.Micros())
	if err != nil {
		return err
	}
	return tx.insertDirectoryEmails(ctx, u)
}

// insertDirectoryEmails writes the emails of directory person u.
func (tx *Tx) insertDirectoryEmails(ctx context.Context, u *quarry.DirectoryUser) error {
	for i, e := range u.Emails {
		if _, err := tx.ExecContext(ctx, `INSERT INTO scim_user_emails (user_id, ordinal, value, value_key, type, is_primary, display)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, u.ID, i, e.Value, quarry.FoldCase(e.Value), e.Type, e.Primary, e.Display); err != nil {
			return err
		}
	}
	return nil
}

// setName gives account id the name name.
func (tx *Tx) setName(ctx context.Context, id string, name *string) error {
	key := ""
	if name != nil {
		key = strings.ToLower(*name)
	}
	_, err := tx.ExecContext(ctx, `UPDATE users SET name = $1, name_key = $2, updated_at = $3 WHERE id = $4`, name, key, tx.now.Micros(), id)
	return err
}

// UpdateDirectoryUser changes directory person id as the directory c: it
// locks the person, checks ifMatch (the If-Match header's values, nil for
// none: 412 when the person's version is not one of them), applies change
// (a PUT's replacement or a PATCH's operations) to a copy, and writes what
// changed, in one transaction. A change that changes nothing writes
// nothing: not even the time of the person's last change, nor an audit
// entry. Deactivating ends the person's sessions (see setActive).
func (db *DB) UpdateDirectoryUser(ctx context.Context, c *quarry.Caller, id string, ifMatch []string, domains quarry.EmailDomains,
	change func(*quarry.DirectoryUser) error) (*quarry.DirectoryUser, error) {
	var out *quarry.DirectoryUser
	err := db.update(ctx, func(tx *Tx) error {
		old, err := readDirectoryUser(ctx, tx, id, tx.db.forUpdate())
		if err != nil {
			return err
		}
		if err := quarry.CheckVersionTag(ifMatch, old.Version()); err != nil {
			return err
		}
		u := old.Clone()
		if err := change(u); err != nil {
			return err
		}
		u.ID, u.Groups, u.CreatedAt, u.UpdatedAt = old.ID, old.Groups, old.CreatedAt, old.UpdatedAt
		if err := u.Prepare(); err != nil {
			return err
		}
		u.Email = quarry.DirectoryEmailChange(old.Email, u.Email)
		if u.Version() == old.Version() {
			out = old.DirectoryUser
			return nil
		}
		if err := tx.writeDirectoryUser(ctx, c, old, u, domains); err != nil {
			return err
		}
		got, err := readDirectoryUser(ctx, tx, id, "")
		if err == nil {
			out = got.DirectoryUser
		}
		return err
	})
	if errors.Is(err, errConflict) {
		return nil, quarry.Errorf(quarry.ECONFLICT, "The change conflicts with another directory user")
	}
	return out, err
}

// writeDirectoryUser writes the changes from old to u, which differ.
func (tx *Tx) writeDirectoryUser(ctx context.Context, c *quarry.Caller, old *directoryUser, u *quarry.DirectoryUser, domains quarry.EmailDomains) error {
	if err := tx.checkDirectoryUserUnique(ctx, u.ID, u); err != nil {
		return err
	}
	account := &quarry.User{ID: u.ID, Email: old.Email, Name: old.Name, Role: old.role, IsActive: old.Active}
	if quarry.EmailKey(u.Email) != quarry.EmailKey(old.Email) {
		if err := quarry.CheckDirectoryEmailChange(account); err != nil {
			return err
		}
		if err := tx.checkNewDirectoryEmail(ctx, u.Email, domains); err != nil {
			return err
		}
	}
	if u.Email != old.Email {
		key := quarry.EmailKey(u.Email)
		_, err := tx.ExecContext(ctx, `UPDATE users SET email = $1, email_key = $2, email_skeleton = $3, updated_at = $4 WHERE id = $5`,
			u.Email, key, quarry.EmailSkeleton(key), tx.now.Micros(), u.ID)
		if quarry.ErrorCode(mapError(err)) == quarry.ECONFLICT {
			return quarry.ErrDirectoryUserTaken("email " + u.Email)
		}
		if err != nil {
			return err
		}
	}
	if (old.Name == nil) != (u.Name == nil) || (u.Name != nil && *old.Name != *u.Name) {
		if err := tx.setName(ctx, u.ID, u.Name); err != nil {
			return err
		}
	}
	// What the directory says of the person's activation changes when its
	// change changes their activation; otherwise it stays (an admin's
	// deactivation by hand, which the representation shows, is not the
	// directory's word).
	directoryActive := old.directoryActive
	if u.Active != old.Active {
		directoryActive = u.Active
	}
	if fields := quarry.DirectoryUserChangedFields(old.DirectoryUser, u); len(fields) > 0 || directoryActive != old.directoryActive {
		if _, err := tx.ExecContext(ctx, `UPDATE scim_users SET user_name = $1, user_name_key = $2, external_id = $3, display_name = $4,
				given_name = $5, family_name = $6, formatted = $7, department = $8, manager = $9, active = $10, updated_at = $11
			WHERE user_id = $12`,
			u.UserName, quarry.FoldCase(u.UserName), u.ExternalID, u.DisplayName, u.GivenName, u.FamilyName, u.Formatted,
			u.Department, u.Manager, directoryActive, later(tx.now, old.UpdatedAt).Micros(), u.ID); err != nil {
			return err
		}
		if slices.Contains(fields, "emails") {
			if _, err := tx.ExecContext(ctx, `DELETE FROM scim_user_emails WHERE user_id = $1`, u.ID); err != nil {
				return err
			}
			if err := tx.insertDirectoryEmails(ctx, u); err != nil {
				return err
			}
		}
		if len(fields) > 0 {
			if err := tx.audit(ctx, c, "user.update", "user", u.ID, fields); err != nil {
				return err
			}
		}
	}
	return tx.setActive(ctx, c, account, u.Active)
}

// DeleteDirectoryUser is the directory's deletion of person id (RFC 7644
// section 3.6), as Onyx does it: the account is deactivated (its sessions
// end), leaves the groups the directory manages, and is no longer the
// directory's (user.release): a second deletion answers 404. The account
// itself stays, and what it owns keeps its owner.
func (db *DB) DeleteDirectoryUser(ctx context.Context, c *quarry.Caller, id string, ifMatch []string) error {
	return db.update(ctx, func(tx *Tx) error {
		old, err := readDirectoryUser(ctx, tx, id, tx.db.forUpdate())
		if err != nil {
			return err
		}
		if err := quarry.CheckVersionTag(ifMatch, old.Version()); err != nil {
			return err
		}
		account := &quarry.User{ID: old.ID, Email: old.Email, Name: old.Name, Role: old.role, IsActive: old.Active}
		if err := tx.setActive(ctx, c, account, false); err != nil {
			return err
		}
		groups, err := queryInts(ctx, tx, `SELECT m.group_id FROM user_group_members m JOIN scim_groups sg ON sg.group_id = m.group_id
			WHERE m.user_id = $1 ORDER BY m.group_id`, old.ID)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if err := tx.removeMembers(ctx, c, g, []string{old.ID}); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "user_group.update", "user_group", g, []string{"user_ids"}); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scim_users WHERE user_id = $1`, old.ID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "user.release", "user", old.ID, nil)
	})
}

// removeMembers removes users from group id, and demotes those of them
// who were curators and curate nothing after (quarry.RoleWithFlags).
func (tx *Tx) removeMembers(ctx context.Context, c *quarry.Caller, id int64, users []string) error {
	for _, u := range users {
		var isCurator bool
		err := tx.QueryRowContext(ctx, `DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2 RETURNING is_curator`, id, u).Scan(&isCurator)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		if isCurator {
			if err := tx.syncCuratorRole(ctx, c, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// directoryGroupColumns are the columns scanDirectoryGroup reads, of
// user_groups g left-joined with scim_groups sg.
const directoryGroupColumns = `g.id, g.name, g.created_at, g.updated_at, sg.external_id, sg.group_id IS NOT NULL, g.is_default`

func scanDirectoryGroup(s interface{ Scan(...any) error }) (*quarry.DirectoryGroup, error) {
	g := &quarry.DirectoryGroup{Members: []quarry.DirectoryMember{}}
	var created, updated int64
	if err := s.Scan(&g.ID, &g.DisplayName, &created, &updated, &g.ExternalID, &g.Managed, &g.IsDefault); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	return g, nil
}

// DirectoryGroups returns the page of groups that f selects (nil: all),
// ascending by id, as DirectoryUsers does, with their members unless
// members is false (Members then stays empty).
func (db *DB) DirectoryGroups(ctx context.Context, f *quarry.DirectoryFilter, start, count int, members bool) ([]*quarry.DirectoryGroup, int, error) {
	b := &filterSQL{db: db}
	where, err := b.compile(f)
	if err != nil {
		return nil, 0, err
	}
	var (
		groups []*quarry.DirectoryGroup
		total  int
	)
	err = db.snapshot(ctx, func(q querier) error {
		const from = ` FROM user_groups g LEFT JOIN scim_groups sg ON sg.group_id = g.id WHERE `
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*)`+from+where, b.args...).Scan(&total); err != nil {
			return mapError(err)
		}
		groups = []*quarry.DirectoryGroup{}
		if count <= 0 || start > total {
			return nil
		}
		n := len(b.args)
		groups, err = readDirectoryGroups(ctx, q, members, `SELECT `+directoryGroupColumns+from+where+
			fmt.Sprintf(` ORDER BY g.id LIMIT $%d OFFSET $%d`, n+1, n+2), append(b.args, count, start-1)...)
		return err
	})
	return groups, total, err
}

// DirectoryGroup returns group id as SCIM shows it, with its members
// unless members is false.
func (db *DB) DirectoryGroup(ctx context.Context, id string, members bool) (*quarry.DirectoryGroup, error) {
	var g *quarry.DirectoryGroup
	err := db.snapshot(ctx, func(q querier) error {
		var err error
		g, err = readDirectoryGroup(ctx, q, id, members, "")
		return err
	})
	return g, err
}

// errDirectoryGroupNotFound answers an id that names no group.
func errDirectoryGroupNotFound(id string) error {
	return quarry.Errorf(quarry.ENOTFOUND, "Group %s not found", id)
}

// readDirectoryGroup reads group id, with lock appended to its query.
func readDirectoryGroup(ctx context.Context, q querier, id string, members bool, lock string) (*quarry.DirectoryGroup, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, errDirectoryGroupNotFound(id)
	}
	lockOf := ""
	if lock != "" {
		lockOf = lock + " OF g" // not the outer-joined scim_groups row, which may be missing
	}
	gs, err := readDirectoryGroups(ctx, q, members, `SELECT `+directoryGroupColumns+` FROM user_groups g
		LEFT JOIN scim_groups sg ON sg.group_id = g.id WHERE g.id = $1`+lockOf, n)
	if err != nil {
		return nil, err
	}
	if len(gs) == 0 {
		return nil, errDirectoryGroupNotFound(id)
	}
	return gs[0], nil
}

// readDirectoryGroups runs query, which returns directoryGroupColumns, and
// reads the directory's people in the groups it returns (in one statement
// more) unless members is false.
func readDirectoryGroups(ctx context.Context, q querier, members bool, query string, args ...any) ([]*quarry.DirectoryGroup, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, mapError(err)
	}
	groups := []*quarry.DirectoryGroup{}
	byID := map[int64]*quarry.DirectoryGroup{}
	var ids []any
	for rows.Next() {
		g, err := scanDirectoryGroup(rows)
		if err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		groups = append(groups, g)
		byID[g.ID] = g
		ids = append(ids, g.ID)
	}
	if err := closeRows(rows); err != nil || len(groups) == 0 || !members {
		return groups, err
	}
	var inArgs []any
	rows, err = q.QueryContext(ctx, `SELECT m.group_id, m.user_id, u.email FROM user_group_members m
		JOIN scim_users s ON s.user_id = m.user_id JOIN users u ON u.id = m.user_id
		WHERE `+sqlIn("m.group_id", ids, &inArgs)+` ORDER BY m.group_id, m.user_id`, inArgs...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var (
			gid int64
			m   quarry.DirectoryMember
		)
		if err := rows.Scan(&gid, &m.ID, &m.Email); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		byID[gid].Members = append(byID[gid].Members, m)
	}
	return groups, closeRows(rows)
}

// CreateDirectoryGroup makes group in as the directory c, granted basic
// as every group is (insertGroup): its name must be no group's (409) nor
// a default group's (quarry.CheckDirectoryGroupName), its externalId no
// other directory group's, and its members the directory's people (400).
func (db *DB) CreateDirectoryGroup(ctx context.Context, c *quarry.Caller, in *quarry.DirectoryGroup) (*quarry.DirectoryGroup, error) {
	if err := in.CheckFields(""); err != nil {
		return nil, err
	}
	var out *quarry.DirectoryGroup
	err := db.update(ctx, func(tx *Tx) error {
		if err := tx.checkDirectoryGroupUnique(ctx, 0, in); err != nil {
			return err
		}
		if err := tx.checkDirectoryMembers(ctx, in.MemberIDs()); err != nil {
			return err
		}
		id, err := tx.insertGroup(ctx, in.DisplayName)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO scim_groups (group_id, external_id, created_at) VALUES ($1, $2, $3)`,
			id, in.ExternalID, tx.now.Micros()); err != nil {
			return err
		}
		if err := tx.addMembers(ctx, id, in.MemberIDs()); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "user_group.create", "user_group", id, []string{"name", "user_ids", "external_id"}); err != nil {
			return err
		}
		out, err = readDirectoryGroup(ctx, tx, strconv.FormatInt(id, 10), true, "")
		return err
	})
	if errors.Is(err, errConflict) {
		return nil, quarry.Errorf(quarry.ECONFLICT, "Group with name '%s' already exists", in.DisplayName)
	}
	return out, err
}

// checkDirectoryGroupUnique fails with 409 when a group other than id has
// g's name, or a directory group other than id its externalId.
func (tx *Tx) checkDirectoryGroupUnique(ctx context.Context, id int64, g *quarry.DirectoryGroup) error {
	var other int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM user_groups WHERE name = $1 AND id <> $2`, g.DisplayName, id).Scan(&other)
	if err == nil {
		return quarry.Errorf(quarry.ECONFLICT, "Group with name '%s' already exists", g.DisplayName)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if g.ExternalID == nil {
		return nil
	}
	err = tx.QueryRowContext(ctx, `SELECT group_id FROM scim_groups WHERE external_id = $1 AND group_id <> $2`, *g.ExternalID, id).Scan(&other)
	if err == nil {
		return quarry.Errorf(quarry.ECONFLICT, "Group with externalId '%s' already exists", *g.ExternalID)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// checkDirectoryMembers fails with 400 naming the ids that are not the
// directory's people.
func (tx *Tx) checkDirectoryMembers(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	found, err := tx.directoryPeople(ctx, ids)
	if err != nil {
		return err
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return quarry.ErrMembersNotFound(missing)
	}
	return nil
}

// directoryPeople returns which of ids are people the directory manages.
func (tx *Tx) directoryPeople(ctx context.Context, ids []string) (map[string]bool, error) {
	found := map[string]bool{}
	err := inChunks(ids, "user_id", func(cond string, args []any) error {
		rows, err := tx.QueryContext(ctx, `SELECT user_id FROM scim_users WHERE `+cond, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			found[id] = true
		}
		return closeRows(rows)
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// addMembers adds users to group id (those there already stay as they
// are).
func (tx *Tx) addMembers(ctx context.Context, id int64, users []string) error {
	for _, u := range users {
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_group_members (group_id, user_id, is_curator) VALUES ($1, $2, FALSE)
			ON CONFLICT (group_id, user_id) DO NOTHING`, id, u); err != nil {
			return err
		}
	}
	return nil
}

// UpdateDirectoryGroup changes group id as the directory c, as
// UpdateDirectoryUser does a person: a PUT's replacement or a PATCH's
// operations (change) apply to a copy, and what changed is written: the
// name (quarry.CheckDirectoryGroupName, unique), the externalId, and the
// memberships of the directory's people (those added must be its people;
// the group's other members stay). A group made by hand becomes the
// directory's by the first change it makes (user_group.adopt). A default
// group is never the directory's to change (quarry.DirectoryGroup.CheckWrite).
func (db *DB) UpdateDirectoryGroup(ctx context.Context, c *quarry.Caller, id string, ifMatch []string,
	change func(*quarry.DirectoryGroup) error) (*quarry.DirectoryGroup, error) {
	var out *quarry.DirectoryGroup
	err := db.update(ctx, func(tx *Tx) error {
		old, err := readDirectoryGroup(ctx, tx, id, true, tx.db.forUpdate())
		if err != nil {
			return err
		}
		if err := quarry.CheckVersionTag(ifMatch, old.Version()); err != nil {
			return err
		}
		if err := old.CheckWrite(); err != nil {
			return err
		}
		g := old.Clone()
		if err := change(g); err != nil {
			return err
		}
		g.ID, g.Managed, g.CreatedAt, g.UpdatedAt = old.ID, old.Managed, old.CreatedAt, old.UpdatedAt
		if err := g.CheckFields(old.DisplayName); err != nil {
			return err
		}
		added, removed := diffMembers(old.MemberIDs(), g.MemberIDs())
		if len(added) == 0 && len(removed) == 0 {
			g.Members = old.Members // the same, in the same order
		}
		if g.Version() == old.Version() {
			out = old
			return nil
		}
		if err := tx.checkDirectoryGroupUnique(ctx, old.ID, g); err != nil {
			return err
		}
		if err := tx.checkDirectoryMembers(ctx, added); err != nil {
			return err
		}
		if err := tx.checkDirectoryAddition(ctx, old.ID, old.DisplayName, added); err != nil { // no one added to a group granted more than basic
			return err
		}
		var fields []string
		if g.DisplayName != old.DisplayName {
			if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET name = $1, name_key = $2 WHERE id = $3`,
				g.DisplayName, quarry.FoldCase(g.DisplayName), old.ID); err != nil {
				return err
			}
			fields = append(fields, "name")
		}
		if len(added)+len(removed) > 0 {
			if err := tx.addMembers(ctx, old.ID, added); err != nil {
				return err
			}
			if err := tx.removeMembers(ctx, c, old.ID, removed); err != nil {
				return err
			}
			fields = append(fields, "user_ids")
		}
		if (old.ExternalID == nil) != (g.ExternalID == nil) || (g.ExternalID != nil && *old.ExternalID != *g.ExternalID) {
			fields = append(fields, "external_id")
		}
		if !old.Managed {
			if _, err := tx.ExecContext(ctx, `INSERT INTO scim_groups (group_id, external_id, created_at) VALUES ($1, $2, $3)`,
				old.ID, g.ExternalID, tx.now.Micros()); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "user_group.adopt", "user_group", old.ID, nil); err != nil {
				return err
			}
		} else if slices.Contains(fields, "external_id") {
			if _, err := tx.ExecContext(ctx, `UPDATE scim_groups SET external_id = $1 WHERE group_id = $2`, g.ExternalID, old.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET updated_at = $1 WHERE id = $2`, later(tx.now, old.UpdatedAt).Micros(), old.ID); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "user_group.update", "user_group", old.ID, fields); err != nil {
			return err
		}
		out, err = readDirectoryGroup(ctx, tx, id, true, "")
		return err
	})
	if errors.Is(err, errConflict) {
		return nil, quarry.Errorf(quarry.ECONFLICT, "The change conflicts with another group")
	}
	return out, err
}

// diffMembers returns the ids of next not in old, and of old not in next.
func diffMembers(old, next []string) (added, removed []string) {
	in := func(s []string) map[string]bool {
		m := make(map[string]bool, len(s))
		for _, id := range s {
			m[id] = true
		}
		return m
	}
	o, n := in(old), in(next)
	for _, id := range next {
		if !o[id] {
			added = append(added, id)
		}
	}
	for _, id := range old {
		if !n[id] {
			removed = append(removed, id)
		}
	}
	return added, removed
}

// DeleteDirectoryGroup deletes group id as the directory c, as an admin's
// deletion does (see DeleteGroup); a default group is never the
// directory's to delete (quarry.DirectoryGroup.CheckWrite).
func (db *DB) DeleteDirectoryGroup(ctx context.Context, c *quarry.Caller, id string, ifMatch []string) error {
	return db.update(ctx, func(tx *Tx) error {
		old, err := readDirectoryGroup(ctx, tx, id, true, tx.db.forUpdate())
		if err != nil {
			return err
		}
		if err := quarry.CheckVersionTag(ifMatch, old.Version()); err != nil {
			return err
		}
		if err := old.CheckWrite(); err != nil {
			return err
		}
		return tx.deleteGroup(ctx, c, old.ID)
	})
}

// filterSQL turns a quarry.DirectoryFilter into a condition on scim_users s
// and users u (users), or on user_groups g and scim_groups sg, with its
// arguments.
type filterSQL struct {
	db    *DB
	users bool
	args  []any
}

// arg adds an argument and returns its placeholder.
func (b *filterSQL) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// compile returns the condition of f ("TRUE" for nil).
func (b *filterSQL) compile(f *quarry.DirectoryFilter) (string, error) {
	if f == nil {
		return "1 = 1", nil
	}
	switch f.Op {
	case quarry.FilterAnd, quarry.FilterOr:
		l, err := b.compile(f.Left)
		if err != nil {
			return "", err
		}
		r, err := b.compile(f.Right)
		if err != nil {
			return "", err
		}
		return "(" + l + " " + strings.ToUpper(string(f.Op)) + " " + r + ")", nil
	case quarry.FilterNot:
		l, err := b.compile(f.Left)
		if err != nil {
			return "", err
		}
		return "NOT (" + l + ")", nil
	}
	if b.users {
		return b.userComparison(f)
	}
	return b.groupComparison(f)
}

// userComparison compiles a comparison on an attribute of people.
func (b *filterSQL) userComparison(f *quarry.DirectoryFilter) (string, error) {
	switch f.Attr {
	case "id":
		return b.cmp("s.user_id", f.Op, strings.ToLower(f.Value), false), nil
	case "userName":
		return b.cmp("s.user_name_key", f.Op, quarry.FoldCase(f.Value), false), nil
	case "externalId":
		return b.cmp("s.external_id", f.Op, f.Value, true), nil
	case "displayName":
		if f.Op == quarry.FilterPresent {
			return "u.name IS NOT NULL", nil
		}
		return b.cmp("u.name_key", f.Op, strings.ToLower(f.Value), false), nil
	case "active":
		switch f.Op {
		case quarry.FilterPresent:
			return "1 = 1", nil
		case quarry.FilterEq:
			return "u.is_active = " + b.arg(f.Value == "true"), nil
		case quarry.FilterNe:
			return "u.is_active <> " + b.arg(f.Value == "true"), nil
		}
	case "emails.value":
		// The emails the directory gave, or the account's email when it
		// gave none (which is what the person's emails then show).
		if f.Op == quarry.FilterPresent {
			return "1 = 1", nil
		}
		op, negate := f.Op, false
		if op == quarry.FilterNe {
			op, negate = quarry.FilterEq, true
		}
		v := quarry.FoldCase(f.Value)
		cond := `(EXISTS (SELECT 1 FROM scim_user_emails e WHERE e.user_id = s.user_id AND ` + b.cmp("e.value_key", op, v, false) + `)
			OR (NOT EXISTS (SELECT 1 FROM scim_user_emails e WHERE e.user_id = s.user_id) AND ` + b.cmp("u.email_key", op, v, false) + `))`
		if negate {
			cond = "NOT " + cond
		}
		return cond, nil
	}
	return "", quarry.Errorf(quarry.EINVALID, "Filtering people on %s %s is not supported", f.Attr, f.Op)
}

// groupComparison compiles a comparison on an attribute of groups.
func (b *filterSQL) groupComparison(f *quarry.DirectoryFilter) (string, error) {
	switch f.Attr {
	case "id":
		return b.cmp("CAST(g.id AS TEXT)", f.Op, f.Value, false), nil
	case "displayName":
		return b.cmp("g.name_key", f.Op, quarry.FoldCase(f.Value), false), nil
	case "externalId":
		return b.cmp("sg.external_id", f.Op, f.Value, true), nil
	case "members.value":
		const members = `SELECT 1 FROM user_group_members m JOIN scim_users su ON su.user_id = m.user_id WHERE m.group_id = g.id`
		switch f.Op {
		case quarry.FilterPresent:
			return "EXISTS (" + members + ")", nil
		case quarry.FilterNe:
			return "NOT EXISTS (" + members + " AND " + b.cmp("m.user_id", quarry.FilterEq, strings.ToLower(f.Value), false) + ")", nil
		}
		return "EXISTS (" + members + " AND " + b.cmp("m.user_id", f.Op, strings.ToLower(f.Value), false) + ")", nil
	}
	return "", quarry.Errorf(quarry.EINVALID, "Filtering groups on %s %s is not supported", f.Attr, f.Op)
}

// cmp compiles a comparison of the text column col with v: equality and
// the others compare texts exactly (case-insensitive attributes compare
// their folded keys with a folded v); a nullable column's NULL is equal to
// nothing and present for pr only. The result is never NULL, so that not
// works as expected.
func (b *filterSQL) cmp(col string, op quarry.FilterOp, v string, nullable bool) string {
	if op == quarry.FilterPresent {
		if nullable {
			return col + " IS NOT NULL"
		}
		return "1 = 1"
	}
	p := b.arg(v)
	n := "length(CAST(" + p + " AS TEXT))"
	var e string
	switch op {
	case quarry.FilterEq:
		e = col + " = " + p
	case quarry.FilterNe:
		if nullable {
			return "(" + col + " IS NULL OR " + col + " <> " + p + ")"
		}
		return col + " <> " + p
	case quarry.FilterContains:
		if b.db.dialect == Postgres {
			e = "strpos(" + col + ", " + p + ") > 0"
		} else {
			e = "instr(" + col + ", " + p + ") > 0"
		}
	case quarry.FilterStartsWith:
		e = "substr(" + col + ", 1, " + n + ") = " + p
	case quarry.FilterEndsWith:
		e = "(length(" + col + ") >= " + n + " AND substr(" + col + ", length(" + col + ") - " + n + " + 1) = " + p + ")"
	default:
		e = "1 = 0"
	}
	if nullable {
		return "(" + col + " IS NOT NULL AND " + e + ")"
	}
	return e
}
