package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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
// lets it be made (quarry.RegistrationPolicy.Check): by invitation, token
// must be the invitation's, which is used up. The account has the role of
// a new account (quarry.NewAccountRole): the first person of a new
// database is the one who writes settingHasPeople.
func (db *DB) Register(ctx context.Context, email string, name *string, passwordHash, token string, p *quarry.RegistrationPolicy) (*quarry.User, error) {
	email, key, err := quarry.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	if err := quarry.CheckNewEmail(email); err != nil {
		return nil, err
	}
	var u *quarry.User
	err = db.update(ctx, func(tx *Tx) error {
		f, err := registrationFacts(ctx, tx, key, token, tx.now)
		if err != nil {
			return err
		}
		if f.First, err = tx.markHasPeople(ctx); err != nil {
			return err
		}
		if err := p.Check(key, f); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM invited_users WHERE email_key = $1`, key); err != nil {
			return err
		}
		u = &quarry.User{ID: uuid.NewString(), Email: email, Name: name, Role: quarry.NewAccountRole(f.First), IsActive: true, CreatedAt: tx.now}
		if err := tx.insertUser(ctx, u, &passwordHash, f.EmailProven()); err != nil {
			return err
		}
		return tx.auditAs(ctx, u.ID, "user.register", "user", u.ID, []string{"email", "role"})
	})
	return u, err
}

// CheckRegistration says, without writing, whether email could register
// with token under p now (so that no password is hashed in vain); Register
// decides.
func (db *DB) CheckRegistration(ctx context.Context, email, token string, p *quarry.RegistrationPolicy) error {
	email, key, err := quarry.ParseEmail(email)
	if err != nil {
		return err
	}
	if err := quarry.CheckNewEmail(email); err != nil {
		return err
	}
	f, err := registrationFacts(ctx, db.read, key, token, db.now())
	if err != nil {
		return err
	}
	var people int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM settings WHERE name = $1`, settingHasPeople).Scan(&people); err != nil {
		return mapError(err)
	}
	f.First = people == 0
	return p.Check(key, f)
}

// registrationFacts reads what decides whether the person with email key
// key may register with token at now, but whether they are the first.
func registrationFacts(ctx context.Context, q querier, key, token string, now quarry.Time) (quarry.RegistrationFacts, error) {
	var (
		f       quarry.RegistrationFacts
		taken   int
		like    int
		invited int
		hash    *string
		expires *int64
	)
	err := q.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM users WHERE email_key = $1),
		(SELECT COUNT(*) FROM users WHERE email_skeleton = $2 AND email_key <> $1),
		(SELECT COUNT(*) FROM invited_users WHERE email_key = $1),
		(SELECT token_hash FROM invited_users WHERE email_key = $1),
		(SELECT expires_at FROM invited_users WHERE email_key = $1)`, key, quarry.EmailSkeleton(key)).Scan(&taken, &like, &invited, &hash, &expires)
	if err != nil {
		return f, mapError(err)
	}
	var until *quarry.Time
	if expires != nil {
		t := quarry.TimeFromMicros(*expires)
		until = &t
	}
	f.Taken, f.Lookalike = taken > 0, like > 0
	f.Invited = quarry.MatchInvitation(invited > 0, hash, until, token, now)
	return f, nil
}

// checkLookalike refuses a new account (or invitation) for email key key
// when an account has an email that looks like it.
func checkLookalike(ctx context.Context, q querier, key string) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE email_skeleton = $1 AND email_key <> $2`,
		quarry.EmailSkeleton(key), key).Scan(&n); err != nil {
		return mapError(err)
	}
	if n > 0 {
		return quarry.ErrLookalikeEmail
	}
	return nil
}

// fillEmailKeys gives the accounts made before the migration that adds
// email_skeleton their skeletons, and brings their email keys (and those of
// invitations) to quarry.EmailKey's form, which SQL cannot compute. A key
// that another account (or invitation) has already stays as it was: the
// two accounts keep signing in as before. It writes nothing once every
// account has its skeleton.
func (db *DB) fillEmailKeys(ctx context.Context) error {
	type row struct{ id, email, key string }
	var users []row
	rows, err := db.read.QueryContext(ctx, `SELECT id, email, email_key FROM users WHERE email_skeleton IS NULL`)
	if err != nil {
		return mapError(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.email, &r.key); err != nil {
			rows.Close()
			return mapError(err)
		}
		users = append(users, r)
	}
	if err := closeRows(rows); err != nil || len(users) == 0 {
		return err
	}
	return db.update(ctx, func(tx *Tx) error {
		for _, u := range users {
			key := quarry.EmailKey(u.email)
			var others int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE email_key = $1 AND id <> $2`, key, u.id).Scan(&others); err != nil {
				return err
			}
			if others > 0 {
				key = u.key
			}
			if _, err := tx.ExecContext(ctx, `UPDATE users SET email_key = $1, email_skeleton = $2 WHERE id = $3`,
				key, quarry.EmailSkeleton(key), u.id); err != nil {
				return err
			}
		}
		// Invitations are few: each is brought to the new form unless
		// another has it.
		rows, err := tx.QueryContext(ctx, `SELECT email_key, email FROM invited_users`)
		if err != nil {
			return err
		}
		var invites [][2]string
		for rows.Next() {
			var k, e string
			if err := rows.Scan(&k, &e); err != nil {
				rows.Close()
				return err
			}
			invites = append(invites, [2]string{k, e})
		}
		if err := closeRows(rows); err != nil {
			return err
		}
		for _, i := range invites {
			if key := quarry.EmailKey(i[1]); key != i[0] {
				if _, err := tx.ExecContext(ctx, `UPDATE invited_users SET email_key = $1 WHERE email_key = $2
					AND NOT EXISTS (SELECT 1 FROM invited_users WHERE email_key = $1)`, key, i[0]); err != nil {
					return err
				}
			}
		}
		return nil
	})
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

// checkLastAdmin applies quarry.CheckLastAdmin to u, counting the other
// admins when u is an active admin.
func (tx *Tx) checkLastAdmin(ctx context.Context, u *quarry.User, what string) error {
	if !u.IsActiveAdmin() {
		return nil
	}
	others, err := tx.otherAdmins(ctx, u)
	if err != nil {
		return err
	}
	return quarry.CheckLastAdmin(u, others, what)
}

// otherAdmins counts the active admins other than u who can sign in:
// people, and service accounts that still have a key (the rules decide
// which count: quarry.OtherAdmins.Keep). On PostgreSQL it
// first takes a lock for the rest of the transaction: two admins stepping
// down at once must not both see the other; one waits for the other's
// transaction. (SQLite has one writer.)
func (tx *Tx) otherAdmins(ctx context.Context, u *quarry.User) (quarry.OtherAdmins, error) {
	var others quarry.OtherAdmins
	if tx.db.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lastAdminLock); err != nil {
			return others, err
		}
	}
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN u.service_account THEN 0 ELSE 1 END), 0),
		COALESCE(SUM(CASE WHEN u.service_account THEN 1 ELSE 0 END), 0)
		FROM users u WHERE u.role = 'admin' AND u.is_active AND u.id <> $1
		AND (NOT u.service_account OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id))`, u.ID).Scan(&others.People, &others.Keys)
	return others, err
}

// lastAdminLock is the PostgreSQL advisory lock of checkLastAdmin.
const lastAdminLock = 7243870391

// SetRole gives the person with email the role r (contract: PATCH
// /manage/set-user-role; override is its explicit_override), under
// quarry.CheckRoleChange and quarry.CheckLastAdmin.
func (db *DB) SetRole(ctx context.Context, c *quarry.Caller, email string, r quarry.Role, override bool) error {
	return db.update(ctx, func(tx *Tx) error {
		u, err := tx.personByEmail(ctx, email)
		if err != nil {
			return err
		}
		if change, err := quarry.CheckRoleChange(u, r, override); !change {
			return err
		}
		if err := tx.checkLastAdmin(ctx, u, "demoted"); err != nil {
			return err
		}
		return tx.changeRole(ctx, c, u, r)
	})
}

// SetActive activates or deactivates the user with email, as an admin: a
// person the directory deactivated is activated there
// (quarry.Caller.CheckDirectoryActivation). See setActive.
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
		var directoryActive bool
		err = tx.QueryRowContext(ctx, `SELECT active FROM scim_users WHERE user_id = $1`, u.ID).Scan(&directoryActive)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := c.CheckDirectoryActivation(u, err == nil, directoryActive, active); err != nil {
			return err
		}
		return tx.setActive(ctx, c, u, active)
	})
}

// setActive activates or deactivates user u, as c does (an admin, or the
// directory), and records it. It is the one way a user is deactivated, so
// that every way in closes at once: the user's sessions and the OAuth
// tokens of its tools are deleted here, and its API keys and the OpenID
// provider's access tokens open nothing for an inactive user wherever they
// are presented (Authenticate, userCaller).
// A kind of token that is not checked against its user's activation when
// presented (such as personal access tokens, to come) must be revoked here
// too. Activating again brings nothing back but the user's default group
// (a deactivated user keeps its groups; activation checks that it is in
// its role's, as Onyx does). The last active admin stays
// (quarry.CheckLastAdmin).
func (tx *Tx) setActive(ctx context.Context, c *quarry.Caller, u *quarry.User, active bool) error {
	if u.IsActive == active {
		return nil
	}
	action := "user.activate"
	if !active {
		if err := c.CheckDirectoryDeactivation(u, active); err != nil {
			return err
		}
		if err := tx.checkLastAdmin(ctx, u, "deactivated"); err != nil {
			return err
		}
		if err := tx.endWaysIn(ctx, u.ID); err != nil {
			return err
		}
		action = "user.deactivate"
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET is_active = $1, updated_at = $2 WHERE id = $3`, active, tx.now.Micros(), u.ID); err != nil {
		return err
	}
	u.IsActive = active
	if active {
		if err := tx.syncDefaultGroups(ctx, u.ID); err != nil {
			return err
		}
	}
	return tx.audit(ctx, c, action, "user", u.ID, []string{"is_active"})
}

// endWaysIn ends what the holder of account userID made to get in and to
// act: its sessions, its personal access tokens (store/pat.go), and its
// tools' OAuth tokens and MCP connections (store/tooltoken.go,
// store/mcp.go). Deactivation (setActive) and a hand-over (handOver) call
// it.
func (tx *Tx) endWaysIn(ctx context.Context, userID string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID); err != nil {
		return err
	}
	if err := tx.dropToolTokens(ctx, userID); err != nil {
		return err
	}
	if err := tx.dropMCPConnections(ctx, userID); err != nil {
		return err
	}
	_, err := tx.dropPATs(ctx, userID)
	return err
}

// handOver gives account userID to whoever proves its email now
// (quarry.User.HandsOver says when): its password and its providers'
// identities end, with everything endWaysIn ends, and its email is proven.
func (tx *Tx) handOver(ctx context.Context, userID string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = NULL, email_verified = TRUE, updated_at = $1 WHERE id = $2`,
		tx.now.Micros(), userID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_identities WHERE user_id = $1`, userID); err != nil {
		return err
	}
	return tx.endWaysIn(ctx, userID)
}

// handOverFields are the fields an audit entry of a hand-over names, after
// those of the change that caused it.
func handOverFields(fields ...string) []string {
	return append(fields, "password", "identities", "sessions", "personal_access_tokens", "tool_tokens", "mcp_connections", "email_verified")
}

// changeRole gives u the role r, as c (nil: the sign-in policy) does, moves
// it to r's default group, and clears its curator flags unless r keeps
// them (quarry.Role.KeepsCuratorFlags).
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
	if err := tx.syncDefaultGroups(ctx, u.ID); err != nil {
		return err
	}
	if c == nil {
		return tx.auditAs(ctx, u.ID, "user.role_change", "user", u.ID, []string{"role"})
	}
	return tx.audit(ctx, c, "user.role_change", "user", u.ID, []string{"role"})
}

// People returns the page of people (and, if f says so, service accounts)
// f selects, ascending by email, and how many it selects in all, read from
// one snapshot.
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
	rows, err := q.QueryContext(ctx, `SELECT `+userColumns+`, u.password_hash IS NOT NULL, u.updated_at, s.active FROM users u
		LEFT JOIN scim_users s ON s.user_id = u.id
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
		if err := scanUser(rows, &p.User, &p.PasswordConfigured, &updated, &p.SCIMActive); err != nil {
			rows.Close()
			return nil, 0, mapError(err)
		}
		p.SCIMSynced = p.SCIMActive != nil
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
	if f.ServiceAccounts {
		conds[0] = "(NOT u.service_account OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id))"
	}
	var args []any
	if q := strings.ToLower(strings.TrimSpace(f.Query)); q != "" {
		args = append(args, "%"+escapeLike(q)+"%")
		if f.EmailOnly {
			conds = append(conds, fmt.Sprintf(`u.email_key LIKE $%d ESCAPE '\'`, len(args)))
		} else {
			conds = append(conds, fmt.Sprintf(`(u.email_key LIKE $%d ESCAPE '\' OR u.name_key LIKE $%d ESCAPE '\')`, len(args), len(args)))
		}
	}
	if len(f.Roles) > 0 {
		// Each role once: the IN list has at most as many values as there
		// are roles, whatever the query repeats.
		conds = append(conds, sqlIn("u.role", anys(slices.Compact(slices.Sorted(slices.Values(f.Roles)))), &args))
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
