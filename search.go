package quarry

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/analysis"
)

// Search: the chunks documents are cut into for the index, the queries
// people type, and the results a search gives. The index and the ranking
// are the store's (store/search.go); the analysis of text is package
// analysis's.

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

// Chunk is a part of a document's text as the index keeps it: every chunk
// of a document carries its title.
type Chunk struct {
	No      int     // Its position among the document's chunks, from 0.
	Title   string  // The document's title (or semantic identifier).
	Content string  // Its text.
	Link    *string // The link of the section it begins in, or the document's.
}

// DocumentTitle returns the title the index keeps for d: its title, or its
// semantic identifier.
func (d *Document) DocumentTitle() string {
	if d.Title != nil && strings.TrimSpace(*d.Title) != "" {
		return *d.Title
	}
	return d.SemanticIdentifier
}

// Chunks cuts d's text into chunks of ChunkWords words, each repeating the
// last ChunkOverlap words of the one before; a document without words is
// one chunk of its title alone.
func (d *Document) Chunks() []Chunk {
	type word struct{ section, start, end int }
	var words []word
	for i, s := range d.Sections {
		for _, w := range analysis.Words(s.Text) {
			words = append(words, word{i, w.Start, w.End})
		}
	}
	title := d.DocumentTitle()
	if len(words) == 0 {
		return []Chunk{{Title: title, Link: d.Link()}}
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
			text := d.Sections[sec].Text
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
		link := d.Sections[words[start].section].Link
		if link == nil || *link == "" {
			link = d.Link()
		}
		out = append(out, Chunk{No: len(out), Title: title, Content: b.String(), Link: link})
		if end == len(words) {
			return out
		}
	}
}

// ChunkTerms returns the weighted frequency of each term of chunk c (the
// title's words count TitleWeight times) and its length so weighted: what
// the index's postings keep.
func (c *Chunk) ChunkTerms() (tf map[string]int, length int) {
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

// Limits on a query.
const (
	MaxQueryBytes    = 4096 // Longer queries are cut, at a word.
	MaxQueryTerms    = 64   // Distinct terms; the later ones are left out.
	MinPrefixLength  = 2    // Characters of the last word before it matches as a prefix.
	MaxPrefixMatches = 32   // The terms a prefix stands for, the most frequent first.
)

// Query is a search's query as parsed: its terms (each with the number of
// times it was asked, as Lucene's query parser adds a clause per word),
// the phrases a chunk must hold, and the prefix the last word may stand
// for.
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

// Phrase is a run of words a chunk must hold in that order: their terms
// and their positions relative to the first (stop words keep their place).
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
// quotes ("…"; an unclosed quote runs to the end). Every word is a term to
// score; a phrase must also appear, in order, in a chunk's title or text.
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
// match_highlights has them; none when no word matches.
func Highlights(content string, terms map[string]bool, prefixes []string) []string {
	ws := analysis.Words(content)
	match := make([]bool, len(ws))
	any := false
	// A term begins with its word's first letter, lowercased (stemming
	// changes only endings): words that begin otherwise are not analyzed.
	first := map[rune]bool{}
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

// ExternalAccess is the access to a document that a connector of a sync
// pair reports from its source: Onyx's ExternalAccess.
type ExternalAccess struct {
	ExternalUserEmails   []string `json:"external_user_emails"`
	ExternalUserGroupIDs []string `json:"external_user_group_ids"`
	IsPublic             bool     `json:"is_public"`
}

// Principals returns the principals of a's access as the index keeps them:
// "public", "email:" and a lowercase address, "group:" and an external
// group id; each once, sorted.
func (a *ExternalAccess) Principals() []string {
	set := map[string]bool{}
	if a.IsPublic {
		set["public"] = true
	}
	for _, e := range a.ExternalUserEmails {
		if e = strings.TrimSpace(e); e != "" {
			set["email:"+strings.ToLower(e)] = true
		}
	}
	for _, g := range a.ExternalUserGroupIDs {
		if g != "" {
			set["group:"+g] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Tags returns d's metadata as tags, each key with each of its values.
func (d *Document) Tags() [][2]string {
	var out [][2]string
	for k, v := range d.Metadata {
		switch v := v.(type) {
		case string:
			out = append(out, [2]string{k, v})
		case []string:
			for _, s := range v {
				out = append(out, [2]string{k, s})
			}
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					out = append(out, [2]string{k, s})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] || out[i][0] == out[j][0] && out[i][1] < out[j][1] })
	return out
}

// OwnerNames returns the names of owners (Onyx's BasicExpertInfo, as JSON)
// as Onyx's search results give them (basic_expert_info_representation):
// "first middle last", or the display name, or the email, or the first
// name; owners with none are left out. Nil when there are no owners.
func OwnerNames(owners []json.RawMessage) []string {
	if len(owners) == 0 {
		return nil
	}
	out := []string{}
	for _, raw := range owners {
		var o struct {
			DisplayName   *string `json:"display_name"`
			FirstName     *string `json:"first_name"`
			MiddleInitial *string `json:"middle_initial"`
			LastName      *string `json:"last_name"`
			Email         *string `json:"email"`
		}
		if json.Unmarshal(raw, &o) != nil {
			continue
		}
		s := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		switch {
		case s(o.FirstName) != "" && s(o.LastName) != "":
			mid := "None"
			if o.MiddleInitial != nil {
				mid = *o.MiddleInitial
			}
			out = append(out, s(o.FirstName)+" "+mid+" "+s(o.LastName))
		case s(o.DisplayName) != "":
			out = append(out, s(o.DisplayName))
		case strings.Contains(s(o.Email), "@"):
			out = append(out, s(o.Email))
		case s(o.FirstName) != "":
			out = append(out, s(o.FirstName))
		}
	}
	return out
}

// SearchFilters narrow a search: Onyx's BaseFilters, as far as Quarry
// keeps what they name.
type SearchFilters struct {
	Sources       []DocumentSource // Any of these sources; all when empty.
	DocumentSets  []string         // Quarry has no document sets: naming any matches nothing.
	UpdatedAfter  *Time            // Updated at or after (documents without a time pass, as in Onyx).
	UpdatedBefore *Time            // Updated at or before.
	Tags          [][2]string      // Any of these metadata keys and values.
}

// MaxSearchTags is how many different tags a search may filter by.
const MaxSearchTags = 100

// Normalized returns f with each source and each tag once (a request may
// repeat them), or an EINVALID error when it names more than
// MaxSearchTags different tags.
func (f SearchFilters) Normalized() (SearchFilters, error) {
	f.Sources = slices.Compact(slices.Sorted(slices.Values(f.Sources)))
	f.Tags = slices.CompactFunc(slices.SortedFunc(slices.Values(f.Tags), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}), func(a, b [2]string) bool { return a == b })
	if len(f.Tags) > MaxSearchTags {
		return f, Errorf(EINVALID, "A search filters by %d tags at most; this one names %d", MaxSearchTags, len(f.Tags))
	}
	return f, nil
}

// SearchHit is a result of a search: the best chunk of a pair's copy of a
// document the caller may see, the document's facts, and the pair it came
// from. A document several pairs hold is a result for each copy the
// caller may see: each copy stays its own (see DocumentCopy).
type SearchHit struct {
	DocumentID         string
	Pair               PairRef // The pair the copy is of.
	ChunkNo            int
	SemanticIdentifier string
	Link               *string
	Blurb              string
	Source             DocumentSource
	Metadata           map[string]any
	Score              float64
	MatchHighlights    []string
	UpdatedAt          *Time
	PrimaryOwners      []string
	SecondaryOwners    []string
	Content            string // The chunk's text.
}

// PairRef names the cc-pair a copy of a document comes from, as search
// shows it to those who may read the copy: its id (which alone tells
// pairs apart: names need not be unique), name and access type.
type PairRef struct {
	ID         int64
	Name       string
	AccessType AccessType
}

// String returns r as messages name it: its id, quoted name and access
// type.
func (r PairRef) String() string { return fmt.Sprintf("%d (%q, %s)", r.ID, r.Name, r.AccessType) }

// DocumentCopy is one pair's copy of a document. Documents are stored per
// pair, and pairs that hold a document of the same id each keep their own
// copy: nobody may decide what a person reads under a document that person
// can see from a pair they did not choose, so search, fetch and the
// listings give each copy as its own, with its pair, and never one copy in
// place of another.
type DocumentCopy struct {
	Pair     PairRef
	Document *Document
}

// AmbiguousDocumentError answers a document asked for by its id alone
// (without its pair) that several pairs the caller may read hold: the
// caller must name the copy. Its code is ECONFLICT; Pairs are the pairs
// holding a copy the caller may read, by id.
type AmbiguousDocumentError struct {
	ID    string
	Pairs []PairRef
}

// Error implements the error interface.
func (e *AmbiguousDocumentError) Error() string { return e.Unwrap().Error() }

// Unwrap returns the *Error of e, as Onyx's routes answer it: the pairs to
// choose from, by the cc_pair_id that names one.
func (e *AmbiguousDocumentError) Unwrap() error {
	names := make([]string, len(e.Pairs))
	for i, p := range e.Pairs {
		names[i] = p.String()
	}
	return Errorf(ECONFLICT, "Document %q is in %d pairs you may search; name one with cc_pair_id: %s",
		ClipText(e.ID, 200), len(e.Pairs), strings.Join(names, ", "))
}

// ErrNoPermission is Onyx's refusal of a route that needs a permission the
// caller (or the token it came with) does not hold.
var ErrNoPermission = Errorf(EFORBIDDEN, "You do not have the required permissions for this action.")

// CanSearch reports whether c may search the documents: it holds
// read:search (every role but limited; a personal access token only with
// that scope or one that implies it) and is a person or an API key, not
// the company's directory.
func (c *Caller) CanSearch() bool { return c.Directory == nil && c.Has(PermReadSearch) }

// CheckSearch refuses a caller who may not search (ErrNoPermission).
func (c *Caller) CheckSearch() error {
	if !c.CanSearch() {
		return ErrNoPermission
	}
	return nil
}
