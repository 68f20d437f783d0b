package index

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/internal/corpus"
)

// The engine's benchmarks, in memory: the codec, a flush, a merge of ten
// segments and the scoring of a search over a generated corpus (package
// corpus, as quarry bench -op search and store's BenchmarkSearch load it).
// What the database adds (reading the rows, the rights) is measured by
// those two.

// benchPostings returns the postings of a common term: n chunks spread
// over 60 pairs.
func benchPostings(n int) []Posting {
	r := rand.New(rand.NewPCG(1, 1))
	ps := make([]Posting, n)
	var chunk int64
	for i := range ps {
		chunk += 1 + r.Int64N(8)
		ps[i] = Posting{Chunk: chunk, Pair: int64(i/100) % 60, TF: 1 + r.IntN(5), Length: 300 + r.IntN(100)}
	}
	return ps
}

func BenchmarkEncodeBlock(b *testing.B) {
	ps := benchPostings(10_000)
	b.SetBytes(int64(len(EncodeBlock(ps))))
	for b.Loop() {
		EncodeBlock(ps)
	}
}

func BenchmarkDecodeBlock(b *testing.B) {
	block := EncodeBlock(benchPostings(10_000))
	b.SetBytes(int64(len(block)))
	for b.Loop() {
		if _, err := DecodeBlock(block); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMemory returns a memory of docs documents of the corpus, one chunk
// each, 100 at a time to each of 60 pairs in turn; settled unless
// pending.
func benchMemory(b *testing.B, docs int, settle bool) *memory {
	b.Helper()
	gen := corpus.New(1)
	m := newMemory()
	for i := range docs {
		title, text := gen.Document()
		m.add(int64(i/100)%60, title, text)
		if settle && len(m.pending) == FlushChunks {
			if err := m.settle(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if settle {
		if err := m.settle(); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

func BenchmarkFlush(b *testing.B) {
	m := benchMemory(b, FlushChunks, false)
	for b.Loop() {
		Flush(m.pending)
	}
	b.ReportMetric(float64(FlushChunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkMerge merges ten segments of 1,000 chunks (a tier's merge),
// a tenth of whose chunks are gone.
func BenchmarkMerge(b *testing.B) {
	m := newMemory()
	gen := corpus.New(1)
	for i := range 10_000 {
		title, text := gen.Document()
		m.add(int64(i/100)%60, title, text)
		if len(m.pending) == 1000 {
			m.flush()
		}
	}
	for id := int64(1); id <= m.last; id += 10 {
		m.remove(id)
	}
	sources := ChooseMerge(m.sizes())
	if len(sources) != 10 {
		b.Fatalf("%d sources", len(sources))
	}
	for b.Loop() {
		chunks, lengths, live, err := m.segmentChunks(sources)
		if err != nil {
			b.Fatal(err)
		}
		cursors := make([]Cursor, len(sources))
		for i, s := range sources {
			cursors[i] = &memCursor{blocks: m.segment(s.ID).blocks}
		}
		if _, err := Merge(cursors, chunks, lengths, live, func([]Block) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// benchSearchCorpus returns the corpus of the search benchmarks:
// QUARRY_BENCH_DOCS documents (20,000 by default) settled into segments,
// the pairs a person of quarry bench -op search sees (13 of the 60), and
// the generator of its queries.
func benchSearchCorpus(b *testing.B) (*memory, map[int64]bool, *corpus.Generator) {
	docs := 20_000
	if v, err := strconv.Atoi(os.Getenv("QUARRY_BENCH_DOCS")); err == nil {
		docs = v
	}
	visible := map[int64]bool{}
	for p := range int64(13) {
		visible[p] = true
	}
	m := searchCorpora[docs]
	if m == nil {
		m = benchMemory(b, docs, true)
		searchCorpora[docs] = m
	}
	return m, visible, corpus.New(2)
}

// searchCorpora are the search benchmarks' corpora by size, built once a
// process (scoring never changes them): one of 1,000,000 documents takes
// minutes.
var searchCorpora = map[int]*memory{}

// BenchmarkScore scores corpus.Query's queries over QUARRY_BENCH_DOCS
// documents (20,000 by default), settled into segments, for a caller who
// sees 13 of the 60 pairs (as quarry bench -op search's person), and
// takes the first batch of candidates the store checks for 30 results.
func BenchmarkScore(b *testing.B) {
	m, visible, gen := benchSearchCorpus(b)
	queries := make([]Query, 100)
	for i := range queries {
		queries[i] = ParseQuery(gen.Query())
	}
	s := m.snapshot()
	b.ResetTimer()
	found, offered := 0, 0
	for i := 0; b.Loop(); i++ {
		cands, _, err := Score(m, s, queries[i%len(queries)], visible)
		if err != nil {
			b.Fatal(err)
		}
		next, err := cands.Take(30 + 10)
		if err != nil {
			b.Fatal(err)
		}
		found, offered = found+len(next), offered+cands.offered
	}
	b.ReportMetric(float64(offered)/float64(b.N), "scored/op")
	b.ReportMetric(float64(found)/float64(b.N), "candidates/op")
	b.ReportMetric(float64(len(m.segments)), "segments")
}

// BenchmarkScorePhrase is BenchmarkScore with each query's first two words
// a phrase, which few chunks hold: the candidates that hold its words
// come first, then the others (taken as the store takes them, for 30
// results: those that pass the phrase are not checked here).
func BenchmarkScorePhrase(b *testing.B) {
	m, visible, gen := benchSearchCorpus(b)
	queries := make([]Query, 100)
	for i := range queries {
		w := strings.Fields(gen.Query())
		queries[i] = ParseQuery(`"` + w[0] + " " + w[1] + `" ` + strings.Join(w[2:], " ") + " ")
	}
	s := m.snapshot()
	b.ResetTimer()
	found, offered := 0, 0
	for i := 0; b.Loop(); i++ {
		cands, _, err := Score(m, s, queries[i%len(queries)], visible)
		if err != nil {
			b.Fatal(err)
		}
		next, err := cands.Take(30 + 10)
		if err != nil {
			b.Fatal(err)
		}
		found, offered = found+len(next), offered+cands.offered
	}
	b.ReportMetric(float64(offered)/float64(b.N), "scored/op")
	b.ReportMetric(float64(found)/float64(b.N), "candidates/op")
}

// BenchmarkProximity measures what the nearness of the query's words adds
// to a search: the 30 results quarry bench -op search asks for, over the
// corpus of BenchmarkScore, read as the store reads them, by Highlights
// alone (before nearness) and by Candidates.Result (the highlights and the
// nearness, in one reading of each text); the scoring is not timed.
func BenchmarkProximity(b *testing.B) {
	m, visible, gen := benchSearchCorpus(b)
	type search struct {
		q     Query
		cands *Candidates
		top   []memChunk
	}
	searches := make([]search, 100)
	words := 0
	for i := range searches {
		q := ParseQuery(gen.Query())
		cands, _, err := Score(m, m.snapshot(), q, visible)
		if err != nil {
			b.Fatal(err)
		}
		s := search{q: q, cands: cands}
		next, err := cands.Take(30)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range next {
			c := m.chunks[x.Chunk]
			s.top = append(s.top, c)
			words += len(strings.Fields(c.content))
		}
		searches[i] = s
	}
	b.Run("highlights", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s := searches[i%len(searches)]
			terms := s.q.TermSet()
			for _, c := range s.top {
				Highlights(c.content, terms, nil)
			}
		}
		b.ReportMetric(float64(words)/float64(len(searches)), "words/op")
	})
	b.Run("result", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s := searches[i%len(searches)]
			terms := s.q.TermSet()
			for _, c := range s.top {
				s.cands.Result(c.title, c.content, terms, nil)
			}
		}
		b.ReportMetric(float64(words)/float64(len(searches)), "words/op")
	})
}
