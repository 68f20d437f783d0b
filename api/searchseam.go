package api

import (
	"context"
	"net/http"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// The search that /mcp's tools and the console run, with the caller's
// rights: the store's search, its sources and its documents.

// docSearch is a search of the tools: the words, the sources (nil: all),
// the earliest time of update, how many results and whether with their
// chunk's text.
type docSearch struct {
	Query   string
	Sources []quarry.DocumentSource
	Since   *time.Time
	Limit   int
	Content bool
}

// docHit is a result of a docSearch: a chunk of a document.
type docHit struct {
	DocumentID string
	Title      string // The semantic identifier.
	Link       *string
	Source     quarry.DocumentSource
	Content    string
	UpdatedAt  *time.Time
}

// searchDocuments runs q for c.
func (s *Server) searchDocuments(ctx context.Context, c *quarry.Caller, q docSearch) ([]docHit, error) {
	return nil, quarry.Errorf(quarry.EUNAVAILABLE, "search is not wired yet")
}

// searchableSources returns the sources of the pairs c may search, sorted,
// without the ingestion API's (Onyx's indexed sources).
func (s *Server) searchableSources(ctx context.Context, c *quarry.Caller) ([]quarry.DocumentSource, error) {
	return nil, quarry.Errorf(quarry.EUNAVAILABLE, "search is not wired yet")
}

// searchableDocument returns document id as a pair c may search holds it
// (quarry.ENOTFOUND otherwise).
func (s *Server) searchableDocument(ctx context.Context, c *quarry.Caller, id string) (*quarry.Document, error) {
	return nil, quarry.Errorf(quarry.EUNAVAILABLE, "search is not wired yet")
}

// handleIndexedSources serves GET /manage/indexed-sources: Onyx's
// IndexedSourcesResponse, the sources the caller may search.
func (s *Server) handleIndexedSources(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	sources, err := s.searchableSources(r.Context(), c)
	if err != nil {
		return err
	}
	if sources == nil {
		sources = []quarry.DocumentSource{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"sources": sources})
}

// handleSearchDocument serves GET /search/document/{document_id}: the
// document, as fetch gives it, if c may search a pair that holds it.
func (s *Server) handleSearchDocument(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getSearchDocumentRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	d, err := s.searchableDocument(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fetchedDocument(d))
}
