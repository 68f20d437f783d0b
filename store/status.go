package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/quarryhq/quarry"
)

// StatusRow is one entry of the connector status listing, as
// EachConnectorStatus passes it to its callback. Connector and Credential
// are set on the first row of their connector and credential only, so that
// a caller encodes each once; the slices and objects of a row are valid
// until the callback returns.
type StatusRow struct {
	ID           int64
	Name         string
	AccessType   quarry.AccessType
	Groups       []int64 // Ascending.
	ConnectorID  int64
	Connector    *quarry.Connector // With CredentialIDs; nil after the connector's first row.
	CredentialID int64
	Credential   *quarry.Credential // Unmasked; nil after the credential's first row.
}

// EachConnectorStatus calls fn for every cc-pair c may see through filter f
// (contract section 4.1), ascending by id. It runs four statements whatever
// the number of pairs: the pairs' connectors and credentials (for
// credential_ids), the pairs' groups, the credentials' groups, and the
// pairs with their connectors and credentials, streamed. The first three
// run concurrently.
func (db *DB) EachConnectorStatus(ctx context.Context, c *quarry.Caller, f quarry.StatusFilter, fn func(*StatusRow) error) error {
	where, args := statusWhere(c, f)
	const from = ` FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id WHERE `

	// The three small queries run side by side, each on a connection of
	// its own: credential_ids of each connector (its visible pairs'
	// credentials), the pairs' groups and the credentials' groups.
	var (
		credIDs    = map[int64][]int64{}
		pairGroups = map[int64][]int64{}
		credGroups = map[int64][]int64{}
		wg         sync.WaitGroup
		errs       [3]error
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		errs[0] = db.eachInts(ctx, `SELECT p.connector_id, p.credential_id`+from+where+` ORDER BY p.connector_id, p.credential_id`, args,
			func(conn, cred int64) {
				if ids := credIDs[conn]; len(ids) == 0 || ids[len(ids)-1] != cred {
					credIDs[conn] = append(ids, cred)
				}
			})
	}()
	go func() {
		defer wg.Done()
		errs[1] = db.eachInts(ctx, `SELECT pg.cc_pair_id, pg.group_id FROM cc_pair_groups pg WHERE pg.cc_pair_id IN (SELECT p.id`+from+where+`)
			ORDER BY pg.cc_pair_id, pg.group_id`, args,
			func(pair, group int64) { pairGroups[pair] = append(pairGroups[pair], group) })
	}()
	go func() {
		defer wg.Done()
		errs[2] = db.eachInts(ctx, `SELECT cg.credential_id, cg.group_id FROM credential_groups cg WHERE cg.credential_id IN (SELECT p.credential_id`+from+where+`)
			ORDER BY cg.credential_id, cg.group_id`, args,
			func(cred, group int64) { credGroups[cred] = append(credGroups[cred], group) })
	}()
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}

	rows, err := db.read.QueryContext(ctx, `SELECT p.id, p.name, p.access_type, `+connectorColumns+`, `+credentialColumns+`
		FROM cc_pairs p
		JOIN connectors c ON c.id = p.connector_id
		JOIN credentials k ON k.id = p.credential_id
		LEFT JOIN users u ON u.id = k.user_id
		WHERE `+where+` ORDER BY p.id`, args...)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	var (
		row                  StatusRow
		conn                 connectorRow
		cred                 credentialRow
		seenConns, seenCreds = map[int64]bool{}, map[int64]bool{}
		plaintext            []byte
		accessType, pairName sql.RawBytes
		dest                 = append(append([]any{&row.ID, &pairName, &accessType}, conn.dest()...), cred.dest()...)
		empty                = []int64{}
	)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return mapError(err)
		}
		row.Name, row.AccessType = string(pairName), quarry.AccessType(accessType)
		row.Groups = pairGroups[row.ID]
		if row.Groups == nil {
			row.Groups = empty
		}
		row.ConnectorID, row.Connector = conn.c.ID, nil
		if !seenConns[conn.c.ID] {
			seenConns[conn.c.ID] = true
			row.Connector = conn.connector()
			row.Connector.CredentialIDs = credIDs[conn.c.ID]
		}
		row.CredentialID, row.Credential = cred.k.ID, nil
		if !seenCreds[cred.k.ID] {
			seenCreds[cred.k.ID] = true
			k := cred.meta()
			if g := credGroups[k.ID]; g != nil {
				k.Groups = g
			}
			if plaintext, err = db.keys.openTo(plaintext[:0], purposeCredential, cred.secret); err != nil {
				return fmt.Errorf("credential %d: %w", k.ID, err)
			}
			k.CredentialJSON = plaintext
			row.Credential = &k.Credential
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
	return closeRows(rows)
}

// eachInts runs a query of two integer columns and calls fn for each row.
func (db *DB) eachInts(ctx context.Context, query string, args []any, fn func(a, b int64)) error {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return mapError(err)
	}
	for rows.Next() {
		var a, b int64
		if err := rows.Scan(&a, &b); err != nil {
			rows.Close()
			return mapError(err)
		}
		fn(a, b)
	}
	return closeRows(rows)
}

// ConnectorStatuses returns the listing of EachConnectorStatus as values,
// for callers that want it whole. Entries share one *Connector per
// connector and one *Credential per credential.
func (db *DB) ConnectorStatuses(ctx context.Context, c *quarry.Caller, f quarry.StatusFilter) ([]quarry.ConnectorStatus, error) {
	out := []quarry.ConnectorStatus{}
	conns := map[int64]*quarry.Connector{}
	creds := map[int64]*quarry.Credential{}
	err := db.EachConnectorStatus(ctx, c, f, func(r *StatusRow) error {
		if r.Connector != nil {
			conns[r.ConnectorID] = r.Connector
		}
		if r.Credential != nil {
			k := *r.Credential
			k.CredentialJSON = append([]byte(nil), k.CredentialJSON...)
			creds[r.CredentialID] = &k
		}
		out = append(out, quarry.ConnectorStatus{CCPairID: r.ID, Name: r.Name, Connector: conns[r.ConnectorID],
			Credential: creds[r.CredentialID], AccessType: r.AccessType, Groups: append([]int64{}, r.Groups...)})
		return nil
	})
	return out, err
}

// statusWhere returns the condition and arguments that select the pairs c
// may see through filter f, over aliases p (cc_pairs) and c (connectors).
func statusWhere(c *quarry.Caller, f quarry.StatusFilter) (string, []any) {
	var b strings.Builder
	b.WriteString(pairVisible)
	args := []any{c.ID, c.IsAdmin()}
	in := func(column string, values []string) {
		if len(values) == 0 {
			return
		}
		fmt.Fprintf(&b, " AND %s IN (", column)
		for i, v := range values {
			if i > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			fmt.Fprintf(&b, "$%d", len(args))
		}
		b.WriteString(")")
	}
	in("c.source", stringsOf(f.Sources))
	in("p.access_type", stringsOf(f.AccessTypes))
	return b.String(), args
}

func stringsOf[T ~string](s []T) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}
