package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// handleCreateGroup serves POST /manage/admin/user-group.
func (s *Server) handleCreateGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		Body userGroupCreate `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	g, err := s.db.CreateGroup(r.Context(), c, quarry.UserGroupInput{
		Name:      &in.Body.Name,
		UserIDs:   nonNil(in.Body.UserIDs),
		CCPairIDs: nonNil(in.Body.CCPairIDs),
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, g)
}

// handleListGroups serves GET /manage/admin/user-group.
func (s *Server) handleListGroups(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	gs, err := s.db.Groups(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, gs)
}

// handleUpdateGroup serves PATCH /manage/admin/user-group/{group_id}.
func (s *Server) handleUpdateGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		ID   int64           `path:"group_id"`
		Body userGroupUpdate `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	u := quarry.UserGroupInput{Name: value(in.Body.Name)}
	if p := value(in.Body.UserIDs); p != nil {
		u.UserIDs = nonNil(*p)
	}
	if p := value(in.Body.CCPairIDs); p != nil {
		u.CCPairIDs = nonNil(*p)
	}
	g, err := s.db.UpdateGroup(r.Context(), c, in.ID, u)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, g)
}

// handleDeleteGroup serves DELETE /manage/admin/user-group/{group_id}.
func (s *Server) handleDeleteGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		ID int64 `path:"group_id"`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteGroup(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleSetCurator serves POST /manage/admin/user-group/{group_id}/set-curator.
func (s *Server) handleSetCurator(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		ID   int64      `path:"group_id"`
		Body setCurator `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetCurator(r.Context(), c, in.ID, in.Body.UserID, in.Body.IsCurator); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// nonNil returns s, or an empty slice if s is nil, so that "none" is never
// read as "unchanged".
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
