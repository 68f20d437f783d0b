package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// Sessions: a person's signed-in browsers and clients.

// SessionCaller returns the caller whose session token hashes to hash, if
// the session has neither reached its absolute end nor been idle longer
// than p allows, and its user is active. It notes the use of the session
// (at most every p.TouchEvery, so that reads rarely write).
func (db *DB) SessionCaller(ctx context.Context, hash string, p quarry.SessionPolicy) (*quarry.Caller, error) {
	now := db.now().Micros()
	c, err := db.caller(ctx, db.read, `
		SELECT `+userColumns+`, 0, s.id, `+membershipColumns+`
		FROM sessions s
		JOIN users u ON u.id = s.user_id
		`+membershipJoins+`
		WHERE s.token_hash = $1 AND s.expires_at > $2 AND s.last_seen_at > $3 AND u.is_active
		ORDER BY m.group_id`, hash, now, now-p.Idle.Microseconds())
	if err != nil {
		return nil, err
	}
	// Best effort: should the write wait on another (SQLite has one writer
	// at a time), the request goes on, and the session's idle clock is
	// moved on by a later one.
	if _, err := db.write.ExecContext(ctx, `UPDATE sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at <= $3`,
		now, c.SessionID, now-p.TouchEvery().Microseconds()); err != nil && !isBusy(err) {
		return nil, mapError(err)
	}
	return c, nil
}

// OpenSession opens a session for user id, which signed in with a
// password, and returns its token.
func (db *DB) OpenSession(ctx context.Context, userID string, ns quarry.NewSession, p quarry.SessionPolicy, a Attempt) (string, error) {
	var token string
	err := db.update(ctx, func(tx *Tx) error {
		var active bool
		if err := tx.QueryRowContext(ctx, `SELECT is_active FROM users WHERE id = $1`, userID).Scan(&active); err != nil {
			return err
		}
		if !active {
			return errNotAuthenticated
		}
		for _, k := range a.Clear {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE key = $1`, k); err != nil {
				return err
			}
		}
		for _, k := range a.TakeBack {
			if _, err := tx.ExecContext(ctx, `UPDATE sign_in_failures SET failures = failures - 1 WHERE key = $1 AND failures > 0`, k); err != nil {
				return err
			}
		}
		var err error
		token, _, err = tx.openSession(ctx, userID, ns, p)
		return err
	})
	return token, err
}

// openSession inserts a session for user id, purging sessions that ended
// (and the one the browser signed in over), and records the sign-in.
func (tx *Tx) openSession(ctx context.Context, userID string, ns quarry.NewSession, p quarry.SessionPolicy) (string, int64, error) {
	now := tx.now.Micros()
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2 OR token_hash = $3`,
		now, now-p.Idle.Microseconds(), ns.Replaces); err != nil {
		return "", 0, err
	}
	token, hash := quarry.NewSessionToken()
	var idToken []byte
	if ns.IDToken != "" {
		idToken = tx.db.keys.seal(purposeIDToken, []byte(ns.IDToken))
	}
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO sessions (token_hash, user_id, method, id_token, ip, user_agent, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id`,
		hash, userID, ns.Method, idToken, truncate(ns.IP, 64), truncate(ns.UserAgent, 512), now, now+p.Absolute.Microseconds()).Scan(&id)
	if err != nil {
		return "", 0, err
	}
	if err := tx.keepSSOToken(ctx, id, ns.SSOToken); err != nil { // store/tooltoken.go
		return "", 0, err
	}
	return token, id, tx.auditAs(ctx, userID, "user.sign_in", "session", id, []string{ns.Method})
}

// CloseSession ends session id (a sign-out by its own user) and returns the
// ID token it was opened with, if any, for the provider's end-session
// endpoint.
func (db *DB) CloseSession(ctx context.Context, c *quarry.Caller, id int64) (string, error) {
	var idToken string
	err := db.update(ctx, func(tx *Tx) error {
		var sealed []byte
		err := tx.QueryRowContext(ctx, `DELETE FROM sessions WHERE id = $1 AND user_id = $2 RETURNING id_token`, id, c.ID).Scan(&sealed)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // Ended meanwhile: signed out all the same.
		}
		if err != nil {
			return err
		}
		if sealed != nil {
			pt, err := tx.db.keys.open(purposeIDToken, sealed)
			if err == nil { // A token sealed with a retired key is only a hint lost.
				idToken = string(pt)
			}
		}
		return tx.audit(ctx, c, "user.sign_out", "session", id, nil)
	})
	return idToken, err
}

// Sessions returns the sessions that have not ended, of the user with
// email (everyone's for ""), newest first.
func (db *DB) Sessions(ctx context.Context, email string, p quarry.SessionPolicy) ([]*quarry.Session, error) {
	now := db.now().Micros()
	rows, err := db.read.QueryContext(ctx, `SELECT s.id, s.user_id, u.email, s.method, s.ip, s.user_agent, s.created_at, s.last_seen_at, s.expires_at
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE ($1 = '' OR u.email_key = $1) AND s.expires_at > $2 AND s.last_seen_at > $3 ORDER BY s.id DESC`,
		quarry.EmailKey(email), now, now-p.Idle.Microseconds())
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.Session{}
	for rows.Next() {
		var (
			s                      quarry.Session
			created, seen, expires int64
		)
		if err := rows.Scan(&s.ID, &s.UserID, &s.UserEmail, &s.Method, &s.IP, &s.UserAgent, &created, &seen, &expires); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		s.CreatedAt, s.LastSeenAt, s.ExpiresAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(seen), quarry.TimeFromMicros(expires)
		out = append(out, &s)
	}
	return out, closeRows(rows)
}

// EndSession ends session id of any user (an admin's act).
func (db *DB) EndSession(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		var userID string
		err := tx.QueryRowContext(ctx, `DELETE FROM sessions WHERE id = $1 RETURNING user_id`, id).Scan(&userID)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.Errorf(quarry.ENOTFOUND, "Session %d does not exist", id)
		}
		if err != nil {
			return err
		}
		return tx.audit(ctx, c, "session.end", "session", id, nil)
	})
}

// EndUserSessions ends every session of the user with email and returns
// how many there were.
func (db *DB) EndUserSessions(ctx context.Context, c *quarry.Caller, email string) (int, error) {
	var n int64
	err := db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(ctx, email)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, u.ID)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		return tx.audit(ctx, c, "user.end_sessions", "user", u.ID, nil)
	})
	return int(n), err
}

// truncate returns s as valid UTF-8 of at most n bytes, cut between
// characters.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
