package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The helpers of the MCP tests: servers registered through the API, and a
// client of Quarry's own /mcp (the Go SDK's) whose every exchange is
// checked against openapi.json as env.do's are.

// setUpMCPServer creates an MCP server with POST /admin/mcp/servers/create
// as u and returns its id.
func (e *env) setUpMCPServer(u user, body string) int64 {
	e.t.Helper()
	var out struct {
		ServerID int64 `json:"server_id"`
	}
	e.do(u, "POST", "/admin/mcp/servers/create", body).decode(e.t, &out)
	return out.ServerID
}

// syncMCPTools lists server id's tools as u, and enables those named.
// It returns the tool ids by name.
func (e *env) syncMCPTools(u user, id int64, enable ...string) map[string]int64 {
	e.t.Helper()
	e.do(u, "GET", fmt.Sprintf("/admin/mcp/server/%d/tools", id), nil).decode(e.t, new(any))
	sel, _ := json.Marshal(enable)
	e.do(u, "POST", "/admin/mcp/servers/update", fmt.Sprintf(`{"server_id":%d,"selected_tools":%s}`, id, sel)).decode(e.t, new(any))
	var tools struct {
		Tools []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	e.do(u, "GET", fmt.Sprintf("/admin/mcp/server/%d/db-tools", id), nil).decode(e.t, &tools)
	out := map[string]int64{}
	for _, t := range tools.Tools {
		out[t.Name] = t.ID
	}
	return out
}

// conformingTransport sends requests with a bearer token and checks each
// exchange against openapi.json.
type conformingTransport struct {
	e     *env
	token string
	base  http.RoundTripper
}

func (c *conformingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return res, nil // A stream: its events are not in the document.
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(b))
	var sent any
	if body != nil {
		sent = string(body)
	}
	c.e.conform(req, sent, res, b)
	return res, nil
}

// mcpSession connects the Go SDK's client to Quarry's /mcp (at base, or
// e's server) with token.
func (e *env) mcpSession(t *testing.T, token string, base ...string) *mcp.ClientSession {
	t.Helper()
	url := e.srv.URL
	if len(base) > 0 {
		url = base[0]
	}
	hc := &http.Client{Transport: &conformingTransport{e: e, token: token, base: http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc,
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpTools returns the tools /mcp lists for the session (every page).
func mcpTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool)
	}
	return out
}

// mcpCall calls a tool of /mcp and returns its result as JSON.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// resultJSON renders a result as JSON, for whole-body assertions.
func resultJSON(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonEq fails unless got and want are the same JSON.
func jsonEq(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: %v: %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v: %s", what, err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}
