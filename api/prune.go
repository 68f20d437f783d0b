package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Pruning, with Onyx's routes (quarry.PruneFacts): a person asks for a
// prune of a pair, which the scheduler makes and a worker runs, and reads
// when the pair was last pruned. And what a pair holds, for the console:
// its documents a page at a time, and one with its text (Onyx's document
// routes read its search index's chunks, which Quarry does not have).

// pruneResponse is Onyx's StatusResponse[list[int]] as prune_cc_pair
// answers it: no data.
type pruneResponse struct {
	Success bool    `json:"success"`
	Message string  `json:"message"`
	Data    []int64 `json:"data"`
}

// handlePrune serves POST /manage/admin/cc-pair/{cc_pair_id}/prune:
// Onyx's prune_cc_pair. The prune is made by the scheduler's next pass
// (at once, unless the pair is indexing: then when that ends).
func (s *Server) handlePrune(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in pruneCCPairRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RequestPrune(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, pruneResponse{Success: true, Message: "Successfully created the pruning task."})
}

// handleLastPruned serves GET /manage/admin/cc-pair/{cc_pair_id}/last_pruned:
// Onyx's get_cc_pair_last_pruned, a time or null.
func (s *Server) handleLastPruned(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getLastPrunedRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	t, err := s.db.LastPruned(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// handlePairDocumentPage serves GET
// /manage/admin/cc-pair/{cc_pair_id}/documents: a page of the pair's
// documents, by id, with how many it holds.
func (s *Server) handlePairDocumentPage(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in pairDocumentsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ds, total, err := s.db.PairDocumentPage(r.Context(), c, in.ID, in.PageNum, in.PageSize)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []quarry.PairDocument{}
	}
	return writeJSON(w, http.StatusOK, paginated[quarry.PairDocument]{Items: ds, TotalItems: int(total)})
}

// handlePairDocumentText serves GET
// /manage/admin/cc-pair/{cc_pair_id}/documents/{document_id}: one
// document of the pair with its text.
func (s *Server) handlePairDocumentText(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getPairDocumentRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	d, err := s.db.PairDocumentText(r.Context(), c, in.ID, in.DocumentID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}
