package index

import (
	"strings"

	"github.com/quarryhq/quarry/analysis"
)

// The chunks a document is cut into for the index, and their terms.

// The chunker's sizes, in words (analysis.Words): Onyx cuts near 512
// tokens of its embedding model's tokenizer, about 384 English words.
const (
	ChunkWords   = 384 // Words of text in a chunk.
	ChunkOverlap = 32  // Words a chunk repeats from the end of the one before.
)

// TitleWeight is how much a word of the title counts for beside a word of
// the text, in a chunk's term frequencies and in its length (BM25F with
// one weight per field, summed before saturation). A title is what its
// author chose to say the document is about; 2 is the boost that
// Lucene-based engines commonly give it, and it leaves the text's words
// deciding between documents of similar titles.
const TitleWeight = 2

// Section is a part of a document's text, and its link.
type Section struct {
	Text string
	Link *string
}

// Chunk is a part of a document's text as the index keeps it: every chunk
// of a document carries its title.
type Chunk struct {
	No      int     // Its position among the document's chunks, from 0.
	Title   string  // The document's title (or semantic identifier).
	Content string  // Its text.
	Link    *string // The link of the section it begins in, or the document's.
}

// Chunks cuts the text of a document's sections into chunks of ChunkWords
// words, each repeating the last ChunkOverlap words of the one before,
// each carrying the document's title; a chunk's link is that of the
// section it begins in, or else link, the document's. A document without
// words is one chunk of its title alone.
func Chunks(title string, link *string, sections []Section) []Chunk {
	type word struct{ section, start, end int }
	var words []word
	for i, s := range sections {
		for _, w := range analysis.Words(s.Text) {
			words = append(words, word{i, w.Start, w.End})
		}
	}
	if len(words) == 0 {
		return []Chunk{{Title: title, Link: link}}
	}
	var out []Chunk
	for start := 0; ; start += ChunkWords - ChunkOverlap {
		end := min(start+ChunkWords, len(words))
		var b strings.Builder
		for i := start; i < end; {
			sec := words[i].section
			j := i
			for j+1 < end && words[j+1].section == sec {
				j++
			}
			text := sections[sec].Text
			stop := words[j].end
			if j+1 < len(words) && words[j+1].section == sec {
				stop = words[j+1].start // Keep the punctuation after the last word.
			} else if j+1 >= len(words) || words[j+1].section != sec {
				stop = len(text)
			}
			from := words[i].start
			if i == 0 || words[i-1].section != sec {
				from = 0 // A section's first words keep what comes before them.
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.TrimSpace(text[from:stop]))
			i = j + 1
		}
		l := sections[words[start].section].Link
		if l == nil || *l == "" {
			l = link
		}
		out = append(out, Chunk{No: len(out), Title: title, Content: b.String(), Link: l})
		if end == len(words) {
			return out
		}
	}
}

// Terms returns the weighted frequency of each term of chunk c (the
// title's words count TitleWeight times) and its length so weighted: what
// the index's postings keep.
func (c *Chunk) Terms() (tf map[string]int, length int) {
	tf = map[string]int{}
	for _, t := range analysis.Analyze(c.Title) {
		tf[t.Term] += TitleWeight
		length += TitleWeight
	}
	for _, t := range analysis.Analyze(c.Content) {
		tf[t.Term]++
		length++
	}
	return tf, length
}
