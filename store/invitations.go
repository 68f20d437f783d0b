package store

import (
	"context"

	"github.com/quarryhq/quarry"
)

// Invitations: the emails an admin lets register when registration is by
// invitation.

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
			res, err := tx.ExecContext(ctx, `INSERT INTO invited_users (email_key, email, invited_by, created_at)
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
				if err := tx.audit(ctx, c, "user.invite", "invitation", i.key, nil); err != nil {
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

// takeInvitation removes the invitation of email key key and reports
// whether there was one.
func (tx *Tx) takeInvitation(ctx context.Context, key string) (bool, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM invited_users WHERE email_key = $1`, key)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
