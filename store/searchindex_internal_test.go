package store

import (
	"cmp"
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
	f.Add(uint64(3), 1, encodeBlock([]posting{{chunk: 7, pair: 2, tf: 1, length: 9}}))
	f.Fuzz(func(t *testing.T, seed uint64, n int, junk []byte) {
		r := rand.New(rand.NewPCG(seed, 0))
		n = min(max(n, 0), 2000)
		seen := map[int64]bool{}
		var ps []posting
		for range n {
			p := posting{chunk: r.Int64N(1 << 40), pair: r.Int64N(60), tf: 1 + r.IntN(50), length: r.IntN(5000)}
			if !seen[p.chunk] {
				seen[p.chunk] = true
				ps = append(ps, p)
			}
		}
		want := slices.Clone(ps)
		slices.SortFunc(want, func(a, b posting) int {
			return cmp.Or(cmp.Compare(a.pair, b.pair), cmp.Compare(a.chunk, b.chunk))
		})
		got, err := decodeBlock(encodeBlock(ps))
		if err != nil || !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("round trip of %d postings: %v, %d back", len(want), err, len(got))
		}
		if got, err := decodeBlock(junk); err == nil {
			for _, p := range got {
				if p.chunk < 0 || p.pair < 0 {
					t.Fatalf("junk decoded to %+v", p)
				}
			}
		}
		_ = eachTerm(junk, func([]byte, int) bool { return true })
	})
}
