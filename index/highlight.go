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
	n, end := 0, 0
	for w := range analysis.WordsSeq(content) {
		if n++; n > BlurbWords {
			return strings.TrimSpace(content[:end]) // Cut only a longer text.
		}
		end = w.End
	}
	return strings.TrimSpace(content)
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
// It reads content's words twice rather than keep them: once to find the
// matches, once to write the window.
func highlights(content string, terms map[string]bool, prefixes []string, near *nearness) []string {
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
	var matches []int // The positions of the words that match.
	words := 0
	for w := range analysis.WordsSeq(content) {
		words++
		if r, _ := utf8.DecodeRuneInString(w.Word); !first[unicode.ToLower(r)] {
			continue
		}
		t := analysis.Term(w.Word)
		if near != nil {
			near.add(t, w.Position)
		}
		match := t != "" && terms[t]
		if !match && len(prefixes) > 0 {
			lw := strings.ToLower(w.Word)
			for _, p := range prefixes {
				match = match || p != "" && strings.HasPrefix(lw, p)
			}
		}
		if match {
			matches = append(matches, w.Position)
		}
	}
	if len(matches) == 0 {
		return []string{}
	}
	// The window of SnippetWords words that holds the most matches, the
	// first of them if several do, from its first match: the window that
	// ends at each match holds the matches from lo to it.
	start, most := 0, 0
	for i, lo := 0, 0; i < len(matches); i++ {
		for matches[lo] <= matches[i]-SnippetWords {
			lo++
		}
		if n := i - lo + 1; n > most {
			start, most = matches[lo], n
		}
	}
	end := min(start+SnippetWords, words)
	var b strings.Builder
	pos := -1 // The byte after the last word written; -1 before the first.
	m := 0    // The first match not yet written.
	for w := range analysis.WordsSeq(content) {
		if w.Position < start {
			continue
		}
		if w.Position == end {
			break
		}
		if pos >= 0 {
			b.WriteString(content[pos:w.Start])
		}
		for m < len(matches) && matches[m] < w.Position {
			m++
		}
		if m < len(matches) && matches[m] == w.Position {
			b.WriteString("<hi>")
			b.WriteString(w.Word)
			b.WriteString("</hi>")
		} else {
			b.WriteString(w.Word)
		}
		pos = w.End
	}
	if end == words {
		b.WriteString(content[pos:]) // The text's last words keep what follows them.
	}
	return []string{strings.TrimSpace(b.String())}
}
