package index

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestScore checks one ranking to the digit, pending and in a segment:
// BM25 with k1 2 and b 0.9 over two chunks whose lengths count their
// title twice (store's TestSearchScore checks the same on each database).
func TestScore(t *testing.T) {
	m := newMemory()
	// Lengths 2+3 = 5 and 2+5 = 7 (the title counts twice): the average is 6.
	a := m.add(1, "one", "alpha beta gamma")
	b := m.add(1, "two", "alpha alpha delta epsilon zeta")
	idf := math.Log(1 + (2-2+0.5)/(2+0.5))
	bm25 := func(tf, length float64) float64 { return idf * tf / (tf + 2.0*(1-0.9+0.9*length/6)) }
	want := []Scored{{Chunk: b, Score: bm25(2, 7)}, {Chunk: a, Score: bm25(1, 5)}}
	for _, step := range []string{"pending", "flushed"} {
		if step == "flushed" && !m.flush() {
			t.Fatal("nothing flushed")
		}
		got, err := m.search(ParseQuery("alpha"), map[int64]bool{1: true}, 10)
		if err != nil || len(got) != 2 {
			t.Fatalf("%s: %v, %v", step, got, err)
		}
		for i := range want {
			if got[i].Chunk != want[i].Chunk || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
				t.Errorf("%s: %d scores %.12f, want %d %.12f", step, got[i].Chunk, got[i].Score, want[i].Chunk, want[i].Score)
			}
		}
		// Another pair's chunks are neither scored nor counted out.
		if got, err := m.search(ParseQuery("alpha"), map[int64]bool{2: true}, 10); err != nil || len(got) != 0 {
			t.Errorf("%s: another pair's caller finds %v, %v", step, got, err)
		}
	}
}

// TestScoreLength checks the weight of a chunk's length (b 0.9, k1 2):
// a chunk that holds the word once in 3 words ranks above one that holds
// it twice in 7 (the average is 5). With Lucene's defaults (k1 1.2, b
// 0.75) the second ranked first.
func TestScoreLength(t *testing.T) {
	m := newMemory()
	twice := m.add(1, "one", "alpha alpha beta gamma delta") // 2 + 5 words.
	once := m.add(1, "two", "alpha")                         // 2 + 1 words.
	for _, step := range []string{"pending", "flushed"} {
		if step == "flushed" && !m.flush() {
			t.Fatal("nothing flushed")
		}
		got, err := m.search(ParseQuery("alpha"), map[int64]bool{1: true}, 10)
		if err != nil || len(got) != 2 || got[0].Chunk != once || got[1].Chunk != twice {
			t.Errorf("%s: %v, %v; want chunk %d then %d", step, got, err, once, twice)
		}
	}
}

// TestPhraseAmongManyTerms checks that a phrase's words are found
// wherever they sort among the query's terms: past the 64th of them, once
// a prefix has added its terms (store's TestSearchPhraseAmongManyTerms
// checks the same through a database); the chunk with the phrase ranks
// first, the one with its words only after it.
func TestPhraseAmongManyTerms(t *testing.T) {
	const letters = "bcdfgklmnp" // No English suffix ends in these: each word is its own term.
	word := func(prefix string, i int) string { return prefix + string(letters[i/10]) + string(letters[i%10]) }
	var many, prefixed []string
	for i := range 60 {
		many = append(many, word("zz", i))
	}
	for i := range 32 {
		prefixed = append(prefixed, word("abq", i))
	}
	for _, flushed := range []bool{false, true} {
		m := newMemory()
		// Without the phrase's order, its words twice: it scores better.
		m.add(1, "Other", "zzzcd zzzbk "+strings.Join(many, " ")+" "+strings.Join(many, " ")+" "+strings.Join(prefixed, " "))
		m.add(1, "Many", "zzzbk zzzcd "+strings.Join(many, " ")+" "+strings.Join(prefixed, " "))
		if flushed {
			m.flush()
		}
		for _, q := range []string{`"zzzbk zzzcd" ` + strings.Join(many, " "), `"zzzbk zzzcd" ` + strings.Join(many, " ") + " ab"} {
			got, err := m.search(ParseQuery(q), map[int64]bool{1: true}, 10)
			if err != nil || len(got) != 2 || got[0].Chunk != 2 || got[0].Words || got[1].Chunk != 1 || got[1].Score <= got[0].Score {
				t.Errorf("flushed %v: %v (%v) for %.40q…, want chunk 2 then chunk 1 (its words, a better score)", flushed, got, err, q)
			}
		}
		// A phrase word that is in no chunk: the other words still find both.
		got, err := m.search(ParseQuery(`"zzzbk zzzqq" `+strings.Join(many, " ")), map[int64]bool{1: true}, 10)
		if err != nil || len(got) != 2 || !got[0].Words || !got[1].Words {
			t.Errorf("flushed %v: a phrase of a missing word finds %v, %v; want both chunks by their words", flushed, got, err)
		}
	}
}

// TestPhraseFallback checks the rule of a phrase that not every chunk
// holds: the chunks that hold it rank first, by score, then those that
// hold only its words (some or all of them, out of order), by score; a
// phrase that no chunk holds finds its words' chunks.
func TestPhraseFallback(t *testing.T) {
	for _, flushed := range []bool{false, true} {
		m := newMemory()
		inOrder := m.add(1, "Wings", "the flow of air over wings")
		reversed := m.add(1, "Air", "air flow air flow air flow") // Both words, better scores, never in order.
		one := m.add(1, "Flow", "flow flow flow flow")
		m.add(1, "Other", "nothing here")
		if flushed {
			m.flush()
		}
		for _, c := range []struct {
			q    string
			want []int64
		}{
			{`"flow of air"`, []int64{inOrder, reversed, one}},
			{`"flow of air" wings`, []int64{inOrder, reversed, one}},
			{`"air flow"`, []int64{reversed, inOrder, one}},
			{`"flow of steam"`, []int64{one, reversed, inOrder}}, // No chunk holds steam.
		} {
			got, err := m.search(ParseQuery(c.q), map[int64]bool{1: true}, 10)
			var ids []int64
			for _, s := range got {
				ids = append(ids, s.Chunk)
			}
			if err != nil || !slices.Equal(ids, c.want) {
				t.Errorf("flushed %v: %s finds %v (%v), want %v", flushed, c.q, ids, err, c.want)
			}
		}
	}
}

// TestManyTerms checks that a word past the 64th of a query still counts:
// the only word that a chunk holds is the query's 100th.
func TestManyTerms(t *testing.T) {
	const letters = "bcdfgklmnp"
	var words []string
	for i := range 100 {
		words = append(words, "zz"+string(letters[i/10])+string(letters[i%10]))
	}
	m := newMemory()
	c := m.add(1, "Last", words[99]+" filler")
	got, err := m.search(ParseQuery(strings.Join(words, " ")+" "), map[int64]bool{1: true}, 10)
	if err != nil || len(got) != 1 || got[0].Chunk != c {
		t.Errorf("%v, %v; want chunk %d", got, err, c)
	}
}

// TestPrefix checks the expansion of a last word: when its term is in no
// chunk, it stands for the MaxPrefixMatches most frequent terms that
// begin with it (ties in byte order), each scored as a word; a word that
// is a term is never expanded. Pending chunks and segments count alike.
func TestPrefix(t *testing.T) {
	const letters = "bcdfgklmnp"
	var words []string
	for i := range 40 {
		words = append(words, "qu"+string(letters[i/10])+string(letters[i%10]))
	}
	for _, flushedShare := range []int{0, 1, 2} { // None, half, all of the chunks in segments.
		m := newMemory()
		df := map[string]int64{}
		for i, w := range words {
			for j := range i%7 + 1 {
				m.add(1, "doc", w+" filler")
				df[w]++
				if flushedShare == 1 && j == 0 {
					m.flush()
				}
			}
		}
		if flushedShare == 2 {
			m.flush()
		}
		s := m.snapshot()
		got, err := s.expandPrefix(m, "qu")
		if err != nil {
			t.Fatal(err)
		}
		best := slices.SortedStableFunc(slices.Values(words), func(a, b string) int { return cmp.Compare(df[b], df[a]) })[:MaxPrefixMatches]
		want := map[string]int64{}
		for _, w := range best {
			want[w] = df[w]
		}
		if !maps.Equal(got, want) {
			t.Errorf("share %d: expanded to %v, want %v", flushedShare, got, want)
		}
		cands, prefixes, err := Score(m, s, ParseQuery("qu"), map[int64]bool{1: true})
		if err != nil || !slices.Equal(prefixes, []string{"qu"}) {
			t.Fatalf("share %d: prefixes %v, %v", flushedShare, prefixes, err)
		}
		var n int64
		for _, w := range best {
			n += df[w]
		}
		if found := takeAll(t, cands); int64(len(found)) != n {
			t.Errorf("share %d: %d chunks found, want the %d of the %d terms", flushedShare, len(found), n, MaxPrefixMatches)
		}
		// A word that is a term is that term alone.
		cands, prefixes, err = Score(m, s, ParseQuery(words[0]), map[int64]bool{1: true})
		if found := takeAll(t, cands); err != nil || prefixes != nil || len(found) != int(df[words[0]]) {
			t.Errorf("share %d: %s found %d chunks, prefixes %v, %v", flushedShare, words[0], len(found), prefixes, err)
		}
	}
}

// searchWords are the vocabulary of the equivalence test's documents.
var searchWords = strings.Fields(`granite basalt quartz feldspar mica shale slate marble gneiss schist
	obsidian pumice chalk flint jasper agate onyx opal garnet beryl topaz zircon`)

// searchQueries are the searches whose results where a chunk is kept must
// not move: words, a phrase, a prefix.
var searchQueries = []string{"granite", "basalt quartz", "zircon onyx opal", `"granite basalt"`, "gar", "slate mic"}

// addDocs writes documents ids (version: a different text for the same
// id) with words drawn from searchWords, reproducibly, to pairs 1 to 3,
// and returns their chunks' ids.
func addDocs(m *memory, version int, ids ...int) []int64 {
	var out []int64
	for _, id := range ids {
		r := rand.New(rand.NewPCG(uint64(id), uint64(version)))
		words := make([]string, 20+r.IntN(40))
		for i := range words {
			words[i] = searchWords[min(r.IntN(len(searchWords)), r.IntN(len(searchWords)))] // Some words are frequent.
		}
		out = append(out, m.add(int64(1+id%3), searchWords[r.IntN(len(searchWords))], strings.Join(words, " ")))
	}
	return out
}

// results returns every query's results as "chunk score" lines.
func results(t *testing.T, m *memory) [][]Scored {
	t.Helper()
	var out [][]Scored
	for _, q := range searchQueries {
		got, err := m.search(ParseQuery(q), map[int64]bool{1: true, 3: true}, 40)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// TestPendingFlushedMerged checks that where a chunk is kept does not
// change what a search finds or how it scores it, to 1e-9: all pending,
// a segment per batch, and segments merged and expunged, the last two
// leaving out the chunks written again since (store's
// TestSearchIndexMerges checks the same through a database).
func TestPendingFlushedMerged(t *testing.T) {
	pending, flushed, merged := newMemory(), newMemory(), newMemory()
	same := func(step string, a, b *memory) {
		t.Helper()
		got, want := results(t, a), results(t, b)
		for i := range want {
			if len(got[i]) != len(want[i]) || len(want[i]) == 0 {
				t.Errorf("%s: %q: %d results, want %d (and some)", step, searchQueries[i], len(got[i]), len(want[i]))
				continue
			}
			for j := range want[i] {
				if got[i][j].Chunk != want[i][j].Chunk || math.Abs(got[i][j].Score-want[i][j].Score) > 1e-9 {
					t.Errorf("%s: %q #%d: %v, want %v", step, searchQueries[i], j, got[i][j], want[i][j])
				}
			}
		}
	}
	chunkOf := map[int]int64{} // Each document's chunk, in every memory alike.
	write := func(version int, ids ...int) {
		t.Helper()
		for _, m := range []*memory{pending, flushed, merged} {
			for _, id := range ids {
				if c, ok := chunkOf[id]; ok {
					m.remove(c)
				}
			}
			got := addDocs(m, version, ids...)
			if m == merged {
				for i, id := range ids {
					chunkOf[id] = got[i]
				}
			}
		}
	}
	batch := func(i int) []int {
		ids := make([]int, 12)
		for j := range ids {
			ids[j] = i*12 + j
		}
		return ids
	}
	for i := range 9 {
		write(0, batch(i)...)
		flushed.flush()
		merged.flush()
		if did, err := merged.mergeTier(); err != nil || did {
			t.Fatalf("batch %d: merged %v, %v", i, did, err)
		}
		same(fmt.Sprint("segment ", i+1, ", flushed"), flushed, pending)
		same(fmt.Sprint("segment ", i+1, ", merged"), merged, pending)
	}
	// Twelve documents written again: their old chunks stay in their
	// segments until the next merge, matching no chunk; the tenth
	// segment then has the ten merged into one without them.
	write(1, 0, 1, 2, 13, 14, 15, 40, 41, 60, 61, 100, 101)
	merged.flush()
	if did, err := merged.mergeTier(); err != nil || !did || len(merged.segments) != 1 || merged.segments[0].Chunks != int64(len(merged.chunks)) {
		t.Fatalf("the tenth segment: %v, %v; %d segments", did, err, len(merged.segments))
	}
	same("merged", merged, pending)
	// A segment of which a quarter of the chunks are gone is rewritten
	// alone.
	if did, err := merged.expunge(); err != nil || did {
		t.Fatalf("nothing to expunge yet: %v, %v", did, err)
	}
	rewritten := make([]int, 30)
	for i := range rewritten {
		rewritten[i] = i * 3
	}
	write(2, rewritten...)
	merged.flush()
	if did, err := merged.expunge(); err != nil || !did {
		t.Fatalf("expunge: %v, %v", did, err)
	}
	var inSegments int64
	for _, s := range merged.segments {
		inSegments += s.Chunks
	}
	if inSegments != int64(len(merged.chunks)) {
		t.Errorf("after the expunge the segments hold %d chunks, want the %d live ones", inSegments, len(merged.chunks))
	}
	same("expunged", merged, pending)
}

// FuzzMerge checks that merging segments gives the segment that flushing
// their chunks still there at once gives: the same row and the same
// blocks, byte for byte; and that a source whose block does not decode is
// an error, never a panic.
func FuzzMerge(f *testing.F) {
	f.Add(uint64(1), 50, 3, uint8(20), []byte{})
	f.Add(uint64(2), 400, 10, uint8(0), []byte{1, 1, 2, 3})
	f.Add(uint64(3), 1, 1, uint8(255), []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, n, segs int, gone uint8, junk []byte) {
		r := rand.New(rand.NewPCG(seed, 3))
		n, segs = min(max(n, 0), 2000), min(max(segs, 1), 20)
		m := newMemory()
		var all []Pending
		var chunk int64
		for range n {
			chunk += 1 + r.Int64N(100)
			tf := map[string]int{}
			for range 1 + r.IntN(20) {
				tf[fmt.Sprint("t", r.IntN(60))] += 1 + r.IntN(3)
			}
			p := Pending{Chunk: chunk, Pair: r.Int64N(6), Length: r.IntN(500), Terms: EncodeTerms(tf)}
			if r.IntN(50) == 0 {
				p.Terms = []byte{0xff} // Does not decode: in the segment without postings.
			}
			all = append(all, p)
			m.chunks[chunk] = memChunk{pair: p.Pair}
		}
		// The chunks in segments of consecutive runs, then some gone.
		for i := 0; i < segs; i++ {
			m.pending = all[i*len(all)/segs : (i+1)*len(all)/segs]
			m.flush()
		}
		var live []Pending
		for _, p := range all {
			if r.IntN(256) < int(gone) {
				delete(m.chunks, p.Chunk)
			} else {
				live = append(live, p)
			}
		}
		sources := m.sizes()
		if err := m.merge(sources); err != nil {
			t.Fatal(err)
		}
		if len(m.segments) != 1 && len(sources) > 0 {
			t.Fatalf("%d segments after the merge", len(m.segments))
		}
		wantSeg, wantBlocks := Flush(live)
		if len(m.segments) == 1 {
			got := m.segments[0]
			if got.Chunks != wantSeg.Chunks || got.Length != wantSeg.Length || string(got.Norms) != string(wantSeg.Norms) {
				t.Fatalf("merged row %d chunks, length %d; want %d, %d", got.Chunks, got.Length, wantSeg.Chunks, wantSeg.Length)
			}
			if len(got.blocks) != len(wantBlocks) {
				t.Fatalf("%d blocks, want %d", len(got.blocks), len(wantBlocks))
			}
			for i, b := range got.blocks {
				w := wantBlocks[i]
				if b.Term != w.Term || b.DF != w.DF || string(b.Postings) != string(w.Postings) {
					t.Fatalf("block %d: %s ×%d, want %s ×%d", i, b.Term, b.DF, w.Term, w.DF)
				}
			}
		}
		// A source whose block is junk.
		cursors := []Cursor{&memCursor{blocks: wantBlocks}, &memCursor{blocks: []Block{{Term: "t1", Postings: junk}}}}
		chunks, lengths, _ := DecodeNorms(wantSeg.Norms)
		everything, _ := NewLive(chunks, func(lo, hi int64) ([]int64, error) { return chunks, nil })
		_, err := Merge(cursors, chunks, lengths, everything, func([]Block) error { return nil })
		if _, bad := DecodeBlock(junk); (bad != nil) != (err != nil) {
			t.Fatalf("a junk block (%v): merge %v", bad, err)
		}
	})
}

// TestProximity checks the nearness bonus: two chunks of the same words
// (so of the same BM25 score) differ by where the query's words stand;
// the one that holds them side by side gets the larger bonus, one that
// holds them 3 words apart less, one that holds a single query term (or a
// query of one term) none, and the bonus is BM25TP's to the digit.
func TestProximity(t *testing.T) {
	m := newMemory()
	m.add(1, "x", "alpha beta gamma delta epsilon")
	m.add(1, "x", "alpha gamma delta beta epsilon")
	m.add(1, "x", "gamma delta epsilon zeta eta")
	cands, _, err := Score(m, m.snapshot(), ParseQuery("alpha beta"), map[int64]bool{1: true})
	if err != nil {
		t.Fatal(err)
	}
	near, far := cands.Proximity("x", "alpha beta gamma delta epsilon"), cands.Proximity("x", "alpha gamma delta beta epsilon")
	idf := math.Log(1 + (3-2+0.5)/(2+0.5)) // alpha and beta are each in 2 of 3 chunks.
	sat := func(n float64) float64 { return n * 3 / (n + 2) }
	if want := ProximityWeight * 2 * idf * sat(1); math.Abs(near-want) > 1e-12 {
		t.Errorf("side by side: %.12f, want %.12f", near, want)
	}
	if want := ProximityWeight * 2 * idf * sat(1.0/9); math.Abs(far-want) > 1e-12 {
		t.Errorf("3 apart: %.12f, want %.12f", far, want)
	}
	// The title and the text apart: alpha ends the title, beta opens the text.
	if got := cands.Proximity("gamma alpha", "beta"); got != 0 {
		t.Errorf("across title and text: %v, want 0", got)
	}
	if got := cands.Proximity("x", "alpha alpha gamma"); got != 0 {
		t.Errorf("one term: %v, want 0", got)
	}
	one, _, err := Score(m, m.snapshot(), ParseQuery("alpha"), map[int64]bool{1: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := one.Proximity("x", "alpha beta"); got != 0 {
		t.Errorf("a query of one term: %v, want 0", got)
	}
}

// takeAll takes every candidate at once: a pass that keeps them all.
func takeAll(t *testing.T, c *Candidates) []Scored {
	t.Helper()
	all, err := c.Take(math.MaxInt32)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestTakeAsIfAllKept checks that candidates taken a few at a time, each
// pass keeping only the best of what was asked for and scoring again when
// asked for more, come in the order of one pass that keeps every chunk:
// best first, ties by id, the chunks that may hold the phrases first.
func TestTakeAsIfAllKept(t *testing.T) {
	m := newMemory()
	addDocs(m, 0, rangeN(0, 400)...)
	m.flush()
	addDocs(m, 1, rangeN(400, 600)...) // And some pending.
	visible := map[int64]bool{1: true, 3: true}
	queries := append(slices.Clone(searchQueries), `"quartz feldspar" mica`, `"topaz zircon" granite`, "onyx onyx granite", "zzz")
	for _, q := range queries {
		cands, _, err := Score(m, m.snapshot(), ParseQuery(q), visible)
		if err != nil {
			t.Fatal(err)
		}
		want := takeAll(t, cands)
		if len(want) < 2 && q != "zzz" {
			t.Fatalf("%q: %d candidates: the test needs more", q, len(want))
		}
		for i := 1; i < len(want); i++ {
			a, b := want[i-1], want[i]
			if a.Words == b.Words && (a.Score < b.Score || a.Score == b.Score && a.Chunk > b.Chunk) || a.Words && !b.Words {
				t.Fatalf("%q: %v before %v", q, a, b)
			}
		}
		for _, step := range []int{1, 3, 10, 40, 1000} {
			cands, _, err := Score(m, m.snapshot(), ParseQuery(q), visible)
			if err != nil {
				t.Fatal(err)
			}
			got := takeSteps(t, cands, step, math.MaxInt)
			if !slices.Equal(got, want) {
				t.Errorf("%q taken %d at a time: %d candidates, want %d in the same order", q, step, len(got), len(want))
			}
		}
	}
}

// TestPruneAsIfAllScored checks pruning by impacts (MaxScore with
// sub-blocks) against passes that score every chunk, over runs of many
// sub-blocks, some segments of blocks of the first format (no impacts),
// pending chunks, phrases and repeated words: candidates taken a few at a
// time are those, in the order and with the scores, of one pass that keeps
// them all; and a search that takes its first 40 scores far fewer chunks
// than hold its words.
func TestPruneAsIfAllScored(t *testing.T) {
	m := newMemory()
	for batch := range 4 {
		addDocs(m, 0, rangeN(batch*1500, (batch+1)*1500)...)
		m.flush()
	}
	for _, g := range m.segments[:2] { // As a database written before sub-blocks holds them.
		for i, b := range g.blocks {
			ps, err := DecodeBlock(b.Postings)
			if err != nil {
				t.Fatal(err)
			}
			g.blocks[i].Postings = encodeFirstFormat(ps)
		}
	}
	// A pair of few chunks: runs of at most smallRun postings (no
	// impacts), and groups that lack some of a query's words.
	for _, text := range []string{"granite quartz granite", "quartz feldspar mica granite", "onyx", "zircon topaz topaz"} {
		m.add(4, "", text)
	}
	m.flush()
	addDocs(m, 1, rangeN(6000, 6300)...) // And some pending.
	visible := map[int64]bool{1: true, 3: true, 4: true}
	if cands, _, err := Score(m, m.snapshot(), ParseQuery("granite"), nil); err != nil || len(takeAll(t, cands)) != 0 {
		t.Fatalf("a caller who sees no pair: %v", err)
	}
	queries := append(slices.Clone(searchQueries), `"quartz feldspar" mica`, `"topaz zircon" granite`, "onyx onyx granite", "zzz")
	r := rand.New(rand.NewPCG(3, 3))
	for range 30 {
		words := make([]string, 1+r.IntN(4))
		for i := range words {
			words[i] = searchWords[r.IntN(len(searchWords))]
		}
		queries = append(queries, strings.Join(words, " "))
	}
	// Phrases of two words and a word, frequent or not, are held to a
	// full pass, not counted: their words often meet, so both groups
	// fill.
	counted := len(queries)
	for range 20 {
		w := func() string { return searchWords[r.IntN(len(searchWords))] }
		queries = append(queries, `"`+w()+" "+w()+`" `+w())
	}
	held, offered := 0, 0
	heldPhrase, offeredPhrase := 0, 0 // Of the queries with phrases.
	for i, q := range queries {
		cands, _, err := Score(m, m.snapshot(), ParseQuery(q), visible)
		if err != nil {
			t.Fatal(err)
		}
		want := takeAll(t, cands)
		for _, step := range []int{1, 7, 40} {
			cands, _, err := Score(m, m.snapshot(), ParseQuery(q), visible)
			if err != nil {
				t.Fatal(err)
			}
			got := takeSteps(t, cands, step, 200)
			if !slices.Equal(got, want[:len(got)]) || len(got) < min(200, len(want)) {
				t.Fatalf("%q taken %d at a time: %d candidates, not the first %d of a pass that keeps them all", q, step, len(got), len(want))
			}
			if step == 40 && len(want) > 1000 && i < counted {
				first, _, err := Score(m, m.snapshot(), ParseQuery(q), visible)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := first.Take(40); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(q, `"`) {
					heldPhrase, offeredPhrase = heldPhrase+len(want), offeredPhrase+first.offered
				} else {
					held, offered = held+len(want), offered+first.offered
				}
			}
		}
	}
	if held == 0 || offered*4 > held {
		t.Errorf("the first 40 of searches whose words %d chunks hold scored %d of them: pruning skips less than three in four", held, offered)
	}
	// With phrases, the words' group prunes while the phrases' one is
	// not full: the phrase words' cursors alone stay essential.
	if heldPhrase == 0 || offeredPhrase*10 > heldPhrase*7 {
		t.Errorf("searches with phrases whose words %d chunks hold scored %d of them: pruning skips less than three in ten", heldPhrase, offeredPhrase)
	}
	t.Logf("the first 40 of searches whose words %d chunks hold scored %d of them; with phrases, %d of %d", held, offered, offeredPhrase, heldPhrase)
}

// takeSteps takes candidates step at a time until fewer come back or at
// least most are taken.
func takeSteps(t *testing.T, c *Candidates, step, most int) []Scored {
	t.Helper()
	var got []Scored
	for len(got) < most {
		next, err := c.Take(step)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, next...)
		if len(next) < step {
			break
		}
	}
	return got
}

// rangeN returns the integers from lo to hi, hi excluded.
func rangeN(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// TestTopK checks topK against sorting: whatever the order chunks are
// offered in, it keeps the k that rank first (ties by id), best first.
func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n, k := r.IntN(300), r.IntN(50)
		all := make([]scored, n)
		for i := range all {
			all[i] = scored{Chunk: int64(i), Score: float64(r.IntN(20))} // Many ties.
		}
		r.Shuffle(n, func(i, j int) { all[i], all[j] = all[j], all[i] })
		top := &topK{k: k}
		for _, x := range all {
			top.offer(x)
		}
		want := slices.SortedFunc(slices.Values(all), func(a, b scored) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Chunk, b.Chunk))
		})
		if got := top.sorted(); !slices.Equal(got, want[:min(k, n)]) {
			t.Fatalf("n %d, k %d: kept %v, want %v", n, k, got, want[:min(k, n)])
		}
	}
}
