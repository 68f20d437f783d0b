package api_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/auth/authtest"
	"github.com/quarryhq/quarry/store/storetest"
)

// Single sign-on, against a real OpenID Provider in process
// (auth/authtest: zitadel's op package), over HTTP, with a browser's
// cookie jar.

// ssoEnv is a test server whose people sign in at op, on a clock that
// advance moves.
type ssoEnv struct {
	*env
	op       *authtest.Provider
	provider *auth.Provider
	mu       sync.Mutex
	now      time.Time
}

// advance moves the server's clock on by d.
func (s *ssoEnv) advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
}

const (
	ssoClient = "quarry"
	ssoSecret = "quarry-client-secret-at-the-provider"
)

// newSSOEnv starts a server set up for single sign-on at op, which it
// registers Quarry with; each option changes the OpenID configuration
// (func(*auth.OIDCConfig)) or the server's (func(*api.Config)).
func newSSOEnv(t *testing.T, op *authtest.Provider, options ...any) *ssoEnv {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	op.AddClient(authtest.Client{ID: ssoClient, Secret: ssoSecret, RedirectURIs: []string{base + "/auth/oidc/callback"},
		PostLogoutRedirectURIs: []string{base + "/"}})
	cfg := auth.OIDCConfig{Issuer: op.Issuer, ClientID: ssoClient, ClientSecret: ssoSecret,
		RedirectURL: base + "/auth/oidc/callback", Scopes: []string{"email", "profile", authtest.ScopeGroups},
		Skew: 30 * time.Second, KeyRefresh: time.Nanosecond,
		Roles: quarry.RolePolicy{AdminEmails: []string{"boss@example.com"}, Claim: "groups",
			Map: map[string]quarry.Role{"quarry-curators": quarry.RoleGlobalCurator, "quarry-admins": quarry.RoleAdmin}}}
	var apiOpts []func(*api.Config)
	for _, o := range options {
		switch o := o.(type) {
		case func(*auth.OIDCConfig):
			o(&cfg)
		case func(*api.Config):
			apiOpts = append(apiOpts, o)
		default:
			t.Fatalf("newSSOEnv: option of type %T", o)
		}
	}
	p := auth.NewProvider(t.Context(), cfg, slog.New(slog.DiscardHandler))
	public, _ := url.Parse(base)
	e := startEnv(t, srv, storetest.URL(t), append(apiOpts, func(c *api.Config) {
		c.SignIn.OIDC, c.SignIn.OIDCName, c.SignIn.PublicURL = p, "Example SSO", public
	})...)
	s := &ssoEnv{env: e, op: op, provider: p, now: testNow}
	e.db.Now = func() time.Time {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.now
	}
	return s
}

// waitReady waits until the provider's discovery document was read.
func (s *ssoEnv) waitReady() {
	s.t.Helper()
	select {
	case <-s.provider.Ready():
	case <-time.After(time.Minute): // discovery is retried every 1 s, 2 s, 4 s...
		s.t.Fatalf("the provider was not discovered: %v", s.provider.Err())
	}
}

// browser is a web browser: a cookie jar, and redirects not followed, so
// that each is seen.
type browser struct {
	e *env
	c *http.Client
}

func (e *env) newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get requests target (a URL, or a path of the server) as the browser, and
// checks the exchange against openapi.json.
func (b *browser) get(target string) *response {
	b.e.t.Helper()
	return b.send("GET", target, "")
}

func (b *browser) send(method, target, body string, headers ...string) *response {
	b.e.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.e.srv.URL + target
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		b.e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	noteSetCookies(b.e.t, res)
	if strings.HasPrefix(target, b.e.srv.URL) {
		req.URL.Host = strings.TrimPrefix(b.e.srv.URL, "http://")
		var sent any
		if body != "" {
			sent = body
		}
		b.e.conform(req, sent, res, got)
	}
	return &response{status: res.StatusCode, header: res.Header, body: got}
}

// signIn signs username in at the provider from the admin page's sign-in
// button and returns the callback URL the provider sent the browser to.
func (b *browser) authorize(s *ssoEnv, username string) *url.URL {
	s.t.Helper()
	cb, err := s.op.Authorize(b.c, s.srv.URL+"/auth/oidc/login?next=/%3Fview%3Dstatus", username, "pw-"+username)
	if err != nil {
		s.t.Fatalf("authorizing %s: %v", username, err)
	}
	return cb
}

// wantRedirect asserts a 303 to the admin page's URL with the given query.
func (s *ssoEnv) wantRedirect(t *testing.T, r *response, query string) {
	t.Helper()
	if want := s.srv.URL + "/" + query; r.status != http.StatusSeeOther || r.header.Get("Location") != want {
		t.Errorf("answer %d to %q, want 303 to %q; body %s", r.status, r.header.Get("Location"), want, r.body)
	}
}

// addUser adds a user of the provider whose password is "pw-" + subject.
func (s *ssoEnv) addUser(subject, email string, verified bool, groups ...string) {
	s.op.AddUser(authtest.User{Subject: subject, Email: email, EmailVerified: verified, Name: "Name of " + subject,
		Groups: groups, Password: "pw-" + subject})
}

// people returns the emails of the people the store has.
func (s *ssoEnv) people() []string {
	s.t.Helper()
	ps, _, err := s.db.People(context.Background(), quarry.UserFilter{Limit: 100})
	if err != nil {
		s.t.Fatal(err)
	}
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Email)
	}
	return out
}

func TestSingleSignOn(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t))
	s.waitReady()
	s.addUser("u-ann", "Ann@Example.com", true)
	s.do(user{}, "GET", "/auth/type", nil).want(t, 200, fmt.Sprintf(`{"auth_type":"oidc","requires_verification":false,
		"anonymous_user_enabled":false,"password_min_length":12,"local_accounts":false,"registration":"",
		"oidc":{"display_name":"Example SSO","login_url":%q}}`, s.srv.URL+"/auth/oidc/login"))

	b := s.newBrowser()
	cb := b.authorize(s, "u-ann")
	r := b.get(cb.String())
	s.wantRedirect(t, r, "?view=status")
	c := sessionCookie(r)
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
		t.Fatalf("session cookie %+v", c)
	}
	var me struct {
		ID, Email, Role string
		Name            *string
	}
	b.get("/me").decodeInto(t, &me)
	if me.Email != "Ann@Example.com" || me.Role != "basic" || me.Name == nil || *me.Name != "Name of u-ann" {
		t.Errorf("/me %+v", me)
	}
	// The person's requests with the cookie work as any caller's, with the
	// same role rules.
	ann := user{cookie: c.Value, id: me.ID, email: me.Email}
	cred := s.createCredential(ann, `{"credential_json": {"token": "ann-secret-token-987"}, "admin_public": false, "source": "web"}`)
	s.do(ann, "GET", "/manage/admin/connector/status", nil).want(t, 403, fxNotCurator)
	s.do(ann, "GET", fmt.Sprintf("/manage/credential/%d", cred), nil).decode(t, new(any))

	t.Run("cross-site requests with the session", func(t *testing.T) {
		body := `{"credential_json": {"k": "cross-site-value-1"}, "admin_public": false, "source": "web"}`
		b.send("POST", "/manage/credential", body, "Content-Type", "application/json", "Sec-Fetch-Site", "cross-site").
			want(t, 403, `{"detail":"Cross-origin request refused"}`)
		b.send("POST", "/manage/credential", body, "Content-Type", "application/json", "Sec-Fetch-Site", "same-origin").
			decodeInto(t, new(any))
	})
	t.Run("replayed callback", func(t *testing.T) {
		before := len(s.sessions(t))
		s.wantRedirect(t, b.get(cb.String()), "?signin_error=state")
		if c := sessionCookie(b.get(cb.String())); c != nil && c.MaxAge >= 0 {
			t.Errorf("a replayed callback set a session cookie")
		}
		if n := len(s.sessions(t)); n != before {
			t.Errorf("%d sessions after a replay, want %d", n, before)
		}
	})
	t.Run("sign out at the provider too", func(t *testing.T) {
		r := b.send("POST", "/auth/logout", "", "Origin", s.srv.URL)
		var out struct {
			RedirectURL string `json:"redirect_url"`
		}
		r.decodeInto(t, &out)
		u, err := url.Parse(out.RedirectURL)
		if err != nil || !strings.HasPrefix(out.RedirectURL, s.op.Issuer+"/end_session?") || u.Query().Get("id_token_hint") == "" ||
			u.Query().Get("post_logout_redirect_uri") != s.srv.URL+"/" || u.Query().Get("client_id") != ssoClient {
			t.Fatalf("redirect_url %q", out.RedirectURL)
		}
		back := b.get(out.RedirectURL)
		if loc := back.header.Get("Location"); back.status/100 != 3 || !strings.HasPrefix(loc, s.srv.URL+"/") {
			t.Errorf("the provider answered %d to %q, want a redirect back to Quarry", back.status, loc)
		}
		b.get("/me").want(t, 401, fxNotAuthed)
		s.do(ann, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	})
	t.Run("same person, same account", func(t *testing.T) {
		b := s.newBrowser()
		s.wantRedirect(t, b.get(b.authorize(s, "u-ann").String()), "?view=status")
		if got := s.people(); len(got) != 1 {
			t.Errorf("people %v, want Ann once", got)
		}
	})
	t.Run("the session expires", func(t *testing.T) {
		b := s.newBrowser()
		s.wantRedirect(t, b.get(b.authorize(s, "u-ann").String()), "?view=status")
		b.get("/me").decodeInto(t, new(any))
		s.advance(12*time.Hour + time.Minute) // the default idle time-out
		b.get("/me").want(t, 401, fxNotAuthed)
	})
}

// sessions returns every open session.
func (s *ssoEnv) sessions(t *testing.T) []*quarry.Session {
	t.Helper()
	ss, err := s.db.Sessions(context.Background(), "", quarry.SessionPolicy{Idle: time.Hour, Absolute: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// decodeInto decodes the JSON body of a 2xx response.
func (r *response) decodeInto(t *testing.T, v any) {
	t.Helper()
	r.decode(t, v)
}

func TestSingleSignOnRefusals(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t))
	s.waitReady()
	s.addUser("u-ok", "ok@example.com", true)
	s.addUser("u-unverified", "unverified@example.com", false)

	for _, tc := range []struct {
		name string
		run  func(t *testing.T, b *browser) *response
		want string
	}{
		{"state of another browser", func(t *testing.T, b *browser) *response {
			cb := b.authorize(s, "u-ok")
			return s.newBrowser().get(cb.String())
		}, "state"},
		{"tampered state", func(t *testing.T, b *browser) *response {
			cb := b.authorize(s, "u-ok")
			q := cb.Query()
			q.Set("state", q.Get("state")+"x")
			cb.RawQuery = q.Encode()
			return b.get(cb.String())
		}, "state"},
		{"no state", func(t *testing.T, b *browser) *response {
			return b.get("/auth/oidc/callback?code=abc")
		}, "state"},
		{"missing code", func(t *testing.T, b *browser) *response {
			cb := b.authorize(s, "u-ok")
			q := cb.Query()
			q.Del("code")
			cb.RawQuery = q.Encode()
			return b.get(cb.String())
		}, "code"},
		{"wrong code", func(t *testing.T, b *browser) *response {
			cb := b.authorize(s, "u-ok")
			q := cb.Query()
			q.Set("code", "not-a-code")
			cb.RawQuery = q.Encode()
			return b.get(cb.String())
		}, "code"},
		{"denied at the provider", func(t *testing.T, b *browser) *response {
			cb, err := s.op.Deny(b.c, s.srv.URL+"/auth/oidc/login")
			if err != nil {
				t.Fatal(err)
			}
			return b.get(cb.String())
		}, "provider"},
		{"ID token with a wrong nonce", func(t *testing.T, b *browser) *response {
			cb := b.authorize(s, "u-ok")
			// The sign-in kept for this state now expects another nonce.
			state := cb.Query().Get("state")
			var l auth.Login
			if _, err := s.db.TakeOIDCLogin(context.Background(), state, &l); err != nil {
				t.Fatal(err)
			}
			l.Nonce = "another nonce"
			if err := s.db.BeginOIDCLogin(context.Background(), state, &l, "/"); err != nil {
				t.Fatal(err)
			}
			return b.get(cb.String())
		}, "token"},
		{"unverified email", func(t *testing.T, b *browser) *response {
			return b.get(b.authorize(s, "u-unverified").String())
		}, "email_unverified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := s.newBrowser()
			r := tc.run(t, b)
			s.wantRedirect(t, r, "?signin_error="+tc.want)
			if c := sessionCookie(r); c != nil && c.MaxAge >= 0 {
				t.Errorf("a session cookie was set: %+v", c)
			}
			if got := s.people(); len(got) != 0 {
				t.Errorf("people %v after a refused sign-in, want none", got)
			}
			if n := len(s.sessions(t)); n != 0 {
				t.Errorf("%d sessions after a refused sign-in", n)
			}
		})
	}

	t.Run("expired ID token", func(t *testing.T) {
		op := authtest.Start(t)
		expired := newSSOEnv(t, op)
		expired.waitReady()
		op.AddClient(authtest.Client{ID: ssoClient, Secret: ssoSecret, RedirectURIs: []string{expired.srv.URL + "/auth/oidc/callback"},
			IDTokenLifetime: -time.Minute})
		expired.addUser("u-ok", "ok@example.com", true)
		b := expired.newBrowser()
		expired.wantRedirect(t, b.get(b.authorize(expired, "u-ok").String()), "?signin_error=token")
	})
	t.Run("next is kept on this site", func(t *testing.T) {
		for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "/\xe9"} {
			b := s.newBrowser()
			cb, err := s.op.Authorize(b.c, s.srv.URL+"/auth/oidc/login?next="+url.QueryEscape(next), "u-ok", "pw-u-ok")
			if err != nil {
				t.Fatal(err)
			}
			s.wantRedirect(t, b.get(cb.String()), "")
		}
	})
}

func TestSingleSignOnRolesAndDeactivation(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t))
	s.waitReady()
	s.addUser("u-boss", "boss@example.com", true)
	s.addUser("u-cur", "cur@example.com", true, "staff", "quarry-curators")
	s.addUser("u-adm", "adm@example.com", true, "quarry-admins")
	role := func(subject string) (string, user) {
		t.Helper()
		b := s.newBrowser()
		r := b.get(b.authorize(s, subject).String())
		c := sessionCookie(r)
		if c == nil {
			t.Fatalf("%s was not signed in: %s", subject, r.header.Get("Location"))
		}
		var me struct{ ID, Email, Role string }
		b.get("/me").decodeInto(t, &me)
		return me.Role, user{cookie: c.Value, id: me.ID, email: me.Email}
	}
	for subject, want := range map[string]string{"u-boss": "admin", "u-cur": "global_curator", "u-adm": "admin"} {
		if got, _ := role(subject); got != want {
			t.Errorf("%s signed in as %s, want %s", subject, got, want)
		}
	}
	// The provider decides: a curator who leaves the group is basic at the
	// next sign-in.
	s.addUser("u-cur", "cur@example.com", true, "staff")
	got, cur := role("u-cur")
	if got != "basic" {
		t.Errorf("after leaving quarry-curators: %s", got)
	}
	// An admin deactivates the person: their session and their access
	// tokens stop at once, and signing in again is refused.
	_, boss := role("u-boss")
	token := s.op.AccessToken(t, ssoClient, ssoSecret, "u-cur", "pw-u-cur")
	s.do(user{token: token}, "GET", "/me", nil).decode(t, new(any))
	s.do(boss, "PATCH", "/manage/admin/deactivate-user", `{"user_email": "cur@example.com"}`).want(t, 200, `null`)
	s.do(cur, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	s.do(user{token: token}, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	b := s.newBrowser()
	s.wantRedirect(t, b.get(b.authorize(s, "u-cur").String()), "?signin_error=inactive")
	// The people listing shows where they sign in.
	s.do(boss, "GET", "/manage/users/accepted?q=cur@", nil).want(t, 200, `{"total_items":1,"items":[`+
		namedSnapshotJSON(cur.id, "cur@example.com", "Name of u-cur", "basic", false, nil, s.op.Issuer)+`]}`)
}

func TestAccessTokens(t *testing.T) {
	op := authtest.Start(t)
	s := newSSOEnv(t, op)
	s.waitReady()
	s.addUser("u-ann", "ann@example.com", true)
	op.AddClient(authtest.Client{ID: "other-app", Secret: "other-secret", RedirectURIs: []string{"http://127.0.0.1:1/cb"}})

	valid := op.AccessToken(t, ssoClient, ssoSecret, "u-ann", "pw-u-ann")
	s.do(user{token: valid}, "GET", "/me", nil).decode(t, new(any))
	// The token's person is the one who signs in with the browser.
	if got := s.people(); len(got) != 1 || got[0] != "ann@example.com" {
		t.Errorf("people %v", got)
	}

	claims := func(change func(map[string]any)) map[string]any {
		c := op.Claims(ssoClient, "u-ann")
		change(c)
		return c
	}
	now := time.Now().Unix()
	foreign, _ := rsa.GenerateKey(rand.Reader, 2048)
	tampered := func() string {
		parts := strings.Split(op.Sign(op.Claims(ssoClient, "u-ann")), ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		payload = []byte(strings.Replace(string(payload), `"u-ann"`, `"u-bob"`, 1))
		parts[1] = base64.RawURLEncoding.EncodeToString(payload)
		return strings.Join(parts, ".")
	}
	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"signed by the provider", op.Sign(claims(func(map[string]any) {})), true},
		{"expired 10 s ago, within the skew", op.Sign(claims(func(c map[string]any) { c["exp"] = now - 10 })), true},
		{"expired", op.Sign(claims(func(c map[string]any) { c["exp"] = now - 120 })), false},
		{"no expiry", op.Sign(claims(func(c map[string]any) { delete(c, "exp") })), false},
		{"not valid yet", op.Sign(claims(func(c map[string]any) { c["nbf"] = now + 120 })), false},
		{"another audience", op.AccessToken(t, "other-app", "other-secret", "u-ann", "pw-u-ann"), false},
		{"another issuer", op.Sign(claims(func(c map[string]any) { c["iss"] = "https://evil.example" })), false},
		{"an ID token (it has a nonce)", op.Sign(claims(func(c map[string]any) { c["nonce"] = "n" })), false},
		{"alg none", authtest.Unsigned(claims(func(map[string]any) {})), false},
		{"tampered", tampered(), false},
		{"a key the provider never published, its kid", op.SignWith(foreign, op.KeyID(), claims(func(map[string]any) {})), false},
		{"a key the provider never published, a new kid", op.SignWith(foreign, "made-up", claims(func(map[string]any) {})), false},
		{"a subject never seen, without an email", op.Sign(claims(func(c map[string]any) { c["sub"] = "u-new"; delete(c, "email") })), false},
		{"no subject", op.Sign(claims(func(c map[string]any) { c["sub"] = "" })), false},
		{"issued to another client for this audience", op.Sign(claims(func(c map[string]any) { c["client_id"] = "other-app" })), false},
		{"issued to another client (azp)", op.Sign(claims(func(c map[string]any) { c["azp"] = "other-app" })), false},
		{"an ID token (at_hash)", op.Sign(claims(func(c map[string]any) { c["at_hash"] = "x" })), false},
		{"an ID token (Keycloak's typ)", op.Sign(claims(func(c map[string]any) { c["typ"] = "ID" })), false},
		{"not a JWT at all", "a.b.c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(user{token: tc.token}, "GET", "/me", nil)
			if tc.ok {
				r.decode(t, new(any))
				return
			}
			r.want(t, 401, fxNotAuthed)
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
				t.Errorf("WWW-Authenticate %q", got)
			}
		})
	}
	t.Run("after the provider rotates its keys", func(t *testing.T) {
		op.RotateKey()
		op.RetireOldKeys()
		s.do(user{token: op.AccessToken(t, ssoClient, ssoSecret, "u-ann", "pw-u-ann")}, "GET", "/me", nil).decode(t, new(any))
		// A token of the retired key no longer opens anything.
		s.do(user{token: valid}, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	})
}

// TestProviderDownAtStart starts Quarry while the provider does not
// answer: sign-in waits for it (503, /ready says why), API keys work, and
// once the provider is up single sign-on works without a restart.
func TestProviderDownAtStart(t *testing.T) {
	op := authtest.New(t)
	s := newSSOEnv(t, op)
	s.do(user{}, "GET", "/auth/oidc/login", nil).want(t, 503,
		`{"detail":"The single sign-on provider cannot be reached; try again shortly"}`)
	s.do(user{token: "x.y.z"}, "GET", "/me", nil).want(t, 503,
		`{"detail":"The single sign-on provider cannot be reached; try again shortly"}`)
	s.do(s.admin, "GET", "/me", nil).decode(t, new(any))
	s.do(user{}, "GET", "/ready", nil).want(t, 200,
		`{"status":"ready","single_sign_on":"The OpenID provider cannot be reached (the connection was refused); trying again"}`)
	op.Serve()
	s.waitReady()
	s.do(user{}, "GET", "/ready", nil).want(t, 200, `{"status":"ready"}`)
	s.addUser("u-ann", "ann@example.com", true)
	b := s.newBrowser()
	s.wantRedirect(t, b.get(b.authorize(s, "u-ann").String()), "?view=status")
}

// TestSingleSignOnLinking: a local account with the person's email is
// linked only when the provider says the email is verified, and then a
// stranger who registered that email loses it.
func TestSingleSignOnLinking(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t), withLocalAccounts, func(c *auth.OIDCConfig) { c.Domains = []string{"example.com"} })
	s.waitReady()
	s.register("first@example.com", goodSecret) // the first person
	// A stranger registers Vic's email before Vic ever signs on.
	stranger := s.person("vic@example.com")
	_, pat := s.makePAT(t, stranger, `{"name":"mine"}`)
	s.addUser("u-vic", "vic@example.com", true)
	b := s.newBrowser()
	s.wantRedirect(t, b.get(b.authorize(s, "u-vic").String()), "?view=status")
	var me struct{ ID string }
	b.get("/me").decodeInto(t, &me)
	if me.ID != stranger.id {
		t.Errorf("Vic signed in to account %s, want the one with the email, %s", me.ID, stranger.id)
	}
	// The stranger's session, token and password are gone: the account
	// changed hands (quarry.User.HandsOver).
	s.do(stranger, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	s.do(user{token: pat}, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	s.login("vic@example.com", goodSecret).want(t, 400, `{"detail":"Wrong email or password"}`)
	s.do(user{}, "GET", "/manage/users/accepted?q=vic", nil, "Cookie", "fastapiusersauth="+sessionOf(t, b, s)).want(t, 403, fxNotAdmin)

	t.Run("another domain", func(t *testing.T) {
		s.addUser("u-out", "out@elsewhere.org", true)
		b := s.newBrowser()
		s.wantRedirect(t, b.get(b.authorize(s, "u-out").String()), "?signin_error=domain")
	})
	t.Run("two sign-ins started in two tabs", func(t *testing.T) {
		b := s.newBrowser()
		first := b.authorize(s, "u-vic")
		second := b.authorize(s, "u-vic")
		s.wantRedirect(t, b.get(first.String()), "?view=status")
		s.wantRedirect(t, b.get(second.String()), "?view=status")
		// Each sign-in ended the session it was made over.
		if n := len(s.sessionsOf(t, "vic@example.com")); n != 2 {
			t.Errorf("%d sessions of Vic, want 2 (the first browser's and this one's)", n)
		}
	})
}

// sessionOf returns the session token in b's cookie jar.
func sessionOf(t *testing.T, b *browser, s *ssoEnv) string {
	t.Helper()
	u, _ := url.Parse(s.srv.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "fastapiusersauth" {
			return c.Value
		}
	}
	t.Fatal("no session cookie in the browser")
	return ""
}

// sessionsOf returns the open sessions of the person with email.
func (s *ssoEnv) sessionsOf(t *testing.T, email string) []*quarry.Session {
	t.Helper()
	ss, err := s.db.Sessions(context.Background(), email, quarry.SessionPolicy{Idle: time.Hour, Absolute: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return ss
}
