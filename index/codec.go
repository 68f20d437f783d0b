package index

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
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
// each pair's postings (a run), in the order of their chunks' ids: the
// gap from the previous chunk's id (from 0 for a pair's first), the
// frequency and the length.
//
// A block of the second format (EncodeBlock's) begins with the bytes 0
// and 2; each of its runs of more than smallRun postings begins with the
// run's impacts (appendImpacts), then, when it has more than subBlock postings, cuts them into
// sub-blocks of up to subBlock, each headed by the gap from the previous
// sub-block's last chunk to its own, its impacts and its postings' bytes'
// length (a run of at most subBlock is one sub-block without a header:
// most runs of most terms, whose postings are split among the pairs): a
// search skips a sub-block it needs nothing of, or whose best score
// cannot place a chunk among those it keeps (see scorer), without
// decoding it. A block of the first format (no marker: its first byte
// counts its runs, and one of no run is the byte 0 alone) is one
// sub-block a run, of unknown impacts; merges write the second.

// subBlock is how many postings a sub-block of a run holds at most.
const subBlock = 128

// smallRun is how many postings a run of the second format holds at most
// without its impacts: a search reads them for its bound (most runs are
// that small, and their impacts would cost as many bytes as they do).
const smallRun = 4

// maxImpacts is how many impacts a sub-block's header keeps at most.
const maxImpacts = 4

// blockFormat2 is the first two bytes of a block of the second format.
var blockFormat2 = [2]byte{0, 2}

// EncodeBlock encodes postings as a block (of the second format); it
// sorts ps by pair, then chunk.
func EncodeBlock(ps []Posting) []byte {
	slices.SortFunc(ps, func(a, b Posting) int {
		if a.Pair != b.Pair {
			return cmp.Compare(a.Pair, b.Pair)
		}
		return cmp.Compare(a.Chunk, b.Chunk)
	})
	var header, body, sub []byte
	var scratch []impact
	runs := 0
	var prevPair int64
	for i := 0; i < len(ps); {
		j, start := i, len(body)
		for ; j < len(ps) && ps[j].Pair == ps[i].Pair; j++ {
		}
		if j-i > smallRun {
			body = appendImpacts(body, ps[i:j], &scratch)
		}
		var prev int64 // The previous sub-block's last chunk.
		for s := i; s < j; s += subBlock {
			e := min(s+subBlock, j)
			sub = appendPostings(sub[:0], ps[s:e], prev)
			if j-i > subBlock { // A run of one sub-block has no header.
				body = binary.AppendUvarint(body, uint64(ps[e-1].Chunk-prev))
				body = appendImpacts(body, ps[s:e], &scratch)
				body = binary.AppendUvarint(body, uint64(len(sub)))
			}
			body = append(body, sub...)
			prev = ps[e-1].Chunk
		}
		header = binary.AppendUvarint(header, uint64(ps[i].Pair-prevPair))
		header = binary.AppendUvarint(header, uint64(j-i))
		header = binary.AppendUvarint(header, uint64(len(body)-start))
		prevPair, runs, i = ps[i].Pair, runs+1, j
	}
	out := append(make([]byte, 0, len(header)+len(body)+6), blockFormat2[:]...)
	out = binary.AppendUvarint(out, uint64(runs))
	return append(append(out, header...), body...)
}

// appendPostings appends postings ps (of one pair, in their chunks'
// order) to b as a run or a sub-block holds them: each one's gap from the
// previous chunk (from prev for the first), its frequency and its length.
func appendPostings(b []byte, ps []Posting, prev int64) []byte {
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.Chunk-prev))
		b = binary.AppendUvarint(b, uint64(p.TF))
		b = binary.AppendUvarint(b, uint64(p.Length))
		prev = p.Chunk
	}
	return b
}

// nextImpact returns the first impact of impacts (as appendImpacts wrote
// them, after their count, and cutImpacts checked them) and the rest.
func nextImpact(impacts []byte) (tf, length uint64, rest []byte) {
	tf, k := binary.Uvarint(impacts)
	length, n := binary.Uvarint(impacts[k:])
	return tf, length, impacts[k+n:]
}

// impact is a frequency and a length of a sub-block's postings.
type impact struct{ tf, length int }

// appendImpacts appends the impacts of postings ps to b: their count, then
// each's frequency and length. They are the postings' pairs of frequency
// and length that no other posting's beat in both (a higher or equal
// frequency in a chunk as short or shorter), as Lucene keeps its
// competitive impacts, highest frequency first: whatever the chunks'
// average length, none of ps scores more than the best of them. Past
// maxImpacts, the last kept stands for the rest, with the highest
// frequency and the shortest length of them, which none of them beats.
// scratch is memory to reuse.
func appendImpacts(b []byte, ps []Posting, scratch *[]impact) []byte {
	all := (*scratch)[:0]
	for _, p := range ps {
		all = append(all, impact{p.TF, p.Length})
	}
	*scratch = all
	slices.SortFunc(all, func(a, b impact) int { return cmp.Or(cmp.Compare(b.tf, a.tf), cmp.Compare(a.length, b.length)) })
	kept := all[:0] // In place: it never passes what it reads.
	for _, x := range all {
		if len(kept) == 0 || x.length < kept[len(kept)-1].length {
			kept = append(kept, x)
		}
	}
	if len(kept) > maxImpacts {
		kept[maxImpacts-1].length = kept[len(kept)-1].length
		kept = kept[:maxImpacts]
	}
	b = binary.AppendUvarint(b, uint64(len(kept)))
	for _, x := range kept {
		b = binary.AppendUvarint(b, uint64(x.tf))
		b = binary.AppendUvarint(b, uint64(x.length))
	}
	return b
}

// Run is a pair's postings in a block.
type Run struct {
	Pair  int64
	Count int // The postings its header counts.
	b     []byte
	subs  bool // Of the second format: its impacts, then sub-blocks.
	// off and size place b in its block's bytes after the header.
	off, size uint64
}

// Runs returns the runs of block b, by pair.
func Runs(b []byte) ([]Run, error) { return appendRuns(nil, b, nil, true) }

// AppendRuns appends to dst the runs of block b whose pairs keep holds
// (none when keep is nil), by pair, and returns the extended slice: a
// search reads the header of every pair and keeps those of the pairs its
// caller may see.
func AppendRuns(dst []Run, b []byte, keep map[int64]bool) ([]Run, error) {
	return appendRuns(dst, b, keep, false)
}

// appendRuns is AppendRuns, keeping every run when all is set.
func appendRuns(dst []Run, b []byte, keep map[int64]bool, all bool) ([]Run, error) {
	subs := len(b) > 1 && b[0] == blockFormat2[0] && b[1] == blockFormat2[1]
	if subs {
		b = b[2:]
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, ErrCorrupt
	}
	b = b[k:]
	// The runs' bytes follow the header in its order: a run's are at the
	// sum of the lengths before it, from the header's end.
	from := len(dst)
	var pair int64
	var at uint64
	for range n {
		var v [3]uint64
		for j := range v {
			x, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, ErrCorrupt
			}
			v[j], b = x, b[k:]
		}
		if pair += int64(v[0]); pair < 0 || v[0] > 1<<62 || v[2] > uint64(len(b)) {
			return nil, ErrCorrupt
		}
		if all || keep[pair] {
			dst = append(dst, Run{Pair: pair, Count: int(v[1]), subs: subs, off: at, size: v[2]})
		}
		if at += v[2]; at > uint64(len(b)) {
			return nil, ErrCorrupt
		}
	}
	for i := from; i < len(dst); i++ {
		dst[i].b = b[dst[i].off : dst[i].off+dst[i].size]
	}
	return dst, nil
}

// Reader returns a reader of r's postings.
func (r Run) Reader() RunReader {
	if r.subs && r.Count <= smallRun {
		return RunReader{sub: r.b, small: r.b, cur: Posting{Pair: r.Pair}, last: math.MaxInt64, entered: true}
	}
	if r.subs {
		impacts, rest, ok := cutImpacts(r.b)
		if !ok {
			return RunReader{bad: true}
		}
		if r.Count <= subBlock { // One sub-block, without a header.
			return RunReader{sub: rest, runImpacts: impacts, impacts: impacts, cur: Posting{Pair: r.Pair}, last: math.MaxInt64, entered: true}
		}
		return RunReader{b: rest, runImpacts: impacts, cur: Posting{Pair: r.Pair}}
	}
	// A run of the first format is one sub-block, its last chunk unknown.
	return RunReader{sub: r.b, cur: Posting{Pair: r.Pair}, last: math.MaxInt64, entered: true}
}

// RunReader reads a run's postings in order, and can skip the sub-blocks
// it needs nothing of unread.
type RunReader struct {
	b   []byte // The sub-blocks after the current one.
	sub []byte // The current sub-block's postings not read yet.
	// last is the current sub-block's last chunk, impacts its impacts
	// (none in a run of the first format), entered whether there is one.
	last    int64
	impacts []byte
	entered bool
	// runImpacts are the whole run's impacts (none in the first format).
	runImpacts []byte
	// small is the whole of a run that keeps no impacts (smallRun): its
	// postings bound it.
	small []byte
	// cur is the last posting read; at whether it is one of the current
	// sub-block (and not only, before its first, the chunk its gaps
	// count from).
	cur Posting
	at  bool
	bad bool
	// read is whether a posting of the run was read.
	read bool
}

// enter moves r to the next sub-block, leaving what is left of the
// current one unread; it reports whether there was one.
func (r *RunReader) enter() bool {
	if len(r.b) == 0 || r.bad {
		r.sub, r.at = nil, false
		return false
	}
	b := r.b
	// Only a run's first sub-block may end at chunk 0.
	gap, k := binary.Uvarint(b)
	if k <= 0 || gap == 0 && r.entered || gap > 1<<62 || r.last+int64(gap) < r.last {
		return r.corrupt()
	}
	impacts, b, ok := cutImpacts(b[k:])
	if !ok {
		return r.corrupt()
	}
	size, k := binary.Uvarint(b)
	if k <= 0 || size == 0 || size > uint64(len(b)-k) {
		return r.corrupt()
	}
	b = b[k:]
	r.cur.Chunk = r.last // The chunk the sub-block's gaps count from.
	r.sub, r.b = b[:size], b[size:]
	r.last, r.impacts, r.entered, r.at = r.last+int64(gap), impacts, true, false
	return true
}

// cutImpacts returns the impacts b begins with (appendImpacts), without
// their count, and the bytes after them; false if they do not decode.
func cutImpacts(b []byte) (impacts, rest []byte, ok bool) {
	m, k := binary.Uvarint(b)
	if k <= 0 || m > maxImpacts {
		return nil, nil, false
	}
	rest = b[k:]
	for range 2 * m {
		_, k := binary.Uvarint(rest)
		if k <= 0 {
			return nil, nil, false
		}
		rest = rest[k:]
	}
	return b[k : len(b)-len(rest)], rest, true
}

// corrupt marks r as not decoding and returns false.
func (r *RunReader) corrupt() bool {
	r.b, r.sub, r.bad, r.at = nil, nil, true, false
	return false
}

// Next reads the next posting and reports whether there was one: false at
// the run's end, or where it does not decode (Err).
func (r *RunReader) Next() bool {
	if len(r.sub) == 0 && !r.enter() {
		return false
	}
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(r.sub)
		if n <= 0 {
			return r.corrupt()
		}
		v[i], r.sub = x, r.sub[n:]
	}
	if v[0] > 1<<62 || r.cur.Chunk+int64(v[0]) < r.cur.Chunk {
		return r.corrupt()
	}
	r.cur = Posting{Chunk: r.cur.Chunk + int64(v[0]), Pair: r.cur.Pair, TF: int(v[1]), Length: int(v[2])}
	// A sub-block's postings are after the previous one's last chunk and
	// end at its own; only a run's first may be at its gaps' start.
	if r.cur.Chunk > r.last || len(r.sub) == 0 && r.last != math.MaxInt64 && r.cur.Chunk != r.last || v[0] == 0 && r.read {
		return r.corrupt()
	}
	r.at, r.read = true, true
	return true
}

// shallow moves r to the sub-block that may hold chunk target, leaving
// those that end before it unread, and reports whether there is one: the
// run has a chunk at or after target, or, in a sub-block whose last chunk
// it does not tell (a run of one sub-block), may have one.
func (r *RunReader) shallow(target int64) bool {
	for !r.entered || r.last < target {
		if !r.enter() {
			return false
		}
	}
	return true
}

// skipTo reads to the first posting at or after chunk target, leaving the
// sub-blocks that end before it unread, and reports whether there is one.
func (r *RunReader) skipTo(target int64) bool {
	if r.at && r.cur.Chunk >= target {
		return true
	}
	if !r.shallow(target) {
		return false
	}
	for !r.at || r.cur.Chunk < target {
		if !r.Next() {
			return false
		}
	}
	return true
}

// maxImpact returns the most a posting of the current sub-block adds to
// a chunk's score for a term of weight w (see bestImpact).
func (r *RunReader) maxImpact(w, avgdl float64) float64 {
	if r.small != nil {
		return smallMax(r.small, w, avgdl)
	}
	return bestImpact(r.impacts, w, avgdl)
}

// runMax returns the most a posting of the run adds to a chunk's score
// for a term of weight w (see bestImpact).
func (r *RunReader) runMax(w, avgdl float64) float64 {
	if r.small != nil {
		return smallMax(r.small, w, avgdl)
	}
	return bestImpact(r.runImpacts, w, avgdl)
}

// smallMax returns the most a posting of a small run (its postings b)
// adds to a chunk's score for a term of weight w; or w, which bounds
// them all, when they do not decode.
func smallMax(b []byte, w, avgdl float64) float64 {
	r := RunReader{sub: b, last: math.MaxInt64, entered: true}
	best := 0.0
	for r.Next() {
		best = max(best, bm25Part(w, r.cur.TF, r.cur.Length, avgdl))
	}
	if r.bad {
		return w
	}
	return best
}

// bestImpact returns the most a posting of impacts adds to a chunk's
// score for a term of weight w (bm25Part of the best of them); or w when
// there are none (a run of the first format keeps none), as BM25's
// frequency part is below 1.
func bestImpact(impacts []byte, w, avgdl float64) float64 {
	if len(impacts) == 0 {
		return w
	}
	best := 0.0
	for b := impacts; len(b) > 0; {
		var tf, length uint64
		tf, length, b = nextImpact(b)
		best = max(best, bm25Part(w, int(tf), int(length), avgdl))
	}
	return best
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

// dominated reports whether one of impacts (appendImpacts; none bound
// nothing) has a frequency as high as p's in a chunk as short, so that p
// scores no more than it.
func dominated(impacts []byte, p Posting) bool {
	if len(impacts) == 0 {
		return true
	}
	for b := impacts; len(b) > 0; {
		var tf, length uint64
		tf, length, b = nextImpact(b)
		if tf >= uint64(p.TF) && length <= uint64(p.Length) {
			return true
		}
	}
	return false
}

// DecodeBlock returns every posting of block b, by pair, then chunk; a
// posting its run's or sub-block's impacts do not bound is ErrCorrupt.
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
			// A search trusts the impacts to bound the postings: one they
			// do not is as corrupt as a posting that does not decode.
			if !dominated(rr.runImpacts, rr.cur) || !dominated(rr.impacts, rr.cur) {
				return nil, ErrCorrupt
			}
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
