package index

import (
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/analysis"
)

// ProximityWeight is how much the nearness of a query's words in a chunk
// adds to its BM25 score (see Candidates.Proximity). Measured on the three
// test collections of scripts/quality (docs/benchmarks.md, "Search
// quality"): 0.1 raised nDCG@10 on Cranfield by 0.013, lowered it on CISI
// by 0.009 and left Medline as it was; 0.2 and more lowered CISI and
// Medline further.
const ProximityWeight = 0.1

// Proximity returns the bonus of a chunk's title and text for nearness
// of the query's words (BM25TP, after Rasolofo and Savoy): in the title
// and in the text apart, each two occurrences of different query terms
// with no other query term between them, d words apart (stop words
// counted), add 1/d² to each term's nearness; a term's nearness n counts
// as idf × n(k1 + 1)/(n + k1), as BM25 saturates a frequency, and the sum
// is weighed by ProximityWeight. A chunk that holds one query term only
// gets 0. It is exact and reads only the chunk: the caller adds it to the
// scores of the chunks it returns, and orders them again (Result gives it
// with the chunk's highlights, reading the text once).
func (c *Candidates) Proximity(title, content string) float64 {
	_, bonus := c.Result(title, content, nil, nil)
	return bonus
}

// Result returns the highlights of a chunk's content (Highlights) and its
// Proximity bonus, reading the content once.
func (c *Candidates) Result(title, content string, terms map[string]bool, prefixes []string) (hl []string, proximity float64) {
	if len(c.idf) < 2 {
		return Highlights(content, terms, prefixes), 0
	}
	n := &nearness{c: c, near: map[string]float64{}}
	n.reset()
	for _, w := range analysis.Words(title) {
		if r, _ := utf8.DecodeRuneInString(w.Word); c.first[unicode.ToLower(r)] {
			n.add(analysis.Term(w.Word), w.Position)
		}
	}
	n.reset() // The title and the text apart.
	hl = highlights(content, terms, prefixes, n)
	for t, x := range n.near {
		proximity += c.idf[t] * x * (bm25K1 + 1) / (x + bm25K1)
	}
	return hl, ProximityWeight * proximity
}

// nearness is the nearness of each query term in a chunk as Proximity
// sums it, and the last query term read, at its position.
type nearness struct {
	c      *Candidates
	near   map[string]float64
	last   string
	lastAt int
}

func (n *nearness) reset() { n.last, n.lastAt = "", -1 }

// add reads term t at position at (any term: those of no query term are
// passed over).
func (n *nearness) add(t string, at int) {
	if _, ok := n.c.idf[t]; !ok {
		return
	}
	if n.lastAt >= 0 && t != n.last {
		d := float64(at - n.lastAt)
		n.near[t] += 1 / (d * d)
		n.near[n.last] += 1 / (d * d)
	}
	n.last, n.lastAt = t, at
}
