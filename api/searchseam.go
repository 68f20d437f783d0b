package api

import (
	"context"
	"net/http"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/index"
)

// The search that /mcp's tools run, with the caller's rights (the store's
// Search, as POST /search/send-search-message runs it), and the routes of
// what they read beside it: the sources to filter by and a document's
// text. Each result and each document fetched is one pair's copy, named
// with its pair (copyPair).

// docSearch is a search of the tools: the words, the sources (nil: all),
// the document sets (by name; none: all), the earliest time of update,
// and how many results.
type docSearch struct {
	Query        string
	Sources      []quarry.DocumentSource
	DocumentSets []string
	Since        *time.Time
	Limit        int
}

// searchDocuments runs q for c: the store's search, one hit per copy.
func (s *Server) searchDocuments(ctx context.Context, c *quarry.Caller, q docSearch) ([]quarry.SearchHit, error) {
	f := quarry.SearchFilters{Sources: q.Sources, DocumentSets: q.DocumentSets}
	if q.Since != nil {
		f.UpdatedAfter = &quarry.Time{Time: *q.Since}
	}
	return s.db.Search(ctx, c, index.ParseQuery(q.Query), f, q.Limit)
}

// handleIndexedSources serves GET /manage/indexed-sources: Onyx's
// IndexedSourcesResponse, the sources the caller may search.
func (s *Server) handleIndexedSources(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	sources, err := s.db.SearchSources(r.Context(), c)
	if err != nil {
		return err
	}
	if sources == nil {
		sources = []quarry.DocumentSource{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"sources": sources})
}

// copyPair is the pair a result of a search, or a document fetched, is a
// copy of, as Quarry's answers name it beside Onyx's and OpenAI's fields
// (docs/decisions.md, "Each pair's copy stays its own"): its id, name and
// access type.
type copyPair struct {
	CCPairID         int64             `json:"cc_pair_id"`
	CCPairName       string            `json:"cc_pair_name"`
	CCPairAccessType quarry.AccessType `json:"cc_pair_access_type"`
}

// pairOf returns the copyPair of r.
func pairOf(r quarry.PairRef) copyPair {
	return copyPair{CCPairID: r.ID, CCPairName: r.Name, CCPairAccessType: r.AccessType}
}

// handleSearchDocument serves GET /search/document/{document_id}: the
// copy of the document that pair cc_pair_id holds, as fetch gives it, if
// c may search it; without cc_pair_id, the one copy c may search (409
// naming the pairs when there are several).
func (s *Server) handleSearchDocument(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getSearchDocumentRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	d, err := s.db.SearchDocument(r.Context(), c, in.ID, value(in.CCPairID))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fetchedDocument(d, d.Document.ID))
}
