package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Pruning, with Onyx's routes (quarry.PruneFacts): a person asks for a
// prune of a pair, which the scheduler makes and a worker runs, and reads
// when the pair was last pruned.

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
