package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
)

// errNotAuthenticated answers every token that opens nothing.
var errNotAuthenticated = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")

// Authenticate returns the caller whose API key hashes to hash, with its
// group memberships, in one statement.
func (db *DB) Authenticate(ctx context.Context, hash string) (*quarry.Caller, error) {
	rows, err := db.read.QueryContext(ctx, `
		SELECT k.id, u.id, u.email, u.role, u.service_account, u.created_at, m.group_id, m.is_curator
		FROM api_keys k
		JOIN users u ON u.id = k.user_id
		LEFT JOIN user_group_members m ON m.user_id = u.id
		WHERE k.hashed_key = $1
		ORDER BY m.group_id`, hash)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	var c *quarry.Caller
	for rows.Next() {
		var (
			u         quarry.Caller
			created   int64
			groupID   sql.NullInt64
			isCurator sql.NullBool
		)
		if err := rows.Scan(&u.APIKeyID, &u.ID, &u.Email, &u.Role, &u.ServiceAccount, &created, &groupID, &isCurator); err != nil {
			return nil, mapError(err)
		}
		if c == nil {
			u.CreatedAt = quarry.TimeFromMicros(created)
			c = &u
		}
		if groupID.Valid {
			c.Memberships = append(c.Memberships, quarry.Membership{GroupID: groupID.Int64, IsCurator: isCurator.Bool})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	if c == nil {
		return nil, errNotAuthenticated
	}
	return c, nil
}

// createUser inserts a service-account user for an API key.
func (tx *Tx) createUser(name *string, role quarry.Role) (*quarry.User, error) {
	id := uuid.NewString()
	label := "unnamed"
	if name != nil && *name != "" {
		label = emailLocal(*name)
	}
	u := &quarry.User{
		ID:             id,
		Email:          fmt.Sprintf("api_key__%s@%s.quarry.invalid", label, id),
		Role:           role,
		ServiceAccount: true,
		CreatedAt:      tx.now,
	}
	_, err := tx.exec(`INSERT INTO users (id, email, role, service_account, created_at) VALUES ($1, $2, $3, $4, $5)`,
		u.ID, u.Email, u.Role, u.ServiceAccount, u.CreatedAt.Micros())
	return u, err
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
func (tx *Tx) userExists(id string) (bool, error) {
	var one int
	err := tx.queryRow(`SELECT 1 FROM users WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// userRole returns the role of user id.
func (tx *Tx) userRole(id string) (quarry.Role, error) {
	var r quarry.Role
	err := tx.queryRow(`SELECT role FROM users WHERE id = $1`, id).Scan(&r)
	return r, err
}

// syncCuratorRole demotes a curator that curates no group any more to basic,
// as Onyx does when the last curator flag goes, and records the change.
func (tx *Tx) syncCuratorRole(c *quarry.Caller, userID string) error {
	res, err := tx.exec(`UPDATE users SET role = 'basic' WHERE id = $1 AND role = 'curator'
		AND NOT EXISTS (SELECT 1 FROM user_group_members WHERE user_id = $1 AND is_curator)`, userID)
	return tx.auditRoleChange(c, userID, res, err)
}

// promoteToCurator makes a basic user a curator, and records the change.
func (tx *Tx) promoteToCurator(c *quarry.Caller, userID string) error {
	res, err := tx.exec(`UPDATE users SET role = 'curator' WHERE id = $1 AND role = 'basic'`, userID)
	return tx.auditRoleChange(c, userID, res, err)
}

// auditRoleChange records a role change if the update res changed a row.
func (tx *Tx) auditRoleChange(c *quarry.Caller, userID string, res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return tx.audit(c, "user.role_change", "user", userID, []string{"role"})
}
