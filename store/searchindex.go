package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The search index's storage (migration 00017), as Lucene keeps an index:
// immutable segments, each a block of packed postings per term, merged
// into bigger ones as they pile up. A document's chunks are written
// pending (a row each, with its terms) in the transaction that writes the
// document, and searched from there at once; MergeIndex later writes the
// pending chunks into a segment, and merges segments of a tier into one,
// apart from the writes of documents. A segment's postings of a chunk
// deleted since it was written stay in it, matching no chunk, until a
// merge drops them.

// Sizes of the index's upkeep.
const (
	// flushChunks is the most pending chunks a segment is made of at
	// once.
	flushChunks = 10_000
	// nudgeChunks is how many pending chunks a server writes before it
	// nudges its upkeep's flush (RunIndexUpkeep): about what searches
	// read pending at most while documents pour in, give or take what
	// the other servers write meanwhile and a flush's own time.
	nudgeChunks = 2_000
	// mergeFactor is how many segments of a tier (their chunks' count
	// has the same number of decimal digits) are merged into one.
	mergeFactor = 10
	// maxMergedChunks bounds a merge's result: segments that large are
	// not merged further, so that a merge never rewrites the index whole.
	maxMergedChunks = 250_000
	// mergeBlockBytes is how much of a merge's output is written in one
	// transaction.
	mergeBlockBytes = 8 << 20
	// staleBuild is how long a merge may go without writing a batch
	// (each batch renews its time) before another server takes it for
	// abandoned (its server stopped) and drops it.
	staleBuild = 5 * time.Minute
)

// posting is a term's occurrence in a chunk: the chunk, its pair, the
// term's weighted frequency there and the chunk's length.
type posting struct {
	chunk, pair int64
	tf, length  int
}

// errCorruptIndex reports a block or a pending chunk's terms that do not
// decode.
var errCorruptIndex = errors.New("store: the search index holds a block that does not decode")

// A block holds a term's postings in a segment, by pair, so that a search
// decodes only those of the pairs its caller may see: a header, the
// number of pairs then for each (in increasing order) the gap from the
// previous pair's id, its postings' count and their bytes' length; then
// each pair's postings, in the order of their chunks' ids: the gap from
// the previous chunk's id (from 0 for a pair's first), the frequency and
// the length, each a varint.

// encodeBlock encodes postings (which it sorts by pair, then chunk).
func encodeBlock(ps []posting) []byte {
	slices.SortFunc(ps, func(a, b posting) int {
		if a.pair != b.pair {
			return cmp.Compare(a.pair, b.pair)
		}
		return cmp.Compare(a.chunk, b.chunk)
	})
	var header, body []byte
	runs := 0
	var prevPair int64
	for i := 0; i < len(ps); {
		j, start := i, len(body)
		var prev int64
		for ; j < len(ps) && ps[j].pair == ps[i].pair; j++ {
			body = binary.AppendUvarint(body, uint64(ps[j].chunk-prev))
			body = binary.AppendUvarint(body, uint64(ps[j].tf))
			body = binary.AppendUvarint(body, uint64(ps[j].length))
			prev = ps[j].chunk
		}
		header = binary.AppendUvarint(header, uint64(ps[i].pair-prevPair))
		header = binary.AppendUvarint(header, uint64(j-i))
		header = binary.AppendUvarint(header, uint64(len(body)-start))
		prevPair, runs, i = ps[i].pair, runs+1, j
	}
	out := binary.AppendUvarint(make([]byte, 0, len(header)+len(body)+4), uint64(runs))
	return append(append(out, header...), body...)
}

// run is a pair's postings in a block.
type run struct {
	pair  int64
	count int
	b     []byte
}

// blockRuns returns the runs of a block, by pair.
func blockRuns(b []byte) ([]run, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorruptIndex
	}
	b = b[k:]
	runs := make([]run, n)
	lengths := make([]uint64, n)
	var pair int64
	for i := range runs {
		var v [3]uint64
		for j := range v {
			x, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, errCorruptIndex
			}
			v[j], b = x, b[k:]
		}
		if pair += int64(v[0]); pair < 0 || v[0] > 1<<62 {
			return nil, errCorruptIndex
		}
		runs[i], lengths[i] = run{pair: pair, count: int(v[1])}, v[2]
	}
	for i := range runs {
		if lengths[i] > uint64(len(b)) {
			return nil, errCorruptIndex
		}
		runs[i].b, b = b[:lengths[i]], b[lengths[i]:]
	}
	return runs, nil
}

// runReader reads a run's postings in order.
type runReader struct {
	b   []byte
	cur posting
	bad bool
}

// next reads the next posting into cur and reports whether there was one.
func (r *runReader) next() bool {
	if len(r.b) == 0 {
		return false
	}
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(r.b)
		if n <= 0 {
			r.b, r.bad = nil, true
			return false
		}
		v[i], r.b = x, r.b[n:]
	}
	if v[0] > 1<<62 || r.cur.chunk+int64(v[0]) < r.cur.chunk {
		r.b, r.bad = nil, true
		return false
	}
	r.cur = posting{chunk: r.cur.chunk + int64(v[0]), pair: r.cur.pair, tf: int(v[1]), length: int(v[2])}
	return true
}

// decodeBlock returns every posting of a block.
func decodeBlock(b []byte) ([]posting, error) {
	runs, err := blockRuns(b)
	if err != nil {
		return nil, err
	}
	var out []posting
	for _, r := range runs {
		rr := runReader{b: r.b, cur: posting{pair: r.pair}}
		n := 0
		for ; rr.next(); n++ {
			out = append(out, rr.cur)
		}
		if rr.bad || n != r.count { // A run must hold the postings its header counts.
			return nil, errCorruptIndex
		}
	}
	return out, nil
}

// encodeTerms encodes a chunk's terms, in byte order, for its pending row.
func encodeTerms(tf map[string]int) []byte {
	keys := make([]string, 0, len(tf))
	n := 0
	for t := range tf {
		keys = append(keys, t)
		n += len(t) + 4
	}
	sort.Strings(keys)
	b := make([]byte, 0, n)
	for _, t := range keys {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(tf[t]))
	}
	return b
}

// eachTerm calls fn with each term of what encodeTerms encoded, in its
// order, and its frequency, until fn returns false. The term is a slice
// of b: fn must not keep it.
func eachTerm(b []byte, fn func(term []byte, tf int) bool) error {
	for len(b) > 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return errCorruptIndex
		}
		term := b[n : n+int(l)]
		b = b[n+int(l):]
		tf, n := binary.Uvarint(b)
		if n <= 0 {
			return errCorruptIndex
		}
		b = b[n:]
		if !fn(term, int(tf)) {
			return nil
		}
	}
	return nil
}

// appendNorm appends a chunk's id and length to a segment's norms, whose
// last chunk is prev.
func appendNorm(b []byte, prev, chunk int64, length int) []byte {
	b = binary.AppendUvarint(b, uint64(chunk-prev))
	return binary.AppendUvarint(b, uint64(length))
}

// decodeNorms returns the chunks and lengths of a segment's norms.
func decodeNorms(b []byte) (chunks []int64, lengths []int, err error) {
	var prev int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, nil, errCorruptIndex
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, nil, errCorruptIndex
		}
		b = b[n:]
		prev += int64(d)
		chunks, lengths = append(chunks, prev), append(lengths, int(l))
	}
	return chunks, lengths, nil
}

// block is a term's postings in a segment being written.
type block struct {
	term     string
	postings []posting
}

// termPosting is a term of a chunk and its frequency there.
type termPosting struct {
	term string
	tf   int
}

// pendingChunk is a chunk as its pending row has it.
type pendingChunk struct {
	chunk, pair int64
	length      int
	terms       []byte
}

// addPending writes chunk id of pair pairID as pending: its length and
// terms, for the searches until MergeIndex writes it into a segment.
func (tx *Tx) addPending(ctx context.Context, id, pairID int64, length int, tf map[string]int) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO search_pending (chunk_id, cc_pair_id, length, terms) VALUES ($1, $2, $3, $4)`,
		id, pairID, length, encodeTerms(tf)); err != nil {
		return err
	}
	tx.pendingChunks++
	return nil
}

// MergeIndex does the search index's upkeep: it writes the pending chunks
// (up to flushChunks of them) into a new segment, merges the segments of a
// tier into one if mergeFactor of them are live, and removes the blocks of
// the segments merges dropped. It reports whether it wrote a segment.
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
				res, err := tx.ExecContext(ctx, `DELETE FROM search_blocks WHERE segment_id = $1 AND term IN (
					SELECT term FROM search_blocks WHERE segment_id = $1 ORDER BY term LIMIT 20000)`, id)
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
// holds mergeFactor segments.
func (db *DB) SettleIndex(ctx context.Context) error {
	for {
		did, err := db.MergeIndex(ctx)
		if err != nil || !did {
			return err
		}
	}
}

// RunIndexUpkeep runs the search index's upkeep until ctx ends, as every
// server does beside its requests (quarry serve): pending chunks are
// written into segments every interval and whenever this server has
// written nudgeChunks of them since, in a loop of their own, so that a
// long merge never holds them back; the tiers are merged every interval,
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
	pending, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (pendingChunk, error) {
		var p pendingChunk
		return p, r.Scan(&p.chunk, &p.pair, &p.length, &p.terms)
	}, `SELECT chunk_id, cc_pair_id, length, terms FROM search_pending ORDER BY chunk_id LIMIT $1`, flushChunks)
	if err != nil || len(pending) == 0 {
		return false, err
	}
	byTerm := map[string]*block{}
	var norms []byte
	var prev, length int64
	ids := make([]any, len(pending))
	for i, p := range pending {
		var ps []termPosting
		if err := eachTerm(p.terms, func(term []byte, tf int) bool {
			ps = append(ps, termPosting{string(term), tf})
			return true
		}); err != nil {
			// Terms that do not decode: the chunk is written without
			// postings (found by no search) rather than stopping every
			// flush after it.
			ps = nil
		}
		for _, x := range ps {
			k := byTerm[x.term]
			if k == nil {
				k = &block{term: x.term}
				byTerm[k.term] = k
			}
			k.postings = append(k.postings, posting{chunk: p.chunk, pair: p.pair, tf: x.tf, length: p.length})
		}
		norms = appendNorm(norms, prev, p.chunk, p.length)
		prev, length, ids[i] = p.chunk, length+int64(p.length), p.chunk
	}
	blocks := encodeBlocks(sortedBlocks(byTerm))
	err = db.update(ctx, func(tx *Tx) error {
		if ok, err := tx.tryIndexLock(ctx); err != nil || !ok {
			return cmpErr(err, errRaced)
		}
		var seg int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO search_segments (state, chunks, length, norms, created_at)
			VALUES ('live', $1, $2, $3, $4) RETURNING id`, len(pending), length, norms, tx.now.Micros()).Scan(&seg); err != nil {
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

// sortedBlocks returns blocks in their terms' byte order.
func sortedBlocks(blocks map[string]*block) []*block {
	out := make([]*block, 0, len(blocks))
	for _, k := range blocks {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *block) int { return strings.Compare(a.term, b.term) })
	return out
}

// encodedBlock is a block as a segment's row keeps it.
type encodedBlock struct {
	term     string
	df       int
	postings []byte
}

// encodeBlocks encodes blocks, in their order.
func encodeBlocks(blocks []*block) []encodedBlock {
	out := make([]encodedBlock, len(blocks))
	for i, k := range blocks {
		out[i] = encodedBlock{k.term, len(k.postings), encodeBlock(k.postings)}
	}
	return out
}

// insertBlocks writes blocks to segment seg, in statements of a few fixed
// sizes (so that each stays prepared).
func (tx *Tx) insertBlocks(ctx context.Context, seg int64, blocks []encodedBlock) error {
	for _, size := range []int{100, 10, 1} {
		for len(blocks) >= size {
			var b strings.Builder
			b.WriteString(`INSERT INTO search_blocks (segment_id, term, df, postings) VALUES `)
			args := make([]any, 0, size*4)
			for i, k := range blocks[:size] {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "($%d, $%d, $%d, $%d)", i*4+1, i*4+2, i*4+3, i*4+4)
				args = append(args, seg, k.term, k.df, k.postings)
			}
			if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
				return err
			}
			blocks = blocks[size:]
		}
	}
	return nil
}

// segmentInfo is a live segment as a merge chooses it.
type segmentInfo struct {
	id, chunks int64
}

// tier is the tier of a segment of n chunks: their count's decimal digits.
func tier(n int64) int { return int(math.Log10(float64(max(n, 1)))) }

// mergeTier merges the mergeFactor smallest live segments of the tier
// that holds the most (at least mergeFactor; the smallest of them that fit
// in maxMergedChunks, if two do) into one, and reports whether it did.
// The merged segment is built apart (state building, which no search
// reads, in transactions of about mergeBlockBytes), then takes its
// sources' place in one transaction, which drops them (removeDropped
// removes them). Postings of chunks deleted since are left out.
func (db *DB) mergeTier(ctx context.Context) (bool, error) {
	segs, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (segmentInfo, error) {
		var s segmentInfo
		return s, r.Scan(&s.id, &s.chunks)
	}, `SELECT id, chunks FROM search_segments WHERE state = 'live' ORDER BY chunks, id`)
	if err != nil {
		return false, err
	}
	byTier := map[int][]segmentInfo{}
	for _, s := range segs {
		byTier[tier(s.chunks)] = append(byTier[tier(s.chunks)], s)
	}
	// The tier holding the most segments (the lower one of two as full),
	// so that under a steady flow of writes the bigger tiers are merged
	// too, not only the smallest one, which fills again meanwhile.
	var sources []segmentInfo
	best := 0
	for _, t := range slices.Sorted(maps.Keys(byTier)) {
		in := byTier[t]
		if len(in) < mergeFactor || len(in) <= best {
			continue
		}
		// The smallest of them that fit in maxMergedChunks, if two do.
		var fit []segmentInfo
		var total int64
		for i, x := range in[:mergeFactor] {
			if total += x.chunks; total > maxMergedChunks {
				break
			}
			fit = in[:i+1]
		}
		if len(fit) >= 2 {
			sources, best = fit, len(in)
		}
	}
	if sources == nil {
		return false, nil
	}
	return db.merge(ctx, sources)
}

// merge merges segments sources into one (see mergeTier), unless another
// server's merge is under way or took them first; it reports whether it
// did.
func (db *DB) merge(ctx context.Context, sources []segmentInfo) (bool, error) {
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

// expungeShare is the share of a segment's chunks gone (written again or
// deleted since it was written) from which ExpungeIndex rewrites it.
const expungeShare = 0.25

// expungeInterval is how often RunIndexUpkeep runs ExpungeIndex, which
// reads every live segment's chunks.
const expungeInterval = 10 * time.Minute

// ExpungeIndex rewrites alone (a merge of one) the largest live segment of
// which at least expungeShare of the chunks are gone, leaving their
// postings out: postings that would otherwise stay in a segment no tier
// merges again (one of maxMergedChunks), counting in the statistics. It
// reports whether it did.
func (db *DB) ExpungeIndex(ctx context.Context) (bool, error) {
	segs, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (segmentInfo, error) {
		var s segmentInfo
		return s, r.Scan(&s.id, &s.chunks)
	}, `SELECT id, chunks FROM search_segments WHERE state = 'live' ORDER BY chunks DESC, id`)
	if err != nil {
		return false, err
	}
	for _, s := range segs {
		chunks, _, isLive, err := db.segmentChunks(ctx, []segmentInfo{s})
		if errors.Is(err, errRaced) {
			continue // Merged meanwhile.
		}
		if err != nil {
			return false, err
		}
		gone := 0
		for _, c := range chunks {
			if !isLive(c) {
				gone++
			}
		}
		if gone > 0 && float64(gone) >= expungeShare*float64(len(chunks)) {
			return db.merge(ctx, []segmentInfo{s})
		}
	}
	return false, nil
}

// segmentChunks returns the chunks of live segments sources (ids and
// lengths, as their norms list them) and which chunks are still there;
// errRaced if one of the segments is no longer live.
func (db *DB) segmentChunks(ctx context.Context, sources []segmentInfo) (chunks []int64, lengths []int, isLive func(int64) bool, err error) {
	for _, s := range sources {
		var norms []byte
		if err := db.read.QueryRowContext(ctx, `SELECT norms FROM search_segments WHERE id = $1 AND state = 'live'`, s.id).Scan(&norms); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil, nil, nil, errRaced
			}
			return nil, nil, nil, err
		}
		c, l, err := decodeNorms(norms)
		if err != nil {
			return nil, nil, nil, err
		}
		chunks, lengths = append(chunks, c...), append(lengths, l...)
	}
	if len(chunks) == 0 {
		return nil, nil, func(int64) bool { return false }, nil
	}
	lo, hi := slices.Min(chunks), slices.Max(chunks)
	if lo < 0 || hi-lo > 1<<34 { // A bitmap of 2 GiB: norms this sparse are not a segment's.
		return nil, nil, nil, errCorruptIndex
	}
	live := make([]uint64, (hi-lo)/64+1)
	ids, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (int64, error) {
		var id int64
		return id, r.Scan(&id)
	}, `SELECT id FROM search_chunks WHERE id >= $1 AND id <= $2`, lo, hi)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, id := range ids {
		live[(id-lo)/64] |= 1 << ((id - lo) % 64)
	}
	return chunks, lengths, func(id int64) bool { return id >= lo && id <= hi && live[(id-lo)/64]&(1<<((id-lo)%64)) != 0 }, nil
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
// page at a time.
type mergeCursor struct {
	seg  int64
	page []mergeRow
	last string
	done bool
}

type mergeRow struct {
	term     string
	postings []byte
}

// fill reads the cursor's next page if its page is used up.
func (m *mergeCursor) fill(ctx context.Context, q querier) error {
	if len(m.page) > 0 || m.done {
		return nil
	}
	rows, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) (mergeRow, error) {
		var x mergeRow
		return x, r.Scan(&x.term, &x.postings)
	}, `SELECT term, postings FROM search_blocks WHERE segment_id = $1 AND term > $2 ORDER BY term LIMIT 512`, m.seg, m.last)
	if err != nil {
		return err
	}
	m.page, m.done = rows, len(rows) < 512
	if len(rows) > 0 {
		m.last = rows[len(rows)-1].term
	}
	return nil
}

// buildMerge writes into segment seg (being built) the postings of
// segments sources whose chunks are still there, then puts seg in their
// place.
func (db *DB) buildMerge(ctx context.Context, seg int64, sources []segmentInfo) error {
	// The chunks of the sources, and which of them are still there.
	chunks, lengths, isLive, err := db.segmentChunks(ctx, sources)
	if err != nil {
		return err
	}
	srcIDs := make([]any, len(sources))
	for i, s := range sources {
		srcIDs[i] = s.id
	}
	// The merged segment's norms: its live chunks, in order.
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return chunks[order[a]] < chunks[order[b]] })
	var norms []byte
	var prev, total, n int64
	for _, i := range order {
		if isLive(chunks[i]) {
			norms = appendNorm(norms, prev, chunks[i], lengths[i])
			prev, total, n = chunks[i], total+int64(lengths[i]), n+1
		}
	}
	// The blocks: each term's postings from every source, in the chunks'
	// order, a k-way merge of the sources' own orders.
	cursors := make([]*mergeCursor, len(sources))
	for i, s := range sources {
		cursors[i] = &mergeCursor{seg: s.id}
	}
	var out []*block
	size := 0
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		encoded := encodeBlocks(out)
		err := db.update(ctx, func(tx *Tx) error {
			// Still this merge's (not taken for abandoned), and alive.
			res, err := tx.ExecContext(ctx, `UPDATE search_segments SET created_at = $1 WHERE id = $2 AND state = 'building'`, tx.now.Micros(), seg)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return cmpErr(err, errRaced)
			}
			return tx.insertBlocks(ctx, seg, encoded)
		})
		out, size = nil, 0
		return err
	}
	for {
		term := ""
		found := false
		for _, c := range cursors {
			if err := c.fill(ctx, db.read); err != nil {
				return err
			}
			if len(c.page) > 0 && (!found || c.page[0].term < term) {
				term, found = c.page[0].term, true
			}
		}
		if !found {
			break
		}
		k := &block{term: term}
		for _, c := range cursors {
			if len(c.page) > 0 && c.page[0].term == term {
				ps, err := decodeBlock(c.page[0].postings)
				if err != nil {
					return err
				}
				for _, p := range ps {
					if isLive(p.chunk) {
						k.postings = append(k.postings, p)
					}
				}
				c.page = c.page[1:]
			}
		}
		if len(k.postings) > 0 {
			out = append(out, k)
			size += len(k.postings)*6 + len(term)
		}
		if size >= mergeBlockBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
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
			WHERE id = $4 AND state = 'building'`, n, total, norms, seg)
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
