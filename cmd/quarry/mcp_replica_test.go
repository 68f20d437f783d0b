package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry/internal/mcptest"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// alternating sends each request to the next of its replicas in turn, as
// a load balancer without affinity would.
type alternating struct {
	replicas []*url.URL
	n        atomic.Int64
	served   []atomic.Int64
	token    string
}

func (a *alternating) RoundTrip(req *http.Request) (*http.Response, error) {
	i := int(a.n.Add(1)) % len(a.replicas)
	a.served[i].Add(1)
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = a.replicas[i].Scheme, a.replicas[i].Host, a.replicas[i].Host
	req.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(req)
}

// TestMCPAcrossReplicas starts two quarry serve processes on one
// PostgreSQL database and talks MCP to both, each request of one client
// going to the other replica than the last: nothing of a session lives in
// a process. A tool enabled through one replica is offered at once by
// the other, and a person's credentials saved through one are used by
// the other.
func TestMCPAcrossReplicas(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	quarryBinary(t)
	up := mcptest.Start(t, mcptest.Options{Header: "X-Api-Key", Values: map[string]string{"key-of-admin": "admin", "key-of-ann": "ann"}})
	vars := map[string]string{
		"QUARRY_DATABASE_URL":      storetest.URL(t),
		"QUARRY_ENCRYPTION_KEY":    store.NewKey(),
		"QUARRY_LOG_LEVEL":         "warn",
		"QUARRY_TOOL_EGRESS_ALLOW": "127.0.0.1",
	}
	procCommand(t, vars, "migrate")
	token := procAPIKey(t, vars)
	replicas := []*procServer{launchServe(t, vars), launchServe(t, vars)}
	for i, r := range replicas {
		if err := r.ready(30 * time.Second); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	c := newProcClient(token)
	a, b := replicas[0].base, replicas[1].base
	var created struct {
		ServerID int64 `json:"server_id"`
	}
	c.must(t, a, "POST", "/admin/mcp/servers/create", map[string]any{"name": "desk", "server_url": up.URL,
		"auth_type": "API_TOKEN", "auth_performer": "PER_USER", "auth_template": map[string]any{"headers": map[string]string{"X-Api-Key": "{api_key}"}},
		"admin_credentials": map[string]string{"api_key": "key-of-admin"}}, &created)
	id := created.ServerID
	c.must(t, b, "GET", fmt.Sprintf("/admin/mcp/server/%d/tools", id), nil, nil)
	c.must(t, a, "POST", "/admin/mcp/servers/update", map[string]any{"server_id": id, "selected_tools": []string{"whoami"}}, nil)

	var key struct {
		APIKey string `json:"api_key"`
	}
	c.must(t, b, "POST", "/admin/api-key", map[string]any{"name": "ann", "role": "basic"}, &key)
	ann := newProcClient(key.APIKey)
	ann.must(t, a, "POST", "/mcp/user-credentials", map[string]any{"server_id": id, "credentials": map[string]string{"api_key": "key-of-ann"},
		"transport": "STREAMABLE_HTTP"}, nil)

	lb := &alternating{replicas: []*url.URL{mustURL(t, a), mustURL(t, b)}, served: make([]atomic.Int64, 2), token: key.APIKey}
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas", Version: "1"}, nil)
	ctx := context.Background()
	// The Go SDK's client (the protocol of 2026-07-28: every request whole).
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a + "/mcp", HTTPClient: &http.Client{Transport: lb},
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	whoami := fmt.Sprintf(`{"X-Api-Key":%q,"user":"ann"}`, mcptest.Hash("key-of-ann"))
	for range 3 {
		// The server's tool and Quarry's search tools (the key may search).
		if names := toolNames(t, cs); !slices.Equal(names, []string{"desk__whoami", "fetch", "search", "search_indexed_documents"}) {
			t.Fatalf("tools/list: %v", names)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "desk__whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError || mcptest.Text(res) != whoami {
			t.Fatalf("tools/call: %v %s", err, mcptest.Text(res))
		}
	}
	cs.Close()
	// The handshake of 2025-06-18 (initialize, then initialized), each
	// message to the other replica: no session id is issued or needed.
	headers := []string{"Accept", "application/json, text/event-stream"}
	steps := []struct {
		body   string
		status int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`, 200},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 200},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"desk__whoami","arguments":{}}}`, 200},
	}
	for i, step := range steps {
		base := []string{a, b}[i%2]
		h := headers
		if i > 0 {
			h = append(h, "MCP-Protocol-Version", "2025-06-18")
		}
		r, err := ann.do(base, "POST", "/mcp", json.RawMessage(step.body), h...)
		if err != nil || r.status != step.status || r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("step %d to %s: %v %d %s (session %q)", i, base, err, r.status, r.body, r.header.Get("Mcp-Session-Id"))
		}
		if i == 3 {
			var out struct {
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(r.body, &out) != nil || len(out.Result.Content) != 1 || out.Result.Content[0].Text != whoami {
				t.Errorf("tools/call: %s", r.body)
			}
		}

	}
	// A tool enabled through one replica is offered by both at once.
	c.must(t, b, "POST", "/admin/mcp/servers/update", map[string]any{"server_id": id, "selected_tools": []string{"whoami", "echo"}}, nil)
	cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a + "/mcp", HTTPClient: &http.Client{Transport: lb},
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 2 {
		if names := toolNames(t, cs); !slices.Equal(names, []string{"desk__echo", "desk__whoami", "fetch", "search", "search_indexed_documents"}) {
			t.Errorf("tools/list after enabling echo: %v", names)
		}
	}
	if lb.served[0].Load() == 0 || lb.served[1].Load() == 0 {
		t.Errorf("requests served: %d and %d", lb.served[0].Load(), lb.served[1].Load())
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Names(res.Tools)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
