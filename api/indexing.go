package api

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Indexing, with Onyx's routes and models: run-once asks for a run of a
// connector's pairs (the scheduler makes the attempts, workers run them:
// api/worker.go), and the status of indexing, a pair's attempts and their
// errors report on them. Onyx's routes for pruning and permission syncing,
// which Quarry does not do yet, answer 501 after the usual checks (401,
// 403, 422 for a bad path), with a sentence that says so.

// errNotIndexing returns the 501 of a route Quarry does not serve yet;
// what says what the route would have done, e.g. "prune a cc-pair".
func errNotIndexing(what string) error {
	return quarry.Errorf(quarry.ENOTIMPLEMENTED, "Quarry cannot %s yet", what)
}

// notIndexingPair returns the handler of a route about one cc-pair that
// Quarry does not serve yet: its path parameter is checked first.
func notIndexingPair(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in ccPairIDPath
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		return errNotIndexing(what)
	}
}

// handleRunOnce serves POST /manage/admin/connector/run-once: Onyx's
// connector_run_once. Each pair of the connector (or of the credentials
// named) that the caller can see and that has no live attempt gets an
// indexing trigger; the answer counts them.
func (s *Server) handleRunOnce(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in runOnceRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	var creds []int64
	if v := value(in.Body.CredentialIDs); v != nil {
		creds = *v
	}
	n, err := s.db.RunOnce(r.Context(), c, in.Body.ConnectorID, creds, in.Body.FromBeginning)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, statusResponse{true, fmt.Sprintf("Marked %d index attempts with indexing triggers.", n), int64(n)})
}

// indexAttemptSnapshot is Onyx's IndexAttemptSnapshot.
type indexAttemptSnapshot struct {
	ID                   int64                 `json:"id"`
	Status               quarry.IndexingStatus `json:"status"`
	FromBeginning        bool                  `json:"from_beginning"`
	NewDocsIndexed       int64                 `json:"new_docs_indexed"`
	TotalDocsIndexed     int64                 `json:"total_docs_indexed"`
	DocsRemovedFromIndex int64                 `json:"docs_removed_from_index"`
	ErrorMsg             *string               `json:"error_msg"`
	ErrorCount           int64                 `json:"error_count"`
	FullExceptionTrace   *string               `json:"full_exception_trace"`
	TimeStarted          *quarry.Time          `json:"time_started"`
	TimeUpdated          quarry.Time           `json:"time_updated"`
	PollRangeStart       *quarry.Time          `json:"poll_range_start"`
	PollRangeEnd         *quarry.Time          `json:"poll_range_end"`
}

// attemptSnapshot returns Onyx's snapshot of a.
func attemptSnapshot(a *quarry.IndexAttempt) indexAttemptSnapshot {
	return indexAttemptSnapshot{ID: a.ID, Status: a.Status, FromBeginning: a.FromBeginning, NewDocsIndexed: a.NewDocsIndexed,
		TotalDocsIndexed: a.TotalDocsIndexed, DocsRemovedFromIndex: a.DocsRemovedFromIndex, ErrorMsg: a.ErrorMsg,
		ErrorCount: a.ErrorCount, FullExceptionTrace: a.FullExceptionTrace, TimeStarted: a.TimeStarted,
		TimeUpdated: a.TimeUpdated, PollRangeStart: a.PollRangeStart, PollRangeEnd: a.PollRangeEnd}
}

// handleIndexAttempts serves GET
// /manage/admin/cc-pair/{cc_pair_id}/index-attempts: a page of the pair's
// attempts, newest first.
func (s *Server) handleIndexAttempts(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in indexAttemptsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	as, total, err := s.db.IndexAttempts(r.Context(), c, in.ID, in.PageNum, in.PageSize)
	if err != nil {
		return err
	}
	out := paginated[indexAttemptSnapshot]{Items: make([]indexAttemptSnapshot, len(as)), TotalItems: int(total)}
	for i, a := range as {
		out.Items[i] = attemptSnapshot(a)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleAttemptErrors serves GET /manage/admin/cc-pair/{cc_pair_id}/errors:
// a page of the errors of the pair's attempts, newest first, unresolved
// ones only unless include_resolved.
func (s *Server) handleAttemptErrors(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in attemptErrorsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	es, total, err := s.db.AttemptErrors(r.Context(), c, in.ID, in.IncludeResolved, in.PageNum, in.PageSize)
	if err != nil {
		return err
	}
	out := paginated[*quarry.IndexAttemptError]{Items: es, TotalItems: int(total)}
	if out.Items == nil {
		out.Items = []*quarry.IndexAttemptError{}
	}
	return writeJSON(w, http.StatusOK, out)
}

// indexingPageSize is the size of a page of one source's indexing
// statuses, Onyx's _INDEXING_STATUS_PAGE_SIZE.
const indexingPageSize = 10

// indexingStatusLite is one pair in the status of indexing: Onyx's
// ConnectorIndexingStatusLite.
type indexingStatusLite struct {
	CCPairID                      int64                  `json:"cc_pair_id"`
	Name                          string                 `json:"name"`
	Source                        quarry.DocumentSource  `json:"source"`
	AccessType                    quarry.AccessType      `json:"access_type"`
	CCPairStatus                  quarry.CCPairStatus    `json:"cc_pair_status"`
	InProgress                    bool                   `json:"in_progress"`
	InRepeatedErrorState          bool                   `json:"in_repeated_error_state"`
	LastFinishedStatus            *quarry.IndexingStatus `json:"last_finished_status"`
	LastStatus                    *quarry.IndexingStatus `json:"last_status"`
	LastSuccess                   *quarry.Time           `json:"last_success"`
	IsEditable                    bool                   `json:"is_editable"`
	DocsIndexed                   int64                  `json:"docs_indexed"`
	LatestIndexAttemptDocsIndexed *int64                 `json:"latest_index_attempt_docs_indexed"`
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
// as Onyx does: the cc-pairs the caller may see (quarry.Caller.CanSeePair),
// those it may change (CanChangePair) first, each part descending by id,
// each once (Onyx lists a curator's editable pairs twice); grouped by
// source (ascending) with a summary each, in pages of 10 unless
// get_all_connectors; each with its latest attempts, its documents and its
// last success. A pair's documents are those the caller may read unless it
// sees the whole pair (quarry.Caller.SeesWholePair), and its latest
// attempt's documents (a figure of the whole pair) are then null. Quarry
// has one index, so secondary_index changes nothing, and no federated
// connectors.
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
	ids := make([]int64, len(pairs))
	for i, p := range pairs {
		ids[i] = p.ID
	}
	indexing, err := s.db.PairsIndexing(r.Context(), c, ids)
	if err != nil {
		return err
	}
	var editable, readOnly []indexingStatusLite
	for _, p := range pairs {
		e := indexingStatusLite{CCPairID: p.ID, Name: p.Name, Source: p.Source, AccessType: p.AccessType,
			CCPairStatus: p.Status, IsEditable: c.CanChangePair(&p.CCPair)}
		if x := indexing[p.ID]; x != nil {
			e.InRepeatedErrorState, e.LastSuccess, e.DocsIndexed = x.InRepeatedErrorState, x.LatestSuccessStarted, x.DocsIndexed
			if a := x.Latest; a != nil {
				e.InProgress, e.LastStatus = a.Status == quarry.IndexInProgress, &a.Status
				if x.Whole {
					e.LatestIndexAttemptDocsIndexed = &a.TotalDocsIndexed
				}
			}
			if a := x.LatestFinished; a != nil {
				e.LastFinishedStatus = &a.Status
			}
		}
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
			page.Summary.TotalDocsIndexed += e.DocsIndexed
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
// access types, the last statuses, the number of documents, and a part of
// the name in any case.
func (f *indexingStatusRequest) matches(e *indexingStatusLite) bool {
	if len(f.AccessTypeFilters) > 0 && !slices.Contains(f.AccessTypeFilters, e.AccessType) {
		return false
	}
	if len(f.LastStatusFilters) > 0 && (e.LastStatus == nil || !slices.Contains(f.LastStatusFilters, *e.LastStatus)) {
		return false
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
