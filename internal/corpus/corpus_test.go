package corpus

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry/analysis"
	"github.com/quarryhq/quarry/index"
)

// TestWords checks that the analyzer keeps every word of the vocabulary as
// one term, its own: none is a stop word, none is stemmed, no two meet.
func TestWords(t *testing.T) {
	seen := map[string]int{}
	for r := 1; r <= Vocabulary; r++ {
		w := Word(r)
		toks := analysis.Analyze(w + " " + capitalize(w))
		if len(toks) != 2 || toks[0].Term != w || toks[1].Term != w {
			t.Fatalf("rank %d: %q analyzed as %+v", r, w, toks)
		}
		if prev, ok := seen[w]; ok {
			t.Fatalf("ranks %d and %d are both %q", prev, r, w)
		}
		seen[w] = r
	}
	if Word(1) != "babab" || len(Word(22_500)) != 5 || len(Word(22_501)) != 7 || len(Word(Vocabulary)) != 7 {
		t.Errorf("words 1, 2,000 and %d: %s %s %s", Vocabulary, Word(1), Word(2000), Word(Vocabulary))
	}
}

// TestDocument checks a document's shape: about 2 KB of DocWords words,
// one chunk; and that the same seed gives the same bytes.
func TestDocument(t *testing.T) {
	g, h := New(7), New(7)
	total := 0
	for range 100 {
		title, text := g.Document()
		title2, text2 := h.Document()
		if title != title2 || text != text2 {
			t.Fatal("the same seed gave different documents")
		}
		if n := len(analysis.Words(text)); n != DocWords {
			t.Fatalf("%d words: %s", n, text)
		}
		if n := len(analysis.Words(title)); n != TitleWords {
			t.Fatalf("title %q", title)
		}
		if n := len(index.Chunks(title, nil, []index.Section{{Text: text}})); n != 1 {
			t.Fatalf("%d chunks", n)
		}
		total += len(text)
	}
	if mean := total / 100; mean < 1700 || mean > 2400 {
		t.Errorf("documents of %d bytes on average, want about 2 KB", mean)
	}
	// The most frequent word is about 1/7.2 of the words (the harmonic
	// number of 50,000 at s = 1.1 is about 7.2).
	first := 0
	g = New(8)
	for range 100_000 {
		if g.Rank() == 1 {
			first++
		}
	}
	if first < 12_500 || first > 15_500 {
		t.Errorf("rank 1 drawn %d times in 100,000", first)
	}
	q := New(7).Query()
	if n := len(strings.Fields(q)); n < 2 || n > 3 || strings.HasSuffix(q, " ") {
		t.Errorf("query %q", q)
	}
	t.Logf("mean %d bytes; a title: %s; a query: %s", total/100, New(1).rngTitle(), q)
}

func (g *Generator) rngTitle() string { title, _ := g.Document(); return title }

func BenchmarkDocument(b *testing.B) {
	g := New(1)
	for b.Loop() {
		g.Document()
	}
}
