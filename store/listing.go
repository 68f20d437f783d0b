package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

// The kinds of listing_changes rows, and of ListingChange.
const (
	// ChangeAll starts a whole listing: forget what was read before.
	ChangeAll = "all"
	// ChangePair is a cc-pair of the listing (its name, access type,
	// groups), or one that left it.
	ChangePair = "pair"
	// ChangeConnector is a connector of the listing's pairs, or one that
	// left it.
	ChangeConnector = "connector"
	// ChangeCredential is a credential of the listing's pairs, or one that
	// left it.
	ChangeCredential = "credential"
)

// ListingChange is one item ReadListing passes on: a connector, credential
// or cc-pair as it now is, or nil when it is no longer in the listing (a
// connector or credential that no pair uses is not in it). Its pointers
// are valid until the callback returns.
type ListingChange struct {
	Kind       string // One of the Change constants.
	ID         int64  // Of the connector, credential or pair; 0 for ChangeAll.
	Connector  *quarry.Connector
	Credential *quarry.Credential // Unmasked, with its groups.
	Pair       *ListingPair
	// Pairs, for a connector or credential read as a change (not in a
	// whole listing), are the pairs that use it, ascending; such a
	// connector comes with its CredentialIDs (as an admin sees them).
	Pairs []int64
}

// ListingPair is a cc-pair as the status listing shows it.
type ListingPair struct {
	ID           int64
	Name         string
	AccessType   quarry.AccessType
	ConnectorID  int64
	CredentialID int64
	Groups       []int64 // Ascending.
}

// Bounds of the change log: a write that changes more than
// maxLoggedChanges objects logs "all" instead; a reader re-reads the whole
// listing rather than more than maxReadChanges objects; every
// pruneInterval versions, the rows more than keptVersions old are deleted.
const (
	maxLoggedChanges = 2000
	maxReadChanges   = 4000
	pruneInterval    = 256
	keptVersions     = 4096
)

// listingChange is a row of listing_changes, before its version is known.
type listingChange struct {
	kind string
	id   int64
}

// changed records that the transaction changes what the status listing
// shows of the objects of kind with ids (none for ChangeAll).
func (tx *Tx) changed(kind string, ids ...int64) {
	if kind == ChangeAll {
		tx.changes = append(tx.changes, listingChange{ChangeAll, 0})
	}
	for _, id := range ids {
		tx.changes = append(tx.changes, listingChange{kind, id})
	}
}

// logChanges bumps the data version and records, at the new version, what
// the transaction changed. It runs last in the transaction: on PostgreSQL
// the row lock on data_version, held until commit, makes versions commit
// in order, so that a snapshot that sees a version sees every row of every
// version up to it.
func (tx *Tx) logChanges(ctx context.Context) error {
	var version int64
	if err := tx.QueryRowContext(ctx, `UPDATE data_version SET version = version + 1 WHERE id = 1 RETURNING version`).Scan(&version); err != nil {
		return err
	}
	changes := tx.changes
	slices.SortFunc(changes, func(a, b listingChange) int {
		return cmp.Or(strings.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id))
	})
	changes = slices.Compact(changes)
	if len(changes) > maxLoggedChanges || slices.ContainsFunc(changes, func(c listingChange) bool { return c.kind == ChangeAll }) {
		changes = []listingChange{{ChangeAll, 0}}
	}
	const perInsert = 300
	for chunk := range slices.Chunk(changes, perInsert) {
		var b strings.Builder
		args := make([]any, 0, 2*len(chunk)+1)
		args = append(args, version)
		b.WriteString(`INSERT INTO listing_changes (version, kind, id) VALUES `)
		for i, c := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			args = append(args, c.kind, c.id)
			fmt.Fprintf(&b, "($1, $%d, $%d)", len(args)-1, len(args))
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	if version%pruneInterval == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM listing_changes WHERE version <= $1`, version-keptVersions); err != nil {
			return err
		}
	}
	return nil
}

// ReadListing reads, from one snapshot, what changed in the connector
// status listing after data version since, and returns the version it read
// (see DataVersion). It calls fn for the connectors, then the credentials,
// then the pairs that changed, as they are at that version.
//
// When it cannot tell what changed (since is 0, or older than the change
// log keeps, or a version was written by a build that logs no changes, or
// too much changed), it first calls fn with a change of kind ChangeAll,
// then passes on the whole listing: every connector and credential that a
// pair uses, then every pair, in ascending id order, streamed.
//
// It never reads who may see what: the listing it describes is the
// admin's, which callers filter.
func (db *DB) ReadListing(ctx context.Context, since int64, fn func(*ListingChange) error) (int64, error) {
	var version int64
	err := db.snapshot(ctx, func(q querier) error {
		if err := q.QueryRowContext(ctx, `SELECT version FROM data_version WHERE id = 1`).Scan(&version); err != nil {
			return mapError(err)
		}
		if since > 0 && since == version {
			return nil
		}
		var changes map[string][]int64
		if since > 0 && since < version && version-since <= keptVersions {
			var err error
			if changes, err = readChanges(ctx, q, since, version); err != nil {
				return err
			}
		}
		if changes == nil {
			if err := fn(&ListingChange{Kind: ChangeAll}); err != nil {
				return err
			}
			return mapError(db.readWholeListing(ctx, q, fn))
		}
		return mapError(db.readListingChanges(ctx, q, changes, fn))
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// readChanges returns the ids of listing_changes after version since, up
// to version, by kind; or nil if they do not tell all that changed.
func readChanges(ctx context.Context, q querier, since, version int64) (map[string][]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT version, kind, id FROM listing_changes WHERE version > $1 AND version <= $2 ORDER BY version`, since, version)
	if err != nil {
		return nil, mapError(err)
	}
	changes := map[string][]int64{}
	var (
		last, versions int64
		n              int
		kind           string
		id, v          int64
	)
	for rows.Next() {
		if err := rows.Scan(&v, &kind, &id); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if v != last {
			last, versions = v, versions+1
		}
		changes[kind] = append(changes[kind], id)
		n++
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	// Every logged version has rows; one without was pruned, or written
	// by an older build.
	if versions != version-since || n > maxReadChanges || changes[ChangeAll] != nil {
		return nil, nil
	}
	for k, ids := range changes {
		slices.Sort(ids)
		changes[k] = slices.Compact(ids)
	}
	return changes, nil
}

// listingPairColumns are the columns of a ListingPair, from cc_pairs p,
// the groups as a comma-separated text.
func (db *DB) listingPairColumns() string {
	return `p.id, p.name, p.access_type, p.connector_id, p.credential_id, ` + db.groupList("cc_pair_groups", "cc_pair_id", "p.id")
}

// groupList returns a subquery of the ids of the groups in table whose
// column is outer, ascending, as a comma-separated text (NULL for none).
func (db *DB) groupList(table, column, outer string) string {
	return db.textList("g.group_id", table+" g WHERE g."+column+" = "+outer, "g.group_id")
}

// textList returns a subquery of expr over the rows of from (a table and
// its condition), in order, as a comma-separated text (NULL for none).
func (db *DB) textList(expr, from, order string) string {
	if db.dialect == Postgres {
		return `(SELECT string_agg(CAST(` + expr + ` AS TEXT), ',' ORDER BY ` + order + `) FROM ` + from + `)`
	}
	return `(SELECT group_concat(` + expr + `, ',' ORDER BY ` + order + `) FROM ` + from + `)`
}

// parseIDs appends the ids of a comma-separated list to dst.
func parseIDs(dst []int64, list sql.NullString) ([]int64, error) {
	dst = dst[:0]
	if !list.Valid || list.String == "" {
		return dst, nil
	}
	for f := range strings.SplitSeq(list.String, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("store: group list %q: %w", list.String, err)
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// readWholeListing passes on every connector and credential that a pair
// uses, then every pair.
func (db *DB) readWholeListing(ctx context.Context, q querier, fn func(*ListingChange) error) error {
	if err := db.eachListingConnector(ctx, q, `c.id IN (SELECT connector_id FROM cc_pairs)`, nil, fn); err != nil {
		return err
	}
	if err := db.eachListingCredential(ctx, q, `k.id IN (SELECT credential_id FROM cc_pairs)`, nil, fn); err != nil {
		return err
	}
	return db.eachListingPair(ctx, q, `TRUE`, nil, fn)
}

// readListingChanges passes on the objects that changes name: the pairs
// are read first, so that the connectors and credentials they use now are
// passed on too (a new pair may use ones that were not in the listing).
// Each connector and credential comes with the pairs that use it, and each
// connector with its credential_ids; those no pair uses are gone from the
// listing, whether or not they still exist.
func (db *DB) readListingChanges(ctx context.Context, q querier, changes map[string][]int64, fn func(*ListingChange) error) error {
	var pairs []ListingPair
	seen := map[int64]bool{}
	conns, creds := changes[ChangeConnector], changes[ChangeCredential]
	err := inChunks(changes[ChangePair], "p.id", func(cond string, args []any) error {
		return db.eachListingPair(ctx, q, cond, args, func(c *ListingChange) error {
			p := *c.Pair
			p.Groups = slices.Clone(p.Groups)
			pairs = append(pairs, p)
			seen[p.ID] = true
			conns = append(conns, p.ConnectorID)
			creds = append(creds, p.CredentialID)
			return nil
		})
	})
	if err != nil {
		return err
	}

	slices.Sort(conns)
	conns = slices.Compact(conns)
	slices.Sort(creds)
	creds = slices.Compact(creds)
	users, err := pairsUsing(ctx, q, "connector_id", conns)
	if err != nil {
		return err
	}
	err = inChunks(slices.Sorted(maps.Keys(users)), "c.id", func(cond string, args []any) error {
		return db.eachListingConnector(ctx, q, cond, args, func(c *ListingChange) error {
			u := users[c.ID]
			c.Pairs = u.pairs
			slices.Sort(u.creds)
			c.Connector.CredentialIDs = slices.Compact(u.creds)
			return fn(c)
		})
	})
	if err != nil {
		return err
	}
	if err := passOnGone(ChangeConnector, conns, users, fn); err != nil {
		return err
	}

	users, err = pairsUsing(ctx, q, "credential_id", creds)
	if err != nil {
		return err
	}
	err = inChunks(slices.Sorted(maps.Keys(users)), "k.id", func(cond string, args []any) error {
		return db.eachListingCredential(ctx, q, cond, args, func(c *ListingChange) error {
			c.Pairs = users[c.ID].pairs
			return fn(c)
		})
	})
	if err != nil {
		return err
	}
	if err := passOnGone(ChangeCredential, creds, users, fn); err != nil {
		return err
	}

	for i := range pairs {
		if err := fn(&ListingChange{Kind: ChangePair, ID: pairs[i].ID, Pair: &pairs[i]}); err != nil {
			return err
		}
	}
	for _, id := range changes[ChangePair] {
		if !seen[id] {
			if err := fn(&ListingChange{Kind: ChangePair, ID: id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairUsers are the pairs that use a connector or credential, ascending,
// and their credentials.
type pairUsers struct{ pairs, creds []int64 }

// pairsUsing returns the pairs whose column (connector_id or
// credential_id) is one of ids, by id; ids no pair uses are left out.
func pairsUsing(ctx context.Context, q querier, column string, ids []int64) (map[int64]*pairUsers, error) {
	users := map[int64]*pairUsers{}
	err := inChunks(ids, "p."+column, func(cond string, args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT p.`+column+`, p.id, p.credential_id FROM cc_pairs p WHERE `+cond+` ORDER BY p.id`, args...)
		if err != nil {
			return mapError(err)
		}
		for rows.Next() {
			var id, pair, cred int64
			if err := rows.Scan(&id, &pair, &cred); err != nil {
				rows.Close()
				return mapError(err)
			}
			u := users[id]
			if u == nil {
				u = &pairUsers{}
				users[id] = u
			}
			u.pairs, u.creds = append(u.pairs, pair), append(u.creds, cred)
		}
		return closeRows(rows)
	})
	return users, err
}

// passOnGone passes on, as gone, the objects of kind with ids that no pair
// uses.
func passOnGone(kind string, ids []int64, users map[int64]*pairUsers, fn func(*ListingChange) error) error {
	for _, id := range ids {
		if users[id] == nil {
			if err := fn(&ListingChange{Kind: kind, ID: id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// inChunk is how many values one IN list holds at most: every list that
// comes from a request is cut into lists of inChunk (inChunks), so that no
// statement grows with what a request sends.
const inChunk = 500

// inChunks calls fn with the condition "column IN (…)" and its arguments
// for ids, inChunk at a time.
func inChunks[T any](ids []T, column string, fn func(cond string, args []any) error) error {
	for chunk := range slices.Chunk(ids, inChunk) {
		var args []any
		if err := fn(sqlIn(column, anys(chunk), &args), args); err != nil {
			return err
		}
	}
	return nil
}

// eachListingConnector passes on the connectors c that meet cond.
func (db *DB) eachListingConnector(ctx context.Context, q querier, cond string, args []any, fn func(*ListingChange) error) error {
	rows, err := q.QueryContext(ctx, `SELECT `+connectorColumns+` FROM connectors c WHERE `+cond, args...)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	var r connectorRow
	for rows.Next() {
		if err := rows.Scan(r.dest()...); err != nil {
			return mapError(err)
		}
		conn := r.connector()
		if err := fn(&ListingChange{Kind: ChangeConnector, ID: conn.ID, Connector: conn}); err != nil {
			return err
		}
	}
	return closeRows(rows)
}

// eachListingCredential passes on the credentials k that meet cond,
// opened.
func (db *DB) eachListingCredential(ctx context.Context, q querier, cond string, args []any, fn func(*ListingChange) error) error {
	rows, err := q.QueryContext(ctx, `SELECT `+credentialColumns+`, `+db.groupList("credential_groups", "credential_id", "k.id")+`
		FROM credentials k LEFT JOIN users u ON u.id = k.user_id WHERE `+cond, args...)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	var (
		r         credentialRow
		k         sealedCredential
		groups    sql.NullString
		plaintext []byte
		dest      = append(r.dest(), &groups)
	)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return mapError(err)
		}
		r.fill(&k)
		if k.Groups, err = parseIDs(k.Groups, groups); err != nil {
			return err
		}
		if plaintext, err = db.keys.openTo(plaintext[:0], purposeCredential, r.secret); err != nil {
			return fmt.Errorf("credential %d: %w", k.ID, err)
		}
		k.CredentialJSON = plaintext
		if err := fn(&ListingChange{Kind: ChangeCredential, ID: k.ID, Credential: &k.Credential}); err != nil {
			return err
		}
	}
	return closeRows(rows)
}

// eachListingPair passes on the pairs p that meet cond, in ascending id
// order.
func (db *DB) eachListingPair(ctx context.Context, q querier, cond string, args []any, fn func(*ListingChange) error) error {
	rows, err := q.QueryContext(ctx, `SELECT `+db.listingPairColumns()+` FROM cc_pairs p WHERE `+cond+` ORDER BY p.id`, args...)
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	var (
		p            ListingPair
		groups       sql.NullString
		name, access sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&p.ID, &name, &access, &p.ConnectorID, &p.CredentialID, &groups); err != nil {
			return mapError(err)
		}
		p.Name, p.AccessType = string(name), quarry.AccessType(access)
		if p.Groups, err = parseIDs(p.Groups, groups); err != nil {
			return err
		}
		if err := fn(&ListingChange{Kind: ChangePair, ID: p.ID, Pair: &p}); err != nil {
			return err
		}
	}
	return closeRows(rows)
}
