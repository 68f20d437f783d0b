package quarry

import (
	"maps"
	"slices"
	"strings"
)

// Configuring MCP servers: Onyx's requests that create, set up and change
// a server, checked as its validators do, and what a change changes.

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
		if in.APIToken != nil && *in.APIToken != "" && !IsMaskOf(*in.APIToken, prev.APIToken) {
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
		if in.OAuthClientID != nil && (in.OAuthClientIDChanged || prev.OAuth == nil || client.Registered) && !IsMaskOf(*in.OAuthClientID, id) {
			id = *in.OAuthClientID
		}
		if in.OAuthClientSecret != nil && (in.OAuthClientSecretChanged || prev.OAuth == nil || client.Registered) && !IsMaskOf(*in.OAuthClientSecret, secret) {
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
	forget = old.Auth() != next.Auth() || !PtrEqual(old.Performer, next.Performer) ||
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
	add(!PtrEqual(old.Description, next.Description), "description")
	add(old.ServerURL != next.ServerURL, "server_url")
	add(!PtrEqual(old.Transport, next.Transport), "transport")
	add(!PtrEqual(old.AuthType, next.AuthType), "auth_type")
	add(!PtrEqual(old.Performer, next.Performer), "auth_performer")
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
	add(!PtrEqual(old.AuthorizationEndpoint, next.AuthorizationEndpoint), "oauth_authorization_endpoint")
	add(!PtrEqual(old.TokenEndpoint, next.TokenEndpoint), "oauth_token_endpoint")
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
