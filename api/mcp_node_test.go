package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/mcptest"
	"github.com/quarryhq/quarry/toolrun"
)

// MCP against npm's implementations (internal/mcptest/npm): the
// "everything" server, the TypeScript SDK's example server behind its
// example authorization server (dynamic client registration), and, as
// clients of Quarry's /mcp, the TypeScript SDK and the inspector's CLI.
// They skip without node, unless QUARRY_E2E=1.

// allowLocalhost opens loopback and the name localhost to runs.
func allowLocalhost(c *api.Config) {
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1,localhost")
	if err != nil {
		panic(err)
	}
	c.ToolEgress = toolrun.Policy{Allow: nets, AllowHosts: hosts}
}

func TestMCPEverythingServer(t *testing.T) {
	up := mcptest.StartEverything(t)
	e := newEnv(t, allowLoopback)
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"everything","server_url":%q,"transport":"STREAMABLE_HTTP",
		"auth_type":"NONE","auth_performer":"ADMIN"}`, up))
	tools := e.syncMCPTools(e.admin, id, "echo", "get-sum")
	for _, name := range []string{"echo", "get-sum", "get-tiny-image", "get-structured-content"} {
		if tools[name] == 0 {
			t.Errorf("no tool row for %s: %v", name, tools)
		}
	}
	basic := e.user(quarry.RoleBasic, "basic")
	wantRun(t, e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["get-sum"]), `{"args":{"a":2,"b":3}}`), 200,
		`{"status":200,"content_type":"application/json","headers":{},"body":{"content":[{"type":"text","text":"The sum of 2 and 3 is 5."}]},
		"body_encoding":"json","truncated":false,"duration_ms":0}`)
	// The input schema the server listed is checked before the call.
	r := e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["get-sum"]), `{"args":{"a":"two","b":3}}`)
	if r.status != 400 || !strings.Contains(string(r.body), "The arguments do not fit the input schema of get-sum") {
		t.Errorf("bad arguments: %d %s", r.status, r.body)
	}
	cs := e.mcpSession(t, basic.token)
	res := mcpCall(t, cs, "everything__echo", map[string]any{"message": "through Quarry"})
	if mcptest.Text(res) != "Echo: through Quarry" || res.IsError {
		t.Errorf("everything__echo: %s", resultJSON(t, res))
	}
}

func TestMCPDynamicClientRegistration(t *testing.T) {
	up := mcptest.StartOAuthServer(t)
	e := newEnv(t, allowLocalhost)
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"greeter","server_url":%q,"auth_type":"OAUTH","auth_performer":"PER_USER"}`, up))
	authURL := e.mcpConnect(t, e.admin, true, id, "")
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("client_id") == "" || q.Get("resource") != up || q.Get("code_challenge_method") != "S256" || q.Get("scope") != "mcp:tools" {
		t.Fatalf("authorization URL %s", authURL)
	}
	// The example authorization server approves at once.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cb, err := url.Parse(res.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(cb.String(), e.srv.URL+"/mcp/oauth/callback?") {
		t.Fatalf("the authorization server sent the browser to %q (%d)", res.Header.Get("Location"), res.StatusCode)
	}
	e.do(e.admin, "POST", "/mcp/oauth/callback?"+cb.RawQuery, nil).want(t, 200, fmt.Sprintf(
		`{"success":true,"message":"OAuth authorization completed successfully for greeter","server_id":%d,"server_name":"greeter","redirect_url":"/#mcp"}`, id))
	tools := e.syncMCPTools(e.admin, id, "greet")
	wantRun(t, e.do(e.admin, "POST", fmt.Sprintf("/tool/%d/run", tools["greet"]), `{"args":{"name":"Quarry"}}`), 200,
		`{"status":200,"content_type":"application/json","headers":{},"body":{"content":[{"type":"text","text":"Hello, Quarry!"}]},
		"body_encoding":"json","truncated":false,"duration_ms":0}`)
	// A registered client is Quarry's own: the details show no client id.
	var detail map[string]any
	e.do(e.admin, "GET", fmt.Sprintf("/admin/mcp/servers/%d", id), nil).decode(t, &detail)
	if mustJSON(t, detail["admin_credentials"]) != `{}` || detail["status"] != "CONNECTED" {
		t.Errorf("details: %v", detail)
	}
}

// TestMCPClientsOfQuarry connects the TypeScript SDK's client and the
// inspector's CLI to Quarry's /mcp.
func TestMCPClientsOfQuarry(t *testing.T) {
	e := newEnv(t, allowLoopback)
	up := newItemsServer(t)
	e.itemsTool(e.admin, up.URL, "items", "")
	mcpUp := mcptest.Start(t, mcptest.Options{})
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"kit","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, mcpUp.URL))
	e.syncMCPTools(e.admin, id, "add")

	out := mcptest.RunScript(t, time.Minute, "client.mjs", e.srv.URL+"/mcp", e.admin.token, "items__getItem", `{"id":7}`,
		quarry.ConnectorStatusURI)
	var got struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Tools     []string `json:"tools"`
		Call      map[string]any
		Resources []string `json:"resources"`
		Resource  []struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
			JSON     []any  `json:"json"`
		} `json:"resource"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Server.Name != "quarry" || !slices.Equal(got.Tools, []string{"fetch", "items__createItem", "items__getItem", "items__slow", "items__whoami", "kit__add",
		"search", "search_indexed_documents"}) || !slices.Equal(got.Resources, []string{"resource://indexed_sources", "resource://document_sets", quarry.ConnectorStatusURI}) || len(got.Resource) != 1 || got.Resource[0].MimeType != "application/json" {
		t.Errorf("the TypeScript client got %s", out)
	}
	jsonEq(t, "call", mustJSON(t, got.Call["content"]), mustJSON(t, []any{map[string]any{"type": "text",
		"text": `{"id":7,"verbose":"","key":""}`}}))

	list := mcptest.Inspector(t, time.Minute, e.srv.URL+"/mcp",
		"--transport", "http", "--header", "Authorization: Bearer "+e.admin.token, "--method", "tools/list")
	for _, name := range []string{"items__getItem", "kit__add"} {
		if !strings.Contains(list, `"name": "`+name+`"`) {
			t.Errorf("the inspector's tools/list has no %s: %s", name, list)
		}
	}
	call := mcptest.Inspector(t, time.Minute, e.srv.URL+"/mcp",
		"--transport", "http", "--header", "Authorization: Bearer "+e.admin.token, "--method", "tools/call",
		"--tool-name", "kit__add", "--tool-arg", "a=2", "b=40")
	if !strings.Contains(call, `"sum": 42`) {
		t.Errorf("the inspector's tools/call: %s", call)
	}
}
