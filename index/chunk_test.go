package index_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/index"
)

func TestChunks(t *testing.T) {
	title := "Manual"
	link := func(s string) *string { return &s }
	words := func(from, n int) string {
		var b []string
		for i := from; i < from+n; i++ {
			b = append(b, "w"+itoa(i))
		}
		return strings.Join(b, " ")
	}
	cs := index.Chunks(title, link("https://x/0"), []index.Section{
		{Text: "Intro: " + words(0, 10) + ".", Link: link("https://x/1")},
		{Text: words(10, index.ChunkWords), Link: link("https://x/2")},
	})
	if len(cs) != 2 {
		t.Fatalf("%d chunks, want 2", len(cs))
	}
	if cs[0].Title != "Manual" || !strings.HasPrefix(cs[0].Content, "Intro: w0 w1") || *cs[0].Link != "https://x/1" ||
		!strings.Contains(cs[0].Content, "w9.\nw10 w11") {
		t.Errorf("first chunk: %+v", cs[0])
	}
	// The second begins ChunkOverlap words before the first ends, in the
	// second section.
	first := index.ChunkWords - index.ChunkOverlap - 1 // Words are counted with "Intro".
	if want := "w" + itoa(first); !strings.HasPrefix(cs[1].Content, want+" ") || *cs[1].Link != "https://x/2" || cs[1].No != 1 {
		t.Errorf("second chunk starts %q, want %s…", cs[1].Content[:20], want)
	}
	if !strings.HasSuffix(cs[1].Content, "w"+itoa(10+index.ChunkWords-1)) {
		t.Errorf("second chunk ends %q", cs[1].Content[len(cs[1].Content)-20:])
	}
	if cs := index.Chunks("Empty", link("https://x/0"), []index.Section{{Text: " .", Link: link("https://x/1")}}); len(cs) != 1 ||
		cs[0].Title != "Empty" || cs[0].Content != "" || *cs[0].Link != "https://x/0" {
		t.Errorf("a document without words: %+v", cs)
	}
	// Sections without a link: the document's.
	if cs := index.Chunks(title, link("https://x/0"), []index.Section{{Text: "a b"}, {Text: "c", Link: link("")}}); len(cs) != 1 ||
		*cs[0].Link != "https://x/0" || cs[0].Content != "a b\nc" {
		t.Errorf("sections without links: %+v", cs)
	}
	tf, length := cs[0].Terms()
	if tf["manual"] != index.TitleWeight || tf["w0"] != 1 || length != index.TitleWeight+index.ChunkWords {
		t.Errorf("terms: manual %d, w0 %d, length %d", tf["manual"], tf["w0"], length)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
