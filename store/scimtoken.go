package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
)

// The directory's SCIM tokens: at most one active, made and revoked by
// admins, and the only thing that opens the SCIM routes.

// scimTouchEvery is how often the use of a SCIM token is recorded: at most
// once a minute, so that provisioning 10,000 people does not write 10,000
// times more.
const scimTouchEvery = time.Minute

// scimTokenLock is the PostgreSQL advisory lock of CreateSCIMToken.
const scimTokenLock = 7243870392

// CreateSCIMToken makes a new SCIM token named name, revoking the active
// one (the provider must be given the new one), and returns its record and
// the token itself, shown this once.
func (db *DB) CreateSCIMToken(ctx context.Context, c *quarry.Caller, name string) (*quarry.SCIMToken, string, error) {
	if err := c.CheckMint(); err != nil {
		return nil, "", err
	}
	var (
		t     *quarry.SCIMToken
		token string
	)
	err := db.update(ctx, func(tx *Tx) error {
		// Two admins making one at once: on PostgreSQL the second waits for
		// the first, then finds its token active and revokes it. (SQLite
		// has one writer.)
		if tx.db.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, scimTokenLock); err != nil {
				return err
			}
		}
		revoked, err := queryInts(ctx, tx, `UPDATE scim_tokens SET is_active = FALSE WHERE is_active RETURNING id`)
		if err != nil {
			return err
		}
		for _, id := range revoked {
			if err := tx.audit(ctx, c, "scim_token.revoke", "scim_token", id, nil); err != nil {
				return err
			}
		}
		var hash string
		token, hash = quarry.NewSCIMToken()
		t = &quarry.SCIMToken{Name: name, Display: quarry.DisplaySCIMToken(token), IsActive: true, CreatedAt: tx.now}
		if err := tx.QueryRowContext(ctx, `INSERT INTO scim_tokens (name, hashed_token, display, is_active, created_by, created_at)
			VALUES ($1, $2, $3, TRUE, $4, $5) RETURNING id`, name, hash, t.Display, nullString(c.ID), tx.now.Micros()).Scan(&t.ID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "scim_token.create", "scim_token", t.ID, []string{"name"})
	})
	if err != nil {
		return nil, "", err
	}
	return t, token, nil
}

// nullString returns nil for "", s otherwise.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ActiveSCIMToken returns the active SCIM token, or nil if there is none,
// with the domain of the first person the directory provisioned.
func (db *DB) ActiveSCIMToken(ctx context.Context) (*quarry.SCIMToken, error) {
	t, err := scanSCIMToken(db.read.QueryRowContext(ctx, `SELECT `+scimTokenColumns+` FROM scim_tokens WHERE is_active`))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapError(err)
	}
	var email string
	err = db.read.QueryRowContext(ctx, `SELECT u.email FROM scim_users s JOIN users u ON u.id = s.user_id ORDER BY s.seq LIMIT 1`).Scan(&email)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, mapError(err)
	default:
		if i := strings.LastIndexByte(email, '@'); i >= 0 {
			domain := email[i+1:]
			t.IDPDomain = &domain
		}
	}
	return t, nil
}

// RevokeSCIMToken revokes the active SCIM token: the directory can do
// nothing more until an admin makes a new one. What it manages stays as it
// is, and stays the directory's.
func (db *DB) RevokeSCIMToken(ctx context.Context, c *quarry.Caller) error {
	return db.update(ctx, func(tx *Tx) error {
		revoked, err := queryInts(ctx, tx, `UPDATE scim_tokens SET is_active = FALSE WHERE is_active RETURNING id`)
		if err != nil {
			return err
		}
		if len(revoked) == 0 {
			return quarry.Errorf(quarry.ENOTFOUND, "There is no active SCIM token")
		}
		for _, id := range revoked {
			if err := tx.audit(ctx, c, "scim_token.revoke", "scim_token", id, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

const scimTokenColumns = `id, name, display, is_active, created_at, last_used_at`

func scanSCIMToken(s interface{ Scan(...any) error }) (*quarry.SCIMToken, error) {
	var (
		t        quarry.SCIMToken
		created  int64
		lastUsed *int64
	)
	if err := s.Scan(&t.ID, &t.Name, &t.Display, &t.IsActive, &created, &lastUsed); err != nil {
		return nil, err
	}
	t.CreatedAt = quarry.TimeFromMicros(created)
	if lastUsed != nil {
		at := quarry.TimeFromMicros(*lastUsed)
		t.LastUsedAt = &at
	}
	return &t, nil
}

// SCIMCaller returns the directory as the caller of a request whose token
// hashes to hash, if it is the active SCIM token, and records its use (at
// most once a minute, and not when SQLite's one writer is busy: a later
// request records it).
func (db *DB) SCIMCaller(ctx context.Context, hash string) (*quarry.Caller, error) {
	t, err := scanSCIMToken(db.read.QueryRowContext(ctx, `SELECT `+scimTokenColumns+` FROM scim_tokens
		WHERE hashed_token = $1 AND is_active`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotAuthenticated
	}
	if err != nil {
		return nil, mapError(err)
	}
	now := db.now()
	if t.LastUsedAt == nil || t.LastUsedAt.Micros() <= now.Micros()-scimTouchEvery.Microseconds() {
		if _, err := db.write.ExecContext(ctx, `UPDATE scim_tokens SET last_used_at = $1
			WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)`,
			now.Micros(), t.ID, now.Micros()-scimTouchEvery.Microseconds()); err != nil && !isBusy(err) {
			return nil, mapError(err)
		}
	}
	return quarry.DirectoryCaller(t), nil
}
