package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
)

// People: accounts of persons (not service accounts), how they sign in,
// their sessions, and what admins do to them.

// settingHasPeople is the settings row written when the first person's
// account is made, whichever way: the person who writes it by registering
// becomes an admin (as in Onyx, the first user is), and two people
// registering at once cannot both be first.
const settingHasPeople = "has_people"

// Register makes a local account for email with a password hash, if p
// lets it be made: the first person of a new database may (and becomes an
// admin) unless registration is closed; after that, p.Mode decides.
func (db *DB) Register(ctx context.Context, email string, name *string, passwordHash string, p *quarry.RegistrationPolicy) (*quarry.User, error) {
	email, key, err := quarry.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	var u *quarry.User
	err = db.update(ctx, func(tx *Tx) error {
		if err := checkRegistration(p, key, false); p.Mode == quarry.RegistrationClosed || !quarry.AllowsDomain(p.Domains, key) {
			return err
		}
		first, err := tx.markHasPeople()
		if err != nil {
			return err
		}
		var taken int
		if err := tx.queryRow(`SELECT COUNT(*) FROM users WHERE email_key = $1`, key).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return errEmailTaken
		}
		if !first {
			invited, err := tx.takeInvitation(key)
			if err != nil {
				return err
			}
			if err := checkRegistration(p, key, invited); err != nil {
				return err
			}
		}
		role := quarry.RoleBasic
		if first {
			role = quarry.RoleAdmin
		}
		u = &quarry.User{ID: uuid.NewString(), Email: email, Name: name, Role: role, IsActive: true, CreatedAt: tx.now}
		if err := tx.insertUser(u, &passwordHash); err != nil {
			return err
		}
		return tx.auditAs(u.ID, "user.register", "user", u.ID, []string{"email", "role"})
	})
	return u, err
}

// CheckRegistration says, without writing, whether email could register
// under p now (so that no password is hashed in vain); Register decides.
func (db *DB) CheckRegistration(ctx context.Context, email string, p *quarry.RegistrationPolicy) error {
	_, key, err := quarry.ParseEmail(email)
	if err != nil {
		return err
	}
	var people, invited, taken int
	err = db.read.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM settings WHERE name = $1),
		(SELECT COUNT(*) FROM invited_users WHERE email_key = $2),
		(SELECT COUNT(*) FROM users WHERE email_key = $2)`, settingHasPeople, key).Scan(&people, &invited, &taken)
	if err != nil {
		return mapError(err)
	}
	if taken > 0 {
		return errEmailTaken
	}
	if people == 0 && p.Mode != quarry.RegistrationClosed && quarry.AllowsDomain(p.Domains, key) {
		return nil // the first person
	}
	return checkRegistration(p, key, invited > 0)
}

// checkRegistration applies p to a person who is not the first.
func checkRegistration(p *quarry.RegistrationPolicy, key string, invited bool) error {
	switch {
	case p.Mode == quarry.RegistrationClosed:
		return quarry.Errorf(quarry.EFORBIDDEN, "Registration is closed; sign in with single sign-on or ask an admin")
	case !quarry.AllowsDomain(p.Domains, key):
		return errDomain(p.Domains)
	case invited:
		return nil
	case p.Mode == quarry.RegistrationInvite:
		return quarry.Errorf(quarry.EFORBIDDEN, "Registration is by invitation only, and this email has not been invited")
	}
	return nil
}

// errDomain answers an email of a domain accounts may not have.
func errDomain(domains []string) error {
	return quarry.Errorf(quarry.EFORBIDDEN, "Accounts are for emails of these domains only: %s", strings.Join(domains, ", "))
}

// markHasPeople notes that the database has people, and reports whether it
// had none before.
func (tx *Tx) markHasPeople() (bool, error) {
	res, err := tx.exec(`INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		settingHasPeople, tx.now.String())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PasswordAccount returns the id, password hash and active flag of the
// person with email key key, for a sign-in; "" and false for nobody (or a
// service account, or a person without a password).
func (db *DB) PasswordAccount(ctx context.Context, key string) (id, hash string, active bool, err error) {
	if !utf8.ValidString(key) || len(key) > 254 {
		return "", "", false, nil // no email has it
	}
	var h sql.NullString
	err = db.read.QueryRowContext(ctx, `SELECT id, password_hash, is_active FROM users
		WHERE email_key = $1 AND NOT service_account`, key).Scan(&id, &h, &active)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !h.Valid) {
		return "", "", false, nil
	}
	return id, h.String, active, mapError(err)
}

// Sign-in throttling: attempts are counted per key (an account, an
// address) in windows of throttleWindow, before the password is checked,
// so that attempts made at once are counted too; a successful sign-in takes
// its attempt back. Past its limit in a window, a key is refused until the
// window ends.
const throttleWindow = 15 * time.Minute

// ThrottleKey names what sign-in attempts are counted against: an account
// by its email key (hashed: the table holds no emails), or an address.
func ThrottleKey(kind, value string) string {
	if kind == "account" {
		sum := sha256.Sum256([]byte(value))
		value = hex.EncodeToString(sum[:16])
	}
	return kind + ":" + value
}

// Throttle is a key with its limit of attempts per window.
type Throttle struct {
	Key   string
	Limit int
}

// CountAttempt counts an attempt against each throttle and returns
// ETOOMANY, saying when to try again, if one of them is past its limit.
func (db *DB) CountAttempt(ctx context.Context, throttles ...Throttle) error {
	var refused error
	err := db.update(ctx, func(tx *Tx) error {
		refused = nil
		now := tx.now.Micros()
		window := throttleWindow.Microseconds()
		// Counts of windows long over are of no use.
		if _, err := tx.exec(`DELETE FROM sign_in_failures WHERE window_start <= $1`, now-window); err != nil {
			return err
		}
		for _, t := range throttles {
			var n, start int64
			err := tx.queryRow(`INSERT INTO sign_in_failures (key, failures, window_start) VALUES ($1, 1, $2)
				ON CONFLICT (key) DO UPDATE SET failures = sign_in_failures.failures + 1
				RETURNING failures, window_start`, t.Key, now).Scan(&n, &start)
			if err != nil {
				return err
			}
			if n > int64(t.Limit) && refused == nil {
				refused = errThrottled(time.Duration(start+window-now) * time.Microsecond)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return refused
}

func errThrottled(wait time.Duration) error {
	minutes := int((wait + time.Minute - 1) / time.Minute)
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	return &quarry.Error{Code: quarry.ETOOMANY, RetryAfter: wait,
		Message: fmt.Sprintf("Too many failed sign-ins; try again in %d %s", minutes, unit)}
}

// RecordSignInFailure records a failed sign-in in the audit log: for the
// account of userID, or, when there is none, for the email tried (if it is
// one: a password typed in the wrong field is not kept). method and reason
// name how and why, in the entry's fields.
func (db *DB) RecordSignInFailure(ctx context.Context, userID, email string, fields ...string) error {
	return db.update(ctx, func(tx *Tx) error {
		if userID != "" {
			return tx.auditAs(userID, "user.sign_in_failed", "user", userID, fields)
		}
		id := ""
		if _, key, err := quarry.ParseEmail(email); err == nil {
			id = key
		}
		return tx.auditAs("", "user.sign_in_failed", "user", id, fields)
	})
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

// PasswordOf returns the password hash of user id, "" when it has none.
func (db *DB) PasswordOf(ctx context.Context, id string) (string, error) {
	var h sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = $1`, id).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errUserNotFound
	}
	return h.String, mapError(err)
}

// ChangePassword gives c (who proved they know the old one) a new password
// hash, and ends c's other sessions; the session the change was made with,
// if any, goes on.
func (db *DB) ChangePassword(ctx context.Context, c *quarry.Caller, hash string) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := tx.exec(`UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3`, hash, tx.now.Micros(), c.ID); err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, c.ID, c.SessionID); err != nil {
			return err
		}
		return tx.audit(c, "user.password_change", "user", c.ID, []string{"password"})
	})
}

// ResetPassword gives the person with email a new password hash (an
// admin's act) and ends their sessions.
func (db *DB) ResetPassword(ctx context.Context, c *quarry.Caller, email, hash string) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(email)
		if err != nil {
			return err
		}
		if u.ServiceAccount {
			return quarry.Errorf(quarry.EINVALID, "A service account has no password: regenerate its API key instead")
		}
		if _, err := tx.exec(`UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3`, hash, tx.now.Micros(), u.ID); err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM sessions WHERE user_id = $1`, u.ID); err != nil {
			return err
		}
		return tx.audit(c, "user.password_reset", "user", u.ID, []string{"password"})
	})
}

// Attempt says what a successful sign-in does to the throttles its attempt
// was counted against: the counts of Clear start again, and the attempt is
// taken back from TakeBack.
type Attempt struct {
	Clear    []string
	TakeBack []string
}

// OpenSession opens a session for user id, which signed in with a
// password, and returns its token.
func (db *DB) OpenSession(ctx context.Context, userID string, ns quarry.NewSession, p quarry.SessionPolicy, a Attempt) (string, error) {
	var token string
	err := db.update(ctx, func(tx *Tx) error {
		var active bool
		if err := tx.queryRow(`SELECT is_active FROM users WHERE id = $1`, userID).Scan(&active); err != nil {
			return err
		}
		if !active {
			return errNotAuthenticated
		}
		for _, k := range a.Clear {
			if _, err := tx.exec(`DELETE FROM sign_in_failures WHERE key = $1`, k); err != nil {
				return err
			}
		}
		for _, k := range a.TakeBack {
			if _, err := tx.exec(`UPDATE sign_in_failures SET failures = failures - 1 WHERE key = $1 AND failures > 0`, k); err != nil {
				return err
			}
		}
		var err error
		token, _, err = tx.openSession(userID, ns, p)
		return err
	})
	return token, err
}

// openSession inserts a session for user id, purging sessions that ended
// (and the one the browser signed in over), and records the sign-in.
func (tx *Tx) openSession(userID string, ns quarry.NewSession, p quarry.SessionPolicy) (string, int64, error) {
	now := tx.now.Micros()
	if _, err := tx.exec(`DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2 OR token_hash = $3`,
		now, now-p.Idle.Microseconds(), ns.Replaces); err != nil {
		return "", 0, err
	}
	token, hash := quarry.NewSessionToken()
	var idToken []byte
	if ns.IDToken != "" {
		idToken = tx.db.keys.seal(purposeIDToken, []byte(ns.IDToken))
	}
	var id int64
	err := tx.queryRow(`INSERT INTO sessions (token_hash, user_id, method, id_token, ip, user_agent, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id`,
		hash, userID, ns.Method, idToken, truncate(ns.IP, 64), truncate(ns.UserAgent, 512), now, now+p.Absolute.Microseconds()).Scan(&id)
	if err != nil {
		return "", 0, err
	}
	if err := tx.keepSSOToken(tx.ctx, id, ns.SSOToken); err != nil { // store/tooltoken.go
		return "", 0, err
	}
	return token, id, tx.auditAs(userID, "user.sign_in", "session", id, []string{ns.Method})
}

// CloseSession ends session id (a sign-out by its own user) and returns the
// ID token it was opened with, if any, for the provider's end-session
// endpoint.
func (db *DB) CloseSession(ctx context.Context, c *quarry.Caller, id int64) (string, error) {
	var idToken string
	err := db.update(ctx, func(tx *Tx) error {
		var sealed []byte
		err := tx.queryRow(`DELETE FROM sessions WHERE id = $1 AND user_id = $2 RETURNING id_token`, id, c.ID).Scan(&sealed)
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
		return tx.audit(c, "user.sign_out", "session", id, nil)
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
		err := tx.queryRow(`DELETE FROM sessions WHERE id = $1 RETURNING user_id`, id).Scan(&userID)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.Errorf(quarry.ENOTFOUND, "Session %d does not exist", id)
		}
		if err != nil {
			return err
		}
		return tx.audit(c, "session.end", "session", id, nil)
	})
}

// EndUserSessions ends every session of the user with email and returns
// how many there were.
func (db *DB) EndUserSessions(ctx context.Context, c *quarry.Caller, email string) (int, error) {
	var n int64
	err := db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(email)
		if err != nil {
			return err
		}
		res, err := tx.exec(`DELETE FROM sessions WHERE user_id = $1`, u.ID)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		return tx.audit(c, "user.end_sessions", "user", u.ID, nil)
	})
	return int(n), err
}

var errUserNotFound = quarry.Errorf(quarry.ENOTFOUND, "User not found")

// oidcLoginTTL is how long a sign-in at the provider may take.
const oidcLoginTTL = 10 * time.Minute

// BeginOIDCLogin keeps what the callback of sign-in l needs, under the hash
// of its state, sealed, for oidcLoginTTL; next is where the browser goes
// once signed in.
func (db *DB) BeginOIDCLogin(ctx context.Context, state string, secret any, next string) error {
	plain, err := json.Marshal(secret)
	if err != nil {
		return err
	}
	return db.update(ctx, func(tx *Tx) error {
		now := tx.now.Micros()
		if _, err := tx.exec(`DELETE FROM oidc_logins WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		_, err := tx.exec(`INSERT INTO oidc_logins (state_hash, secret, next_path, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
			quarry.HashToken(state), tx.db.keys.seal(purposeOIDCLogin, plain), next, now, now+oidcLoginTTL.Microseconds())
		return err
	})
}

// errLoginState answers a callback whose state names no sign-in in
// progress: unknown, used already, or too old.
var errLoginState = quarry.Errorf(quarry.EINVALID, "The sign-in is unknown, over or too old; start again")

// TakeOIDCLogin removes the sign-in whose state is state, decodes its
// secret into secret and returns its next path. A state is good once.
func (db *DB) TakeOIDCLogin(ctx context.Context, state string, secret any) (string, error) {
	var (
		sealed  []byte
		next    string
		expires int64
	)
	err := db.update(ctx, func(tx *Tx) error {
		err := tx.queryRow(`DELETE FROM oidc_logins WHERE state_hash = $1 RETURNING secret, next_path, expires_at`,
			quarry.HashToken(state)).Scan(&sealed, &next, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return errLoginState
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if expires <= db.now().Micros() {
		return "", errLoginState
	}
	plain, err := db.keys.open(purposeOIDCLogin, sealed)
	if err != nil {
		return "", errLoginState // sealed with a key this server does not have
	}
	return next, json.Unmarshal(plain, secret)
}

// SignInOIDC signs in the person the provider vouches for: their account
// is found by the identity (issuer and subject), or else linked by the
// email (see identityUser), or else made, with the role the policy gave;
// when the provider decides roles, the role is brought up to date. A
// deactivated person is refused. It opens a session and returns its token.
func (db *DB) SignInOIDC(ctx context.Context, id *quarry.Identity, ns quarry.NewSession, p quarry.SessionPolicy) (string, *quarry.User, error) {
	var (
		token string
		u     *quarry.User
	)
	err := db.retryConflict(ctx, func(tx *Tx) error {
		var err error
		if u, err = tx.identityUser(id); err != nil {
			return err
		}
		token, _, err = tx.openSession(u.ID, ns, p)
		return err
	})
	return token, u, err
}

// retryConflict runs fn in a write transaction, and once more if it
// failed because another transaction made the same account or identity at
// the same time (two first sign-ins of one person): the second run finds
// what the first made.
func (db *DB) retryConflict(ctx context.Context, fn func(*Tx) error) error {
	err := db.update(ctx, fn)
	if errors.Is(err, errEmailTaken) || errors.Is(err, errConflict) {
		err = db.update(ctx, fn)
	}
	return err
}

// IdentityCaller returns the caller a bearer access token of the provider
// stands for, making the account (as a first sign-in does) when the token
// carries an email; a token without one names only people who signed in
// before. It writes only when there is something to change.
func (db *DB) IdentityCaller(ctx context.Context, id *quarry.Identity) (*quarry.Caller, error) {
	var (
		userID string
		role   quarry.Role
	)
	err := db.read.QueryRowContext(ctx, `SELECT u.id, u.role FROM user_identities i JOIN users u ON u.id = i.user_id
		WHERE i.issuer = $1 AND i.subject = $2`, id.Issuer, id.Subject).Scan(&userID, &role)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, mapError(err)
	}
	known := err == nil
	if !known && id.Email == "" {
		return nil, errNotAuthenticated
	}
	if !known || (id.Email != "" && roleOutOfDate(id, role)) {
		err = db.retryConflict(ctx, func(tx *Tx) error {
			u, err := tx.identityUser(id)
			if err == nil {
				userID = u.ID
			}
			return err
		})
		if quarry.ErrorCode(err) == quarry.EFORBIDDEN {
			return nil, errNotAuthenticated // deactivated, or not linkable: the token opens nothing
		}
		if err != nil {
			return nil, err
		}
	}
	return db.userCaller(ctx, userID)
}

// roleOutOfDate reports whether the role the provider gives in id should
// replace role. A curator made one through group flags stays one while the
// provider says basic.
func roleOutOfDate(id *quarry.Identity, role quarry.Role) bool {
	return id.RoleFromProvider && id.Role != role && !(id.Role == quarry.RoleBasic && role == quarry.RoleCurator)
}

// identityUser returns the active account of identity id, making or linking
// it, and bringing its role up to date, as SignInOIDC says.
//
// An identity is linked to the account that has its email (a local
// account, or another provider's identity) only when the provider said the
// email is verified: otherwise anybody who can set an email at a provider
// could take over an account. Linking a local account ends its password
// and its sessions: whoever registered that email locally proved nothing,
// the provider did.
func (tx *Tx) identityUser(id *quarry.Identity) (*quarry.User, error) {
	u := &quarry.User{}
	err := scanUser(tx.queryRow(`SELECT `+userColumns+` FROM user_identities i JOIN users u ON u.id = i.user_id
		WHERE i.issuer = $1 AND i.subject = $2`, id.Issuer, id.Subject), u)
	if errors.Is(err, sql.ErrNoRows) {
		if id.Email == "" {
			return nil, errNotAuthenticated
		}
		var hasPassword bool
		err = scanUser(tx.queryRow(`SELECT `+userColumns+`, u.password_hash IS NOT NULL FROM users u
			WHERE u.email_key = $1 AND NOT u.service_account`, quarry.EmailKey(id.Email)), u, &hasPassword)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.markHasPeople(); err != nil {
				return nil, err
			}
			u = &quarry.User{ID: uuid.NewString(), Email: id.Email, Name: id.Name, Role: id.Role, IsActive: true, CreatedAt: tx.now}
			if err := tx.insertUser(u, nil); err != nil {
				return nil, err
			}
			if err := tx.auditAs(u.ID, "user.create", "user", u.ID, []string{"email", "role"}); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case !id.EmailVerified:
			return nil, errNotLinkable
		case hasPassword:
			if _, err := tx.exec(`UPDATE users SET password_hash = NULL, updated_at = $1 WHERE id = $2`, tx.now.Micros(), u.ID); err != nil {
				return nil, err
			}
			if _, err := tx.exec(`DELETE FROM sessions WHERE user_id = $1`, u.ID); err != nil {
				return nil, err
			}
			if err := tx.auditAs(u.ID, "user.link_identity", "user", u.ID, []string{"identity", "password"}); err != nil {
				return nil, err
			}
		default:
			if err := tx.auditAs(u.ID, "user.link_identity", "user", u.ID, []string{"identity"}); err != nil {
				return nil, err
			}
		}
		if _, err := tx.exec(`INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)`,
			id.Issuer, id.Subject, u.ID, tx.now.Micros()); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if !u.IsActive {
		return nil, ErrDeactivated
	}
	if roleOutOfDate(id, u.Role) {
		if err := tx.changeRole(nil, u, id.Role); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// errNotLinkable answers a first sign-in with an email that an account has
// already, when the provider does not say the email is verified.
var errNotLinkable = quarry.Errorf(quarry.EFORBIDDEN, "An account with this email exists, and the provider does not confirm the email is yours; ask an admin")

// ErrDeactivated answers a deactivated person who signs in with the
// provider. (A wrong password gets the same answer for a deactivated
// account as for a wrong password.)
var ErrDeactivated = quarry.Errorf(quarry.EFORBIDDEN, "This account is deactivated; ask an admin")

// changeRole gives u the role r, as c (nil: the sign-in policy) does:
// curator flags are cleared when u stops being a curator.
func (tx *Tx) changeRole(c *quarry.Caller, u *quarry.User, r quarry.Role) error {
	if _, err := tx.exec(`UPDATE users SET role = $1, updated_at = $2 WHERE id = $3`, r, tx.now.Micros(), u.ID); err != nil {
		return err
	}
	if r != quarry.RoleCurator {
		if _, err := tx.exec(`UPDATE user_group_members SET is_curator = FALSE WHERE user_id = $1 AND is_curator`, u.ID); err != nil {
			return err
		}
	}
	u.Role = r
	if c == nil {
		return tx.auditAs(u.ID, "user.role_change", "user", u.ID, []string{"role"})
	}
	return tx.audit(c, "user.role_change", "user", u.ID, []string{"role"})
}

// auditAs appends an audit entry for a change made by user id (or by
// nobody known, for ""), outside any request of theirs: a sign-in.
func (tx *Tx) auditAs(userID, action, resourceType string, resourceID any, fields []string) error {
	if userID == "" {
		return tx.audit(nil, action, resourceType, resourceID, fields)
	}
	return tx.audit(&quarry.Caller{User: quarry.User{ID: userID}}, action, resourceType, resourceID, fields)
}

// People returns the page of people f selects, ascending by email, and how
// many it selects in all.
func (db *DB) People(ctx context.Context, f quarry.UserFilter) ([]*quarry.Person, int, error) {
	where, args := peopleFilter(f)
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM users u WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, mapError(err)
	}
	n := len(args)
	rows, err := db.read.QueryContext(ctx, `SELECT `+userColumns+`, u.password_hash IS NOT NULL, u.updated_at FROM users u
		WHERE `+where+fmt.Sprintf(` ORDER BY u.email_key LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, mapError(err)
	}
	people := []*quarry.Person{}
	byID := map[string]*quarry.Person{}
	var ids []any
	for rows.Next() {
		p := &quarry.Person{Identities: []string{}, Groups: []quarry.GroupBrief{}}
		var updated int64
		if err := scanUser(rows, &p.User, &p.PasswordConfigured, &updated); err != nil {
			rows.Close()
			return nil, 0, mapError(err)
		}
		p.UpdatedAt = quarry.TimeFromMicros(updated)
		people = append(people, p)
		byID[p.ID] = p
		ids = append(ids, p.ID)
	}
	if err := closeRows(rows); err != nil || len(ids) == 0 {
		return people, total, err
	}
	in := placeholders(1, len(ids))
	rows, err = db.read.QueryContext(ctx, `SELECT m.user_id, g.id, g.name FROM user_group_members m
		JOIN user_groups g ON g.id = m.group_id WHERE m.user_id IN (`+in+`) ORDER BY g.id`, ids...)
	if err != nil {
		return nil, 0, mapError(err)
	}
	for rows.Next() {
		var (
			uid string
			g   quarry.GroupBrief
		)
		if err := rows.Scan(&uid, &g.ID, &g.Name); err != nil {
			rows.Close()
			return nil, 0, mapError(err)
		}
		byID[uid].Groups = append(byID[uid].Groups, g)
	}
	if err := closeRows(rows); err != nil {
		return nil, 0, err
	}
	rows, err = db.read.QueryContext(ctx, `SELECT user_id, issuer FROM user_identities WHERE user_id IN (`+in+`) ORDER BY issuer`, ids...)
	if err != nil {
		return nil, 0, mapError(err)
	}
	for rows.Next() {
		var uid, issuer string
		if err := rows.Scan(&uid, &issuer); err != nil {
			rows.Close()
			return nil, 0, mapError(err)
		}
		byID[uid].Identities = append(byID[uid].Identities, issuer)
	}
	return people, total, closeRows(rows)
}

// peopleFilter renders f as a condition on users u and its arguments.
func peopleFilter(f quarry.UserFilter) (string, []any) {
	conds := []string{"NOT u.service_account"}
	var args []any
	if q := strings.ToLower(strings.TrimSpace(f.Query)); q != "" {
		args = append(args, "%"+escapeLike(q)+"%")
		conds = append(conds, fmt.Sprintf(`(u.email_key LIKE $%d ESCAPE '\' OR u.name_key LIKE $%d ESCAPE '\')`, len(args), len(args)))
	}
	if len(f.Roles) > 0 {
		var ps []string
		for _, r := range f.Roles {
			args = append(args, string(r))
			ps = append(ps, fmt.Sprintf("$%d", len(args)))
		}
		conds = append(conds, "u.role IN ("+strings.Join(ps, ", ")+")")
	}
	if f.Active != nil {
		args = append(args, *f.Active)
		conds = append(conds, fmt.Sprintf("u.is_active = $%d", len(args)))
	}
	return strings.Join(conds, " AND "), args
}

// escapeLike escapes the wildcards of a LIKE pattern (with ESCAPE '\').
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// placeholders returns "$from, ..., $(from+n-1)".
func placeholders(from, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", from+i)
	}
	return strings.Join(ps, ", ")
}

// personByEmail returns the user with email key key.
func (tx *Tx) personByEmail(email string) (*quarry.User, error) {
	u := &quarry.User{}
	err := scanUser(tx.queryRow(`SELECT `+userColumns+` FROM users u WHERE u.email_key = $1`, quarry.EmailKey(email)), u)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errUserNotFound
	}
	return u, err
}

// checkLastAdmin refuses a change that would leave no active admin who can
// sign in (a person, or a service account that still has a key).
func (tx *Tx) checkLastAdmin(u *quarry.User, what string) error {
	if u.Role != quarry.RoleAdmin || !u.IsActive {
		return nil
	}
	if tx.db.dialect == Postgres {
		// Two admins stepping down at once must not both see the other:
		// one waits for the other's transaction. (SQLite has one writer.)
		if _, err := tx.exec(`SELECT pg_advisory_xact_lock($1)`, lastAdminLock); err != nil {
			return err
		}
	}
	var others int
	err := tx.queryRow(`SELECT COUNT(*) FROM users u WHERE u.role = 'admin' AND u.is_active AND u.id <> $1
		AND (NOT u.service_account OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id))`, u.ID).Scan(&others)
	if err != nil {
		return err
	}
	if others == 0 {
		return quarry.Errorf(quarry.EINVALID, "%s is the last active admin and cannot be %s", u.Email, what)
	}
	return nil
}

// lastAdminLock is the PostgreSQL advisory lock of checkLastAdmin.
const lastAdminLock = 7243870391

// SetRole gives the person with email the role r (contract: PATCH
// /manage/set-user-role). Curators are made through group curator flags;
// service accounts keep the role of their key; the last active admin
// stays one.
func (db *DB) SetRole(ctx context.Context, c *quarry.Caller, email string, r quarry.Role) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(email)
		if err != nil {
			return err
		}
		switch {
		case u.ServiceAccount:
			return quarry.Errorf(quarry.EINVALID, "Cannot change the role of a service account user: make a new API key instead")
		case r == u.Role:
			return nil
		case r == quarry.RoleCurator:
			return quarry.Errorf(quarry.EINVALID, "Curator role must be set via the User Group Menu")
		}
		if err := tx.checkLastAdmin(u, "demoted"); err != nil {
			return err
		}
		return tx.changeRole(c, u, r)
	})
}

// SetActive activates or deactivates the user with email. A deactivated
// user's sessions end, and its sessions, API keys and access tokens open
// nothing until it is activated again; what it owns keeps its owner.
func (db *DB) SetActive(ctx context.Context, c *quarry.Caller, email string, active bool) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(email)
		if err != nil {
			return err
		}
		if u.IsActive == active {
			return nil
		}
		action := "user.activate"
		if !active {
			if u.ID == c.ID {
				return quarry.Errorf(quarry.EINVALID, "You cannot deactivate yourself")
			}
			if err := tx.checkLastAdmin(u, "deactivated"); err != nil {
				return err
			}
			if _, err := tx.exec(`DELETE FROM sessions WHERE user_id = $1`, u.ID); err != nil {
				return err
			}
			if err := tx.dropToolTokens(tx.ctx, u.ID); err != nil { // store/tooltoken.go
				return err
			}
			action = "user.deactivate"
		}
		if _, err := tx.exec(`UPDATE users SET is_active = $1, updated_at = $2 WHERE id = $3`, active, tx.now.Micros(), u.ID); err != nil {
			return err
		}
		return tx.audit(c, action, "user", u.ID, []string{"is_active"})
	})
}

// Invite lets the people with emails register when registration is by
// invitation; emails already invited or with an account are skipped. It
// returns how many were invited.
func (db *DB) Invite(ctx context.Context, c *quarry.Caller, emails []string) (int, error) {
	type invite struct{ email, key string }
	var in []invite
	for _, e := range emails {
		email, key, err := quarry.ParseEmail(e)
		if err != nil {
			return 0, err
		}
		in = append(in, invite{email, key})
	}
	n := 0
	err := db.update(ctx, func(tx *Tx) error {
		n = 0
		for _, i := range in {
			res, err := tx.exec(`INSERT INTO invited_users (email_key, email, invited_by, created_at)
				SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM users WHERE email_key = $1)
				ON CONFLICT (email_key) DO NOTHING`, i.key, i.email, c.ID, tx.now.Micros())
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if k == 1 {
				n++
				if err := tx.audit(c, "user.invite", "invitation", i.key, nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// Invitations returns the invitations not yet taken, ascending by email.
func (db *DB) Invitations(ctx context.Context) ([]*quarry.Invitation, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT i.email, u.email, i.created_at FROM invited_users i
		LEFT JOIN users u ON u.id = i.invited_by ORDER BY i.email_key`)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.Invitation{}
	for rows.Next() {
		var (
			i       quarry.Invitation
			created int64
		)
		if err := rows.Scan(&i.Email, &i.InvitedBy, &created); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		i.CreatedAt = quarry.TimeFromMicros(created)
		out = append(out, &i)
	}
	return out, closeRows(rows)
}

// RemoveInvitation withdraws the invitation of email.
func (db *DB) RemoveInvitation(ctx context.Context, c *quarry.Caller, email string) error {
	return db.update(ctx, func(tx *Tx) error {
		key := quarry.EmailKey(email)
		res, err := tx.exec(`DELETE FROM invited_users WHERE email_key = $1`, key)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = quarry.Errorf(quarry.ENOTFOUND, "No invitation for %s", email)
			}
			return err
		}
		return tx.audit(c, "user.uninvite", "invitation", key, nil)
	})
}

// takeInvitation removes the invitation of email key key and reports
// whether there was one.
func (tx *Tx) takeInvitation(key string) (bool, error) {
	res, err := tx.exec(`DELETE FROM invited_users WHERE email_key = $1`, key)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
