package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/outbound"
)

// OAuth at MCP servers (the flow is outbound.Service.ConnectMCP's and
// FinishMCPConnection's). Onyx's routes and shapes: POST
// /mcp/oauth/connect (a person connects their own account), POST
// /admin/mcp/oauth/connect (an admin connects the account everyone's
// calls use, or their own), and the callback at /mcp/oauth/callback.
// Tokens are kept and refreshed as tools' are.

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
		var in mcpOAuthConnectRequest
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		b := in.Body
		id, url, started, err := s.out.ConnectMCP(r.Context(), c, outbound.MCPConnect{ServerID: b.ServerID, ReturnPath: b.ReturnPath,
			Admin: admin, Force: b.ForceReauthentication, IncludeResource: b.IncludeResourceParam,
			ClientIDChanged: b.OAuthClientIDChanged, ClientID: b.OAuthClientID.Value,
			ClientSecretChanged: b.OAuthClientSecretChanged, ClientSecret: b.OAuthClientSecret.Value,
			RedirectURI: s.mcpRedirectURI(r)})
		if err != nil {
			return err
		}
		if started {
			w.Header().Set("Cache-Control", "no-store")
		}
		return writeJSON(w, http.StatusOK, mcpOAuthConnectAnswer{ServerID: id, OAuthURL: url})
	}
}

// mcpOAuthCallbackAnswer is Onyx's MCPOAuthCallbackResponse.
type mcpOAuthCallbackAnswer struct {
	Success     bool   `json:"success"`
	Message     string `json:"message"`
	ServerID    int64  `json:"server_id"`
	ServerName  string `json:"server_name"`
	RedirectURL string `json:"redirect_url"`
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
	if err := outbound.CheckMCPCallback(in.State.Value, in.Code.Value); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	m, k, err := s.out.FinishMCPCallback(r.Context(), c, in.State.Value, in.Code.Value)
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
				_, err := s.out.FinishMCPConnection(ctx, c, k, code)
				return err
			}}, nil
	})
}
