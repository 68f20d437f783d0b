package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/mcptest"
)

// TestMCPServerNoAuth follows an admin who registers an MCP server (the
// Go SDK's, in process) that needs no credentials, lists its tools (they
// become disabled tool rows), enables two, and runs them through POST
// /tool/{tool_id}/run and through Quarry's /mcp.
func TestMCPServerNoAuth(t *testing.T) {
	e := newEnv(t, allowLoopback)
	up := mcptest.Start(t, mcptest.Options{})
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"kit","description":"A test kit","server_url":%q,
		"transport":"STREAMABLE_HTTP","auth_type":"NONE","auth_performer":"ADMIN"}`, up.URL))

	r := e.do(e.admin, "GET", fmt.Sprintf("/admin/mcp/server/%d/tools", id), nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"name":"echo"`) {
		t.Fatalf("listing: %d %s", r.status, r.body)
	}
	tools := e.syncMCPTools(e.admin, id, "echo", "fail")
	if len(tools) != 4 {
		t.Fatalf("tool rows: %v", tools)
	}
	basic := e.user(quarry.RoleBasic, "basic")
	run := e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["echo"]), `{"args":{"message":"hi"}}`)
	wantRun(t, run, 200, `{"status":200,"content_type":"application/json","headers":{},
		"body":{"content":[{"type":"text","text":"echo: hi"}]},"body_encoding":"json","truncated":false,"duration_ms":0}`)
	e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["add"]), `{"args":{"a":1,"b":2}}`).want(t, 409,
		fmt.Sprintf(`{"detail":"Tool %d is disabled; an admin or its owner can enable it with PATCH /admin/tool/status"}`, tools["add"]))

	cs := e.mcpSession(t, basic.token)
	var names []string
	for _, tool := range mcpTools(t, cs) {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "fetch,kit__echo,kit__fail,search,search_indexed_documents" {
		t.Errorf("tools/list: %v", names)
	}
	res := mcpCall(t, cs, "kit__echo", map[string]any{"message": "over MCP"})
	res.Meta = nil
	jsonEq(t, "tools/call", resultJSON(t, res), `{"content":[{"type":"text","text":"echo: over MCP"}]}`)
	res = mcpCall(t, cs, "kit__fail", map[string]any{})
	res.Meta = nil
	jsonEq(t, "tools/call fail", resultJSON(t, res), `{"content":[{"type":"text","text":"it failed, as it always does"}],"isError":true}`)
}

// TestMCPServerAdminToken: a server called with the admin's token, put
// into a header template with the caller's email; the answers and the
// server's details never show the token, a masked echo keeps it, and a
// curator may change only the servers it registered.
func TestMCPServerAdminToken(t *testing.T) {
	e := newEnv(t, allowLoopback)
	const token = "admin-token-0123456789"
	up := mcptest.Start(t, mcptest.Options{Header: "X-Api-Key", Values: map[string]string{token: "the admin's key"}})
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"kit","server_url":%q,"auth_type":"API_TOKEN","auth_performer":"ADMIN",
		"api_token":%q,"auth_template":{"headers":{"X-Api-Key":"{api_key}","X-User":"{user_email}","X-Tenant":"{tenant}"}},
		"admin_credentials":{"tenant":"acme"}}`, up.URL, token))
	tools := e.syncMCPTools(e.admin, id, "whoami", "echo")
	basic := e.user(quarry.RoleBasic, "basic")
	run := e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["whoami"]), `{}`)
	want := fmt.Sprintf(`{"X-Api-Key":%q,"X-Tenant":%q,"X-User":%q,"user":"the admin's key"}`,
		mcptest.Hash(token), mcptest.Hash("acme"), mcptest.Hash(basic.email))
	wantRun(t, run, 200, `{"status":200,"content_type":"application/json","headers":{},
		"body":{"content":[{"type":"text","text":`+jsonString(want)+`}]},"body_encoding":"json","truncated":false,"duration_ms":0}`)

	// The details: the template and the admin's values masked.
	detail := e.do(e.admin, "GET", fmt.Sprintf("/admin/mcp/servers/%d", id), nil)
	var got map[string]any
	detail.decode(t, &got)
	if got["admin_credentials"].(map[string]any)["api_key"] != quarry.MaskString(token) ||
		got["admin_credentials"].(map[string]any)["tenant"] != quarry.MaskString("acme") || strings.Contains(string(detail.body), token) {
		t.Errorf("details show: %s", detail.body)
	}
	jsonEq(t, "auth_template", mustJSON(t, got["auth_template"]),
		`{"headers":{"X-Api-Key":"{api_key}","X-Tenant":"{tenant}","X-User":"{user_email}"},"required_fields":["api_key","tenant"]}`)
	// The masked echo of the token keeps it; the server keeps working.
	e.setUpMCPServer(e.admin, fmt.Sprintf(`{"existing_server_id":%d,"name":"kit","server_url":%q,"auth_type":"API_TOKEN",
		"auth_performer":"ADMIN","api_token":%q,"auth_template":{"headers":{"X-Api-Key":"{api_key}","X-User":"{user_email}","X-Tenant":"{tenant}"}},
		"admin_credentials":{"tenant":%q}}`, id, up.URL, quarry.MaskString(token), quarry.MaskString("acme")))
	e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["echo"]), `{"args":{"message":"still"}}`).decode(t, new(any))

	// A curator manages its own servers only.
	curator := e.user(quarry.RoleCurator, "curator")
	e.do(curator, "GET", fmt.Sprintf("/admin/mcp/servers/%d", id), nil).want(t, 403,
		`{"detail":"Curators can only modify MCP servers that they have created."}`)
	e.do(curator, "DELETE", fmt.Sprintf("/admin/mcp/server/%d", id), nil).want(t, 403,
		`{"detail":"Curators can only modify MCP servers that they have created."}`)
	e.do(basic, "GET", "/admin/mcp/servers", nil).want(t, 403, fxNotCurator)
	// The curator's view of the list hides the URL and the owner.
	var list struct {
		Servers []map[string]any `json:"mcp_servers"`
	}
	e.do(curator, "GET", "/admin/mcp/servers", nil).decode(t, &list)
	if len(list.Servers) != 1 || list.Servers[0]["server_url"] != "" || list.Servers[0]["owner"] != "" ||
		list.Servers[0]["auth_template"] != nil || list.Servers[0]["user_can_authenticate"] != true {
		t.Errorf("curator's list: %v", list.Servers)
	}
	// Tools of MCP servers are not edited as custom tools.
	e.do(e.admin, "PUT", fmt.Sprintf("/admin/tool/custom/%d", tools["echo"]), `{"name":"x"}`).want(t, 400,
		fmt.Sprintf(`{"detail":"Tools of MCP servers cannot be modified through this endpoint: they follow their server's tool list (GET /admin/mcp/server/%d/tools lists them again; POST /admin/mcp/servers/update or PATCH /admin/tool/status enables them)."}`, id))
	// Deleting the server deletes its tools.
	e.do(e.admin, "DELETE", fmt.Sprintf("/admin/mcp/server/%d", id), nil).want(t, 200, `{"success":true}`)
	e.do(basic, "GET", fmt.Sprintf("/tool/%d", tools["echo"]), nil).want(t, 404, `{"detail":"Tool by specified id does not exist"}`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCPServerPerUserCredentials: a server each person calls with their
// own key. A run before they give it says how; a wrong key is refused
// when they give it (the server's tools are listed with it first); the
// right one is kept and used for their runs only; disconnecting and being
// deactivated forget it.
func TestMCPServerPerUserCredentials(t *testing.T) {
	e := newEnv(t, allowLoopback)
	up := mcptest.Start(t, mcptest.Options{Header: "Authorization", Values: map[string]string{
		"Bearer admin-key-1": "admin", "Bearer ann-key-1": "ann", "Bearer bob-key-1": "bob"}})
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"desk","server_url":%q,"auth_type":"API_TOKEN","auth_performer":"PER_USER",
		"auth_template":{"headers":{"Authorization":"Bearer {api_key}"}},"admin_credentials":{"api_key":"admin-key-1"}}`, up.URL))
	// The admin's own key (given with the set-up) lists the tools.
	tools := e.syncMCPTools(e.admin, id, "whoami", "echo")
	ann := e.user(quarry.RoleBasic, "ann")
	bob := e.user(quarry.RoleBasic, "bob")
	runWhoami := func(u user) *response {
		return e.do(u, "POST", fmt.Sprintf("/tool/%d/run", tools["whoami"]), `{}`)
	}
	needKey := fmt.Sprintf(`{"detail":"This tool calls the MCP server desk with your own credentials, and you have not given them. Save them with POST /mcp/user-credentials {\"server_id\": %d, \"credentials\": {...}, \"transport\": \"STREAMABLE_HTTP\"}, then run it again."}`, id)
	runWhoami(ann).want(t, 409, needKey)

	var servers struct {
		Servers []map[string]any `json:"mcp_servers"`
	}
	e.do(ann, "GET", "/mcp/servers", nil).decode(t, &servers)
	if len(servers.Servers) != 1 || servers.Servers[0]["user_can_authenticate"] != false ||
		mustJSON(t, servers.Servers[0]["auth_template"]) != `{"headers":{},"required_fields":["api_key"]}` {
		t.Errorf("ann's servers: %v", servers.Servers)
	}
	save := func(u user, key string) *response {
		return e.do(u, "POST", "/mcp/user-credentials",
			fmt.Sprintf(`{"server_id":%d,"credentials":{"api_key":%q},"transport":"streamable-http"}`, id, key))
	}
	save(ann, "").want(t, 400, `{"detail":"Missing MCP header substitutions: api_key"}`)
	save(ann, "wrong-key").want(t, 400, `{"detail":"Credentials validation failed: Connection failed: The MCP server 127.0.0.1 refused the credentials (HTTP 401)"}`)
	runWhoami(ann).want(t, 409, needKey)
	save(ann, "ann-key-1").want(t, 200, fmt.Sprintf(`{"success":true,"message":"Credentials saved and validated successfully. Successfully connected. Found 4 tools.",
		"server_id":%d,"server_name":"desk","authenticated":true,"validation_tested":true}`, id))
	wantRun(t, runWhoami(ann), 200, `{"status":200,"content_type":"application/json","headers":{},
		"body":{"content":[{"type":"text","text":`+jsonString(fmt.Sprintf(`{"Authorization":%q,"user":"ann"}`, mcptest.Hash("Bearer ann-key-1")))+`}]},
		"body_encoding":"json","truncated":false,"duration_ms":0}`)
	runWhoami(bob).want(t, 409, needKey)

	// Over Quarry's /mcp: bob's call is a tool error saying what to do.
	cs := e.mcpSession(t, bob.token)
	res := mcpCall(t, cs, "desk__whoami", map[string]any{})
	var detail struct {
		Detail string `json:"detail"`
	}
	json.Unmarshal([]byte(needKey), &detail)
	res.Meta = nil
	jsonEq(t, "bob over MCP", resultJSON(t, res), `{"content":[{"type":"text","text":`+jsonString(detail.Detail)+`}],"isError":true}`)

	// The details show ann her own value, masked.
	var mine map[string]any
	e.do(ann, "GET", "/mcp/servers", nil).decode(t, &servers)
	if servers.Servers[0]["user_can_authenticate"] != true {
		t.Errorf("ann's servers after saving: %v", servers.Servers)
	}
	e.do(e.admin, "GET", fmt.Sprintf("/admin/mcp/servers/%d", id), nil).decode(t, &mine)
	if mustJSON(t, mine["user_credentials"]) != `{"api_key":"`+quarry.MaskString("admin-key-1")+`"}` {
		t.Errorf("admin's own credentials: %v", mine["user_credentials"])
	}

	// Disconnecting forgets ann's key.
	e.do(ann, "DELETE", fmt.Sprintf("/mcp/user-credentials/%d", id), nil).want(t, 200, fmt.Sprintf(
		`{"success":true,"message":"Disconnected","server_id":%d,"server_name":"desk","authenticated":false,"validation_tested":false}`, id))
	runWhoami(ann).want(t, 409, needKey)
	// Deactivating bob forgets his.
	save(bob, "bob-key-1").decode(t, new(any))
	e.do(e.admin, "PATCH", "/manage/admin/deactivate-user", fmt.Sprintf(`{"user_email":%q}`, bob.email)).decode(t, new(any))
	e.do(e.admin, "PATCH", "/manage/admin/activate-user", fmt.Sprintf(`{"user_email":%q}`, bob.email)).decode(t, new(any))
	runWhoami(bob).want(t, 409, needKey)
	// A server without a template takes no one's values.
	plain := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"open","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, up.URL))
	e.do(ann, "POST", "/mcp/user-credentials", fmt.Sprintf(`{"server_id":%d,"credentials":{"x":"y"},"transport":"SSE"}`, plain)).
		want(t, 400, `{"detail":"This MCP server has no user-configurable header template."}`)
	e.do(ann, "POST", "/mcp/user-credentials", `{"server_id":999,"credentials":{},"transport":"SSE"}`).want(t, 404, `{"detail":"MCP server not found"}`)
}

// TestMCPServerErrorsMasked: a server that quotes the admin's token in a
// JSON-RPC error gets it masked, in the run's answer, over /mcp, and in
// the log (env's watch), both the whole header and the token alone.
func TestMCPServerErrorsMasked(t *testing.T) {
	e := newEnv(t, allowLoopback)
	const token = "complained-token-0123456789"
	up := mcptest.Start(t, mcptest.Options{Header: "Authorization", Values: map[string]string{"Bearer " + token: "admin"},
		Complain: "Authorization"})
	id := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"careless","server_url":%q,"auth_type":"API_TOKEN","auth_performer":"ADMIN",
		"api_token":%q,"auth_template":{"headers":{"Authorization":"Bearer {api_key}"}}}`, up.URL, token))
	tools := e.syncMCPTools(e.admin, id, "complain")
	basic := e.user(quarry.RoleBasic, "basic")
	const masked = "The MCP server 127.0.0.1 answered an error: bad key •••••••••••• (JSON-RPC error 0)"
	e.do(basic, "POST", fmt.Sprintf("/tool/%d/run", tools["complain"]), `{}`).want(t, 502, fxJSON(map[string]string{"detail": masked}))
	res := mcpCall(t, e.mcpSession(t, basic.token), "careless__complain", map[string]any{})
	res.Meta = nil
	jsonEq(t, "over /mcp", resultJSON(t, res), `{"content":[{"type":"text","text":`+jsonString(masked)+`}],"isError":true}`)
}

// TestMCPEgressGuard: without loopback allowed (as in production), an MCP
// server on loopback is never reached: not to list its tools, not for a
// person's credentials, not for OAuth discovery; nor is the cloud's
// metadata address.
func TestMCPEgressGuard(t *testing.T) {
	e := newEnv(t)
	up := mcptest.Start(t, mcptest.Options{})
	plain := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"inside","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, up.URL))
	perUser := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"keys","server_url":%q,"auth_type":"API_TOKEN","auth_performer":"PER_USER",
		"auth_template":{"headers":{"X-Api-Key":"{api_key}"}}}`, up.URL))
	oauth := e.setUpMCPServer(e.admin, fmt.Sprintf(`{"name":"vault","server_url":%q,"auth_type":"OAUTH","auth_performer":"ADMIN"}`, up.URL))
	metadata := e.setUpMCPServer(e.admin, `{"name":"metadata","server_url":"http://169.254.169.254/mcp","auth_type":"NONE","auth_performer":"ADMIN"}`)
	basic := e.user(quarry.RoleBasic, "basic")
	const loopback = `Quarry does not call 127.0.0.1: it is a loopback address. To call internal APIs, add the host or its network to QUARRY_TOOL_EGRESS_ALLOW`
	refused := fxJSON(map[string]string{"detail": loopback})
	e.do(e.admin, "GET", fmt.Sprintf("/admin/mcp/server/%d/tools", plain), nil).want(t, 403, refused)
	e.do(e.admin, "GET", fmt.Sprintf("/admin/mcp/server/%d/tools", metadata), nil).want(t, 403, fxJSON(map[string]string{"detail": "Quarry does not call 169.254.169.254: it is a link-local (cloud metadata services live here) address. To call internal APIs, add the host or its network to QUARRY_TOOL_EGRESS_ALLOW"}))
	e.do(basic, "POST", "/mcp/user-credentials",
		fmt.Sprintf(`{"server_id":%d,"credentials":{"api_key":"egress-key-0123456789"},"transport":"STREAMABLE_HTTP"}`, perUser)).
		want(t, 400, fxJSON(map[string]string{"detail": "Credentials validation failed: Connection failed: " + loopback}))
	e.do(e.admin, "POST", "/admin/mcp/oauth/connect", fmt.Sprintf(`{"server_id":%d,"return_path":"/#mcp","include_resource_param":true}`, oauth)).
		want(t, 403, refused)
	if calls := up.Calls(); len(calls) != 0 {
		t.Errorf("the server on loopback got %d requests", len(calls))
	}
}
