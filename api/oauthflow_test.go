package api_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/auth/authtest"
)

// Per-person OAuth for tools and passthrough auth, against real OpenID
// Providers in process (auth/authtest: zitadel's op): one that people sign
// in to Quarry with, and one that is the tools' authorization server.

const (
	itemsClient       = "items-client"
	itemsClientSecret = "items-client-secret-0123456789"
)

// toolIdP is the authorization server of the items tool, with people who
// have accounts there.
func newToolIdP(t *testing.T, s *ssoEnv) *authtest.Provider {
	p := authtest.Start(t)
	p.AddClient(authtest.Client{ID: itemsClient, Secret: itemsClientSecret,
		RedirectURIs: []string{s.srv.URL + "/oauth-config/callback"}, RefreshTokens: true})
	for _, sub := range []string{"ann-at-items", "bob-at-items"} {
		p.AddUser(authtest.User{Subject: sub, Email: sub + "@items.example", EmailVerified: true, Password: "pw-" + sub})
	}
	return p
}

// signedIn signs subject in to Quarry with single sign-on in a new browser
// and returns the browser and the person as a caller (by their cookie).
func (s *ssoEnv) signedIn(t *testing.T, subject string) (*browser, user) {
	t.Helper()
	s.addUser(subject, subject+"@example.com", true)
	b := s.newBrowser()
	r := b.get(b.authorize(s, subject).String())
	c := sessionCookie(r)
	if c == nil {
		t.Fatalf("no session for %s", subject)
	}
	var me struct {
		ID string `json:"id"`
	}
	b.get("/me").decodeInto(t, &me)
	return b, user{cookie: c.Value, id: me.ID, email: subject + "@example.com"}
}

// initiate starts a connection in b to config cfg and returns the
// authorization URL.
func initiate(t *testing.T, b *browser, cfg int64, returnPath string) (string, string) {
	t.Helper()
	var out struct {
		AuthorizationURL string `json:"authorization_url"`
		State            string `json:"state"`
	}
	b.send("POST", "/oauth-config/initiate", fmt.Sprintf(`{"oauth_config_id":%d,"return_path":%q}`, cfg, returnPath),
		"Content-Type", "application/json").decodeInto(t, &out)
	return out.AuthorizationURL, out.State
}

func connectFirst(cfg int64) string {
	return fxJSON(map[string]string{"detail": quarry.ConnectFirst(cfg, "Items").Message})
}

func TestToolOAuth(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t), allowLoopback)
	s.waitReady()
	idp := newToolIdP(t, s)
	up := newItemsServer(t, idp.Issuer)
	var cfg int64
	{
		var out struct {
			ID int64 `json:"id"`
		}
		s.do(s.admin, "POST", "/admin/oauth-config", map[string]any{"name": "Items", "authorization_url": idp.Issuer + "/authorize",
			"token_url": idp.Issuer + "/oauth/token", "client_id": itemsClient, "client_secret": itemsClientSecret,
			"scopes": []string{"openid", "offline_access"}}).decode(t, &out)
		cfg = out.ID
	}
	tool := s.itemsTool(s.admin, up.URL, "items", fmt.Sprintf(`,"oauth_config_id":%d`, cfg))
	b, ann := s.signedIn(t, "u-ann")
	runPath := fmt.Sprintf("/tool/%d/run", tool)
	whoami := `{"method":"whoami"}`
	annAtItems := fmt.Sprintf(`{"status":200,"content_type":"application/json","headers":{"Content-Length":"%d","Content-Type":"application/json"},
		"body":{"sub":"ann-at-items","issuer":%q},"body_encoding":"json","truncated":false,"duration_ms":0}`,
		len(`{"sub":"ann-at-items","issuer":""}`)+len(idp.Issuer), idp.Issuer)

	s.do(ann, "POST", runPath, whoami).want(t, 409, connectFirst(cfg))
	s.do(ann, "GET", "/user-oauth-token/status", nil).want(t, 200, `[]`)

	authURL, _ := initiate(t, b, cfg, fmt.Sprintf("/#tool/%d", tool))
	t.Run("the authorization request", func(t *testing.T) {
		u, err := url.Parse(authURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if u.Scheme+"://"+u.Host+u.Path != idp.Issuer+"/authorize" || q.Get("client_id") != itemsClient || q.Get("response_type") != "code" ||
			q.Get("redirect_uri") != s.srv.URL+"/oauth-config/callback" || q.Get("scope") != "openid offline_access" ||
			q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("state") == "" {
			t.Errorf("authorization URL %s", authURL)
		}
	})
	cb, err := idp.Authorize(b.c, authURL, "ann-at-items", "pw-ann-at-items")
	if err != nil {
		t.Fatal(err)
	}
	r := b.get(cb.String())
	if want := fmt.Sprintf("%s/?oauth_connected=%d#tool/%d", s.srv.URL, cfg, tool); r.status != 303 || r.header.Get("Location") != want {
		t.Fatalf("callback: %d to %q, want 303 to %q", r.status, r.header.Get("Location"), want)
	}
	t.Run("a replayed callback", func(t *testing.T) {
		r := b.get(cb.String())
		if r.status != 303 || r.header.Get("Location") != s.srv.URL+"/?oauth_error=state" {
			t.Errorf("replay: %d to %q", r.status, r.header.Get("Location"))
		}
	})

	wantRun(t, s.do(ann, "POST", runPath, whoami), 200, annAtItems)
	var statuses []struct {
		ID        int64  `json:"oauth_config_id"`
		ExpiresAt int64  `json:"expires_at"`
		IsExpired bool   `json:"is_expired"`
		Name      string `json:"oauth_config_name"`
	}
	s.do(ann, "GET", "/user-oauth-token/status", nil).decode(t, &statuses)
	if len(statuses) != 1 || statuses[0].ID != cfg || statuses[0].Name != "Items" || statuses[0].IsExpired ||
		statuses[0].ExpiresAt < testNow.Unix()+290 || statuses[0].ExpiresAt > testNow.Unix()+300 {
		t.Errorf("statuses %+v", statuses)
	}
	t.Run("an expired token is refreshed", func(t *testing.T) {
		s.advance(5 * time.Minute)
		wantRun(t, s.do(ann, "POST", runPath, whoami), 200, annAtItems)
		if n := idp.Refreshes(); n != 1 {
			t.Errorf("%d refreshes, want 1", n)
		}
	})
	t.Run("one refresh at a time, across replicas", func(t *testing.T) {
		s.advance(10 * time.Minute)
		servers := []*env{s.env, s.replica()}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wantRun(t, servers[i%2].do(ann, "POST", runPath, whoami), 200, annAtItems)
			}()
		}
		wg.Wait()
		// The provider's refresh tokens rotate: a second refresh with the
		// same one would have failed with invalid_grant.
		if n := idp.Refreshes(); n != 2 {
			t.Errorf("%d refreshes, want 2", n)
		}
	})
	t.Run("the config as admins see it", func(t *testing.T) {
		var o struct {
			ToolCount   int  `json:"tool_count"`
			Credentials bool `json:"has_client_credentials"`
		}
		s.do(s.admin, "GET", fmt.Sprint("/admin/oauth-config/", cfg), nil).decode(t, &o)
		if o.ToolCount != 1 || !o.Credentials {
			t.Errorf("%+v", o)
		}
	})
	t.Run("a revoked refresh token", func(t *testing.T) {
		if idp.RevokeRefreshTokens("ann-at-items") == 0 {
			t.Fatal("nothing to revoke")
		}
		s.advance(10 * time.Minute)
		s.do(ann, "POST", runPath, whoami).want(t, 409, connectFirst(cfg))
		s.do(ann, "GET", "/user-oauth-token/status", nil).want(t, 200, `[]`)
	})
	t.Run("Onyx's POST callback", func(t *testing.T) {
		authURL, state := initiate(t, b, cfg, "/")
		cb, err := idp.Authorize(b.c, authURL, "ann-at-items", "pw-ann-at-items")
		if err != nil {
			t.Fatal(err)
		}
		q := cb.Query()
		if q.Get("state") != state {
			t.Fatalf("state %q, want %q", q.Get("state"), state)
		}
		path := "/oauth-config/callback?" + url.Values{"code": {q.Get("code")}, "state": {state}}.Encode()
		s.do(ann, "POST", path, nil).want(t, 200, `{"redirect_url":"/","error":null}`)
		wantRun(t, s.do(ann, "POST", runPath, whoami), 200, annAtItems)
		s.do(ann, "POST", path, nil).want(t, 200, `{"redirect_url":"/","error":"The OAuth connection is unknown, over or too old; start again"}`)
	})
	t.Run("a code the server refuses", func(t *testing.T) {
		_, state := initiate(t, b, cfg, "/x")
		r := s.do(ann, "POST", "/oauth-config/callback?code=bogus&state="+state, nil)
		var out struct {
			RedirectURL string  `json:"redirect_url"`
			Error       *string `json:"error"`
		}
		r.decode(t, &out)
		if out.RedirectURL != "/x" || out.Error == nil || !strings.HasPrefix(*out.Error, "The authorization server of Items refused the code: invalid_grant") {
			t.Errorf("%s", r.body)
		}
	})
	t.Run("another person's connection", func(t *testing.T) {
		bob, bobUser := s.signedIn(t, "u-bob")
		authURL, state := initiate(t, bob, cfg, "/")
		cb, err := idp.Authorize(bob.c, authURL, "bob-at-items", "pw-bob-at-items")
		if err != nil {
			t.Fatal(err)
		}
		r := b.get(cb.String()) // in Ann's browser
		if r.status != 303 || r.header.Get("Location") != s.srv.URL+"/?oauth_error=user" {
			t.Errorf("Ann's browser at Bob's callback: %d to %q", r.status, r.header.Get("Location"))
		}
		_, state = initiate(t, bob, cfg, "/")
		s.do(ann, "POST", "/oauth-config/callback?code=x&state="+state, nil).
			want(t, 200, `{"redirect_url":"/","error":"User mismatch in OAuth callback"}`)
		s.do(bobUser, "POST", runPath, whoami).want(t, 409, connectFirst(cfg))
	})
	t.Run("a browser not signed in", func(t *testing.T) {
		authURL, _ := initiate(t, b, cfg, "/")
		stranger := s.newBrowser()
		cb, err := idp.Authorize(stranger.c, authURL, "ann-at-items", "pw-ann-at-items")
		if err != nil {
			t.Fatal(err)
		}
		r := stranger.get(cb.String())
		if r.status != 303 || r.header.Get("Location") != s.srv.URL+"/?oauth_error=signin" {
			t.Errorf("%d to %q", r.status, r.header.Get("Location"))
		}
	})
	t.Run("the person denies", func(t *testing.T) {
		authURL, _ := initiate(t, b, cfg, "/?a=1")
		cb, err := idp.Deny(b.c, authURL)
		if err != nil {
			t.Fatal(err)
		}
		r := b.get(cb.String())
		if r.status != 303 || r.header.Get("Location") != s.srv.URL+"/?a=1&oauth_error=provider" {
			t.Errorf("%d to %q", r.status, r.header.Get("Location"))
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		s.do(ann, "DELETE", fmt.Sprintf("/oauth-config/%d/token", cfg), nil).want(t, 200, `{"message":"OAuth token revoked successfully"}`)
		s.do(ann, "DELETE", fmt.Sprintf("/oauth-config/%d/token", cfg), nil).
			want(t, 404, fxJSON(map[string]string{"detail": fmt.Sprintf("OAuth token for user %s and config %d does not exist", ann.id, cfg)}))
		s.do(ann, "POST", runPath, whoami).want(t, 409, connectFirst(cfg))
	})
	t.Run("initiate refusals", func(t *testing.T) {
		for _, tt := range []struct {
			name, body string
			status     int
			want       string
		}{
			{"unknown config", `{"oauth_config_id":9999}`, 404, `{"detail":"OAuth config with id 9999 not found"}`},
			{"return path elsewhere", fmt.Sprintf(`{"oauth_config_id":%d,"return_path":"https://evil.example.com/"}`, cfg), 400,
				`{"detail":"return_path must be a path of this site, starting with a single /, such as \"/\" or \"/#tool/3\""}`},
			{"return path to another host", fmt.Sprintf(`{"oauth_config_id":%d,"return_path":"//evil.example.com"}`, cfg), 400,
				`{"detail":"return_path must be a path of this site, starting with a single /, such as \"/\" or \"/#tool/3\""}`},
		} {
			t.Run(tt.name, func(t *testing.T) { s.do(ann, "POST", "/oauth-config/initiate", tt.body).want(t, tt.status, tt.want) })
		}
		for _, g := range fxGoldens(t, "oauthInitiate") {
			t.Run(g.Name, func(t *testing.T) { fx{s.env}.replay(t, ann, "POST", "", g) })
		}
		for _, g := range fxGoldens(t, "oauthCallbackQuery") {
			t.Run(g.Name, func(t *testing.T) { fx{s.env}.replay(t, ann, "POST", "", g) })
		}
	})
	t.Run("a config without a client id", func(t *testing.T) {
		var o struct {
			ClientID    string `json:"client_id"`
			Credentials bool   `json:"has_client_credentials"`
		}
		s.do(s.admin, "PUT", fmt.Sprint("/admin/oauth-config/", cfg), `{"clear_client_id":true}`).decode(t, &o)
		if o.ClientID != "" || o.Credentials {
			t.Errorf("%+v", o)
		}
		s.do(ann, "POST", "/oauth-config/initiate", fmt.Sprintf(`{"oauth_config_id":%d}`, cfg)).
			want(t, 409, fmt.Sprintf(`{"detail":"OAuth config %d has no client id; an admin must set one before anyone can connect"}`, cfg))
	})
}

// TestPassthroughAuth runs a tool that sends the person's own single
// sign-on access token: from their session (refreshed when it expires), or
// the provider's token they called with; never without one.
func TestPassthroughAuth(t *testing.T) {
	op := authtest.Start(t)
	s := newSSOEnv(t, op, allowLoopback, func(c *auth.OIDCConfig) { c.Scopes = append(c.Scopes, "offline_access") })
	op.AddClient(authtest.Client{ID: ssoClient, Secret: ssoSecret, RedirectURIs: []string{s.srv.URL + "/auth/oidc/callback"},
		PostLogoutRedirectURIs: []string{s.srv.URL + "/"}, RefreshTokens: true})
	s.waitReady()
	up := newItemsServer(t, op.Issuer)
	tool := s.itemsTool(s.admin, up.URL, "items", `,"passthrough_auth":true`)
	runPath := fmt.Sprintf("/tool/%d/run", tool)
	whoami := `{"method":"whoami"}`
	annAtSSO := fmt.Sprintf(`{"status":200,"content_type":"application/json","headers":{"Content-Length":"%d","Content-Type":"application/json"},
		"body":{"sub":"u-ann","issuer":%q},"body_encoding":"json","truncated":false,"duration_ms":0}`,
		len(`{"sub":"u-ann","issuer":""}`)+len(op.Issuer), op.Issuer)
	noToken := fxJSON(map[string]string{"detail": quarry.ErrNoPassthroughToken.Message})

	b, ann := s.signedIn(t, "u-ann")
	wantRun(t, s.do(ann, "POST", runPath, whoami), 200, annAtSSO)
	if got := up.last().Header.Get("Authorization"); !strings.HasPrefix(got, "Bearer ") {
		t.Errorf("Authorization %q", got)
	}
	t.Run("an API key has no single sign-on token", func(t *testing.T) {
		s.do(s.admin, "POST", runPath, whoami).want(t, 409, noToken)
	})
	t.Run("the provider's access token the request came with", func(t *testing.T) {
		token := op.AccessToken(t, ssoClient, ssoSecret, "u-ann", "pw-u-ann")
		wantRun(t, s.do(user{token: token}, "POST", runPath, whoami), 200, annAtSSO)
		if got := up.last().Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("the tool got %q, want the caller's token", got)
		}
	})
	t.Run("an expired token is refreshed", func(t *testing.T) {
		s.advance(10 * time.Minute)
		wantRun(t, s.do(ann, "POST", runPath, whoami), 200, annAtSSO)
		if n := op.Refreshes(); n != 1 {
			t.Errorf("%d refreshes, want 1", n)
		}
	})
	t.Run("a revoked refresh token", func(t *testing.T) {
		op.RevokeRefreshTokens("u-ann")
		s.advance(10 * time.Minute)
		s.do(ann, "POST", runPath, whoami).want(t, 409, noToken)
	})
	t.Run("signed out, the token is gone", func(t *testing.T) {
		b2, ann2 := s.signedIn(t, "u-ann")
		wantRun(t, s.do(ann2, "POST", runPath, whoami), 200, annAtSSO)
		b2.send("POST", "/auth/logout", "").decodeInto(t, new(any))
		s.do(ann2, "POST", runPath, whoami).want(t, 401, fxNotAuthed)
		_ = b
	})
}
