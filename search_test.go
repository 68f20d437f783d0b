package quarry_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		in   string
		want quarry.Query
	}{
		{"Granite quarries", quarry.Query{Terms: map[string]int{"granit": 1, "quarri": 1}, Prefix: "quarries", PrefixTerm: "quarri"}},
		{"granite quarries ", quarry.Query{Terms: map[string]int{"granit": 1, "quarri": 1}}},
		{`"flow of air" flow`, quarry.Query{Terms: map[string]int{"flow": 2, "air": 1},
			Phrases: []quarry.Phrase{{Terms: []string{"flow", "air"}, Positions: []int{0, 2}}}, Prefix: "flow", PrefixTerm: "flow"}},
		{`"unclosed phrase here`, quarry.Query{Terms: map[string]int{"unclos": 1, "phrase": 1, "here": 1},
			Phrases: []quarry.Phrase{{Terms: []string{"unclos", "phrase", "here"}, Positions: []int{0, 1, 2}}}}},
		{`"single"`, quarry.Query{Terms: map[string]int{"singl": 1}}},
		{"the of", quarry.Query{Terms: map[string]int{}}},
		{"x", quarry.Query{Terms: map[string]int{"x": 1}}},
		{"Quarry's", quarry.Query{Terms: map[string]int{"quarri": 1}, Prefix: "quarry", PrefixTerm: "quarri"}},
		{"", quarry.Query{Terms: map[string]int{}}},
	} {
		if got := quarry.ParseQuery(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseQuery(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
	many := strings.Repeat("word", 1) + " "
	for i := range 200 {
		many += string(rune('a'+i%26)) + string(rune('a'+i/26)) + "zz "
	}
	if q := quarry.ParseQuery(many); len(q.Terms) != quarry.MaxQueryTerms {
		t.Errorf("%d terms, want %d", len(q.Terms), quarry.MaxQueryTerms)
	}
}

func TestPhraseMatches(t *testing.T) {
	q := quarry.ParseQuery(`"flow of air"`)
	for _, c := range []struct {
		title, content string
		want           bool
	}{
		{"", "the flow of air over wings", true},
		{"", "the flow in air", true}, // Stop words keep their place, not their word.
		{"", "the air flow", false},
		{"Flows of Airs", "", true},
		{"", "flow air", false},
	} {
		if got := q.Matches(c.title, c.content); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.title, c.content, got, c.want)
		}
	}
}

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
	d := quarry.Document{ID: "d", SemanticIdentifier: "manual.pdf", Title: &title, Sections: []quarry.Section{
		{Text: "Intro: " + words(0, 10) + ".", Link: link("https://x/1")},
		{Text: words(10, quarry.ChunkWords), Link: link("https://x/2")},
	}}
	cs := d.Chunks()
	if len(cs) != 2 {
		t.Fatalf("%d chunks, want 2", len(cs))
	}
	if cs[0].Title != "Manual" || !strings.HasPrefix(cs[0].Content, "Intro: w0 w1") || *cs[0].Link != "https://x/1" ||
		!strings.Contains(cs[0].Content, "w9.\nw10 w11") {
		t.Errorf("first chunk: %+v", cs[0])
	}
	// The second begins ChunkOverlap words before the first ends, in the
	// second section.
	first := quarry.ChunkWords - quarry.ChunkOverlap - 1 // Words are counted with "Intro".
	if want := "w" + itoa(first); !strings.HasPrefix(cs[1].Content, want+" ") || *cs[1].Link != "https://x/2" || cs[1].No != 1 {
		t.Errorf("second chunk starts %q, want %s…", cs[1].Content[:20], want)
	}
	if !strings.HasSuffix(cs[1].Content, "w"+itoa(10+quarry.ChunkWords-1)) {
		t.Errorf("second chunk ends %q", cs[1].Content[len(cs[1].Content)-20:])
	}
	empty := quarry.Document{ID: "e", SemanticIdentifier: "Empty"}
	if cs := empty.Chunks(); len(cs) != 1 || cs[0].Title != "Empty" || cs[0].Content != "" {
		t.Errorf("a document without words: %+v", cs)
	}
	tf, length := cs[0].ChunkTerms()
	if tf["manual"] != quarry.TitleWeight || tf["w0"] != 1 || length != quarry.TitleWeight+quarry.ChunkWords {
		t.Errorf("terms: manual %d, w0 %d, length %d", tf["manual"], tf["w0"], length)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestHighlights(t *testing.T) {
	q := map[string]bool{"granit": true, "quarri": true}
	for _, c := range []struct {
		content  string
		prefixes []string
		want     []string
	}{
		{"The quarry produced granite.", nil, []string{"The <hi>quarry</hi> produced <hi>granite</hi>."}},
		{"Nothing here", nil, []string{}},
		{"Grandiose granular plans", []string{"gran"}, []string{"<hi>Grandiose</hi> <hi>granular</hi> plans"}},
	} {
		if got := quarry.Highlights(c.content, q, c.prefixes); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Highlights(%q) = %q, want %q", c.content, got, c.want)
		}
	}
	long := strings.Repeat("x ", 100) + "granite quarry " + strings.Repeat("y ", 100)
	got := quarry.Highlights(long, q, nil)
	if len(got) != 1 || !strings.Contains(got[0], "<hi>granite</hi> <hi>quarry</hi>") || len(strings.Fields(got[0])) != quarry.SnippetWords {
		t.Errorf("the window: %q", got)
	}
}

func TestOwnerNames(t *testing.T) {
	got := quarry.OwnerNames([]json.RawMessage{
		json.RawMessage(`{"first_name":"Ada","last_name":"Lovelace"}`),
		json.RawMessage(`{"first_name":"Alan","middle_initial":"M","last_name":"Turing","display_name":"AT"}`),
		json.RawMessage(`{"display_name":"Grace"}`),
		json.RawMessage(`{"email":"not-an-email"}`),
		json.RawMessage(`{"email":"e@example.com"}`),
	})
	want := []string{"Ada None Lovelace", "Alan M Turing", "Grace", "e@example.com"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OwnerNames = %q, want %q", got, want)
	}
	if quarry.OwnerNames(nil) != nil {
		t.Error("no owners should be null")
	}
}

// FuzzParseQuery checks that any query parses without panicking into valid
// terms within the limits, and that phrase matching and highlighting take
// any text.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`granite "flow of air" quar`, `"`, `""""`, "\xff\xfe", "Quarry's ’s", "日本語のテキスト", "a:b 1,000.5 _x_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := quarry.ParseQuery(s)
		if len(q.Terms) > quarry.MaxQueryTerms {
			t.Fatalf("%d terms", len(q.Terms))
		}
		for term, n := range q.Terms {
			if term == "" || n < 1 || !utf8.ValidString(term) && utf8.ValidString(s) {
				t.Fatalf("term %q ×%d", term, n)
			}
		}
		for _, p := range q.Phrases {
			if len(p.Terms) < 2 || len(p.Terms) != len(p.Positions) || p.Positions[0] != 0 {
				t.Fatalf("phrase %+v", p)
			}
			for _, term := range p.Terms {
				if q.Terms[term] == 0 {
					t.Fatalf("phrase term %q not a term", term)
				}
			}
		}
		if q.Prefix != "" && q.PrefixTerm == "" {
			t.Fatalf("prefix %q without its term", q.Prefix)
		}
		q.Matches(s, s)
		quarry.Highlights(s, q.TermSet(), []string{q.Prefix})
	})
}
