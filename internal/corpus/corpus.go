// Package corpus generates the reproducible text of Quarry's search
// benchmarks (quarry bench -op search, store's BenchmarkSearch, index's
// BenchmarkScore and BenchmarkMerge): words of a Zipf vocabulary that the
// analyzer keeps as they are, documents of those words, and queries. The
// same seed gives the same bytes.
package corpus

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Sizes of the vocabulary and of a document.
const (
	Vocabulary = 50_000 // Words, by rank from 1 (the most frequent).
	ZipfS      = 1.1    // The exponent of the words' frequencies.
	DocWords   = 300    // Words of a document's text.
	TitleWords = 4      // Words of its title.
)

// Letters of the words: a syllable is a consonant and a vowel; a word is
// syllables and a closing consonant that no suffix of the Porter stemmer
// ends in, so that the analyzer keeps each word as its own term.
const (
	consonants = "bdfghjklmnprtvz"
	vowels     = "aeiou"
	closings   = "bgkp"
)

// Word returns the word of rank r (1 to Vocabulary): five letters for the
// first 22,500 ranks, seven for the others; no two ranks give the same
// word.
func Word(r int) string {
	const syllables = len(consonants) * len(vowels)
	n := r - 1
	closing := closings[n%len(closings)]
	// n in bijective base syllables, past the words of one syllable (too
	// short to be like words): 2 syllables for the first ones, then 3.
	n = n/len(closings) + syllables
	var b []byte
	for {
		s := n % syllables
		b = append(b, consonants[s/len(vowels)], vowels[s%len(vowels)])
		n = n/syllables - 1
		if n < 0 {
			break
		}
	}
	return string(append(b, closing))
}

// Generator draws words, documents and queries from a seeded generator.
type Generator struct {
	rng *rand.Rand
	cdf []float64 // cdf[r-1]: the probability of a rank up to r.
}

// New returns a generator seeded with seed.
func New(seed uint64) *Generator {
	g := &Generator{rng: rand.New(rand.NewPCG(seed, 0x51ed)), cdf: make([]float64, Vocabulary)}
	sum := 0.0
	for r := range Vocabulary {
		sum += math.Pow(float64(r+1), -ZipfS)
		g.cdf[r] = sum
	}
	for r := range g.cdf {
		g.cdf[r] /= sum
	}
	return g
}

// Rank draws a rank from the Zipf distribution: rank r with a probability
// proportional to r^-ZipfS.
func (g *Generator) Rank() int {
	return min(sort.SearchFloat64s(g.cdf, g.rng.Float64())+1, Vocabulary)
}

// RankIn draws a rank between lo and hi (inclusive), uniformly in its
// logarithm: as many of 50–500 as of 500–5,000.
func (g *Generator) RankIn(lo, hi int) int {
	l, h := math.Log(float64(lo)), math.Log(float64(hi)+1)
	return min(hi, int(math.Exp(l+g.rng.Float64()*(h-l))))
}

// Document returns a document's title (TitleWords words, capitalized) and
// text: DocWords words in sentences of 6 to 18 words, each capitalized
// and ended by a full stop.
func (g *Generator) Document() (title, text string) {
	var t strings.Builder
	for i := range TitleWords {
		if i > 0 {
			t.WriteByte(' ')
		}
		t.WriteString(capitalize(Word(g.Rank())))
	}
	var b strings.Builder
	b.Grow(DocWords * 8)
	left := 0
	for i := range DocWords {
		w := Word(g.Rank())
		if left == 0 {
			if i > 0 {
				b.WriteString(". ")
			}
			left = 6 + g.rng.IntN(13)
			w = capitalize(w)
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		left--
	}
	b.WriteByte('.')
	return t.String(), b.String()
}

// Query returns a query as a person types it: one word of rank 50 to
// 2,000 and one or two of rank 2,000 to Vocabulary (RankIn), in that
// order, lowercase, separated by spaces, with no space after the last.
func (g *Generator) Query() string {
	words := []string{Word(g.RankIn(50, 2000)), Word(g.RankIn(2001, Vocabulary))}
	if g.rng.IntN(2) == 0 {
		words = append(words, Word(g.RankIn(2001, Vocabulary)))
	}
	return strings.Join(words, " ")
}

func capitalize(w string) string { return strings.ToUpper(w[:1]) + w[1:] }
