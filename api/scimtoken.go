package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// The SCIM token, with Onyx's routes and shapes (its enterprise settings'
// /admin/enterprise-settings/scim/token): admins make one (which revokes
// the one before) and read the active one's metadata; Quarry adds its
// revocation.

// scimTokenView is the metadata of a SCIM token: Onyx's ScimTokenResponse.
type scimTokenView struct {
	ID           int64        `json:"id"`
	Name         string       `json:"name"`
	TokenDisplay string       `json:"token_display"`
	IsActive     bool         `json:"is_active"`
	CreatedAt    quarry.Time  `json:"created_at"`
	LastUsedAt   *quarry.Time `json:"last_used_at"`
	IDPDomain    *string      `json:"idp_domain"`
}

// scimTokenCreated is a new SCIM token, shown this once: Onyx's
// ScimTokenCreatedResponse.
type scimTokenCreated struct {
	scimTokenView
	RawToken string `json:"raw_token"`
}

func newSCIMTokenView(t *quarry.SCIMToken) scimTokenView {
	return scimTokenView{ID: t.ID, Name: t.Name, TokenDisplay: t.Display, IsActive: t.IsActive,
		CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, IDPDomain: t.IDPDomain}
}

// handleGetSCIMToken serves GET /admin/enterprise-settings/scim/token: the
// active token's metadata, or null.
func (s *Server) handleGetSCIMToken(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	t, err := s.db.ActiveSCIMToken(r.Context())
	if err != nil || t == nil {
		if err == nil {
			return writeJSON(w, http.StatusOK, nil)
		}
		return err
	}
	return writeJSON(w, http.StatusOK, newSCIMTokenView(t))
}

// handleCreateSCIMToken serves POST /admin/enterprise-settings/scim/token:
// 201 with a new token, shown once; the one before stops working at once.
func (s *Server) handleCreateSCIMToken(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createSCIMTokenRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	t, token, err := s.db.CreateSCIMToken(r.Context(), c, in.Body.Name)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, scimTokenCreated{newSCIMTokenView(t), token})
}

// handleRevokeSCIMToken serves DELETE /admin/enterprise-settings/scim/token
// (Quarry's): the active token stops working; 404 when there is none.
func (s *Server) handleRevokeSCIMToken(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	if err := s.db.RevokeSCIMToken(r.Context(), c); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}
