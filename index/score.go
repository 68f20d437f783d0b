package index

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Scoring a search: the index as a search's snapshot sees it (its live
// segments, read through a Reader, and its pending chunks), the postings
// of the query's terms, and BM25 over the chunks of the pairs the caller
// may see.

// BM25's parameters. Lucene's defaults are k1 1.2 and b 0.75; a term's
// frequency saturating more slowly (k1 2) and a chunk's length weighing
// more (b 0.9) ranked better on each of the three test collections of
// scripts/quality (nDCG@10 on Cranfield, CISI and Medline; the figures
// are in docs/benchmarks.md, "Search quality"). Both are within the range
// the literature gives (k1 1.2 to 2, b 0.75 to 0.9) and cost nothing.
const (
	bm25K1 = 2.0
	bm25B  = 0.9
)

// idf is Lucene's BM25 inverse document frequency of a term in df of n
// chunks.
func idf(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Reader reads the live segments of the index a search sees, all in one
// snapshot.
type Reader interface {
	// Blocks returns the live segments' blocks of terms (sorted), with
	// their segments' ids, in any order.
	Blocks(terms []string) ([]Block, error)
	// PrefixTerms returns the live segments' first n terms, in byte
	// order, that begin with prefix (from prefix to prefix followed by
	// U+10FFFF), each once.
	PrefixTerms(prefix string, n int) ([]string, error)
	// DF returns the live segments' document frequencies of terms (each
	// the sum of its blocks'); a term of none may be left out.
	DF(terms []string) (map[string]int64, error)
}

// Snapshot is the rest of what a search reads of the index: the chunks'
// count and total length (the live segments' and the pending chunks'),
// and the pending chunks.
type Snapshot struct {
	Chunks, Length int64
	Pending        []Pending
}

// Scored is a chunk's score.
type Scored struct {
	Chunk int64
	Score float64
	// Words is set on a chunk that lacks a word of the query's phrases:
	// it matches their words only, never the phrases, and ranks after
	// every chunk that may hold them (see Score).
	Words bool
}

// Candidates are the chunks a search scores, to be taken best first
// (then by id), a few at a time (Take): first the chunks that hold every
// word of the query's phrases (all of them when it has none), then the
// others. Each pass keeps only as many of each group as have been asked
// for (the best k, see topK), and scores only the chunks that may be
// among them (MaxScore, see group.score); asked for more,
// it scores again keeping four times as many, so that a search that
// takes its first few keeps a few, and one that takes more gets the same
// order as if every chunk had been kept. A search that takes n chunks
// runs about log4(n/k) passes: one whose candidates mostly fail the
// rights (a sync pair's documents, most of them closed to its caller)
// scores again as it goes, where checking those candidates' rows costs
// more still.
type Candidates struct {
	// pass keeps the best k of each group, best first, and says how
	// many chunks it scored in full; nil when no chunk can match.
	pass func(k int) (best, words []scored, offered int, err error)
	// k is the last pass's bound (0 before the first); best and words its
	// groups; tb and tw how many of each have been taken.
	k           int
	best, words []scored
	tb, tw      int
	// The idf of each query term that some chunk holds, and the first
	// letters of those terms, for Proximity.
	idf   map[string]float64
	first map[rune]bool
	// offered counts the chunks the passes scored in full and offered to
	// their groups, for the tests and benchmarks of pruning.
	offered int
}

// Take returns the next n best chunks (fewer when fewer are left), those
// that may hold the phrases before the others. The first Take scores
// (a later one may score again): it returns ErrCorrupt for a block that
// does not decode.
func (c *Candidates) Take(n int) ([]Scored, error) {
	var out []Scored
	if c.pass == nil || n <= 0 {
		return out, nil
	}
	for len(out) < n {
		// The group being taken is used up, and the last pass filled it:
		// it may hold more than it kept.
		if c.k == 0 || c.tb == len(c.best) && (len(c.best) == c.k || c.tw == len(c.words) && len(c.words) == c.k) {
			k := max(4*c.k, c.tb+n-len(out), c.tw+n-len(out))
			best, words, offered, err := c.pass(k)
			if err != nil {
				return nil, err
			}
			c.k, c.best, c.words, c.offered = k, best, words, c.offered+offered
		}
		switch {
		case c.tb < len(c.best):
			x := c.best[c.tb]
			c.tb++
			out = append(out, Scored{Chunk: x.Chunk, Score: x.Score})
		case c.tw < len(c.words):
			x := c.words[c.tw]
			c.tw++
			out = append(out, Scored{Chunk: x.Chunk, Score: x.Score, Words: true})
		default:
			return out, nil
		}
	}
	return out, nil
}

// scored is a chunk's score as a pass keeps it (16 bytes: a pass's
// group says whether it holds the phrases' words).
type scored struct {
	Chunk int64
	Score float64
}

// ranksAfter reports whether a ranks after b: a lower score, or the same
// score and a higher chunk id. It orders every two chunks.
func ranksAfter(a, b scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Chunk > b.Chunk
}

// topK keeps the best k chunks it is offered: a heap whose root is the
// one that ranks last of those kept.
type topK struct {
	k int
	h []scored
}

// offer keeps x when fewer than k chunks are kept or x ranks before the
// last of them (which it then replaces).
func (t *topK) offer(x scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !ranksAfter(t.h[i], t.h[parent]) {
				break
			}
			t.h[i], t.h[parent] = t.h[parent], t.h[i]
			i = parent
		}
		return
	}
	if t.k == 0 || !ranksAfter(t.h[0], x) {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		last, l := i, 2*i+1
		if l < len(t.h) && ranksAfter(t.h[l], t.h[last]) {
			last = l
		}
		if r := l + 1; r < len(t.h) && ranksAfter(t.h[r], t.h[last]) {
			last = r
		}
		if last == i {
			return
		}
		t.h[i], t.h[last] = t.h[last], t.h[i]
		i = last
	}
}

// sorted returns the chunks kept, best first: it sorts them in place, so
// it is the last call to t.
func (t *topK) sorted() []scored {
	slices.SortFunc(t.h, func(a, b scored) int {
		switch {
		case ranksAfter(a, b):
			return 1
		case ranksAfter(b, a):
			return -1
		}
		return 0
	})
	return t.h
}

// Score reads what scoring query q needs and returns its candidates,
// scored when taken (Candidates.Take) by BM25 as Lucene 8 scores it (with
// bm25K1 and bm25B), over every chunk of a pair of visible that holds one
// of its terms, with the whole index's
// statistics (its chunks, their average length, each term's document
// frequency: the live segments' and the pending chunks'). A last word that
// ends the query (q.Prefix) and whose term is in no chunk stands for up to
// MaxPrefixMatches terms that begin with it, the most frequent; prefixes
// is then that word, for Highlights. When q has phrases, the chunks that
// hold every word of them come first (to be checked against the phrases,
// Query.Matches, by the caller, who ranks those that fail with the
// others), then the chunks that lack one (Scored.Words), each group best
// first. The candidates still have to be checked against the caller's
// rights on each document. A block that does not decode is reported by
// Candidates.Take, which scores.
func Score(r Reader, s *Snapshot, q Query, visible map[int64]bool) (cands *Candidates, prefixes []string, err error) {
	if s.Chunks == 0 {
		return &Candidates{}, nil, nil
	}
	weights := map[string]float64{}
	for t, n := range q.Terms {
		weights[t] = float64(n)
	}
	asked := slices.Sorted(maps.Keys(weights))
	if q.PrefixTerm != "" && weights[q.PrefixTerm] == 0 {
		asked = append(asked, q.PrefixTerm)
		slices.Sort(asked)
	}
	blocks, err := readBlocks(r, asked)
	if err != nil {
		return nil, nil, err
	}
	df := s.df(asked, blocks)
	if q.Prefix != "" && df[q.PrefixTerm] == 0 {
		expanded, err := s.expandPrefix(r, q.Prefix)
		if err != nil {
			return nil, nil, err
		}
		if len(expanded) > 0 {
			prefixes = []string{q.Prefix}
			delete(weights, q.PrefixTerm)
			more, err := readBlocks(r, slices.Sorted(maps.Keys(expanded)))
			if err != nil {
				return nil, nil, err
			}
			for t, n := range expanded {
				df[t], blocks[t] = n, more[t]
				weights[t] += 1
			}
		}
	}
	var terms []scoreTerm
	for _, t := range slices.Sorted(maps.Keys(weights)) {
		if df[t] > 0 {
			terms = append(terms, scoreTerm{term: t, w: weights[t] * idf(s.Chunks, df[t])})
		}
	}
	// A chunk may hold the phrases when it holds every word of them: each
	// such term is marked, and a chunk counts the marked terms it holds.
	need := 0
	for _, p := range q.Phrases {
		for _, t := range p.Terms {
			i, ok := slices.BinarySearchFunc(terms, t, func(s scoreTerm, t string) int { return strings.Compare(s.term, t) })
			if !ok {
				need = -1 // In no chunk: no chunk holds the phrase.
				break
			}
			if !terms[i].phrase {
				terms[i].phrase = true
				need++
			}
		}
		if need < 0 {
			break
		}
	}
	if need < 0 {
		need = len(terms) + 1 // More than any chunk holds.
	}
	if len(terms) == 0 {
		return &Candidates{}, prefixes, nil
	}
	cands = &Candidates{pass: s.scorer(terms, blocks, visible, need, float64(s.Length)/float64(s.Chunks))}
	cands.idf, cands.first = map[string]float64{}, map[rune]bool{}
	for _, t := range terms {
		cands.idf[t.term] = idf(s.Chunks, df[t.term])
		r, _ := utf8.DecodeRuneInString(t.term)
		cands.first[r] = true
	}
	return cands, prefixes, nil
}

// readBlocks returns the live segments' blocks of terms (sorted), by term.
func readBlocks(r Reader, terms []string) (map[string][]Block, error) {
	out := map[string][]Block{}
	if len(terms) == 0 {
		return out, nil
	}
	bs, err := r.Blocks(terms)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		out[b.Term] = append(out[b.Term], b)
	}
	return out, nil
}

// df returns the document frequencies of terms (sorted): their blocks'
// and the pending chunks' that hold them.
func (s *Snapshot) df(terms []string, blocks map[string][]Block) map[string]int64 {
	df := map[string]int64{}
	for _, t := range terms {
		for _, b := range blocks[t] {
			df[t] += b.DF
		}
	}
	for _, p := range s.Pending {
		// A pending chunk whose terms do not decode matches nothing (Flush
		// writes it without postings).
		_ = JoinTerms(p.Terms, terms, func(i, _ int) { df[terms[i]]++ })
	}
	return df
}

// prefixCandidates is how many terms that begin with a prefix are weighed
// (the first in byte order) to find the most frequent.
const prefixCandidates = 256

// expandPrefix returns up to MaxPrefixMatches terms of the index that
// begin with prefix (the most frequent of the first prefixCandidates in
// byte order), and their document frequencies.
func (s *Snapshot) expandPrefix(r Reader, prefix string) (map[string]int64, error) {
	terms, err := r.PrefixTerms(prefix, prefixCandidates)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, t := range terms {
		set[t] = true
	}
	for _, p := range s.Pending {
		_ = EachTerm(p.Terms, func(term []byte, _ int) bool { // One that does not decode matches nothing.
			if strings.HasPrefix(string(term), prefix) {
				set[string(term)] = true
			}
			return string(term) < prefix || strings.HasPrefix(string(term), prefix)
		})
	}
	cands := slices.Sorted(maps.Keys(set))
	if len(cands) > prefixCandidates {
		cands = cands[:prefixCandidates]
	}
	if len(cands) == 0 {
		return nil, nil
	}
	df, err := r.DF(cands)
	if err != nil {
		return nil, err
	}
	if df == nil {
		df = map[string]int64{}
	}
	for _, p := range s.Pending {
		_ = JoinTerms(p.Terms, cands, func(i, _ int) { df[cands[i]]++ }) // One that does not decode matches nothing.
	}
	sort.SliceStable(cands, func(i, j int) bool { return df[cands[i]] > df[cands[j]] })
	out := map[string]int64{}
	for _, t := range cands {
		if df[t] > 0 && len(out) < MaxPrefixMatches {
			out[t] = df[t]
		}
	}
	return out, nil
}

// scoreTerm is a term of a search, its weight (the times it was asked
// times its idf), and whether it is a word of the query's phrases.
type scoreTerm struct {
	term   string
	w      float64
	phrase bool
}

// scorer returns the pass of Candidates: it scores, by BM25 (Lucene's),
// the chunks of a visible pair that hold one of terms, and keeps the best
// k of each group: a chunk that holds fewer than need of the phrase words
// (scoreTerm.phrase) is of the second (Scored.Words). In a segment, only
// the visible pairs' postings are decoded (a block keeps them by pair),
// and a pair's chunks are scored a chunk at a time, its terms' postings
// read side by side in the chunks' order (see group.score), skipping
// those that cannot be kept.
func (s *Snapshot) scorer(terms []scoreTerm, blocks map[string][]Block, visible map[int64]bool, need int, avgdl float64) func(k int) ([]scored, []scored, int, error) {
	names := make([]string, len(terms))
	phrases := 0
	for i, t := range terms {
		names[i] = t.term
		if t.phrase {
			phrases++
		}
	}
	return func(k int) ([]scored, []scored, int, error) {
		kept := &keeper{best: &topK{k: k}, words: &topK{k: k}, need: need, toBest: need <= phrases, toWords: need > 0}
		// Every visible run of every term, then sorted by segment and
		// pair (a group), then term: one cursor each, in one slice.
		type found struct {
			seg  int64
			term int
			run  Run
		}
		var all []found
		var runs []Run
		for i, t := range terms {
			for _, b := range blocks[t.term] {
				var err error
				if runs, err = AppendRuns(runs[:0], b.Postings, visible); err != nil {
					return nil, nil, 0, err
				}
				for _, r := range runs {
					all = append(all, found{b.Segment, i, r})
				}
			}
		}
		slices.SortFunc(all, func(a, b found) int {
			return cmp.Or(cmp.Compare(a.seg, b.seg), cmp.Compare(a.run.Pair, b.run.Pair), cmp.Compare(a.term, b.term))
		})
		cursors := make([]cursor, len(all))
		ptrs := make([]*cursor, len(all))
		var groups []group
		for i, f := range all {
			t := terms[f.term]
			c := &cursors[i]
			*c = cursor{r: f.run.Reader(), w: t.w, subMax: -1}
			if t.phrase {
				c.phrase = 1
			}
			c.max = c.r.runMax(c.w, avgdl)
			ptrs[i] = c
			if i == 0 || f.seg != all[i-1].seg || f.run.Pair != all[i-1].run.Pair {
				groups = append(groups, group{avgdl: avgdl, byTerm: ptrs[i:i]})
			}
			g := &groups[len(groups)-1]
			g.byTerm, g.most = g.byTerm[:len(g.byTerm)+1], g.most+c.max
		}
		// The groups that may score the most first, so that the
		// threshold rises early.
		slices.SortStableFunc(groups, func(a, b group) int { return cmp.Compare(b.most, a.most) })
		var scratch groupScratch
		for i := range groups {
			if err := groups[i].score(kept, &scratch); err != nil {
				return nil, nil, 0, err
			}
		}
		for _, p := range s.Pending {
			if !visible[p.Pair] {
				continue
			}
			var score float64
			has := 0
			matched := false
			if err := JoinTerms(p.Terms, names, func(j, tf int) {
				matched = true
				if terms[j].phrase {
					has++
				}
				score += bm25Part(terms[j].w, tf, p.Length, avgdl)
			}); err != nil {
				continue // A pending chunk whose terms do not decode matches nothing.
			}
			if matched {
				kept.add(p.Chunk, score, has)
			}
		}
		return kept.best.sorted(), kept.words.sorted(), kept.offered, nil
	}
}

// keeper keeps a pass's best chunks of each group, and says what score a
// chunk must reach to be kept.
type keeper struct {
	best, words *topK
	need        int
	// Whether a chunk may go to each group: with no phrases every chunk
	// is of the first, and with a phrase word in no chunk, of the second.
	toBest, toWords bool
	offered         int // The chunks offered.
}

// add offers a chunk that holds has of the phrase words to its group.
func (k *keeper) add(chunk int64, score float64, has int) {
	k.offered++
	if has < k.need {
		k.words.offer(scored{chunk, score})
	} else {
		k.best.offer(scored{chunk, score})
	}
}

// thresholds returns the scores a chunk must reach to be kept by each
// group: best, by a chunk that holds every phrase word, and words, by one
// that lacks one. Each is -Inf while its group keeps fewer than its k,
// and +Inf when no chunk may go to it. One that reaches it exactly may
// still be kept (a tie goes to the lower id).
func (k *keeper) thresholds() (best, words float64) {
	return threshold(k.best, k.toBest), threshold(k.words, k.toWords)
}

// threshold returns the score a chunk must reach to be kept by h (see
// keeper.thresholds); to says whether a chunk may go to it.
func threshold(h *topK, to bool) float64 {
	switch {
	case !to || h.k == 0:
		return math.Inf(1)
	case len(h.h) < h.k:
		return math.Inf(-1)
	}
	return h.h[0].Score
}

// below reports whether a chunk whose score is at most bound cannot be
// kept by a pass whose threshold is t. The bound is a sum in another
// order than the score's: a margin far above the rounding of a few
// additions keeps it above the score.
func below(bound, t float64) bool { return bound+bound*1e-9 < t }

// cursor is a term's run in a group.
type cursor struct {
	r      RunReader
	phrase int // 1 for a phrase word.
	w      float64
	max    float64 // The most it adds to a chunk's score (w × its best impact).
	done   bool    // At the run's end.
	// subMax is the most its sub-block that ends at chunk subLast adds.
	subLast int64
	subMax  float64
}

// moved takes what moving c's reader reported (ok: it is at a posting):
// at the run's end c is done, and a run that does not decode is
// ErrCorrupt.
func (c *cursor) moved(ok bool) error {
	switch {
	case ok:
	case c.r.bad:
		return ErrCorrupt
	default:
		c.done = true
	}
	return nil
}

// blockMax returns the most a posting of c's current sub-block adds to a
// chunk's score.
func (c *cursor) blockMax(avgdl float64) float64 {
	if c.subLast != c.r.last || c.subMax < 0 {
		c.subLast, c.subMax = c.r.last, c.r.maxImpact(c.w, avgdl)
	}
	return c.subMax
}

// groupScratch is memory the groups of a pass reuse, one after another.
type groupScratch struct {
	cs      []*cursor
	upTo    []float64
	phrases []int
}

// group is a segment's runs of one pair, a cursor a term.
type group struct {
	avgdl  float64   // The chunks' average length.
	byTerm []*cursor // In the terms' order: a score adds them in it.
	most   float64   // The most its cursors add together.
}

// impact returns what a posting of frequency tf in a chunk of length
// length adds to the chunk's score for a term of weight w.
func (g *group) impact(w float64, tf, length int) float64 {
	return bm25Part(w, tf, length, g.avgdl)
}

// bm25Part is what a term of weight w (its idf, times the times it was
// asked) adds to the score of a chunk of length length that holds it tf
// times, where the chunks' average length is avgdl.
func bm25Part(w float64, tf, length int, avgdl float64) float64 {
	return w * float64(tf) / (float64(tf) + bm25K1*(1-bm25B+bm25B*float64(length)/avgdl))
}

// score scores the group's chunks that may be kept, and offers them, as
// MaxScore does (Turtle and Flood; Lucene's MaxScoreBulkScorer) with
// sub-blocks' impacts: the cursors sorted by the most each adds, those
// whose sum cannot reach the threshold are non-essential, and a chunk
// none of the others holds is never looked at; a chunk the others hold is
// scored only when its best score with what the non-essential cursors'
// sub-blocks may add reaches it; and a window where the cursors'
// sub-blocks cannot reach it together is skipped unread. The threshold is
// that of the group (keeper.thresholds) a chunk may go to: words' for a
// chunk known to lack a phrase word, the lower of both otherwise, so that
// the phrase words' cursors stay essential while best keeps fewer than
// its k. Every chunk that is kept is scored in full, its terms added in
// their order, so the scores, and the chunks kept, are those of a pass
// that scores every one.
func (g *group) score(kept *keeper, scratch *groupScratch) error {
	cs := append(scratch.cs[:0], g.byTerm...)
	scratch.cs = cs
	phrases := 0 // The group's phrase words: with fewer than need, no chunk of it holds them all.
	for _, c := range cs {
		phrases += c.phrase
		if err := c.moved(c.r.Next()); err != nil {
			return err
		}
	}
	slices.SortStableFunc(cs, func(a, b *cursor) int { return cmp.Compare(a.max, b.max) })
	// upTo[i] is the most cs[:i] add together, and phrasesUpTo[i] how
	// many of them are phrase words.
	upTo := append(scratch.upTo[:0], make([]float64, len(cs)+1)...)
	phrasesUpTo := append(scratch.phrases[:0], make([]int, len(cs)+1)...)
	scratch.upTo, scratch.phrases = upTo, phrasesUpTo
	for i, c := range cs {
		upTo[i+1], phrasesUpTo[i+1] = upTo[i]+c.max, phrasesUpTo[i]+c.phrase
	}
	mayBest := phrases >= kept.need
	ess := 0               // cs[:ess] are non-essential.
	var checked int64 = -1 // The end of the last window found worth reading.
	for {
		tb, tw := kept.thresholds()
		if !mayBest {
			tb = math.Inf(1)
		}
		// A chunk that only cs[:ess+1] hold is left unread when it cannot
		// reach words' threshold, nor best's unless it lacks a phrase
		// word (one of them, when they hold fewer than need).
		for ess < len(cs) && below(upTo[ess+1], tw) && (below(upTo[ess+1], tb) || phrasesUpTo[ess+1] < kept.need) {
			ess++
		}
		// The next chunk: the first an essential cursor holds, and the
		// window up to the end of the first of their sub-blocks.
		chunk, end := int64(math.MaxInt64), int64(math.MaxInt64)
		for _, c := range cs[ess:] {
			if !c.done {
				chunk, end = min(chunk, c.r.cur.Chunk), min(end, c.r.last)
			}
		}
		if chunk == math.MaxInt64 {
			return nil
		}
		if t := min(tb, tw); chunk > checked && !math.IsInf(t, -1) && end != math.MaxInt64 {
			bound := upTo[ess]
			for _, c := range cs[ess:] {
				if !c.done {
					bound += c.blockMax(g.avgdl)
				}
			}
			checked = end
			if below(bound, t) {
				for _, c := range cs[ess:] {
					if c.done {
						continue
					}
					if err := c.moved(c.r.skipTo(end + 1)); err != nil {
						return err
					}
				}
				continue
			}
		}
		if err := g.consider(kept, cs, ess, upTo, chunk, mayBest, tb, tw); err != nil {
			return err
		}
		for _, c := range cs[ess:] {
			if c.done || c.r.cur.Chunk != chunk {
				continue
			}
			if err := c.moved(c.r.Next()); err != nil {
				return err
			}
		}
	}
}

// consider scores chunk, which an essential cursor (cs[ess:]) holds, and
// offers it, unless its best score cannot reach the threshold of a group
// it may go to (tb best's, tw words'; mayBest false when the group lacks
// a phrase word): what the essential cursors add, then what the
// sub-blocks of the non-essential ones that may hold it may add, then,
// from the cursor that may add the most, what they do add.
func (g *group) consider(kept *keeper, cs []*cursor, ess int, upTo []float64, chunk int64, mayBest bool, tb, tw float64) error {
	if ess > 0 {
		var bound float64
		for _, c := range cs[ess:] {
			switch {
			case !c.done && c.r.cur.Chunk == chunk:
				bound += g.impact(c.w, c.r.cur.TF, c.r.cur.Length)
			case c.phrase > 0:
				mayBest = false
			}
		}
		t := tw
		if mayBest {
			t = min(tb, tw)
		}
		if below(bound+upTo[ess], t) {
			return nil
		}
		// The sub-blocks' impacts are a closer bound than the runs'.
		rest := 0.0
		for _, c := range cs[:ess] {
			switch {
			case c.done || c.r.at && c.r.cur.Chunk > chunk:
				mayBest = mayBest && c.phrase == 0
			case c.r.at && c.r.cur.Chunk == chunk:
				rest += g.impact(c.w, c.r.cur.TF, c.r.cur.Length)
			case c.r.shallow(chunk):
				rest += c.blockMax(g.avgdl)
			case c.r.bad:
				return ErrCorrupt
			default:
				c.done = true
				mayBest = mayBest && c.phrase == 0
			}
		}
		if !mayBest {
			t = tw
		}
		if below(bound+rest, t) {
			return nil
		}
		for i := ess - 1; i >= 0; i-- {
			c := cs[i]
			if !c.done {
				if err := c.moved(c.r.skipTo(chunk)); err != nil {
					return err
				}
			}
			if !c.done && c.r.cur.Chunk == chunk {
				bound += g.impact(c.w, c.r.cur.TF, c.r.cur.Length)
			} else if c.phrase > 0 {
				t = tw
			}
			if below(bound+upTo[i], t) {
				return nil
			}
		}
	}
	// The score in full, the terms in their order.
	var score float64
	has := 0
	for _, c := range g.byTerm {
		if !c.done && c.r.at && c.r.cur.Chunk == chunk {
			score += g.impact(c.w, c.r.cur.TF, c.r.cur.Length)
			has += c.phrase
		}
	}
	kept.add(chunk, score, has)
	return nil
}
