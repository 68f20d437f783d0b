package outbound

import (
	"context"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
)

// OAuth connections, for custom tools (a person connects their account
// for a tool's OAuth configuration) and for MCP servers, as the MCP
// authorization specification says: the server's protected resource
// metadata (RFC 9728) names its authorization server, whose metadata (RFC
// 8414, or OpenID Connect discovery) gives the endpoints; Quarry registers
// itself there (RFC 7591) when the admin gave no client id and the server
// offers registration; the authorization code flow runs with PKCE (S256),
// with the server as the resource (RFC 8707). The code is exchanged, and
// the token kept, by the Finish methods, which both the callback pages and
// the callback routes call.

// StartToolConnection starts a connection of c to OAuth configuration id
// (POST /oauth-config/initiate): the state, good once for the person who
// started, is kept with the PKCE verifier, redirect (the callback's
// absolute URL) and returnPath. It returns the URL to send c's browser to,
// and the state.
func (s *Service) StartToolConnection(ctx context.Context, c *quarry.Caller, id int64, returnPath, redirect string) (authURL, state string, err error) {
	if err := quarry.CheckReturnPath(returnPath); err != nil {
		return "", "", err
	}
	cfg, err := s.db.OAuthConfig(ctx, id)
	if err != nil {
		return "", "", err
	}
	if cfg.ClientID == "" {
		return "", "", quarry.Errorf(quarry.ECONFLICT, "OAuth config %d has no client id; an admin must set one before anyone can connect", cfg.ID)
	}
	l := auth.NewLogin()
	k := &quarry.OAuthConnection{OAuthConfigID: cfg.ID, Verifier: l.Verifier, RedirectURI: redirect, ReturnPath: returnPath}
	if err := s.db.BeginOAuthConnection(ctx, c, l.State, k); err != nil {
		return "", "", err
	}
	return auth.ToolAuthCodeURL(cfg, k.RedirectURI, l.State, l.Verifier), l.State, nil
}

// FinishToolConnection trades code for c's token at the authorization
// server of connection k and keeps it.
func (s *Service) FinishToolConnection(ctx context.Context, c *quarry.Caller, k *quarry.OAuthConnection, code string) error {
	cfg, err := s.db.OAuthConfig(ctx, k.OAuthConfigID)
	if err != nil {
		return err
	}
	xctx, cancel := s.callContext(ctx)
	tok, err := auth.ToolExchange(xctx, s.runner.Client(), cfg, k.RedirectURI, code, k.Verifier)
	cancel()
	if err := s.runner.Explain(ctx, hostOf(cfg.TokenURL), err); err != nil {
		return err
	}
	return s.db.SaveOAuthToken(ctx, c, cfg.ID, tok)
}

// MCPConnect is a request to connect an account at an MCP server's OAuth
// (Onyx's MCPUserOAuthConnectRequest, decoded). Admin is true on the
// admin's route, where the OAuth client may be given too (ClientID and
// ClientSecret, when their Changed flags say so). RedirectURI is the
// absolute URL of the callback.
type MCPConnect struct {
	ServerID            int64
	ReturnPath          string
	Admin               bool
	Force               bool
	IncludeResource     bool
	ClientIDChanged     bool
	ClientID            string
	ClientSecretChanged bool
	ClientSecret        string
	RedirectURI         string
}

// ConnectMCP starts a connection to an MCP server's OAuth (POST
// /mcp/oauth/connect and POST /admin/mcp/oauth/connect) and returns where
// to send the browser. On the admin's route, the server's owner or an
// admin connects the account everyone's calls use (a server whose
// performer is ADMIN), or their own, and may give the OAuth client; on the
// person's route, only their own. A person who has a token already gets
// the return path back (started false), unless in.Force.
func (s *Service) ConnectMCP(ctx context.Context, c *quarry.Caller, in MCPConnect) (serverID int64, url string, started bool, err error) {
	if err := quarry.CheckReturnPath(in.ReturnPath); err != nil {
		return 0, "", false, err
	}
	read := s.db.MCPServer
	if in.Admin { // The admin's route connects for everyone: the server's owner or an admin.
		read = func(ctx context.Context, id int64) (*quarry.MCPServer, error) {
			return s.db.EditableMCPServer(ctx, c, id)
		}
	}
	m, err := read(ctx, in.ServerID)
	if err != nil {
		return 0, "", false, err
	}
	if m.Auth() != quarry.MCPAuthOAuth {
		t := "None"
		if m.AuthType != nil {
			t = string(*m.AuthType)
		}
		return 0, "", false, quarry.Errorf(quarry.EINVALID, "Server was configured with authentication type %s", t)
	}
	shared := m.SharedOAuth()
	if shared && !in.Admin {
		return 0, "", false, quarry.Errorf(quarry.EFORBIDDEN, "The OAuth account of the MCP server %s is connected by an admin for everyone: use POST /admin/mcp/oauth/connect", m.Name)
	}
	if in.Admin && (in.ClientIDChanged || in.ClientSecretChanged) {
		if m, err = s.db.UpdateMCPOAuthClient(ctx, c, m.ID, in.ClientIDChanged, in.ClientID,
			in.ClientSecretChanged, in.ClientSecret); err != nil {
			return 0, "", false, err
		}
	}
	user := c.ID
	if shared {
		user = store.SharedMCPUser
	}
	if !in.Force {
		has, err := s.db.HasMCPToken(ctx, m.ID, user)
		if err != nil {
			return 0, "", false, err
		}
		if has {
			return m.ID, in.ReturnPath, false, nil
		}
	}
	client, err := s.mcpOAuthClient(ctx, m, in.RedirectURI)
	if err != nil {
		return 0, "", false, err
	}
	l := auth.NewLogin()
	k := &quarry.MCPOAuthConnection{ServerID: m.ID, Shared: shared, Verifier: l.Verifier, RedirectURI: in.RedirectURI, ReturnPath: in.ReturnPath}
	if err := s.db.BeginMCPOAuth(ctx, c, l.State, k); err != nil {
		return 0, "", false, err
	}
	cfg := client.OAuthConfig(m.Name, m.AdditionalAuthParams, in.IncludeResource)
	return m.ID, auth.ToolAuthCodeURL(cfg, in.RedirectURI, l.State, l.Verifier), true, nil
}

// mcpOAuthClient returns the OAuth client Quarry connects to m's
// authorization server with: the endpoints discovered (auto discovery) or
// given (known provider), and the client the admin gave or, failing that,
// one Quarry registers for redirect where the server offers registration.
// What it learns is kept with the server.
func (s *Service) mcpOAuthClient(ctx context.Context, m *quarry.MCPServer, redirect string) (*quarry.MCPOAuthClient, error) {
	stored := quarry.MCPOAuthClient{}
	if m.Config.OAuth != nil {
		stored = *m.Config.OAuth
	}
	changed := false
	if m.ProviderMode == quarry.MCPAutoDiscovery && !stored.Discovered() {
		info, err := s.runner.MCPDiscover(ctx, m.ServerURL)
		if err != nil {
			return nil, err
		}
		for _, u := range []string{info.AuthorizationEndpoint, info.TokenEndpoint} {
			if err := (&quarry.OAuthConfig{AuthorizationURL: u, TokenURL: u}).CheckURLs(); err != nil {
				return nil, quarry.Errorf(quarry.EBADGATEWAY, "The authorization server of the MCP server %s gives an endpoint Quarry will not use: %s", m.Name, quarry.ErrorMessage(err))
			}
		}
		stored.Issuer, stored.AuthorizationEndpoint, stored.TokenEndpoint = info.Issuer, info.AuthorizationEndpoint, info.TokenEndpoint
		stored.RegistrationEndpoint, stored.Scopes = info.RegistrationEndpoint, info.Scopes
		if info.Resource != "" {
			stored.Resource = info.Resource
		}
		changed = true
	}
	if stored.Registered && stored.RedirectURI != redirect {
		// Registered for another redirect URI (the public URL changed):
		// register again.
		stored.ClientID, stored.ClientSecret, stored.Registered = "", "", false
	}
	if stored.ClientID == "" {
		endpoint := stored.RegistrationEndpoint
		if endpoint == "" {
			return nil, quarry.Errorf(quarry.ECONFLICT, "The authorization server of the MCP server %s offers no dynamic client registration: "+
				"its owner or an admin must give Quarry's client id (and secret) there, as oauth_client_id in POST /admin/mcp/servers/create", m.Name)
		}
		id, secret, err := s.runner.MCPRegister(ctx, endpoint, redirect, nil)
		if err != nil {
			return nil, err
		}
		stored.ClientID, stored.ClientSecret, stored.Registered, stored.RedirectURI = id, secret, true, redirect
		changed = true
	}
	if changed {
		if err := s.db.SetMCPOAuthClient(ctx, m.ID, &stored); err != nil {
			return nil, err
		}
		m.Config.OAuth = &stored
	}
	client := m.OAuthClient()
	if !client.Discovered() {
		return nil, quarry.Errorf(quarry.ECONFLICT, "Known-provider OAuth mode requires oauth_authorization_endpoint and oauth_token_endpoint")
	}
	return client, nil
}

// FinishMCPConnection trades code for c's token at the authorization
// server of connection k's server and keeps it.
func (s *Service) FinishMCPConnection(ctx context.Context, c *quarry.Caller, k *quarry.MCPOAuthConnection, code string) (*quarry.MCPServer, error) {
	m, err := s.db.MCPServer(ctx, k.ServerID)
	if err != nil {
		return nil, err
	}
	if m.Auth() != quarry.MCPAuthOAuth || m.SharedOAuth() != k.Shared {
		return nil, quarry.Errorf(quarry.ECONFLICT, "The MCP server %s changed how it authenticates since this connection started; start again", m.Name)
	}
	client := m.OAuthClient()
	xctx, cancel := s.callContext(ctx)
	tok, err := auth.MCPExchange(xctx, s.runner.Client(), client.OAuthConfig(m.Name, nil, false), k.RedirectURI, code, k.Verifier, client.Resource)
	cancel()
	if err := s.runner.Explain(ctx, hostOf(client.TokenEndpoint), err); err != nil {
		return nil, err
	}
	return m, s.db.SaveMCPToken(ctx, c, m.ID, k.Shared, tok)
}

// CheckMCPCallback reports what POST /mcp/oauth/callback lacks, with
// Onyx's 400s: the state, or the code.
func CheckMCPCallback(state, code string) error {
	switch {
	case state == "":
		return quarry.Errorf(quarry.EINVALID, "Missing state parameter")
	case code == "":
		return quarry.Errorf(quarry.EINVALID, "Missing code parameter")
	}
	return nil
}

// FinishMCPCallback finishes the connection whose state is state, for c
// who started it, with code (POST /mcp/oauth/callback, as Onyx's page
// calls it): an unknown state, or another person's, is Onyx's 400, a
// server gone 404. It returns the server and the connection (its return
// path).
func (s *Service) FinishMCPCallback(ctx context.Context, c *quarry.Caller, state, code string) (*quarry.MCPServer, *quarry.MCPOAuthConnection, error) {
	k, err := s.db.TakeMCPOAuth(ctx, state)
	if err != nil {
		return nil, nil, err
	}
	if err := c.CheckMCPCallbackCaller(k); err != nil {
		return nil, nil, quarry.Errorf(quarry.EINVALID, "Invalid OAuth state")
	}
	m, err := s.FinishMCPConnection(ctx, c, k, code)
	if err != nil {
		return nil, nil, err
	}
	return m, k, nil
}
