package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quarryhq/quarry/internal/progress"
)

// CheckOptions configure CheckSecrets.
type CheckOptions struct {
	// BatchSize is the number of rows read per query; zero means
	// DefaultRotateBatch.
	BatchSize int
	// Progress, if not nil, is called after each batch with the secrets
	// read so far of those stored.
	Progress func(progress.Count)
}

// KeyUse is the number of secrets sealed with one key.
type KeyUse struct {
	KeyID      string // Eight hex digits, as PrimaryID.
	Count      int
	Configured bool // Whether the keyring holds the key.
}

// CheckResult is what CheckSecrets found. It holds counts and row names,
// never a secret.
type CheckResult struct {
	// Opened and Failed count the secrets that the keyring opened and those
	// it did not, per kind (in the order of the kinds of SecretsToRotate)
	// and in all.
	Opened, Failed             int
	OpenedKinds, FailedKinds   []KindCount
	Keys                       []KeyUse // By key id.
	FailedRows                 []string // Some failed rows, such as "credential 7".
	PrimaryKeyID               string
	Elapsed                    time.Duration
	failedCounts, openedCounts []int
}

// Summary renders the counts of r as one sentence.
func (r *CheckResult) Summary() string {
	s := fmt.Sprintf("%d secrets open (%s)", r.Opened, describeKinds(r.openedCounts))
	if r.Opened == 1 {
		s = fmt.Sprintf("1 secret opens (%s)", describeKinds(r.openedCounts))
	}
	if r.Failed > 0 {
		verb := "do not"
		if r.Failed == 1 {
			verb = "does not"
		}
		s += fmt.Sprintf("; %d %s (%s): %s", r.Failed, verb, describeKinds(r.failedCounts), strings.Join(r.FailedRows, ", "))
	}
	return s
}

// CheckSecrets opens every sealed secret with the keyring, in batches of
// rows, and counts those that open and those that do not (sealed with a key
// the ring lacks, or damaged). It keeps no plaintext. It does not fail when
// a secret does not open: the result says so.
func (db *DB) CheckSecrets(ctx context.Context, opts CheckOptions) (*CheckResult, error) {
	start := time.Now()
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	res := &CheckResult{PrimaryKeyID: db.keys.PrimaryID(),
		openedCounts: make([]int, len(secretColumns)), failedCounts: make([]int, len(secretColumns))}
	total := 0
	for _, c := range secretColumns {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+c.table+` WHERE `+c.column+` IS NOT NULL`).Scan(&n); err != nil {
			return nil, mapError(err)
		}
		total += n
	}
	keys := map[uint32]int{}
	done := 0
	for ci, c := range secretColumns {
		var after int64
		for {
			rows, err := db.read.QueryContext(ctx, `SELECT id, `+c.column+` FROM `+c.table+`
				WHERE id > $1 AND `+c.column+` IS NOT NULL ORDER BY id LIMIT $2`, after, batch)
			if err != nil {
				return nil, mapError(err)
			}
			n := 0
			for rows.Next() {
				var id int64
				var ct []byte
				if err := rows.Scan(&id, &ct); err != nil {
					rows.Close()
					return nil, mapError(err)
				}
				n++
				after = id
				if len(ct) >= headerLen {
					keys[binary.BigEndian.Uint32(ct[1:])]++
				}
				pt, err := db.keys.open(c.purpose, ct)
				clear(pt)
				if err != nil {
					res.Failed++
					res.failedCounts[ci]++
					if len(res.FailedRows) < 10 {
						res.FailedRows = append(res.FailedRows, fmt.Sprintf("%s %d", c.kind, id))
					} else if len(res.FailedRows) == 10 {
						res.FailedRows = append(res.FailedRows, "…")
					}
					continue
				}
				res.Opened++
				res.openedCounts[ci]++
			}
			if err := closeRows(rows); err != nil {
				return nil, err
			}
			done += n
			if n > 0 && opts.Progress != nil {
				opts.Progress(progress.Count{Done: int64(done), Total: int64(max(total, done))})
			}
			if n < batch {
				break
			}
		}
	}
	for id, n := range keys {
		_, ok := db.keys.aeads[id]
		res.Keys = append(res.Keys, KeyUse{KeyID: fmt.Sprintf("%08x", id), Count: n, Configured: ok})
	}
	slices.SortFunc(res.Keys, func(a, b KeyUse) int { return strings.Compare(a.KeyID, b.KeyID) })
	res.OpenedKinds, res.FailedKinds = kindCounts(res.openedCounts), kindCounts(res.failedCounts)
	res.Elapsed = time.Since(start)
	return res, nil
}

// ObjectCount is the number of stored objects of one kind.
type ObjectCount struct {
	Kind  string // Plural, such as "connectors".
	Count int
	one   string // Singular.
}

// String renders c as "3 connectors" or "1 connector".
func (c ObjectCount) String() string {
	if c.Count == 1 {
		return "1 " + c.one
	}
	return fmt.Sprintf("%d %s", c.Count, c.Kind)
}

// objectTables are the tables ObjectCounts counts, with what it calls
// their rows.
var objectTables = []struct{ kind, one, table string }{
	{"users", "user", "users"},
	{"API keys", "API key", "api_keys"},
	{"user groups", "user group", "user_groups"},
	{"connectors", "connector", "connectors"},
	{"credentials", "credential", "credentials"},
	{"cc-pairs", "cc-pair", "cc_pairs"},
	{"OAuth configs", "OAuth config", "oauth_configs"},
	{"tools", "tool", "tools"},
	{"audit entries", "audit entry", "audit_events"},
	{"documents", "document", "documents"},
	{"files", "file", "files"},
}

// ObjectCounts returns the number of stored objects of each kind, to
// compare a copy of a database with its original.
func (db *DB) ObjectCounts(ctx context.Context) ([]ObjectCount, error) {
	var out []ObjectCount
	for _, t := range objectTables {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.table).Scan(&n); err != nil {
			return nil, mapError(err)
		}
		out = append(out, ObjectCount{Kind: t.kind, Count: n, one: t.one})
	}
	return out, nil
}

// IntegrityCheck runs SQLite's quick_check over the whole file and returns
// its complaints, none if the file is sound. On PostgreSQL, which checks
// its own pages, it returns none.
func (db *DB) IntegrityCheck(ctx context.Context) ([]string, error) {
	if db.dialect != SQLite {
		return nil, nil
	}
	rows, err := db.read.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return nil, mapError(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if s != "ok" {
			out = append(out, s)
		}
	}
	return out, closeRows(rows)
}
