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
// are set on the first row of their connector and credential in each part
// only, so that a caller encodes each once per part; the slices and objects
// of a row are valid until the callback returns.
type StatusRow struct {
	ID           int64
	Name         string
	AccessType   quarry.AccessType
	Groups       []int64 // Ascending.
	ConnectorID  int64
	Connector    *quarry.Connector // With CredentialIDs; nil after the connector's first row in the part.
	CredentialID int64
	Credential   *quarry.Credential // Unmasked; nil after the credential's first row in the part.
}

// minPartPairs is the smallest id range worth a part of its own.
const minPartPairs = 2000

// EachConnectorStatus calls fn for every cc-pair c may see through filter f
// (contract section 4.1), in up to parts consecutive ranges of ids that it
// reads concurrently, and returns the number of parts it used. Within a
// part, fn sees rows in ascending id order; calls for different parts may
// run at the same time, and part i holds lower ids than part i+1.
//
// It runs a fixed number of statements whatever the number of pairs: the
// range of ids; then, side by side, the connectors of the pairs, their
// credential ids, the pairs' groups and the credentials' groups; then one
// streamed query of pairs with their credentials per part.
func (db *DB) EachConnectorStatus(ctx context.Context, c *quarry.Caller, f quarry.StatusFilter, parts int, fn func(part int, r *StatusRow) error) (int, error) {
	from, args := statusFrom(c, f, "")
	withCredentials, _ := statusFrom(c, f, ` JOIN credentials k ON k.id = p.credential_id LEFT JOIN users u ON u.id = k.user_id`)

	var lo, hi sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT MIN(p.id), MAX(p.id)`+from, args...).Scan(&lo, &hi); err != nil {
		return 0, mapError(err)
	}
	if !lo.Valid {
		return 0, nil
	}
	parts = max(1, min(parts, int((hi.Int64-lo.Int64+1)/minPartPairs)))

	var (
		connectors = map[int64]*quarry.Connector{}
		credIDs    = map[int64][]int64{}
		pairGroups = map[int64][]int64{}
		credGroups = map[int64][]int64{}
		errs       = make([]error, 4)
	)
	parallel(
		func() { errs[0] = db.statusConnectors(ctx, from, args, connectors) },
		func() {
			errs[1] = db.eachInts(ctx, `SELECT p.connector_id, p.credential_id`+from+` ORDER BY p.connector_id, p.credential_id`, args,
				func(conn, cred int64) {
					if ids := credIDs[conn]; len(ids) == 0 || ids[len(ids)-1] != cred {
						credIDs[conn] = append(ids, cred)
					}
				})
		},
		func() {
			errs[2] = db.eachInts(ctx, `SELECT pg.cc_pair_id, pg.group_id FROM cc_pair_groups pg WHERE pg.cc_pair_id IN (SELECT p.id`+from+`)
				ORDER BY pg.cc_pair_id, pg.group_id`, args,
				func(pair, group int64) { pairGroups[pair] = append(pairGroups[pair], group) })
		},
		func() {
			errs[3] = db.eachInts(ctx, `SELECT cg.credential_id, cg.group_id FROM credential_groups cg WHERE cg.credential_id IN (SELECT p.credential_id`+from+`)
				ORDER BY cg.credential_id, cg.group_id`, args,
				func(cred, group int64) { credGroups[cred] = append(credGroups[cred], group) })
		},
	)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	for id, conn := range connectors {
		conn.CredentialIDs = credIDs[id]
		if conn.CredentialIDs == nil {
			conn.CredentialIDs = []int64{}
		}
	}

	// The parts read disjoint ranges of ids on connections of their own.
	span := (hi.Int64 - lo.Int64 + int64(parts)) / int64(parts)
	errs = make([]error, parts)
	fns := make([]func(), parts)
	for i := range parts {
		first, last := lo.Int64+int64(i)*span, min(hi.Int64, lo.Int64+int64(i+1)*span-1)
		fns[i] = func() {
			errs[i] = db.statusPart(ctx, withCredentials, args, first, last, connectors, pairGroups, credGroups,
				func(r *StatusRow) error { return fn(i, r) })
		}
	}
	parallel(fns...)
	return parts, errors.Join(errs...)
}

// statusPart streams the pairs of from (which joins their credentials, k,
// and owners, u) with ids first to last to fn.
func (db *DB) statusPart(ctx context.Context, from string, args []any, first, last int64,
	connectors map[int64]*quarry.Connector, pairGroups, credGroups map[int64][]int64, fn func(*StatusRow) error) error {
	n := len(args)
	rows, err := db.read.QueryContext(ctx, `SELECT p.id, p.name, p.access_type, p.connector_id, `+credentialColumns+from+
		fmt.Sprintf(` AND p.id BETWEEN $%d AND $%d ORDER BY p.id`, n+1, n+2), append(args[:n:n], first, last)...)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	var (
		row                  StatusRow
		cred                 credentialRow
		k                    sealedCredential // The credential of the current row, when it is new.
		seenConns, seenCreds = map[int64]bool{}, map[int64]bool{}
		plaintext            []byte
		accessType, pairName sql.RawBytes
		dest                 = append([]any{&row.ID, &pairName, &accessType, &row.ConnectorID}, cred.dest()...)
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
		row.Connector = nil
		if !seenConns[row.ConnectorID] {
			seenConns[row.ConnectorID] = true
			row.Connector = connectors[row.ConnectorID]
		}
		row.CredentialID, row.Credential = cred.k.ID, nil
		if !seenCreds[cred.k.ID] {
			seenCreds[cred.k.ID] = true
			cred.fill(&k)
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

// statusConnectors loads into conns the connectors of the pairs of from.
func (db *DB) statusConnectors(ctx context.Context, from string, args []any, conns map[int64]*quarry.Connector) error {
	rows, err := db.read.QueryContext(ctx, `SELECT `+connectorColumns+` FROM connectors c
		WHERE c.id IN (SELECT p.connector_id`+from+`)`, args...)
	if err != nil {
		return mapError(err)
	}
	for rows.Next() {
		conn, err := scanConnector(rows)
		if err != nil {
			rows.Close()
			return mapError(err)
		}
		conns[conn.ID] = conn
	}
	return closeRows(rows)
}

// parallel runs fns concurrently and waits for them all.
func parallel(fns ...func()) {
	var wg sync.WaitGroup
	for _, fn := range fns[1:] {
		wg.Go(fn)
	}
	fns[0]()
	wg.Wait()
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
	_, err := db.EachConnectorStatus(ctx, c, f, 1, func(_ int, r *StatusRow) error {
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

// statusFrom returns FROM and WHERE clauses, with their arguments, that
// select the pairs c may see through filter f (alias p), after joining
// joins. Connectors are joined (alias c) only to filter on their source,
// and the visibility test is left out for admins, who see every pair.
func statusFrom(c *quarry.Caller, f quarry.StatusFilter, joins string) (string, []any) {
	var b strings.Builder
	b.WriteString(" FROM cc_pairs p")
	if len(f.Sources) > 0 {
		b.WriteString(" JOIN connectors c ON c.id = p.connector_id")
	}
	b.WriteString(joins)
	b.WriteString(" WHERE TRUE")
	var args []any
	if !c.IsAdmin() {
		b.WriteString(" AND " + pairVisible)
		args = append(args, c.ID, false)
	}
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
