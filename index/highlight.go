package index

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/analysis"
)

// What a result shows of its chunk.

// Snippet sizes, in words.
const (
	BlurbWords   = 100 // The beginning of a chunk that a result shows.
	SnippetWords = 40  // The window of a highlight.
)

// Blurb returns the first BlurbWords words of content, with what stands
// between them.
func Blurb(content string) string {
	ws := analysis.Words(content)
	if len(ws) <= BlurbWords {
		return strings.TrimSpace(content)
	}
	return strings.TrimSpace(content[:ws[BlurbWords-1].End])
}

// Highlights returns the window of SnippetWords words of content that
// holds the most of terms (analysed terms; prefixes match the words that
// begin with one), its matched words between <hi> and </hi> as Onyx's
// match_highlights has them; none when no word matches. The window starts
// at its first matched word, so a snippet never opens on what stands
// before the match (a page's navigation, say).
func Highlights(content string, terms map[string]bool, prefixes []string) []string {
	return highlights(content, terms, prefixes, nil)
}

// highlights is Highlights, and when near is not nil, in the same reading of
// content, the nearness of its words for Candidates.Proximity (near.add).
func highlights(content string, terms map[string]bool, prefixes []string, near *nearness) []string {
	ws := analysis.Words(content)
	match := make([]bool, len(ws))
	any := false
	// A term begins with its word's first letter, lowercased (stemming
	// changes only endings): words that begin otherwise are not analyzed.
	first := map[rune]bool{}
	if near != nil {
		for r := range near.c.first {
			first[r] = true
		}
	}
	for t := range terms {
		r, _ := utf8.DecodeRuneInString(t)
		first[r] = true
	}
	for _, p := range prefixes {
		r, _ := utf8.DecodeRuneInString(p)
		first[r] = true
	}
	for i, w := range ws {
		if r, _ := utf8.DecodeRuneInString(w.Word); !first[unicode.ToLower(r)] {
			continue
		}
		t := analysis.Term(w.Word)
		if near != nil {
			near.add(t, w.Position)
		}
		lw := strings.ToLower(w.Word)
		match[i] = t != "" && terms[t]
		for _, p := range prefixes {
			match[i] = match[i] || p != "" && strings.HasPrefix(lw, p)
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
		if i >= SnippetWords && match[i-SnippetWords] {
			n--
		}
		if start := max(0, i-SnippetWords+1); n > bestN {
			best, bestN = start, n
		}
	}
	for !match[best] {
		best++ // The window from its first match holds at least as many.
	}
	end := min(best+SnippetWords, len(ws))
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
		b.WriteString(content[pos:]) // The text's last words keep what follows them.
	}
	return []string{strings.TrimSpace(b.String())}
}
