package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
)

// errNotAuthenticated answers every token or session that opens nothing.
var errNotAuthenticated = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")

// userColumns are the columns scanUser reads, of users u.
const userColumns = `u.id, u.email, u.name, u.role, u.is_active, u.service_account, u.created_at`

// scanUser scans userColumns, then the rest into more.
func scanUser(s interface{ Scan(...any) error }, u *quarry.User, more ...any) error {
	var created int64
	if err := s.Scan(append([]any{&u.ID, &u.Email, &u.Name, &u.Role, &u.IsActive, &u.ServiceAccount, &created}, more...)...); err != nil {
		return err
	}
	u.CreatedAt = quarry.TimeFromMicros(created)
	return nil
}

// Authenticate returns the caller whose API key hashes to hash, with its
// group memberships and their grants. A deactivated user's keys open
// nothing. Callers are kept between requests while they hold (see
// readCache): then a request reads only the version of the copies.
func (db *DB) Authenticate(ctx context.Context, hash string) (*quarry.Caller, error) {
	return cached(ctx, db,
		func(rc *readCache, v int64) (*quarry.Caller, bool) { return rc.caller(v, hash) },
		func(q querier) (*quarry.Caller, error) {
			return db.caller(ctx, q, `
				SELECT `+userColumns+`, k.id, 0, `+membershipColumns+`
				FROM api_keys k
				JOIN users u ON u.id = k.user_id
				`+membershipJoins+`
				WHERE k.hashed_key = $1 AND u.is_active
				ORDER BY m.group_id`, hash)
		},
		func(rc *readCache, v int64, c *quarry.Caller) { rc.putCaller(v, hash, c) })
}

// membershipColumns and membershipJoins read a caller's memberships of
// user u and each membership's grants: one row per membership and
// permission granted to its group.
const (
	membershipColumns = `m.group_id, m.is_curator, mg.is_default, gp.permission`
	membershipJoins   = `LEFT JOIN user_group_members m ON m.user_id = u.id
		LEFT JOIN user_groups mg ON mg.id = m.group_id
		LEFT JOIN group_permissions gp ON gp.group_id = m.group_id`
)

// caller runs a query that returns userColumns, an API key id, a session id
// and membershipColumns (rows ordered by group), and returns the caller it
// describes, with its permissions worked out (quarry.Caller.SetGrants).
func (db *DB) caller(ctx context.Context, q querier, query string, args ...any) (*quarry.Caller, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	var (
		c      *quarry.Caller
		grants []quarry.Permission
	)
	for rows.Next() {
		var (
			u          quarry.Caller
			groupID    sql.NullInt64
			isCurator  sql.NullBool
			isDefault  sql.NullBool
			permission sql.NullString
		)
		if err := scanUser(rows, &u.User, &u.APIKeyID, &u.SessionID, &groupID, &isCurator, &isDefault, &permission); err != nil {
			return nil, mapError(err)
		}
		if c == nil {
			c = &u
		}
		if groupID.Valid && (len(c.Memberships) == 0 || c.Memberships[len(c.Memberships)-1].GroupID != groupID.Int64) {
			c.Memberships = append(c.Memberships, quarry.Membership{GroupID: groupID.Int64, IsCurator: isCurator.Bool, IsDefault: isDefault.Bool})
		}
		if p := quarry.Permission(permission.String); permission.Valid && !slices.Contains(grants, p) {
			grants = append(grants, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	if c == nil {
		return nil, errNotAuthenticated
	}
	c.SetGrants(grants)
	return c, nil
}

// userCaller returns user id as a caller, with its memberships.
func (db *DB) userCaller(ctx context.Context, id string) (*quarry.Caller, error) {
	return db.caller(ctx, db.read, `
		SELECT `+userColumns+`, 0, 0, `+membershipColumns+`
		FROM users u `+membershipJoins+`
		WHERE u.id = $1 AND u.is_active ORDER BY m.group_id`, id)
}

// createUser inserts a service-account user for an API key.
func (tx *Tx) createUser(ctx context.Context, name *string, role quarry.Role) (*quarry.User, error) {
	id := uuid.NewString()
	u := &quarry.User{
		ID:             id,
		Email:          serviceAccountEmail(name, id),
		Name:           name,
		Role:           role,
		IsActive:       true,
		ServiceAccount: true,
		CreatedAt:      tx.now,
	}
	return u, tx.insertUser(ctx, u, nil, false)
}

// insertUser inserts u, with a password hash if it has one, and whether
// its email is proven (users.email_verified: see
// quarry.RegistrationFacts.EmailProven); a person joins the default group
// of its role (a service account once its key is made).
func (tx *Tx) insertUser(ctx context.Context, u *quarry.User, passwordHash *string, emailProven bool) error {
	nameKey := ""
	if u.Name != nil {
		nameKey = strings.ToLower(*u.Name)
	}
	key := quarry.EmailKey(u.Email)
	_, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, email_key, email_skeleton, name, name_key, role, is_active, service_account,
			password_hash, email_verified, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
		u.ID, u.Email, key, quarry.EmailSkeleton(key), u.Name, nameKey, u.Role, u.IsActive, u.ServiceAccount, passwordHash, emailProven, u.CreatedAt.Micros())
	if quarry.ErrorCode(mapError(err)) == quarry.ECONFLICT {
		return quarry.ErrEmailTaken
	}
	if err != nil || u.ServiceAccount {
		return err
	}
	return tx.syncDefaultGroups(ctx, u.ID)
}

// serviceAccountEmail returns the email of service account id, whose key
// is named name.
func serviceAccountEmail(name *string, id string) string {
	label := "unnamed"
	if name != nil && *name != "" {
		label = emailLocal(*name)
	}
	return fmt.Sprintf("api_key__%s@%s.quarry.invalid", label, id)
}

// emailLocal turns a key name into the local part of an email address.
func emailLocal(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 48 {
			break
		}
	}
	return b.String()
}

// userExists reports whether a user with id exists.
func (tx *Tx) userExists(ctx context.Context, id string) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// userRole returns the role of user id.
func (tx *Tx) userRole(ctx context.Context, id string) (quarry.Role, error) {
	var r quarry.Role
	err := tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = $1`, id).Scan(&r)
	return r, err
}

// syncCuratorRole brings the role of user id up to date after one of its
// curator flags was set or cleared (quarry.RoleWithFlags), and records the
// change.
func (tx *Tx) syncCuratorRole(ctx context.Context, c *quarry.Caller, userID string) error {
	var (
		role  quarry.Role
		flags int
	)
	err := tx.QueryRowContext(ctx, `SELECT role, (SELECT COUNT(*) FROM user_group_members WHERE user_id = $1 AND is_curator)
		FROM users WHERE id = $1`, userID).Scan(&role, &flags)
	if err != nil {
		return err
	}
	next := quarry.RoleWithFlags(role, flags)
	if next == role {
		return nil
	}
	res, err := tx.ExecContext(ctx, `UPDATE users SET role = $1, updated_at = $2 WHERE id = $3`, next, tx.now.Micros(), userID)
	if err := tx.auditRoleChange(ctx, c, userID, res, err); err != nil {
		return err
	}
	return tx.syncDefaultGroups(ctx, userID)
}

// leaveGroups takes user id out of every group; if it curated one, its
// role follows (syncCuratorRole).
func (tx *Tx) leaveGroups(ctx context.Context, c *quarry.Caller, id string) error {
	var flags int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM user_group_members WHERE user_id = $1 AND is_curator`, id).Scan(&flags); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_group_members WHERE user_id = $1`, id); err != nil {
		return err
	}
	if flags == 0 {
		return nil
	}
	return tx.syncCuratorRole(ctx, c, id)
}

// auditRoleChange records a role change if the update res changed a row.
func (tx *Tx) auditRoleChange(ctx context.Context, c *quarry.Caller, userID string, res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return tx.audit(ctx, c, "user.role_change", "user", userID, []string{"role"})
}
