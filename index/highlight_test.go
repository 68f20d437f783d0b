package index_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/analysis"
	"github.com/quarryhq/quarry/index"
)

func TestHighlights(t *testing.T) {
	q := map[string]bool{"granit": true, "quarri": true}
	for _, c := range []struct {
		content  string
		prefixes []string
		want     []string
	}{
		{"The quarry produced granite.", nil, []string{"<hi>quarry</hi> produced <hi>granite</hi>."}},
		{"Navigation index modules | next | previous | Granite is quarried.", []string{"quarr"}, []string{"<hi>Granite</hi> is <hi>quarried</hi>."}},
		{"Nothing here", nil, []string{}},
		{"Grandiose granular plans", []string{"gran"}, []string{"<hi>Grandiose</hi> <hi>granular</hi> plans"}},
	} {
		if got := index.Highlights(c.content, q, c.prefixes); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Highlights(%q) = %q, want %q", c.content, got, c.want)
		}
	}
	long := strings.Repeat("x ", 100) + "granite quarry " + strings.Repeat("y ", 100)
	got := index.Highlights(long, q, nil)
	if len(got) != 1 || !strings.HasPrefix(got[0], "<hi>granite</hi> <hi>quarry</hi>") || len(strings.Fields(got[0])) != index.SnippetWords {
		t.Errorf("the window: %q", got)
	}
}

// TestHighlightsAsWindowOfWords holds Highlights and Blurb, which read a
// text's words without keeping them, to what they are defined as over the
// list of its words (analysis.Words): the window of SnippetWords words
// that holds the most matches, the first such, from its first match; the
// first BlurbWords words.
func TestHighlightsAsWindowOfWords(t *testing.T) {
	vocab := []string{"Granite", "granite", "quarry", "quarried", "quarries'", "grand", "the", "of", "stone", "x", "Gra", "3.5", "e.g", "über"}
	seps := []string{" ", "  ", ", ", ". ", "\n", " - ", "|", "'"}
	terms := map[string]bool{"granit": true, "quarri": true}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var b strings.Builder
		for range r.IntN(160) {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		text := b.String()
		var prefixes []string
		if i%3 == 0 {
			prefixes = []string{"gra"}
		}
		if got, want := index.Highlights(text, terms, prefixes), windowOfWords(text, terms, prefixes); !reflect.DeepEqual(got, want) {
			t.Fatalf("Highlights(%q, %v) = %q, want %q", text, prefixes, got, want)
		}
		if got, want := index.Blurb(text), blurbOfWords(text); got != want {
			t.Fatalf("Blurb(%q) = %q, want %q", text, got, want)
		}
	}
}

// windowOfWords is Highlights written over the list of the text's words.
func windowOfWords(content string, terms map[string]bool, prefixes []string) []string {
	ws := analysis.Words(content)
	match := make([]bool, len(ws))
	any := false
	for i, w := range ws {
		lw := strings.ToLower(w.Word)
		t := analysis.Term(w.Word)
		match[i] = t != "" && terms[t]
		for _, p := range prefixes {
			match[i] = match[i] || strings.HasPrefix(lw, p)
		}
		any = any || match[i]
	}
	if !any {
		return []string{}
	}
	best, bestN, n := 0, -1, 0
	for i := range ws {
		if match[i] {
			n++
		}
		if i >= index.SnippetWords && match[i-index.SnippetWords] {
			n--
		}
		if start := max(0, i-index.SnippetWords+1); n > bestN {
			best, bestN = start, n
		}
	}
	for !match[best] {
		best++
	}
	end := min(best+index.SnippetWords, len(ws))
	var b strings.Builder
	pos := ws[best].Start
	for i := best; i < end; i++ {
		b.WriteString(content[pos:ws[i].Start])
		if match[i] {
			b.WriteString("<hi>" + ws[i].Word + "</hi>")
		} else {
			b.WriteString(ws[i].Word)
		}
		pos = ws[i].End
	}
	if end == len(ws) {
		b.WriteString(content[pos:])
	}
	return []string{strings.TrimSpace(b.String())}
}

// blurbOfWords is Blurb written over the list of the text's words.
func blurbOfWords(content string) string {
	ws := analysis.Words(content)
	if len(ws) <= index.BlurbWords {
		return strings.TrimSpace(content)
	}
	return strings.TrimSpace(content[:ws[index.BlurbWords-1].End])
}
