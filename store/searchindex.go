package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/quarryhq/quarry/index"
)

// The search index's storage (migration 00017), as Lucene keeps an index:
// immutable segments, each a block of packed postings per term, merged
// into bigger ones as they pile up (package index builds and merges them,
// and decides which; this file reads and writes their rows). A
// document's chunks are written pending (a row each, with its terms) in
// the transaction that writes the document, and searched from there at
// once; MergeIndex later writes the pending chunks into a segment, and
// merges segments of a tier into one, apart from the writes of documents.
// A segment's postings of a chunk deleted since it was written stay in
// it, matching no chunk, until a merge drops them.

// staleBuild is how long a merge may go without writing a batch (each
// batch renews its time) before another server takes it for abandoned
// (its server stopped) and drops it.
const staleBuild = 5 * time.Minute

// addPending writes chunk id of pair pairID as pending: its length and
// terms (index.EncodeTerms), for the searches until MergeIndex writes it
// into a segment.
func (tx *Tx) addPending(ctx context.Context, id, pairID int64, length int, terms []byte) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO search_pending (chunk_id, cc_pair_id, length, terms) VALUES ($1, $2, $3, $4)`,
		id, pairID, length, terms); err != nil {
		return err
	}
	tx.pendingChunks++
	return nil
}

// MergeIndex does the search index's upkeep: it writes the pending chunks
// (up to index.FlushChunks of them) into a new segment, merges the
// segments of a tier into one if index.MergeFactor of them are live
// (index.ChooseMerge), and removes the blocks of the segments merges
// dropped. It reports whether it wrote a segment.
// Servers may run it at once: each piece of upkeep is done by one of them,
// which the others skip.
func (db *DB) MergeIndex(ctx context.Context) (bool, error) {
	flushed, err := db.flushPending(ctx)
	if err != nil {
		return false, errors.Join(err, db.removeDropped(ctx, 0))
	}
	merged, err := db.mergeTier(ctx)
	// The dropped segments go whatever the merge did: a merge that fails
	// again and again drops what it built each time.
	return flushed || merged, errors.Join(err, db.removeDropped(ctx, 0))
}

// removeDropped removes the segments that merges dropped (at most limit
// of them; all if limit is 0), their blocks a batch at a time, so that no
// transaction holds SQLite's write lock long.
func (db *DB) removeDropped(ctx context.Context, limit int) error {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	ids, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (int64, error) {
		var id int64
		return id, r.Scan(&id)
	}, `SELECT id FROM search_segments WHERE state = 'dropped' ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return err
	}
	for _, id := range ids {
		for done := false; !done; {
			err := db.update(ctx, func(tx *Tx) error {
				// A range of the key, not a list of terms: a list seeks
				// each term, and SQLite reads the whole of every row its
				// seeks compare whose postings overflow its page (4 times
				// slower in all, measured on a 100,000-chunk index).
				res, err := tx.ExecContext(ctx, `DELETE FROM search_blocks WHERE segment_id = $1 AND term <= (
					SELECT MAX(term) FROM (SELECT term FROM search_blocks WHERE segment_id = $1 ORDER BY term LIMIT 20000) AS first)`, id)
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				if err != nil || n > 0 {
					return err
				}
				done = true
				_, err = tx.ExecContext(ctx, `DELETE FROM search_segments WHERE id = $1 AND state = 'dropped'`, id)
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// SettleIndex runs MergeIndex until it has nothing left to do: every
// chunk written before it was called is then in a segment, and no tier
// holds index.MergeFactor segments, unless another server's upkeep was
// merging it. While another server's upkeep holds the index's lock (on
// PostgreSQL; a flush it has just given up may hold it a moment longer),
// it waits for the chunks that were pending, from 20 ms to a second
// between rounds.
func (db *DB) SettleIndex(ctx context.Context) error {
	var last sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT MAX(chunk_id) FROM search_pending`).Scan(&last); err != nil {
		return err
	}
	wait := 20 * time.Millisecond
	for {
		did, err := db.MergeIndex(ctx)
		if err != nil {
			return err
		}
		if did {
			wait = 20 * time.Millisecond
			continue
		}
		var left bool
		if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_pending WHERE chunk_id <= $1)`, last).Scan(&left); err != nil || !left {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second) // Each round reads the pending rows.
	}
}

// RunIndexUpkeep runs the search index's upkeep until ctx ends, as every
// server does beside its requests (quarry serve): pending chunks are
// written into segments every interval and whenever this server has
// written index.NudgeChunks of them since, in a loop of their own, so
// that a long merge never holds them back; the tiers are merged every interval,
// dropped segments removed, and ExpungeIndex run every expungeInterval.
// Each error is given to failed (one call at a time), and the next round
// tries again.
func (db *DB) RunIndexUpkeep(ctx context.Context, interval time.Duration, failed func(error)) {
	var mu sync.Mutex // The two loops report through it: failed is called once at a time.
	report := func(err error) {
		if err != nil && ctx.Err() == nil {
			mu.Lock()
			defer mu.Unlock()
			failed(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			for {
				did, err := db.flushPending(ctx)
				report(err)
				if err != nil || !did {
					break
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-db.indexNudge:
			}
		}
	})
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		lastExpunge := time.Now()
		for {
			for {
				// A merge, then one dropped segment's blocks removed: while
				// merges are due they come first (the segments a search
				// reads stay few), and the rest of the dropped go once no
				// merge is due.
				did, err := db.mergeTier(ctx)
				report(errors.Join(err, db.removeDropped(ctx, 1)))
				if err != nil || !did {
					break
				}
			}
			report(db.removeDropped(ctx, 0))
			if time.Since(lastExpunge) >= expungeInterval {
				lastExpunge = time.Now()
				_, err := db.ExpungeIndex(ctx)
				report(err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	wg.Wait()
}

// flushPending writes the oldest pending chunks into a new live segment
// and removes their pending rows; it reports whether there were any. The
// rows are read and the blocks encoded before the write transaction, which
// only writes them: SQLite's write lock is held for the writes alone. If
// another server flushed some of the rows meanwhile, the transaction rolls
// back and the next round reads the pending rows again; rows gone with
// their chunks (documents deleted or written again) leave dead postings.
func (db *DB) flushPending(ctx context.Context) (bool, error) {
	pending, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (index.Pending, error) {
		var p index.Pending
		return p, r.Scan(&p.Chunk, &p.Pair, &p.Length, &p.Terms)
	}, `SELECT chunk_id, cc_pair_id, length, terms FROM search_pending ORDER BY chunk_id LIMIT $1`, index.FlushChunks)
	if err != nil || len(pending) == 0 {
		return false, err
	}
	segment, blocks := index.Flush(pending)
	ids := make([]any, len(pending))
	for i, p := range pending {
		ids[i] = p.Chunk
	}
	err = db.update(ctx, func(tx *Tx) error {
		if ok, err := tx.tryIndexLock(ctx); err != nil || !ok {
			return cmpErr(err, errRaced)
		}
		var seg int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO search_segments (state, chunks, length, norms, created_at)
			VALUES ('live', $1, $2, $3, $4) RETURNING id`, segment.Chunks, segment.Length, segment.Norms, tx.now.Micros()).Scan(&seg); err != nil {
			return err
		}
		if err := tx.insertBlocks(ctx, seg, blocks); err != nil {
			return err
		}
		for rest := ids; len(rest) > 0; {
			n := min(len(rest), 500)
			var args []any
			res, err := tx.ExecContext(ctx, `DELETE FROM search_pending WHERE `+sqlIn("chunk_id", rest[:n], &args), args...)
			if err != nil {
				return err
			}
			got, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if got != int64(n) {
				// A row gone is a chunk deleted since (its postings are
				// then dead ones, as after any deletion) or a chunk another
				// server flushed (its postings would count twice).
				var live int64
				args = nil
				if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM search_chunks WHERE `+sqlIn("id", rest[:n], &args), args...).Scan(&live); err != nil {
					return err
				}
				if live != got {
					return errRaced
				}
			}
			rest = rest[n:]
		}
		return nil
	})
	if errors.Is(err, errRaced) {
		return false, nil
	}
	return err == nil, err
}

// cmpErr returns err, or else fallback.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// tryIndexLock takes, on PostgreSQL, the lock of the index's upkeep for
// the transaction, without waiting: false if another server holds it.
// SQLite's write transaction is the lock itself.
func (tx *Tx) tryIndexLock(ctx context.Context) (bool, error) {
	if tx.db.dialect != Postgres {
		return true, nil
	}
	var ok bool
	err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, searchIndexLock).Scan(&ok)
	return ok, err
}

// searchIndexLock is the PostgreSQL advisory lock of the index's upkeep.
const searchIndexLock = 0x5155415252590034

// insertBlocks writes blocks to segment seg, in statements of a few fixed
// sizes (so that each stays prepared). On SQLite the parameters are
// anonymous (?): the driver looks each numbered one up by its name in a
// list, which costs the square of a statement's parameters (7% of a
// load's time with 400 of them).
func (tx *Tx) insertBlocks(ctx context.Context, seg int64, blocks []index.Block) error {
	anonymous := tx.db.dialect == SQLite
	for _, size := range []int{100, 10, 1} {
		for len(blocks) >= size {
			var b strings.Builder
			b.WriteString(`INSERT INTO search_blocks (segment_id, term, df, postings) VALUES `)
			args := make([]any, 0, size*4)
			for i, k := range blocks[:size] {
				if i > 0 {
					b.WriteString(", ")
				}
				if anonymous {
					b.WriteString("(?, ?, ?, ?)")
				} else {
					fmt.Fprintf(&b, "($%d, $%d, $%d, $%d)", i*4+1, i*4+2, i*4+3, i*4+4)
				}
				args = append(args, seg, k.Term, k.DF, k.Postings)
			}
			if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
				return err
			}
			blocks = blocks[size:]
		}
	}
	return nil
}

// mergeTier merges the segments of a tier that index.ChooseMerge chooses
// into one, and reports whether it did. The merged segment is built apart
// (state building, which no search reads, in transactions of about
// index.MergeBlockBytes), then takes its sources' place in one
// transaction, which drops them (removeDropped removes them). Postings of
// chunks deleted since are left out.
func (db *DB) mergeTier(ctx context.Context) (bool, error) {
	segs, err := db.liveSegments(ctx, `ORDER BY chunks, id`)
	if err != nil {
		return false, err
	}
	sources := index.ChooseMerge(segs)
	if sources == nil {
		return false, nil
	}
	return db.merge(ctx, sources)
}

// liveSegments returns the live segments' ids and chunks' counts, in the
// order of order (an ORDER BY clause).
func (db *DB) liveSegments(ctx context.Context, order string) ([]index.SegmentSize, error) {
	return queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (index.SegmentSize, error) {
		var s index.SegmentSize
		return s, r.Scan(&s.ID, &s.Chunks)
	}, `SELECT id, chunks FROM search_segments WHERE state = 'live' `+order)
}

// merge merges segments sources into one (see mergeTier), unless another
// server's merge is under way or took them first; it reports whether it
// did.
func (db *DB) merge(ctx context.Context, sources []index.SegmentSize) (bool, error) {
	seg, err := db.claimMerge(ctx)
	if err != nil || seg == 0 {
		return false, err
	}
	if err := db.buildMerge(ctx, seg, sources); err != nil {
		db.dropSegment(context.WithoutCancel(ctx), seg)
		if errors.Is(err, errRaced) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// expungeInterval is how often RunIndexUpkeep runs ExpungeIndex, which
// reads every live segment's chunks.
const expungeInterval = 10 * time.Minute

// ExpungeIndex rewrites alone (a merge of one) the largest live segment
// that index.Expunges has rewritten for the share of its chunks gone. It
// reports whether it did.
func (db *DB) ExpungeIndex(ctx context.Context) (bool, error) {
	segs, err := db.liveSegments(ctx, `ORDER BY chunks DESC, id`)
	if err != nil {
		return false, err
	}
	for _, s := range segs {
		chunks, _, live, err := db.segmentChunks(ctx, []index.SegmentSize{s})
		if errors.Is(err, errRaced) {
			continue // Merged meanwhile.
		}
		if err != nil {
			return false, err
		}
		if index.Expunges(len(chunks), live.Gone(chunks)) {
			return db.merge(ctx, []index.SegmentSize{s})
		}
	}
	return false, nil
}

// segmentChunks returns the chunks of live segments sources (ids and
// lengths, as their norms list them) and which chunks are still there;
// errRaced if one of the segments is no longer live.
func (db *DB) segmentChunks(ctx context.Context, sources []index.SegmentSize) (chunks []int64, lengths []int, live *index.Live, err error) {
	for _, s := range sources {
		var norms []byte
		if err := db.read.QueryRowContext(ctx, `SELECT norms FROM search_segments WHERE id = $1 AND state = 'live'`, s.ID).Scan(&norms); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil, nil, nil, errRaced
			}
			return nil, nil, nil, err
		}
		c, l, err := index.DecodeNorms(norms)
		if err != nil {
			return nil, nil, nil, err
		}
		chunks, lengths = append(chunks, c...), append(lengths, l...)
	}
	live, err = index.NewLive(chunks, func(lo, hi int64) ([]int64, error) {
		return queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, `SELECT id FROM search_chunks WHERE id >= $1 AND id <= $2`, lo, hi)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return chunks, lengths, live, nil
}

// claimMerge inserts the segment a merge builds, and returns its id: 0
// when another server's merge is under way. A merge older than staleBuild
// is taken for abandoned and removed first.
func (db *DB) claimMerge(ctx context.Context) (int64, error) {
	var id int64
	err := db.update(ctx, func(tx *Tx) error {
		var old int64
		var at int64
		err := tx.QueryRowContext(ctx, `SELECT id, created_at FROM search_segments WHERE state = 'building'`).Scan(&old, &at)
		switch {
		case err == nil && tx.now.Micros()-at < staleBuild.Microseconds():
			return nil
		case err == nil:
			if _, err := tx.ExecContext(ctx, `UPDATE search_segments SET state = 'dropped' WHERE id = $1`, old); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO search_segments (state, chunks, length, norms, created_at)
			VALUES ('building', 0, 0, $1, $2) RETURNING id`, []byte{}, tx.now.Micros()).Scan(&id)
	})
	if errors.Is(err, errConflict) {
		return 0, nil // Another server claimed it meanwhile.
	}
	return id, err
}

// dropSegment drops the segment of a merge that failed (removeDropped
// removes it); a failure to is left to the next merge (staleBuild).
func (db *DB) dropSegment(ctx context.Context, seg int64) {
	_ = db.update(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE search_segments SET state = 'dropped' WHERE id = $1`, seg)
		return err
	})
}

// mergeCursor reads a source segment's blocks in their terms' order, a
// page at a time (index.Cursor).
type mergeCursor struct {
	ctx  context.Context
	q    querier
	seg  int64
	page []index.Block
	last string
	done bool
}

// Next returns the segment's next block.
func (m *mergeCursor) Next() (index.Block, bool, error) {
	if len(m.page) == 0 && !m.done {
		rows, err := queryAll(m.ctx, m.q, func(r interface{ Scan(...any) error }) (index.Block, error) {
			var x index.Block
			return x, r.Scan(&x.Term, &x.Postings)
		}, `SELECT term, postings FROM search_blocks WHERE segment_id = $1 AND term > $2 ORDER BY term LIMIT 512`, m.seg, m.last)
		if err != nil {
			return index.Block{}, false, err
		}
		m.page, m.done = rows, len(rows) < 512
		if len(rows) > 0 {
			m.last = rows[len(rows)-1].Term
		}
	}
	if len(m.page) == 0 {
		return index.Block{}, false, nil
	}
	b := m.page[0]
	m.page = m.page[1:]
	return b, true, nil
}

// buildMerge writes into segment seg (being built) the postings of
// segments sources whose chunks are still there (index.Merge), then puts
// seg in their place.
func (db *DB) buildMerge(ctx context.Context, seg int64, sources []index.SegmentSize) error {
	chunks, lengths, live, err := db.segmentChunks(ctx, sources)
	if err != nil {
		return err
	}
	cursors := make([]index.Cursor, len(sources))
	srcIDs := make([]any, len(sources))
	for i, s := range sources {
		cursors[i], srcIDs[i] = &mergeCursor{ctx: ctx, q: db.read, seg: s.ID}, s.ID
	}
	merged, err := index.Merge(cursors, chunks, lengths, live, func(blocks []index.Block) error {
		return db.update(ctx, func(tx *Tx) error {
			// Still this merge's (not taken for abandoned), and alive.
			res, err := tx.ExecContext(ctx, `UPDATE search_segments SET created_at = $1 WHERE id = $2 AND state = 'building'`, tx.now.Micros(), seg)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return cmpErr(err, errRaced)
			}
			return tx.insertBlocks(ctx, seg, blocks)
		})
	})
	if err != nil {
		return err
	}
	// The merged segment takes its sources' place.
	return db.update(ctx, func(tx *Tx) error {
		var args []any
		res, err := tx.ExecContext(ctx, `UPDATE search_segments SET state = 'dropped' WHERE state = 'live' AND `+sqlIn("id", srcIDs, &args), args...)
		if err != nil {
			return err
		}
		if got, err := res.RowsAffected(); err != nil || got != int64(len(srcIDs)) {
			return cmpErr(err, errRaced)
		}
		res, err = tx.ExecContext(ctx, `UPDATE search_segments SET state = 'live', chunks = $1, length = $2, norms = $3
			WHERE id = $4 AND state = 'building'`, merged.Chunks, merged.Length, merged.Norms, seg)
		if err != nil {
			return err
		}
		if got, err := res.RowsAffected(); err != nil || got != 1 {
			return cmpErr(err, errRaced)
		}
		return nil
	})
}

// IndexState is what the search index's upkeep has left to do.
type IndexState struct {
	Pending  int64 // Chunks not yet in a segment.
	Segments int64 // Live segments.
}

// SearchIndexState returns the index's pending chunks and live segments.
func (db *DB) SearchIndexState(ctx context.Context) (IndexState, error) {
	var s IndexState
	err := db.read.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM search_pending),
		(SELECT COUNT(*) FROM search_segments WHERE state = 'live')`).Scan(&s.Pending, &s.Segments)
	return s, mapError(err)
}
