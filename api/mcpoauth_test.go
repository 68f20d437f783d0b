package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth/authtest"
	"github.com/quarryhq/quarry/internal/mcptest"
)

// OAuth at MCP servers, against a real authorization server in process
// (auth/authtest: zitadel's op) guarding a Go SDK MCP server that
// publishes its protected resource metadata and checks the tokens.

const (
	mcpClient       = "quarry-at-mcp"
	mcpClientSecret = "quarry-at-mcp-secret-0123456789"
)

// mcpConnect starts a connection as u (at the admin route when admin) and
// returns the authorization URL.
func (e *env) mcpConnect(t *testing.T, u user, admin bool, id int64, extra string) string {
	t.Helper()
	path := "/mcp/oauth/connect"
	if admin {
		path = "/admin/mcp/oauth/connect"
	}
	var out struct {
		ServerID int64  `json:"server_id"`
		OAuthURL string `json:"oauth_url"`
	}
	e.do(u, "POST", path, fmt.Sprintf(`{"server_id":%d,"return_path":"/#mcp","include_resource_param":true%s}`, id, extra)).decode(t, &out)
	return out.OAuthURL
}

// finishAt signs username in at idp for authURL and finishes the
// connection with Onyx's POST callback as u.
func (e *env) finishAt(t *testing.T, idp *authtest.Provider, u user, authURL, username string) {
	t.Helper()
	cb, err := idp.Authorize(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		authURL, username, "pw-"+username)
	if err != nil {
		t.Fatal(err)
	}
	q := cb.Query()
	e.do(u, "POST", "/mcp/oauth/callback?"+url.Values{"code": {q.Get("code")}, "state": {q.Get("state")}}.Encode(), nil).decode(t, new(any))
}

func TestMCPServerOAuth(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t), allowLoopback)
	s.waitReady()
	idp := authtest.Start(t)
	idp.AddClient(authtest.Client{ID: mcpClient, Secret: mcpClientSecret,
		RedirectURIs: []string{s.srv.URL + "/mcp/oauth/callback"}, RefreshTokens: true})
	for _, sub := range []string{"ann-at-mcp", "admin-at-mcp"} {
		idp.AddUser(authtest.User{Subject: sub, Email: sub + "@mcp.example", EmailVerified: true, Password: "pw-" + sub})
	}
	up := mcptest.Start(t, mcptest.Options{Issuer: idp.Issuer, Audience: mcpClient, Scopes: []string{"openid", "email", "offline_access"}})
	id := s.setUpMCPServer(s.admin, fmt.Sprintf(`{"name":"vault","server_url":%q,"auth_type":"OAUTH","auth_performer":"PER_USER",
		"oauth_client_id":%q,"oauth_client_secret":%q}`, up.URL, mcpClient, mcpClientSecret))
	listPath := fmt.Sprintf("/admin/mcp/server/%d/tools", id)
	connectFirst := fxJSON(map[string]string{"detail": quarry.ConnectMCPFirst(&quarry.MCPServer{ID: id, Name: "vault",
		AuthType: ptrTo(quarry.MCPAuthOAuth), Performer: ptrTo(quarry.MCPPerformerPerUser)}, quarry.MCPNeedsOAuth).Message})
	s.do(s.admin, "GET", listPath, nil).want(t, 409, connectFirst)

	// The admin connects their own account (the server is per person),
	// with Onyx's POST callback, then lists and picks the tools.
	authURL := s.mcpConnect(t, s.admin, true, id, "")
	t.Run("the authorization request", func(t *testing.T) {
		u, _ := url.Parse(authURL)
		q := u.Query()
		if u.Scheme+"://"+u.Host+u.Path != idp.Issuer+"/authorize" || q.Get("client_id") != mcpClient ||
			q.Get("redirect_uri") != s.srv.URL+"/mcp/oauth/callback" || q.Get("scope") != "openid email offline_access" ||
			q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("resource") != up.URL ||
			q.Get("response_type") != "code" || q.Get("state") == "" {
			t.Errorf("authorization URL %s", authURL)
		}
	})
	s.finishAt(t, idp, s.admin, authURL, "admin-at-mcp")
	tools := s.syncMCPTools(s.admin, id, "whoami")

	// Ann connects hers from the console, in her browser.
	b, ann := s.signedIn(t, "u-ann")
	runPath := fmt.Sprintf("/tool/%d/run", tools["whoami"])
	s.do(ann, "POST", runPath, `{}`).want(t, 409, connectFirst)
	var connect struct {
		OAuthURL string `json:"oauth_url"`
	}
	b.send("POST", "/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"/#mcp","include_resource_param":true}`, id),
		"Content-Type", "application/json").decodeInto(t, &connect)
	cb, err := idp.Authorize(b.c, connect.OAuthURL, "ann-at-mcp", "pw-ann-at-mcp")
	if err != nil {
		t.Fatal(err)
	}
	r := b.get(cb.String())
	if want := fmt.Sprintf("%s/?mcp_connected=%d#mcp", s.srv.URL, id); r.status != 303 || r.header.Get("Location") != want {
		t.Fatalf("callback: %d to %q, want 303 to %q", r.status, r.header.Get("Location"), want)
	}
	if r := b.get(cb.String()); r.status != 303 || r.header.Get("Location") != s.srv.URL+"/?mcp_error=state" {
		t.Errorf("replay: %d to %q", r.status, r.header.Get("Location"))
	}
	wantWho := func(t *testing.T, r *response, who string) {
		t.Helper()
		var out struct {
			Body struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"body"`
		}
		r.decode(t, &out)
		if len(out.Body.Content) != 1 || !containsAll(out.Body.Content[0].Text, `"user":"`+who+`"`) {
			t.Errorf("whoami: %s, want %s", r.body, who)
		}
	}
	wantWho(t, s.do(ann, "POST", runPath, `{}`), "ann-at-mcp@mcp.example")
	wantWho(t, s.do(s.admin, "POST", runPath, `{}`), "admin-at-mcp@mcp.example")

	t.Run("an expired token is refreshed", func(t *testing.T) {
		before := idp.Refreshes()
		s.advance(5 * time.Minute)
		wantWho(t, s.do(ann, "POST", runPath, `{}`), "ann-at-mcp@mcp.example")
		if n := idp.Refreshes() - before; n != 1 {
			t.Errorf("%d refreshes, want 1", n)
		}
		// Every token request names the server (RFC 8707), the refresh too.
		reqs := idp.TokenRequests()
		if len(reqs) < 2 {
			t.Fatalf("token requests: %v", reqs)
		}
		for _, form := range reqs {
			if form.Get("resource") != up.URL {
				t.Errorf("a %s request's resource %q, want %q", form.Get("grant_type"), form.Get("resource"), up.URL)
			}
		}
		if last := reqs[len(reqs)-1]; last.Get("grant_type") != "refresh_token" {
			t.Errorf("the last token request: %v", last)
		}
	})
	t.Run("a revoked refresh token", func(t *testing.T) {
		if idp.RevokeRefreshTokens("ann-at-mcp") == 0 {
			t.Fatal("nothing to revoke")
		}
		s.advance(10 * time.Minute)
		s.do(ann, "POST", runPath, `{}`).want(t, 409, connectFirst)
	})
	t.Run("a shared account", func(t *testing.T) {
		shared := s.setUpMCPServer(s.admin, fmt.Sprintf(`{"name":"team","server_url":%q,"auth_type":"OAUTH","auth_performer":"ADMIN",
			"oauth_client_id":%q,"oauth_client_secret":%q}`, up.URL, mcpClient, mcpClientSecret))
		sharedFirst := fxJSON(map[string]string{"detail": quarry.ConnectMCPFirst(&quarry.MCPServer{ID: shared, Name: "team",
			AuthType: ptrTo(quarry.MCPAuthOAuth), Performer: ptrTo(quarry.MCPPerformerAdmin)}, quarry.MCPNeedsOAuth).Message})
		s.do(s.admin, "GET", fmt.Sprintf("/admin/mcp/server/%d/tools", shared), nil).want(t, 409, sharedFirst)
		s.do(ann, "POST", "/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"/","include_resource_param":true}`, shared)).
			want(t, 403, `{"detail":"The OAuth account of the MCP server team is connected by an admin for everyone: use POST /admin/mcp/oauth/connect"}`)
		s.finishAt(t, idp, s.admin, s.mcpConnect(t, s.admin, true, shared, ""), "admin-at-mcp")
		sharedTools := s.syncMCPTools(s.admin, shared, "whoami")
		wantWho(t, s.do(ann, "POST", fmt.Sprintf("/tool/%d/run", sharedTools["whoami"]), `{}`), "admin-at-mcp@mcp.example")
		// Connected already: the return path comes back.
		s.do(s.admin, "POST", "/admin/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"/x","include_resource_param":true}`, shared)).
			want(t, 200, fmt.Sprintf(`{"server_id":%d,"oauth_url":"/x"}`, shared))
	})
	t.Run("refusals", func(t *testing.T) {
		s.do(ann, "POST", "/mcp/oauth/callback?code=x", nil).want(t, 400, `{"detail":"Missing state parameter"}`)
		s.do(ann, "POST", "/mcp/oauth/callback?state=x", nil).want(t, 400, `{"detail":"Missing code parameter"}`)
		s.do(ann, "POST", "/mcp/oauth/callback?state=unknown&code=x", nil).want(t, 400, `{"detail":"Invalid or expired state parameter"}`)
		s.do(ann, "POST", "/mcp/oauth/connect", `{"server_id":999,"return_path":"/","include_resource_param":true}`).
			want(t, 404, `{"detail":"MCP server not found"}`)
		s.do(ann, "POST", "/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"https://evil.example/","include_resource_param":true}`, id)).
			want(t, 400, `{"detail":"return_path must be a path of this site, starting with a single /, such as \"/\" or \"/#tool/3\""}`)
		none := s.setUpMCPServer(s.admin, fmt.Sprintf(`{"name":"open","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, up.URL))
		s.do(ann, "POST", "/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"/","include_resource_param":true}`, none)).
			want(t, 400, `{"detail":"Server was configured with authentication type NONE"}`)
		// Another person's state is refused, and used up.
		url2 := s.mcpConnect(t, s.admin, true, id, `,"force_reauthentication":true`)
		cb, err := idp.Authorize(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
			url2, "admin-at-mcp", "pw-admin-at-mcp")
		if err != nil {
			t.Fatal(err)
		}
		q := cb.Query()
		s.do(ann, "POST", "/mcp/oauth/callback?"+url.Values{"code": {q.Get("code")}, "state": {q.Get("state")}}.Encode(), nil).
			want(t, 400, `{"detail":"Invalid OAuth state"}`)
	})
}

func ptrTo[T any](v T) *T { return &v }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
