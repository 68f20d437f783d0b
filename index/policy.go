package index

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// The index's upkeep: how big a flush is, which segments a merge takes,
// and when a segment is rewritten without its chunks gone. When the
// upkeep runs, and under which lock, is the caller's.

// Sizes of the index's upkeep.
const (
	// FlushChunks is the most pending chunks a segment is made of at
	// once.
	FlushChunks = 10_000
	// NudgeChunks is how many pending chunks a server writes before it
	// nudges its upkeep's flush: about what searches read pending at most
	// while documents pour in, give or take what the other servers write
	// meanwhile and a flush's own time.
	NudgeChunks = 2_000
	// MergeFactor is how many segments of a tier (their chunks' count
	// has the same number of decimal digits) are merged into one.
	MergeFactor = 10
	// MaxMergedChunks bounds a merge's result: segments that large are
	// not merged further, so that a merge never rewrites the index whole.
	MaxMergedChunks = 250_000
	// MergeBlockBytes is about how much of a merge's output Merge gives
	// at once (to be written in one transaction).
	MergeBlockBytes = 8 << 20
	// ExpungeShare is the share of a segment's chunks gone (written
	// again or deleted since it was written) from which Expunges has it
	// rewritten alone.
	ExpungeShare = 0.25
)

// SegmentSize is a live segment as a merge's choice sees it.
type SegmentSize struct {
	ID, Chunks int64
}

// tier is the tier of a segment of n chunks: their count's decimal digits.
func tier(n int64) int { return int(math.Log10(float64(max(n, 1)))) }

// ChooseMerge returns the live segments segs that a merge takes, nil if
// none: the MergeFactor smallest (then the oldest: the lowest ids) of the
// tier that holds the most segments (at least MergeFactor; the lower tier
// of two as full), or the smallest of them that fit in MaxMergedChunks, if
// two do. Taking the fullest tier, not the smallest, keeps the bigger
// tiers merged under a steady flow of writes, when the smallest fills
// again as fast as it is merged.
func ChooseMerge(segs []SegmentSize) []SegmentSize {
	segs = slices.SortedFunc(slices.Values(segs), func(a, b SegmentSize) int {
		return cmp.Or(cmp.Compare(a.Chunks, b.Chunks), cmp.Compare(a.ID, b.ID))
	})
	byTier := map[int][]SegmentSize{}
	for _, s := range segs {
		byTier[tier(s.Chunks)] = append(byTier[tier(s.Chunks)], s)
	}
	var sources []SegmentSize
	best := 0
	for _, t := range slices.Sorted(maps.Keys(byTier)) {
		in := byTier[t]
		if len(in) < MergeFactor || len(in) <= best {
			continue
		}
		var fit []SegmentSize
		var total int64
		for i, x := range in[:MergeFactor] {
			if total += x.Chunks; total > MaxMergedChunks {
				break
			}
			fit = in[:i+1]
		}
		if len(fit) >= 2 {
			sources, best = fit, len(in)
		}
	}
	return sources
}

// Expunges reports whether a live segment of chunks chunks, gone of which
// are no longer there, is rewritten alone (a merge of one) to leave their
// postings out: postings that would otherwise stay in a segment no tier
// merges again (one of MaxMergedChunks), counting in the statistics.
func Expunges(chunks, gone int) bool {
	return gone > 0 && float64(gone) >= ExpungeShare*float64(chunks)
}
