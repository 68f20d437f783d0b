package quarry

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// MCP servers as sources of tools, with Onyx's shapes
// (onyx/server/features/mcp at v4.6.1): an admin or a curator registers a
// server, says how Quarry authenticates at it, and lists its tools, which
// become tool rows with MCPServerID set; runs of those tools call the
// server's tools/call with the admin's credentials or the person's own.
// Package toolrun speaks the protocol; package store keeps the secrets.

// MCPTransport is how Quarry talks to an MCP server (Onyx's MCPTransport).
type MCPTransport string

// The transports. STDIO is Onyx's value for a local process, which Onyx
// does not support either; Quarry refuses it (400), since it connects to
// servers over HTTP only.
const (
	MCPStdio          MCPTransport = "STDIO"
	MCPSSE            MCPTransport = "SSE"
	MCPStreamableHTTP MCPTransport = "STREAMABLE_HTTP"
)

// EnumValues returns every MCPTransport, in Onyx's order.
func (MCPTransport) EnumValues() []string { return []string{"STDIO", "SSE", "STREAMABLE_HTTP"} }

// MCPAuthType says how Quarry authenticates at an MCP server (Onyx's
// MCPAuthenticationType).
type MCPAuthType string

// The authentication types.
const (
	MCPAuthNone     MCPAuthType = "NONE"      // No credentials (header templates may still add headers).
	MCPAuthAPIToken MCPAuthType = "API_TOKEN" // Headers rendered from a template: the admin's token, or each person's.
	MCPAuthOAuth    MCPAuthType = "OAUTH"     // An OAuth access token: the admin's, shared, or each person's.
	MCPAuthPTOAuth  MCPAuthType = "PT_OAUTH"  // The person's own single sign-on access token, passed through.
)

// EnumValues returns every MCPAuthType, in Onyx's order.
func (MCPAuthType) EnumValues() []string { return []string{"NONE", "API_TOKEN", "OAUTH", "PT_OAUTH"} }

// MCPPerformer says whose credentials a server is called with (Onyx's
// MCPAuthenticationPerformer).
type MCPPerformer string

// The performers.
const (
	MCPPerformerAdmin   MCPPerformer = "ADMIN"    // The admin's, for everyone.
	MCPPerformerPerUser MCPPerformer = "PER_USER" // Each person's own.
)

// EnumValues returns every MCPPerformer.
func (MCPPerformer) EnumValues() []string { return []string{"ADMIN", "PER_USER"} }

// MCPProviderMode says where Quarry learns a server's OAuth endpoints
// (Onyx's MCPOAuthProviderMode).
type MCPProviderMode string

// The provider modes.
const (
	MCPAutoDiscovery MCPProviderMode = "AUTO_DISCOVERY" // From the server's protected resource metadata (RFC 9728) and its authorization server's (RFC 8414).
	MCPKnownProvider MCPProviderMode = "KNOWN_PROVIDER" // From the admin: oauth_authorization_endpoint and oauth_token_endpoint.
)

// EnumValues returns every MCPProviderMode.
func (MCPProviderMode) EnumValues() []string { return []string{"AUTO_DISCOVERY", "KNOWN_PROVIDER"} }

// MCPServerStatus is where a server is in its set-up (Onyx's
// MCPServerStatus).
type MCPServerStatus string

// The statuses.
const (
	MCPCreated       MCPServerStatus = "CREATED"        // Registered; its authentication is not configured.
	MCPAwaitingAuth  MCPServerStatus = "AWAITING_AUTH"  // Configured; waiting for someone to authenticate, or its tools could not be listed.
	MCPFetchingTools MCPServerStatus = "FETCHING_TOOLS" // Onyx's; Quarry lists tools within one request and never stores it.
	MCPConnected     MCPServerStatus = "CONNECTED"      // Its tools were listed.
	MCPDisconnected  MCPServerStatus = "DISCONNECTED"   // Set by an admin: kept, its tools not offered.
)

// EnumValues returns every MCPServerStatus, in Onyx's order.
func (MCPServerStatus) EnumValues() []string {
	return []string{"CREATED", "AWAITING_AUTH", "FETCHING_TOOLS", "CONNECTED", "DISCONNECTED"}
}

// MCPServer is an MCP server registered as a source of tools.
type MCPServer struct {
	ID          int64
	Name        string
	Description *string
	ServerURL   string
	OwnerID     *string // The person who registered it; nil once they are gone.
	OwnerEmail  string
	Transport   *MCPTransport // nil until its authentication is configured.
	AuthType    *MCPAuthType
	Performer   *MCPPerformer
	// The OAuth provider: where its endpoints come from, and, for a known
	// provider, the admin's endpoints, scopes and extra parameters.
	ProviderMode          MCPProviderMode
	AuthorizationEndpoint *string
	TokenEndpoint         *string
	ScopesOverride        []string // nil: none.
	AdditionalAuthParams  map[string]string
	Status                MCPServerStatus
	LastRefreshedAt       *Time
	Config                MCPConfig // Secrets: sealed at rest, never answered in clear.
	ToolCount             int
	Version               int64
	CreatedAt             Time
	UpdatedAt             Time
}

// MCPConfig holds a server's secrets and what Quarry learned of its
// authorization server. It is sealed at rest as one value.
type MCPConfig struct {
	// APIToken is the admin's token of an API_TOKEN server called with the
	// admin's credentials: the template's {api_key}.
	APIToken string `json:"api_token,omitempty"`
	// HeaderTemplate maps header names to values with {placeholders}
	// (Onyx's auth_template.headers). Values without a placeholder are
	// secrets too.
	HeaderTemplate map[string]string `json:"header_template,omitempty"`
	// AdminCredentials are the admin's values for the template's other
	// placeholders (Onyx's admin_credentials).
	AdminCredentials map[string]string `json:"admin_credentials,omitempty"`
	// OAuth is the OAuth client Quarry is at the server's authorization
	// server, and where that server is; nil until known.
	OAuth *MCPOAuthClient `json:"oauth,omitempty"`
}

// MCPOAuthClient is Quarry's client at an MCP server's authorization
// server: given by the admin, or registered by Quarry (RFC 7591), with
// the endpoints it was discovered at (RFC 9728, RFC 8414) or given.
type MCPOAuthClient struct {
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// Registered says that Quarry registered the client itself (dynamic
	// client registration), for RedirectURI.
	Registered            bool     `json:"registered,omitempty"`
	RedirectURI           string   `json:"redirect_uri,omitempty"`
	Issuer                string   `json:"issuer,omitempty"`
	AuthorizationEndpoint string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint         string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint  string   `json:"registration_endpoint,omitempty"`
	Scopes                []string `json:"scopes,omitempty"`
	// Resource is the server's canonical URI (RFC 8707), sent with the
	// authorization request and the code's exchange.
	Resource string `json:"resource,omitempty"`
}

// Discovered reports whether c knows the endpoints a connection needs.
func (c *MCPOAuthClient) Discovered() bool {
	return c != nil && c.AuthorizationEndpoint != "" && c.TokenEndpoint != ""
}

// OAuthConfig returns c as an OAuth configuration named name, so that the
// tool runtime's authorization code flow and refreshes serve MCP servers
// too, with params in the authorization request and, with resource, the
// server as its resource (RFC 8707).
func (c *MCPOAuthClient) OAuthConfig(name string, params map[string]string, resource bool) *OAuthConfig {
	all := map[string]string{}
	maps.Copy(all, params)
	if resource && c.Resource != "" {
		all["resource"] = c.Resource
	}
	return &OAuthConfig{Name: name, AuthorizationURL: c.AuthorizationEndpoint, TokenURL: c.TokenEndpoint,
		ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: slices.Clone(c.Scopes), AdditionalParams: all}
}

// Configured reports whether s's authentication has been configured (a
// server made by the simple create has none yet).
func (s *MCPServer) Configured() bool { return s.AuthType != nil && s.Transport != nil }

// Auth returns s's authentication type, NONE when unset.
func (s *MCPServer) Auth() MCPAuthType {
	if s.AuthType == nil {
		return MCPAuthNone
	}
	return *s.AuthType
}

// PerUser reports whether each person authenticates at s with their own
// credentials.
func (s *MCPServer) PerUser() bool {
	return s.Performer != nil && *s.Performer == MCPPerformerPerUser
}

// RequiresUserAuth reports whether people need credentials of their own
// to use s (Onyx's requires_user_authentication): not for NONE, nor when
// the admin's credentials serve everyone.
func (s *MCPServer) RequiresUserAuth() bool {
	switch {
	case s.Auth() == MCPAuthNone:
		return false
	case s.Auth() == MCPAuthPTOAuth:
		return true
	}
	return s.PerUser()
}

// SharedOAuth reports whether s is called with one OAuth token that an
// admin connected for everyone.
func (s *MCPServer) SharedOAuth() bool { return s.Auth() == MCPAuthOAuth && !s.PerUser() }

// Template returns s's header template and the fields people (or the
// admin) must supply, or nil when it has none.
func (s *MCPServer) Template() *MCPAuthTemplate {
	if len(s.Config.HeaderTemplate) == 0 {
		if s.Auth() == MCPAuthAPIToken && !s.PerUser() {
			return DefaultAPITokenTemplate()
		}
		return nil
	}
	return NewMCPAuthTemplate(s.Config.HeaderTemplate)
}

// OAuthClient returns the OAuth client s is called through: the admin's
// known provider endpoints over what was discovered.
func (s *MCPServer) OAuthClient() *MCPOAuthClient {
	c := MCPOAuthClient{}
	if s.Config.OAuth != nil {
		c = *s.Config.OAuth
	}
	if s.ProviderMode == MCPKnownProvider {
		if s.AuthorizationEndpoint != nil {
			c.AuthorizationEndpoint = *s.AuthorizationEndpoint
		}
		if s.TokenEndpoint != nil {
			c.TokenEndpoint = *s.TokenEndpoint
		}
		if s.ScopesOverride != nil {
			c.Scopes = slices.Clone(s.ScopesOverride)
		}
	}
	if c.Resource == "" {
		c.Resource = s.ServerURL
	}
	return &c
}

// CanEditMCPServer reports whether c may change s, list and sync its
// tools, or delete it: those who manage actions (admins, holders of
// manage:actions) any server, curators those they registered (Onyx's
// _ensure_mcp_server_owner_or_admin: MCP servers are actions).
func (c *Caller) CanEditMCPServer(s *MCPServer) bool {
	return c.ManagesActions() || (c.IsCurator() && s.OwnerID != nil && *s.OwnerID == c.ID)
}

// ErrNotYourMCPServer answers a curator's change of a server someone else
// registered, in Onyx's words.
var ErrNotYourMCPServer = Errorf(EFORBIDDEN, "Curators can only modify MCP servers that they have created.")

// CheckEditMCPServer reports why c may not change s (see
// CanEditMCPServer).
func (c *Caller) CheckEditMCPServer(s *MCPServer) error {
	if !c.CanEditMCPServer(s) {
		return ErrNotYourMCPServer
	}
	return nil
}

// CanSeeMCPServerDetails reports whether c may see s's URL and owner:
// its owner and those who manage actions (Onyx hides both from the
// others).
func (c *Caller) CanSeeMCPServerDetails(s *MCPServer) bool {
	return c.ManagesActions() || (s.OwnerID != nil && *s.OwnerID == c.ID)
}

// CheckMCPAccessLists refuses what Onyx's Enterprise Edition offers and
// Quarry does not: servers restricted to people or groups. Every person
// with basic access may use every server's enabled tools, as with custom
// tools.
func CheckMCPAccessLists(isPublic *bool, groups []int64, users []string) error {
	if (isPublic != nil && !*isPublic) || len(groups) > 0 || len(users) > 0 {
		return Errorf(EINVALID, "Restricting MCP servers to specific users or groups is not supported: every person with basic access may use the enabled tools of every server")
	}
	return nil
}

// CheckMCPCraft refuses what only Onyx's Craft agent uses: a server
// available in Craft, and tool policies (which tools Craft may run without
// approval); the flags say whether a change asks for them.
func CheckMCPCraft(availableInCraft, toolPolicies bool) error {
	switch {
	case availableInCraft:
		return Errorf(EINVALID, "available_in_craft is not supported: Quarry has no Craft agent")
	case toolPolicies:
		return Errorf(EINVALID, "tool_policies are not supported: Quarry has no Craft agent to approve tools for")
	}
	return nil
}

// CheckMCPServerURL reports why u cannot be an MCP server's URL: it must
// be an absolute http or https URL with a host, and no user name or
// password (send credentials in headers). Internal addresses are refused
// when it is called (the egress guard), not here.
func CheckMCPServerURL(u string) error {
	p, err := url.Parse(strings.TrimSpace(u))
	switch {
	case u == "" || strings.TrimSpace(u) == "":
		return Errorf(EINVALID, "server_url is required")
	case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "":
		return Errorf(EINVALID, "Invalid server_url: it must be an absolute http:// or https:// URL")
	case p.User != nil:
		return Errorf(EINVALID, "Invalid server_url: it must not contain a user name or password; send credentials in headers")
	case p.Fragment != "":
		return Errorf(EINVALID, "Invalid server_url: it must not contain a fragment (#…)")
	}
	return nil
}

// MCPConnectionStep is what a run of a tool of an MCP server needs from
// the person before it can call the server.
type MCPConnectionStep int

const (
	// MCPReady: the credentials are there (or none are needed).
	MCPReady MCPConnectionStep = iota
	// MCPNeedsCredentials: the person must save their values for the
	// server's header template (POST /mcp/user-credentials).
	MCPNeedsCredentials
	// MCPNeedsOAuth: the person (or, for a shared token, an admin) must
	// connect their account (POST /mcp/oauth/connect).
	MCPNeedsOAuth
)

// ConnectMCPFirst answers a run of a tool of server s (named name) that
// needs a connection the caller has not made: it says what to do. shared
// is for a token an admin connects for everyone.
func ConnectMCPFirst(s *MCPServer, step MCPConnectionStep) *Error {
	switch {
	case step == MCPNeedsCredentials:
		return Errorf(ECONFLICT,
			"This tool calls the MCP server %s with your own credentials, and you have not given them. "+
				"Save them with POST /mcp/user-credentials {\"server_id\": %d, \"credentials\": {...}, \"transport\": %q}, then run it again.",
			s.Name, s.ID, transportOf(s))
	case s.SharedOAuth():
		return Errorf(ECONFLICT,
			"The MCP server %s is called with an OAuth account that an admin connects for everyone, and none is connected. "+
				"An admin or its owner starts with POST /admin/mcp/oauth/connect {\"server_id\": %d, \"return_path\": \"/\", \"include_resource_param\": true} and opens the oauth_url it answers.",
			s.Name, s.ID)
	}
	return Errorf(ECONFLICT,
		"Connect your %s account first: this tool calls its MCP server with your own OAuth token, and you have none. "+
			"Start with POST /mcp/oauth/connect {\"server_id\": %d, \"return_path\": \"/\", \"include_resource_param\": true} and open the oauth_url it answers.",
		s.Name, s.ID)
}

func transportOf(s *MCPServer) MCPTransport {
	if s.Transport == nil {
		return MCPStreamableHTTP
	}
	return *s.Transport
}

// CheckMCPToolRun reports why c may not run a tool of server s: as
// CheckToolRun says for the tool, and a server an admin disconnected
// (409).
func (c *Caller) CheckMCPToolRun(t *Tool, s *MCPServer) error {
	if err := c.CheckToolRun(t); err != nil {
		return err
	}
	switch {
	case s.Status == MCPDisconnected:
		return Errorf(ECONFLICT, "The MCP server %s is disconnected; an admin or its owner can set its status again with PATCH /admin/mcp/server/%d/status", s.Name, s.ID)
	case !s.Configured():
		return Errorf(ECONFLICT, "The MCP server %s has no authentication configured yet; an admin or its owner configures it with POST /admin/mcp/servers/create", s.Name)
	case s.Transport != nil && *s.Transport == MCPStdio:
		return Errorf(ECONFLICT, "The MCP server %s uses the STDIO transport, which Quarry does not support", s.Name)
	}
	return nil
}

// MCPToolDescriptionLimit is the longest tool description Onyx's tool
// listing answers (it cuts longer ones, with "...").
const MCPToolDescriptionLimit = 500

// TruncateDescription cuts d to MCPToolDescriptionLimit characters, the
// last three being "...", as Onyx's listing does.
func TruncateDescription(d string) string {
	r := []rune(d)
	if len(r) <= MCPToolDescriptionLimit {
		return d
	}
	return string(r[:MCPToolDescriptionLimit-3]) + "..."
}

// MCPToolInfo is a tool an MCP server lists: what Quarry keeps of it in
// its tool row.
type MCPToolInfo struct {
	Name        string
	DisplayName string // Its title, its annotations' title, or its name (as Onyx).
	Description string
	InputSchema []byte // JSON.
}

// MCPToolSync is what listing a server's tools changed in its tool rows.
type MCPToolSync struct {
	Created, Updated, Deleted []string // Tool names.
}

// MCPOAuthConnection is a connection to an MCP server's OAuth in
// progress, between POST /mcp/oauth/connect and the callback.
type MCPOAuthConnection struct {
	UserID      string `json:"-"`
	ServerID    int64  `json:"-"`
	Shared      bool   `json:"-"` // The admin connects the server's shared token.
	Verifier    string `json:"verifier"`
	RedirectURI string `json:"redirect_uri"`
	ReturnPath  string `json:"-"`
}

// CheckMCPCallbackCaller reports whether c may finish connection k: only
// the person who started it.
func (c *Caller) CheckMCPCallbackCaller(k *MCPOAuthConnection) error {
	return c.checkConnectionOwner(k.UserID)
}

// MCPStatusAfterListing returns a server's status after its tools were
// listed (err nil) or could not be (Onyx: CONNECTED, or AWAITING_AUTH).
// A disconnected server stays so.
func MCPStatusAfterListing(old MCPServerStatus, err error) MCPServerStatus {
	switch {
	case old == MCPDisconnected:
		return old
	case err == nil:
		return MCPConnected
	}
	return MCPAwaitingAuth
}

// MCPInitialStatus returns the status of a server whose authentication
// was just configured: connected when nobody needs to authenticate, else
// awaiting authentication.
func MCPInitialStatus(s *MCPServer) MCPServerStatus {
	if !s.RequiresUserAuth() && !s.SharedOAuth() {
		return MCPConnected
	}
	return MCPAwaitingAuth
}
