package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Document sets, with Onyx v4.6.1's routes
// (backend/onyx/server/features/document_set/api.py) and models: admins
// and curators make, change and delete them (store/documentset.go, with
// the rules of documentset.go); everyone who may use Quarry lists the sets
// they may see. A search is narrowed to sets by filters.document_set
// (api/search.go, chat, /mcp).

// documentSetAccess admits curators and those who manage document sets
// (quarry.Caller.CanReachDocumentSets): Onyx's
// current_curator_or_admin_user.
var documentSetAccess = permitted((*quarry.Caller).CanReachDocumentSets, quarry.ErrNotCurator)

// documentSetSummary is a set as Onyx's DocumentSetSummary renders it.
// Quarry's sets are searchable as soon as they are written: is_up_to_date
// is always true; and it has no federated connectors.
type documentSetSummary struct {
	ID                          int64           `json:"id"`
	Name                        string          `json:"name"`
	Description                 *string         `json:"description"`
	CCPairSummaries             []ccPairSummary `json:"cc_pair_summaries"`
	IsUpToDate                  bool            `json:"is_up_to_date"`
	IsPublic                    bool            `json:"is_public"`
	Users                       []string        `json:"users"`
	Groups                      []int64         `json:"groups"`
	FederatedConnectorSummaries []struct{}      `json:"federated_connector_summaries"`
}

// ccPairSummary is a pair of a set: Onyx's CCPairSummary.
type ccPairSummary struct {
	ID         int64                 `json:"id"`
	Name       string                `json:"name"`
	Source     quarry.DocumentSource `json:"source"`
	AccessType quarry.AccessType     `json:"access_type"`
}

// documentSetSummaryOf renders s.
func documentSetSummaryOf(s *quarry.DocumentSet) documentSetSummary {
	out := documentSetSummary{ID: s.ID, Name: s.Name, Description: &s.Description, CCPairSummaries: make([]ccPairSummary, len(s.Pairs)),
		IsUpToDate: true, IsPublic: s.IsPublic, Users: s.Users, Groups: s.Groups, FederatedConnectorSummaries: []struct{}{}}
	for i, p := range s.Pairs {
		out.CCPairSummaries[i] = ccPairSummary{ID: p.ID, Name: p.Name, Source: p.Source, AccessType: p.AccessType}
	}
	return out
}

// userIDs returns ids as the store keeps users' ids.
func userIDs(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// handleCreateDocumentSet serves POST /manage/admin/document-set: the new
// set's id, as Onyx answers.
func (s *Server) handleCreateDocumentSet(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createDocumentSetRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	id, err := s.db.CreateDocumentSet(r.Context(), c, quarry.DocumentSetInput{Name: b.Name, Description: b.Description,
		PairIDs: b.CCPairIDs, IsPublic: b.IsPublic, Users: userIDs(b.Users), Groups: b.Groups, FederatedConnectors: len(b.FederatedConnectors)})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, id)
}

// handleUpdateDocumentSet serves PATCH /manage/admin/document-set: the
// whole set replaced; null, as Onyx answers.
func (s *Server) handleUpdateDocumentSet(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateDocumentSetRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	err := s.db.UpdateDocumentSet(r.Context(), c, quarry.DocumentSetInput{ID: b.ID, Name: b.Name, Description: b.Description,
		PairIDs: b.CCPairIDs, IsPublic: b.IsPublic, Users: userIDs(b.Users), Groups: b.Groups, FederatedConnectors: len(b.FederatedConnectors)})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleDeleteDocumentSet serves DELETE
// /manage/admin/document-set/{document_set_id}: the set is gone at once
// (Onyx deletes it once its index is synced); null.
func (s *Server) handleDeleteDocumentSet(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteDocumentSetRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteDocumentSet(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleListDocumentSets serves GET /manage/document-set: the sets c may
// see, or with get_editable those it may change, ascending by id.
func (s *Server) handleListDocumentSets(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in documentSetsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	sets, err := s.db.DocumentSets(r.Context(), c, in.GetEditable)
	if err != nil {
		return err
	}
	out := make([]documentSetSummary, len(sets))
	for i, set := range sets {
		out[i] = documentSetSummaryOf(set)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleDocumentSetsPublic serves GET /manage/document-set-public, whose
// body (Onyx's CheckDocSetPublicRequest) names the sets: whether every
// pair of those c may see is public.
func (s *Server) handleDocumentSetsPublic(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in documentSetPublicRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	public, err := s.db.DocumentSetsArePublic(r.Context(), c, in.Body.DocumentSetIDs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		IsPublic bool `json:"is_public"`
	}{public})
}
