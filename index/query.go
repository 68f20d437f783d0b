package index

import (
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry/analysis"
)

// The queries people type.

// Limits on a query.
const (
	MaxQueryBytes    = 4096 // Longer queries are cut, at a word.
	MaxQueryTerms    = 1024 // Distinct terms (Lucene's maxClauseCount); the later ones are left out.
	MinPrefixLength  = 2    // Characters of the last word before it matches as a prefix.
	MaxPrefixMatches = 32   // The terms a prefix stands for, the most frequent first.
)

// Query is a search's query as parsed: its terms (each with the number of
// times it was asked, as Lucene's query parser adds a clause per word),
// the phrases that rank a chunk first, and the prefix the last word may
// stand for.
type Query struct {
	Terms   map[string]int
	Phrases []Phrase
	// Prefix is the last word, lowercased, when the query ends within it
	// (no space or quote after it, not a stop word, MinPrefixLength
	// characters or more): the index then also matches the terms that
	// begin with it, if the word itself is no term of the index.
	Prefix string
	// PrefixTerm is the term of that last word.
	PrefixTerm string
}

// Phrase is a run of words to be found in that order: their terms and
// their positions relative to the first (stop words keep their place).
type Phrase struct {
	Terms     []string
	Positions []int
}

// TermSet returns q's terms as a set.
func (q *Query) TermSet() map[string]bool {
	out := make(map[string]bool, len(q.Terms))
	for t := range q.Terms {
		out[t] = true
	}
	return out
}

// Empty reports whether q asks for nothing.
func (q *Query) Empty() bool { return len(q.Terms) == 0 && q.Prefix == "" }

// ParseQuery parses a search query: words, and phrases between double
// quotes ("…"). Every word is a term to score; a chunk that holds every
// phrase, in order, in its title or text ranks above one that holds only
// their words (see Score). A quote without its closing one is a character
// like any other punctuation, not the start of a phrase: `6" pipe` asks
// for the words 6 and pipe.
func ParseQuery(s string) Query {
	if len(s) > MaxQueryBytes {
		s = s[:MaxQueryBytes]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	q := Query{Terms: map[string]int{}}
	add := func(term string) {
		if _, ok := q.Terms[term]; ok || len(q.Terms) < MaxQueryTerms {
			q.Terms[term]++
		}
	}
	parts := strings.Split(s, `"`)
	if len(parts)%2 == 0 { // An odd number of quotes: the last one is unclosed.
		n := len(parts)
		parts = append(parts[:n-2], parts[n-2]+`"`+parts[n-1])
	}
	for i, part := range parts {
		quoted := i%2 == 1
		toks := analysis.Analyze(part)
		for _, t := range toks {
			add(t.Term)
		}
		if quoted && len(toks) > 1 {
			p := Phrase{}
			for _, t := range toks {
				p.Terms = append(p.Terms, t.Term)
				p.Positions = append(p.Positions, t.Position-toks[0].Position)
				if q.Terms[t.Term] == 0 {
					p.Terms = nil // Past MaxQueryTerms: the phrase is left out.
					break
				}
			}
			if p.Terms != nil {
				q.Phrases = append(q.Phrases, p)
			}
		}
		last := i == len(parts)-1
		if !quoted && last && len(toks) > 0 {
			t := toks[len(toks)-1]
			w := strings.ToLower(analysis.Possessive(t.Word))
			if t.End == len(part) && utf8.RuneCountInString(w) >= MinPrefixLength {
				q.Prefix, q.PrefixTerm = w, t.Term
			}
		}
	}
	return q
}

// Matches reports whether the analyzed tokens of a chunk's title or text
// hold every phrase of q.
func (q *Query) Matches(title, content string) bool {
	if len(q.Phrases) == 0 {
		return true
	}
	tt, ct := analysis.Analyze(title), analysis.Analyze(content)
	for _, p := range q.Phrases {
		if !holds(tt, p) && !holds(ct, p) {
			return false
		}
	}
	return true
}

// holds reports whether tokens hold phrase p.
func holds(tokens []analysis.Token, p Phrase) bool {
	at := map[int]string{}
	for _, t := range tokens {
		at[t.Position] = t.Term
	}
	for _, t := range tokens {
		if t.Term != p.Terms[0] {
			continue
		}
		ok := true
		for i := 1; i < len(p.Terms) && ok; i++ {
			ok = at[t.Position+p.Positions[i]] == p.Terms[i]
		}
		if ok {
			return true
		}
	}
	return false
}
