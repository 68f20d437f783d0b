package index

import (
	"slices"
	"testing"
)

// TestChooseMerge checks which segments a merge takes: MergeFactor of a
// tier, the smallest then the oldest, from the tier that holds the most
// (the lower of two as full), as many as fit in MaxMergedChunks if two
// do; none when no tier holds MergeFactor.
func TestChooseMerge(t *testing.T) {
	// segs makes n segments of chunks each, ids from id.
	segs := func(id, n int, chunks int64) []SegmentSize {
		out := make([]SegmentSize, n)
		for i := range out {
			out[i] = SegmentSize{ID: int64(id + i), Chunks: chunks}
		}
		return out
	}
	ids := func(ss []SegmentSize) []int64 {
		var out []int64
		for _, s := range ss {
			out = append(out, s.ID)
		}
		slices.Sort(out)
		return out
	}
	span := func(from, to int64) []int64 {
		var out []int64
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, c := range []struct {
		name string
		segs []SegmentSize
		want []int64
	}{
		{"nothing", nil, nil},
		{"nine of a tier", segs(1, 9, 5), nil},
		{"ten of a tier", segs(1, 10, 5), span(1, 10)},
		{"nine and one of another tier", append(segs(1, 9, 5), SegmentSize{10, 50}), nil},
		// The ten smallest of the tier (10 to 99 chunks), not its older ones.
		{"the smallest of twelve", append(segs(1, 2, 90), segs(3, 10, 20)...), span(3, 12)},
		// Equal sizes: the lowest ids.
		{"the oldest", append(segs(20, 3, 5), segs(1, 10, 5)...), span(1, 10)},
		// Tier 0 holds 10, tier 1 holds 11: tier 1.
		{"the fullest tier", append(segs(1, 10, 5), segs(11, 11, 50)...), span(11, 20)},
		// As full: the lower.
		{"the lower of two as full", append(segs(1, 10, 50), segs(11, 10, 5)...), span(11, 20)},
		// 100,000 chunks each: two fit in 250,000.
		{"as many as fit", segs(1, 10, 100_000), span(1, 2)},
		// 200,000 each: one alone would fit, which is no merge; the
		// smaller tier is merged instead.
		{"too big to merge", append(segs(1, 10, 200_000), segs(11, 10, 5)...), span(11, 20)},
		{"too big alone", segs(1, 12, 200_000), nil},
	} {
		if got := ids(ChooseMerge(c.segs)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestExpunges checks when a segment is rewritten without its chunks
// gone: from a quarter of them, and never with none gone.
func TestExpunges(t *testing.T) {
	for _, c := range []struct {
		chunks, gone int
		want         bool
	}{
		{100, 0, false},
		{100, 24, false},
		{100, 25, true},
		{100, 100, true},
		{3, 1, true},
		{0, 0, false},
		{250_000, 62_499, false},
		{250_000, 62_500, true},
	} {
		if got := Expunges(c.chunks, c.gone); got != c.want {
			t.Errorf("Expunges(%d, %d) = %v", c.chunks, c.gone, got)
		}
	}
}
