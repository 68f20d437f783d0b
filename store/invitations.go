package store

import (
	"context"
	"time"

	"github.com/quarryhq/quarry"
)

// Invitations: the emails an admin lets register when registration is by
// invitation, and their single-use links.

// parseInvitees parses emails for invitations: each must be an address a
// new account may have (quarry.CheckNewEmail).
func parseInvitees(emails []string) (email, key []string, err error) {
	for _, e := range emails {
		email1, key1, err := quarry.ParseEmail(e)
		if err != nil {
			return nil, nil, err
		}
		if err := quarry.CheckNewEmail(email1); err != nil {
			return nil, nil, err
		}
		email, key = append(email, email1), append(key, key1)
	}
	return email, key, nil
}

// Invite lets the people with emails register when registration is by
// invitation, once an admin gives them a link (IssueInvitations); emails
// already invited or with an account are skipped, and one that looks like
// an account's is refused. It returns how many were invited.
func (db *DB) Invite(ctx context.Context, c *quarry.Caller, emails []string) (int, error) {
	email, key, err := parseInvitees(emails)
	if err != nil {
		return 0, err
	}
	n := 0
	err = db.update(ctx, func(tx *Tx) error {
		n = 0
		for i := range email {
			if err := checkLookalike(ctx, tx, key[i]); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO invited_users (email_key, email, invited_by, created_at)
				SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM users WHERE email_key = $1)
				ON CONFLICT (email_key) DO NOTHING`, key[i], email[i], c.ID, tx.now.Micros())
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if k == 1 {
				n++
				if err := tx.audit(ctx, c, "user.invite", "invitation", key[i], nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// IssueInvitations invites the people with emails, as Invite does, and
// gives each invitation a new single-use link that works for ttl (one
// issued before stops working). An email with an account, or one that
// looks like an account's, is refused. It returns the links, whose tokens
// are shown only now.
func (db *DB) IssueInvitations(ctx context.Context, c *quarry.Caller, emails []string, ttl time.Duration) ([]*quarry.InvitationLink, error) {
	email, key, err := parseInvitees(emails)
	if err != nil {
		return nil, err
	}
	var links []*quarry.InvitationLink
	err = db.update(ctx, func(tx *Tx) error {
		links = links[:0]
		expires := quarry.TimeFromMicros(tx.now.Micros() + ttl.Microseconds())
		for i := range email {
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE email_key = $1`, key[i]).Scan(&taken); err != nil {
				return err
			}
			if taken > 0 {
				return quarry.ErrEmailTaken
			}
			if err := checkLookalike(ctx, tx, key[i]); err != nil {
				return err
			}
			token, hash := quarry.NewInvitationToken()
			if _, err := tx.ExecContext(ctx, `INSERT INTO invited_users (email_key, email, invited_by, created_at, token_hash, expires_at)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (email_key) DO UPDATE SET email = $2, invited_by = $3, token_hash = $5, expires_at = $6`,
				key[i], email[i], c.ID, tx.now.Micros(), hash, expires.Micros()); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "user.invite", "invitation", key[i], []string{"link"}); err != nil {
				return err
			}
			links = append(links, &quarry.InvitationLink{Email: email[i], Token: token, ExpiresAt: expires})
		}
		return nil
	})
	return links, err
}

// Invitations returns the invitations not yet taken, ascending by email.
func (db *DB) Invitations(ctx context.Context) ([]*quarry.Invitation, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT i.email, u.email, i.created_at, i.expires_at FROM invited_users i
		LEFT JOIN users u ON u.id = i.invited_by ORDER BY i.email_key`)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.Invitation{}
	for rows.Next() {
		var (
			i       quarry.Invitation
			created int64
			expires *int64
		)
		if err := rows.Scan(&i.Email, &i.InvitedBy, &created, &expires); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		i.CreatedAt = quarry.TimeFromMicros(created)
		if expires != nil {
			t := quarry.TimeFromMicros(*expires)
			i.ExpiresAt = &t
		}
		out = append(out, &i)
	}
	return out, closeRows(rows)
}

// RemoveInvitation withdraws the invitation of email, and its link.
func (db *DB) RemoveInvitation(ctx context.Context, c *quarry.Caller, email string) error {
	return db.update(ctx, func(tx *Tx) error {
		key := quarry.EmailKey(email)
		res, err := tx.ExecContext(ctx, `DELETE FROM invited_users WHERE email_key = $1`, key)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = quarry.Errorf(quarry.ENOTFOUND, "No invitation for %s", email)
			}
			return err
		}
		return tx.audit(ctx, c, "user.uninvite", "invitation", key, nil)
	})
}
