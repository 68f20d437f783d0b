package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/quarryhq/quarry/index"
)

// The check of the search index against the documents it indexes (issue
// 39): what `quarry check` and `quarry backup` run beside the check of
// the database's pages and secrets, so that a damaged index does not pass.
// It decodes with the engine's own codec (package index) and changes
// nothing.

// IndexCheck is what CheckIndex found: the index's figures, and what is
// wrong with it. It holds ids and terms, never a document's text.
type IndexCheck struct {
	Documents int64 // Documents stored.
	Chunks    int64 // Their chunks.
	Pending   int64 // Chunks not yet in a segment.
	Segments  int64 // Live segments.
	Listed    int64 // Chunks the live segments' norms list (those deleted since included).
	Blocks    int64 // The live segments' blocks: a term each.
	Postings  int64 // The postings the blocks hold.
	// Problems says what is wrong: the first maxIndexProblems, then how
	// many more; none if the index is sound.
	Problems []string
	found    int
	Elapsed  time.Duration
}

// maxIndexProblems bounds the problems an IndexCheck lists.
const maxIndexProblems = 20

// problem records what is wrong.
func (r *IndexCheck) problem(format string, args ...any) {
	r.found++
	if len(r.Problems) < maxIndexProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// Found returns how many problems the check found (Problems lists the
// first of them).
func (r *IndexCheck) Found() int { return r.found }

// Summary renders the figures of r as one sentence.
func (r *IndexCheck) Summary() string {
	return fmt.Sprintf("%s, %s (%s pending, the rest in %s listing %s), %s of %s",
		count(r.Documents, "document"), count(r.Chunks, "chunk"), countInt(r.Pending), count(r.Segments, "live segment"),
		count(r.Listed, "chunk"), count(r.Blocks, "block"), count(r.Postings, "posting"))
}

// Verdict says what the check found, as a sentence.
func (r *IndexCheck) Verdict() string {
	if r.found == 0 {
		return "every document has its chunks; every chunk is pending or in one live segment; every segment's norms and blocks decode and agree"
	}
	more := ""
	if r.found > len(r.Problems) {
		more = fmt.Sprintf("; and %d more", r.found-len(r.Problems))
	}
	return fmt.Sprintf("%s: %s%s", count(int64(r.found), "problem"), joinSemicolons(r.Problems), more)
}

// count renders n things: "1 chunk", "3 chunks".
func count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return countInt(n) + " " + thing + "s"
}

// countInt renders n with thousands separated by commas.
func countInt(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func joinSemicolons(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "; "
		}
		out += x
	}
	return out
}

// liveSegment is a live segment as the check reads it.
type liveSegment struct {
	id      int64
	chunks  []int64 // In increasing order, as its norms list them.
	lengths []int
}

// CheckIndex checks the search index against the documents it indexes,
// from one snapshot: every document has its chunks, numbered from 0 with
// no gap; every chunk is pending or listed by one live segment's norms
// (not both, not two), as pending rows with its pair and length; every
// live segment's norms decode and agree with its counts; every block of a
// live segment decodes, holds the postings it counts, and each posting
// names a chunk its segment lists, with the length the norms give it. It
// reads every row of the index once, and changes nothing. It fails only
// when the database cannot be read: the result says what is wrong.
func (db *DB) CheckIndex(ctx context.Context) (*IndexCheck, error) {
	start := time.Now()
	r := &IndexCheck{}
	err := db.snapshot(ctx, func(q querier) error {
		if err := q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM documents), (SELECT COUNT(*) FROM search_chunks),
			(SELECT COUNT(*) FROM search_pending), (SELECT COUNT(*) FROM search_segments WHERE state = 'live')`).
			Scan(&r.Documents, &r.Chunks, &r.Pending, &r.Segments); err != nil {
			return err
		}
		if err := checkDocumentChunks(ctx, q, r); err != nil {
			return err
		}
		segs, err := checkNorms(ctx, q, r)
		if err != nil {
			return err
		}
		if err := checkChunkPlaces(ctx, q, r, segs); err != nil {
			return err
		}
		for _, s := range segs {
			if err := checkBlocks(ctx, q, r, s); err != nil {
				return err
			}
		}
		return nil
	})
	r.Elapsed = time.Since(start)
	return r, mapError(err)
}

// checkDocumentChunks checks that every document has chunks numbered from
// 0 with no gap, and that every chunk has its document.
func checkDocumentChunks(ctx context.Context, q querier, r *IndexCheck) error {
	rows, err := q.QueryContext(ctx, `SELECT d.cc_pair_id, d.id FROM documents d WHERE NOT EXISTS
		(SELECT 1 FROM search_chunks c WHERE c.cc_pair_id = d.cc_pair_id AND c.document_id = d.id) ORDER BY d.cc_pair_id, d.id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			pair int64
			doc  string
		)
		if err := rows.Scan(&pair, &doc); err != nil {
			rows.Close()
			return err
		}
		r.problem("document %q of cc-pair %d has no chunks: no search finds it", doc, pair)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	rows, err = q.QueryContext(ctx, `SELECT cc_pair_id, document_id, COUNT(*), MIN(chunk_no), MAX(chunk_no) FROM search_chunks
		GROUP BY cc_pair_id, document_id HAVING MIN(chunk_no) <> 0 OR MAX(chunk_no) + 1 <> COUNT(*) ORDER BY cc_pair_id, document_id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			pair, n, lo, hi int64
			doc             string
		)
		if err := rows.Scan(&pair, &doc, &n, &lo, &hi); err != nil {
			rows.Close()
			return err
		}
		r.problem("document %q of cc-pair %d has %s numbered %d to %d: some are missing", doc, pair, count(n, "chunk"), lo, hi)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	var orphans int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM search_chunks c WHERE NOT EXISTS
		(SELECT 1 FROM documents d WHERE d.cc_pair_id = c.cc_pair_id AND d.id = c.document_id)`).Scan(&orphans); err != nil {
		return err
	}
	if orphans > 0 {
		r.problem("%s belong to no document", count(orphans, "chunk"))
	}
	return nil
}

// checkNorms reads the norms of every live segment and checks them
// against the segment's counts; it returns the segments whose norms
// decode.
func checkNorms(ctx context.Context, q querier, r *IndexCheck) ([]*liveSegment, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, chunks, length, norms FROM search_segments WHERE state = 'live' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	var segs []*liveSegment
	for rows.Next() {
		var (
			id, chunks, length int64
			norms              []byte
		)
		if err := rows.Scan(&id, &chunks, &length, &norms); err != nil {
			rows.Close()
			return nil, err
		}
		ids, lengths, err := index.DecodeNorms(norms)
		if err != nil {
			r.problem("segment %d's norms do not decode", id)
			continue
		}
		var total int64
		for _, l := range lengths {
			total += int64(l)
		}
		switch {
		case int64(len(ids)) != chunks:
			r.problem("segment %d's norms list %s, and the segment says %d", id, count(int64(len(ids)), "chunk"), chunks)
		case total != length:
			r.problem("segment %d's norms add up to a length of %d, and the segment says %d", id, total, length)
		}
		sorted := true
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				r.problem("segment %d's norms list chunk %d after chunk %d", id, ids[i], ids[i-1])
				sorted = false
				break
			}
		}
		r.Listed += int64(len(ids))
		if sorted {
			segs = append(segs, &liveSegment{id: id, chunks: ids, lengths: lengths})
		}
	}
	return segs, closeRows(rows)
}

// checkChunkPlaces checks that every chunk is either pending, with its
// pair and length, or listed by one live segment, with its length, and
// that no pending row or segment names a chunk twice. It walks the chunks,
// the pending rows and the segments' norms in the order of their chunk
// ids, so that its memory follows the rows, not the range of the ids.
func checkChunkPlaces(ctx context.Context, q querier, r *IndexCheck, segs []*liveSegment) error {
	// Every chunk the segments list, by id, with the segment (its index
	// in segs) and the length its norms give.
	type listed struct {
		chunk  int64
		seg    int32
		length int32
	}
	var all []listed
	for i, s := range segs {
		for j, c := range s.chunks {
			all = append(all, listed{c, int32(i), int32(s.lengths[j])})
		}
	}
	slices.SortFunc(all, func(a, b listed) int { return cmp.Or(cmp.Compare(a.chunk, b.chunk), cmp.Compare(a.seg, b.seg)) })
	for i := 1; i < len(all); i++ {
		if all[i].chunk == all[i-1].chunk {
			r.problem("chunk %d is listed by segments %d and %d: its postings count twice", all[i].chunk, segs[all[i-1].seg].id, segs[all[i].seg].id)
		}
	}
	// segmentOf returns the entry of all listing chunk id, advancing k
	// (ids come in increasing order).
	segmentOf := func(k *int, id int64) *listed {
		for *k < len(all) && all[*k].chunk < id {
			*k++
		}
		if *k < len(all) && all[*k].chunk == id {
			return &all[*k]
		}
		return nil
	}
	var pending []int64
	rows, err := q.QueryContext(ctx, `SELECT p.Chunk_id, p.cc_pair_id, p.Length, p.terms, c.cc_pair_id, c.length
		FROM search_pending p LEFT JOIN search_chunks c ON c.id = p.Chunk_id ORDER BY p.Chunk_id`)
	if err != nil {
		return err
	}
	k := 0
	for rows.Next() {
		var (
			id, pair, length int64
			terms            []byte
			chunkPair, chunk sql.NullInt64
		)
		if err := rows.Scan(&id, &pair, &length, &terms, &chunkPair, &chunk); err != nil {
			rows.Close()
			return err
		}
		switch {
		case !chunkPair.Valid:
			r.problem("pending row of chunk %d, which does not exist", id)
		case chunkPair.Int64 != pair || chunk.Int64 != length:
			r.problem("pending row of chunk %d gives cc-pair %d and length %d; the chunk is of cc-pair %d, of length %d",
				id, pair, length, chunkPair.Int64, chunk.Int64)
		}
		if index.EachTerm(terms, func([]byte, int) bool { return true }) != nil {
			r.problem("pending row of chunk %d: its terms do not decode", id)
		}
		if l := segmentOf(&k, id); l != nil {
			r.problem("chunk %d is pending and listed by segment %d: its postings count twice", id, segs[l.seg].id)
		}
		pending = append(pending, id)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	rows, err = q.QueryContext(ctx, `SELECT id, cc_pair_id, document_id, length FROM search_chunks ORDER BY id`)
	if err != nil {
		return err
	}
	k, p := 0, 0
	for rows.Next() {
		var (
			id, pair, length int64
			doc              string
		)
		if err := rows.Scan(&id, &pair, &doc, &length); err != nil {
			rows.Close()
			return err
		}
		for p < len(pending) && pending[p] < id {
			p++
		}
		isPending := p < len(pending) && pending[p] == id
		switch l := segmentOf(&k, id); {
		case l == nil && !isPending:
			r.problem("chunk %d (document %q of cc-pair %d) is neither pending nor in a live segment: no search finds it", id, doc, pair)
		case l != nil && int64(l.length) != length:
			r.problem("segment %d's norms give chunk %d a length of %d; the chunk's is %d", segs[l.seg].id, id, l.length, length)
		}
	}
	return closeRows(rows)
}

// checkBlocks checks every block of live segment s, a page of terms at a
// time.
func checkBlocks(ctx context.Context, q querier, r *IndexCheck, s *liveSegment) error {
	last := ""
	for {
		rows, err := q.QueryContext(ctx, `SELECT term, df, postings FROM search_blocks WHERE segment_id = $1 AND term > $2
			ORDER BY term LIMIT 512`, s.id, last)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var (
				term     string
				df       int64
				postings []byte
			)
			if err := rows.Scan(&term, &df, &postings); err != nil {
				rows.Close()
				return err
			}
			n++
			last = term
			r.Blocks++
			ps, err := index.DecodeBlock(postings)
			if err != nil {
				r.problem("segment %d's block of term %q does not decode", s.id, term)
				continue
			}
			r.Postings += int64(len(ps))
			if int64(len(ps)) != df {
				r.problem("segment %d's block of term %q holds %s and says %d", s.id, term, count(int64(len(ps)), "posting"), df)
			}
			for _, p := range ps {
				i, ok := slices.BinarySearch(s.chunks, p.Chunk)
				if !ok {
					r.problem("segment %d's block of term %q points to chunk %d, which the segment does not list", s.id, term, p.Chunk)
					break
				}
				if s.lengths[i] != p.Length {
					r.problem("segment %d's block of term %q gives chunk %d a length of %d; the segment's norms %d", s.id, term, p.Chunk, p.Length, s.lengths[i])
					break
				}
			}
		}
		if err := closeRows(rows); err != nil {
			return err
		}
		if n < 512 {
			return nil
		}
	}
}
