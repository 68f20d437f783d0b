package api

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/toolrun"
)

// MCP servers as sources of tools, with Onyx's paths and shapes
// (onyx/server/features/mcp/api.py at v4.6.1): admins and curators
// register servers and configure how Quarry authenticates at them
// (/admin/mcp/…), list their tools, which become tool rows, and pick the
// ones to enable; each person gives their own credentials or connects
// their own account (/mcp/…).

// mcpServerRecord is the wire shape of an MCP server: Onyx's MCPServer,
// every key present.
type mcpServerRecord struct {
	ID                         int64                   `json:"id"`
	Name                       string                  `json:"name"`
	Description                *string                 `json:"description"`
	ServerURL                  string                  `json:"server_url"`
	Owner                      string                  `json:"owner"`
	Transport                  *quarry.MCPTransport    `json:"transport"`
	AuthType                   *quarry.MCPAuthType     `json:"auth_type"`
	AuthPerformer              *quarry.MCPPerformer    `json:"auth_performer"`
	OAuthProviderMode          quarry.MCPProviderMode  `json:"oauth_provider_mode"`
	OAuthAuthorizationEndpoint *string                 `json:"oauth_authorization_endpoint"`
	OAuthTokenEndpoint         *string                 `json:"oauth_token_endpoint"`
	OAuthScopesOverride        []string                `json:"oauth_scopes_override"`
	OAuthAdditionalAuthParams  map[string]string       `json:"oauth_additional_auth_params"`
	UserCanAuthenticate        *bool                   `json:"user_can_authenticate"`
	Status                     quarry.MCPServerStatus  `json:"status"`
	IsPublic                   bool                    `json:"is_public"`
	Groups                     []int64                 `json:"groups"`
	Users                      []string                `json:"users"`
	AvailableInCraft           bool                    `json:"available_in_craft"`
	ToolPolicies               map[string]string       `json:"tool_policies"`
	LastRefreshedAt            *quarry.Time            `json:"last_refreshed_at"`
	ToolCount                  int                     `json:"tool_count"`
	AuthTemplate               *quarry.MCPAuthTemplate `json:"auth_template"`
	UserCredentials            map[string]string       `json:"user_credentials"`
	AdminCredentials           map[string]string       `json:"admin_credentials"`
	CraftConnected             *bool                   `json:"craft_connected"`
}

// mcpView returns what c sees of m, as Onyx's _db_mcp_server_to_api_mcp_server
// shows it: the URL, owner and tool policies to its owner and admins
// only; with details (a server's own page), the template masked and the
// admin's values masked to its owner and admins, and c's own values
// masked; otherwise the fields a template asks for. userCreds are c's
// values for m (nil: none); canAuth whether c's calls would authenticate.
func (s *Server) mcpView(m *quarry.MCPServer, c *quarry.Caller, details bool, userCreds map[string]string, canAuth *bool) mcpServerRecord {
	rec := mcpServerRecord{ID: m.ID, Name: m.Name, Description: m.Description, Transport: m.Transport, AuthType: m.AuthType,
		AuthPerformer: m.Performer, OAuthProviderMode: m.ProviderMode, OAuthAuthorizationEndpoint: m.AuthorizationEndpoint,
		OAuthTokenEndpoint: m.TokenEndpoint, OAuthScopesOverride: m.ScopesOverride, OAuthAdditionalAuthParams: m.AdditionalAuthParams,
		UserCanAuthenticate: canAuth, Status: m.Status, IsPublic: true, Groups: []int64{}, Users: []string{},
		LastRefreshedAt: m.LastRefreshedAt, ToolCount: m.ToolCount}
	owner := c.CanSeeMCPServerDetails(m)
	if owner {
		rec.ServerURL, rec.Owner, rec.ToolPolicies = m.ServerURL, m.OwnerEmail, map[string]string{}
	}
	sharedToken := m.Auth() == quarry.MCPAuthAPIToken && !m.PerUser()
	if tpl := m.Template(); tpl != nil && len(m.Config.HeaderTemplate) > 0 {
		switch {
		case details && owner:
			rec.AuthTemplate = tpl.Masked()
		case !sharedToken:
			rec.AuthTemplate = &quarry.MCPAuthTemplate{Headers: map[string]string{}, RequiredFields: tpl.RequiredFields}
		}
	}
	if details && userCreds != nil {
		rec.UserCredentials = maskValues(userCreds)
	}
	if details && owner {
		switch {
		case sharedToken:
			rec.AdminCredentials = maskValues(m.Config.AdminCredentials)
			rec.AdminCredentials[quarry.APIKeyPlaceholder] = quarry.MaskString(m.Config.APIToken)
		case m.Auth() == quarry.MCPAuthOAuth:
			rec.AdminCredentials = map[string]string{}
			if o := m.Config.OAuth; o != nil && o.ClientID != "" && !o.Registered {
				rec.AdminCredentials["client_id"] = quarry.MaskString(o.ClientID)
				if o.ClientSecret != "" {
					rec.AdminCredentials["client_secret"] = quarry.MaskString(o.ClientSecret)
				}
			}
		}
	}
	if !s.cfg.MaskCredentials && details && owner {
		if rec.AuthTemplate != nil {
			rec.AuthTemplate = quarry.NewMCPAuthTemplate(m.Config.HeaderTemplate)
		}
	}
	return rec
}

// maskValues returns vs with every value masked.
func maskValues(vs map[string]string) map[string]string {
	out := make(map[string]string, len(vs))
	for k, v := range vs {
		out[k] = quarry.MaskString(v)
	}
	return out
}

// mcpServersAnswer is Onyx's MCPServersResponse.
type mcpServersAnswer struct {
	AssistantID *string           `json:"assistant_id"`
	MCPServers  []mcpServerRecord `json:"mcp_servers"`
}

// mcpServerCreated is Onyx's MCPServerCreateResponse.
type mcpServerCreated struct {
	ServerID                     int64                  `json:"server_id"`
	ServerName                   string                 `json:"server_name"`
	ServerURL                    string                 `json:"server_url"`
	AuthType                     quarry.MCPAuthType     `json:"auth_type"`
	AuthPerformer                *quarry.MCPPerformer   `json:"auth_performer"`
	OAuthProviderMode            quarry.MCPProviderMode `json:"oauth_provider_mode"`
	OAuthAuthorizationEndpoint   *string                `json:"oauth_authorization_endpoint"`
	OAuthTokenEndpoint           *string                `json:"oauth_token_endpoint"`
	OAuthScopesOverride          []string               `json:"oauth_scopes_override"`
	OAuthAdditionalAuthParams    map[string]string      `json:"oauth_additional_auth_params"`
	NoUserAuthenticationRequired bool                   `json:"no_user_authentication_required"`
}

// mcpServerUpdated is Onyx's MCPServerUpdateResponse.
type mcpServerUpdated struct {
	ServerID     int64  `json:"server_id"`
	ServerName   string `json:"server_name"`
	UpdatedTools int    `json:"updated_tools"`
}

// mcpToolList is Onyx's MCPToolListResponse: the tools as the server
// describes them (MCP's Tool).
type mcpToolList struct {
	ServerID   int64       `json:"server_id"`
	ServerName string      `json:"server_name"`
	ServerURL  string      `json:"server_url"`
	Tools      []*mcp.Tool `json:"tools"`
}

// mcpToolDescription and mcpServerTools are Onyx's MCPToolDescription and
// ServerToolsResponse (GET /admin/mcp/server/{id}/db-tools).
type mcpToolDescription struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Description string `json:"description"`
}

type mcpServerTools struct {
	ServerID   int64                `json:"server_id"`
	ServerName string               `json:"server_name"`
	ServerURL  string               `json:"server_url"`
	Tools      []mcpToolDescription `json:"tools"`
}

// mcpCredentialsAnswer is Onyx's MCPApiKeyResponse.
type mcpCredentialsAnswer struct {
	Success          bool   `json:"success"`
	Message          string `json:"message"`
	ServerID         int64  `json:"server_id"`
	ServerName       string `json:"server_name"`
	Authenticated    bool   `json:"authenticated"`
	ValidationTested bool   `json:"validation_tested"`
}

// checkAccessLists refuses what Onyx's Enterprise Edition offers and
// Quarry does not: servers restricted to people or groups. Every person
// with basic access may use every server's enabled tools, as with custom
// tools.
func checkAccessLists(isPublic *bool, groups []int64, users []string) error {
	if (isPublic != nil && !*isPublic) || len(groups) > 0 || len(users) > 0 {
		return quarry.Errorf(quarry.EINVALID, "Restricting MCP servers to specific users or groups is not supported: every person with basic access may use the enabled tools of every server")
	}
	return nil
}

// handleCreateMCPServerSimple serves POST /admin/mcp/server: it registers
// a server whose authentication is configured later.
func (s *Server) handleCreateMCPServerSimple(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		Body mcpServerCreate `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if err := quarry.CheckMCPServerURL(b.ServerURL); err != nil {
		return err
	}
	if err := checkAccessLists(&b.IsPublic, b.Groups, b.Users); err != nil {
		return err
	}
	m, err := s.db.CreateMCPServer(r.Context(), c, b.Name, value(b.Description), b.ServerURL)
	if err != nil {
		return err
	}
	no := false
	return writeJSON(w, http.StatusOK, s.mcpView(m, c, false, nil, &no))
}

// handleSetUpMCPServer serves POST /admin/mcp/servers/create: it creates a
// server with its authentication, or, with existing_server_id, configures
// an existing one.
func (s *Server) handleSetUpMCPServer(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		Body mcpServerSetup `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if err := checkAccessLists(value(b.IsPublic), b.Groups.Value, b.Users.Value); err != nil {
		return err
	}
	perf := b.AuthPerformer
	setup := &quarry.MCPServerSetup{Name: b.Name, Description: value(b.Description), ServerURL: b.ServerURL,
		AuthType: b.AuthType, Performer: &perf, Transport: value(b.Transport), APIToken: value(b.APIToken),
		OAuthClientID: value(b.OAuthClientID), OAuthClientSecret: value(b.OAuthClientSecret),
		OAuthClientIDChanged: b.OAuthClientIDChanged, OAuthClientSecretChanged: b.OAuthClientSecretChanged,
		ProviderMode: b.OAuthProviderMode, AuthorizationEndpoint: value(b.OAuthAuthorizationEndpoint),
		TokenEndpoint: value(b.OAuthTokenEndpoint), ScopesOverride: b.OAuthScopesOverride.Value,
		AdditionalAuthParams: b.OAuthAdditionalAuthParams.Value, TemplateChanged: b.AuthTemplateHeadersChanged,
		AdminCredentialsChanged: b.AdminCredentialsChanged}
	if b.AuthTemplate.Set() {
		setup.Template = b.AuthTemplate.Value.Headers
		if setup.Template == nil {
			setup.Template = map[string]string{}
		}
	}
	if b.AdminCredentials.Set() {
		setup.AdminCredentials = b.AdminCredentials.Value
	}
	if err := setup.Check(!b.ExistingServerID.Set()); err != nil {
		return err
	}
	var adminCreds map[string]string
	if perf == quarry.MCPPerformerPerUser && b.AdminCredentials.Set() {
		adminCreds = b.AdminCredentials.Value
	}
	m, err := s.db.SetUpMCPServer(r.Context(), c, value(b.ExistingServerID), setup, adminCreds)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mcpServerCreated{ServerID: m.ID, ServerName: m.Name, ServerURL: m.ServerURL,
		AuthType: m.Auth(), AuthPerformer: m.Performer, OAuthProviderMode: m.ProviderMode,
		OAuthAuthorizationEndpoint: m.AuthorizationEndpoint, OAuthTokenEndpoint: m.TokenEndpoint,
		OAuthScopesOverride: m.ScopesOverride, OAuthAdditionalAuthParams: m.AdditionalAuthParams,
		NoUserAuthenticationRequired: !m.RequiresUserAuth()})
}

// mcpServerID is the path of the routes of one server.
type mcpServerID struct {
	ID int64 `path:"server_id"`
}

// editableMCPServer reads the server of the request's path and checks
// that c may change it.
func (s *Server) editableMCPServer(r *http.Request, c *quarry.Caller) (*quarry.MCPServer, error) {
	var in mcpServerID
	if err := decode.Request(r, &in); err != nil {
		return nil, err
	}
	m, err := s.db.MCPServer(r.Context(), in.ID)
	if err != nil {
		return nil, err
	}
	return m, c.CheckEditMCPServer(m)
}

// handleUpdateMCPServerSimple serves PATCH /admin/mcp/server/{server_id}.
func (s *Server) handleUpdateMCPServerSimple(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		ID   int64          `path:"server_id"`
		Body mcpServerPatch `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if err := checkAccessLists(value(b.IsPublic), b.Groups.Value, b.Users.Value); err != nil {
		return err
	}
	if b.AvailableInCraft.Set() && b.AvailableInCraft.Value {
		return quarry.Errorf(quarry.EINVALID, "available_in_craft is not supported: Quarry has no Craft agent")
	}
	if b.ToolPolicies.Set() && string(b.ToolPolicies.Value) != "{}" {
		return quarry.Errorf(quarry.EINVALID, "tool_policies are not supported: Quarry has no Craft agent to approve tools for")
	}
	if b.ServerURL.Set() {
		if err := quarry.CheckMCPServerURL(b.ServerURL.Value); err != nil {
			return err
		}
	}
	m, err := s.db.UpdateMCPServer(r.Context(), c, in.ID, quarry.MCPServerPatch{Name: value(b.Name), Description: value(b.Description),
		ServerURL: value(b.ServerURL)})
	if err != nil {
		return err
	}
	return s.writeMCPServer(w, r, c, m, false)
}

// writeMCPServer answers m as c sees it.
func (s *Server) writeMCPServer(w http.ResponseWriter, r *http.Request, c *quarry.Caller, m *quarry.MCPServer, details bool) error {
	ctx := r.Context()
	creds, tokens, err := s.db.MCPConnections(ctx, c.ID)
	if err != nil {
		return err
	}
	var mine map[string]string
	if details && creds[m.ID] {
		if mine, err = s.db.MCPCredentials(ctx, m.ID, c.ID); err != nil {
			return err
		}
	}
	can := s.mcpCanAuthenticate(m, c, creds, tokens)
	return writeJSON(w, http.StatusOK, s.mcpView(m, c, details, mine, &can))
}

// handleGetMCPServer serves GET /admin/mcp/servers/{server_id}: a
// server's details, to its owner and admins.
func (s *Server) handleGetMCPServer(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	m, err := s.editableMCPServer(r, c)
	if err != nil {
		return err
	}
	return s.writeMCPServer(w, r, c, m, true)
}

// handleListMCPServers serves GET /admin/mcp/servers (every server, for
// admins and curators) and GET /mcp/servers (the servers a person may
// use: every configured one).
func (s *Server) handleListMCPServers(admin bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		ctx := r.Context()
		ms, err := s.db.MCPServers(ctx)
		if err != nil {
			return err
		}
		creds, tokens, err := s.db.MCPConnections(ctx, c.ID)
		if err != nil {
			return err
		}
		out := mcpServersAnswer{MCPServers: []mcpServerRecord{}}
		for _, m := range ms {
			if !admin && (!m.Configured() || m.Status == quarry.MCPDisconnected) {
				continue
			}
			can := s.mcpCanAuthenticate(m, c, creds, tokens)
			out.MCPServers = append(out.MCPServers, s.mcpView(m, c, false, nil, &can))
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

// handleDeleteMCPServer serves DELETE /admin/mcp/server/{server_id}: the
// server, its tools and what people gave for it.
func (s *Server) handleDeleteMCPServer(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in mcpServerID
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteMCPServer(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// handleSetMCPServerStatus serves PATCH
// /admin/mcp/server/{server_id}/status?status=…
func (s *Server) handleSetMCPServerStatus(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in mcpStatusQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetMCPServerStatus(r.Context(), c, in.ID, in.Status); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, messageAnswer{"Server status updated to " + string(in.Status)})
}

// listMCPTools lists server m's tools with c's credentials (for an admin
// of a server with per-person credentials, their own), and, when sync,
// makes its tool rows those tools. A server that refuses, or cannot be
// reached, leaves it AWAITING_AUTH.
func (s *Server) listMCPTools(ctx context.Context, r *http.Request, c *quarry.Caller, m *quarry.MCPServer, sync bool) ([]*mcp.Tool, error) {
	if !m.Configured() {
		return nil, quarry.Errorf(quarry.EINVALID, "MCP server transport is not configured")
	}
	if *m.Transport == quarry.MCPStdio {
		return nil, quarry.Errorf(quarry.EINVALID, "The STDIO transport is not supported: Quarry connects to MCP servers over HTTP")
	}
	target, err := s.mcpTarget(ctx, m, c, r.Header.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	tools, err := s.runner.MCPListTools(ctx, target)
	if err != nil {
		if sync {
			s.db.MarkMCPListingFailed(context.WithoutCancel(ctx), m.ID)
		}
		return nil, s.mcpError(m, err)
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

// handleListMCPToolsAdmin serves GET /admin/mcp/server/{server_id}/tools:
// it lists the server's tools and makes its tool rows those tools (new
// ones disabled until enabled).
func (s *Server) handleListMCPToolsAdmin(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	m, err := s.editableMCPServer(r, c)
	if err != nil {
		return err
	}
	tools, err := s.listMCPTools(r.Context(), r, c, m, true)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mcpToolList{ServerID: m.ID, ServerName: m.Name, ServerURL: m.ServerURL, Tools: nonNilTools(tools)})
}

// handleListMCPToolsUser serves GET /mcp/server/{server_id}/tools: a
// person lists a server's tools with their own credentials; nothing is
// stored.
func (s *Server) handleListMCPToolsUser(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in mcpServerID
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	m, err := s.db.MCPServer(r.Context(), in.ID)
	if err != nil {
		return err
	}
	tools, err := s.listMCPTools(r.Context(), r, c, m, false)
	if err != nil {
		return err
	}
	url := ""
	if c.CanSeeMCPServerDetails(m) {
		url = m.ServerURL
	}
	return writeJSON(w, http.StatusOK, mcpToolList{ServerID: m.ID, ServerName: m.Name, ServerURL: url, Tools: nonNilTools(tools)})
}

func nonNilTools(ts []*mcp.Tool) []*mcp.Tool {
	if ts == nil {
		return []*mcp.Tool{}
	}
	return ts
}

// handleMCPToolSnapshots serves GET
// /admin/mcp/server/{server_id}/tools/snapshots?source=db|mcp: the
// server's tool rows, after listing its tools again with source=mcp.
func (s *Server) handleMCPToolSnapshots(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in mcpSnapshotsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	m, err := s.db.MCPServer(ctx, in.ID)
	if err != nil {
		return err
	}
	if err := c.CheckEditMCPServer(m); err != nil {
		return err
	}
	if in.Source == "mcp" {
		if _, err := s.listMCPTools(ctx, r, c, m, true); err != nil {
			return err
		}
	}
	ts, err := s.db.MCPToolsOf(ctx, m.ID)
	if err != nil {
		return err
	}
	return s.writeTools(w, ts)
}

// handleMCPDBTools serves GET /admin/mcp/server/{server_id}/db-tools.
func (s *Server) handleMCPDBTools(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	m, err := s.editableMCPServer(r, c)
	if err != nil {
		return err
	}
	ts, err := s.db.MCPToolsOf(r.Context(), m.ID)
	if err != nil {
		return err
	}
	out := mcpServerTools{ServerID: m.ID, ServerName: m.Name, ServerURL: m.ServerURL, Tools: []mcpToolDescription{}}
	for _, t := range ts {
		display := t.Name
		if t.DisplayName != nil && *t.DisplayName != "" {
			display = *t.DisplayName
		}
		desc := ""
		if t.Description != nil {
			desc = *t.Description
		}
		out.Tools = append(out.Tools, mcpToolDescription{ID: t.ID, Name: t.Name, DisplayName: display,
			Description: quarry.TruncateDescription(desc)})
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleAllMCPTools serves GET /admin/mcp/tools: every tool of every
// server, enabled or not.
func (s *Server) handleAllMCPTools(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ts, err := s.db.MCPTools(r.Context())
	if err != nil {
		return err
	}
	return s.writeTools(w, ts)
}

// handleSelectMCPTools serves POST /admin/mcp/servers/update: the tools
// named in selected_tools are enabled, the server's others disabled.
func (s *Server) handleSelectMCPTools(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		Body mcpServerUpdate `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	m, n, err := s.db.SelectMCPTools(r.Context(), c, b.ServerID, value(b.Name), value(b.Description), b.SelectedTools.Value)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mcpServerUpdated{ServerID: m.ID, ServerName: m.Name, UpdatedTools: n})
}

// handleSaveMCPCredentials serves POST /mcp/user-credentials: a person
// gives their values for a server's header template. They are checked
// first, by listing the server's tools with them (unless the server uses
// OAuth, whose token comes later), and kept only if that works.
func (s *Server) handleSaveMCPCredentials(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in struct {
		Body mcpUserCredentials `body:""`
	}
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	ctx := r.Context()
	m, err := s.db.MCPServer(ctx, b.ServerID)
	if err != nil {
		return err
	}
	tpl := m.Template()
	if tpl == nil || !m.PerUser() {
		if !(m.Auth() == quarry.MCPAuthAPIToken && m.PerUser() && b.Credentials[quarry.APIKeyPlaceholder] != "") {
			return quarry.Errorf(quarry.EINVALID, "This MCP server has no user-configurable header template.")
		}
		tpl = quarry.DefaultAPITokenTemplate()
	}
	creds := maps.Clone(b.Credentials)
	if _, err := tpl.Render(creds, c.Email); err != nil {
		return err
	}
	transport := strings.ToUpper(strings.ReplaceAll(b.Transport, "-", "_"))
	if !slices.Contains(quarry.MCPTransport("").EnumValues(), transport) {
		return quarry.Errorf(quarry.EINVALID, "transport must be one of STREAMABLE_HTTP or SSE")
	}
	answer := mcpCredentialsAnswer{Success: true, Message: "Credentials saved successfully", ServerID: m.ID, ServerName: m.Name}
	if m.Auth() != quarry.MCPAuthOAuth {
		check := *m
		check.Config.HeaderTemplate = tpl.Headers
		tr := quarry.MCPTransport(transport)
		check.Transport = &tr
		target, err := s.mcpTargetWith(ctx, &check, c, r.Header.Get("Authorization"), creds)
		if err != nil {
			return err
		}
		tools, err := s.runner.MCPListTools(ctx, target)
		if err != nil {
			return quarry.Errorf(quarry.EINVALID, "Credentials validation failed: Connection failed: %s", validationReason(err))
		}
		answer.ValidationTested = true
		answer.Message = "Credentials saved and validated successfully. Successfully connected. Found " + strconv.Itoa(len(tools)) + " tools."
	}
	if err := s.db.SaveMCPCredentials(ctx, c, m.ID, creds); err != nil {
		return err
	}
	creds2, tokens, err := s.db.MCPConnections(ctx, c.ID)
	if err != nil {
		return err
	}
	answer.Authenticated = s.mcpCanAuthenticate(m, c, creds2, tokens)
	return writeJSON(w, http.StatusOK, answer)
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
func (s *Server) mcpTargetWith(ctx context.Context, m *quarry.MCPServer, c *quarry.Caller, authz string, creds map[string]string) (toolrun.MCPTarget, error) {
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

// handleDeleteMCPCredentials serves DELETE /mcp/user-credentials/{server_id}:
// the person disconnects from a server (their values and their token go).
func (s *Server) handleDeleteMCPCredentials(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in mcpServerID
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	m, err := s.db.MCPServer(ctx, in.ID)
	if err != nil {
		return err
	}
	if err := s.db.DeleteMCPCredentials(ctx, c, m.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mcpCredentialsAnswer{Success: true, Message: "Disconnected", ServerID: m.ID, ServerName: m.Name})
}
