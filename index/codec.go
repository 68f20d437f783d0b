package index

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
)

// The index's bytes: a segment's blocks (a term's postings), its norms (its
// chunks' ids and lengths), and a pending chunk's terms. Every number is a
// varint.

// Posting is a term's occurrence in a chunk: the chunk, its pair, the
// term's weighted frequency there and the chunk's length.
type Posting struct {
	Chunk, Pair int64
	TF, Length  int
}

// ErrCorrupt reports a block, a pending chunk's terms or a segment's norms
// that do not decode.
var ErrCorrupt = errors.New("index: the search index holds a block that does not decode")

// A block holds a term's postings in a segment, by pair, so that a search
// decodes only those of the pairs its caller may see: a header, the
// number of pairs then for each (in increasing order) the gap from the
// previous pair's id, its postings' count and their bytes' length; then
// each pair's postings, in the order of their chunks' ids: the gap from
// the previous chunk's id (from 0 for a pair's first), the frequency and
// the length.

// EncodeBlock encodes postings as a block; it sorts ps by pair, then
// chunk.
func EncodeBlock(ps []Posting) []byte {
	slices.SortFunc(ps, func(a, b Posting) int {
		if a.Pair != b.Pair {
			return cmp.Compare(a.Pair, b.Pair)
		}
		return cmp.Compare(a.Chunk, b.Chunk)
	})
	var header, body []byte
	runs := 0
	var prevPair int64
	for i := 0; i < len(ps); {
		j, start := i, len(body)
		var prev int64
		for ; j < len(ps) && ps[j].Pair == ps[i].Pair; j++ {
			body = binary.AppendUvarint(body, uint64(ps[j].Chunk-prev))
			body = binary.AppendUvarint(body, uint64(ps[j].TF))
			body = binary.AppendUvarint(body, uint64(ps[j].Length))
			prev = ps[j].Chunk
		}
		header = binary.AppendUvarint(header, uint64(ps[i].Pair-prevPair))
		header = binary.AppendUvarint(header, uint64(j-i))
		header = binary.AppendUvarint(header, uint64(len(body)-start))
		prevPair, runs, i = ps[i].Pair, runs+1, j
	}
	out := binary.AppendUvarint(make([]byte, 0, len(header)+len(body)+4), uint64(runs))
	return append(append(out, header...), body...)
}

// Run is a pair's postings in a block.
type Run struct {
	Pair  int64
	Count int // The postings its header counts.
	b     []byte
}

// Runs returns the runs of block b, by pair.
func Runs(b []byte) ([]Run, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, ErrCorrupt
	}
	b = b[k:]
	runs := make([]Run, n)
	lengths := make([]uint64, n)
	var pair int64
	for i := range runs {
		var v [3]uint64
		for j := range v {
			x, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, ErrCorrupt
			}
			v[j], b = x, b[k:]
		}
		if pair += int64(v[0]); pair < 0 || v[0] > 1<<62 {
			return nil, ErrCorrupt
		}
		runs[i], lengths[i] = Run{Pair: pair, Count: int(v[1])}, v[2]
	}
	for i := range runs {
		if lengths[i] > uint64(len(b)) {
			return nil, ErrCorrupt
		}
		runs[i].b, b = b[:lengths[i]], b[lengths[i]:]
	}
	return runs, nil
}

// Reader returns a reader of r's postings.
func (r Run) Reader() RunReader { return RunReader{b: r.b, cur: Posting{Pair: r.Pair}} }

// RunReader reads a run's postings in order.
type RunReader struct {
	b   []byte
	cur Posting
	bad bool
}

// Next reads the next posting and reports whether there was one: false at
// the run's end, or where it does not decode (Err).
func (r *RunReader) Next() bool {
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
	if v[0] > 1<<62 || r.cur.Chunk+int64(v[0]) < r.cur.Chunk {
		r.b, r.bad = nil, true
		return false
	}
	r.cur = Posting{Chunk: r.cur.Chunk + int64(v[0]), Pair: r.cur.Pair, TF: int(v[1]), Length: int(v[2])}
	return true
}

// Posting returns the posting Next read.
func (r *RunReader) Posting() Posting { return r.cur }

// Err returns ErrCorrupt if the run did not decode, else nil.
func (r *RunReader) Err() error {
	if r.bad {
		return ErrCorrupt
	}
	return nil
}

// DecodeBlock returns every posting of block b, by pair, then chunk.
func DecodeBlock(b []byte) ([]Posting, error) {
	runs, err := Runs(b)
	if err != nil {
		return nil, err
	}
	var out []Posting
	for _, r := range runs {
		rr := r.Reader()
		n := 0
		for ; rr.Next(); n++ {
			out = append(out, rr.cur)
		}
		if rr.bad || n != r.Count { // A run must hold the postings its header counts.
			return nil, ErrCorrupt
		}
	}
	return out, nil
}

// EncodeTerms encodes a chunk's terms and their frequencies, in the terms'
// byte order, as its pending row keeps them: each term's length, its bytes
// and its frequency.
func EncodeTerms(tf map[string]int) []byte {
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

// EachTerm calls fn with each term of what EncodeTerms encoded, in its
// order, and its frequency, until fn returns false. The term is a slice
// of b: fn must not keep it.
func EachTerm(b []byte, fn func(term []byte, tf int) bool) error {
	for len(b) > 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return ErrCorrupt
		}
		term := b[n : n+int(l)]
		b = b[n+int(l):]
		tf, n := binary.Uvarint(b)
		if n <= 0 {
			return ErrCorrupt
		}
		b = b[n:]
		if !fn(term, int(tf)) {
			return nil
		}
	}
	return nil
}

// JoinTerms calls fn(i, tf) for each term terms[i] (sorted) that a
// pending chunk's encoded terms b hold, with its frequency there.
func JoinTerms(b []byte, terms []string, fn func(i, tf int)) error {
	i := 0
	return EachTerm(b, func(term []byte, tf int) bool {
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

// AppendNorm appends a chunk's id and length to a segment's norms b,
// whose last chunk is prev (0 for the first): the gap from prev, and the
// length.
func AppendNorm(b []byte, prev, chunk int64, length int) []byte {
	b = binary.AppendUvarint(b, uint64(chunk-prev))
	return binary.AppendUvarint(b, uint64(length))
}

// DecodeNorms returns the chunks and lengths of a segment's norms.
func DecodeNorms(b []byte) (chunks []int64, lengths []int, err error) {
	var prev int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, nil, ErrCorrupt
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, nil, ErrCorrupt
		}
		b = b[n:]
		prev += int64(d)
		chunks, lengths = append(chunks, prev), append(lengths, int(l))
	}
	return chunks, lengths, nil
}
