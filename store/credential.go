package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/quarryhq/quarry"
)

const credentialColumns = `k.id, k.name, k.source, k.secret, k.admin_public, k.curator_public, k.user_id, u.email,
	k.version, k.created_at, k.updated_at`

func credentialNotFound(id int64) error {
	return quarry.Errorf(quarry.ENOTFOUND, "Credential %d does not exist or does not belong to user", id)
}

// sealedCredential is a credential row whose secret is still sealed, so that
// rows can be filtered before paying for decryption.
type sealedCredential struct {
	quarry.Credential
	secret []byte
}

// credentialRow receives the credentialColumns of one row.
type credentialRow struct {
	k                sealedCredential
	secret           sql.RawBytes // Only valid until the next Scan: credential copies it.
	created, updated int64
}

func (r *credentialRow) dest() []any {
	k := &r.k
	return []any{&k.ID, &k.Name, &k.Source, &r.secret, &k.AdminPublic, &k.CuratorPublic, &k.UserID, &k.UserEmail,
		&k.Version, &r.created, &r.updated}
}

// credential returns the credential of the row, with its sealed secret.
func (r *credentialRow) credential() *sealedCredential {
	k := r.meta()
	k.secret = append([]byte(nil), r.secret...)
	return k
}

// meta returns the credential of the row without its secret.
func (r *credentialRow) meta() *sealedCredential {
	var k sealedCredential
	r.fill(&k)
	return &k
}

// fill sets k to the credential of the row without its secret.
func (r *credentialRow) fill(k *sealedCredential) {
	*k = r.k
	k.CreatedAt, k.UpdatedAt = quarry.TimeFromMicros(r.created), quarry.TimeFromMicros(r.updated)
	k.Groups = []int64{}
}

func scanCredential(s interface{ Scan(...any) error }) (*sealedCredential, error) {
	var r credentialRow
	if err := s.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.credential(), nil
}

// unseal decrypts the credential's secret into CredentialJSON.
func (db *DB) unseal(k *sealedCredential) (*quarry.Credential, error) {
	pt, err := db.keys.open(purposeCredential, k.secret)
	if err != nil {
		return nil, fmt.Errorf("credential %d: %w", k.ID, err)
	}
	k.CredentialJSON = pt
	return &k.Credential, nil
}

// sealCredentialJSON encrypts a credential object.
func (db *DB) sealCredentialJSON(m map[string]any) []byte {
	return db.keys.seal(purposeCredential, quarry.EncodeObject(m))
}

// credentials loads credentials, all (id 0) or one, with their groups, still
// sealed.
func (db *DB) credentials(ctx context.Context, q querier, id int64) ([]*sealedCredential, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+credentialColumns+` FROM credentials k LEFT JOIN users u ON u.id = k.user_id
		WHERE k.id BETWEEN $1 AND $2 ORDER BY k.id`, idRange(id)...)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*sealedCredential{}
	byID := map[int64]*sealedCredential{}
	for rows.Next() {
		k, err := scanCredential(rows)
		if err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		out = append(out, k)
		byID[k.ID] = k
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT credential_id, group_id FROM credential_groups WHERE credential_id BETWEEN $1 AND $2
		ORDER BY credential_id, group_id`, idRange(id)...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var kid, gid int64
		if err := rows.Scan(&kid, &gid); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if k := byID[kid]; k != nil {
			k.Groups = append(k.Groups, gid)
		}
	}
	return out, closeRows(rows)
}

// credential loads credential id with its groups, still sealed.
func (db *DB) credential(ctx context.Context, q querier, id int64) (*sealedCredential, error) {
	ks, err := db.credentials(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if len(ks) == 0 {
		return nil, credentialNotFound(id)
	}
	return ks[0], nil
}

// Credential returns credential id, unmasked, if c may see it.
func (db *DB) Credential(ctx context.Context, c *quarry.Caller, id int64) (*quarry.Credential, error) {
	k, err := db.credential(ctx, db.read, id)
	if err != nil {
		return nil, err
	}
	if !c.CanSeeCredential(&k.Credential) {
		return nil, credentialNotFound(id)
	}
	return db.unseal(k)
}

// Credentials returns the credentials c may see, unmasked, ascending by id.
func (db *DB) Credentials(ctx context.Context, c *quarry.Caller) ([]*quarry.Credential, error) {
	ks, err := db.credentials(ctx, db.read, 0)
	if err != nil {
		return nil, err
	}
	out := []*quarry.Credential{}
	for _, k := range ks {
		if !c.CanSeeCredential(&k.Credential) {
			continue
		}
		cred, err := db.unseal(k)
		if err != nil {
			return nil, err
		}
		out = append(out, cred)
	}
	return out, nil
}

// CreateCredential creates a credential owned by c.
func (db *DB) CreateCredential(ctx context.Context, c *quarry.Caller, in quarry.CredentialInput) (*quarry.Credential, error) {
	var cred *quarry.Credential
	err := db.update(ctx, func(tx *Tx) error {
		groups := dedupe(in.Groups)
		if err := tx.checkGroupsExist(ctx, groups); err != nil {
			return err
		}
		if err := c.CheckSharing(groups, in.CuratorPublic); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO credentials (name, source, secret, admin_public, curator_public, user_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`,
			in.Name, in.Source, db.sealCredentialJSON(in.CredentialJSON), in.AdminPublic, in.CuratorPublic, c.ID, tx.now.Micros()).Scan(&id)
		if err != nil {
			return err
		}
		if err := tx.setCredentialGroups(ctx, id, groups); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "credential.create", "credential", id, []string{"credential_json", "admin_public", "source", "name", "curator_public", "groups"}); err != nil {
			return err
		}
		k, err := db.credential(ctx, tx, id)
		if err != nil {
			return err
		}
		cred, err = db.unseal(k)
		return err
	})
	return cred, err
}

func (tx *Tx) setCredentialGroups(ctx context.Context, id int64, groups []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM credential_groups WHERE credential_id = $1`, id); err != nil {
		return err
	}
	for _, g := range groups {
		if _, err := tx.ExecContext(ctx, `INSERT INTO credential_groups (credential_id, group_id) VALUES ($1, $2)`, id, g); err != nil {
			return err
		}
	}
	return nil
}

// maxUpdateAttempts bounds the retries of an unconditional update that
// loses a race with another writer.
const maxUpdateAttempts = 8

// UpdateCredential applies a partial update to credential id for c
// (contract section 4.3) under the rules of quarry.CredentialUpdate. The
// check of u.IfMatch and the write are one conditional statement, so
// concurrent writers, on any replica, cannot lose an update.
func (db *DB) UpdateCredential(ctx context.Context, c *quarry.Caller, id int64, u quarry.CredentialUpdate) (*quarry.Credential, error) {
	return retryRaced(fmt.Sprintf("Credential %d", id), func() (*quarry.Credential, error) { return db.updateCredential(ctx, c, id, u) })
}

// retryRaced runs an unconditional update, what, again while it loses a
// race with another writer (errRaced), at most maxUpdateAttempts times.
func retryRaced[T any](what string, update func() (T, error)) (T, error) {
	for range maxUpdateAttempts {
		v, err := update()
		if !errors.Is(err, errRaced) {
			return v, err
		}
	}
	var zero T
	return zero, quarry.Errorf(quarry.ECONFLICT, "%s is being changed by others; try again", what)
}

// errRaced reports that the row changed between read and conditional write.
var errRaced = errors.New("store: concurrent update")

// swapped checks the outcome of a conditional update (a version
// compare-and-swap): a row left alone means that another writer got there
// first, which fails the precondition of a conditional request and is a
// race to retry otherwise.
func swapped(res sql.Result, err error, conditional bool) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return err
	case n == 1:
		return nil
	case conditional:
		return quarry.ErrPrecondition
	default:
		return errRaced
	}
}

func (db *DB) updateCredential(ctx context.Context, c *quarry.Caller, id int64, u quarry.CredentialUpdate) (*quarry.Credential, error) {
	var cred *quarry.Credential
	err := db.update(ctx, func(tx *Tx) error {
		k, err := db.credential(ctx, tx, id)
		if err != nil {
			return err
		}
		if !c.CanEditCredential(&k.Credential) {
			return credentialNotFound(id)
		}
		if err := u.CheckSource(&k.Credential); err != nil {
			return err
		}
		if u.Groups != nil {
			groups := dedupe(*u.Groups)
			u.Groups = &groups // So that reordering them is no change.
			if err := tx.checkGroupsExist(ctx, groups); err != nil {
				return err
			}
		}
		if err := u.CheckSharing(c, &k.Credential); err != nil {
			return err
		}
		if err := quarry.CheckVersion(u.IfMatch, k.Version); err != nil {
			return err
		}
		old, err := db.unseal(k)
		if err != nil {
			return err
		}
		oldJSON, err := quarry.DecodeObject(old.CredentialJSON)
		if err != nil {
			return fmt.Errorf("credential %d: %w", id, err)
		}
		next, newJSON, fields := u.Apply(old, oldJSON)
		// The secret is written only when it changes: writing back the
		// ciphertext that was read could undo a concurrent key rotation.
		var secret any // NULL: unchanged
		var pairs []int64
		if slices.Contains(fields, "credential_json") {
			secret = db.sealCredentialJSON(newJSON)
			// Its pairs, locked before the credential, are moved on
			// below: a new secret may let them run.
			if pairs, err = tx.credentialPairs(ctx, id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE credentials SET name = $1, admin_public = $2, curator_public = $3,
				secret = COALESCE($4, secret), version = version + 1, updated_at = $5
			WHERE id = $6 AND version = $7`,
			next.Name, next.AdminPublic, next.CuratorPublic, secret, later(tx.now, old.UpdatedAt).Micros(), id, k.Version)
		if err := swapped(res, err, u.IfMatch != nil); err != nil {
			return err
		}
		if u.Groups != nil {
			if err := tx.setCredentialGroups(ctx, id, next.Groups); err != nil {
				return err
			}
		}
		tx.changed(ChangeCredential, id)
		if err := tx.credentialEdited(ctx, pairs); err != nil {
			return err
		}
		if quarry.SourceChangedFields(fields) {
			if err := tx.forgetSyncs(ctx, pairs); err != nil {
				return err
			}
		}
		if err := tx.audit(ctx, c, "credential.update", "credential", id, fields); err != nil {
			return err
		}
		k, err = db.credential(ctx, tx, id)
		if err != nil {
			return err
		}
		cred, err = db.unseal(k)
		return err
	})
	return cred, err
}

// DeleteCredential deletes credential id, which no cc-pair may use
// (quarry.CheckCredentialUnused), if c may (quarry.Caller.CanDeleteCredential);
// to anyone else who cannot it does not exist.
func (db *DB) DeleteCredential(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		k, err := db.credential(ctx, tx, id)
		if err != nil {
			return err
		}
		if !c.CanDeleteCredential(&k.Credential) {
			return credentialNotFound(id)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cc_pairs WHERE credential_id = $1`, id).Scan(&n); err != nil {
			return err
		}
		if err := quarry.CheckCredentialUnused(n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM credentials WHERE id = $1`, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "credential.delete", "credential", id, nil)
	})
}
