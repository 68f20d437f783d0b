package api

import (
	"net/http"
	"strconv"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// One connector/credential pair at a time, with Onyx's paths and shapes:
// its page (CCPairFullInfo), its status (pause and resume), its name, and
// its deletion.

// ccPairDescriptor is a cc-pair as a user group lists it: Onyx's
// ConnectorCredentialPairDescriptor.
type ccPairDescriptor struct {
	ID         int64              `json:"id"`
	Name       string             `json:"name"`
	Connector  *quarry.Connector  `json:"connector"`
	Credential *quarry.Credential `json:"credential"` // Masked.
	AccessType quarry.AccessType  `json:"access_type"`
}

// pairDescriptor returns the descriptor of p, its credential masked.
func (s *Server) pairDescriptor(p *quarry.CCPairInfo) (*ccPairDescriptor, error) {
	k, err := s.credentialView(p.Credential)
	if err != nil {
		return nil, err
	}
	return &ccPairDescriptor{ID: p.ID, Name: p.Name, Connector: p.Connector, Credential: k, AccessType: p.AccessType}, nil
}

// ccPairFullInfo is the answer to GET /manage/admin/cc-pair/{cc_pair_id}:
// Onyx's CCPairFullInfo, and the pair's groups. Quarry deletes a pair at
// once and does not re-index single documents yet: no deletion attempt,
// no targeted re-indexing. Its fields of permission syncing are a sync
// pair's (quarry.ReportSync), null and false for the others.
// latest_checkpoint_description (always null in Onyx) says when the latest
// attempt last saved a checkpoint.
// overall_indexing_speed is the pair's documents per minute from its
// connector's making to its latest success (Onyx counts to now, so that the
// figure falls while nothing happens), null until its first success.
// num_docs_indexed counts the documents the caller may read, unless it
// sees the whole pair (quarry.Caller.SeesWholePair); the speed, a figure
// of the whole pair, is then null.
// pruning, last_prune_attempt_status, last_prune_attempt_finished and
// last_prune_attempt_error_message are Quarry's (quarry.PruneReport), named
// after Onyx's fields of permission syncing: a prune that cannot run says
// why on the pair's page.
type ccPairFullInfo struct {
	ID                          int64                  `json:"id"`
	Name                        string                 `json:"name"`
	Status                      quarry.CCPairStatus    `json:"status"`
	InRepeatedErrorState        bool                   `json:"in_repeated_error_state"`
	NumDocsIndexed              int64                  `json:"num_docs_indexed"`
	Connector                   *quarry.Connector      `json:"connector"`
	Credential                  *quarry.Credential     `json:"credential"` // Masked.
	NumberOfIndexAttempts       int64                  `json:"number_of_index_attempts"`
	LastIndexAttemptStatus      *quarry.IndexingStatus `json:"last_index_attempt_status"`
	LatestDeletionAttempt       *struct{}              `json:"latest_deletion_attempt"`
	AccessType                  quarry.AccessType      `json:"access_type"`
	IsEditableForCurrentUser    bool                   `json:"is_editable_for_current_user"`
	DeletionFailureMessage      *string                `json:"deletion_failure_message"`
	Indexing                    bool                   `json:"indexing"`
	Creator                     *string                `json:"creator"`
	CreatorEmail                *string                `json:"creator_email"`
	LastIndexed                 *quarry.Time           `json:"last_indexed"`
	LastPruned                  *quarry.Time           `json:"last_pruned"`
	LastFullPermissionSync      *quarry.Time           `json:"last_full_permission_sync"`
	OverallIndexingSpeed        *float64               `json:"overall_indexing_speed"`
	LatestCheckpointDescription *string                `json:"latest_checkpoint_description"`
	LastPermissionSyncStatus    *string                `json:"last_permission_sync_attempt_status"`
	PermissionSyncing           bool                   `json:"permission_syncing"`
	LastPermissionSyncFinished  *quarry.Time           `json:"last_permission_sync_attempt_finished"`
	LastPermissionSyncError     *string                `json:"last_permission_sync_attempt_error_message"`
	SupportsTargetedReindex     bool                   `json:"supports_targeted_reindex"`
	Groups                      []int64                `json:"groups"`
	Pruning                     bool                   `json:"pruning"`
	LastPruneStatus             *quarry.IndexingStatus `json:"last_prune_attempt_status"`
	LastPruneFinished           *quarry.Time           `json:"last_prune_attempt_finished"`
	LastPruneError              *string                `json:"last_prune_attempt_error_message"`
}

// writeCCPair writes the full information of p for c, with its ETag.
func (s *Server) writeCCPair(w http.ResponseWriter, r *http.Request, c *quarry.Caller, p *quarry.CCPairInfo) error {
	k, err := s.credentialView(p.Credential)
	if err != nil {
		return err
	}
	indexing, err := s.db.PairsIndexing(r.Context(), c, []int64{p.ID})
	if err != nil {
		return err
	}
	info := &ccPairFullInfo{ID: p.ID, Name: p.Name, Status: p.Status, Connector: p.Connector,
		Credential: k, AccessType: p.AccessType, IsEditableForCurrentUser: c.CanChangePair(&p.CCPair),
		Creator: p.CreatorID, CreatorEmail: p.CreatorEmail, Groups: p.Groups}
	if x := indexing[p.ID]; x != nil {
		info.InRepeatedErrorState, info.NumDocsIndexed, info.NumberOfIndexAttempts = x.InRepeatedErrorState, x.DocsIndexed, x.Attempts
		info.LastIndexed, info.LastPruned = x.LatestSuccessStarted, x.LastPruned
		if a := x.Latest; a != nil {
			info.LastIndexAttemptStatus, info.Indexing = &a.Status, a.Status == quarry.IndexInProgress
			info.LatestCheckpointDescription = a.CheckpointDescription()
		}
		sr := quarry.ReportSync(p.Connector.Source, p.AccessType, x.LatestPermissionSync, x.LastPermissionSync, x.LastGroupSync)
		info.LastFullPermissionSync, info.PermissionSyncing, info.LastPermissionSyncStatus = sr.LastFull, sr.Syncing, sr.LastStatus
		info.LastPermissionSyncFinished, info.LastPermissionSyncError = sr.LastFinished, sr.LastError
		pr := quarry.ReportPrune(x.PruneRequested, x.LatestPrune)
		info.Pruning, info.LastPruneStatus, info.LastPruneFinished, info.LastPruneError = pr.Pruning, pr.LastStatus, pr.LastFinished, pr.LastError
		if x.LastSuccessfulIndex != nil && x.Whole {
			minutes := x.LastSuccessfulIndex.Sub(p.Connector.CreatedAt.Time).Minutes()
			speed := float64(x.DocsIndexed) / max(minutes, 1.0/60)
			info.OverallIndexingSpeed = &speed
		}
	}
	w.Header().Set("ETag", etag(p.Version))
	return writeJSON(w, http.StatusOK, info)
}

// handleGetCCPair serves GET /manage/admin/cc-pair/{cc_pair_id}.
func (s *Server) handleGetCCPair(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getCCPairRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	p, err := s.db.CCPair(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return s.writeCCPair(w, r, c, p)
}

// handleSetCCPairStatus serves PUT /manage/admin/cc-pair/{cc_pair_id}/status:
// it pauses or resumes a pair, and answers as Onyx does.
func (s *Server) handleSetCCPairStatus(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in setCCPairStatusRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	p, err := s.db.UpdateCCPair(r.Context(), c, in.ID, quarry.CCPairUpdate{Status: (*quarry.CCPairStatus)(&in.Body.Status), IfMatch: ifMatch(r)})
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(p.Version))
	return writeJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
	}{strconv.Itoa(http.StatusOK)})
}

// handleRenameCCPair serves PUT /manage/admin/cc-pair/{cc_pair_id}/name.
func (s *Server) handleRenameCCPair(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in ccPairRename
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := quarry.CheckCCPairName(in.NewName); err != nil {
		return err
	}
	p, err := s.db.UpdateCCPair(r.Context(), c, in.ID, quarry.CCPairUpdate{Name: &in.NewName, IfMatch: ifMatch(r)})
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(p.Version))
	return writeJSON(w, http.StatusOK, statusResponse{true, "Name updated successfully", in.ID})
}

// handleDeletionAttempt serves POST /manage/admin/deletion-attempt. Onyx
// marks the pair DELETING and lets a background task remove its documents,
// then the pair, then its connector if no other pair uses it; Quarry has no
// documents, so it does the rest at once (see
// store.DB.DeleteCCPairCompletely).
func (s *Server) handleDeletionAttempt(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deletionAttemptRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteCCPairCompletely(r.Context(), c, in.Body.ConnectorID, in.Body.CredentialID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}
