package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/index"
)

// Onyx's search API: POST /search/send-search-message. The index and the
// rights are the store's (store/search.go), the query package index's
// (index.ParseQuery), the results the root package's (search.go).

// maxSearchHits bounds num_hits.
const maxSearchHits = 1000

// onyxSearchDoc is a document as Onyx's SearchDoc renders it: what
// search's results (searchDoc) and an answer's documents (chatDoc) share.
type onyxSearchDoc struct {
	DocumentID           string         `json:"document_id"`
	ChunkInd             int            `json:"chunk_ind"`
	SemanticIdentifier   string         `json:"semantic_identifier"`
	Link                 *string        `json:"link"`
	Blurb                string         `json:"blurb"`
	SourceType           string         `json:"source_type"`
	Boost                int            `json:"boost"`
	Hidden               bool           `json:"hidden"`
	Metadata             map[string]any `json:"metadata"`
	Score                pyFloat        `json:"score"`
	IsRelevant           *bool          `json:"is_relevant"`
	RelevanceExplanation *string        `json:"relevance_explanation"`
	MatchHighlights      []string       `json:"match_highlights"`
	UpdatedAt            any            `json:"updated_at"`
	PrimaryOwners        []string       `json:"primary_owners"`
	SecondaryOwners      []string       `json:"secondary_owners"`
	IsInternet           bool           `json:"is_internet"`
	FileID               *string        `json:"file_id"`
}

// onyxSearchDocOf renders h, its time left to the caller (pydantic's, or
// Python's isoformat in a stream).
func onyxSearchDocOf(h *quarry.SearchHit) onyxSearchDoc {
	return onyxSearchDoc{DocumentID: h.DocumentID, ChunkInd: h.ChunkNo, SemanticIdentifier: h.SemanticIdentifier, Link: h.Link,
		Blurb: h.Blurb, SourceType: string(h.Source), Metadata: h.Metadata, Score: pyFloat(h.Score),
		MatchHighlights: h.MatchHighlights, PrimaryOwners: h.PrimaryOwners, SecondaryOwners: h.SecondaryOwners}
}

// searchDoc is a result as Onyx's SearchDocWithContent renders it, and the
// pair its copy is of (Quarry's extension, see copyPair).
type searchDoc struct {
	onyxSearchDoc
	Content *string `json:"content"`
	copyPair
}

// pyFloat is a float as Python writes it (repr): 3.0, not 3.
type pyFloat float64

// MarshalJSON implements json.Marshaler.
func (f pyFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return []byte("null"), nil
	}
	var s string
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e16) {
		s = strconv.FormatFloat(v, 'f', -1, 64)
		if !bytes.ContainsAny([]byte(s), ".") {
			s += ".0"
		}
	} else {
		s = strconv.FormatFloat(v, 'e', -1, 64)
	}
	return []byte(s), nil
}

// filters returns the store's filters of f.
func (f *baseFilters) filters() quarry.SearchFilters {
	var out quarry.SearchFilters
	if v := value(f.SourceType); v != nil {
		out.Sources = *v
	}
	if v := value(f.DocumentSet); v != nil {
		out.DocumentSets = *v
	}
	if v := value(f.Tags); v != nil {
		for _, t := range *v {
			out.Tags = append(out.Tags, [2]string{t.TagKey, t.TagValue})
		}
	}
	at := func(o decode.Optional[time.Time]) *quarry.Time {
		if v := value(o); v != nil {
			return &quarry.Time{Time: v.UTC()}
		}
		return nil
	}
	if r := value(f.UpdatedAtRange); r != nil {
		out.UpdatedAfter, out.UpdatedBefore = at(r.Start), at(r.End)
	} else {
		out.UpdatedAfter = at(f.TimeCutoff) // Onyx folds the deprecated time_cutoff into updated_at_range.
	}
	// created_at_range: Quarry keeps no creation time, and Onyx lets
	// documents without one through (see docs/decisions.md, "Search").
	return out
}

// handleSendSearchMessage serves POST /search/send-search-message, as
// Onyx's handle_send_search_message without an LLM: no query expansion
// (the query is the only one executed) and an LLM selection that fails
// (llm_selected_doc_ids null), as Onyx answers when it has no LLM.
func (s *Server) handleSendSearchMessage(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in sendSearchMessageRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	var f quarry.SearchFilters
	if v := value(b.Filters); v != nil {
		f = v.filters()
	}
	limit := int(min(max(b.NumHits, 0), maxSearchHits))
	hits, err := s.db.Search(r.Context(), c, index.ParseQuery(b.SearchQuery), f, limit)
	if quarry.ErrorCode(err) == quarry.EFORBIDDEN {
		// A document set the caller may not see: Onyx's OnyxError, with
		// its code (before the stream, where Onyx streams it as a
		// search_error packet).
		return onyxCodedError{error: err}
	}
	if err != nil {
		return err
	}
	docs := make([]searchDoc, len(hits))
	for i, h := range hits {
		d := searchDoc{onyxSearchDoc: onyxSearchDocOf(&h), copyPair: pairOf(h.Pair)}
		if h.UpdatedAt != nil {
			if b.Stream {
				d.UpdatedAt = pythonISO(h.UpdatedAt.Time)
			} else {
				d.UpdatedAt = h.UpdatedAt
			}
		}
		if b.IncludeContent {
			d.Content = &h.Content
		}
		docs[i] = d
	}
	queries := []string{b.SearchQuery}
	selection := b.NumDocsFedToLLMSelection.Set() && b.NumDocsFedToLLMSelection.Value >= 1
	var selected []string // null: the selection failed for want of an LLM.
	if selection && len(docs) == 0 {
		selected = []string{}
	}
	if !b.Stream {
		return writeJSON(w, http.StatusOK, struct {
			AllExecutedQueries    []string    `json:"all_executed_queries"`
			SearchDocs            []searchDoc `json:"search_docs"`
			DocSelectionReasoning *string     `json:"doc_selection_reasoning"`
			LLMSelectedDocIDs     []string    `json:"llm_selected_doc_ids"`
			Error                 *string     `json:"error"`
		}{queries, docs, nil, selected, nil})
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	packets := []any{
		struct {
			Type               string   `json:"type"`
			AllExecutedQueries []string `json:"all_executed_queries"`
		}{"search_queries", queries},
		struct {
			Type       string      `json:"type"`
			SearchDocs []searchDoc `json:"search_docs"`
		}{"search_docs", docs},
	}
	if selection {
		packets = append(packets, struct {
			Type              string   `json:"type"`
			LLMSelectedDocIDs []string `json:"llm_selected_doc_ids"`
		}{"llm_selected_docs", selected})
	}
	for _, p := range packets {
		line, err := pythonJSONLine(p)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return nil // The client left.
		}
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	return nil
}

// maxSearchResults is how many results POST /search gives: the sections
// Onyx's SearchTool keeps when its LLM's selection fails (max_sections).
const maxSearchResults = 10

// searchResult is a result of POST /search: Onyx's SearchResult.
type searchResult struct {
	CitationID *int64  `json:"citation_id"`
	Title      string  `json:"title"`
	Content    string  `json:"content"`
	Link       *string `json:"link"`
	SourceType string  `json:"source_type"`
	UpdatedAt  *string `json:"updated_at"`
}

// handleSearch serves POST /search: Onyx v4.6.1's search API
// (backend/onyx/server/features/search/api.py), the search of
// send-search-message with the caller's rights, answered as Onyx's
// SearchTool answers when its LLM fails: no query expansion, and the first
// sections in the order of the search (maxSearchResults), one per
// document, each cited by its rank. An assistant (persona_id) narrows the
// search to its document sets, as Onyx's PersonaSearchInfo does; one the
// caller may not read, or none, is Onyx's 404 PERSONA_NOT_FOUND. A
// provider is Onyx's 404 NOT_FOUND (the search uses no LLM).
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in searchRoute
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	var sets []int64
	if id := value(b.PersonaID); id != nil {
		p, err := s.db.Persona(r.Context(), c, *id)
		if quarry.ErrorCode(err) == quarry.ENOTFOUND {
			return onyxCodedError{quarry.Errorf(quarry.ENOTFOUND, "Persona %d not found", *id), "PERSONA_NOT_FOUND"}
		}
		if err != nil {
			return onyxCodedError{error: err}
		}
		sets = p.DocumentSetIDs
	}
	if p := value(b.Provider); p != nil && *p != "" {
		return onyxCodedError{error: quarry.Errorf(quarry.ENOTFOUND, "LLM provider '%s' not found", *p)}
	}
	f := baseFilters{SourceType: b.Sources, DocumentSet: b.DocumentSets, Tags: b.Tags, TimeCutoff: b.TimeCutoff}
	filters := f.filters()
	filters.DocumentSetIDs = sets
	hits, err := s.db.Search(r.Context(), c, index.ParseQuery(b.Query), filters, maxSearchResults)
	if err != nil {
		return onyxCodedError{error: err}
	}
	out := struct {
		Results []searchResult `json:"results"`
	}{make([]searchResult, len(hits))}
	for i, h := range hits {
		cite := int64(i + 1)
		out.Results[i] = searchResult{CitationID: &cite, Title: h.SemanticIdentifier, Content: h.Content, Link: h.Link,
			SourceType: string(h.Source)}
		if h.UpdatedAt != nil {
			at := pythonISO(h.UpdatedAt.Time)
			out.Results[i].UpdatedAt = &at
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// pythonJSONLine renders v as Onyx's get_json_line does (Python's
// json.dumps: ", " and ": " between items, non-ASCII characters escaped),
// with a newline.
func pythonJSONLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return append(appendPythonJSON(make([]byte, 0, len(raw)+len(raw)/8+1), raw), '\n'), nil
}

// appendPythonJSON appends raw, JSON as encoding/json writes it without
// escaping HTML, as Python's json.dumps writes it (pythonJSONLine, without
// the newline).
func appendPythonJSON(out, raw []byte) []byte {
	inString := false
	for i := 0; i < len(raw); {
		if inString {
			// A string's plain run, copied whole.
			j := i
			for j < len(raw) && raw[j] != '\\' && raw[j] != '"' && raw[j] < 0x7f {
				j++
			}
			out = append(out, raw[i:j]...)
			if i = j; i == len(raw) {
				break
			}
		}
		c := raw[i]
		switch {
		case inString && c == '\\':
			out = append(out, raw[i], raw[i+1])
			i += 2
			continue
		case c == '"':
			inString = !inString
		case inString && c == 0x7f:
			// Python escapes DEL; encoding/json does not.
			out = append(out, `\u007f`...)
			i++
			continue
		case inString && c >= 0x80:
			r, n := utf8.DecodeRune(raw[i:])
			if r >= 0x10000 {
				a, b := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, a, b)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
			i += n
			continue
		case !inString && (c == ',' || c == ':'):
			out = append(out, c, ' ')
			i++
			continue
		}
		out = append(out, c)
		i++
	}
	return out
}
