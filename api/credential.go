package api

import (
	"fmt"
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// credentialView returns what a response shows of k: a copy with its
// credential_json masked, unless masking is off.
func (s *Server) credentialView(k *quarry.Credential) (*quarry.Credential, error) {
	v := *k
	if s.cfg.MaskCredentials {
		masked, err := quarry.MaskJSON(k.CredentialJSON)
		if err != nil {
			return nil, fmt.Errorf("credential %d: %w", k.ID, err)
		}
		v.CredentialJSON = masked
	}
	return &v, nil
}

// writeCredential writes k, masked, with its ETag.
func (s *Server) writeCredential(w http.ResponseWriter, k *quarry.Credential) error {
	v, err := s.credentialView(k)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(k.Version))
	return writeJSON(w, http.StatusOK, v)
}

// credentialObject decodes a credential_json the decoder has checked to be
// a JSON object.
func credentialObject(raw []byte) (map[string]any, error) {
	m, err := quarry.DecodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding credential_json: %w", err)
	}
	return m, nil
}

// handleUpdateCredential serves PATCH /manage/credential/{credential_id}
// (contract section 4.3).
func (s *Server) handleUpdateCredential(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateCredentialRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	u := quarry.CredentialUpdate{
		AdminPublic:   value(b.AdminPublic),
		Name:          nullable(b.Name),
		CuratorPublic: value(b.CuratorPublic),
		Groups:        value(b.Groups),
		Source:        value(b.Source),
		IfMatch:       ifMatch(r),
		KeepEchoes:    s.cfg.MaskCredentials,
	}
	if b.CredentialJSON.Set() {
		obj, err := credentialObject(b.CredentialJSON.Value)
		if err != nil {
			return err
		}
		u.CredentialJSON = obj
	}
	k, err := s.db.UpdateCredential(r.Context(), c, in.ID, u)
	if err != nil {
		return err
	}
	return s.writeCredential(w, k)
}

// handleEditCredential serves PUT /manage/admin/credential/{credential_id}:
// Onyx's way to change a credential's name and credential_json, under the
// rules of the PATCH (contract section 4.3), masked echoes included.
func (s *Server) handleEditCredential(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in editCredentialRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	obj, err := credentialObject(in.Body.CredentialJSON)
	if err != nil {
		return err
	}
	name := &in.Body.Name
	k, err := s.db.UpdateCredential(r.Context(), c, in.ID,
		quarry.CredentialUpdate{CredentialJSON: obj, Name: &name, IfMatch: ifMatch(r), KeepEchoes: s.cfg.MaskCredentials})
	if err != nil {
		return err
	}
	return s.writeCredential(w, k)
}

// handleCreateCredential serves POST /manage/credential.
func (s *Server) handleCreateCredential(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createCredentialRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	obj, err := credentialObject(in.Body.CredentialJSON)
	if err != nil {
		return err
	}
	k, err := s.db.CreateCredential(r.Context(), c, quarry.CredentialInput{
		Name:           value(in.Body.Name),
		Source:         in.Body.Source,
		CredentialJSON: obj,
		AdminPublic:    in.Body.AdminPublic,
		CuratorPublic:  in.Body.CuratorPublic,
		Groups:         in.Body.Groups,
	})
	if err != nil {
		return err
	}
	v, err := s.credentialView(k)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(k.Version))
	return writeJSON(w, http.StatusOK, struct {
		ID         int64              `json:"id"`
		Credential *quarry.Credential `json:"credential"`
	}{k.ID, v})
}

// handleListCredentials serves GET /manage/credential.
func (s *Server) handleListCredentials(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ks, err := s.db.Credentials(r.Context(), c)
	if err != nil {
		return err
	}
	out := make([]*quarry.Credential, len(ks))
	for i, k := range ks {
		if out[i], err = s.credentialView(k); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleGetCredential serves GET /manage/credential/{credential_id}.
func (s *Server) handleGetCredential(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getCredentialRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	k, err := s.db.Credential(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return s.writeCredential(w, k)
}

// handleDeleteCredential serves DELETE /manage/credential/{credential_id}.
func (s *Server) handleDeleteCredential(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteCredentialRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteCredential(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, statusResponse{true, "Credential deleted successfully", in.ID})
}
