package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
)

// OAuth at MCP servers, as the MCP authorization specification says: the
// server's protected resource metadata (RFC 9728) names its authorization
// server, whose metadata (RFC 8414, or OpenID Connect discovery) gives the
// endpoints; Quarry registers itself there (RFC 7591) when the admin gave
// no client id and the server offers registration; the authorization code
// flow runs with PKCE (S256) and the server as the resource (RFC 8707).
// Onyx's routes and shapes: POST /mcp/oauth/connect (a person connects
// their own account), POST /admin/mcp/oauth/connect (an admin connects the
// account everyone's calls use, or their own), and the callback at
// /mcp/oauth/callback. Tokens are kept and refreshed as tools' are.

// mcpCallbackPath is where the authorization server sends the browser
// back (Onyx's).
const mcpCallbackPath = "/mcp/oauth/callback"

// mcpRedirectURI returns the absolute URL of the callback, as redirectURI
// does for tools.
func (s *Server) mcpRedirectURI(r *http.Request) string {
	return strings.TrimSuffix(s.redirectURI(r), callbackPath) + mcpCallbackPath
}

// mcpOAuthConnectAnswer is Onyx's MCPUserOAuthConnectResponse.
type mcpOAuthConnectAnswer struct {
	ServerID int64  `json:"server_id"`
	OAuthURL string `json:"oauth_url"`
}

// handleMCPOAuthConnect serves POST /mcp/oauth/connect (admin false) and
// POST /admin/mcp/oauth/connect (admin true): it starts a connection to
// the server's OAuth and answers where to send the browser. On the admin
// route, the server's owner or an admin connects the account everyone's
// calls use (a server whose performer is ADMIN), or their own, and may
// give the OAuth client (oauth_client_id and oauth_client_secret, with
// their *_changed flags); on the person's route, only their own. A person
// who has a token already gets the return path back, unless
// force_reauthentication.
func (s *Server) handleMCPOAuthConnect(admin bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in struct {
			Body mcpOAuthConnect `body:""`
		}
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		b := in.Body
		if err := quarry.CheckReturnPath(b.ReturnPath); err != nil {
			return err
		}
		ctx := r.Context()
		m, err := s.db.MCPServer(ctx, b.ServerID)
		if err != nil {
			return err
		}
		if admin {
			if err := c.CheckEditMCPServer(m); err != nil {
				return err
			}
		}
		if m.Auth() != quarry.MCPAuthOAuth {
			t := "None"
			if m.AuthType != nil {
				t = string(*m.AuthType)
			}
			return quarry.Errorf(quarry.EINVALID, "Server was configured with authentication type %s", t)
		}
		shared := m.SharedOAuth()
		if shared && !admin {
			return quarry.Errorf(quarry.EFORBIDDEN, "The OAuth account of the MCP server %s is connected by an admin for everyone: use POST /admin/mcp/oauth/connect", m.Name)
		}
		if admin && (b.OAuthClientIDChanged || b.OAuthClientSecretChanged) {
			if m, err = s.db.UpdateMCPOAuthClient(ctx, c, m.ID, b.OAuthClientIDChanged, b.OAuthClientID.Value,
				b.OAuthClientSecretChanged, b.OAuthClientSecret.Value); err != nil {
				return err
			}
		}
		user := c.ID
		if shared {
			user = store.SharedMCPUser
		}
		if !b.ForceReauthentication {
			has, err := s.db.HasMCPToken(ctx, m.ID, user)
			if err != nil {
				return err
			}
			if has {
				return writeJSON(w, http.StatusOK, mcpOAuthConnectAnswer{ServerID: m.ID, OAuthURL: b.ReturnPath})
			}
		}
		redirect := s.mcpRedirectURI(r)
		client, err := s.mcpOAuthClient(ctx, m, redirect)
		if err != nil {
			return err
		}
		l := auth.NewLogin()
		k := &quarry.MCPOAuthConnection{ServerID: m.ID, Shared: shared, Verifier: l.Verifier, RedirectURI: redirect, ReturnPath: b.ReturnPath}
		if err := s.db.BeginMCPOAuth(ctx, c, l.State, k); err != nil {
			return err
		}
		cfg := client.OAuthConfig(m.Name, m.AdditionalAuthParams, b.IncludeResourceParam)
		w.Header().Set("Cache-Control", "no-store")
		return writeJSON(w, http.StatusOK, mcpOAuthConnectAnswer{ServerID: m.ID,
			OAuthURL: auth.ToolAuthCodeURL(cfg, redirect, l.State, l.Verifier)})
	}
}

// mcpOAuthClient returns the OAuth client Quarry connects to m's
// authorization server with: the endpoints discovered (auto discovery) or
// given (known provider), and the client the admin gave or, failing that,
// one Quarry registers for redirect where the server offers registration.
// What it learns is kept with the server.
func (s *Server) mcpOAuthClient(ctx context.Context, m *quarry.MCPServer, redirect string) (*quarry.MCPOAuthClient, error) {
	client := m.OAuthClient()
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
	client = m.OAuthClient()
	if !client.Discovered() {
		return nil, quarry.Errorf(quarry.ECONFLICT, "Known-provider OAuth mode requires oauth_authorization_endpoint and oauth_token_endpoint")
	}
	return client, nil
}

// mcpOAuthCallbackAnswer is Onyx's MCPOAuthCallbackResponse.
type mcpOAuthCallbackAnswer struct {
	Success     bool   `json:"success"`
	Message     string `json:"message"`
	ServerID    int64  `json:"server_id"`
	ServerName  string `json:"server_name"`
	RedirectURL string `json:"redirect_url"`
}

// finishMCPConnection trades code for c's token at the authorization
// server of connection k's server and keeps it.
func (s *Server) finishMCPConnection(ctx context.Context, c *quarry.Caller, k *quarry.MCPOAuthConnection, code string) (*quarry.MCPServer, error) {
	m, err := s.db.MCPServer(ctx, k.ServerID)
	if err != nil {
		return nil, err
	}
	if m.Auth() != quarry.MCPAuthOAuth || m.SharedOAuth() != k.Shared {
		return nil, quarry.Errorf(quarry.ECONFLICT, "The MCP server %s changed how it authenticates since this connection started; start again", m.Name)
	}
	client := m.OAuthClient()
	xctx, cancel := context.WithTimeout(ctx, s.runner.Policy().Timeout)
	tok, err := auth.MCPExchange(xctx, s.runner.Client(), client.OAuthConfig(m.Name, nil, false), k.RedirectURI, code, k.Verifier, client.Resource)
	cancel()
	if err := s.runner.Explain(ctx, hostOf(client.TokenEndpoint), err); err != nil {
		return nil, err
	}
	return m, s.db.SaveMCPToken(ctx, c, m.ID, k.Shared, tok)
}

// handleMCPOAuthCallback serves POST /mcp/oauth/callback?code=&state=, as
// Onyx's page calls it: it finishes the caller's connection and answers
// where to send the browser. Failures are Onyx's 400s (a missing or
// unknown state, a missing code, a code the server refuses) and 404 (the
// server is gone).
func (s *Server) handleMCPOAuthCallback(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in mcpOAuthCallbackQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if in.State.Value == "" {
		return quarry.Errorf(quarry.EINVALID, "Missing state parameter")
	}
	if in.Code.Value == "" {
		return quarry.Errorf(quarry.EINVALID, "Missing code parameter")
	}
	ctx := r.Context()
	w.Header().Set("Cache-Control", "no-store")
	k, err := s.db.TakeMCPOAuth(ctx, in.State.Value)
	if err != nil {
		return err
	}
	if err := c.CheckMCPCallbackCaller(k); err != nil {
		return quarry.Errorf(quarry.EINVALID, "Invalid OAuth state")
	}
	m, err := s.finishMCPConnection(ctx, c, k, in.Code.Value)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mcpOAuthCallbackAnswer{Success: true, ServerID: m.ID, ServerName: m.Name,
		Message: "OAuth authorization completed successfully for " + m.Name, RedirectURL: k.ReturnPath})
}

// handleMCPOAuthCallbackPage serves GET /mcp/oauth/callback, where the
// authorization server sends the browser back: as GET
// /oauth-config/callback does for tools, it finishes the connection of
// the browser's signed-in person and sends the browser to the return path
// with ?mcp_connected=<server id>, or ?mcp_error=<code> (state, signin,
// user, provider, code, unreachable, server).
func (s *Server) handleMCPOAuthCallbackPage(w http.ResponseWriter, r *http.Request) error {
	return s.callbackPage(w, r, mcpCallback, func(ctx context.Context, state string) (*pendingCallback, error) {
		k, err := s.db.TakeMCPOAuth(ctx, state)
		if err != nil {
			return nil, err
		}
		return &pendingCallback{ReturnPath: k.ReturnPath, ID: k.ServerID, Check: func(c *quarry.Caller) error { return c.CheckMCPCallbackCaller(k) },
			Finish: func(ctx context.Context, c *quarry.Caller, code string) error {
				_, err := s.finishMCPConnection(ctx, c, k, code)
				return err
			}}, nil
	})
}
