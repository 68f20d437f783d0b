package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/quarryhq/quarry"
)

// RecordToolRun appends the audit entry of one run of a tool by c: the
// tool, the method, the host called, the status and the duration (see
// quarry.ToolRunRecord), never the arguments or anything secret. It returns
// once the entry is committed.
//
// A run changes nothing else, so its entry is written on its own, and the
// entries of runs that end at the same time are written together (group
// commit): the first caller writes, in one INSERT committed by itself,
// every entry waiting when it starts, and goes on until none waits; the
// others wait for the write that holds their entry. One run alone costs
// one INSERT; many at once share the commits, on SQLite's one writer and
// on PostgreSQL's round trips alike.
func (db *DB) RecordToolRun(ctx context.Context, c *quarry.Caller, r *quarry.ToolRunRecord) error {
	var actor *string
	var keyID *int64
	if c != nil {
		actor = &c.ID
		if c.APIKeyID != 0 {
			keyID = &c.APIKeyID
		}
	}
	e := &runEntry{args: []any{db.now().Micros(), actor, keyID, "tool.run", "tool", strconv.FormatInt(r.ToolID, 10), "[]",
		quarry.RequestIDFrom(ctx), quarry.ClientIPFrom(ctx), jsonText(r.Details())}, done: make(chan error, 1)}
	q := &db.runs
	q.mu.Lock()
	q.pending = append(q.pending, e)
	lead := !q.writing
	q.writing = true
	q.mu.Unlock()
	if lead {
		db.writeRuns(ctx)
	}
	return <-e.done
}

// runQueue holds the audit entries of runs waiting to be written, and
// whether a caller is writing them.
type runQueue struct {
	mu      sync.Mutex
	pending []*runEntry
	writing bool
}

// runEntry is one audit entry's values, and where its write's outcome goes.
type runEntry struct {
	args []any
	done chan error
}

// maxRunBatch bounds the entries of one INSERT (10 values each).
const maxRunBatch = 100

// writeRuns writes the waiting entries, batch after batch, until none
// waits.
func (db *DB) writeRuns(ctx context.Context) {
	q := &db.runs
	for {
		q.mu.Lock()
		n := min(len(q.pending), maxRunBatch)
		if n == 0 {
			q.writing = false
			q.mu.Unlock()
			return
		}
		batch := q.pending[:n:n]
		q.pending = q.pending[n:]
		q.mu.Unlock()

		var b strings.Builder
		b.WriteString(`INSERT INTO audit_events (at, actor_id, api_key_id, action, resource_type, resource_id, fields, request_id, source_ip, details) VALUES `)
		args := make([]any, 0, 10*n)
		for i, e := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			for j := range e.args {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "$%d", 10*i+j+1)
			}
			b.WriteString(")")
			args = append(args, e.args...)
		}
		err := mapError(db.whileBusy(ctx, func() error {
			_, err := db.write.ExecContext(ctx, b.String(), args...)
			return err
		}))
		for _, e := range batch {
			e.done <- err
		}
	}
}
