package store

import (
	"container/heap"
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

// Scoring a search: the index as a search's snapshot sees it (its live
// segments and its pending chunks), the postings of the query's terms, and
// BM25 over the chunks of the pairs the caller may see.

// indexView is the index as a search sees it.
type indexView struct {
	segs           []any // The live segments' ids.
	chunks, length int64 // The chunks' number and total length.
	pending        []pendingChunk
}

// readIndex reads the live segments and the pending chunks.
func readIndex(ctx context.Context, r querier) (*indexView, error) {
	ix := &indexView{}
	rows, err := r.QueryContext(ctx, `SELECT id, chunks, length FROM search_segments WHERE state = 'live' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, chunks, length int64
		if err := rows.Scan(&id, &chunks, &length); err != nil {
			rows.Close()
			return nil, err
		}
		ix.segs = append(ix.segs, id)
		ix.chunks, ix.length = ix.chunks+chunks, ix.length+length
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	ix.pending, err = queryAll(ctx, r, func(s interface{ Scan(...any) error }) (pendingChunk, error) {
		var p pendingChunk
		return p, s.Scan(&p.chunk, &p.pair, &p.length, &p.terms)
	}, `SELECT chunk_id, cc_pair_id, length, terms FROM search_pending ORDER BY chunk_id`)
	if err != nil {
		return nil, err
	}
	for _, p := range ix.pending {
		ix.chunks, ix.length = ix.chunks+1, ix.length+int64(p.length)
	}
	return ix, nil
}

// segBlock is a term's block in a live segment.
type segBlock struct {
	seg      int64
	df       int64
	postings []byte
}

// blocks returns the live segments' blocks of terms (sorted), by term.
func (ix *indexView) blocks(ctx context.Context, r querier, terms []string) (map[string][]segBlock, error) {
	out := map[string][]segBlock{}
	if len(ix.segs) == 0 || len(terms) == 0 {
		return out, nil
	}
	var args []any
	rows, err := r.QueryContext(ctx, `SELECT segment_id, term, df, postings FROM search_blocks WHERE `+
		sqlIn("segment_id", ix.segs, &args)+` AND `+sqlIn("term", anys(terms), &args), args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var b segBlock
		var t string
		if err := rows.Scan(&b.seg, &t, &b.df, &b.postings); err != nil {
			rows.Close()
			return nil, err
		}
		out[t] = append(out[t], b)
	}
	return out, closeRows(rows)
}

// df returns the document frequencies of terms (sorted): their blocks'
// and the pending chunks' that hold them.
func (ix *indexView) df(terms []string, blocks map[string][]segBlock) (map[string]int64, error) {
	df := map[string]int64{}
	for _, t := range terms {
		for _, b := range blocks[t] {
			df[t] += b.df
		}
	}
	for _, p := range ix.pending {
		// A pending row that does not decode matches nothing: flushPending
		// drops it.
		_ = joinTerms(p.terms, terms, func(i, _ int) { df[terms[i]]++ })
	}
	return df, nil
}

// joinTerms calls fn(i, tf) for each term terms[i] (sorted) that a
// pending chunk's encoded terms b hold, with its frequency there.
func joinTerms(b []byte, terms []string, fn func(i, tf int)) error {
	i := 0
	return eachTerm(b, func(term []byte, tf int) bool {
		for i < len(terms) && terms[i] < string(term) {
			i++
		}
		if i < len(terms) && terms[i] == string(term) {
			fn(i, tf)
			i++
		}
		return i < len(terms)
	})
}

// expandPrefix returns up to quarry.MaxPrefixMatches terms of the index
// that begin with prefix (the most frequent of the first 256 in byte
// order), and their document frequencies.
func (ix *indexView) expandPrefix(ctx context.Context, r querier, prefix string) (map[string]int64, error) {
	end := prefix + "\U0010FFFF"
	set := map[string]bool{}
	if len(ix.segs) > 0 {
		var args []any
		where := sqlIn("segment_id", ix.segs, &args)
		args = append(args, prefix, end)
		terms, err := queryAll(ctx, r, func(s interface{ Scan(...any) error }) (string, error) {
			var t string
			return t, s.Scan(&t)
		}, `SELECT DISTINCT term FROM search_blocks WHERE `+where+` AND term >= $`+strconv.Itoa(len(args)-1)+
			` AND term < $`+strconv.Itoa(len(args))+` ORDER BY term LIMIT 256`, args...)
		if err != nil {
			return nil, err
		}
		for _, t := range terms {
			set[t] = true
		}
	}
	for _, p := range ix.pending {
		_ = eachTerm(p.terms, func(term []byte, _ int) bool { // One that does not decode matches nothing.
			if strings.HasPrefix(string(term), prefix) {
				set[string(term)] = true
			}
			return string(term) < prefix || strings.HasPrefix(string(term), prefix)
		})
	}
	cands := slices.Sorted(func(yield func(string) bool) {
		for t := range set {
			if !yield(t) {
				return
			}
		}
	})
	if len(cands) > 256 {
		cands = cands[:256]
	}
	if len(cands) == 0 {
		return nil, nil
	}
	df := map[string]int64{}
	if len(ix.segs) > 0 {
		var args []any
		rows, err := r.QueryContext(ctx, `SELECT term, SUM(df) FROM search_blocks WHERE `+sqlIn("segment_id", ix.segs, &args)+
			` AND `+sqlIn("term", anys(cands), &args)+` GROUP BY term`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var t string
			var n int64
			if err := rows.Scan(&t, &n); err != nil {
				rows.Close()
				return nil, err
			}
			df[t] = n
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
	}
	for _, p := range ix.pending {
		_ = joinTerms(p.terms, cands, func(i, _ int) { df[cands[i]]++ }) // One that does not decode matches nothing.
	}
	sort.SliceStable(cands, func(i, j int) bool { return df[cands[i]] > df[cands[j]] })
	out := map[string]int64{}
	for _, t := range cands {
		if df[t] > 0 && len(out) < quarry.MaxPrefixMatches {
			out[t] = df[t]
		}
	}
	return out, nil
}

// visiblePairs returns the pairs c may search (searchPairs), as a set; nil
// if none.
func visiblePairs(ctx context.Context, r querier, c *quarry.Caller) (map[int64]bool, error) {
	var args []any
	ids, err := queryAll(ctx, r, func(s interface{ Scan(...any) error }) (int64, error) {
		var id int64
		return id, s.Scan(&id)
	}, `SELECT sp.cc_pair_id FROM (SELECT id AS cc_pair_id FROM cc_pairs) sp WHERE `+searchPairs(c, "sp", &args), args...)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	set := make(map[int64]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set, nil
}

// scoreTerm is a term of a search, its weight (the times it was asked
// times its idf) and, for a word of the query's phrases, its bit in the
// mask of those a chunk must hold.
type scoreTerm struct {
	term string
	w    float64
	bit  uint64
}

// scored is a chunk's score.
type scored struct {
	chunk int64
	score float64
}

// scoredHeap orders chunks by score, the best first, then by id.
type scoredHeap []scored

func (h scoredHeap) Len() int { return len(h) }
func (h scoredHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	return h[i].chunk < h[j].chunk
}
func (h scoredHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// scoreChunks scores, by BM25 (Lucene's), every chunk of a visible pair
// that holds one of terms and every phrase word of mask need (bits of
// scoreTerm.bit),
// and returns them as a heap, the best on top. In a segment, only the
// visible pairs' postings are decoded (a block keeps them by pair), and a
// pair's chunks are scored a chunk at a time, its terms' postings read
// side by side in the chunks' order.
func (ix *indexView) scoreChunks(terms []scoreTerm, blocks map[string][]segBlock, visible map[int64]bool, need uint64, avgdl float64) (*scoredHeap, error) {
	sees := func(pair int64) bool { return visible[pair] }
	norm := func(length int) float64 { return bm25K1 * (1 - bm25B + bm25B*float64(length)/avgdl) }
	var out scoredHeap
	type cursor struct {
		r   runReader
		bit uint64
		w   float64
	}
	type key struct{ seg, pair int64 }
	byRun := map[key][]*cursor{}
	for _, t := range terms {
		for _, b := range blocks[t.term] {
			runs, err := blockRuns(b.postings)
			if err != nil {
				return nil, err
			}
			for _, r := range runs {
				if !sees(r.pair) {
					continue
				}
				c := &cursor{r: runReader{b: r.b, cur: posting{pair: r.pair}}, bit: t.bit, w: t.w}
				if c.r.next() {
					byRun[key{b.seg, r.pair}] = append(byRun[key{b.seg, r.pair}], c)
				} else if c.r.bad {
					return nil, errCorruptIndex
				}
			}
		}
	}
	for _, cursors := range byRun {
		for len(cursors) > 0 {
			chunk := cursors[0].r.cur.chunk
			for _, c := range cursors[1:] {
				chunk = min(chunk, c.r.cur.chunk)
			}
			var score float64
			var has uint64
			for i := 0; i < len(cursors); {
				c := cursors[i]
				if c.r.cur.chunk != chunk {
					i++
					continue
				}
				p := c.r.cur
				has |= c.bit
				score += c.w * float64(p.tf) / (float64(p.tf) + norm(p.length))
				if c.r.next() {
					i++
					continue
				}
				if c.r.bad {
					return nil, errCorruptIndex
				}
				cursors = slices.Delete(cursors, i, i+1)
			}
			if has&need == need {
				out = append(out, scored{chunk, score})
			}
		}
	}
	names := make([]string, len(terms))
	for i, t := range terms {
		names[i] = t.term
	}
	for _, p := range ix.pending {
		if !sees(p.pair) {
			continue
		}
		var score float64
		var has uint64
		matched := false
		if err := joinTerms(p.terms, names, func(j, tf int) {
			has, matched = has|terms[j].bit, true
			score += terms[j].w * float64(tf) / (float64(tf) + norm(p.length))
		}); err != nil {
			continue // A pending row that does not decode matches nothing (flushPending drops it).
		}
		if matched && has&need == need {
			out = append(out, scored{p.chunk, score})
		}
	}
	heap.Init(&out)
	return &out, nil
}
