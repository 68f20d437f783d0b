// Package fidelity measures how much of a document's text a reader of its
// format recovers: the file connector's PDF test and tools/pdffidelity,
// which chose the PDF reader, score readers by it.
package fidelity

import (
	"strings"
	"unicode"
)

// Words returns the words of s: its runs of letters and digits,
// lower-cased.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Of returns the share of source's words that got holds, each word
// counted as often as source has it and at most as often as got has it:
// 1 when every word of the source was recovered (and when the source has
// none), whatever else got holds.
func Of(source, got string) float64 {
	have := map[string]int{}
	for _, w := range Words(got) {
		have[w]++
	}
	src := Words(source)
	if len(src) == 0 {
		return 1
	}
	found := 0
	for _, w := range src {
		if have[w] > 0 {
			have[w]--
			found++
		}
	}
	return float64(found) / float64(len(src))
}
