package api

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Quarry is the control plane only: it keeps connectors, credentials and
// their pairs, but indexes nothing. The status of indexing says so, truly:
// the pairs the caller sees, none ever indexed. The routes of Onyx's that
// start, report on or wait for indexing, pruning and permission syncing
// are served all the same, so that a client learns why they cannot work:
// after the usual checks (401, 403, 422 for a bad path), they answer 501
// with a sentence that says so.

// errNotIndexing returns the 501 of a route that needs an indexer; what
// says what the route would have done, e.g. "run a connector".
func errNotIndexing(what string) error {
	return quarry.Errorf(quarry.ENOTIMPLEMENTED,
		"Quarry does not index documents: it is a control plane only, so it cannot %s", what)
}

// notIndexing returns the handler of a route that needs an indexer.
func notIndexing(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		return errNotIndexing(what)
	}
}

// notIndexingPair returns the handler of a route about one cc-pair that
// needs an indexer: its path parameter is checked first.
func notIndexingPair(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in ccPairIDPath
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		return errNotIndexing(what)
	}
}

// indexingPageSize is the size of a page of one source's indexing
// statuses, Onyx's _INDEXING_STATUS_PAGE_SIZE.
const indexingPageSize = 10

// indexingStatusLite is one pair in the status of indexing: Onyx's
// ConnectorIndexingStatusLite.
type indexingStatusLite struct {
	CCPairID                      int64                 `json:"cc_pair_id"`
	Name                          string                `json:"name"`
	Source                        quarry.DocumentSource `json:"source"`
	AccessType                    quarry.AccessType     `json:"access_type"`
	CCPairStatus                  quarry.CCPairStatus   `json:"cc_pair_status"`
	InProgress                    bool                  `json:"in_progress"`
	InRepeatedErrorState          bool                  `json:"in_repeated_error_state"`
	LastFinishedStatus            *indexingStatus       `json:"last_finished_status"`
	LastStatus                    *indexingStatus       `json:"last_status"`
	LastSuccess                   *quarry.Time          `json:"last_success"`
	IsEditable                    bool                  `json:"is_editable"`
	DocsIndexed                   int64                 `json:"docs_indexed"`
	LatestIndexAttemptDocsIndexed *int64                `json:"latest_index_attempt_docs_indexed"`
}

// sourceSummary is Onyx's SourceSummary.
type sourceSummary struct {
	TotalConnectors  int   `json:"total_connectors"`
	ActiveConnectors int   `json:"active_connectors"`
	PublicConnectors int   `json:"public_connectors"`
	TotalDocsIndexed int64 `json:"total_docs_indexed"`
}

// indexingStatusPage is one source's page of the status of indexing:
// Onyx's ConnectorIndexingStatusLiteResponse.
type indexingStatusPage struct {
	Source           quarry.DocumentSource `json:"source"`
	Summary          sourceSummary         `json:"summary"`
	CurrentPage      int64                 `json:"current_page"`
	TotalPages       int                   `json:"total_pages"`
	IndexingStatuses []indexingStatusLite  `json:"indexing_statuses"`
}

// handleIndexingStatus serves POST /manage/admin/connector/indexing-status
// as Onyx does, for a control plane: the cc-pairs the caller may see
// (quarry.Caller.CanSeePair), those it may change (CanChangePair) first,
// each part descending by id, each once (Onyx lists a curator's editable
// pairs twice); grouped by source (ascending) with a summary each, in
// pages of 10 unless get_all_connectors. No pair was ever indexed: no
// attempts, no documents, not in progress, and a non-empty
// last_status_filters matches none. Quarry has one index, so
// secondary_index changes nothing, and no federated connectors.
func (s *Server) handleIndexingStatus(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in indexingStatusRoute
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f := &in.Body
	var source quarry.DocumentSource
	if v := value(f.Source); v != nil {
		source = *v
	}
	pairs, err := s.db.CCPairBriefs(r.Context(), c, source)
	if err != nil {
		return err
	}
	var editable, readOnly []indexingStatusLite
	for _, p := range pairs {
		e := indexingStatusLite{CCPairID: p.ID, Name: p.Name, Source: p.Source, AccessType: p.AccessType,
			CCPairStatus: p.Status, IsEditable: c.CanChangePair(&p.CCPair)}
		if !f.matches(&e) {
			continue
		}
		if e.IsEditable {
			editable = append(editable, e)
		} else {
			readOnly = append(readOnly, e)
		}
	}
	bySource := map[quarry.DocumentSource][]indexingStatusLite{}
	for _, e := range append(editable, readOnly...) {
		bySource[e.Source] = append(bySource[e.Source], e)
	}
	out := []indexingStatusPage{}
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		all := bySource[src]
		page := indexingStatusPage{Source: src, CurrentPage: 1, TotalPages: (len(all) + indexingPageSize - 1) / indexingPageSize}
		for _, e := range all {
			page.Summary.TotalConnectors++
			if e.CCPairStatus == quarry.CCPairActive {
				page.Summary.ActiveConnectors++
			}
			if e.AccessType == quarry.AccessPublic {
				page.Summary.PublicConnectors++
			}
		}
		if p, ok := f.SourceToPage[src]; ok {
			page.CurrentPage = p
		}
		page.IndexingStatuses = all
		if !f.GetAllConnectors {
			start := (page.CurrentPage - 1) * indexingPageSize
			page.IndexingStatuses = pySlice(all, start, start+indexingPageSize)
		}
		if len(page.IndexingStatuses) > 0 {
			out = append(out, page)
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// matches reports whether e passes f's filters, as Onyx applies them: the
// access types, the last statuses (none has one), the number of
// documents (0), and a part of the name in any case.
func (f *indexingStatusRequest) matches(e *indexingStatusLite) bool {
	if len(f.AccessTypeFilters) > 0 && !slices.Contains(f.AccessTypeFilters, e.AccessType) {
		return false
	}
	if len(f.LastStatusFilters) > 0 {
		return false // e.LastStatus is null, in no list of statuses.
	}
	if op, n := value(f.DocsCountOperator), value(f.DocsCountValue); op != nil && n != nil {
		switch *op {
		case ">":
			if !(e.DocsIndexed > *n) {
				return false
			}
		case "<":
			if !(e.DocsIndexed < *n) {
				return false
			}
		case "=":
			if e.DocsIndexed != *n {
				return false
			}
		}
	}
	if name := value(f.NameFilter); name != nil && *name != "" {
		return e.Name != "" && strings.Contains(strings.ToLower(e.Name), strings.ToLower(*name))
	}
	return true
}

// pySlice returns s[start:end] with Python's rules: negative bounds count
// from the end, and bounds are clamped to the slice.
func pySlice[T any](s []T, start, end int64) []T {
	n := int64(len(s))
	clamp := func(i int64) int64 {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	start, end = clamp(start), clamp(end)
	if start >= end {
		return nil
	}
	return s[start:end]
}
