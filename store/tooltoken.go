package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry"
)

// Tokens of people: for the OAuth configurations of tools (oauth_tokens,
// one per person and configuration) and from single sign-on
// (sso_tokens, one per session opened by the provider). Both are sealed,
// and refreshed one at a time across replicas: the replica that refreshes
// a token first takes it with a compare-and-swap on its version, which
// writes a lease (refresh_owner, refresh_until); the others wait for the
// new version, or for the lease to run out.

// tokenTable is one of the two tables of tokens.
type tokenTable struct {
	table   string
	key     string // The condition that selects one row, on $1 (and $2).
	purpose string
}

var (
	toolTokens = tokenTable{"oauth_tokens", "oauth_config_id = $1 AND user_id = $2", purposeToolToken}
	ssoTokens  = tokenTable{"sso_tokens", "session_id = $1", purposeSSOToken}
)

// tokenRow is a stored token with what its refresh needs.
type tokenRow struct {
	id      int64
	token   quarry.OAuthToken
	version int64
	leased  bool // Another refresh holds the row.
}

// RefreshFunc refreshes a token at its authorization server. It fails
// with quarry.ErrTokenRevoked (wrapped or not) when the server refused
// the refresh token for good.
type RefreshFunc func(ctx context.Context, tok quarry.OAuthToken) (quarry.OAuthToken, error)

// sealToken seals the secrets of tok for the table t.
func (db *DB) sealToken(t tokenTable, tok quarry.OAuthToken) []byte {
	return db.keys.seal(t.purpose, []byte(jsonText(tok)))
}

// expiryOf returns when tok expires, by db's clock: from the lifetime the
// server gave, or the expiry it has; nil when unknown.
func (db *DB) expiryOf(tok quarry.OAuthToken) *int64 {
	switch {
	case tok.ExpiresIn > 0:
		e := db.now().Micros() + tok.ExpiresIn.Microseconds()
		return &e
	case !tok.Expiry.IsZero():
		e := tok.Expiry.UnixMicro()
		return &e
	}
	return nil
}

// readToken reads the row of t that keys selects, or nil.
func (db *DB) readToken(ctx context.Context, t tokenTable, keys ...any) (*tokenRow, error) {
	var (
		r       tokenRow
		sealed  []byte
		expires sql.NullInt64
		until   int64
	)
	err := db.read.QueryRowContext(ctx, `SELECT id, token, expires_at, version, refresh_until FROM `+t.table+` WHERE `+t.key,
		keys...).Scan(&r.id, &sealed, &expires, &r.version, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapError(err)
	}
	pt, err := db.keys.open(t.purpose, sealed)
	if err != nil {
		return nil, fmt.Errorf("%s %d: %w", t.table, r.id, err)
	}
	if err := json.Unmarshal(pt, &r.token); err != nil {
		return nil, fmt.Errorf("%s %d: %w", t.table, r.id, err)
	}
	if expires.Valid {
		r.token.Expiry = time.UnixMicro(expires.Int64).UTC()
	}
	r.leased = until > db.now().Micros()
	return &r, nil
}

// errReconnect is what freshToken returns when the token is gone or cannot
// be refreshed; its callers turn it into their own 409.
var errReconnect = errors.New("store: the token is missing, or expired and not refreshable")

// leaseWait is how long a replica waits between looks at a token another
// one is refreshing.
const leaseWait = 25 * time.Millisecond

// freshToken returns the token of t that keys selects, refreshed with
// refresh if it is due (quarry.OAuthToken.Step), one refresh at a time
// across replicas. It returns errReconnect when there is no token, when it
// is expired without a refresh token, or when the server refused the
// refresh token (the row is then deleted); refresh's other errors as they
// are.
func (db *DB) freshToken(ctx context.Context, t tokenTable, refresh RefreshFunc, keys ...any) (*quarry.OAuthToken, error) {
	for {
		r, err := db.readToken(ctx, t, keys...)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, errReconnect
		}
		switch r.token.Step(db.now().Time) {
		case quarry.TokenUse:
			return &r.token, nil
		case quarry.TokenReconnect:
			return nil, errReconnect
		}
		if !r.leased {
			tok, won, err := db.refreshToken(ctx, t, r, refresh)
			if won || err != nil {
				return tok, err
			}
		}
		select { // Another replica refreshes it: wait for its new version.
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(leaseWait):
		}
	}
}

// refreshToken takes row r of t for a refresh (compare-and-swap on its
// version) and, if it won, refreshes it and writes the new token. won is
// false when another replica took the row first.
func (db *DB) refreshToken(ctx context.Context, t tokenTable, r *tokenRow, refresh RefreshFunc) (tok *quarry.OAuthToken, won bool, err error) {
	owner := newLeaseOwner()
	err = db.update(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET refresh_owner = $1, refresh_until = $2
			WHERE id = $3 AND version = $4 AND refresh_until <= $5`,
			owner, tx.now.Micros()+quarry.RefreshLease.Microseconds(), r.id, r.version, tx.now.Micros())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		won = n == 1
		return err
	})
	if err != nil || !won {
		return nil, false, err
	}
	next, rerr := refresh(ctx, r.token)
	// What follows is written even when the caller has gone: the lease
	// must not be left to run out, and a rotated refresh token must be
	// kept, or it is lost.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch {
	case errors.Is(rerr, quarry.ErrTokenRevoked):
		err = db.update(wctx, func(tx *Tx) error {
			_, err := tx.ExecContext(wctx, `DELETE FROM `+t.table+` WHERE id = $1 AND refresh_owner = $2`, r.id, owner)
			return err
		})
		if err != nil {
			return nil, true, err
		}
		return nil, true, errReconnect
	case rerr != nil:
		if err := db.update(wctx, func(tx *Tx) error {
			_, err := tx.ExecContext(wctx, `UPDATE `+t.table+` SET refresh_owner = '', refresh_until = 0
				WHERE id = $1 AND refresh_owner = $2`, r.id, owner)
			return err
		}); err != nil {
			return nil, true, errors.Join(rerr, err)
		}
		return nil, true, rerr
	}
	kept := r.token.Refreshed(next)
	err = db.update(wctx, func(tx *Tx) error {
		_, err := tx.ExecContext(wctx, `UPDATE `+t.table+` SET token = $1, expires_at = $2, version = version + 1,
				refresh_owner = '', refresh_until = 0, updated_at = $3 WHERE id = $4 AND refresh_owner = $5`,
			db.sealToken(t, kept), db.expiryOf(kept), tx.now.Micros(), r.id, owner)
		return err
	})
	if err != nil {
		return nil, true, err
	}
	if e := db.expiryOf(kept); e != nil {
		kept.Expiry = time.UnixMicro(*e).UTC()
	}
	return &kept, true, nil
}

// newLeaseOwner returns a random name for one refresh.
func newLeaseOwner() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ToolToken returns person userID's token for OAuth configuration cfg,
// refreshed with refresh when it is due. Without a usable one, it answers
// quarry.ConnectFirst (409).
func (db *DB) ToolToken(ctx context.Context, userID string, cfg *quarry.OAuthConfig, refresh RefreshFunc) (*quarry.OAuthToken, error) {
	tok, err := db.freshToken(ctx, toolTokens, refresh, cfg.ID, userID)
	if errors.Is(err, errReconnect) {
		return nil, quarry.ConnectFirst(cfg.ID, cfg.Name)
	}
	return tok, err
}

// SessionToken returns the single sign-on token kept with session id,
// refreshed with refresh when it is due. Without a usable one, it answers
// quarry.ErrNoPassthroughToken (409).
func (db *DB) SessionToken(ctx context.Context, sessionID int64, refresh RefreshFunc) (*quarry.OAuthToken, error) {
	tok, err := db.freshToken(ctx, ssoTokens, refresh, sessionID)
	if errors.Is(err, errReconnect) {
		return nil, quarry.ErrNoPassthroughToken
	}
	return tok, err
}

// keepSSOToken keeps, with session id, the tokens its single sign-on
// brought, sealed. It is called in the transaction that opens the session.
func (tx *Tx) keepSSOToken(ctx context.Context, sessionID int64, tok *quarry.OAuthToken) error {
	if tok == nil || (tok.AccessToken == "" && tok.RefreshToken == "") {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sso_tokens (session_id, token, expires_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4)`, sessionID, tx.db.sealToken(ssoTokens, *tok), tx.db.expiryOf(*tok), tx.now.Micros())
	return err
}

// dropToolTokens deletes the tokens person userID connected for tools. It
// is called in the transaction that deactivates them (their single
// sign-on tokens go with their sessions).
func (tx *Tx) dropToolTokens(ctx context.Context, userID string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE user_id = $1`, userID)
	return err
}

// errConnectionState answers a callback whose state names no connection
// in progress: unknown, used already, or too old.
var errConnectionState = quarry.Errorf(quarry.EINVALID, "The OAuth connection is unknown, over or too old; start again")

// BeginOAuthConnection keeps connection k of c in progress under the hash
// of its state, for quarry.OAuthConnectionTTL; its PKCE verifier and
// redirect URI are sealed. It answers 404 for an unknown configuration.
func (db *DB) BeginOAuthConnection(ctx context.Context, c *quarry.Caller, state string, k *quarry.OAuthConnection) error {
	return db.update(ctx, func(tx *Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM oauth_configs WHERE id = $1`, k.OAuthConfigID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return oauthConfigNotFound(k.OAuthConfigID)
		}
		if err != nil {
			return err
		}
		now := tx.now.Micros()
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_states WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO oauth_states (state_hash, user_id, oauth_config_id, secret, return_path, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, quarry.HashToken(state), c.ID, k.OAuthConfigID,
			db.keys.seal(purposeOAuthState, []byte(jsonText(k))), k.ReturnPath, now, now+quarry.OAuthConnectionTTL.Microseconds())
		return err
	})
}

// TakeOAuthConnection removes the connection in progress whose state is
// state and returns it. A state is good once, and for
// quarry.OAuthConnectionTTL.
func (db *DB) TakeOAuthConnection(ctx context.Context, state string) (*quarry.OAuthConnection, error) {
	var (
		k       quarry.OAuthConnection
		userID  string
		cfgID   int64
		ret     string
		sealed  []byte
		expires int64
	)
	err := db.update(ctx, func(tx *Tx) error {
		err := tx.QueryRowContext(ctx, `DELETE FROM oauth_states WHERE state_hash = $1
			RETURNING user_id, oauth_config_id, secret, return_path, expires_at`, quarry.HashToken(state)).
			Scan(&userID, &cfgID, &sealed, &ret, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return errConnectionState
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if expires <= db.now().Micros() {
		return nil, errConnectionState
	}
	pt, err := db.keys.open(purposeOAuthState, sealed)
	if err != nil || json.Unmarshal(pt, &k) != nil {
		return nil, errConnectionState // sealed with a key this server does not have
	}
	k.UserID, k.OAuthConfigID, k.ReturnPath = userID, cfgID, ret
	return &k, nil
}

// SaveOAuthToken keeps c's token for OAuth configuration cfgID, sealed,
// replacing the one c had.
func (db *DB) SaveOAuthToken(ctx context.Context, c *quarry.Caller, cfgID int64, tok quarry.OAuthToken) error {
	return db.update(ctx, func(tx *Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM oauth_configs WHERE id = $1`, cfgID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return oauthConfigNotFound(cfgID)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO oauth_tokens (oauth_config_id, user_id, token, expires_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (oauth_config_id, user_id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at,
				version = oauth_tokens.version + 1, refresh_owner = '', refresh_until = 0, updated_at = excluded.updated_at`,
			cfgID, c.ID, db.sealToken(toolTokens, tok), db.expiryOf(tok), tx.now.Micros())
		if err != nil {
			return err
		}
		return tx.audit(ctx, c, "oauth_token.connect", "oauth_config", cfgID, []string{"token"})
	})
}

// DeleteOAuthToken forgets c's token for OAuth configuration cfgID (the
// person disconnects); 404 when there is none.
func (db *DB) DeleteOAuthToken(ctx context.Context, c *quarry.Caller, cfgID int64) error {
	return db.update(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE oauth_config_id = $1 AND user_id = $2`, cfgID, c.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return quarry.Errorf(quarry.ENOTFOUND, "OAuth token for user %s and config %d does not exist", c.ID, cfgID)
		}
		return tx.audit(ctx, c, "oauth_token.disconnect", "oauth_config", cfgID, []string{"token"})
	})
}

// OAuthTokenStatuses returns the OAuth connections of person userID: the
// configurations they have a token for, ascending by id, with when it
// expires.
func (db *DB) OAuthTokenStatuses(ctx context.Context, userID string) ([]quarry.OAuthTokenStatus, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT o.id, o.name, t.expires_at FROM oauth_tokens t
		JOIN oauth_configs o ON o.id = t.oauth_config_id WHERE t.user_id = $1 ORDER BY o.id`, userID)
	if err != nil {
		return nil, mapError(err)
	}
	out := []quarry.OAuthTokenStatus{}
	now := db.now().Time
	for rows.Next() {
		var (
			s       quarry.OAuthTokenStatus
			expires sql.NullInt64
		)
		if err := rows.Scan(&s.OAuthConfigID, &s.OAuthConfigName, &expires); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if expires.Valid {
			tok := quarry.OAuthToken{Expiry: time.UnixMicro(expires.Int64)}
			at := expires.Int64 / 1e6
			s.ExpiresAt, s.IsExpired = &at, tok.Expired(now)
		}
		out = append(out, s)
	}
	return out, closeRows(rows)
}
