package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// apiKeyRecord is the wire shape of an API key; APIKey is set only when the
// token was just made.
type apiKeyRecord struct {
	ID      int64       `json:"api_key_id"`
	Display string      `json:"api_key_display"`
	APIKey  *string     `json:"api_key"`
	Name    *string     `json:"api_key_name"`
	Role    quarry.Role `json:"api_key_role"`
	UserID  string      `json:"user_id"`
}

func newAPIKeyRecord(k *quarry.APIKey, token string) apiKeyRecord {
	rec := apiKeyRecord{ID: k.ID, Display: k.Display, Name: k.Name, Role: k.Role, UserID: k.UserID}
	if token != "" {
		rec.APIKey = &token
	}
	return rec
}

// handleCreateAPIKey serves POST /admin/api-key.
func (s *Server) handleCreateAPIKey(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createAPIKeyRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	k, token, err := s.db.CreateAPIKey(r.Context(), c, value(in.Body.Name), in.Body.Role)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newAPIKeyRecord(k, token))
}

// handleListAPIKeys serves GET /admin/api-key.
func (s *Server) handleListAPIKeys(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ks, err := s.db.APIKeys(r.Context())
	if err != nil {
		return err
	}
	out := make([]apiKeyRecord, len(ks))
	for i, k := range ks {
		out[i] = newAPIKeyRecord(k, "")
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleDeleteAPIKey serves DELETE /admin/api-key/{api_key_id}.
func (s *Server) handleDeleteAPIKey(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteAPIKeyRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteAPIKey(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleUpdateAPIKey serves PATCH /admin/api-key/{api_key_id}: Onyx's
// update of a key's name and role (a role left out is basic, as Onyx's
// APIKeyArgs says).
func (s *Server) handleUpdateAPIKey(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateAPIKeyRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	k, err := s.db.UpdateAPIKey(r.Context(), c, in.ID, value(in.Body.Name), in.Body.Role)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newAPIKeyRecord(k, ""))
}

// handleRegenerateAPIKey serves POST /admin/api-key/{api_key_id}/regenerate.
func (s *Server) handleRegenerateAPIKey(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in regenerateAPIKeyRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	k, token, err := s.db.RegenerateAPIKey(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newAPIKeyRecord(k, token))
}

// handleMe serves GET /me: the caller's own account, its groups but the
// default ones (which share nothing; the people listing shows them), with
// the fields of Onyx's UserInfo that Quarry has no use for at their
// neutral values (no superusers, no verified emails, no preferences).
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return writeJSON(w, http.StatusOK, struct {
		quarry.User
		Groups      []int64  `json:"groups"`
		IsSuperuser bool     `json:"is_superuser"`
		IsVerified  bool     `json:"is_verified"`
		Preferences struct{} `json:"preferences"`
	}{User: c.User, Groups: c.SharingGroupIDs()})
}
