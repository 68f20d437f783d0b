// Package analysis turns text into the terms of Quarry's search index, as
// Lucene 8.8.1's EnglishAnalyzer does: the standard tokenizer (Unicode word
// segmentation, UAX #29), the English possessive filter, lowercasing,
// Lucene's English stop words and the Porter stemmer. Indexing and queries
// share it, so that a word matches itself in every form both take.
package analysis

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token is a word of a text: its term (what the index keeps), its word as
// written, and where it is.
type Token struct {
	Term     string // The analyzed term: possessive removed, lowercased, stemmed.
	Word     string // The word as the text has it.
	Start    int    // Byte offset of the word in the text.
	End      int    // Byte offset after it.
	Position int    // Its position among the text's words, stop words counted (as Lucene's position increments).
}

// MaxTokenLength is the standard tokenizer's: a longer word is cut into
// pieces of this many characters.
const MaxTokenLength = 255

// stopWords is Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such
		that the their then there these they this to was will with`) {
		stopWords[w] = true
	}
}

// IsStopWord reports whether a lowercase word is one of Lucene's English
// stop words.
func IsStopWord(w string) bool { return stopWords[w] }

// Analyze returns the tokens of text that the index keeps: its words, but
// the stop words, as terms.
func Analyze(text string) []Token {
	words := Words(text)
	out := words[:0] // In place: a term is never written past its word.
	for _, t := range words {
		if t.Term = Term(t.Word); t.Term != "" {
			out = append(out, t)
		}
	}
	return out
}

// Term returns the term of one word as the analyzer makes it (possessive
// removed, lowercased, stemmed), or "" for a stop word.
func Term(word string) string {
	w := strings.ToLower(Possessive(word))
	if w == "" || stopWords[w] {
		return ""
	}
	return Stem(w)
}

// Possessive removes a trailing 's (with an apostrophe, a right single
// quotation mark or a fullwidth apostrophe; s in either case), as Lucene's
// EnglishPossessiveFilter.
func Possessive(w string) string {
	if n := len(w); n >= 2 && (w[n-1] == 's' || w[n-1] == 'S') {
		for _, a := range []string{"'", "\u2019", "\uFF07"} {
			if strings.HasSuffix(w[:n-1], a) {
				return w[:n-1-len(a)]
			}
		}
	}
	return w
}

// The word-break classes of UAX #29 the tokenizer tells apart.
type class uint8

const (
	other class = iota
	letter
	numeric
	extendNumLet // _ and other connector punctuation: joins letters and digits.
	midLetter    // Joins letters: a:b.
	midNum       // Joins digits: 1,000.
	midNumLet    // Joins either: U.S., 3.14, don't.
	extend       // Marks and format characters: stay with the character before.
	ideograph    // Han, Hiragana and the like: a word each.
)

// classOf returns r's word-break class.
func classOf(r rune) class {
	if r < 0x80 { // ASCII first, whole: most text, and cheap.
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return letter
		case '0' <= r && r <= '9':
			return numeric
		case r == '_':
			return extendNumLet
		case r == ':':
			return midLetter
		case r == ',' || r == ';':
			return midNum
		case r == '.' || r == '\'':
			return midNumLet
		}
		return other
	}
	switch r {
	case '_':
		return extendNumLet
	case ':', '\u00B7', '\u0387', '\u05F4', '\u2027', '\uFE13', '\uFE55', '\uFF1A':
		return midLetter
	case ',', ';', '\u037E', '\u0589', '\u060C', '\u060D', '\u066C', '\u07F8', '\u2044', '\uFE10', '\uFE14', '\uFE50', '\uFE54', '\uFF0C', '\uFF1B':
		return midNum
	case '.', '\'', '\u2018', '\u2019', '\u2024', '\uFE52', '\uFF07', '\uFF0E':
		return midNumLet
	}
	switch {
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
		return ideograph
	case unicode.IsLetter(r):
		return letter
	case unicode.Is(unicode.Nd, r):
		return numeric
	case unicode.Is(unicode.Pc, r):
		return extendNumLet
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf):
		return extend
	}
	return other
}

// Words returns the words of text as the standard tokenizer finds them
// (Term left empty): runs of letters and digits, joined by the
// punctuation UAX #29 lets stand inside a word (an apostrophe or a full
// stop between letters, a comma or a full stop between digits, an
// underscore anywhere), each ideograph a word of its own, a word longer
// than MaxTokenLength characters cut into pieces.
func Words(text string) []Token {
	out := make([]Token, 0, len(text)/6+1) // About a word in six bytes of English.
	for t := range WordsSeq(text) {
		out = append(out, t)
	}
	return out
}

// WordsSeq returns an iterator over the words of text, as Words finds
// them, that holds none of them: a reader that needs a few words of a
// long text, or one word at a time, allocates nothing.
func WordsSeq(text string) iter.Seq[Token] {
	return func(yield func(Token) bool) {
		pos := 0
		i := 0
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			c := classOf(r)
			if c == ideograph {
				if !yield(Token{Word: text[i : i+n], Start: i, End: i + n, Position: pos}) {
					return
				}
				pos++
				i += n
				continue
			}
			if c != letter && c != numeric && c != extendNumLet {
				i += n
				continue
			}
			start, end, chars := i, i+n, 1
			last := c // The class of the last letter, digit or underscore.
			hasWord := c != extendNumLet
			j := i + n
			for j < len(text) && chars < MaxTokenLength {
				r, n := utf8.DecodeRuneInString(text[j:])
				switch k := classOf(r); k {
				case letter, numeric, extendNumLet:
					last, hasWord = k, hasWord || k != extendNumLet
					j += n
					end, chars = j, chars+1
					continue
				case extend:
					j += n
					end = j
					continue
				case midLetter, midNum, midNumLet:
					r2, n2 := utf8.DecodeRuneInString(text[j+n:])
					next := classOf(r2)
					if j+n < len(text) && ((last == letter && next == letter && k != midNum) ||
						(last == numeric && next == numeric && k != midLetter)) {
						j += n + n2
						end, chars = j, chars+1
						last = next
						continue
					}
				}
				break
			}
			if hasWord {
				if !yield(Token{Word: text[start:end], Start: start, End: end, Position: pos}) {
					return
				}
				pos++
			}
			i = end
		}
	}
}
