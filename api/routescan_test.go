package api_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/api"
)

// publicRoutes are the only routes that answer without a valid token.
var publicRoutes = map[string]bool{
	"GET /health":             true,
	"GET /ready":              true,
	"GET /metrics":            true,
	"GET /version":            true,
	"GET /openapi.json":       true,
	"GET /docs":               true,
	"POST /auth/register":     true,
	"POST /auth/login":        true,
	"GET /auth/type":          true,
	"GET /auth/oidc/login":    true,
	"GET /auth/oidc/callback": true,
	// The authorization server sends the browser back here; it checks
	// the session cookie itself, and redirects without one.
	"GET /oauth-config/callback": true,
	"GET /mcp/oauth/callback":    true,
	// The protected resource metadata of /mcp (RFC 9728).
	"GET /.well-known/oauth-protected-resource":  true,
	"GET /.well-known/oauth-protected-resource/": true,

	// SCIM's discovery: identity providers read it before they have a token.
	"GET /scim/v2/ServiceProviderConfig": true,
	"GET /scim/v2/ResourceTypes":         true,
	"GET /scim/v2/ResourceTypes/{name}":  true,
	"GET /scim/v2/Schemas":               true,
	"GET /scim/v2/Schemas/{id}":          true,
}

// mcpEndpoint reports whether route is Quarry's MCP endpoint, whose 401s
// name its protected resource metadata, and which reads no cookie.
func mcpEndpoint(route string) bool {
	_, path, _ := strings.Cut(route, " ")
	return path == "/mcp"
}

// isAdminPage reports whether route serves the admin page (GET / and its
// assets), which is public: the page asks for a key and sends it itself.
func isAdminPage(route string) bool {
	method, path, _ := strings.Cut(route, " ")
	return method == "GET" && (path == "/" || path == "/{$}" || strings.HasPrefix(path, "/assets/") || strings.HasPrefix(path, "/static/"))
}

// TestEveryRouteNeedsAToken scans every route registered on the server's
// mux (as the OpenAPI drift test finds them) and asks each without a
// token, with a malformed one, with a well-formed unknown one (of each
// kind) and with another scheme: all but the public routes answer 401
// (SCIM's in SCIM's error body), before looking at
// path parameters or the body. The request log confirms that the probes
// reach the route under test (not the catch-all), at the root and under a
// base path.
func TestEveryRouteNeedsAToken(t *testing.T) {
	routes := registeredRoutes(t)
	if len(routes) < 30 {
		t.Fatalf("found only %d routes: %q", len(routes), routes)
	}
	const (
		unauthorized     = `{"detail":"Not authenticated"}`
		scimUnauthorized = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"401","detail":"Not authenticated"}`
	)
	credentials := []struct{ name, header, cookie string }{
		{"no token", "", ""},
		{"malformed token", "Bearer not-a-key", ""},
		{"unknown token", "Bearer qry_" + strings.Repeat("A", 43), ""},
		{"unknown session token", "Bearer qrs_" + strings.Repeat("A", 43), ""},
		{"unknown SCIM token", "Bearer qrd_" + strings.Repeat("A", 43), ""},
		{"a JWT without a provider", "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln", ""},
		{"other scheme", "Basic YWRtaW46YWRtaW4=", ""},
		{"unknown session cookie", "", "qrs_" + strings.Repeat("A", 43)},
		{"malformed session cookie", "", "not-a-session"},
	}
	for _, bp := range []string{"", "/api"} {
		e := newEnv(t, func(c *api.Config) { c.BasePath = bp })
		n := 0
		for _, route := range routes {
			method, path, _ := strings.Cut(route, " ")
			path = strings.TrimSuffix(path, "{$}")
			public := publicRoutes[route] || isAdminPage(route)
			for _, c := range credentials {
				// Path parameters that do not parse, and a body that is not
				// JSON: a caller without a key learns nothing of either.
				for _, sample := range []string{"1", "not-a-number"} {
					n++
					id := "route-scan-" + strconv.Itoa(n)
					headers := []string{"X-Request-ID", id}
					if c.header != "" {
						headers = append(headers, "Authorization", c.header)
					}
					if c.cookie != "" {
						headers = append(headers, "Cookie", "fastapiusersauth="+c.cookie)
					}
					var body any
					if method == "POST" || method == "PUT" || method == "PATCH" {
						body = `{"broken json`
					}
					r := e.do(user{}, method, bp+fillPath(path, sample), body, headers...)
					if c.name == "no token" && sample == "1" && loggedRoute(t, e, id) != route {
						t.Errorf("%s %s was not served by route %q", method, bp+fillPath(path, sample), route)
					}
					switch {
					case public && r.status == http.StatusUnauthorized:
						t.Errorf("public route %s (%s) answered 401", route, c.name)
					case !public:
						body := unauthorized
						if strings.HasPrefix(path, "/scim/v2/") {
							body = scimUnauthorized
						}
						if r.status != http.StatusUnauthorized || string(r.body) != body {
							t.Errorf("%s%s with %s: %d %s, want 401 %s", bp, route, c.name, r.status, r.body, body)
						}
						want := `Bearer error="invalid_token"`
						if c.name == "no token" {
							want = "Bearer"
						}
						if mcpEndpoint(route) {
							want = `Bearer resource_metadata="` + e.srv.URL + `/.well-known/oauth-protected-resource` + bp + `/mcp"`
							if c.header != "" {
								want += `, error="invalid_token"`
							}
						}
						if got := r.header.Get("WWW-Authenticate"); got != want {
							t.Errorf("%s%s with %s: WWW-Authenticate %q, want %q", bp, route, c.name, got, want)
						}
					}
				}
			}
		}
	}
}

// TestAdminPageIsPublic: the admin page's routes answer without a token.
func TestAdminPageIsPublic(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		path, route string
		status      int
	}{
		{"/", "GET /{$}", 200},
		{"/assets/no-such-asset.js", "GET /assets/", 404},
	} {
		id := "admin-page-" + strconv.Itoa(tt.status)
		req, _ := http.NewRequest("GET", e.srv.URL+tt.path, nil)
		req.Header.Set("X-Request-ID", id)
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("GET %s without a token: %d, want %d", tt.path, res.StatusCode, tt.status)
		}
		if got := loggedRoute(t, e, id); got != tt.route {
			t.Errorf("GET %s was served by route %q, want %q", tt.path, got, tt.route)
		}
	}
}

// fillPath fills the wildcards of a path pattern with value.
func fillPath(path, value string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, value)
}
