package chat

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// Citations, as Onyx v4.6.1 makes them (backend/onyx/chat/citation_processor.py,
// its hyperlink and remove modes): the model cites the documents a search
// gave it by their numbers in brackets ("[1]", "[1, 3]", "[[2]]", and the
// full-width 【1】 and ［1］); the answer shows each as a Markdown link
// "[[1]](link)", and the first citation of each document is preceded by a
// citation packet naming it. Text that may be the start of a citation
// ("[", "[1", "[1, ") is held until the next piece tells; inside a code
// block (after an odd number of ```) nothing is a citation. A number that
// names no document is dropped. Without citations (include_citations
// false) the markers are removed, and the space before one that a space or
// a punctuation mark follows with them.

var (
	// citationPattern matches a whole citation: [[n]] (formatted) or
	// [n], [n, m, …].
	citationPattern = regexp.MustCompile(`([\[【［]{2}\d+[\]】］]{2})|([\[【［]\d+(?:, ?\d+)*[\]】］])`)
	// partialPattern matches what may become a citation, at the end.
	partialPattern = regexp.MustCompile(`[\[【［]+(?:\d+(?:, ?\d+)*(?:, ?)?)?$`)
)

// piece is what the citer gives out: text of the answer, or a citation.
type piece struct {
	text string
	cite *quarry.ChatCitation
}

// copyKey names a pair's copy of a document.
type copyKey struct {
	pair int64
	doc  string
}

func keyOf(h *quarry.SearchHit) copyKey { return copyKey{h.Pair.ID, h.DocumentID} }

// citer turns the model's text into the answer's, a piece at a time.
type citer struct {
	links  bool                         // Hyperlink mode; otherwise citations are removed.
	docs   map[int]*quarry.SearchHit    // The documents, by number.
	all    strings.Builder              // The model's text so far.
	seg    string                       // Text held: it may be the start of a citation.
	cited  map[copyKey]bool             // Documents whose citation packet went out.
	recent map[copyKey]bool             // Documents cited lately: not announced again.
	plain  int                          // Characters since the last citation.
	out    []quarry.ChatCitation        // The citation packets, in order.
	seen   map[int]*quarry.ChatCitation // Every number cited, known or not in links mode.
}

func newCiter(links bool) *citer {
	return &citer{links: links, docs: map[int]*quarry.SearchHit{}, cited: map[copyKey]bool{}, recent: map[copyKey]bool{},
		seen: map[int]*quarry.ChatCitation{}}
}

// number gives document h number n (the first number a copy gets stays
// its own).
func (p *citer) number(n int, h *quarry.SearchHit) {
	if _, ok := p.docs[n]; !ok {
		p.docs[n] = h
	}
}

// inCodeBlock reports whether text ends inside a code block.
func inCodeBlock(text string) bool { return strings.Count(text, "```")%2 == 1 }

// write takes the next piece of the model's text and returns what may be
// shown of it.
func (p *citer) write(token string) []piece {
	p.seg += token
	p.all.WriteString(token)
	var out []piece
	text := func(s string) {
		if s != "" {
			out = append(out, piece{text: s})
		}
	}
	possible := partialPattern.MatchString(p.seg)
	matches := citationPattern.FindAllStringSubmatchIndex(p.seg, -1)
	if len(matches) > 0 && !inCodeBlock(p.all.String()) {
		at := 0
		for _, m := range matches {
			between := p.seg[at:m[0]]
			p.plain += utf8.RuneCountInString(between)
			// Onyx adds a space before the link unless one is there; a
			// citation right after another, or at the start of what was
			// held, gets none.
			lead := true
			if between != "" {
				r, _ := utf8.DecodeLastRuneInString(between)
				lead = unicode.IsSpace(r)
			}
			if p.plain > 5 {
				clear(p.recent)
			}
			link, cites := p.resolve(p.seg[m[0]:m[1]], m[2] >= 0, lead)
			if p.links {
				text(between)
				for i := range cites {
					out = append(out, piece{cite: &cites[i]})
				}
				text(link)
			} else {
				if rest := p.seg[m[1]:]; between != "" && rest != "" {
					last, _ := utf8.DecodeLastRuneInString(between)
					next, _ := utf8.DecodeRuneInString(rest)
					if unicode.IsSpace(last) && (unicode.IsSpace(next) || strings.ContainsRune(".,;:!?)]}", next)) {
						between = strings.TrimRightFunc(between, unicode.IsSpace)
					}
				}
				text(between)
			}
			p.plain = 0
			at = m[1]
		}
		p.seg = p.seg[at:]
		p.plain = utf8.RuneCountInString(p.seg)
	}
	if !possible {
		text(p.seg)
		p.plain += utf8.RuneCountInString(p.seg)
		p.seg = ""
	}
	return out
}

// flush returns what is held at the end of the model's text.
func (p *citer) flush() []piece {
	s := p.seg
	p.seg = ""
	if s == "" {
		return nil
	}
	return []piece{{text: s}}
}

// resolve returns the text that replaces citation s ("[1, 2]", "[[3]]"),
// and the citation packets it brings.
func (p *citer) resolve(s string, formatted, lead bool) (string, []quarry.ChatCitation) {
	rs := []rune(s)
	inner := string(rs[1 : len(rs)-1])
	if formatted {
		inner = string(rs[2 : len(rs)-2])
	}
	var (
		links []string
		cites []quarry.ChatCitation
	)
	for _, f := range strings.Split(inner, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			continue
		}
		h, ok := p.docs[n]
		if !ok {
			continue
		}
		c := quarry.ChatCitation{Number: n, DocumentID: h.DocumentID, PairID: h.Pair.ID}
		p.seen[n] = &c
		if !p.links {
			continue
		}
		link := ""
		if h.Link != nil {
			link = *h.Link
		}
		links = append(links, "[["+strconv.Itoa(n)+"]]("+link+")")
		k := keyOf(h)
		if p.recent[k] {
			continue
		}
		p.recent[k] = true
		if !p.cited[k] {
			p.cited[k] = true
			cites = append(cites, c)
			p.out = append(p.out, c)
		}
	}
	text := strings.Join(links, " ")
	if text != "" && !lead {
		text = " " + text
	}
	return text, cites
}
