package api

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// userGroupView is a user group as responses show it: Onyx's UserGroup,
// with Quarry's cc_pair_ids and times. Quarry lists no document sets
// (GET /manage/document-set does, with their groups), personas or chats
// here, and changes take effect at once: document_sets and personas are
// empty, is_up_to_date is true, is_up_for_deletion and incognito_enabled
// false.
type userGroupView struct {
	ID              int64              `json:"id"`
	Name            string             `json:"name"`
	Users           []userInfo         `json:"users"`
	CuratorIDs      []string           `json:"curator_ids"`
	CCPairs         []ccPairDescriptor `json:"cc_pairs"`
	DocumentSets    []json.RawMessage  `json:"document_sets"`
	Personas        []json.RawMessage  `json:"personas"`
	IsUpToDate      bool               `json:"is_up_to_date"`
	IsUpForDeletion bool               `json:"is_up_for_deletion"`
	IsDefault       bool               `json:"is_default"`
	IncognitoOn     bool               `json:"incognito_enabled"`
	CCPairIDs       []int64            `json:"cc_pair_ids"`
	CreatedAt       quarry.Time        `json:"time_created"`
	UpdatedAt       quarry.Time        `json:"time_updated"`
	// IsSCIMSynced says whether the company's directory manages the group:
	// its name, and the memberships of its people (whose users say
	// is_scim_synced), are the directory's.
	IsSCIMSynced bool `json:"is_scim_synced"`
}

// userInfo is a member of a group: the user, with the fields of Onyx's
// UserInfo that Quarry has no use for at their neutral values (Quarry has
// no superusers, verifies no email addresses and keeps no preferences).
type userInfo struct {
	quarry.User
	IsSuperuser bool     `json:"is_superuser"`
	IsVerified  bool     `json:"is_verified"`
	Preferences struct{} `json:"preferences"`
	// IsSCIMSynced says whether the company's directory manages the user.
	IsSCIMSynced bool `json:"is_scim_synced"`
}

// groupView returns what a response shows of g.
func (s *Server) groupView(g *quarry.UserGroup) (*userGroupView, error) {
	v := &userGroupView{ID: g.ID, Name: g.Name, Users: make([]userInfo, len(g.Users)), CuratorIDs: g.CuratorIDs,
		CCPairs: make([]ccPairDescriptor, len(g.CCPairs)), DocumentSets: []json.RawMessage{}, Personas: []json.RawMessage{},
		IsUpToDate: true, IsDefault: g.IsDefault, CCPairIDs: g.CCPairIDs, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
		IsSCIMSynced: g.SCIMSynced}
	for i, u := range g.Users {
		_, synced := slices.BinarySearch(g.SCIMMemberIDs, u.ID)
		v.Users[i] = userInfo{User: u, IsSCIMSynced: synced}
	}
	for i, p := range g.CCPairs {
		d, err := s.pairDescriptor(p)
		if err != nil {
			return nil, err
		}
		v.CCPairs[i] = *d
	}
	return v, nil
}

// writeGroup writes g.
func (s *Server) writeGroup(w http.ResponseWriter, g *quarry.UserGroup) error {
	v, err := s.groupView(g)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// handleCreateGroup serves POST /manage/admin/user-group.
func (s *Server) handleCreateGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createGroupRequest
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
	return s.writeGroup(w, g)
}

// handleListGroups serves GET /manage/admin/user-group: the default groups
// only with include_default=true, as Onyx.
func (s *Server) handleListGroups(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in groupsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	gs, err := s.db.Groups(r.Context(), c, in.IncludeDefault)
	if err != nil {
		return err
	}
	out := make([]*userGroupView, len(gs))
	for i, g := range gs {
		if out[i], err = s.groupView(g); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleUpdateGroup serves PATCH /manage/admin/user-group/{group_id}.
func (s *Server) handleUpdateGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateGroupRequest
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
	return s.writeGroup(w, g)
}

// handleAddGroupUsers serves POST /manage/admin/user-group/{group_id}/add-users.
func (s *Server) handleAddGroupUsers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in addGroupUsersRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	g, err := s.db.AddGroupMembers(r.Context(), c, in.ID, in.Body.UserIDs)
	if err != nil {
		return err
	}
	return s.writeGroup(w, g)
}

// handleDeleteGroup serves DELETE /manage/admin/user-group/{group_id}.
func (s *Server) handleDeleteGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteGroupRequest
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
	var in setCuratorRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetCurator(r.Context(), c, in.ID, in.Body.UserID, in.Body.IsCurator); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleGroupPermissions serves GET
// /manage/admin/user-group/{group_id}/permissions: the permissions granted
// to the group, in Onyx's order of the tokens.
func (s *Server) handleGroupPermissions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in groupPermissionsRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ps, err := s.db.GroupPermissions(r.Context(), in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNil(ps))
}

// handleSetGroupPermission serves PUT
// /manage/admin/user-group/{group_id}/permissions: a grant given or taken
// back, answered as Onyx's SetPermissionResponse.
func (s *Server) handleSetGroupPermission(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in setGroupPermissionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetGroupPermission(r.Context(), c, in.ID, in.Body.Permission, in.Body.Enabled); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, in.Body)
}

// handleMyPermissions serves GET /me/permissions: the caller's permissions
// (quarry.Caller.Permissions), sorted, as Onyx lists them.
func (s *Server) handleMyPermissions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return writeJSON(w, http.StatusOK, c.Permissions().Sorted())
}

// nonNil returns s, or an empty slice if s is nil, so that "none" is never
// read as "unchanged".
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
