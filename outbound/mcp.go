package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/toolrun"
)

// MCP servers as sources of tools: the credentials a call is made with
// (the admin's or the person's values for the server's header template,
// an OAuth token, or the person's single sign-on token), the listing of a
// server's tools (and the tool rows made of them), a person's values
// checked against the server, and the run of a tool, within RunTool's one
// path.

// runMCPTool does the work of RunTool for a tool of an MCP server, noting
// in rec the host it calls. It returns the outcome of a run it refused
// before calling, or of a result marked as an error, or "" to let the
// answer or the call's error decide.
func (s *Service) runMCPTool(ctx context.Context, c *quarry.Caller, t *quarry.Tool, in RunRequest, rec *quarry.ToolRunRecord) (*quarry.ToolRunResult, string, error) {
	if rec.Method == "" {
		rec.Method = t.Name
	}
	dctx, cancel := s.dbContext(ctx)
	m, err := s.db.MCPServer(dctx, *t.MCPServerID)
	cancel()
	if err != nil {
		return nil, quarry.RunError, err
	}
	rec.Host = hostOf(m.ServerURL)
	if err := c.CheckMCPToolRun(t, m); err != nil {
		return nil, refusedOutcome(err), err
	}
	if in.Method != "" && in.Method != t.Name {
		return nil, quarry.RunInvalid, quarry.Errorf(quarry.EINVALID, "Unknown method %q: this tool of the MCP server %s has one method, %q", in.Method, m.Name, t.Name)
	}
	if err := checkMCPArgs(t, in.Args); err != nil {
		return nil, quarry.RunInvalid, err
	}
	target, err := s.mcpTarget(ctx, m, c, in.Authorization)
	switch quarry.ErrorCode(err) {
	case "":
	case quarry.ECONFLICT:
		return nil, quarry.RunNoToken, err
	default:
		return nil, "", err
	}
	res, err := s.runner.MCPCallTool(ctx, target, t.Name, in.Args)
	if err != nil {
		return nil, mcpOutcome(err), mcpError(m, err)
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
func mcpOutcome(err error) string {
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
func mcpError(m *quarry.MCPServer, err error) error {
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
func checkMCPArgs(t *quarry.Tool, args json.RawMessage) error {
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
func (s *Service) mcpTarget(ctx context.Context, m *quarry.MCPServer, c *quarry.Caller, authz string) (toolrun.MCPTarget, error) {
	t := toolrun.MCPTarget{URL: m.ServerURL, SSE: m.Transport != nil && *m.Transport == quarry.MCPSSE}
	if tpl := m.Template(); tpl != nil {
		subs := map[string]string{}
		if m.PerUser() {
			dctx, cancel := s.dbContext(ctx)
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
func (s *Service) refreshMCPToken(ctx context.Context, m *quarry.MCPServer, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
	client := m.OAuthClient()
	if client.TokenEndpoint == "" {
		return quarry.OAuthToken{}, quarry.ErrTokenRevoked
	}
	rctx, cancel := s.callContext(ctx)
	defer cancel()
	next, err := auth.MCPRefresh(rctx, s.runner.Client(), client.OAuthConfig(m.Name, m.AdditionalAuthParams, false), tok, client.Resource)
	return next, s.runner.Explain(ctx, hostOf(client.TokenEndpoint), err)
}

// CanAuthenticate reports whether c's calls to m would carry the
// credentials m needs (Onyx's user_can_authenticate): creds and tokens
// are the servers c gave values for and has a token for (the shared
// tokens too).
func (s *Service) CanAuthenticate(m *quarry.MCPServer, c *quarry.Caller, creds, tokens map[int64]bool) bool {
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
		return s.oidc != nil && (c.SessionID != 0 || (c.APIKeyID == 0 && c.PATID == 0))
	case m.Auth() == quarry.MCPAuthAPIToken && !m.PerUser():
		return m.Config.APIToken != ""
	}
	return true
}

// ListMCPTools lists server m's tools with c's credentials (for an admin
// of a server with per-person credentials, their own; authz is the
// request's Authorization header), and, when sync, makes its tool rows
// those tools. A server that refuses, or cannot be reached, leaves it
// AWAITING_AUTH. The descriptions are truncated as Onyx shows them.
func (s *Service) ListMCPTools(ctx context.Context, c *quarry.Caller, authz string, m *quarry.MCPServer, sync bool) ([]*mcp.Tool, error) {
	if !m.Configured() {
		return nil, quarry.Errorf(quarry.EINVALID, "MCP server transport is not configured")
	}
	if *m.Transport == quarry.MCPStdio {
		return nil, quarry.Errorf(quarry.EINVALID, "The STDIO transport is not supported: Quarry connects to MCP servers over HTTP")
	}
	target, err := s.mcpTarget(ctx, m, c, authz)
	if err != nil {
		return nil, err
	}
	tools, err := s.runner.MCPListTools(ctx, target)
	if err != nil {
		if sync {
			s.db.MarkMCPListingFailed(context.WithoutCancel(ctx), m.ID)
		}
		return nil, mcpError(m, err)
	}
	if sync {
		infos := make([]quarry.MCPToolInfo, 0, len(tools))
		for _, t := range tools {
			infos = append(infos, mcpToolInfo(t))
		}
		if _, err := s.db.SyncMCPTools(ctx, c, m.ID, infos); err != nil {
			return nil, err
		}
	}
	for _, t := range tools {
		t.Description = quarry.TruncateDescription(t.Description)
	}
	return tools, nil
}

// mcpToolInfo returns what Quarry keeps of a tool a server lists: its
// display name is its title, or its annotations' title, or its name (as
// Onyx).
func mcpToolInfo(t *mcp.Tool) quarry.MCPToolInfo {
	display := t.Title
	if display == "" && t.Annotations != nil {
		display = t.Annotations.Title
	}
	if display == "" {
		display = t.Name
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	return quarry.MCPToolInfo{Name: t.Name, DisplayName: display, Description: t.Description, InputSchema: schema}
}

// MCPCredentials is what a person gives for a server's header template
// (Onyx's MCPUserCredentialsRequest, decoded): their values, and the
// transport to check them with. Authorization is the request's
// Authorization header.
type MCPCredentials struct {
	ServerID      int64
	Credentials   map[string]string
	Transport     string
	Authorization string
}

// MCPCredentialsSaved says what SaveMCPCredentials did: the server, whether
// the values were checked against it and how many tools it listed then,
// and whether the person's calls now carry what the server needs.
type MCPCredentialsSaved struct {
	Server        *quarry.MCPServer
	Tested        bool
	ToolCount     int
	Authenticated bool
}

// SaveMCPCredentials keeps a person's values for a server's header
// template (POST /mcp/user-credentials). They are checked first, by
// listing the server's tools with them (unless the server uses OAuth,
// whose token comes later), and kept only if that works.
func (s *Service) SaveMCPCredentials(ctx context.Context, c *quarry.Caller, in MCPCredentials) (*MCPCredentialsSaved, error) {
	m, err := s.db.MCPServer(ctx, in.ServerID)
	if err != nil {
		return nil, err
	}
	tpl := m.Template()
	if tpl == nil || !m.PerUser() {
		if !(m.Auth() == quarry.MCPAuthAPIToken && m.PerUser() && in.Credentials[quarry.APIKeyPlaceholder] != "") {
			return nil, quarry.Errorf(quarry.EINVALID, "This MCP server has no user-configurable header template.")
		}
		tpl = quarry.DefaultAPITokenTemplate()
	}
	creds := maps.Clone(in.Credentials)
	if _, err := tpl.Render(creds, c.Email); err != nil {
		return nil, err
	}
	transport := strings.ToUpper(strings.ReplaceAll(in.Transport, "-", "_"))
	if !slices.Contains(quarry.MCPTransport("").EnumValues(), transport) {
		return nil, quarry.Errorf(quarry.EINVALID, "transport must be one of STREAMABLE_HTTP or SSE")
	}
	out := &MCPCredentialsSaved{Server: m}
	if m.Auth() != quarry.MCPAuthOAuth {
		check := *m
		check.Config.HeaderTemplate = tpl.Headers
		tr := quarry.MCPTransport(transport)
		check.Transport = &tr
		target, err := s.mcpTargetWith(ctx, &check, c, in.Authorization, creds)
		if err != nil {
			return nil, err
		}
		tools, err := s.runner.MCPListTools(ctx, target)
		if err != nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Credentials validation failed: Connection failed: %s", validationReason(err))
		}
		out.Tested, out.ToolCount = true, len(tools)
	}
	if err := s.db.SaveMCPCredentials(ctx, c, m.ID, creds); err != nil {
		return nil, err
	}
	has, tokens, err := s.db.MCPConnections(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	out.Authenticated = s.CanAuthenticate(m, c, has, tokens)
	return out, nil
}

// validationReason says why a check of credentials failed, in words the
// person can act on (never the credentials).
func validationReason(err error) string {
	var ue *toolrun.MCPUnauthorizedError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	return quarry.ErrorMessage(err)
}

// mcpTargetWith is mcpTarget with creds as the person's values.
func (s *Service) mcpTargetWith(ctx context.Context, m *quarry.MCPServer, c *quarry.Caller, authz string, creds map[string]string) (toolrun.MCPTarget, error) {
	t := toolrun.MCPTarget{URL: m.ServerURL, SSE: m.Transport != nil && *m.Transport == quarry.MCPSSE}
	headers, err := m.Template().Render(creds, c.Email)
	if err != nil {
		return t, err
	}
	t.Headers, t.Values = headers, slices.Collect(maps.Values(creds))
	if m.Auth() == quarry.MCPAuthPTOAuth {
		tok, err := s.passthroughToken(ctx, c, authz)
		if err != nil {
			return t, err
		}
		t.Bearer = tok
	}
	return t, nil
}
