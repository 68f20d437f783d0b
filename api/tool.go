package api

import (
	"encoding/json"
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/tooldef"
)

// toolRecord is the wire shape of a tool (interface.md 2.4), in Onyx's key
// order, every key always present.
type toolRecord struct {
	ID                      int64           `json:"id"`
	Name                    string          `json:"name"`
	Description             string          `json:"description"`
	Definition              json.RawMessage `json:"definition"`
	DisplayName             string          `json:"display_name"`
	InCodeToolID            *string         `json:"in_code_tool_id"`
	CustomHeaders           []quarry.Header `json:"custom_headers"`
	PassthroughAuth         bool            `json:"passthrough_auth"`
	MCPServerID             *int64          `json:"mcp_server_id"`
	UserID                  *string         `json:"user_id"`
	OAuthConfigID           *int64          `json:"oauth_config_id"`
	OAuthConfigName         *string         `json:"oauth_config_name"`
	Enabled                 bool            `json:"enabled"`
	ChatSelectable          bool            `json:"chat_selectable"`
	AgentCreationSelectable bool            `json:"agent_creation_selectable"`
	DefaultEnabled          bool            `json:"default_enabled"`
}

// toolView returns what a response shows of t: header values masked unless
// masking is off, an unset description as "", and the name as display name
// when none is set.
func (s *Server) toolView(t *quarry.Tool) toolRecord {
	rec := toolRecord{
		ID:                      t.ID,
		Name:                    t.Name,
		Definition:              t.Definition,
		DisplayName:             t.Name,
		InCodeToolID:            t.InCodeToolID,
		CustomHeaders:           t.Headers,
		PassthroughAuth:         t.PassthroughAuth,
		MCPServerID:             t.MCPServerID,
		UserID:                  t.UserID,
		OAuthConfigID:           t.OAuthConfigID,
		OAuthConfigName:         t.OAuthConfigName,
		Enabled:                 t.Enabled,
		ChatSelectable:          t.ChatSelectable,
		AgentCreationSelectable: t.AgentCreationSelectable,
		DefaultEnabled:          t.DefaultEnabled,
	}
	if t.Description != nil {
		rec.Description = *t.Description
	}
	if t.DisplayName != nil {
		rec.DisplayName = *t.DisplayName
	}
	if rec.Definition == nil {
		rec.Definition = json.RawMessage("null")
	}
	if s.cfg.MaskCredentials {
		rec.CustomHeaders = quarry.MaskHeaders(t.Headers)
	}
	if rec.CustomHeaders == nil {
		rec.CustomHeaders = []quarry.Header{}
	}
	return rec
}

// headersOf converts request headers to the domain's.
func headersOf(hs []header) []quarry.Header {
	out := make([]quarry.Header, len(hs))
	for i, h := range hs {
		out[i] = quarry.Header{Key: h.Key, Value: h.Value}
	}
	return out
}

// handleUpdateTool serves PUT /admin/tool/custom/{tool_id} (contract
// section 4.2). Checks 1–4, and that of the headers sent, run here, on the
// tool as read; the store runs 1–4 again, with 5–7, in the transaction
// that writes.
func (s *Server) handleUpdateTool(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateToolRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	t, err := s.db.Tool(r.Context(), in.ID)
	if err != nil {
		return err
	}
	if err := c.CheckToolEdit(t); err != nil {
		return err
	}
	b := in.Body
	u := quarry.ToolUpdate{
		Name:            value(b.Name),
		Description:     nullable(b.Description),
		PassthroughAuth: value(b.PassthroughAuth),
		OAuthConfigID:   nullable(b.OAuthConfigID),
		IfMatch:         ifMatch(r),
	}
	if b.Definition.Set() {
		if _, err := s.out.ValidateDefinition(r.Context(), b.Definition.Value); err != nil {
			return err
		}
		u.Definition = b.Definition.Value
	}
	if b.CustomHeaders.Set() {
		hs := headersOf(b.CustomHeaders.Value)
		if err := quarry.CheckHeaders(hs); err != nil {
			return err
		}
		u.Headers = &hs
	}
	u.KeepEchoes = s.cfg.MaskCredentials
	t, err = s.db.UpdateTool(r.Context(), c, in.ID, u)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(t.Version))
	return writeJSON(w, http.StatusOK, s.toolView(t))
}

// handleCreateTool serves POST /admin/tool/custom.
func (s *Server) handleCreateTool(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createToolRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if _, err := s.out.ValidateDefinition(r.Context(), b.Definition); err != nil {
		return err
	}
	headers := headersOf(b.CustomHeaders.Value)
	if err := quarry.CheckHeaders(headers); err != nil {
		return err
	}
	t, err := s.db.CreateTool(r.Context(), c, quarry.ToolInput{
		Name:            b.Name,
		Description:     value(b.Description),
		Definition:      b.Definition,
		Headers:         headers,
		PassthroughAuth: b.PassthroughAuth,
		OAuthConfigID:   value(b.OAuthConfigID),
	})
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(t.Version))
	return writeJSON(w, http.StatusOK, s.toolView(t))
}

// handleValidateTool serves POST /admin/tool/custom/validate.
func (s *Server) handleValidateTool(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in validateToolRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	methods, err := s.out.ValidateDefinition(r.Context(), in.Body.Definition)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		Methods []tooldef.Method `json:"methods"`
	}{methods})
}

// handleListTools serves GET /tool.
func (s *Server) handleListTools(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ts, err := s.db.Tools(r.Context())
	if err != nil {
		return err
	}
	return s.writeTools(w, ts)
}

// writeTools answers ts, each as GET /tool/{tool_id} shows it.
func (s *Server) writeTools(w http.ResponseWriter, ts []*quarry.Tool) error {
	out := make([]toolRecord, len(ts))
	for i, t := range ts {
		out[i] = s.toolView(t)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleGetTool serves GET /tool/{tool_id}.
func (s *Server) handleGetTool(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getToolRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	t, err := s.db.Tool(r.Context(), in.ID)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(t.Version))
	return writeJSON(w, http.StatusOK, s.toolView(t))
}

// handleDeleteTool serves DELETE /admin/tool/custom/{tool_id}.
func (s *Server) handleDeleteTool(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteToolRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteTool(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleSetToolsEnabled serves PATCH /admin/tool/status: it enables or
// disables tools, and answers as Onyx does.
func (s *Server) handleSetToolsEnabled(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in setToolsEnabledRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ids, err := s.db.SetToolsEnabled(r.Context(), c, in.Body.ToolIDs, in.Body.Enabled)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		UpdatedCount int     `json:"updated_count"`
		ToolIDs      []int64 `json:"tool_ids"`
	}{len(ids), ids})
}

// handleDeleteOAuthConfig serves DELETE /admin/oauth-config/{oauth_config_id}.
func (s *Server) handleDeleteOAuthConfig(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteOAuthConfigRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteOAuthConfig(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}
