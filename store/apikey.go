package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/quarryhq/quarry"
)

// CreateAPIKey creates an API key and its service-account user with the
// given role, and returns the key's record and its token. c is nil when the
// key is made by the CLI.
func (db *DB) CreateAPIKey(ctx context.Context, c *quarry.Caller, name *string, role quarry.Role) (*quarry.APIKey, string, error) {
	var (
		key   *quarry.APIKey
		token string
	)
	err := db.update(ctx, func(tx *Tx) error {
		var err error
		key, token, err = tx.createAPIKey(ctx, c, name, role)
		return err
	})
	return key, token, err
}

func (tx *Tx) createAPIKey(ctx context.Context, c *quarry.Caller, name *string, role quarry.Role) (*quarry.APIKey, string, error) {
	if err := c.CheckMint(); err != nil {
		return nil, "", err
	}
	if err := quarry.CheckAPIKeyRole(role); err != nil {
		return nil, "", err
	}
	u, err := tx.createUser(ctx, name, role)
	if err != nil {
		return nil, "", err
	}
	token, hash := quarry.NewAPIKey()
	key := &quarry.APIKey{Name: name, Display: quarry.DisplayAPIKey(token), Role: role, UserID: u.ID, CreatedAt: tx.now}
	err = tx.QueryRowContext(ctx, `INSERT INTO api_keys (name, hashed_key, display, user_id, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		name, hash, key.Display, u.ID, tx.now.Micros()).Scan(&key.ID)
	if err != nil {
		return nil, "", err
	}
	if err := tx.syncDefaultGroups(ctx, u.ID); err != nil {
		return nil, "", err
	}
	return key, token, tx.audit(ctx, c, "api_key.create", "api_key", key.ID, []string{"name", "role"})
}

// Bootstrap creates the first admin key if the database has never had one
// and returns its token; it returns "" once the database has been
// bootstrapped. Replicas that start together create one key between them.
func (db *DB) Bootstrap(ctx context.Context) (string, error) {
	var token string
	err := db.update(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ('bootstrapped', $1) ON CONFLICT (name) DO NOTHING`, tx.now.String())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		var keys int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys`).Scan(&keys); err != nil || keys > 0 {
			return err
		}
		name := "bootstrap admin"
		_, token, err = tx.createAPIKey(ctx, nil, &name, quarry.RoleAdmin)
		return err
	})
	return token, err
}

// APIKeys returns every API key, oldest first.
func (db *DB) APIKeys(ctx context.Context) ([]*quarry.APIKey, error) {
	rows, err := db.read.QueryContext(ctx, `
		SELECT k.id, k.name, k.display, u.role, k.user_id, k.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.id`)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	keys := []*quarry.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, mapError(err)
		}
		keys = append(keys, k)
	}
	return keys, mapError(rows.Err())
}

func scanAPIKey(s interface{ Scan(...any) error }) (*quarry.APIKey, error) {
	var (
		k       quarry.APIKey
		created int64
	)
	if err := s.Scan(&k.ID, &k.Name, &k.Display, &k.Role, &k.UserID, &created); err != nil {
		return nil, err
	}
	k.CreatedAt = quarry.TimeFromMicros(created)
	return &k, nil
}

func (tx *Tx) apiKey(ctx context.Context, id int64) (*quarry.APIKey, error) {
	k, err := scanAPIKey(tx.QueryRowContext(ctx, `
		SELECT k.id, k.name, k.display, u.role, k.user_id, k.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.Errorf(quarry.ENOTFOUND, "API key with id %d does not exist", id)
	}
	return k, err
}

// RegenerateAPIKey replaces the token of key id and returns the new one; the
// old token stops working at once.
func (db *DB) RegenerateAPIKey(ctx context.Context, c *quarry.Caller, id int64) (*quarry.APIKey, string, error) {
	var (
		key   *quarry.APIKey
		token string
	)
	if err := c.CheckMint(); err != nil {
		return nil, "", err
	}
	err := db.update(ctx, func(tx *Tx) error {
		var err error
		if key, err = tx.apiKey(ctx, id); err != nil {
			return err
		}
		var hash string
		token, hash = quarry.NewAPIKey()
		key.Display = quarry.DisplayAPIKey(token)
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET hashed_key = $1, display = $2 WHERE id = $3`, hash, key.Display, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "api_key.regenerate", "api_key", id, []string{"api_key"})
	})
	return key, token, err
}

// keyUser returns the service account of key k.
func (tx *Tx) keyUser(ctx context.Context, k *quarry.APIKey) (*quarry.User, error) {
	u := &quarry.User{}
	return u, scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1`, k.UserID), u)
}

// checkLastAdminKey applies quarry.CheckLastAdminKey to key k of service
// account u, which would lose it (revoked) or its admin role.
func (tx *Tx) checkLastAdminKey(ctx context.Context, k *quarry.APIKey, u *quarry.User, what string) error {
	if !u.IsActiveAdmin() {
		return nil
	}
	others, err := tx.otherAdmins(ctx, u)
	if err != nil {
		return err
	}
	return quarry.CheckLastAdminKey(k, u, others, what)
}

// DeleteAPIKey revokes key id: its token stops working at once. The key's
// user stays, so what it owns keeps an owner, but leaves every group: it
// can never act again (Onyx deletes it). The last way in as an admin is
// not revoked (quarry.CheckLastAdminKey).
func (db *DB) DeleteAPIKey(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		k, err := tx.apiKey(ctx, id)
		if err != nil {
			return err
		}
		u, err := tx.keyUser(ctx, k)
		if err != nil {
			return err
		}
		if err := tx.checkLastAdminKey(ctx, k, u, "revoked"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM api_keys WHERE id = $1`, id); err != nil {
			return err
		}
		if err := tx.leaveGroups(ctx, c, u.ID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "api_key.delete", "api_key", id, nil)
	})
}

// UpdateAPIKey gives key id the name name (nil clears it) and role r, as
// Onyx's PATCH /admin/api-key/{id} does: its service account's name, email
// and role follow. The last way in as an admin keeps its role
// (quarry.CheckLastAdminKey).
func (db *DB) UpdateAPIKey(ctx context.Context, c *quarry.Caller, id int64, name *string, r quarry.Role) (*quarry.APIKey, error) {
	var key *quarry.APIKey
	err := db.update(ctx, func(tx *Tx) error {
		k, err := tx.apiKey(ctx, id)
		if err != nil {
			return err
		}
		if err := quarry.CheckAPIKeyRole(r); err != nil {
			return err
		}
		u, err := tx.keyUser(ctx, k)
		if err != nil {
			return err
		}
		if r != quarry.RoleAdmin {
			if err := tx.checkLastAdminKey(ctx, k, u, "given another role"); err != nil {
				return err
			}
		}
		var fields []string
		if (k.Name == nil) != (name == nil) || (name != nil && *k.Name != *name) {
			fields = append(fields, "name")
		}
		if k.Role != r {
			fields = append(fields, "role")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET name = $1 WHERE id = $2`, name, id); err != nil {
			return err
		}
		nameKey, email := "", serviceAccountEmail(name, k.UserID)
		if name != nil {
			nameKey = strings.ToLower(*name)
		}
		emailKey := quarry.EmailKey(email)
		if _, err := tx.ExecContext(ctx, `UPDATE users SET name = $1, name_key = $2, email = $3, email_key = $4, email_skeleton = $5,
				updated_at = $6 WHERE id = $7`,
			name, nameKey, email, emailKey, quarry.EmailSkeleton(emailKey), tx.now.Micros(), k.UserID); err != nil {
			return err
		}
		if r != u.Role {
			if err := tx.changeRole(ctx, c, u, r); err != nil {
				return err
			}
		}
		if err := tx.audit(ctx, c, "api_key.update", "api_key", id, fields); err != nil {
			return err
		}
		key, err = tx.apiKey(ctx, id)
		return err
	})
	return key, err
}
