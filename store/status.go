package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

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

// ErrListingChanged reports that a write committed while the status listing
// was being read in several parts, which do not share one snapshot of the
// database. The caller should read it again in one part, which does.
var ErrListingChanged = errors.New("store: the listing changed while it was read")

// EachConnectorStatus calls fn for every cc-pair c may see through filter f
// (contract section 4.1), and returns the data version (see DataVersion)
// the listing is of and the number of parts it used.
//
// With parts = 1 it reads in one transaction, so one snapshot, and calls fn
// in ascending id order. With more, it reads up to that many consecutive
// ranges of ids concurrently, each on a connection of its own: fn may then
// be called for different parts at the same time, in ascending id order
// within a part, part i holding lower ids than part i+1; and if a write
// committed meanwhile, it returns ErrListingChanged once it has called fn
// with rows that may not fit together.
//
// What c sees depends only on its role and the groups in c.Memberships,
// never on memberships read meanwhile, so that listings can be cached by
// those. It runs a fixed number of statements whatever the number of
// pairs: the data version, the range of ids, the pairs' connectors, the
// credentials of the connectors' visible pairs, the pairs' groups, the
// credentials' groups, and the pairs with their credentials (once per
// part); with several parts, the data version again.
func (db *DB) EachConnectorStatus(ctx context.Context, c *quarry.Caller, f quarry.StatusFilter, parts int, fn func(part int, r *StatusRow) error) (version int64, n int, err error) {
	if parts <= 1 {
		tx, err := db.read.BeginTx(ctx, db.snapshotOptions())
		if err != nil {
			return 0, 0, mapError(err)
		}
		defer tx.Rollback()
		return db.eachConnectorStatus(ctx, countedTx{tx, &db.statements}, c, f, 1, fn)
	}
	return db.eachConnectorStatus(ctx, db.read, c, f, parts, fn)
}

// snapshotOptions are the options of a read transaction that sees one
// snapshot: SQLite's deferred transactions do (WAL), PostgreSQL needs
// REPEATABLE READ.
func (db *DB) snapshotOptions() *sql.TxOptions {
	if db.dialect == Postgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return nil
}

// reader runs queries: the read pool, or a read transaction.
type reader interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// countedTx is a read transaction that counts its statements.
type countedTx struct {
	*sql.Tx
	statements *atomic.Int64
}

func (t countedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.statements.Add(1)
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t countedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	t.statements.Add(1)
	return t.Tx.QueryRowContext(ctx, query, args...)
}

func (db *DB) eachConnectorStatus(ctx context.Context, q reader, c *quarry.Caller, f quarry.StatusFilter, parts int, fn func(part int, r *StatusRow) error) (int64, int, error) {
	from, args := statusFrom(c, f, "")
	visible, visibleArgs := statusFrom(c, quarry.StatusFilter{}, "")
	withCredentials, _ := statusFrom(c, f, ` JOIN credentials k ON k.id = p.credential_id LEFT JOIN users u ON u.id = k.user_id`)

	var version int64
	if err := q.QueryRowContext(ctx, `SELECT version FROM data_version WHERE id = 1`).Scan(&version); err != nil {
		return 0, 0, mapError(err)
	}
	var lo, hi sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MIN(p.id), MAX(p.id)`+from, args...).Scan(&lo, &hi); err != nil {
		return 0, 0, mapError(err)
	}
	if !lo.Valid {
		return version, 0, nil
	}
	parts = max(1, min(parts, int((hi.Int64-lo.Int64+1)/minPartPairs)))
	run := parallel
	if parts == 1 {
		run = sequence // One transaction: one connection, one snapshot.
	}

	var (
		connectors = map[int64]*quarry.Connector{}
		credIDs    = map[int64][]int64{}
		pairGroups = map[int64][]int64{}
		credGroups = map[int64][]int64{}
		errs       = make([]error, 4)
	)
	run(
		func() { errs[0] = statusConnectors(ctx, q, from, args, connectors) },
		func() {
			// credential_ids lists the credentials of every pair of the
			// connector the caller may see, whatever the filter.
			errs[1] = eachInts(ctx, q, `SELECT p.connector_id, p.credential_id`+visible+` ORDER BY p.connector_id, p.credential_id`, visibleArgs,
				func(conn, cred int64) {
					if ids := credIDs[conn]; len(ids) == 0 || ids[len(ids)-1] != cred {
						credIDs[conn] = append(ids, cred)
					}
				})
		},
		func() {
			errs[2] = eachInts(ctx, q, `SELECT pg.cc_pair_id, pg.group_id FROM cc_pair_groups pg WHERE pg.cc_pair_id IN (SELECT p.id`+from+`)
				ORDER BY pg.cc_pair_id, pg.group_id`, args,
				func(pair, group int64) { pairGroups[pair] = append(pairGroups[pair], group) })
		},
		func() {
			errs[3] = eachInts(ctx, q, `SELECT cg.credential_id, cg.group_id FROM credential_groups cg WHERE cg.credential_id IN (SELECT p.credential_id`+from+`)
				ORDER BY cg.credential_id, cg.group_id`, args,
				func(cred, group int64) { credGroups[cred] = append(credGroups[cred], group) })
		},
	)
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	for id, conn := range connectors {
		conn.CredentialIDs = credIDs[id]
		if conn.CredentialIDs == nil {
			conn.CredentialIDs = []int64{}
		}
	}

	// The parts read disjoint ranges of ids.
	span := (hi.Int64 - lo.Int64 + int64(parts)) / int64(parts)
	errs = make([]error, parts)
	fns := make([]func(), parts)
	for i := range parts {
		first, last := lo.Int64+int64(i)*span, min(hi.Int64, lo.Int64+int64(i+1)*span-1)
		fns[i] = func() {
			errs[i] = db.statusPart(ctx, q, withCredentials, args, first, last, connectors, pairGroups, credGroups,
				func(r *StatusRow) error { return fn(i, r) })
		}
	}
	run(fns...)
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	if parts > 1 {
		// The parts and the queries before them each saw a snapshot of
		// their own: they fit together only if no write came between.
		var after int64
		if err := q.QueryRowContext(ctx, `SELECT version FROM data_version WHERE id = 1`).Scan(&after); err != nil {
			return 0, 0, mapError(err)
		}
		if after != version {
			return 0, 0, ErrListingChanged
		}
	}
	return version, parts, nil
}

// statusPart streams the pairs of from (which joins their credentials, k,
// and owners, u) with ids first to last to fn.
func (db *DB) statusPart(ctx context.Context, q reader, from string, args []any, first, last int64,
	connectors map[int64]*quarry.Connector, pairGroups, credGroups map[int64][]int64, fn func(*StatusRow) error) error {
	n := len(args)
	rows, err := q.QueryContext(ctx, `SELECT p.id, p.name, p.access_type, p.connector_id, `+credentialColumns+from+
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
			if row.Connector = connectors[row.ConnectorID]; row.Connector == nil {
				return ErrListingChanged // The pair came after its connectors were read.
			}
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
func statusConnectors(ctx context.Context, q reader, from string, args []any, conns map[int64]*quarry.Connector) error {
	rows, err := q.QueryContext(ctx, `SELECT `+connectorColumns+` FROM connectors c
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

// sequence runs fns one after the other.
func sequence(fns ...func()) {
	for _, fn := range fns {
		fn()
	}
}

// eachInts runs a query of two integer columns and calls fn for each row.
func eachInts(ctx context.Context, q reader, query string, args []any, fn func(a, b int64)) error {
	rows, err := q.QueryContext(ctx, query, args...)
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
	_, _, err := db.EachConnectorStatus(ctx, c, f, 1, func(_ int, r *StatusRow) error {
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
// select the pairs c may see (see pairsVisibleTo) through filter f (alias
// p), after joining joins. Connectors are joined (alias c) only to filter
// on their source.
func statusFrom(c *quarry.Caller, f quarry.StatusFilter, joins string) (string, []any) {
	var (
		b    strings.Builder
		args []any
	)
	b.WriteString(" FROM cc_pairs p")
	if len(f.Sources) > 0 {
		b.WriteString(" JOIN connectors c ON c.id = p.connector_id")
	}
	b.WriteString(joins)
	b.WriteString(" WHERE " + pairsVisibleTo(c, "p", &args))
	if len(f.Sources) > 0 {
		b.WriteString(" AND " + sqlIn("c.source", anys(f.Sources), &args))
	}
	if len(f.AccessTypes) > 0 {
		b.WriteString(" AND " + sqlIn("p.access_type", anys(f.AccessTypes), &args))
	}
	return b.String(), args
}

// anys returns the elements of s as query arguments.
func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
