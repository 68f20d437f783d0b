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

// People: the accounts of persons (not service accounts) and what admins
// do to them. Their sessions are in sessions.go, how they sign in in
// signin.go, their invitations in invitations.go; the rules are the root
// package's.

// settingHasPeople is the settings row written when the first person's
// account is made, whichever way: the person who writes it by registering
// becomes an admin (as in Onyx, the first user is), and two people
// registering at once cannot both be first.
const settingHasPeople = "has_people"

// Register makes a local account for email with a password hash, if p
// lets it be made (quarry.RegistrationPolicy.Check), with the role of a new
// account (quarry.NewAccountRole): the first person of a new database is
// the one who writes settingHasPeople.
func (db *DB) Register(ctx context.Context, email string, name *string, passwordHash string, p *quarry.RegistrationPolicy) (*quarry.User, error) {
	email, key, err := quarry.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	var u *quarry.User
	err = db.update(ctx, func(tx *Tx) error {
		// Closed registration and the allowed domains bind even the first.
		if err := p.Check(key, true, false); err != nil {
			return err
		}
		first, err := tx.markHasPeople(ctx)
		if err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE email_key = $1`, key).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return errEmailTaken
		}
		if !first {
			invited, err := tx.takeInvitation(ctx, key)
			if err != nil {
				return err
			}
			if err := p.Check(key, false, invited); err != nil {
				return err
			}
		}
		u = &quarry.User{ID: uuid.NewString(), Email: email, Name: name, Role: quarry.NewAccountRole(first), IsActive: true, CreatedAt: tx.now}
		if err := tx.insertUser(ctx, u, &passwordHash); err != nil {
			return err
		}
		return tx.auditAs(ctx, u.ID, "user.register", "user", u.ID, []string{"email", "role"})
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
	return p.Check(key, people == 0, invited > 0)
}

// markHasPeople notes that the database has people, and reports whether it
// had none before.
func (tx *Tx) markHasPeople(ctx context.Context) (bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		settingHasPeople, tx.now.String())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
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

var errUserNotFound = quarry.Errorf(quarry.ENOTFOUND, "User not found")

// personByEmail returns the user with email key key.
func (tx *Tx) personByEmail(ctx context.Context, email string) (*quarry.User, error) {
	u := &quarry.User{}
	err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.email_key = $1`, quarry.EmailKey(email)), u)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errUserNotFound
	}
	return u, err
}

// checkLastAdmin counts the other active admins who can sign in (people,
// and service accounts that still have a key) when u is an active admin,
// and applies quarry.CheckLastAdmin.
func (tx *Tx) checkLastAdmin(ctx context.Context, u *quarry.User, what string) error {
	if !u.IsActiveAdmin() {
		return nil
	}
	if tx.db.dialect == Postgres {
		// Two admins stepping down at once must not both see the other:
		// one waits for the other's transaction. (SQLite has one writer.)
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lastAdminLock); err != nil {
			return err
		}
	}
	var others int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users u WHERE u.role = 'admin' AND u.is_active AND u.id <> $1
		AND (NOT u.service_account OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id))`, u.ID).Scan(&others)
	if err != nil {
		return err
	}
	return quarry.CheckLastAdmin(u, others, what)
}

// lastAdminLock is the PostgreSQL advisory lock of checkLastAdmin.
const lastAdminLock = 7243870391

// SetRole gives the person with email the role r (contract: PATCH
// /manage/set-user-role), under quarry.CheckRoleChange and
// quarry.CheckLastAdmin.
func (db *DB) SetRole(ctx context.Context, c *quarry.Caller, email string, r quarry.Role) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(ctx, email)
		if err != nil {
			return err
		}
		if change, err := quarry.CheckRoleChange(u, r); !change {
			return err
		}
		if err := tx.checkLastAdmin(ctx, u, "demoted"); err != nil {
			return err
		}
		return tx.changeRole(ctx, c, u, r)
	})
}

// SetActive activates or deactivates the user with email. A deactivated
// user's sessions end, and its sessions, API keys and access tokens open
// nothing until it is activated again; what it owns keeps its owner.
func (db *DB) SetActive(ctx context.Context, c *quarry.Caller, email string, active bool) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(ctx, email)
		if err != nil {
			return err
		}
		if u.IsActive == active {
			return nil
		}
		if err := c.CheckSetActive(u, active); err != nil {
			return err
		}
		action := "user.activate"
		if !active {
			if err := tx.checkLastAdmin(ctx, u, "deactivated"); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, u.ID); err != nil {
				return err
			}
			action = "user.deactivate"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET is_active = $1, updated_at = $2 WHERE id = $3`, active, tx.now.Micros(), u.ID); err != nil {
			return err
		}
		return tx.audit(ctx, c, action, "user", u.ID, []string{"is_active"})
	})
}

// changeRole gives u the role r, as c (nil: the sign-in policy) does, and
// clears its curator flags unless r keeps them (quarry.Role.KeepsCuratorFlags).
func (tx *Tx) changeRole(ctx context.Context, c *quarry.Caller, u *quarry.User, r quarry.Role) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET role = $1, updated_at = $2 WHERE id = $3`, r, tx.now.Micros(), u.ID); err != nil {
		return err
	}
	if !r.KeepsCuratorFlags() {
		if _, err := tx.ExecContext(ctx, `UPDATE user_group_members SET is_curator = FALSE WHERE user_id = $1 AND is_curator`, u.ID); err != nil {
			return err
		}
	}
	u.Role = r
	if c == nil {
		return tx.auditAs(ctx, u.ID, "user.role_change", "user", u.ID, []string{"role"})
	}
	return tx.audit(ctx, c, "user.role_change", "user", u.ID, []string{"role"})
}

// People returns the page of people f selects, ascending by email, and how
// many it selects in all, read from one snapshot.
func (db *DB) People(ctx context.Context, f quarry.UserFilter) ([]*quarry.Person, int, error) {
	var (
		people []*quarry.Person
		total  int
	)
	err := db.snapshot(ctx, func(q querier) error {
		var err error
		people, total, err = readPeople(ctx, q, f)
		return err
	})
	return people, total, err
}

// readPeople reads the page of people f selects and their count.
func readPeople(ctx context.Context, q querier, f quarry.UserFilter) ([]*quarry.Person, int, error) {
	where, args := peopleFilter(f)
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM users u WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, mapError(err)
	}
	n := len(args)
	rows, err := q.QueryContext(ctx, `SELECT `+userColumns+`, u.password_hash IS NOT NULL, u.updated_at FROM users u
		WHERE `+where+fmt.Sprintf(` ORDER BY u.email_key LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, mapError(err)
	}
	people := []*quarry.Person{}
	byID := map[string]*quarry.Person{}
	var ids []string
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
	var inArgs []any
	in := sqlIn("m.user_id", anys(ids), &inArgs)
	rows, err = q.QueryContext(ctx, `SELECT m.user_id, g.id, g.name FROM user_group_members m
		JOIN user_groups g ON g.id = m.group_id WHERE `+in+` ORDER BY g.id`, inArgs...)
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
	inArgs = nil
	in = sqlIn("user_id", anys(ids), &inArgs)
	rows, err = q.QueryContext(ctx, `SELECT user_id, issuer FROM user_identities WHERE `+in+` ORDER BY issuer`, inArgs...)
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
		conds = append(conds, sqlIn("u.role", anys(f.Roles), &args))
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
