package quarry

import (
	"maps"
	"net/url"
	"regexp"
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

// MCPAuthTemplate is a server's header template (Onyx's MCPAuthTemplate):
// header names to values with {placeholders}, and the placeholders
// someone must supply.
type MCPAuthTemplate struct {
	Headers        map[string]string `json:"headers"`
	RequiredFields []string          `json:"required_fields"`
}

// placeholderRE matches a {placeholder} in a header value.
var placeholderRE = regexp.MustCompile(`\{([^}]+)\}`)

// UserEmailPlaceholder is the placeholder Quarry fills in with the email
// of the person a call is made for.
const UserEmailPlaceholder = "user_email"

// APIKeyPlaceholder is the placeholder of an API_TOKEN server's token.
const APIKeyPlaceholder = "api_key"

// NewMCPAuthTemplate returns the template of headers, with the fields its
// placeholders ask for.
func NewMCPAuthTemplate(headers map[string]string) *MCPAuthTemplate {
	return &MCPAuthTemplate{Headers: maps.Clone(headers), RequiredFields: RequiredFields(headers)}
}

// DefaultAPITokenTemplate is the template of an API_TOKEN server called
// with the admin's token when none is given: Authorization: Bearer
// {api_key}, as in Onyx.
func DefaultAPITokenTemplate() *MCPAuthTemplate {
	return NewMCPAuthTemplate(map[string]string{"Authorization": "Bearer {" + APIKeyPlaceholder + "}"})
}

// RequiredFields returns the placeholders of headers' values, sorted,
// without those Quarry fills in itself ({user_email}).
func RequiredFields(headers map[string]string) []string {
	seen := map[string]bool{}
	for _, v := range headers {
		for _, m := range placeholderRE.FindAllStringSubmatch(v, -1) {
			if m[1] != UserEmailPlaceholder {
				seen[m[1]] = true
			}
		}
	}
	out := slices.Sorted(maps.Keys(seen))
	if out == nil {
		out = []string{}
	}
	return out
}

// HasPlaceholder reports whether v holds a {placeholder}.
func HasPlaceholder(v string) bool { return placeholderRE.MatchString(v) }

// CheckTemplateHeaders reports the first header of a template, in name
// order, that cannot be sent: a name that is not an HTTP field name, one
// the HTTP client sets itself (Host, Content-Length...), or a name given
// twice in different cases; or a value with a control character. Onyx
// refuses only Host.
func CheckTemplateHeaders(headers map[string]string) error {
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		lower := strings.ToLower(name)
		switch {
		case !validFieldName(name):
			return Errorf(EINVALID, "Invalid MCP header name: %q", name)
		case clientHeader(name):
			return Errorf(EINVALID, "MCP header %q is not allowed: the HTTP client sets it for each call", name)
		case seen[lower]:
			return Errorf(EINVALID, "Duplicate MCP header name: %q", name)
		case !validFieldValue(headers[name]):
			return Errorf(EINVALID, "The value of MCP header %q is not a valid HTTP header value: it must not contain control characters such as CR or LF", name)
		}
		seen[lower] = true
	}
	return nil
}

// Render returns t's headers with subs and email in place of their
// placeholders (Onyx's render): every required field must have a
// non-empty value, and the rendered values must be sendable (a value
// with a line break would add headers). Messages never show a value.
func (t *MCPAuthTemplate) Render(subs map[string]string, email string) (map[string]string, error) {
	var missing []string
	for _, f := range t.RequiredFields {
		if subs[f] == "" {
			missing = append(missing, f)
		}
	}
	if missing != nil {
		slices.Sort(missing)
		return nil, Errorf(EINVALID, "Missing MCP header substitutions: %s", strings.Join(missing, ", "))
	}
	out := make(map[string]string, len(t.Headers))
	for name, v := range t.Headers {
		v = placeholderRE.ReplaceAllStringFunc(v, func(m string) string {
			key := m[1 : len(m)-1]
			if key == UserEmailPlaceholder {
				return email
			}
			if s, ok := subs[key]; ok {
				return s
			}
			return m
		})
		if !validFieldValue(v) {
			return nil, Errorf(EINVALID, "The value given for MCP header %q is not a valid HTTP header value: it must not contain control characters such as CR or LF", name)
		}
		out[name] = v
	}
	return out, nil
}

// Masked returns t as admins see it: values without a placeholder masked
// (they are secrets, such as a static token), as Onyx does.
func (t *MCPAuthTemplate) Masked() *MCPAuthTemplate {
	out := &MCPAuthTemplate{Headers: map[string]string{}, RequiredFields: slices.Clone(t.RequiredFields)}
	for k, v := range t.Headers {
		if HasPlaceholder(v) {
			out.Headers[k] = v
		} else {
			out.Headers[k] = MaskString(v)
		}
	}
	return out
}

// KeepMaskedTemplate returns the template to store when an admin sends
// incoming over stored: a value unchanged per changed (Onyx's
// auth_template_headers_changed) or equal to the mask of the stored value
// of the same header keeps the stored value, so that a form that shows
// masked values can be saved back.
func KeepMaskedTemplate(stored, incoming map[string]string, changed map[string]bool) map[string]string {
	out := make(map[string]string, len(incoming))
	for k, v := range incoming {
		old, ok := stored[k]
		if ok && !changed[k] && (v == old || v == MaskString(old)) {
			v = old
		}
		out[k] = v
	}
	return out
}

// KeepMaskedValues returns the credentials to store when incoming
// replaces stored, for Onyx's *_changed flags: a key not marked changed,
// or whose value is the mask of the stored one, keeps its stored value.
func KeepMaskedValues(stored, incoming map[string]string, changed map[string]bool) map[string]string {
	out := make(map[string]string, len(incoming))
	for k, v := range incoming {
		if old, ok := stored[k]; ok && (!changed[k] || v == MaskString(old)) {
			v = old
		}
		out[k] = v
	}
	return out
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
	if c.ID != k.UserID {
		return Errorf(EFORBIDDEN, "User mismatch in OAuth callback")
	}
	return nil
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

// MCPServerSetup configures a server's authentication: Onyx's
// MCPToolCreateRequest (POST /admin/mcp/servers/create), for a new server
// or, with an existing one, as an update of it. Nil pointers and maps are
// fields the request did not give.
type MCPServerSetup struct {
	Name        string
	Description *string
	ServerURL   string
	AuthType    MCPAuthType
	Performer   *MCPPerformer
	Transport   *MCPTransport

	APIToken *string // A masked echo of the stored token keeps it.

	OAuthClientID            *string
	OAuthClientSecret        *string
	OAuthClientIDChanged     bool
	OAuthClientSecretChanged bool
	ProviderMode             MCPProviderMode
	AuthorizationEndpoint    *string
	TokenEndpoint            *string
	ScopesOverride           []string
	AdditionalAuthParams     map[string]string

	Template         map[string]string // The header template; nil when not given.
	TemplateChanged  map[string]bool
	AdminCredentials map[string]string // The admin's values for the template; nil when not given.
	// AdminCredentialsChanged marks the admin credentials the form edited;
	// the others keep their stored values.
	AdminCredentialsChanged map[string]bool
}

// Check reports the first rule of Onyx's request validators that in
// breaks (400 here: Onyx answers 422 with a value_error), for a new
// server when creating.
func (in *MCPServerSetup) Check(creating bool) error {
	if err := CheckMCPServerURL(in.ServerURL); err != nil {
		return err
	}
	if in.Transport != nil && *in.Transport == MCPStdio {
		return Errorf(EINVALID, "The STDIO transport is not supported: Quarry connects to MCP servers over HTTP (STREAMABLE_HTTP or SSE)")
	}
	if in.AuthType != MCPAuthNone && in.Performer == nil {
		return Errorf(EINVALID, "auth_performer is required for non-none auth types")
	}
	admin := in.Performer != nil && *in.Performer == MCPPerformerAdmin
	perUser := in.Performer != nil && *in.Performer == MCPPerformerPerUser
	if in.Template != nil {
		if err := CheckTemplateHeaders(in.Template); err != nil {
			return err
		}
	}
	switch in.AuthType {
	case MCPAuthAPIToken:
		switch {
		case admin && creating && (in.APIToken == nil || *in.APIToken == ""):
			return Errorf(EINVALID, "api_token is required when auth_type is 'api_token' and auth_performer is 'admin'")
		case admin && in.Template != nil && !templateHas(in.Template, APIKeyPlaceholder):
			return Errorf(EINVALID, "Shared API-token header templates must include the {api_key} placeholder")
		case perUser && in.APIToken != nil && strings.TrimSpace(*in.APIToken) != "":
			return Errorf(EINVALID, "api_token should not be provided when auth_performer is 'per_user'. Users will provide their own credentials.")
		case perUser && len(in.Template) == 0:
			return Errorf(EINVALID, "auth_template is required when auth_performer is 'per_user'")
		}
	case MCPAuthOAuth:
		if in.ProviderMode == MCPKnownProvider {
			for _, f := range []struct {
				name string
				v    *string
			}{{"oauth_authorization_endpoint", in.AuthorizationEndpoint}, {"oauth_token_endpoint", in.TokenEndpoint}} {
				if f.v == nil || *f.v == "" {
					return Errorf(EINVALID, "%s is required for known-provider OAuth mode", f.name)
				}
				check := checkEndpointURL
				if f.name == "oauth_authorization_endpoint" {
					check = checkAuthorizationURL
				}
				if msg := check(*f.v); msg != "" {
					return Errorf(EINVALID, "Invalid %s: it %s", f.name, msg)
				}
			}
		}
		if err := CheckAdditionalParams(in.AdditionalAuthParams); err != nil {
			return err
		}
	}
	return nil
}

// templateHas reports whether some value of headers holds {name}.
func templateHas(headers map[string]string, name string) bool {
	for _, v := range headers {
		if strings.Contains(v, "{"+name+"}") {
			return true
		}
	}
	return false
}

// Apply returns the server in configures from old (nil for a new server,
// which gets OwnerID and times from the store) and whether the tokens and
// credentials people gave for it must be forgotten: when whom or how it
// authenticates changes (type, performer, header template), where it is
// (its URL: tokens are for one resource), or its OAuth client or
// provider. Masked values sent back, and values whose *_changed flag is
// false, keep what is stored (Onyx's rules).
func (in *MCPServerSetup) Apply(old *MCPServer) (next *MCPServer, forget bool, err error) {
	next = &MCPServer{Status: MCPCreated, ProviderMode: MCPAutoDiscovery}
	if old != nil {
		cp := *old
		next = &cp
	}
	prev := next.Config
	next.Name, next.Description, next.ServerURL = in.Name, in.Description, strings.TrimSpace(in.ServerURL)
	auth := in.AuthType
	next.AuthType = &auth
	next.Performer = in.Performer
	if in.Transport != nil {
		t := *in.Transport
		next.Transport = &t
	} else if next.Transport == nil {
		t := MCPStreamableHTTP
		next.Transport = &t
	}
	cfg := MCPConfig{}
	// The header template: masked values sent back keep the stored ones.
	template := prev.HeaderTemplate
	if in.Template != nil {
		template = KeepMaskedTemplate(prev.HeaderTemplate, in.Template, in.TemplateChanged)
	}
	if auth == MCPAuthAPIToken && !next.PerUser() && len(template) == 0 {
		template = DefaultAPITokenTemplate().Headers
	}
	if len(template) > 0 {
		cfg.HeaderTemplate = maps.Clone(template)
		if err := CheckTemplateHeaders(cfg.HeaderTemplate); err != nil {
			return nil, false, err
		}
	}
	// The admin's values: the token and the other placeholders.
	if auth == MCPAuthAPIToken && !next.PerUser() {
		cfg.APIToken = prev.APIToken
		if in.APIToken != nil && *in.APIToken != "" && *in.APIToken != MaskString(prev.APIToken) {
			cfg.APIToken = *in.APIToken
		}
		if cfg.APIToken == "" {
			return nil, false, Errorf(EINVALID, "A shared API token is required for admin-managed API-token servers.")
		}
	}
	if !next.PerUser() {
		creds := prev.AdminCredentials
		if in.AdminCredentials != nil {
			creds = KeepMaskedValues(prev.AdminCredentials, in.AdminCredentials, in.AdminCredentialsChanged)
		}
		if len(creds) > 0 {
			cfg.AdminCredentials = maps.Clone(creds)
		}
	}
	// OAuth: the provider and the client.
	next.ProviderMode, next.AuthorizationEndpoint, next.TokenEndpoint = MCPAutoDiscovery, nil, nil
	next.ScopesOverride, next.AdditionalAuthParams = nil, nil
	if auth == MCPAuthOAuth {
		next.ProviderMode = in.ProviderMode
		if next.ProviderMode == "" {
			next.ProviderMode = MCPAutoDiscovery
		}
		if next.ProviderMode == MCPKnownProvider {
			next.AuthorizationEndpoint, next.TokenEndpoint = in.AuthorizationEndpoint, in.TokenEndpoint
			next.ScopesOverride = slices.Clone(in.ScopesOverride)
			next.AdditionalAuthParams = maps.Clone(in.AdditionalAuthParams)
		}
		client := MCPOAuthClient{}
		if prev.OAuth != nil {
			client = *prev.OAuth
		}
		id, secret := client.ClientID, client.ClientSecret
		if in.OAuthClientID != nil && (in.OAuthClientIDChanged || prev.OAuth == nil || client.Registered) && *in.OAuthClientID != MaskString(id) {
			id = *in.OAuthClientID
		}
		if in.OAuthClientSecret != nil && (in.OAuthClientSecretChanged || prev.OAuth == nil || client.Registered) && *in.OAuthClientSecret != MaskString(secret) {
			secret = *in.OAuthClientSecret
		}
		if id != client.ClientID || secret != client.ClientSecret {
			// Another client: what was registered or discovered for the old
			// one is of no use to it.
			client = MCPOAuthClient{ClientID: id, ClientSecret: secret}
		}
		if old != nil && old.ServerURL != next.ServerURL {
			client = MCPOAuthClient{ClientID: client.ClientID, ClientSecret: client.ClientSecret}
			if prev.OAuth != nil && prev.OAuth.Registered {
				client = MCPOAuthClient{}
			}
		}
		if client.ClientID != "" || client.ClientSecret != "" || client.Registered || client.Discovered() {
			cfg.OAuth = &client
		}
	}
	next.Config = cfg
	if old == nil {
		next.Status = MCPInitialStatus(next)
		return next, false, nil
	}
	forget = old.Auth() != next.Auth() || !ptrEqual(old.Performer, next.Performer) ||
		!maps.Equal(old.Config.HeaderTemplate, next.Config.HeaderTemplate) || old.ServerURL != next.ServerURL ||
		!sameOAuthClient(old, next)
	if forget || !old.Configured() {
		next.Status = MCPInitialStatus(next)
	}
	return next, forget, nil
}

// sameOAuthClient reports whether a and b get their OAuth tokens from the
// same client at the same provider.
func sameOAuthClient(a, b *MCPServer) bool {
	if a.Auth() != MCPAuthOAuth && b.Auth() != MCPAuthOAuth {
		return true
	}
	ca, cb := a.OAuthClient(), b.OAuthClient()
	return ca.ClientID == cb.ClientID && ca.ClientSecret == cb.ClientSecret && a.ProviderMode == b.ProviderMode &&
		ca.AuthorizationEndpoint == cb.AuthorizationEndpoint && ca.TokenEndpoint == cb.TokenEndpoint &&
		slices.Equal(ca.Scopes, cb.Scopes) && maps.Equal(a.AdditionalAuthParams, b.AdditionalAuthParams)
}

// MCPServerChangedFields returns the JSON names of the fields that differ
// between old (nil for a new server) and next, in a fixed order, for the audit
// log: never a secret's value, only that it changed.
func MCPServerChangedFields(old, next *MCPServer) []string {
	if old == nil {
		old = &MCPServer{}
	}
	var f []string
	add := func(changed bool, name string) {
		if changed {
			f = append(f, name)
		}
	}
	add(old.Name != next.Name, "name")
	add(!ptrEqual(old.Description, next.Description), "description")
	add(old.ServerURL != next.ServerURL, "server_url")
	add(!ptrEqual(old.Transport, next.Transport), "transport")
	add(!ptrEqual(old.AuthType, next.AuthType), "auth_type")
	add(!ptrEqual(old.Performer, next.Performer), "auth_performer")
	add(old.Config.APIToken != next.Config.APIToken, "api_token")
	add(!maps.Equal(old.Config.HeaderTemplate, next.Config.HeaderTemplate), "auth_template")
	add(!maps.Equal(old.Config.AdminCredentials, next.Config.AdminCredentials), "admin_credentials")
	oc, nc := MCPOAuthClient{}, MCPOAuthClient{}
	if old.Config.OAuth != nil {
		oc = *old.Config.OAuth
	}
	if next.Config.OAuth != nil {
		nc = *next.Config.OAuth
	}
	add(oc.ClientID != nc.ClientID, "oauth_client_id")
	add(oc.ClientSecret != nc.ClientSecret, "oauth_client_secret")
	add(old.ProviderMode != next.ProviderMode, "oauth_provider_mode")
	add(!ptrEqual(old.AuthorizationEndpoint, next.AuthorizationEndpoint), "oauth_authorization_endpoint")
	add(!ptrEqual(old.TokenEndpoint, next.TokenEndpoint), "oauth_token_endpoint")
	add(!slices.Equal(old.ScopesOverride, next.ScopesOverride), "oauth_scopes_override")
	add(!maps.Equal(old.AdditionalAuthParams, next.AdditionalAuthParams), "oauth_additional_auth_params")
	add(old.Status != next.Status, "status")
	return f
}

// MCPServerPatch holds the changes of PATCH /admin/mcp/server/{id}
// (Onyx's MCPServerSimpleUpdateRequest); nil is unchanged.
type MCPServerPatch struct {
	Name        *string
	Description *string
	ServerURL   *string
}

// Apply returns s with p applied, and whether people's tokens and
// credentials must be forgotten (its URL changed: they were for the old
// one).
func (p *MCPServerPatch) Apply(s *MCPServer) (*MCPServer, bool) {
	next := *s
	if p.Name != nil {
		next.Name = *p.Name
	}
	if p.Description != nil {
		next.Description = p.Description
	}
	forget := false
	if p.ServerURL != nil && strings.TrimSpace(*p.ServerURL) != s.ServerURL {
		next.ServerURL = strings.TrimSpace(*p.ServerURL)
		forget = true
		if next.Config.OAuth != nil {
			c := *next.Config.OAuth
			if c.Registered {
				c = MCPOAuthClient{}
			} else {
				c = MCPOAuthClient{ClientID: c.ClientID, ClientSecret: c.ClientSecret}
			}
			next.Config.OAuth = &c
		}
		if next.Configured() {
			next.Status = MCPInitialStatus(&next)
		}
	}
	return &next, forget
}

// MCPNameLimit is the longest tool name the MCP specification allows.
const MCPNameLimit = 128

// MCPToolName returns the name Quarry's MCP endpoint gives an operation
// of a tool, or a tool of an MCP server: "<prefix>__<name>", where prefix
// is the custom tool's name (or the MCP server's) and name the method
// (or the server's tool name), every character outside [A-Za-z0-9_-]
// turned into "_" (the characters every MCP client accepts), the prefix
// cut so that the whole is at most MCPNameLimit characters.
func MCPToolName(prefix, name string) string {
	p, n := sanitizeMCPName(prefix), sanitizeMCPName(name)
	if len(n) > MCPNameLimit-3 {
		n = n[:MCPNameLimit-3]
	}
	if len(p)+2+len(n) > MCPNameLimit {
		p = p[:MCPNameLimit-2-len(n)]
	}
	return p + "__" + n
}

// sanitizeMCPName replaces each character of s outside [A-Za-z0-9_-]
// with "_", and gives "_" for "".
func sanitizeMCPName(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// CanUseToolsOverMCP reports whether c may use tools through Quarry's
// MCP endpoint: those who may run tools (holders of basic: every role but
// limited).
func (c *Caller) CanUseToolsOverMCP() bool { return c.Has(PermBasic) }

// ConnectorStatusURI is the resource of Quarry's MCP endpoint that holds
// the connector status listing the caller sees.
const ConnectorStatusURI = "quarry://connector-status"
