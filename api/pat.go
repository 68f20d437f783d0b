package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Personal access tokens, with Onyx's paths and shapes
// (onyx/server/pat/api.py and models.py at v4.6.1): a person makes, lists
// and revokes tokens of their own, for scripts and MCP clients.

// patRecord is Onyx's TokenResponse; created adds the token, shown once
// (CreatedTokenResponse).
type patRecord struct {
	ID           int64               `json:"id"`
	Name         string              `json:"name"`
	TokenDisplay string              `json:"token_display"`
	CreatedAt    quarry.Time         `json:"created_at"`
	ExpiresAt    *quarry.Time        `json:"expires_at"`
	LastUsedAt   *quarry.Time        `json:"last_used_at"`
	Scopes       []quarry.Permission `json:"scopes"`
}

type patCreated struct {
	patRecord
	Token string `json:"token"`
}

func patView(p *quarry.PAT) patRecord {
	return patRecord{ID: p.ID, Name: p.Name, TokenDisplay: p.Display, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
		LastUsedAt: p.LastUsedAt, Scopes: p.Scopes}
}

// patScopeRecord is Onyx's PatScopeOption.
type patScopeRecord struct {
	Scope       quarry.Permission `json:"scope"`
	GroupLabel  string            `json:"group_label"`
	Label       string            `json:"label"`
	Description string            `json:"description"`
	MinTier     string            `json:"min_tier"`
	Implies     []string          `json:"implies"`
}

// handleCreatePAT serves POST /user/pats: the caller makes a token of
// their own; the answer holds it, this once.
func (s *Server) handleCreatePAT(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createPATRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := c.CheckMakePAT(); err != nil {
		return err
	}
	b := in.Body
	var scopes []quarry.Permission
	if b.Scopes.Set() {
		scopes = b.Scopes.Value
		if scopes == nil {
			scopes = []quarry.Permission{}
		}
	}
	if err := quarry.CheckPATScopes(scopes); err != nil {
		return err
	}
	days := value(b.ExpirationDays)
	if err := quarry.CheckPATDays(days); err != nil {
		return err
	}
	p, token, err := s.db.CreatePAT(r.Context(), c, b.Name, quarry.PATExpiry(s.db.Now(), days), scopes)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, patCreated{patRecord: patView(p), Token: token})
}

// handleListPATs serves GET /user/pats: the caller's tokens that have not
// expired, newest first.
func (s *Server) handleListPATs(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ps, err := s.db.PATs(r.Context(), c.ID)
	if err != nil {
		return err
	}
	out := make([]patRecord, len(ps))
	for i, p := range ps {
		out[i] = patView(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleRevokePAT serves DELETE /user/pats/{token_id}: the token stops at
// once.
func (s *Server) handleRevokePAT(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in revokePATRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RevokePAT(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, messageAnswer{"Token deleted successfully"})
}

// handlePATScopes serves GET /user/pats/scopes: the scopes a token may
// have, with what each implies.
func (s *Server) handlePATScopes(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	out := make([]patScopeRecord, len(quarry.PATScopes))
	for i, o := range quarry.PATScopes {
		out[i] = patScopeRecord{Scope: o.Scope, GroupLabel: o.GroupLabel, Label: o.Label, Description: o.Description,
			MinTier: o.MinTier, Implies: quarry.PATScopeImplies(o.Scope)}
	}
	return writeJSON(w, http.StatusOK, out)
}
