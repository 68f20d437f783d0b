package api

import (
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/outbound"
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

// handleCreateMCPServerSimple serves POST /admin/mcp/server: it registers
// a server whose authentication is configured later.
func (s *Server) handleCreateMCPServerSimple(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createMCPServerSimpleRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if err := quarry.CheckMCPServerURL(b.ServerURL); err != nil {
		return err
	}
	if err := quarry.CheckMCPAccessLists(&b.IsPublic, b.Groups, b.Users); err != nil {
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
	var in setUpMCPServerRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if err := quarry.CheckMCPAccessLists(value(b.IsPublic), b.Groups.Value, b.Users.Value); err != nil {
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
	return s.db.EditableMCPServer(r.Context(), c, in.ID)
}

// handleUpdateMCPServerSimple serves PATCH /admin/mcp/server/{server_id}.
func (s *Server) handleUpdateMCPServerSimple(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateMCPServerSimpleRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	if err := quarry.CheckMCPAccessLists(value(b.IsPublic), b.Groups.Value, b.Users.Value); err != nil {
		return err
	}
	if err := quarry.CheckMCPCraft(b.AvailableInCraft.Set() && b.AvailableInCraft.Value,
		b.ToolPolicies.Set() && string(b.ToolPolicies.Value) != "{}"); err != nil {
		return err
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
	can := s.out.CanAuthenticate(m, c, creds, tokens)
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
			can := s.out.CanAuthenticate(m, c, creds, tokens)
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

// handleListMCPToolsAdmin serves GET /admin/mcp/server/{server_id}/tools:
// it lists the server's tools and makes its tool rows those tools (new
// ones disabled until enabled).
func (s *Server) handleListMCPToolsAdmin(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	m, err := s.editableMCPServer(r, c)
	if err != nil {
		return err
	}
	tools, err := s.out.ListMCPTools(r.Context(), c, r.Header.Get("Authorization"), m, true)
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
	tools, err := s.out.ListMCPTools(r.Context(), c, r.Header.Get("Authorization"), m, false)
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
	m, err := s.db.EditableMCPServer(ctx, c, in.ID)
	if err != nil {
		return err
	}
	if in.Source == "mcp" {
		if _, err := s.out.ListMCPTools(ctx, c, r.Header.Get("Authorization"), m, true); err != nil {
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
	var in selectMCPToolsRequest
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
// gives their values for a server's header template
// (outbound.Service.SaveMCPCredentials checks and keeps them).
func (s *Server) handleSaveMCPCredentials(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in saveMCPCredentialsRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	saved, err := s.out.SaveMCPCredentials(r.Context(), c, outbound.MCPCredentials{ServerID: b.ServerID, Credentials: b.Credentials,
		Transport: b.Transport, Authorization: r.Header.Get("Authorization")})
	if err != nil {
		return err
	}
	m := saved.Server
	answer := mcpCredentialsAnswer{Success: true, Message: "Credentials saved successfully", ServerID: m.ID, ServerName: m.Name,
		Authenticated: saved.Authenticated, ValidationTested: saved.Tested}
	if saved.Tested {
		answer.Message = "Credentials saved and validated successfully. Successfully connected. Found " + strconv.Itoa(saved.ToolCount) + " tools."
	}
	return writeJSON(w, http.StatusOK, answer)
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
