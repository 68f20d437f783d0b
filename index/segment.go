package index

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// Segments, as Lucene keeps an index: immutable, each a block of packed
// postings per term (EncodeBlock) and its chunks' norms (AppendNorm). A
// chunk is written pending first (a row with its terms, EncodeTerms); Flush
// builds a segment of pending chunks, and Merge one segment of several,
// leaving out the chunks no longer there. What to write, when, and under
// which lock is the caller's.

// Pending is a chunk not yet in a segment, as its row keeps it.
type Pending struct {
	Chunk, Pair int64
	Length      int
	Terms       []byte // EncodeTerms.
}

// Block is a term's postings in a segment, encoded (EncodeBlock), and
// their count: a segment's row of a term.
type Block struct {
	// Segment is the id of the segment that holds it, in the blocks a
	// search reads (Reader.Blocks); a block being written has none.
	Segment  int64
	Term     string
	DF       int64 // Its postings' count.
	Postings []byte
}

// Segment is a segment's own row: its chunks' count, their total length,
// and its norms (their ids and lengths).
type Segment struct {
	Chunks, Length int64
	Norms          []byte
}

// block is a term's postings in a segment being built.
type block struct {
	term     string
	postings []Posting
}

// Flush builds the segment of chunks pending: its row, and its blocks in
// their terms' byte order. A chunk whose terms do not decode is in the
// segment without postings (found by no search), rather than stopping
// every flush after it.
func Flush(pending []Pending) (Segment, []Block) {
	if !slices.IsSortedFunc(pending, func(a, b Pending) int { return cmp.Compare(a.Chunk, b.Chunk) }) {
		pending = slices.SortedFunc(slices.Values(pending), func(a, b Pending) int { return cmp.Compare(a.Chunk, b.Chunk) })
	}
	byTerm := map[string]*block{}
	var seg Segment
	var prev int64
	type termTF struct {
		term string
		tf   int
	}
	for _, p := range pending {
		var ts []termTF
		if err := EachTerm(p.Terms, func(term []byte, tf int) bool {
			ts = append(ts, termTF{string(term), tf})
			return true
		}); err != nil {
			ts = nil
		}
		for _, x := range ts {
			k := byTerm[x.term]
			if k == nil {
				k = &block{term: x.term}
				byTerm[k.term] = k
			}
			k.postings = append(k.postings, Posting{Chunk: p.Chunk, Pair: p.Pair, TF: x.tf, Length: p.Length})
		}
		seg.Norms = AppendNorm(seg.Norms, prev, p.Chunk, p.Length)
		prev, seg.Length = p.Chunk, seg.Length+int64(p.Length)
	}
	seg.Chunks = int64(len(pending))
	return seg, encodeBlocks(sortedBlocks(byTerm))
}

// sortedBlocks returns blocks in their terms' byte order.
func sortedBlocks(blocks map[string]*block) []*block {
	out := make([]*block, 0, len(blocks))
	for _, k := range blocks {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *block) int { return strings.Compare(a.term, b.term) })
	return out
}

// encodeBlocks encodes blocks, in their order.
func encodeBlocks(blocks []*block) []Block {
	out := make([]Block, len(blocks))
	for i, k := range blocks {
		out[i] = Block{Term: k.term, DF: int64(len(k.postings)), Postings: EncodeBlock(k.postings)}
	}
	return out
}

// Live is which of a merge's chunks are still there: a bitmap over the
// span of their ids.
type Live struct {
	lo, hi int64
	bits   []uint64
}

// NewLive returns which of chunks are still there. ids returns those
// still there of the ids from lo to hi (it is not called when chunks is
// empty). Chunks too sparse for a bitmap of 2 GiB are not a segment's:
// ErrCorrupt.
func NewLive(chunks []int64, ids func(lo, hi int64) ([]int64, error)) (*Live, error) {
	if len(chunks) == 0 {
		return &Live{}, nil
	}
	lo, hi := slices.Min(chunks), slices.Max(chunks)
	if lo < 0 || hi-lo > 1<<34 {
		return nil, ErrCorrupt
	}
	there, err := ids(lo, hi)
	if err != nil {
		return nil, err
	}
	l := &Live{lo: lo, hi: hi, bits: make([]uint64, (hi-lo)/64+1)}
	for _, id := range there {
		if id >= lo && id <= hi {
			l.bits[(id-lo)/64] |= 1 << ((id - lo) % 64)
		}
	}
	return l, nil
}

// Has reports whether chunk id is still there.
func (l *Live) Has(id int64) bool {
	return len(l.bits) > 0 && id >= l.lo && id <= l.hi && l.bits[(id-l.lo)/64]&(1<<((id-l.lo)%64)) != 0
}

// Gone returns how many of chunks are no longer there.
func (l *Live) Gone(chunks []int64) int {
	gone := 0
	for _, c := range chunks {
		if !l.Has(c) {
			gone++
		}
	}
	return gone
}

// Cursor reads a segment's blocks in their terms' byte order; a merge
// reads their Term and Postings.
type Cursor interface {
	// Next returns the next block, or false when none is left.
	Next() (Block, bool, error)
}

// Merge builds the segment that takes the place of segments sources: the
// postings of their chunks that live holds. chunks and lengths are the
// sources' chunks as their norms list them (DecodeNorms). Each term's
// postings are read from every source, a k-way merge of the sources' term
// orders, and the blocks given to emit in their terms' order, in batches
// of about MergeBlockBytes. It returns the merged segment's row, of the
// live chunks.
func Merge(sources []Cursor, chunks []int64, lengths []int, live *Live, emit func([]Block) error) (Segment, error) {
	// The merged segment's norms: its live chunks, in order.
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return chunks[order[a]] < chunks[order[b]] })
	var seg Segment
	var prev int64
	for _, i := range order {
		if live.Has(chunks[i]) {
			seg.Norms = AppendNorm(seg.Norms, prev, chunks[i], lengths[i])
			prev, seg.Length, seg.Chunks = chunks[i], seg.Length+int64(lengths[i]), seg.Chunks+1
		}
	}
	// The blocks: each term's postings from every source, in the chunks'
	// order, a k-way merge of the sources' own orders.
	heads := make([]Block, len(sources))
	has := make([]bool, len(sources))
	advance := func(i int) error {
		var err error
		heads[i], has[i], err = sources[i].Next()
		return err
	}
	for i := range sources {
		if err := advance(i); err != nil {
			return Segment{}, err
		}
	}
	var out []*block
	size := 0
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		err := emit(encodeBlocks(out))
		out, size = nil, 0
		return err
	}
	for {
		term := ""
		found := false
		for i := range heads {
			if has[i] && (!found || heads[i].Term < term) {
				term, found = heads[i].Term, true
			}
		}
		if !found {
			break
		}
		k := &block{term: term}
		for i := range heads {
			if has[i] && heads[i].Term == term {
				ps, err := DecodeBlock(heads[i].Postings)
				if err != nil {
					return Segment{}, err
				}
				for _, p := range ps {
					if live.Has(p.Chunk) {
						k.postings = append(k.postings, p)
					}
				}
				if err := advance(i); err != nil {
					return Segment{}, err
				}
			}
		}
		if len(k.postings) > 0 {
			out = append(out, k)
			size += len(k.postings)*6 + len(term)
		}
		if size >= MergeBlockBytes {
			if err := flush(); err != nil {
				return Segment{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return Segment{}, err
	}
	return seg, nil
}
