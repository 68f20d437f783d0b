package index_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quarryhq/quarry/index"
)

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		in   string
		want index.Query
	}{
		{"Granite quarries", index.Query{Terms: map[string]int{"granit": 1, "quarri": 1}, Prefix: "quarries", PrefixTerm: "quarri"}},
		{"granite quarries ", index.Query{Terms: map[string]int{"granit": 1, "quarri": 1}}},
		{`"flow of air" flow`, index.Query{Terms: map[string]int{"flow": 2, "air": 1},
			Phrases: []index.Phrase{{Terms: []string{"flow", "air"}, Positions: []int{0, 2}}}, Prefix: "flow", PrefixTerm: "flow"}},
		// An unclosed quote is punctuation: its words are words, the last a prefix.
		{`"unclosed phrase here`, index.Query{Terms: map[string]int{"unclos": 1, "phrase": 1, "here": 1}, Prefix: "here", PrefixTerm: "here"}},
		{`a 6" pipe fitting`, index.Query{Terms: map[string]int{"6": 1, "pipe": 1, "fit": 1}, Prefix: "fitting", PrefixTerm: "fit"}},
		{`"granite blocks" shipped "by rail`, index.Query{Terms: map[string]int{"granit": 1, "block": 1, "ship": 1, "rail": 1},
			Phrases: []index.Phrase{{Terms: []string{"granit", "block"}, Positions: []int{0, 1}}}, Prefix: "rail", PrefixTerm: "rail"}},
		{`"granite blocks" "rail" "`, index.Query{Terms: map[string]int{"granit": 1, "block": 1, "rail": 1},
			Phrases: []index.Phrase{{Terms: []string{"granit", "block"}, Positions: []int{0, 1}}}}},
		{`what is "mach number`, index.Query{Terms: map[string]int{"what": 1, "mach": 1, "number": 1}, Prefix: "number", PrefixTerm: "number"}},
		{`"single"`, index.Query{Terms: map[string]int{"singl": 1}}},
		{"the of", index.Query{Terms: map[string]int{}}},
		{"x", index.Query{Terms: map[string]int{"x": 1}}},
		{"Quarry's", index.Query{Terms: map[string]int{"quarri": 1}, Prefix: "quarry", PrefixTerm: "quarri"}},
		{"", index.Query{Terms: map[string]int{}}},
	} {
		if got := index.ParseQuery(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseQuery(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
	// Past 64 terms the rest count, up to MaxQueryTerms; the 4 KiB of a
	// query hold at most 1,365 (two-letter words and a space each).
	const first, second = "0123456789bcdfghjklmnpqrstvwxz", "0123456789bcdfghjklmnpqrstvwxzaeiouy"
	for _, c := range []struct{ words, want int }{{200, 200}, {1365, index.MaxQueryTerms}} {
		var many strings.Builder
		for i := range c.words { // 1,080 different words, three of them stop words.
			many.WriteString(string(first[i/len(second)%len(first)]) + string(second[i%len(second)]) + " ")
		}
		q := index.ParseQuery(many.String())
		if len(q.Terms) != c.want {
			t.Errorf("%d words: %d terms, want %d", c.words, len(q.Terms), c.want)
		}
	}
}

func TestPhraseMatches(t *testing.T) {
	q := index.ParseQuery(`"flow of air"`)
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

// FuzzParseQuery checks that any query parses without panicking into valid
// terms within the limits, and that phrase matching and highlighting take
// any text.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`granite "flow of air" quar`, `"`, `""""`, "\xff\xfe", "Quarry's ’s", "日本語のテキスト", "a:b 1,000.5 _x_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := index.ParseQuery(s)
		if len(q.Terms) > index.MaxQueryTerms {
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
		index.Highlights(s, q.TermSet(), []string{q.Prefix})
	})
}
