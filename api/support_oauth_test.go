package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// OAuth configurations (contract section 6): the client secret is never
// returned.

// fxToolDefinition is a minimal valid custom tool definition.
const fxToolDefinition = `{"openapi":"3.0.3","info":{"title":"Ping","description":"Pings","version":"1"},
	"servers":[{"url":"https://api.example.com"}],
	"paths":{"/ping":{"get":{"operationId":"ping","summary":"Ping","responses":{"200":{"description":"OK"}}}}}}`

// fxClientSecret is the client secret of every fixture OAuth config.
const fxClientSecret = "oauth-client-secret-value-0123456789"

func fxOAuthBody(name string, extra ...any) map[string]any {
	b := map[string]any{"name": name, "authorization_url": "https://idp.example.com/authorize",
		"token_url": "https://idp.example.com/token", "client_id": "client-" + name, "client_secret": fxClientSecret}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

func fxOAuthJSON(id int64, name string, scopes []string, owner user) string {
	if scopes == nil {
		scopes = []string{}
	}
	return fmt.Sprintf(`{"id":%d,"name":%q,"authorization_url":"https://idp.example.com/authorize","token_url":"https://idp.example.com/token",
		"client_id":%q,"scopes":%s,"user_id":%q,"time_created":%q,"time_updated":%q,
		"additional_params":null,"has_client_credentials":true,"tool_count":0,"created_at":%[6]q,"updated_at":%[7]q}`,
		id, name, "client-"+name, fxJSON(scopes), owner.id, testNowJSON, testNowJSON)
}

func TestSupportOAuthConfigs(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	curator := e.user(quarry.RoleCurator, "curator")
	noSecret := func(t *testing.T, r *response) {
		t.Helper()
		if strings.Contains(string(r.body), fxClientSecret) {
			t.Errorf("the client secret is in a response: %s", r.body)
		}
	}
	var okta, plain, nulls int64
	t.Run("create", func(t *testing.T) {
		r := e.do(e.admin, "POST", "/admin/oauth-config", fxOAuthBody("okta", "scopes", []string{"read", "write"}))
		okta = f.fxOK(r)
		r.want(t, 200, fxOAuthJSON(okta, "okta", []string{"read", "write"}, e.admin))
		noSecret(t, r)
		r = e.do(e.admin, "POST", "/admin/oauth-config", fxOAuthBody("plain"))
		plain = f.fxOK(r)
		r.want(t, 200, fxOAuthJSON(plain, "plain", nil, e.admin))
		r = e.do(e.admin, "POST", "/admin/oauth-config", fxOAuthBody("nulls", "scopes", nil))
		nulls = f.fxOK(r)
		r.want(t, 200, fxOAuthJSON(nulls, "nulls", nil, e.admin))
	})
	t.Run("list", func(t *testing.T) {
		r := e.do(e.admin, "GET", "/admin/oauth-config", nil)
		r.want(t, 200, "["+fxOAuthJSON(okta, "okta", []string{"read", "write"}, e.admin)+","+
			fxOAuthJSON(plain, "plain", nil, e.admin)+","+fxOAuthJSON(nulls, "nulls", nil, e.admin)+"]")
		noSecret(t, r)
	})
	var tool int64
	t.Run("a tool uses it", func(t *testing.T) {
		r := e.do(e.admin, "POST", "/admin/tool/custom", fmt.Sprintf(`{"name":"ping","definition":%s,"passthrough_auth":false,"oauth_config_id":%d}`,
			fxToolDefinition, okta))
		var out struct {
			ID              int64  `json:"id"`
			OAuthConfigName string `json:"oauth_config_name"`
		}
		r.decode(t, &out)
		tool = out.ID
		if out.OAuthConfigName != "okta" {
			t.Errorf("oauth_config_name = %q, want okta", out.OAuthConfigName)
		}
		noSecret(t, r)
		noSecret(t, e.do(e.admin, "GET", fmt.Sprint("/tool/", tool), nil))
		e.do(e.admin, "DELETE", fmt.Sprint("/admin/oauth-config/", okta), nil).
			want(t, 409, fmt.Sprintf(`{"detail":"OAuth config %d is still used by 1 tool(s)"}`, okta))
		e.do(e.admin, "POST", "/admin/tool/custom", fmt.Sprintf(`{"name":"ping 2","definition":%s,"passthrough_auth":false,"oauth_config_id":%d}`,
			fxToolDefinition, okta)).decode(t, &struct{}{})
		e.do(e.admin, "DELETE", fmt.Sprint("/admin/oauth-config/", okta), nil).
			want(t, 409, fmt.Sprintf(`{"detail":"OAuth config %d is still used by 2 tool(s)"}`, okta))
		e.do(e.admin, "POST", "/admin/tool/custom", fmt.Sprintf(`{"name":"ping 3","definition":%s,"passthrough_auth":false,"oauth_config_id":9999}`,
			fxToolDefinition)).want(t, 404, `{"detail":"OAuth config with id 9999 not found"}`)
	})
	for _, tt := range []struct {
		name         string
		u            user
		method, path string
		body         any
		status       int
		want         string
	}{
		{"create, curator", curator, "POST", "/admin/oauth-config", fxOAuthBody("x"), 403, fxNotAdmin},
		{"list, curator", curator, "GET", "/admin/oauth-config", nil, 403, fxNotAdmin},
		{"delete, curator", curator, "DELETE", fmt.Sprint("/admin/oauth-config/", plain), nil, 403, fxNotAdmin},
		{"create, no token", user{}, "POST", "/admin/oauth-config", fxOAuthBody("x"), 401, fxNotAuthed},
		{"list, no token", user{}, "GET", "/admin/oauth-config", nil, 401, fxNotAuthed},
		{"delete, no token", user{}, "DELETE", "/admin/oauth-config/abc", nil, 401, fxNotAuthed},
		{"create, no body", e.admin, "POST", "/admin/oauth-config", nil, 422, fxMissingBody},
		{"create, secret missing", e.admin, "POST", "/admin/oauth-config", `{"name":"x","authorization_url":"a","token_url":"t","client_id":"c"}`, 422,
			`{"detail":[{"type":"missing","loc":["body","client_secret"],"msg":"Field required","input":{"name":"x","authorization_url":"a","token_url":"t","client_id":"c"}}]}`},
		{"delete, bad id", e.admin, "DELETE", "/admin/oauth-config/abc", nil, 422, `{"detail":[` + fxIntParsing("oauth_config_id", "abc") + `]}`},
		{"delete, unknown", e.admin, "DELETE", "/admin/oauth-config/9999", nil, 404, `{"detail":"OAuth config with id 9999 not found"}`},
		{"delete, unused", e.admin, "DELETE", fmt.Sprint("/admin/oauth-config/", plain), nil, 200, `null`},
		{"delete, deleted", e.admin, "DELETE", fmt.Sprint("/admin/oauth-config/", plain), nil, 404, fmt.Sprintf(`{"detail":"OAuth config with id %d not found"}`, plain)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.u, tt.method, tt.path, tt.body)
			r.want(t, tt.status, tt.want)
			noSecret(t, r)
		})
	}
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "oauthConfigCreate") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "POST", "", g) })
		}
	})
	t.Run("deletable once its tools are gone", func(t *testing.T) {
		var tools []struct {
			ID            int64  `json:"id"`
			OAuthConfigID *int64 `json:"oauth_config_id"`
		}
		e.do(e.admin, "GET", "/tool", nil).decode(t, &tools)
		for _, tl := range tools {
			if tl.OAuthConfigID != nil && *tl.OAuthConfigID == okta {
				e.do(e.admin, "DELETE", fmt.Sprint("/admin/tool/custom/", tl.ID), nil).want(t, 200, `null`)
			}
		}
		e.do(e.admin, "DELETE", fmt.Sprint("/admin/oauth-config/", okta), nil).want(t, 200, `null`)
		e.do(e.admin, "GET", "/admin/oauth-config", nil).want(t, 200, "["+fxOAuthJSON(nulls, "nulls", nil, e.admin)+"]")
	})
}

// TestOAuthConfigURLs checks that the endpoints of an OAuth configuration
// are absolute https URLs (http only on a loopback host), with no user
// name, password or fragment; the URL never appears in the message.
func TestOAuthConfigURLs(t *testing.T) {
	e := newEnv(t)
	const notAbsolute = "must be an absolute https:// URL (http:// only for localhost or a loopback address)"
	for _, tt := range []struct {
		name, auth, token, want string
	}{
		{"not a URL", "not-a-url", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"empty", "", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"relative", "/authorize", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"no host", "https:///authorize", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"http on a public host", "http://idp.example.com/authorize", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"another scheme", "ftp://idp.example.com/authorize", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"javascript", "javascript:alert(1)", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"a space in the host", "https://idp example.com/authorize", "https://idp.example.com/token", "authorization_url " + notAbsolute},
		{"a user and password", "https://user:hunter2@idp.example.com/authorize", "https://idp.example.com/token", "authorization_url must not contain a user name or password"},
		{"a fragment", "https://idp.example.com/authorize#x", "https://idp.example.com/token", "authorization_url must not contain a fragment (#…)"},
		{"an empty fragment", "https://idp.example.com/authorize#", "https://idp.example.com/token", "authorization_url must not contain a fragment (#…)"},
		{"bad token URL", "https://idp.example.com/authorize", "token", "token_url " + notAbsolute},
		{"http token URL on a public host", "https://idp.example.com/authorize", "http://10.0.0.1/token", "token_url " + notAbsolute},
		{"both bad: the first is reported", "x", "y", "authorization_url " + notAbsolute},
		// Parameters Quarry sets for each authorization request (issue 31):
		// the request would carry two values.
		{"redirect_uri in the query", "https://idp.example.com/authorize?redirect_uri=https://evil.example/cb", "https://idp.example.com/token",
			`authorization_url must not set "redirect_uri" in its query: Quarry sets it for each authorization request`},
		{"state in the query, any case", "https://idp.example.com/authorize?prompt=consent&State=x", "https://idp.example.com/token",
			`authorization_url must not set "State" in its query: Quarry sets it for each authorization request`},
		{"code_challenge in the query", "https://idp.example.com/authorize?code_challenge=abc", "https://idp.example.com/token",
			`authorization_url must not set "code_challenge" in its query: Quarry sets it for each authorization request`},
		{"client_id in the query", "https://idp.example.com/authorize?client_id=other", "https://idp.example.com/token",
			`authorization_url must not set "client_id" in its query: Quarry sets it for each authorization request`},
		{"response_type in the query", "https://idp.example.com/authorize?response_type=token", "https://idp.example.com/token",
			`authorization_url must not set "response_type" in its query: Quarry sets it for each authorization request`},
		{"a query that is not pairs", "https://idp.example.com/authorize?a=%zz", "https://idp.example.com/token",
			`authorization_url must have a query of name=value pairs`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(e.admin, "POST", "/admin/oauth-config", fxOAuthBody("bad", "authorization_url", tt.auth, "token_url", tt.token))
			r.want(t, 400, fmt.Sprintf(`{"detail":%q}`, tt.want))
			if strings.Contains(string(r.body), "hunter2") {
				t.Errorf("the password is in the response: %s", r.body)
			}
		})
	}
	e.do(e.admin, "GET", "/admin/oauth-config", nil).want(t, 200, `[]`)
	for i, u := range []string{"https://idp.example.com/oauth2/authorize?prompt=consent", "HTTPS://IDP.EXAMPLE.COM:8443/a",
		"http://localhost:8080/authorize", "http://LOCALHOST/a", "http://127.0.0.1/a", "http://127.1.2.3:9000/a", "http://[::1]:8080/a"} {
		r := e.do(e.admin, "POST", "/admin/oauth-config", fxOAuthBody(fmt.Sprint("ok", i), "authorization_url", u, "token_url", u))
		if r.status != 200 {
			t.Errorf("%s: status %d, want 200: %s", u, r.status, r.body)
		}
	}
}
