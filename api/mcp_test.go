package api_test

import (
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
	if strings.Join(names, ",") != "kit__echo,kit__fail" {
		t.Errorf("tools/list: %v", names)
	}
	res := mcpCall(t, cs, "kit__echo", map[string]any{"message": "over MCP"})
	res.Meta = nil
	jsonEq(t, "tools/call", resultJSON(t, res), `{"content":[{"type":"text","text":"echo: over MCP"}]}`)
	res = mcpCall(t, cs, "kit__fail", map[string]any{})
	res.Meta = nil
	jsonEq(t, "tools/call fail", resultJSON(t, res), `{"content":[{"type":"text","text":"it failed, as it always does"}],"isError":true}`)
}
