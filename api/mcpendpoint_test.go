package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	qauth "github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/auth/authtest"
	"github.com/quarryhq/quarry/internal/mcptest"
)

// Quarry's own /mcp, with the Go SDK's client: who may call it, what it
// offers each caller, and that tools/call goes through the same run as
// POST /tool/{tool_id}/run.

func TestMCPEndpointAuthentication(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	metadata := e.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	accept := []string{"Accept", "application/json, text/event-stream"}
	for _, tt := range []struct {
		name    string
		u       user
		headers []string
		want    string
	}{
		{"no credentials", user{}, nil, `Bearer resource_metadata="` + metadata + `"`},
		{"an unknown key", user{token: "qry_" + strings.Repeat("A", 43)}, nil, `Bearer resource_metadata="` + metadata + `", error="invalid_token"`},
		{"a malformed token", user{token: "nope"}, nil, `Bearer resource_metadata="` + metadata + `", error="invalid_token"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.u, "POST", "/mcp", init, append(accept, tt.headers...)...)
			r.want(t, 401, fxNotAuthed)
			if got := r.header.Get("WWW-Authenticate"); got != tt.want {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("the session cookie is not enough", func(t *testing.T) {
		session := e.person("ann@example.com").cookie
		r := e.do(user{cookie: session}, "POST", "/mcp", init, accept...)
		r.want(t, 401, fxNotAuthed)
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer resource_metadata="`+metadata+`"` {
			t.Errorf("WWW-Authenticate %q", got)
		}
		// The same session as a bearer token works (as on every route).
		e.do(user{token: session}, "POST", "/mcp", init, accept...).decode(t, new(any))
	})
	t.Run("an API key", func(t *testing.T) {
		r := e.do(e.admin, "POST", "/mcp", init, accept...)
		var out struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
				ServerInfo      struct {
					Name string `json:"name"`
				} `json:"serverInfo"`
				Capabilities map[string]any `json:"capabilities"`
			} `json:"result"`
		}
		r.decode(t, &out)
		if out.Result.ProtocolVersion != "2025-06-18" || out.Result.ServerInfo.Name != "quarry" ||
			out.Result.Capabilities["tools"] == nil || out.Result.Capabilities["resources"] == nil || r.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("initialize: %s (session %q)", r.body, r.header.Get("Mcp-Session-Id"))
		}
	})
	t.Run("no stream, no session", func(t *testing.T) {
		for _, m := range []string{"GET", "DELETE"} {
			r := e.do(e.admin, m, "/mcp", nil)
			if r.status != 405 || r.header.Get("Allow") != "POST" {
				t.Errorf("%s /mcp: %d %v", m, r.status, r.header)
			}
			e.do(user{}, m, "/mcp", nil).want(t, 401, fxNotAuthed)
		}
	})
	t.Run("the protected resource metadata", func(t *testing.T) {
		want := fmt.Sprintf(`{"resource":"%s/mcp","bearer_methods_supported":["header"],"resource_name":"Quarry"}`, e.srv.URL)
		e.do(user{}, "GET", "/.well-known/oauth-protected-resource/mcp", nil).want(t, 200, want)
		e.do(user{}, "GET", "/.well-known/oauth-protected-resource", nil).want(t, 200, want)
	})
	t.Run("under a base path", func(t *testing.T) {
		b := newEnv(t, func(c *api.Config) { c.BasePath = "/api" })
		r := b.do(user{}, "POST", "/api/mcp", init, accept...)
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer resource_metadata="`+b.srv.URL+`/.well-known/oauth-protected-resource/api/mcp"` {
			t.Errorf("WWW-Authenticate %q", got)
		}
		// Outside the document: its path template cannot hold the two
		// segments of api/mcp.
		res, err := http.Get(b.srv.URL + "/.well-known/oauth-protected-resource/api/mcp")
		if err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		json.NewDecoder(res.Body).Decode(&md)
		res.Body.Close()
		if md["resource"] != b.srv.URL+"/api/mcp" {
			t.Errorf("metadata under a base path: %v", md)
		}
		b.mcpSession(t, b.admin.token, b.srv.URL+"/api")
	})
}

func TestMCPEndpointTools(t *testing.T) {
	e := newEnv(t, allowLoopback)
	up := newItemsServer(t)
	items := e.itemsTool(e.admin, up.URL, "items", `,"custom_headers":[{"key":"X-Api-Key","value":"`+itemsKey+`"}]`)
	kit := mcptest.Start(t, mcptest.Options{})
	srv := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"kit","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, kit.URL))
	e.syncMCPTools(e.admin, srv, "add")
	basic := e.user(quarry.RoleBasic, "basic")
	cs := e.mcpSession(t, basic.token)

	tools := mcpTools(t, cs)
	byName := map[string]*mcp.Tool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
	}
	if got := mcptest.Names(tools); !slices.Equal(got, []string{"fetch", "items__createItem", "items__getItem", "items__slow", "items__whoami", "kit__add", "search", "search_indexed_documents"}) {
		t.Fatalf("tools/list: %v", got)
	}
	jsonEq(t, "items__getItem", mustJSON(t, byName["items__getItem"]), `{"name":"items__getItem","title":"items: Get an item",
		"description":"Get an item","annotations":{"readOnlyHint":true,"idempotentHint":true},
		"inputSchema":{"type":"object","properties":{"id":{"type":"integer","minimum":1},"verbose":{"type":"boolean"}},"required":["id"]}}`)
	jsonEq(t, "items__createItem", mustJSON(t, byName["items__createItem"].InputSchema), `{"type":"object","required":["requestBody"],
		"properties":{"requestBody":{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":20}}}}}`)
	jsonEq(t, "kit__add", mustJSON(t, byName["kit__add"].InputSchema), `{"type":"object","required":["a","b"],
		"properties":{"a":{"type":"number"},"b":{"type":"number"}},"additionalProperties":false}`)

	// tools/call runs what POST /tool/{tool_id}/run runs.
	res := mcpCall(t, cs, "items__getItem", map[string]any{"id": 7, "verbose": true})
	res.Meta = nil
	jsonEq(t, "items__getItem", resultJSON(t, res), `{"content":[{"type":"text","text":"{\"id\":7,\"key\":\"••••••••••••\",\"verbose\":\"true\"}"}],
		"structuredContent":{"id":7,"verbose":"true","key":"••••••••••••"}}`)
	direct := e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", items), `{"method":"getItem","args":{"id":7,"verbose":true}}`)
	var run struct {
		Body json.RawMessage `json:"body"`
	}
	direct.decode(t, &run)
	jsonEq(t, "the same body", string(run.Body), mustJSON(t, res.StructuredContent))
	// Refusals are results marked isError, in the run's words.
	res = mcpCall(t, cs, "items__getItem", map[string]any{"id": 0})
	res.Meta = nil
	jsonEq(t, "a bad argument", resultJSON(t, res),
		`{"content":[{"type":"text","text":"Argument \"id\" does not fit its schema: number must be at least 1"}],"isError":true}`)
	res = mcpCall(t, cs, "kit__add", map[string]any{"a": 1, "b": 2})
	res.Meta = nil
	jsonEq(t, "kit__add", resultJSON(t, res), `{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}`)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope__x", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), `unknown tool "nope__x"`) {
		t.Errorf("an unknown tool: %v", err)
	}

	// The runs are in the audit log and the metrics, as runs.
	var entries []struct {
		ResourceID string         `json:"resource_id"`
		Details    map[string]any `json:"details"`
	}
	e.do(e.admin, "GET", "/admin/audit-log?action=tool.run&limit=100", nil).decode(t, &entries)
	var got []string
	for i := len(entries) - 1; i >= 0; i-- {
		got = append(got, fmt.Sprintf("%s %v %v", entries[i].ResourceID, entries[i].Details["method"], entries[i].Details["outcome"]))
	}
	addID := e.syncMCPTools(e.admin, srv, "add")["add"]
	want := []string{fmt.Sprintf("%d getItem ok", items), fmt.Sprintf("%d getItem ok", items), fmt.Sprintf("%d getItem invalid", items),
		fmt.Sprintf("%d add ok", addID)}
	if !slices.Equal(got, want) {
		t.Errorf("audit: %v, want %v", got, want)
	}

	t.Run("a changed catalog", func(t *testing.T) {
		e.do(e.admin, "PATCH", fmt.Sprintf("/admin/mcp/server/%d/status?status=DISCONNECTED", srv), nil).want(t, 200,
			`{"message":"Server status updated to DISCONNECTED"}`)
		other := e.itemsTool(e.admin, up.URL, "items", "")
		got := mcptest.Names(mcpTools(t, cs))
		want := []string{"fetch", "search", "search_indexed_documents"}
		for _, id := range []int64{items, other} {
			for _, m := range []string{"createItem", "getItem", "slow", "whoami"} {
				want = append(want, fmt.Sprintf("items_%d__%s", id, m))
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("tools/list: %v, want %v", got, want)
		}
	})
	t.Run("limited callers", func(t *testing.T) {
		limited := e.user(quarry.RoleLimited, "limited")
		lc := e.mcpSession(t, limited.token)
		if got := mcpTools(t, lc); len(got) != 0 {
			t.Errorf("tools/list for limited: %v", mcptest.Names(got))
		}
	})
}

func TestMCPEndpointResources(t *testing.T) {
	e := newEnv(t)
	basic := e.user(quarry.RoleBasic, "basic")
	curator := e.user(quarry.RoleCurator, "curator")
	for _, tt := range []struct {
		u    user
		want []string
	}{{basic, []string{"resource://indexed_sources", "resource://document_sets"}},
		{curator, []string{"resource://indexed_sources", "resource://document_sets", quarry.ConnectorStatusURI}},
		{e.admin, []string{"resource://indexed_sources", "resource://document_sets", quarry.ConnectorStatusURI}}} {
		cs := e.mcpSession(t, tt.u.token)
		res, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: resources %v, want %v", tt.u.name, got, tt.want)
		}
		read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: quarry.ConnectorStatusURI})
		if !slices.Contains(tt.want, quarry.ConnectorStatusURI) {
			if err == nil {
				t.Errorf("%s read the listing", tt.u.name)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		direct := e.do(tt.u, "GET", "/manage/admin/connector/status", nil)
		if len(read.Contents) != 1 || read.Contents[0].Text != string(direct.body) || read.Contents[0].MIMEType != "application/json" {
			t.Errorf("%s: read %+v, want %s", tt.u.name, read.Contents, direct.body)
		}
	}
}

// TestMCPOAuthClientSignIn signs a person in the way an OAuth-capable MCP
// client does: /mcp answers 401 naming its metadata, which names the
// company's provider; the client (the Go SDK's authorization code
// handler, registered at the provider) signs the person in there and
// calls /mcp with the provider's access token.
func TestMCPOAuthClientSignIn(t *testing.T) {
	const desktop, desktopSecret = "mcp-desktop", "mcp-desktop-secret-0123456789"
	op := authtest.Start(t)
	s := newSSOEnv(t, op, func(c *qauth.OIDCConfig) {
		c.Audience, c.TokenClients = desktop, []string{desktop}
	})
	op.AddClient(authtest.Client{ID: desktop, Secret: desktopSecret, RedirectURIs: []string{"http://127.0.0.1:1/callback"}})
	s.addUser("u-ann", "ann@example.com", true)
	s.waitReady()
	s.do(user{}, "GET", "/.well-known/oauth-protected-resource/mcp", nil).want(t, 200, fmt.Sprintf(
		`{"resource":"%s/mcp","authorization_servers":[%q],"scopes_supported":["openid","email","profile","groups"],
		"bearer_methods_supported":["header"],"resource_name":"Quarry"}`, s.srv.URL, op.Issuer))

	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIns := 0
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: desktop,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: desktopSecret}},
		RedirectURL: "http://127.0.0.1:1/callback",
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			signIns++
			cb, err := op.Authorize(browser, args.URL, "u-ann", "pw-u-ann")
			if err != nil {
				return nil, err
			}
			q := cb.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.srv.URL + "/mcp", OAuthHandler: h,
		DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: &conformingTransport{e: s.env, base: http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connecting with OAuth: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if signIns != 1 {
		t.Errorf("%d sign-ins, want 1", signIns)
	}
	// The person the token is for is Quarry's person (made at first use).
	var people struct {
		Items []struct {
			Email string `json:"email"`
		} `json:"items"`
	}
	s.do(s.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &people)
	if len(people.Items) != 1 || people.Items[0].Email != "ann@example.com" {
		t.Errorf("people: %+v", people)
	}
}

// TestMCPEndpointConnectFirst: a custom tool that calls its server with
// each person's OAuth token is listed to a person who has not connected
// their account; calling it is a tool error that names the call that
// connects it, and its server gets nothing.
func TestMCPEndpointConnectFirst(t *testing.T) {
	e := newEnv(t, allowLoopback)
	up := newItemsServer(t)
	cfg := e.createOAuthConfig("desk")
	e.itemsTool(e.admin, up.URL, "items", fmt.Sprintf(`,"oauth_config_id":%d`, cfg))
	basic := e.user(quarry.RoleBasic, "basic")
	cs := e.mcpSession(t, basic.token)
	if got := mcptest.Names(mcpTools(t, cs)); !slices.Contains(got, "items__getItem") {
		t.Fatalf("tools/list: %v", got)
	}
	res := mcpCall(t, cs, "items__getItem", map[string]any{"id": 7})
	res.Meta = nil
	jsonEq(t, "tools/call", resultJSON(t, res), `{"content":[{"type":"text","text":`+
		jsonString(quarry.ConnectFirst(cfg, "desk").Message)+`}],"isError":true}`)
	if n := up.count(); n != 0 {
		t.Errorf("the tool's server got %d requests", n)
	}
}

// TestMCPEndpointRefusesBatches: a JSON-RPC batch is refused whatever
// protocol version the request names (none, 2024-11-05, 2025-03-26 and
// 2025-06-18), leading white space or not, before any of its calls runs;
// one request alone still works, and an unauthenticated batch is a 401.
func TestMCPEndpointRefusesBatches(t *testing.T) {
	e := newEnv(t)
	accept := []string{"Accept", "application/json, text/event-stream"}
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
	const refused = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported: send one request per HTTP request"}}`
	for _, version := range []string{"", "2024-11-05", "2025-03-26", "2025-06-18"} {
		headers := accept
		if version != "" {
			headers = append(slices.Clone(accept), "MCP-Protocol-Version", version)
		}
		for _, body := range []string{batch, " \n\t" + batch} {
			r := e.do(e.admin, "POST", "/mcp", body, headers...)
			if r.status != 400 || string(r.body) != refused {
				t.Errorf("version %q, batch %.10q: %d %s", version, body, r.status, r.body)
			}
		}
		r := e.do(e.admin, "POST", "/mcp", " "+`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers...)
		if r.status != 200 || !strings.Contains(string(r.body), `"tools":[`) {
			t.Errorf("version %q, one request: %d %s", version, r.status, r.body)
		}
	}
	e.do(user{}, "POST", "/mcp", batch, accept...).want(t, 401, fxNotAuthed)
}
