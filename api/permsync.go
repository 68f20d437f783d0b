package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Permission syncing, with Onyx's routes (quarry.SyncFacts): a person asks
// for a permission sync or a group sync of a pair, which the scheduler
// makes and a worker runs, and reads when the pair's last one succeeded.

// syncResponse is Onyx's StatusResponse[None] as sync_cc_pair and
// sync_cc_pair_groups answer it.
type syncResponse struct {
	Success bool    `json:"success"`
	Message string  `json:"message"`
	Data    *string `json:"data"`
}

// handleRequestSync returns the handler of POST
// /manage/admin/cc-pair/{cc_pair_id}/sync-permissions (kind
// permission_sync: Onyx's sync_cc_pair) and …/sync-groups (group_sync:
// sync_cc_pair_groups). The sync is made by the scheduler's next pass (at
// once, unless the pair has another attempt: then when that ends).
func (s *Server) handleRequestSync(kind quarry.AttemptKind) handlerFunc {
	message := "Successfully created the permissions sync task."
	if kind == quarry.AttemptGroupSync {
		message = "Successfully created the external group sync task."
	}
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in syncCCPairRequest
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		if err := s.db.RequestSync(r.Context(), c, in.ID, kind); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, syncResponse{Success: true, Message: message})
	}
}

// handleLastSynced returns the handler of GET
// /manage/admin/cc-pair/{cc_pair_id}/sync-permissions (Onyx's
// get_cc_pair_latest_sync) and …/sync-groups
// (get_cc_pair_latest_group_sync): when the pair's latest sync of kind
// succeeded, or null.
func (s *Server) handleLastSynced(kind quarry.AttemptKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in syncCCPairRequest
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		t, err := s.db.LastSynced(r.Context(), c, in.ID, kind)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, t)
	}
}

// handleSyncPermissions serves POST
// /manage/admin/cc-pair/{cc_pair_id}/sync-permissions.
func (s *Server) handleSyncPermissions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return s.handleRequestSync(quarry.AttemptPermissionSync)(w, r, c)
}

// handleLastPermissionSync serves GET
// /manage/admin/cc-pair/{cc_pair_id}/sync-permissions.
func (s *Server) handleLastPermissionSync(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return s.handleLastSynced(quarry.AttemptPermissionSync)(w, r, c)
}

// handleSyncGroups serves POST
// /manage/admin/cc-pair/{cc_pair_id}/sync-groups.
func (s *Server) handleSyncGroups(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return s.handleRequestSync(quarry.AttemptGroupSync)(w, r, c)
}

// handleLastGroupSync serves GET
// /manage/admin/cc-pair/{cc_pair_id}/sync-groups.
func (s *Server) handleLastGroupSync(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return s.handleLastSynced(quarry.AttemptGroupSync)(w, r, c)
}
