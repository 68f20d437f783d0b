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
// lets it be made: the first person of a database always may (and becomes
// an admin); after that, p.Mode decides. It returns the new user.
func (db *DB) Register(ctx context.Context, email string, name *string, passwordHash string, p *quarry.RegistrationPolicy) (*quarry.User, error) {
	email, key, err := quarry.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	var u *quarry.User
	err = db.update(ctx, func(tx *Tx) error {
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
		invited := false
		if !first {
			if invited, err = tx.takeInvitation(key); err != nil {
				return err
			}
			if err := checkRegistration(p, key, invited); err != nil {
				return err
			}
		}
		role := quarry.RoleBasic
		if first || p.IsAdminEmail(key) {
			role = quarry.RoleAdmin
		}
		u = &quarry.User{ID: uuid.NewString(), Email: email, Name: name, Role: role, IsActive: true, CreatedAt: tx.now}
		if err := tx.insertUser(u, &passwordHash); err != nil {
			return err
		}
		tx.touch() // A new person can be added to groups, and so change who sees what.
		return tx.auditAs(u.ID, "user.register", "user", u.ID, []string{"email", "role"})
	})
	return u, err
}

// checkRegistration applies p to a person who is not the first.
func checkRegistration(p *quarry.RegistrationPolicy, key string, invited bool) error {
	switch {
	case p.Mode == quarry.RegistrationClosed:
		return quarry.Errorf(quarry.EFORBIDDEN, "Registration is closed; sign in with single sign-on or ask an admin")
	case invited:
		return nil
	case p.Mode == quarry.RegistrationInvite:
		return quarry.Errorf(quarry.EFORBIDDEN, "Registration is by invitation only, and this email has not been invited")
	case !p.AllowsDomain(key):
		return quarry.Errorf(quarry.EFORBIDDEN, "Registration is open to emails of these domains only: %s", strings.Join(p.Domains, ", "))
	}
	return nil
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
	var h sql.NullString
	err = db.read.QueryRowContext(ctx, `SELECT id, password_hash, is_active FROM users
		WHERE email_key = $1 AND NOT service_account`, key).Scan(&id, &h, &active)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !h.Valid) {
		return "", "", false, nil
	}
	return id, h.String, active, mapError(err)
}

// Sign-in throttling: failures are counted per key (an account, an
// address) in windows of throttleWindow; once a key reaches its limit in a
// window, it is locked until the window ends.
const throttleWindow = 15 * time.Minute

// ThrottleKey names what failed sign-ins are counted against: an account
// by its email key (hashed: the table holds no emails), or an address.
func ThrottleKey(kind, value string) string {
	if kind == "account" {
		sum := sha256.Sum256([]byte(value))
		value = hex.EncodeToString(sum[:16])
	}
	return kind + ":" + value
}

// CheckThrottle returns ETOOMANY, saying when to try again, if any of keys
// is locked.
func (db *DB) CheckThrottle(ctx context.Context, keys ...string) error {
	now := db.now().Micros()
	for _, k := range keys {
		var until int64
		err := db.read.QueryRowContext(ctx, `SELECT locked_until FROM sign_in_failures WHERE key = $1`, k).Scan(&until)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return mapError(err)
		}
		if until > now {
			return errThrottled(time.Duration(until-now) * time.Microsecond)
		}
	}
	return nil
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

// Throttle is a key with its limit of failures per window.
type Throttle struct {
	Key   string
	Limit int
}

// RecordSignInFailure counts a failed sign-in against each throttle, and
// records it in the audit log: for the account of userID, or, when there
// is none, for the email tried.
func (db *DB) RecordSignInFailure(ctx context.Context, userID, email string, throttles ...Throttle) error {
	return db.update(ctx, func(tx *Tx) error {
		now := tx.now.Micros()
		window := throttleWindow.Microseconds()
		for _, t := range throttles {
			// A new window starts once the last one is over.
			if _, err := tx.exec(`INSERT INTO sign_in_failures (key, failures, window_start, locked_until) VALUES ($1, 1, $2, 0)
				ON CONFLICT (key) DO UPDATE SET
					failures = CASE WHEN sign_in_failures.window_start <= $2 - $3 THEN 1 ELSE sign_in_failures.failures + 1 END,
					window_start = CASE WHEN sign_in_failures.window_start <= $2 - $3 THEN $2 ELSE sign_in_failures.window_start END`,
				t.Key, now, window); err != nil {
				return err
			}
			if _, err := tx.exec(`UPDATE sign_in_failures SET locked_until = window_start + $2
				WHERE key = $1 AND failures >= $3`, t.Key, window, t.Limit); err != nil {
				return err
			}
		}
		// Counts of windows long over are of no use.
		if _, err := tx.exec(`DELETE FROM sign_in_failures WHERE window_start <= $1 AND locked_until <= $2`, now-window, now); err != nil {
			return err
		}
		if userID == "" {
			return tx.auditAs("", "user.sign_in_failed", "user", truncate(quarry.EmailKey(email), 254), nil)
		}
		return tx.auditAs(userID, "user.sign_in_failed", "user", userID, nil)
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// OpenSession opens a session for user id, which signed in with a
// password, and returns its token; it clears the failures counted against
// the throttle keys of the account.
func (db *DB) OpenSession(ctx context.Context, userID string, ns quarry.NewSession, p quarry.SessionPolicy, clear ...string) (string, error) {
	var token string
	err := db.update(ctx, func(tx *Tx) error {
		var active bool
		if err := tx.queryRow(`SELECT is_active FROM users WHERE id = $1`, userID).Scan(&active); err != nil {
			return err
		}
		if !active {
			return errNotAuthenticated
		}
		for _, k := range clear {
			if _, err := tx.exec(`DELETE FROM sign_in_failures WHERE key = $1`, k); err != nil {
				return err
			}
		}
		var err error
		token, _, err = tx.openSession(userID, ns, p)
		return err
	})
	return token, err
}

// openSession inserts a session for user id, purging sessions that ended,
// and records the sign-in.
func (tx *Tx) openSession(userID string, ns quarry.NewSession, p quarry.SessionPolicy) (string, int64, error) {
	now := tx.now.Micros()
	if _, err := tx.exec(`DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2`, now, now-p.Idle.Microseconds()); err != nil {
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
// is found by the identity (issuer and subject), or else by the email (and
// the identity linked to it), or else made, with the role the policy gave;
// when the provider decides roles, the role is brought up to date. A
// deactivated person is refused. It opens a session and returns its token.
func (db *DB) SignInOIDC(ctx context.Context, id *quarry.Identity, ns quarry.NewSession, p quarry.SessionPolicy) (string, *quarry.User, error) {
	var (
		token string
		u     *quarry.User
	)
	err := db.update(ctx, func(tx *Tx) error {
		var err error
		if u, err = tx.identityUser(id); err != nil {
			return err
		}
		token, _, err = tx.openSession(u.ID, ns, p)
		return err
	})
	return token, u, err
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
		err = db.update(ctx, func(tx *Tx) error {
			u, err := tx.identityUser(id)
			if err == nil {
				userID = u.ID
			}
			return err
		})
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
// it and bringing its role up to date as SignInOIDC says.
func (tx *Tx) identityUser(id *quarry.Identity) (*quarry.User, error) {
	u := &quarry.User{}
	err := scanUser(tx.queryRow(`SELECT `+userColumns+` FROM user_identities i JOIN users u ON u.id = i.user_id
		WHERE i.issuer = $1 AND i.subject = $2`, id.Issuer, id.Subject), u)
	if errors.Is(err, sql.ErrNoRows) {
		if id.Email == "" {
			return nil, errNotAuthenticated
		}
		// The provider vouches for the email: a person with it (who
		// registered, or was made by another provider) is the same person.
		err = scanUser(tx.queryRow(`SELECT `+userColumns+` FROM users u WHERE u.email_key = $1 AND NOT u.service_account`,
			quarry.EmailKey(id.Email)), u)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.markHasPeople(); err != nil {
				return nil, err
			}
			u = &quarry.User{ID: uuid.NewString(), Email: id.Email, Name: id.Name, Role: id.Role, IsActive: true, CreatedAt: tx.now}
			if err := tx.insertUser(u, nil); err != nil {
				return nil, err
			}
			tx.touch()
			if err := tx.auditAs(u.ID, "user.create", "user", u.ID, []string{"email", "role"}); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		}
		if _, err := tx.exec(`INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)`,
			id.Issuer, id.Subject, u.ID, tx.now.Micros()); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if !u.IsActive {
		return nil, errDeactivated
	}
	if roleOutOfDate(id, u.Role) {
		if err := tx.changeRole(nil, u, id.Role); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// errDeactivated answers a deactivated person who signs in with the
// provider. (A wrong password gets the same answer for a deactivated
// account as for a wrong password.)
var errDeactivated = quarry.Errorf(quarry.EFORBIDDEN, "This account is deactivated; ask an admin")

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
	tx.touch()
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
		conds = append(conds, fmt.Sprintf(`(u.email_key LIKE $%d ESCAPE '\' OR lower(coalesce(u.name, '')) LIKE $%d ESCAPE '\')`, len(args), len(args)))
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
			action = "user.deactivate"
		}
		if _, err := tx.exec(`UPDATE users SET is_active = $1, updated_at = $2 WHERE id = $3`, active, tx.now.Micros(), u.ID); err != nil {
			return err
		}
		tx.touch()
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
