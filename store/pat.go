package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry"
)

// Personal access tokens (personal_access_tokens): only the SHA-256 of a
// token is kept. A revoked token is deleted; so are a person's tokens when
// they are deactivated.

// patTouchEvery is how often a token's last use is written, at most (as
// Onyx: within five minutes).
const patTouchEvery = 5 * time.Minute

// CreatePAT makes a personal access token of c's named name, expiring at
// expires (nil: never), with scopes (nil: c's whole rights), and returns it
// with the token, shown this once.
func (db *DB) CreatePAT(ctx context.Context, c *quarry.Caller, name string, expires *quarry.Time, scopes []quarry.Permission) (*quarry.PAT, string, error) {
	token, hash := quarry.NewPAT()
	p := &quarry.PAT{UserID: c.ID, Name: name, Display: quarry.DisplayPAT(token), Scopes: scopes, ExpiresAt: expires}
	err := db.update(ctx, func(tx *Tx) error {
		var active bool
		if err := tx.QueryRowContext(ctx, `SELECT is_active FROM users WHERE id = $1`, c.ID).Scan(&active); err != nil {
			return err
		}
		if !active {
			return quarry.ErrDeactivated
		}
		var exp *int64
		if expires != nil {
			v := expires.Micros()
			exp = &v
		}
		p.CreatedAt = tx.now
		err := tx.QueryRowContext(ctx, `INSERT INTO personal_access_tokens (user_id, name, hashed_token, token_display, scopes, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			c.ID, name, hash, p.Display, nullJSON(scopes, scopes == nil), exp, tx.now.Micros()).Scan(&p.ID)
		if err != nil {
			return err
		}
		fields := []string{"name", "expires_at"}
		if scopes != nil {
			fields = append(fields, "scopes")
		}
		return tx.audit(ctx, c, "pat.create", "pat", p.ID, fields)
	})
	if err != nil {
		return nil, "", err
	}
	return p, token, nil
}

const patColumns = `id, user_id, name, token_display, scopes, expires_at, last_used_at, created_at`

func scanPAT(s interface{ Scan(...any) error }) (*quarry.PAT, error) {
	var (
		p                 quarry.PAT
		scopes            sql.NullString
		expires, lastUsed sql.NullInt64
		created           int64
	)
	if err := s.Scan(&p.ID, &p.UserID, &p.Name, &p.Display, &scopes, &expires, &lastUsed, &created); err != nil {
		return nil, err
	}
	if scopes.Valid {
		p.Scopes = []quarry.Permission{}
		if err := json.Unmarshal([]byte(scopes.String), &p.Scopes); err != nil {
			return nil, fmt.Errorf("pat %d scopes: %w", p.ID, err)
		}
	}
	if expires.Valid {
		t := quarry.TimeFromMicros(expires.Int64)
		p.ExpiresAt = &t
	}
	if lastUsed.Valid {
		t := quarry.TimeFromMicros(lastUsed.Int64)
		p.LastUsedAt = &t
	}
	p.CreatedAt = quarry.TimeFromMicros(created)
	return &p, nil
}

// PATs returns person userID's tokens that have not expired, newest
// first.
func (db *DB) PATs(ctx context.Context, userID string) ([]*quarry.PAT, error) {
	return queryAll(ctx, db.read, scanPAT, `SELECT `+patColumns+` FROM personal_access_tokens
		WHERE user_id = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at DESC, id DESC`, userID, db.now().Micros())
}

// RevokePAT deletes c's token id: it stops at once. A token that is not
// c's, or has expired, is not found (Onyx's 404).
func (db *DB) RevokePAT(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM personal_access_tokens WHERE id = $1 AND user_id = $2
			AND (expires_at IS NULL OR expires_at > $3)`, id, c.ID, tx.now.Micros())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return quarry.Errorf(quarry.ENOTFOUND, "Token not found or not owned by user")
		}
		return tx.audit(ctx, c, "pat.revoke", "pat", id, nil)
	})
}

// PATCaller returns the caller of the personal access token that hashes
// to hash: its person, with their memberships and permissions, capped by
// the token's scopes (quarry.Caller.LimitTo). An expired token, and a
// deactivated person's, open nothing. The token's last use is written at
// most every five minutes, when SQLite's one writer is free.
func (db *DB) PATCaller(ctx context.Context, hash string) (*quarry.Caller, error) {
	now := db.now().Micros()
	var (
		id       int64
		userID   string
		scopes   sql.NullString
		lastUsed sql.NullInt64
	)
	err := db.read.QueryRowContext(ctx, `SELECT id, user_id, scopes, last_used_at FROM personal_access_tokens
		WHERE hashed_token = $1 AND (expires_at IS NULL OR expires_at > $2)`, hash, now).Scan(&id, &userID, &scopes, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotAuthenticated
	}
	if err != nil {
		return nil, mapError(err)
	}
	c, err := db.userCaller(ctx, userID)
	if err != nil {
		return nil, err
	}
	c.PATID = id
	if scopes.Valid {
		var ss []quarry.Permission
		if err := json.Unmarshal([]byte(scopes.String), &ss); err != nil {
			return nil, fmt.Errorf("pat %d scopes: %w", id, err)
		}
		c.LimitTo(ss)
	}
	if !lastUsed.Valid || lastUsed.Int64 <= now-patTouchEvery.Microseconds() {
		if _, err := db.write.ExecContext(ctx, `UPDATE personal_access_tokens SET last_used_at = $1 WHERE id = $2`, now, id); err != nil && !isBusy(err) {
			return nil, mapError(err)
		}
	}
	return c, nil
}

// dropPATs deletes person userID's personal access tokens, and returns
// how many there were. It is the one way a person's tokens end with them:
// the transaction that deactivates them calls it (Tx.setActive, which an
// admin's deactivation and the directory's, SCIM, share), and so must any
// other path that deactivates people.
func (tx *Tx) dropPATs(ctx context.Context, userID string) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM personal_access_tokens WHERE user_id = $1`, userID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
