package index

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzBlock checks a block's encoding both ways: postings come back as
// they went in, by pair then chunk, and bytes that are not a block are an
// error, never a panic or a posting made up.
func FuzzBlock(f *testing.F) {
	f.Add(uint64(1), 5, []byte{})
	f.Add(uint64(2), 300, []byte{1, 2, 3, 4, 5, 6})
	f.Add(uint64(3), 1, EncodeBlock([]Posting{{Chunk: 7, Pair: 2, TF: 1, Length: 9}}))
	f.Fuzz(func(t *testing.T, seed uint64, n int, junk []byte) {
		r := rand.New(rand.NewPCG(seed, 0))
		n = min(max(n, 0), 2000)
		seen := map[int64]bool{}
		var ps []Posting
		for range n {
			p := Posting{Chunk: r.Int64N(1 << 40), Pair: r.Int64N(60), TF: 1 + r.IntN(50), Length: r.IntN(5000)}
			if !seen[p.Chunk] {
				seen[p.Chunk] = true
				ps = append(ps, p)
			}
		}
		want := slices.Clone(ps)
		slices.SortFunc(want, func(a, b Posting) int {
			return cmp.Or(cmp.Compare(a.Pair, b.Pair), cmp.Compare(a.Chunk, b.Chunk))
		})
		got, err := DecodeBlock(EncodeBlock(ps))
		if err != nil || !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("round trip of %d postings: %v, %d back", len(want), err, len(got))
		}
		got, err = DecodeBlock(encodeFirstFormat(ps))
		if err != nil || !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("%d postings in the first format: %v, %d back", len(want), err, len(got))
		}
		if got, err := DecodeBlock(junk); err == nil {
			for _, p := range got {
				if p.Chunk < 0 || p.Pair < 0 {
					t.Fatalf("junk decoded to %+v", p)
				}
			}
		}
		_ = EachTerm(junk, func([]byte, int) bool { return true })
	})
}

// TestBlockCounts checks that a run must hold the postings its header
// counts: a header that counts more or fewer is a block that does not
// decode.
func TestBlockCounts(t *testing.T) {
	b := EncodeBlock([]Posting{{Chunk: 3, Pair: 1, TF: 1, Length: 4}, {Chunk: 5, Pair: 1, TF: 2, Length: 6}})
	// The second format; one run; pair 1, 2 postings, their bytes.
	if b[0] != 0 || b[1] != 2 || b[2] != 1 || b[3] != 1 || b[4] != 2 {
		t.Fatalf("header % x", b[:6])
	}
	if _, err := DecodeBlock(b); err != nil {
		t.Fatal(err)
	}
	for _, count := range []byte{1, 3} {
		bad := slices.Clone(b)
		bad[4] = count
		if ps, err := DecodeBlock(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a run counted %d: %v, %v", count, ps, err)
		}
	}
	if _, err := DecodeBlock(b[:len(b)-1]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a block cut short: %v", err)
	}
}

// TestBlockBounds checks what a search trusts a block for: a chunk twice
// in a run, even across sub-blocks, and impacts that do not bound the
// postings are a block that does not decode.
func TestBlockBounds(t *testing.T) {
	var ps []Posting
	for c := range int64(subBlock + 1) {
		ps = append(ps, Posting{Chunk: 1 + c, Pair: 1, TF: 1, Length: 5})
	}
	if _, err := DecodeBlock(EncodeBlock(slices.Clone(ps))); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []int64{5, subBlock} { // Within the first sub-block, and its last.
		if got, err := DecodeBlock(EncodeBlock(append(slices.Clone(ps), Posting{Chunk: dup, Pair: 1, TF: 1, Length: 5}))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("chunk %d twice: %d postings, %v", dup, len(got), err)
		}
	}
	// A run of ten postings, its impacts the one pair (10, 100): a lower
	// frequency there no longer bounds the posting of 10.
	ps = ps[:0]
	for i := range 10 {
		ps = append(ps, Posting{Chunk: int64(1 + i), Pair: 1, TF: 1 + i, Length: 100})
	}
	b := EncodeBlock(ps)
	runs, err := Runs(b)
	if err != nil || len(runs) != 1 || !bytes.Equal(runs[0].b[:3], []byte{1, 10, 100}) {
		t.Fatalf("runs %v, %v", runs, err)
	}
	runs[0].b[1] = 9 // runs[0].b is b's.
	if _, err := DecodeBlock(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("impacts below a posting: %v", err)
	}
}

// encodeFirstFormat encodes postings as a block of the first format, as
// EncodeBlock did before sub-blocks: what a database written then holds.
func encodeFirstFormat(ps []Posting) []byte {
	slices.SortFunc(ps, func(a, b Posting) int { return cmp.Or(cmp.Compare(a.Pair, b.Pair), cmp.Compare(a.Chunk, b.Chunk)) })
	var header, body []byte
	runs := 0
	var prevPair int64
	for i := 0; i < len(ps); {
		j, start := i, len(body)
		for ; j < len(ps) && ps[j].Pair == ps[i].Pair; j++ {
		}
		body = appendPostings(body, ps[i:j], 0)
		header = binary.AppendUvarint(header, uint64(ps[i].Pair-prevPair))
		header = binary.AppendUvarint(header, uint64(j-i))
		header = binary.AppendUvarint(header, uint64(len(body)-start))
		prevPair, runs, i = ps[i].Pair, runs+1, j
	}
	return append(append(binary.AppendUvarint(nil, uint64(runs)), header...), body...)
}

// TestSkipTo checks a run's sub-blocks in both formats: skipping to a
// chunk finds the posting a reading of every posting finds, and a
// sub-block's impacts bound what each of its postings scores, whatever
// the chunks' average length.
func TestSkipTo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var ps []Posting
	var chunk int64
	for i := range 3000 {
		chunk += 1 + r.Int64N(5)
		ps = append(ps, Posting{Chunk: chunk, Pair: int64(i % 3), TF: 1 + r.IntN(1+r.IntN(8)), Length: 1 + r.IntN(400)})
	}
	// Small runs (no impacts), runs of one sub-block (no header), a full
	// one, and one posting past it.
	for pair, n := range map[int64]int{3: 1, 4: smallRun, 5: smallRun + 1, 6: subBlock, 7: subBlock + 1} {
		for i := range n {
			ps = append(ps, Posting{Chunk: int64(1 + 3*i), Pair: pair, TF: 1 + r.IntN(4), Length: 1 + r.IntN(400)})
		}
	}
	if len(EncodeBlock([]Posting{})) != 3 || len(encodeFirstFormat(nil)) != 1 {
		t.Fatal("an empty block's size")
	}
	if runs, err := Runs([]byte{0}); err != nil || len(runs) != 0 {
		t.Fatalf("an empty block of the first format: %v, %v", runs, err)
	}
	for f, format := range []func([]Posting) []byte{EncodeBlock, encodeFirstFormat} {
		runs, err := Runs(format(slices.Clone(ps)))
		if err != nil || len(runs) != 8 {
			t.Fatalf("%d runs, %v", len(runs), err)
		}
		for _, run := range runs {
			var all []Posting
			for rr := run.Reader(); rr.Next(); {
				all = append(all, rr.Posting())
			}
			for trial := range 50 {
				rr := run.Reader()
				var target int64
				for i := 0; ; i++ {
					target += 1 + r.Int64N(int64(40*(1+trial%5)))
					want := slices.IndexFunc(all, func(p Posting) bool { return p.Chunk >= target })
					if i%3 == 0 {
						// Looking at the sub-block first, as a search does:
						// a run of one sub-block (any run of the first
						// format) does not tell its last chunk, and may
						// always hold it.
						if ok := rr.shallow(target); ok != (want >= 0) && (f == 0 && run.Count > subBlock || !ok) {
							t.Fatalf("shallow(%d) = %v, a posting at %d", target, ok, want)
						}
					}
					if ok := rr.skipTo(target); ok != (want >= 0) || ok && rr.Posting() != all[want] {
						t.Fatalf("skipTo(%d) = %v at %+v, want the posting at %d", target, ok, rr.Posting(), want)
					}
					if want < 0 {
						break
					}
				}
			}
			for _, avg := range []float64{1, 50, 200, 5000} {
				rr := run.Reader()
				for rr.Next() {
					p := rr.Posting()
					if got, most := bm25Part(1.7, p.TF, p.Length, avg), rr.maxImpact(1.7, avg); got > most {
						t.Fatalf("average %v: %+v scores %v, its sub-block at most %v", avg, p, got, most)
					}
				}
			}
		}
	}
}

// FuzzTerms checks a pending chunk's terms both ways: EachTerm gives back
// what EncodeTerms encoded in byte order, JoinTerms finds exactly the
// asked terms that are there, and bytes that are not terms are an error
// or terms within them, never a panic.
func FuzzTerms(f *testing.F) {
	f.Add(uint64(1), 5, []byte{})
	f.Add(uint64(2), 200, []byte{3, 'a', 'b', 'c', 1, 200})
	f.Add(uint64(3), 0, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, seed uint64, n int, junk []byte) {
		r := rand.New(rand.NewPCG(seed, 1))
		n = min(max(n, 0), 500)
		tf := map[string]int{}
		for range n {
			term := make([]byte, r.IntN(12))
			for i := range term {
				term[i] = byte(r.IntN(256))
			}
			tf[string(term)] = r.IntN(1 << 20)
		}
		b := EncodeTerms(tf)
		var got []string
		if err := EachTerm(b, func(term []byte, n int) bool {
			if tf[string(term)] != n {
				t.Fatalf("%q: %d, want %d", term, n, tf[string(term)])
			}
			got = append(got, string(term))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if want := slices.Sorted(maps.Keys(tf)); !slices.Equal(got, want) {
			t.Fatalf("terms %q, want %q", got, want)
		}
		// Every other term, and as many that are not there.
		var asked []string
		for i, term := range got {
			if i%2 == 0 {
				asked = append(asked, term)
			}
			asked = append(asked, term+"\x00missing")
		}
		slices.Sort(asked)
		asked = slices.Compact(asked)
		found := 0
		if err := JoinTerms(b, asked, func(i, n int) {
			if tf[asked[i]] != n {
				t.Fatalf("joined %q ×%d, want ×%d", asked[i], n, tf[asked[i]])
			}
			found++
		}); err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, term := range asked {
			if _, ok := tf[term]; ok {
				want++
			}
		}
		if found != want {
			t.Fatalf("joined %d terms, want %d", found, want)
		}
		_ = EachTerm(junk, func(term []byte, _ int) bool {
			if len(term) > len(junk) {
				t.Fatalf("a term of %d bytes out of %d", len(term), len(junk))
			}
			return true
		})
	})
}

// FuzzNorms checks a segment's norms both ways, and that bytes that are
// not norms are an error or norms, never a panic.
func FuzzNorms(f *testing.F) {
	f.Add(uint64(1), 5, []byte{})
	f.Add(uint64(2), 1000, []byte{0x80})
	f.Fuzz(func(t *testing.T, seed uint64, n int, junk []byte) {
		r := rand.New(rand.NewPCG(seed, 2))
		n = min(max(n, 0), 5000)
		var b []byte
		var chunks []int64
		var lengths []int
		var prev int64
		for range n {
			c := prev + 1 + r.Int64N(1<<r.IntN(40))
			l := r.IntN(1 << 16)
			b = AppendNorm(b, prev, c, l)
			chunks, lengths, prev = append(chunks, c), append(lengths, l), c
		}
		gotChunks, gotLengths, err := DecodeNorms(b)
		if err != nil || !slices.Equal(gotChunks, chunks) || !slices.Equal(gotLengths, lengths) {
			t.Fatalf("round trip of %d norms: %v", n, err)
		}
		if c, l, err := DecodeNorms(junk); err == nil && len(c) != len(l) {
			t.Fatalf("junk decoded to %d chunks and %d lengths", len(c), len(l))
		}
	})
}

// TestLive checks the set of a merge's chunks still there: ids outside
// the chunks' span are not in it, an empty merge asks for none, and
// chunks too sparse for a bitmap are refused.
func TestLive(t *testing.T) {
	var asked [][2]int64
	l, err := NewLive([]int64{10, 200, 75}, func(lo, hi int64) ([]int64, error) {
		asked = append(asked, [2]int64{lo, hi})
		return []int64{10, 75, 76, 9, 201}, nil
	})
	if err != nil || !slices.Equal(asked, [][2]int64{{10, 200}}) {
		t.Fatalf("%v, asked %v", err, asked)
	}
	for id, want := range map[int64]bool{10: true, 75: true, 76: true, 200: false, 9: false, 201: false, -1: false} {
		if l.Has(id) != want {
			t.Errorf("Has(%d) = %v", id, !want)
		}
	}
	if g := l.Gone([]int64{10, 200, 75}); g != 1 {
		t.Errorf("%d gone, want 1", g)
	}
	empty, err := NewLive(nil, func(int64, int64) ([]int64, error) { t.Fatal("asked for no chunks"); return nil, nil })
	if err != nil || empty.Has(0) {
		t.Errorf("no chunks: %v", err)
	}
	for _, chunks := range [][]int64{{1, 1<<34 + 2}, {-1, 5}} {
		if _, err := NewLive(chunks, func(int64, int64) ([]int64, error) { return nil, nil }); !errors.Is(err, ErrCorrupt) {
			t.Errorf("chunks %v: %v", chunks, err)
		}
	}
}
