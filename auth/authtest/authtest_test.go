package authtest_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/quarryhq/quarry/auth/authtest"
)

const (
	clientID     = "quarry"
	clientSecret = "quarry-secret"
)

var ada = authtest.User{
	Subject:       "ada-1",
	Email:         "ada@example.com",
	EmailVerified: true,
	Name:          "Ada Lovelace",
	Groups:        []string{"admins", "research"},
	Password:      "correct horse",
}

// relyingParty is a minimal server-side relying party: /login starts an
// authorization code flow with PKCE, state and nonce, as Quarry's does.
type relyingParty struct {
	*httptest.Server
	op                     *oidc.Provider // the provider, discovered
	conf                   oauth2.Config
	state, nonce, verifier string
}

// setup starts a provider with ada and a client whose redirect URI is the
// relying party's /callback, and the relying party itself.
func setup(t *testing.T) (*authtest.Provider, *relyingParty) {
	t.Helper()
	p := authtest.Start(t)
	rp := &relyingParty{state: "st-" + rand.Text(), nonce: "n-" + rand.Text(), verifier: oauth2.GenerateVerifier()}
	rp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/login" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, rp.conf.AuthCodeURL(rp.state, oauth2.S256ChallengeOption(rp.verifier), oidc.Nonce(rp.nonce)), http.StatusFound)
	}))
	t.Cleanup(rp.Close)
	rp.conf = oauth2.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		RedirectURL:  rp.URL + "/callback",
		Scopes:       []string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeProfile, authtest.ScopeGroups},
	}
	p.AddClient(authtest.Client{
		ID:                     clientID,
		Secret:                 clientSecret,
		RedirectURIs:           []string{rp.URL + "/callback"},
		PostLogoutRedirectURIs: []string{rp.URL + "/signed-out"},
	})
	p.AddUser(ada)
	rp.op = discover(t, p)
	rp.conf.Endpoint = rp.op.Endpoint()
	return p, rp
}

func newBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

func discover(t *testing.T, p *authtest.Provider) *oidc.Provider {
	t.Helper()
	op, err := oidc.NewProvider(t.Context(), p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// signIn runs the flow from the relying party's /login and returns the code.
func signIn(t *testing.T, p *authtest.Provider, rp *relyingParty) string {
	t.Helper()
	callback, err := p.Authorize(newBrowser(), rp.URL+"/login", ada.Email, ada.Password)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := callback.Scheme+"://"+callback.Host+callback.Path, rp.URL+"/callback"; got != want {
		t.Fatalf("callback %s, want %s", callback, want)
	}
	q := callback.Query()
	if q.Get("state") != rp.state || q.Get("code") == "" {
		t.Fatalf("callback %s: want state %q and a code", callback, rp.state)
	}
	return q.Get("code")
}

func claimsOf(t *testing.T, v interface{ Claims(any) error }) map[string]any {
	t.Helper()
	var m map[string]any
	if err := v.Claims(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCodeFlow(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	op := rp.op

	code := signIn(t, p, rp)
	tok, err := rp.conf.Exchange(ctx, code, oauth2.VerifierOption(rp.verifier))
	if err != nil {
		t.Fatal(err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	idt, err := op.Verifier(&oidc.Config{ClientID: clientID}).Verify(ctx, rawID)
	if err != nil {
		t.Fatal(err)
	}
	if idt.Nonce != rp.nonce {
		t.Errorf("nonce %q, want %q", idt.Nonce, rp.nonce)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Errorf("at_hash: %v", err)
	}
	got := claimsOf(t, idt)
	if exp := time.Unix(int64(got["exp"].(float64)), 0); time.Until(exp) > authtest.DefaultLifetime || time.Until(exp) < authtest.DefaultLifetime-time.Minute {
		t.Errorf("ID token expires at %v, want about %v from now", exp, authtest.DefaultLifetime)
	}
	for _, k := range []string{"exp", "iat", "auth_time", "at_hash", "c_hash"} {
		if _, ok := got[k]; !ok {
			t.Errorf("ID token has no %s", k)
		}
		delete(got, k)
	}
	want := map[string]any{
		"iss": p.Issuer, "sub": ada.Subject, "aud": []any{clientID}, "azp": clientID, "client_id": clientID,
		"nonce": rp.nonce, "amr": []any{"pwd"},
		"email": ada.Email, "email_verified": true, "name": ada.Name, "groups": []any{"admins", "research"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ID token claims (-want +got):\n%s", diff)
	}

	// The same claims at the userinfo endpoint, with the access token.
	ui, err := op.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{
		"sub": ada.Subject, "email": ada.Email, "email_verified": true, "name": ada.Name, "groups": []any{"admins", "research"},
	}, claimsOf(t, ui)); diff != "" {
		t.Errorf("userinfo (-want +got):\n%s", diff)
	}

	// A code works once.
	if _, err := rp.conf.Exchange(ctx, code, oauth2.VerifierOption(rp.verifier)); !isOAuthError(err, "invalid_grant") {
		t.Errorf("replayed code: %v, want invalid_grant", err)
	}
}

func isOAuthError(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}

func TestTokenEndpointChecks(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()

	// client_secret_post.
	post := rp.conf
	post.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	if _, err := post.Exchange(ctx, signIn(t, p, rp), oauth2.VerifierOption(rp.verifier)); err != nil {
		t.Errorf("client_secret_post: %v", err)
	}

	basic := rp.conf
	basic.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	for _, tc := range []struct {
		name string
		conf oauth2.Config
		opts []oauth2.AuthCodeOption
		want string
	}{
		{"no code_verifier", basic, nil, "invalid_request"},
		{"wrong code_verifier", basic, []oauth2.AuthCodeOption{oauth2.VerifierOption(oauth2.GenerateVerifier())}, "invalid_grant"},
		{"wrong secret", func() oauth2.Config { c := basic; c.ClientSecret = "nope"; return c }(), []oauth2.AuthCodeOption{oauth2.VerifierOption(rp.verifier)}, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.conf.Exchange(ctx, signIn(t, p, rp), tc.opts...); !isOAuthError(err, tc.want) {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestLoginRefusedAndDenied(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)

	if _, err := p.Authorize(newBrowser(), rp.URL+"/login", ada.Email, "wrong"); !errors.Is(err, authtest.ErrLoginFailed) {
		t.Errorf("wrong password: %v, want ErrLoginFailed", err)
	}
	if _, err := p.Authorize(newBrowser(), rp.URL+"/login", "nobody", ada.Password); !errors.Is(err, authtest.ErrLoginFailed) {
		t.Errorf("unknown user: %v, want ErrLoginFailed", err)
	}
	// The subject works as a username too.
	if _, err := p.Authorize(newBrowser(), rp.URL+"/login", ada.Subject, ada.Password); err != nil {
		t.Errorf("sign-in by subject: %v", err)
	}

	callback, err := p.Deny(newBrowser(), rp.URL+"/login")
	if err != nil {
		t.Fatal(err)
	}
	q := callback.Query()
	if !strings.HasPrefix(callback.String(), rp.URL+"/callback?") || q.Get("error") != "access_denied" || q.Get("error_description") == "" || q.Get("state") != rp.state || q.Has("code") {
		t.Errorf("deny: %s", callback)
	}
}

func TestAuthorizeErrors(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	conf := rp.conf

	// prompt=none: the provider has no session, so the RP gets login_required.
	callback, err := p.Authorize(newBrowser(), conf.AuthCodeURL("s1", oauth2.SetAuthURLParam("prompt", "none")), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if q := callback.Query(); q.Get("error") != "login_required" || q.Get("state") != "s1" {
		t.Errorf("prompt=none: %s", callback)
	}

	// An unregistered redirect URI is refused at the provider.
	conf.RedirectURL = rp.URL + "/elsewhere"
	if _, err := p.Authorize(newBrowser(), conf.AuthCodeURL("s2"), ada.Email, ada.Password); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("unregistered redirect_uri: %v, want a 400", err)
	}
}

func TestAccessToken(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	verifier := rp.op.Verifier(&oidc.Config{ClientID: clientID})

	at := p.AccessToken(t, clientID, clientSecret, ada.Email, ada.Password)
	tok, err := verifier.Verify(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	got := claimsOf(t, tok)
	for _, k := range []string{"exp", "iat", "nbf", "jti"} {
		if _, ok := got[k]; !ok {
			t.Errorf("access token has no %s", k)
		}
		delete(got, k)
	}
	want := map[string]any{
		"iss": p.Issuer, "sub": ada.Subject, "aud": []any{clientID}, "client_id": clientID,
		"scope": "openid email profile groups",
		"email": ada.Email, "email_verified": true, "name": ada.Name, "groups": []any{"admins", "research"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access token claims (-want +got):\n%s", diff)
	}

	// Claims gives the same shape, ready to be changed and signed.
	fake := p.Claims(clientID, ada.Subject)
	for _, k := range []string{"exp", "iat", "nbf", "jti"} {
		delete(fake, k)
	}
	want["aud"] = []string{clientID}
	want["groups"] = []string{"admins", "research"}
	if diff := cmp.Diff(want, fake); diff != "" {
		t.Errorf("Claims (-want +got):\n%s", diff)
	}

	// A changed user gets new claims in new tokens; email_verified false is explicit.
	changed := ada
	changed.EmailVerified, changed.Groups = false, nil
	p.AddUser(changed)
	tok, err = verifier.Verify(ctx, p.AccessToken(t, clientID, clientSecret, ada.Email, ada.Password))
	if err != nil {
		t.Fatal(err)
	}
	got = claimsOf(t, tok)
	if got["email_verified"] != false || !cmp.Equal(got["groups"], []any{}) {
		t.Errorf("changed user: email_verified %v, groups %v", got["email_verified"], got["groups"])
	}
}

func TestLifetimes(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	p.AddClient(authtest.Client{
		ID: clientID, Secret: clientSecret, RedirectURIs: []string{rp.URL + "/callback"},
		AccessTokenLifetime: 2 * time.Second, IDTokenLifetime: -time.Minute,
	})

	tok, err := rp.conf.Exchange(ctx, signIn(t, p, rp), oauth2.VerifierOption(rp.verifier))
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(tok.Expiry); left > 2*time.Second || left < 0 {
		t.Errorf("expires_in gives %v, want at most 2s", left)
	}
	// A verifier whose clock is 3 seconds ahead sees the access token expired.
	verifier := rp.op.Verifier(&oidc.Config{ClientID: clientID})
	if _, err := verifier.Verify(ctx, tok.AccessToken); err != nil {
		t.Errorf("access token: %v", err)
	}
	later := rp.op.Verifier(&oidc.Config{ClientID: clientID, Now: func() time.Time { return time.Now().Add(3 * time.Second) }})
	if _, err := later.Verify(ctx, tok.AccessToken); !isExpired(err) {
		t.Errorf("access token 3s later: %v, want expired", err)
	}
	// The ID token was issued expired.
	if _, err := verifier.Verify(ctx, tok.Extra("id_token").(string)); !isExpired(err) {
		t.Errorf("ID token: %v, want expired", err)
	}
}

func isExpired(err error) bool {
	_, ok := errors.AsType[*oidc.TokenExpiredError](err)
	return ok
}

func jwksKids(t *testing.T, p *authtest.Provider) []string {
	t.Helper()
	resp, err := http.Get(p.Issuer + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct{ Kid, Alg, Use, Kty string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		if k.Alg != "RS256" || k.Use != "sig" || k.Kty != "RSA" {
			t.Errorf("key %+v", k)
		}
		kids = append(kids, k.Kid)
	}
	return kids
}

func TestRotateKey(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	verifier := rp.op.Verifier(&oidc.Config{ClientID: clientID})

	oldKid := p.KeyID()
	oldToken := p.AccessToken(t, clientID, clientSecret, ada.Email, ada.Password)
	if _, err := verifier.Verify(ctx, oldToken); err != nil {
		t.Fatal(err)
	}

	p.RotateKey()
	newKid := p.KeyID()
	if newKid == oldKid {
		t.Fatal("RotateKey kept the kid")
	}
	if got, want := jwksKids(t, p), []string{newKid, oldKid}; !slices.Equal(got, want) {
		t.Errorf("keys after RotateKey %v, want %v", got, want)
	}
	// The verifier has cached the old key set; the new kid makes it fetch again.
	if _, err := verifier.Verify(ctx, p.AccessToken(t, clientID, clientSecret, ada.Email, ada.Password)); err != nil {
		t.Errorf("token signed by the new key: %v", err)
	}
	if _, err := verifier.Verify(ctx, oldToken); err != nil {
		t.Errorf("token signed by the old key while it is still published: %v", err)
	}

	p.RetireOldKeys()
	if got, want := jwksKids(t, p), []string{newKid}; !slices.Equal(got, want) {
		t.Errorf("keys after RetireOldKeys %v, want %v", got, want)
	}
	fresh := discover(t, p).Verifier(&oidc.Config{ClientID: clientID})
	if _, err := fresh.Verify(ctx, oldToken); err == nil {
		t.Error("token signed by a retired key verified")
	}
}

func TestStopServe(t *testing.T) {
	t.Parallel()
	p := authtest.New(t)
	p.AddUser(ada)
	p.AddClient(authtest.Client{ID: clientID, Secret: clientSecret, RedirectURIs: []string{"http://127.0.0.1:1/callback"}})
	if _, err := oidc.NewProvider(t.Context(), p.Issuer); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("before Serve: %v, want connection refused", err)
	}

	p.Serve()
	issuer := p.Issuer
	token := p.AccessToken(t, clientID, clientSecret, ada.Subject, ada.Password)
	discover(t, p)

	p.Stop()
	if _, err := oidc.NewProvider(t.Context(), p.Issuer); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("after Stop: %v, want connection refused", err)
	}

	p.Serve()
	if p.Issuer != issuer {
		t.Errorf("issuer %s after Serve, was %s", p.Issuer, issuer)
	}
	// Same keys: the token from before verifies against the key set served now.
	if _, err := discover(t, p).Verifier(&oidc.Config{ClientID: clientID}).Verify(t.Context(), token); err != nil {
		t.Error(err)
	}
}

func TestSign(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	verifier := rp.op.Verifier(&oidc.Config{ClientID: clientID})
	foreign, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other := authtest.Start(t)

	with := func(changes map[string]any) map[string]any {
		c := p.Claims(clientID, ada.Subject)
		for k, v := range changes {
			c[k] = v
		}
		return c
	}
	valid := p.Sign(with(nil))
	if _, err := verifier.Verify(ctx, valid); err != nil {
		t.Fatalf("signed claims: %v", err)
	}
	// The valid token with another subject in its payload, signature kept.
	parts := strings.Split(valid, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	payload = bytes.Replace(payload, []byte(`"sub":"`+ada.Subject+`"`), []byte(`"sub":"root"`), 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]

	for name, jwt := range map[string]string{
		"expired":              p.Sign(with(map[string]any{"exp": time.Now().Add(-time.Minute).Unix()})),
		"not yet valid":        p.Sign(with(map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})),
		"another audience":     p.Sign(with(map[string]any{"aud": "someone-else"})),
		"another issuer":       other.Sign(with(map[string]any{"iss": other.Issuer})),
		"alg none":             authtest.Unsigned(with(nil)),
		"foreign key, our kid": p.SignWith(foreign, p.KeyID(), with(nil)),
		"foreign key and kid":  p.SignWith(foreign, "unknown", with(nil)),
		"tampered":             tampered,
	} {
		if _, err := verifier.Verify(ctx, jwt); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	_, err = verifier.Verify(ctx, p.Sign(with(map[string]any{"exp": time.Now().Add(-time.Minute).Unix()})))
	if !isExpired(err) {
		t.Errorf("expired: %v, want TokenExpiredError", err)
	}
}

func TestEndSession(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	op := rp.op
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := op.Claims(&meta); err != nil {
		t.Fatal(err)
	}

	tok, err := rp.conf.Exchange(ctx, signIn(t, p, rp), oauth2.VerifierOption(rp.verifier))
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	endSession := func(params url.Values) *http.Response {
		t.Helper()
		resp, err := noRedirect.Get(meta.EndSession + "?" + params.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	resp := endSession(url.Values{
		"id_token_hint":            {tok.Extra("id_token").(string)},
		"post_logout_redirect_uri": {rp.URL + "/signed-out"},
		"state":                    {"bye"},
	})
	if got, want := resp.Header.Get("Location"), rp.URL+"/signed-out?state=bye"; resp.StatusCode != http.StatusFound || got != want {
		t.Errorf("end session: %s to %q, want 302 to %q", resp.Status, got, want)
	}
	// The session's access token no longer works at userinfo.
	if _, err := op.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Error("userinfo accepted an access token after end session")
	}

	for _, tc := range []struct {
		name   string
		params url.Values
		status int
		to     string
	}{
		{"client_id instead of a hint", url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {rp.URL + "/signed-out"}}, http.StatusFound, rp.URL + "/signed-out"},
		{"no redirect asked for", url.Values{}, http.StatusFound, "/logged-out"},
		{"unregistered post_logout_redirect_uri", url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {rp.URL + "/elsewhere"}}, http.StatusBadRequest, ""},
	} {
		resp := endSession(tc.params)
		if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.to {
			t.Errorf("%s: %s to %q, want %d to %q", tc.name, resp.Status, resp.Header.Get("Location"), tc.status, tc.to)
		}
	}
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	var got struct {
		Issuer      string   `json:"issuer"`
		Auth        string   `json:"authorization_endpoint"`
		Token       string   `json:"token_endpoint"`
		Userinfo    string   `json:"userinfo_endpoint"`
		Keys        string   `json:"jwks_uri"`
		EndSession  string   `json:"end_session_endpoint"`
		Scopes      []string `json:"scopes_supported"`
		Claims      []string `json:"claims_supported"`
		PKCE        []string `json:"code_challenge_methods_supported"`
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
		IDTokenAlgs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := rp.op.Claims(&got); err != nil {
		t.Fatal(err)
	}
	i := p.Issuer
	for name, pair := range map[string][2]string{
		"issuer": {got.Issuer, i}, "authorization": {got.Auth, i + "/authorize"}, "token": {got.Token, i + "/oauth/token"},
		"userinfo": {got.Userinfo, i + "/userinfo"}, "jwks": {got.Keys, i + "/keys"}, "end_session": {got.EndSession, i + "/end_session"},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: %q, want %q", name, pair[0], pair[1])
		}
	}
	for name, pair := range map[string]struct {
		list []string
		want []string
	}{
		"scopes":       {got.Scopes, []string{"openid", "email", "profile", "groups"}},
		"claims":       {got.Claims, []string{"email", "email_verified", "name", "groups", "nonce", "azp"}},
		"pkce":         {got.PKCE, []string{"S256"}},
		"auth methods": {got.AuthMethods, []string{"client_secret_basic", "client_secret_post"}},
		"algorithms":   {got.IDTokenAlgs, []string{"RS256"}},
	} {
		for _, w := range pair.want {
			if !slices.Contains(pair.list, w) {
				t.Errorf("%s %v lacks %q", name, pair.list, w)
			}
		}
	}
}

// TestRefreshTokens checks the refresh_token grant of a client that may
// use it: offline_access brings a refresh token, each refresh rotates it,
// a refresh token used twice or revoked fails with invalid_grant.
func TestRefreshTokens(t *testing.T) {
	t.Parallel()
	p, rp := setup(t)
	ctx := t.Context()
	p.AddClient(authtest.Client{ID: clientID, Secret: clientSecret, RedirectURIs: []string{rp.URL + "/callback"}, RefreshTokens: true})

	// Without offline_access, no refresh token.
	tok, err := rp.conf.Exchange(ctx, signIn(t, p, rp), oauth2.VerifierOption(rp.verifier))
	if err != nil || tok.RefreshToken != "" {
		t.Fatalf("without offline_access: %v, refresh token %q", err, tok.RefreshToken)
	}
	rp.conf.Scopes = append(rp.conf.Scopes, oidc.ScopeOfflineAccess)
	tok, err = rp.conf.Exchange(ctx, signIn(t, p, rp), oauth2.VerifierOption(rp.verifier))
	if err != nil || tok.RefreshToken == "" {
		t.Fatalf("with offline_access: %v, refresh token %q", err, tok.RefreshToken)
	}
	refresh := func(rt string) (*oauth2.Token, error) {
		return rp.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: rt, Expiry: time.Unix(1, 0)}).Token()
	}
	next, err := refresh(tok.RefreshToken)
	if err != nil || next.AccessToken == "" || next.AccessToken == tok.AccessToken || next.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v, %+v", err, next)
	}
	if p.Refreshes() != 1 {
		t.Errorf("Refreshes() = %d, want 1", p.Refreshes())
	}
	// The new access token works at userinfo; the used refresh token does not refresh again.
	if _, err := rp.op.UserInfo(ctx, oauth2.StaticTokenSource(next)); err != nil {
		t.Errorf("userinfo with the refreshed token: %v", err)
	}
	if _, err := refresh(tok.RefreshToken); !isOAuthError(err, "invalid_grant") {
		t.Errorf("a used refresh token: %v, want invalid_grant", err)
	}
	if n := p.RevokeRefreshTokens(ada.Subject); n != 1 {
		t.Errorf("revoked %d refresh tokens, want 1", n)
	}
	if _, err := refresh(next.RefreshToken); !isOAuthError(err, "invalid_grant") {
		t.Errorf("a revoked refresh token: %v, want invalid_grant", err)
	}
	if p.Refreshes() != 1 {
		t.Errorf("Refreshes() = %d, want 1", p.Refreshes())
	}
}
