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
		{`"unclosed phrase here`, index.Query{Terms: map[string]int{"unclos": 1, "phrase": 1, "here": 1},
			Phrases: []index.Phrase{{Terms: []string{"unclos", "phrase", "here"}, Positions: []int{0, 1, 2}}}}},
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
	many := strings.Repeat("word", 1) + " "
	for i := range 200 {
		many += string(rune('a'+i%26)) + string(rune('a'+i/26)) + "zz "
	}
	if q := index.ParseQuery(many); len(q.Terms) != index.MaxQueryTerms {
		t.Errorf("%d terms, want %d", len(q.Terms), index.MaxQueryTerms)
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
