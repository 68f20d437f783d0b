package store

import (
	"context"
	"strconv"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
)

// What a search reads of the index, in its snapshot, for package index to
// score (index.Score): the pairs the caller may see, the live segments'
// statistics and the pending chunks (index.Snapshot), and the live
// segments' blocks of the query's terms (index.Reader).

// readIndex reads the live segments (their ids, for segmentReader) and the
// pending chunks.
func readIndex(ctx context.Context, r querier) (*index.Snapshot, []any, error) {
	s := &index.Snapshot{}
	var segs []any
	rows, err := r.QueryContext(ctx, `SELECT id, chunks, length FROM search_segments WHERE state = 'live' ORDER BY id`)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var id, chunks, length int64
		if err := rows.Scan(&id, &chunks, &length); err != nil {
			rows.Close()
			return nil, nil, err
		}
		segs = append(segs, id)
		s.Chunks, s.Length = s.Chunks+chunks, s.Length+length
	}
	if err := closeRows(rows); err != nil {
		return nil, nil, err
	}
	s.Pending, err = queryAll(ctx, r, func(x interface{ Scan(...any) error }) (index.Pending, error) {
		var p index.Pending
		return p, x.Scan(&p.Chunk, &p.Pair, &p.Length, &p.Terms)
	}, `SELECT chunk_id, cc_pair_id, length, terms FROM search_pending ORDER BY chunk_id`)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range s.Pending {
		s.Chunks, s.Length = s.Chunks+1, s.Length+int64(p.Length)
	}
	return s, segs, nil
}

// segmentReader reads the blocks of live segments segs in a search's
// snapshot r (index.Reader), through cache: a block a search read before
// is not read again (a live segment's blocks never change).
type segmentReader struct {
	ctx   context.Context
	r     querier
	segs  []any
	cache *blockCache
}

// Blocks returns the segments' blocks of terms: those the cache keeps,
// and the others in one statement.
func (s *segmentReader) Blocks(terms []string) ([]index.Block, error) {
	if len(s.segs) == 0 || len(terms) == 0 {
		return nil, nil
	}
	var out []index.Block
	type key struct {
		seg  int64
		term string
	}
	missed := map[key]bool{}
	var segs, missing []any
	for _, seg := range s.segs {
		segMissed := false
		for _, t := range terms {
			b, ok, found := s.cache.Get(seg.(int64), t)
			switch {
			case !found:
				missed[key{seg.(int64), t}], segMissed = true, true
			case ok:
				out = append(out, b)
			}
		}
		if segMissed {
			segs = append(segs, seg)
		}
	}
	if len(missed) == 0 {
		return out, nil
	}
	for _, t := range terms {
		for _, seg := range segs {
			if missed[key{seg.(int64), t}] {
				missing = append(missing, t)
				break
			}
		}
	}
	var args []any
	read, err := queryAll(s.ctx, s.r, func(x interface{ Scan(...any) error }) (index.Block, error) {
		var b index.Block
		return b, x.Scan(&b.Segment, &b.Term, &b.DF, &b.Postings)
	}, `SELECT segment_id, term, df, postings FROM search_blocks WHERE `+
		sqlIn("segment_id", segs, &args)+` AND `+sqlIn("term", missing, &args), args...)
	if err != nil {
		return nil, err
	}
	for _, b := range read {
		k := key{b.Segment, b.Term}
		if missed[k] { // Not one the cache gave already.
			delete(missed, k)
			out = append(out, b)
			s.cache.Put(b)
		}
	}
	for k := range missed {
		s.cache.PutAbsent(k.seg, k.term)
	}
	return out, nil
}

// PrefixTerms returns the segments' first n terms that begin with prefix.
func (s *segmentReader) PrefixTerms(prefix string, n int) ([]string, error) {
	if len(s.segs) == 0 {
		return nil, nil
	}
	var args []any
	where := sqlIn("segment_id", s.segs, &args)
	args = append(args, prefix, prefix+"\U0010FFFF")
	return queryAll(s.ctx, s.r, func(x interface{ Scan(...any) error }) (string, error) {
		var t string
		return t, x.Scan(&t)
	}, `SELECT DISTINCT term FROM search_blocks WHERE `+where+` AND term >= $`+strconv.Itoa(len(args)-1)+
		` AND term < $`+strconv.Itoa(len(args))+` ORDER BY term LIMIT `+strconv.Itoa(n), args...)
}

// DF returns the segments' document frequencies of terms.
func (s *segmentReader) DF(terms []string) (map[string]int64, error) {
	df := map[string]int64{}
	if len(s.segs) == 0 || len(terms) == 0 {
		return df, nil
	}
	var args []any
	rows, err := s.r.QueryContext(s.ctx, `SELECT term, SUM(df) FROM search_blocks WHERE `+sqlIn("segment_id", s.segs, &args)+
		` AND `+sqlIn("term", anys(terms), &args)+` GROUP BY term`, args...)
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
	return df, closeRows(rows)
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
