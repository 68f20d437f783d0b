package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
)

// Signing in: the throttling of attempts, password accounts, the state of
// a sign-in at the OpenID provider, and the accounts of identities the
// provider vouches for.

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
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3`, hash, tx.now.Micros(), c.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, c.ID, c.SessionID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "user.password_change", "user", c.ID, []string{"password"})
	})
}

// ResetPassword gives the person with email a new password hash (an
// admin's act) and ends their sessions.
func (db *DB) ResetPassword(ctx context.Context, c *quarry.Caller, email, hash string) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(ctx, email)
		if err != nil {
			return err
		}
		if err := quarry.CheckPasswordReset(u); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3`, hash, tx.now.Micros(), u.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, u.ID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "user.password_reset", "user", u.ID, []string{"password"})
	})
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

// CountAttempts counts an attempt against each of keys, in windows of
// length window, and returns the count of each, this attempt included,
// and the time it counted them at. It counts before a password is
// checked, so that attempts made at once are counted too; the caller
// decides with the counts (quarry.SignInLimits).
func (db *DB) CountAttempts(ctx context.Context, window time.Duration, keys ...string) ([]quarry.AttemptCount, time.Time, error) {
	var (
		counts []quarry.AttemptCount
		now    quarry.Time
	)
	err := db.update(ctx, func(tx *Tx) error {
		counts, now = counts[:0], tx.now
		// Counts of windows long over are of no use.
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE window_start <= $1`, now.Micros()-window.Microseconds()); err != nil {
			return err
		}
		for _, k := range keys {
			var n, start int64
			err := tx.QueryRowContext(ctx, `INSERT INTO sign_in_failures (key, failures, window_start) VALUES ($1, 1, $2)
				ON CONFLICT (key) DO UPDATE SET failures = sign_in_failures.failures + 1
				RETURNING failures, window_start`, k, now.Micros()).Scan(&n, &start)
			if err != nil {
				return err
			}
			counts = append(counts, quarry.AttemptCount{N: int(n), Start: quarry.TimeFromMicros(start).Time})
		}
		return nil
	})
	return counts, now.Time, err
}

// Attempt says what a successful sign-in does to the throttles its attempt
// was counted against: the counts of Clear start again, and the attempt is
// taken back from TakeBack.
type Attempt struct {
	Clear    []string
	TakeBack []string
}

// RecordSignInFailure records a failed sign-in in the audit log: for the
// account of userID, or, when there is none, for the email tried (if it is
// one: a password typed in the wrong field is not kept). method and reason
// name how and why, in the entry's fields.
func (db *DB) RecordSignInFailure(ctx context.Context, userID, email string, fields ...string) error {
	return db.update(ctx, func(tx *Tx) error {
		if userID != "" {
			return tx.auditAs(ctx, userID, "user.sign_in_failed", "user", userID, fields)
		}
		id := ""
		if _, key, err := quarry.ParseEmail(email); err == nil {
			id = key
		}
		return tx.auditAs(ctx, "", "user.sign_in_failed", "user", id, fields)
	})
}

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
		if _, err := tx.ExecContext(ctx, `DELETE FROM oidc_logins WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO oidc_logins (state_hash, secret, next_path, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
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
		err := tx.QueryRowContext(ctx, `DELETE FROM oidc_logins WHERE state_hash = $1 RETURNING secret, next_path, expires_at`,
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
		if u, err = tx.identityUser(ctx, id); err != nil {
			return err
		}
		token, _, err = tx.openSession(ctx, u.ID, ns, p)
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
	if errors.Is(err, quarry.ErrEmailTaken) || errors.Is(err, errConflict) {
		err = db.update(ctx, fn)
	}
	return err
}

// IdentityCaller returns the caller a bearer access token of the provider
// stands for, making the account (as a first sign-in does) when the token
// carries an email; a token without one names only people who signed in
// before. It writes only when there is something to change (a new
// account, a role, an email the provider now proves).
func (db *DB) IdentityCaller(ctx context.Context, id *quarry.Identity) (*quarry.Caller, error) {
	var (
		userID, key string
		role        quarry.Role
		proven      bool
	)
	err := db.read.QueryRowContext(ctx, `SELECT u.id, u.role, u.email_key, u.email_verified FROM user_identities i JOIN users u ON u.id = i.user_id
		WHERE i.issuer = $1 AND i.subject = $2`, id.Issuer, id.Subject).Scan(&userID, &role, &key, &proven)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, mapError(err)
	}
	known := err == nil
	if !known && id.Email == "" {
		return nil, errNotAuthenticated
	}
	if !known || (id.Email != "" && (id.RoleOutOfDate(role) || (!proven && id.ProvesEmail(key)))) {
		err = db.retryConflict(ctx, func(tx *Tx) error {
			u, err := tx.identityUser(ctx, id)
			if err == nil {
				userID = u.ID
			}
			return err
		})
		if code := quarry.ErrorCode(err); code == quarry.EFORBIDDEN || code == quarry.EINVALID {
			return nil, errNotAuthenticated // deactivated, not linkable, a lookalike email: the token opens nothing
		}
		if err != nil {
			return nil, err
		}
	}
	return db.userCaller(ctx, userID)
}

// identityUser returns the active account of identity id, making or linking
// it, and bringing its role up to date, as SignInOIDC says. An identity is
// linked to the account that has its email (a local account, or another
// provider's identity, or a person the directory provisioned) under
// quarry.Identity.CheckLink; linking a local
// account ends its password and its sessions.
func (tx *Tx) identityUser(ctx context.Context, id *quarry.Identity) (*quarry.User, error) {
	u := &quarry.User{}
	err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM user_identities i JOIN users u ON u.id = i.user_id
		WHERE i.issuer = $1 AND i.subject = $2`, id.Issuer, id.Subject), u)
	if errors.Is(err, sql.ErrNoRows) {
		if id.Email == "" {
			return nil, errNotAuthenticated
		}
		var (
			hasPassword, proven bool
			externalID          *string // The directory's id of the person, if it manages them.
		)
		err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+`, u.password_hash IS NOT NULL, u.email_verified, s.external_id FROM users u
			LEFT JOIN scim_users s ON s.user_id = u.id
			WHERE u.email_key = $1 AND NOT u.service_account`, quarry.EmailKey(id.Email)), u, &hasPassword, &proven, &externalID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if err := quarry.CheckNewEmail(id.Email); err != nil {
				return nil, err
			}
			if err := checkLookalike(ctx, tx, quarry.EmailKey(id.Email)); err != nil {
				return nil, err
			}
			if _, err := tx.markHasPeople(ctx); err != nil {
				return nil, err
			}
			u = &quarry.User{ID: uuid.NewString(), Email: id.Email, Name: id.Name, Role: id.Role, IsActive: true, CreatedAt: tx.now}
			if err := tx.insertUser(ctx, u, nil, id.ProvesEmail(quarry.EmailKey(u.Email))); err != nil {
				return nil, err
			}
			if err := tx.auditAs(ctx, u.ID, "user.create", "user", u.ID, []string{"email", "role"}); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case id.CheckLink(u, externalID) != nil:
			return nil, id.CheckLink(u, externalID)
		case u.HandsOver(proven) && id.ProvesEmail(quarry.EmailKey(u.Email)):
			// Nobody proved the email before: the account is handed over.
			if err := tx.handOver(ctx, u.ID); err != nil {
				return nil, err
			}
			if err := tx.auditAs(ctx, u.ID, "user.link_identity", "user", u.ID, handOverFields("identity")); err != nil {
				return nil, err
			}
		case hasPassword:
			if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = NULL, updated_at = $1 WHERE id = $2`, tx.now.Micros(), u.ID); err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, u.ID); err != nil {
				return nil, err
			}
			if err := tx.auditAs(ctx, u.ID, "user.link_identity", "user", u.ID, []string{"identity", "password"}); err != nil {
				return nil, err
			}
		default:
			if err := tx.auditAs(ctx, u.ID, "user.link_identity", "user", u.ID, []string{"identity"}); err != nil {
				return nil, err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)`,
			id.Issuer, id.Subject, u.ID, tx.now.Micros()); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if err := u.CheckActive(); err != nil {
		return nil, err
	}
	// A provider that says the account's email is verified proves it
	// (linking, or any sign-in after), once.
	if id.ProvesEmail(quarry.EmailKey(u.Email)) {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET email_verified = TRUE WHERE id = $1 AND NOT email_verified`, u.ID); err != nil {
			return nil, err
		}
	}
	if id.RoleOutOfDate(u.Role) {
		if err := tx.changeRole(ctx, nil, u, id.Role); err != nil {
			return nil, err
		}
	}
	return u, nil
}
