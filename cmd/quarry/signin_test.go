package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/auth/authtest"
)

// TestServeSignInSettings: the sign-in settings that cannot work are
// refused at start, saying which.
func TestServeSignInSettings(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"QUARRY_REGISTRATION": "maybe"}, `QUARRY_REGISTRATION: "maybe": want open, invite or closed`},
		{map[string]string{"QUARRY_PASSWORD_MIN_LENGTH": "6"}, `must be between 8 and 256`},
		{map[string]string{"QUARRY_REGISTRATIONS_PER_ADDRESS": "0"}, `QUARRY_REGISTRATIONS_PER_ADDRESS: "0": must be at least 1`},
		{map[string]string{"QUARRY_SESSION_IDLE_TIMEOUT": "0s"}, `QUARRY_SESSION_IDLE_TIMEOUT: "0s": must be positive`},
		{map[string]string{"QUARRY_SESSION_IDLE_TIMEOUT": "200h"}, `QUARRY_SESSION_IDLE_TIMEOUT is longer than QUARRY_SESSION_MAX_AGE`},
		{map[string]string{"QUARRY_PUBLIC_URL": "quarry.example.com"}, `QUARRY_PUBLIC_URL: "quarry.example.com" is not an http(s) URL`},
		{map[string]string{"QUARRY_OIDC_ISSUER": "https://idp.example.com"}, `single sign-on needs QUARRY_OIDC_CLIENT_ID`},
		{map[string]string{"QUARRY_OIDC_ISSUER": "https://idp.example.com", "QUARRY_OIDC_CLIENT_ID": "q"},
			`single sign-on needs QUARRY_OIDC_CLIENT_SECRET or QUARRY_OIDC_CLIENT_SECRET_FILE`},
		{map[string]string{"QUARRY_OIDC_ISSUER": "https://idp.example.com", "QUARRY_OIDC_CLIENT_ID": "q", "QUARRY_OIDC_CLIENT_SECRET": "s"},
			`single sign-on needs QUARRY_PUBLIC_URL`},
		{map[string]string{"QUARRY_OIDC_ISSUER": "https://idp.example.com", "QUARRY_OIDC_CLIENT_ID": "q",
			"QUARRY_OIDC_CLIENT_SECRET_FILE": "/nonexistent/secret"}, `QUARRY_OIDC_CLIENT_SECRET_FILE: open /nonexistent/secret`},
		{map[string]string{"QUARRY_OIDC_ROLE_MAP": "admins=owner"}, `"admins=owner" is not value=role`},
		{map[string]string{"QUARRY_OIDC_ALGORITHMS": "RS256,HS256"}, `"HS256" is not one of RS256`},
	} {
		vars := map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "q.db"), "QUARRY_ADDR": "127.0.0.1:0"}
		for k, v := range tc.vars {
			vars[k] = v
		}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"serve"}, envOf(vars), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to say %q", tc.vars, err, tc.want)
		}
	}
}

// TestServeSingleSignOn runs "quarry serve" set up by environment variables
// (the client secret in a file) for a real OpenID Provider, and signs a
// person in through the provider's login form; with the defaults, the
// first local account is an admin and registration is by invitation.
func TestServeSingleSignOn(t *testing.T) {
	op := authtest.Start(t)
	addr := procAddr(t) // free now, for a server whose public URL must be known before it starts
	base := "http://" + addr
	op.AddClient(authtest.Client{ID: "quarry", Secret: "s3cret-of-quarry", RedirectURIs: []string{base + "/auth/oidc/callback"}})
	op.AddUser(authtest.User{Subject: "u1", Email: "lead@example.com", EmailVerified: true, Password: "pw", Groups: []string{"ops"}})
	secretFile := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(secretFile, []byte("s3cret-of-quarry\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := opsServe(t, map[string]string{
		"QUARRY_ADDR":                    addr,
		"QUARRY_PUBLIC_URL":              base,
		"QUARRY_OIDC_ISSUER":             op.Issuer,
		"QUARRY_OIDC_CLIENT_ID":          "quarry",
		"QUARRY_OIDC_CLIENT_SECRET_FILE": secretFile,
		"QUARRY_OIDC_SCOPES":             "openid,email,profile,groups",
		"QUARRY_OIDC_NAME":               "Example SSO",
		"QUARRY_OIDC_ROLE_CLAIM":         "groups",
		"QUARRY_OIDC_ROLE_MAP":           "ops=global_curator",
	})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(target string) (*http.Response, string) {
		t.Helper()
		res, err := c.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	var cb *url.URL
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		// The provider is discovered in the background: sign-in answers 503
		// until then.
		var err error
		if cb, err = op.Authorize(c, s.url+"/auth/oidc/login", "u1", "pw"); err == nil {
			break
		}
		if !strings.Contains(err.Error(), "503") || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	res, body := get(cb.String())
	if res.StatusCode != 303 || res.Header.Get("Location") != base+"/" {
		t.Fatalf("callback: %d to %q: %s", res.StatusCode, res.Header.Get("Location"), body)
	}
	res, body = get(base + "/me")
	var me struct{ Email, Role string }
	if json.Unmarshal([]byte(body), &me) != nil || res.StatusCode != 200 || me.Email != "lead@example.com" || me.Role != "global_curator" {
		t.Errorf("/me after single sign-on: %d %s", res.StatusCode, body)
	}
	res, body = get(base + "/auth/type")
	if !strings.Contains(body, `"display_name":"Example SSO"`) || !strings.Contains(body, `"registration":"invite"`) {
		t.Errorf("/auth/type: %s", body)
	}
	// Local accounts are on by default, by invitation once the first person
	// (here, the one who signed on) has an account.
	reg := func(email string) int {
		res, err := http.Post(base+"/auth/register", "application/json",
			strings.NewReader(`{"email": "`+email+`", "password": "correct horse battery staple"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := reg("second@example.com"); got != 403 {
		t.Errorf("registration without an invitation: %d, want 403", got)
	}
	if strings.Contains(s.stderr.String(), "s3cret-of-quarry") {
		t.Error("the client secret is in the log")
	}
}
