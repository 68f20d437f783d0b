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

// Key rotation re-encrypts every stored secret under the keyring's primary
// key. It reads and rewrites ciphertexts only: versions, updated_at and the
// status listing's data version stay as they are, since no object changes.
//
// It works in batches of rows, one transaction each, and each batch selects
// only rows whose ciphertext names another key than the primary one, so an
// interrupted run is resumed by running it again. Each row is rewritten with
// a conditional UPDATE ... WHERE id = $2 AND <column> = <the ciphertext
// read>: a concurrent write that committed in between wins, and its value
// (sealed by the server that wrote it) is left alone.

// secretColumn is a column of sealed secrets.
type secretColumn struct {
	kind    string // What the summary calls one of its values.
	plural  string
	field   string // The API field it holds, for the audit entry.
	table   string
	column  string
	purpose string
}

// secretColumns lists every sealed column.
var secretColumns = []secretColumn{
	{"credential", "credentials", "credential_json", "credentials", "secret", purposeCredential},
	{"tool header set", "tool header sets", "custom_headers", "tools", "headers", purposeToolHeaders},
	{"OAuth client secret", "OAuth client secrets", "client_secret", "oauth_configs", "client_secret", purposeOAuthSecret},
	{"session ID token", "session ID tokens", "id_token", "sessions", "id_token", purposeIDToken},
	{"tool OAuth token", "tool OAuth tokens", "oauth_token", "oauth_tokens", "token", purposeToolToken},
	{"single sign-on token", "single sign-on tokens", "sso_token", "sso_tokens", "token", purposeSSOToken},
	{"OAuth connection in progress", "OAuth connections in progress", "oauth_state", "oauth_states", "secret", purposeOAuthState},
	{"MCP server secret set", "MCP server secret sets", "mcp_config", "mcp_servers", "config", purposeMCPConfig},
	{"MCP credential set", "MCP credential sets", "mcp_credentials", "mcp_user_credentials", "credentials", purposeMCPCreds},
	{"MCP OAuth token", "MCP OAuth tokens", "mcp_token", "mcp_tokens", "token", purposeMCPToken},
	{"MCP OAuth connection in progress", "MCP OAuth connections in progress", "mcp_oauth_state", "mcp_oauth_states", "secret", purposeMCPState},
	{"model provider key", "model provider keys", "api_key", "llm_providers", "api_key", purposeLLMKey},
}

// KindCount is a number of secrets of one kind.
type KindCount struct {
	Kind  string // "credentials", "tool header sets", "OAuth client secrets"
	Count int
}

// describeKinds renders counts as "2 credentials, 1 tool header set".
func describeKinds(counts []int) string {
	var parts []string
	for i, n := range counts {
		if n == 0 {
			continue
		}
		name := secretColumns[i].plural
		if n == 1 {
			name = secretColumns[i].kind
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func kindCounts(counts []int) []KindCount {
	out := make([]KindCount, len(secretColumns))
	for i, c := range secretColumns {
		out[i] = KindCount{Kind: c.plural, Count: counts[i]}
	}
	return out
}

// DefaultRotateBatch is the number of rows re-encrypted per transaction.
const DefaultRotateBatch = 200

// RotateOptions configure RotateKeys.
type RotateOptions struct {
	// BatchSize is the number of rows per transaction; zero means
	// DefaultRotateBatch.
	BatchSize int
	// Progress, if not nil, is called after each committed batch with the
	// secrets handled so far (re-encrypted, or rewritten meanwhile by a
	// concurrent write) of those found under another key than the primary
	// one.
	Progress func(progress.Count)
}

// RotateResult is what RotateKeys did.
type RotateResult struct {
	// PrimaryKeyID is the id of the key every secret is now sealed with.
	PrimaryKeyID string
	// Found is the number of secrets that were under another key.
	Found int
	// Rotated is the number this run re-encrypted, per kind and in all.
	Rotated      int
	RotatedKinds []KindCount
	// Concurrent is the number that a concurrent write rewrote while the
	// run was at them; their new ciphertexts are the writer's.
	Concurrent int
	// Remaining is the number still under another key at the end: zero
	// after a complete run.
	Remaining int
	// Elapsed is how long the run took.
	Elapsed time.Duration
}

// Summary renders the counts of r as one sentence.
func (r *RotateResult) Summary() string {
	counts := make([]int, len(r.RotatedKinds))
	for i, k := range r.RotatedKinds {
		counts[i] = k.Count
	}
	return fmt.Sprintf("re-encrypted %d secrets (%s) under key %s", r.Rotated, describeKinds(counts), r.PrimaryKeyID)
}

// UnreadableSecretsError reports secrets that no key of the keyring opens.
type UnreadableSecretsError struct {
	Count  int
	Kinds  []KindCount
	KeyIDs []string // The unknown keys they name, as eight hex digits; empty if they are damaged instead.
	Rows   []string // Some of them, such as "credential 7".
	// Changed reports whether the run re-encrypted other secrets before
	// stopping.
	Changed bool
}

func (e *UnreadableSecretsError) Error() string {
	counts := make([]int, len(e.Kinds))
	for i, k := range e.Kinds {
		counts[i] = k.Count
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d secrets (%s) cannot be opened with QUARRY_ENCRYPTION_KEY or any key of QUARRY_OLD_ENCRYPTION_KEYS", e.Count, describeKinds(counts))
	if len(e.KeyIDs) > 0 {
		fmt.Fprintf(&b, ": they were sealed with key id %s, which is not configured; put the key they were sealed with in QUARRY_OLD_ENCRYPTION_KEYS and run again", strings.Join(e.KeyIDs, ", "))
	} else {
		fmt.Fprintf(&b, " (%s): they may be damaged", strings.Join(e.Rows, ", "))
	}
	if !e.Changed {
		b.WriteString(" (nothing was changed)")
	}
	return b.String()
}

// has reports whether the ring holds the key with id, as stored in
// ciphertexts.
func (kr *Keyring) has(id []byte) bool {
	if len(id) != keyIDLen {
		return false
	}
	_, ok := kr.aeads[binary.BigEndian.Uint32(id)]
	return ok
}

// primaryIDBytes returns the primary key id as it is stored in ciphertexts.
func (kr *Keyring) primaryIDBytes() []byte {
	return binary.BigEndian.AppendUint32(nil, kr.primary)
}

// notPrimary is the condition that selects the rows of c not sealed with the
// primary key, given as placeholder p. substr counts from 1: the key id
// follows the format byte.
func (c secretColumn) notPrimary(p string) string {
	return c.column + ` IS NOT NULL AND substr(` + c.column + `, 2, 4) <> ` + p
}

// SecretsToRotate returns the number of secrets not sealed with the primary
// key, per kind and in all.
func (db *DB) SecretsToRotate(ctx context.Context) (int, []KindCount, error) {
	counts, err := db.countPending(ctx)
	if err != nil {
		return 0, nil, err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, kindCounts(counts), nil
}

func (db *DB) countPending(ctx context.Context) ([]int, error) {
	counts := make([]int, len(secretColumns))
	for i, c := range secretColumns {
		err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+c.table+` WHERE `+c.notPrimary("$1"),
			db.keys.primaryIDBytes()).Scan(&counts[i])
		if err != nil {
			return nil, mapError(err)
		}
	}
	return counts, nil
}

// checkKeys fails with an *UnreadableSecretsError if some secret names a key
// the keyring does not hold.
func (db *DB) checkKeys(ctx context.Context) error {
	e := &UnreadableSecretsError{}
	counts := make([]int, len(secretColumns))
	for i, c := range secretColumns {
		rows, err := db.read.QueryContext(ctx, `SELECT substr(`+c.column+`, 2, 4), COUNT(*) FROM `+c.table+`
			WHERE `+c.notPrimary("$1")+` GROUP BY substr(`+c.column+`, 2, 4)`, db.keys.primaryIDBytes())
		if err != nil {
			return mapError(err)
		}
		for rows.Next() {
			var id []byte
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return mapError(err)
			}
			if db.keys.has(id) {
				continue
			}
			counts[i] += n
			e.Count += n
			if hex := fmt.Sprintf("%x", id); !slices.Contains(e.KeyIDs, hex) {
				e.KeyIDs = append(e.KeyIDs, hex)
			}
		}
		if err := closeRows(rows); err != nil {
			return err
		}
	}
	if e.Count == 0 {
		return nil
	}
	slices.Sort(e.KeyIDs)
	e.Kinds = kindCounts(counts)
	return e
}

// maxRotatePasses bounds the passes over the tables. A second pass picks up
// rows that a server still sealing with an old key wrote behind the first.
const maxRotatePasses = 3

// RotateKeys re-encrypts every secret not sealed with the primary key under
// it (see the comment at the top of this file). It first checks that every
// secret names a key of the keyring, and changes nothing if one does not.
// When ctx is cancelled it stops after the batch in progress and returns the
// counts so far with ctx's error; running it again continues.
func (db *DB) RotateKeys(ctx context.Context, opts RotateOptions) (*RotateResult, error) {
	start := time.Now()
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	res := &RotateResult{PrimaryKeyID: db.keys.PrimaryID()}
	rotated := make([]int, len(secretColumns))
	finish := func(err error) (*RotateResult, error) {
		res.RotatedKinds = kindCounts(rotated)
		res.Elapsed = time.Since(start)
		if res.Rotated > 0 {
			// Recorded even when interrupted, with a context that is not.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			var fields []string
			for i, c := range secretColumns {
				if rotated[i] > 0 {
					fields = append(fields, c.field)
				}
			}
			aerr := db.update(actx, func(tx *Tx) error {
				return tx.audit(actx, nil, "encryption_key.rotate", "encryption_key", res.PrimaryKeyID, fields)
			})
			if err == nil && aerr != nil {
				err = fmt.Errorf("recording the rotation in the audit log: %w", aerr)
			}
		}
		return res, err
	}
	if err := db.checkKeys(ctx); err != nil {
		return finish(err)
	}
	primary := db.keys.primaryIDBytes()
	bad := map[string]bool{} // "credential 7": rows that would not open.
	badCounts := make([]int, len(secretColumns))
	var badRows []string
	done := 0
	for pass := 0; pass < maxRotatePasses; pass++ {
		counts, err := db.countPending(ctx)
		if err != nil {
			return finish(err)
		}
		pending := 0
		for _, n := range counts {
			pending += n
		}
		pending -= len(bad)
		if pass == 0 {
			res.Found = pending
		}
		if pending <= 0 {
			break
		}
		total := done + pending
		if pass > 0 {
			res.Found += pending
		}
		for ci, col := range secretColumns {
			var after int64
			for {
				var (
					ids      []int64
					olds     [][]byte
					nRotated int
					nRaced   int
					failed   []string
				)
				err := db.update(ctx, func(tx *Tx) error {
					ids, olds, nRotated, nRaced, failed = nil, nil, 0, 0, nil
					rows, err := tx.QueryContext(ctx, `SELECT id, `+col.column+` FROM `+col.table+`
						WHERE id > $1 AND `+col.notPrimary("$2")+` ORDER BY id LIMIT $3`, after, primary, batch)
					if err != nil {
						return err
					}
					for rows.Next() {
						var id int64
						var ct []byte
						if err := rows.Scan(&id, &ct); err != nil {
							rows.Close()
							return err
						}
						ids, olds = append(ids, id), append(olds, ct)
					}
					if err := closeRows(rows); err != nil {
						return err
					}
					for i, id := range ids {
						pt, err := db.keys.open(col.purpose, olds[i])
						if err != nil {
							failed = append(failed, fmt.Sprintf("%s %d", col.kind, id))
							continue
						}
						r, err := tx.ExecContext(ctx, `UPDATE `+col.table+` SET `+col.column+` = $1 WHERE id = $2 AND `+col.column+` = $3`,
							db.keys.seal(col.purpose, pt), id, olds[i])
						if err != nil {
							return err
						}
						n, err := r.RowsAffected()
						if err != nil {
							return err
						}
						if n == 1 {
							nRotated++
						} else {
							nRaced++
						}
					}
					return nil
				})
				if err != nil {
					return finish(err)
				}
				if len(ids) == 0 {
					break
				}
				after = ids[len(ids)-1]
				rotated[ci] += nRotated
				res.Rotated += nRotated
				res.Concurrent += nRaced
				for _, f := range failed {
					if !bad[f] {
						bad[f] = true
						badCounts[ci]++
						badRows = append(badRows, f)
					}
				}
				done += len(ids)
				total = max(total, done)
				if opts.Progress != nil {
					opts.Progress(progress.Count{Done: int64(done), Total: int64(total)})
				}
				if len(ids) < batch {
					break
				}
			}
		}
	}
	counts, err := db.countPending(ctx)
	if err != nil {
		return finish(err)
	}
	for _, n := range counts {
		res.Remaining += n
	}
	if len(bad) > 0 {
		if len(badRows) > 10 {
			badRows = append(badRows[:10], "…")
		}
		return finish(&UnreadableSecretsError{Count: len(bad), Kinds: kindCounts(badCounts), Rows: badRows, Changed: res.Rotated > 0})
	}
	return finish(nil)
}
