package index

import (
	"cmp"
	"slices"
	"strings"
)

// memory is an index held in memory, kept as the store keeps one in its
// tables (pending chunks, live segments of blocks, the chunks still
// there), and upkept with this package's Flush, ChooseMerge, Merge and
// Expunges: the second implementation of the reads of a search (Reader)
// and of a merge (Cursor), for the engine's tests, fuzzing and
// benchmarks without a database.
type memory struct {
	last     int64 // The last chunk id given.
	lastSeg  int64
	chunks   map[int64]memChunk // The chunks still there.
	pending  []Pending
	segments []*memSegment // Live, by id.
}

// memChunk is a chunk still there.
type memChunk struct {
	pair           int64
	title, content string
}

// memSegment is a live segment: its row and its blocks, by term.
type memSegment struct {
	id int64
	Segment
	blocks []Block
}

func newMemory() *memory { return &memory{chunks: map[int64]memChunk{}} }

// add writes a chunk of pair, pending, and returns its id.
func (m *memory) add(pair int64, title, content string) int64 {
	m.last++
	c := Chunk{Title: title, Content: content}
	tf, length := c.Terms()
	m.chunks[m.last] = memChunk{pair, title, content}
	m.pending = append(m.pending, Pending{Chunk: m.last, Pair: pair, Length: length, Terms: EncodeTerms(tf)})
	return m.last
}

// remove deletes chunk id: its pending row goes with it, its postings in
// a segment stay until a merge.
func (m *memory) remove(id int64) {
	delete(m.chunks, id)
	m.pending = slices.DeleteFunc(m.pending, func(p Pending) bool { return p.Chunk == id })
}

// flush writes up to FlushChunks pending chunks into a segment and
// reports whether there were any.
func (m *memory) flush() bool {
	if len(m.pending) == 0 {
		return false
	}
	n := min(len(m.pending), FlushChunks)
	seg, blocks := Flush(m.pending[:n])
	m.pending = m.pending[n:]
	m.lastSeg++
	m.segments = append(m.segments, &memSegment{id: m.lastSeg, Segment: seg, blocks: blocks})
	return true
}

// sizes returns the live segments' sizes.
func (m *memory) sizes() []SegmentSize {
	out := make([]SegmentSize, len(m.segments))
	for i, s := range m.segments {
		out[i] = SegmentSize{ID: s.id, Chunks: s.Chunks}
	}
	return out
}

// mergeTier merges the segments ChooseMerge chooses, if any.
func (m *memory) mergeTier() (bool, error) {
	sources := ChooseMerge(m.sizes())
	if sources == nil {
		return false, nil
	}
	return true, m.merge(sources)
}

// settle flushes and merges until nothing is left to do.
func (m *memory) settle() error {
	for {
		flushed := m.flush()
		merged, err := m.mergeTier()
		if err != nil || !flushed && !merged {
			return err
		}
	}
}

// expunge rewrites the largest segment Expunges has rewritten, if any.
func (m *memory) expunge() (bool, error) {
	segs := slices.SortedFunc(slices.Values(m.sizes()), func(a, b SegmentSize) int {
		return cmp.Or(cmp.Compare(b.Chunks, a.Chunks), cmp.Compare(a.ID, b.ID))
	})
	for _, s := range segs {
		chunks, _, live, err := m.segmentChunks([]SegmentSize{s})
		if err != nil {
			return false, err
		}
		if Expunges(len(chunks), live.Gone(chunks)) {
			return true, m.merge([]SegmentSize{s})
		}
	}
	return false, nil
}

// segment returns live segment id.
func (m *memory) segment(id int64) *memSegment {
	i := slices.IndexFunc(m.segments, func(s *memSegment) bool { return s.id == id })
	return m.segments[i]
}

// segmentChunks returns the chunks of segments sources, as their norms
// list them, and which are still there.
func (m *memory) segmentChunks(sources []SegmentSize) ([]int64, []int, *Live, error) {
	var chunks []int64
	var lengths []int
	for _, s := range sources {
		c, l, err := DecodeNorms(m.segment(s.ID).Norms)
		if err != nil {
			return nil, nil, nil, err
		}
		chunks, lengths = append(chunks, c...), append(lengths, l...)
	}
	live, err := NewLive(chunks, func(lo, hi int64) ([]int64, error) {
		var ids []int64
		for id := range m.chunks {
			if id >= lo && id <= hi {
				ids = append(ids, id)
			}
		}
		return ids, nil
	})
	return chunks, lengths, live, err
}

// merge merges segments sources into one, which takes their place.
func (m *memory) merge(sources []SegmentSize) error {
	chunks, lengths, live, err := m.segmentChunks(sources)
	if err != nil {
		return err
	}
	cursors := make([]Cursor, len(sources))
	for i, s := range sources {
		cursors[i] = &memCursor{blocks: m.segment(s.ID).blocks}
	}
	var blocks []Block
	seg, err := Merge(cursors, chunks, lengths, live, func(bs []Block) error {
		blocks = append(blocks, bs...)
		return nil
	})
	if err != nil {
		return err
	}
	m.segments = slices.DeleteFunc(m.segments, func(s *memSegment) bool {
		return slices.ContainsFunc(sources, func(x SegmentSize) bool { return x.ID == s.id })
	})
	m.lastSeg++
	m.segments = append(m.segments, &memSegment{id: m.lastSeg, Segment: seg, blocks: blocks})
	return nil
}

// memCursor reads a segment's blocks in order (Cursor).
type memCursor struct{ blocks []Block }

func (c *memCursor) Next() (Block, bool, error) {
	if len(c.blocks) == 0 {
		return Block{}, false, nil
	}
	b := c.blocks[0]
	c.blocks = c.blocks[1:]
	return b, true, nil
}

// snapshot returns what a search reads besides the blocks.
func (m *memory) snapshot() *Snapshot {
	s := &Snapshot{Pending: slices.Clone(m.pending)}
	for _, g := range m.segments {
		s.Chunks, s.Length = s.Chunks+g.Chunks, s.Length+g.Length
	}
	for _, p := range m.pending {
		s.Chunks, s.Length = s.Chunks+1, s.Length+int64(p.Length)
	}
	return s
}

// find returns segment g's block of term.
func (g *memSegment) find(term string) (Block, bool) {
	i, ok := slices.BinarySearchFunc(g.blocks, term, func(b Block, t string) int { return strings.Compare(b.Term, t) })
	if !ok {
		return Block{}, false
	}
	b := g.blocks[i]
	b.Segment = g.id
	return b, true
}

func (m *memory) Blocks(terms []string) ([]Block, error) {
	var out []Block
	for _, g := range m.segments {
		for _, t := range terms {
			if b, ok := g.find(t); ok {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

func (m *memory) PrefixTerms(prefix string, n int) ([]string, error) {
	set := map[string]bool{}
	for _, g := range m.segments {
		for _, b := range g.blocks {
			if b.Term >= prefix && b.Term < prefix+"\U0010FFFF" {
				set[b.Term] = true
			}
		}
	}
	out := slices.Sorted(func(yield func(string) bool) {
		for t := range set {
			if !yield(t) {
				return
			}
		}
	})
	return out[:min(n, len(out))], nil
}

func (m *memory) DF(terms []string) (map[string]int64, error) {
	df := map[string]int64{}
	for _, g := range m.segments {
		for _, t := range terms {
			if b, ok := g.find(t); ok {
				df[t] += b.DF
			}
		}
	}
	return df, nil
}

// search returns the limit best chunks still there that match q, of pairs
// visible, those that hold its phrases first, as the store checks Score's
// candidates.
func (m *memory) search(q Query, visible map[int64]bool, limit int) ([]Scored, error) {
	cands, _, err := Score(m, m.snapshot(), q, visible)
	if err != nil {
		return nil, err
	}
	// As the store takes them: the chunks that hold the phrases, then the
	// others by score (all of them: memory has no copies to count).
	var out, words []Scored
	for len(out) < limit {
		next, err := cands.Take(1)
		if err != nil {
			return nil, err
		}
		if len(next) == 0 {
			break
		}
		s := next[0]
		if c, ok := m.chunks[s.Chunk]; !ok {
			continue
		} else if !s.Words && q.Matches(c.title, c.content) {
			out = append(out, s)
		} else {
			words = append(words, s)
		}
	}
	slices.SortStableFunc(words, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return append(out, words[:min(len(words), limit-len(out))]...), nil
}
