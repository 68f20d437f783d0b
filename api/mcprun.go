package api

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/toolrun"
)

// Running the tools of MCP servers: the credentials a call is made with
// (the admin's or the person's values for the server's header template,
// an OAuth token, or the person's single sign-on token), and the run
// itself, within run's one path (api/toolrun.go).

// runMCPTool does the work of run for a tool of an MCP server, noting in
// rec the host it calls. It returns the outcome of a run it refused
// before calling, or of a result marked as an error, or "" to let the
// answer or the call's error decide.
func (s *Server) runMCPTool(ctx context.Context, c *quarry.Caller, authz string, t *quarry.Tool, in runRequest, rec *quarry.ToolRunRecord) (*quarry.ToolRunResult, string, error) {
	if rec.Method == "" {
		rec.Method = t.Name
	}
	dctx, cancel := context.WithTimeout(ctx, s.cfg.DBTimeout)
	m, err := s.db.MCPServer(dctx, *t.MCPServerID)
	cancel()
	if err != nil {
		return nil, quarry.RunError, err
	}
	rec.Host = hostOf(m.ServerURL)
	if err := c.CheckMCPToolRun(t, m); err != nil {
		if quarry.ErrorCode(err) == quarry.ECONFLICT {
			return nil, quarry.RunDisabled, err
		}
		return nil, quarry.RunInvalid, err
	}
	if in.Method != "" && in.Method != t.Name {
		return nil, quarry.RunInvalid, quarry.Errorf(quarry.EINVALID, "Unknown method %q: this tool of the MCP server %s has one method, %q", in.Method, m.Name, t.Name)
	}
	if err := s.checkMCPArgs(t, in.Args); err != nil {
		return nil, quarry.RunInvalid, err
	}
	target, err := s.mcpTarget(ctx, m, c, authz)
	switch quarry.ErrorCode(err) {
	case "":
	case quarry.ECONFLICT:
		return nil, quarry.RunNoToken, err
	default:
		return nil, "", err
	}
	res, err := s.runner.MCPCallTool(ctx, target, t.Name, in.Args)
	if err != nil {
		return nil, s.mcpOutcome(err), s.mcpError(m, err)
	}
	var result struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res.Body, &result) == nil && result.IsError {
		return res, quarry.RunToolError, nil
	}
	return res, "", nil
}

// mcpOutcome returns the outcome of a call to an MCP server that failed
// with err.
func (s *Server) mcpOutcome(err error) string {
	var ue *toolrun.MCPUnauthorizedError
	var me *toolrun.MCPError
	switch {
	case errors.As(err, &ue), errors.As(err, &me):
		return quarry.RunUpstream4xx
	}
	return ""
}

// mcpError turns the failure of a call to server m into what the caller
// sees: the server's refusal of the credentials is a 409 that says to
// connect again when they are the person's OAuth token, and a 502
// otherwise, as is a JSON-RPC error; the rest are as runs fail.
func (s *Server) mcpError(m *quarry.MCPServer, err error) error {
	var ue *toolrun.MCPUnauthorizedError
	var me *toolrun.MCPError
	switch {
	case errors.As(err, &ue) && m.Auth() == quarry.MCPAuthOAuth:
		e := quarry.ConnectMCPFirst(m, quarry.MCPNeedsOAuth)
		e.Message = "The MCP server " + m.Name + " refused the OAuth token (HTTP " + strconv.Itoa(ue.Status) + "). " + e.Message
		return e
	case errors.As(err, &ue):
		return quarry.Errorf(quarry.EBADGATEWAY, "%s", ue.Error())
	case errors.As(err, &me):
		return quarry.Errorf(quarry.EBADGATEWAY, "%s", me.Error())
	}
	return err
}

// mcpSchemas caches the resolved input schemas of MCP tools, by their
// JSON text.
var mcpSchemas sync.Map // string -> *jsonschema.Resolved (nil: not checkable)

// checkMCPArgs checks args against t's input schema (the one its server
// listed) with JSON Schema, so that a caller (a language model, often)
// learns what is wrong without a call. A schema that cannot be resolved
// checks nothing: the server decides.
func (s *Server) checkMCPArgs(t *quarry.Tool, args json.RawMessage) error {
	if len(t.MCPInputSchema) == 0 {
		return nil
	}
	key := string(t.MCPInputSchema)
	v, ok := mcpSchemas.Load(key)
	if !ok {
		var sch jsonschema.Schema
		var resolved *jsonschema.Resolved
		if json.Unmarshal(t.MCPInputSchema, &sch) == nil {
			if r, err := sch.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false}); err == nil {
				resolved = r
			}
		}
		v, _ = mcpSchemas.LoadOrStore(key, resolved)
	}
	resolved, _ := v.(*jsonschema.Resolved)
	if resolved == nil {
		return nil
	}
	var instance any = map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &instance); err != nil {
			return quarry.Errorf(quarry.EINVALID, "args must be a JSON object")
		}
	}
	if err := resolved.Validate(instance); err != nil {
		return quarry.Errorf(quarry.EINVALID, "The arguments do not fit the input schema of %s: %s", t.Name, quarry.ClipText(err.Error(), 300))
	}
	return nil
}

// mcpTarget returns how server m is called for c: its URL and transport,
// its header template rendered with the admin's values (and token) or
// c's own, and c's email; and the bearer token its authentication needs:
// an OAuth token (c's, or the shared one), refreshed if due, or c's own
// single sign-on token (PT_OAUTH; authz is the request's Authorization
// header). What c has not given yet is a 409 that says what to do.
func (s *Server) mcpTarget(ctx context.Context, m *quarry.MCPServer, c *quarry.Caller, authz string) (toolrun.MCPTarget, error) {
	t := toolrun.MCPTarget{URL: m.ServerURL, SSE: m.Transport != nil && *m.Transport == quarry.MCPSSE}
	if tpl := m.Template(); tpl != nil {
		subs := map[string]string{}
		if m.PerUser() {
			dctx, cancel := context.WithTimeout(ctx, s.cfg.DBTimeout)
			creds, err := s.db.MCPCredentials(dctx, m.ID, c.ID)
			cancel()
			if err != nil {
				return t, err
			}
			subs = creds
		} else {
			for k, v := range m.Config.AdminCredentials {
				subs[k] = v
			}
			if m.Config.APIToken != "" {
				subs[quarry.APIKeyPlaceholder] = m.Config.APIToken
			}
		}
		headers, err := tpl.Render(subs, c.Email)
		switch {
		case err != nil && m.PerUser():
			return t, quarry.ConnectMCPFirst(m, quarry.MCPNeedsCredentials)
		case err != nil:
			return t, quarry.Errorf(quarry.ECONFLICT, "The MCP server %s cannot be called: its header template lacks values its admin must give (%s)", m.Name, quarry.ErrorMessage(err))
		}
		t.Headers = headers
		t.Values = slices.Collect(maps.Values(subs))
	}
	switch m.Auth() {
	case quarry.MCPAuthOAuth:
		user := c.ID
		if m.SharedOAuth() {
			user = store.SharedMCPUser
		}
		tok, err := s.db.MCPToken(ctx, m, user, func(ctx context.Context, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
			return s.refreshMCPToken(ctx, m, tok)
		})
		if err != nil {
			return t, err
		}
		t.Bearer = tok.AccessToken
	case quarry.MCPAuthPTOAuth:
		tok, err := s.passthroughToken(ctx, c, authz)
		if err != nil {
			return t, err
		}
		t.Bearer = tok
	}
	return t, nil
}

// refreshMCPToken refreshes a token for server m at its authorization
// server's token endpoint, through the egress guard.
func (s *Server) refreshMCPToken(ctx context.Context, m *quarry.MCPServer, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
	client := m.OAuthClient()
	if client.TokenEndpoint == "" {
		return quarry.OAuthToken{}, quarry.ErrTokenRevoked
	}
	rctx, cancel := context.WithTimeout(ctx, s.runner.Policy().Timeout)
	defer cancel()
	next, err := auth.MCPRefresh(rctx, s.runner.Client(), client.OAuthConfig(m.Name, m.AdditionalAuthParams, false), tok, client.Resource)
	return next, s.runner.Explain(ctx, hostOf(client.TokenEndpoint), err)
}

// mcpCanAuthenticate reports whether c's calls to m would carry the
// credentials m needs (Onyx's user_can_authenticate): creds and tokens
// are the servers c gave values for and has a token for (the shared
// tokens too).
func (s *Server) mcpCanAuthenticate(m *quarry.MCPServer, c *quarry.Caller, creds, tokens map[int64]bool) bool {
	if !m.Configured() {
		return false
	}
	tpl := m.Template()
	needValues := tpl != nil && len(tpl.RequiredFields) > 0
	switch {
	case m.PerUser() && needValues && !creds[m.ID]:
		return false
	case m.Auth() == quarry.MCPAuthOAuth:
		return tokens[m.ID]
	case m.Auth() == quarry.MCPAuthPTOAuth:
		return s.cfg.SignIn.OIDC != nil && (c.SessionID != 0 || (c.APIKeyID == 0 && c.PATID == 0))
	case m.Auth() == quarry.MCPAuthAPIToken && !m.PerUser():
		return m.Config.APIToken != ""
	}
	return true
}
