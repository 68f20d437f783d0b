package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The operations of Quarry's MCP endpoint, each timed beside the API
// route it must keep up with, in the same run and from the same clients:
//
//   - mcp-call: tools/call through POST /mcp beside POST
//     /tool/{tool_id}/run, the same operation of the same tool on the
//     same ticket of bench's upstream; the difference is what MCP adds
//     (the JSON-RPC envelope, the SDK, the catalog's version read).
//   - mcp-list: tools/list through POST /mcp beside GET /tool, for
//     -tools custom tools of one operation each (so that both answer
//     the same number of tools).
//
// They speak the protocol of 2025-06-18 without a session, as a stateless
// client may: each request is whole.

// The -op names.
const (
	MCPCall = "mcp-call"
	MCPList = "mcp-list"
)

var (
	mcpRoute         = route{"POST", "/mcp"}
	toolListRoute    = route{"GET", "/tool"}
	mcpCallSeries    = series{name: MCPCall, route: mcpRoute}
	mcpRunSeries     = series{name: MCPCall + ":run", route: runRoute}
	mcpListSeries    = series{name: MCPList, route: mcpRoute}
	mcpGetToolSeries = series{name: MCPList + ":get-tool", route: toolListRoute}
)

// mcpHeaders are the headers of a stateless MCP request.
var mcpHeaders = []string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18"}

// mcpCalls is what the clients of mcp-call send.
type mcpCalls struct {
	runPath string
	runs    [][]byte // POST /tool/{id}/run bodies, one per ticket
	calls   [][]byte // the same calls as tools/call messages
}

// mcpLists is what the clients of mcp-list send.
type mcpLists struct {
	list []byte // the tools/list message
}

// prepareMCPCalls creates the tool of tool-run and checks one run and one
// call through /mcp, keeping their answers for the floor.
func prepareMCPCalls(ctx context.Context, w *work, p *preparation) error {
	tr, err := createTicketTool(ctx, p)
	if err != nil {
		return err
	}
	m := &mcpCalls{runPath: tr.path(), runs: tr.bodies}
	for i := 1; i <= tickets; i++ {
		m.calls = append(m.calls, mustJSON(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
			"params": map[string]any{"name": "bench-tool-run__getTicket", "arguments": map[string]any{"ticket_id": i}}}))
	}
	run, err := p.caller.call(ctx, "POST", m.runPath, m.runs[0])
	if err != nil {
		return err
	}
	call, err := p.caller.call(ctx, "POST", mcpRoute.path, m.calls[0], mcpHeaders...)
	if err != nil {
		return err
	}
	if !strings.Contains(string(call), `Printer on floor 3`) || strings.Contains(string(call), `"isError":true`) {
		return fmt.Errorf("the first tools/call did not reach the upstream: %s", truncate(call, 512))
	}
	w.answers[runRoute], w.answers[mcpRoute] = run, call
	w.mcpCalls = m
	return nil
}

// stepMCPCall makes one run and the same call through /mcp, in a random
// order.
func stepMCPCall(c *client, measure bool) {
	m := c.w.mcpCalls
	i := c.rng.IntN(len(m.runs))
	if c.rng.IntN(2) == 0 {
		c.do(mcpRunSeries, m.runPath, m.runs[i], measure)
		c.do(mcpCallSeries, mcpRoute.path, m.calls[i], measure, mcpHeaders...)
		return
	}
	c.do(mcpCallSeries, mcpRoute.path, m.calls[i], measure, mcpHeaders...)
	c.do(mcpRunSeries, m.runPath, m.runs[i], measure)
}

// MCPListDefinition returns the definition of mcp-list's tool i: one
// operation.
func MCPListDefinition(i int) string {
	return fmt.Sprintf(`{"openapi": "3.0.3",
  "info": {"title": "Help desk %[1]d", "description": "Tickets of help desk %[1]d", "version": "1.%[1]d.0"},
  "servers": [{"url": "https://helpdesk-%[1]d.example.com/api/v2"}],
  "paths": {"/tickets/{ticket_id}": {"get": {"operationId": "getTicket", "summary": "Get a ticket of help desk %[1]d",
    "parameters": [{"name": "ticket_id", "in": "path", "required": true, "schema": {"type": "integer", "format": "int64"}},
                   {"name": "fields", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}}],
    "responses": {"200": {"description": "The ticket"}}}}}}`, i)
}

// prepareMCPLists creates -tools custom tools of one operation (in
// process), then checks that tools/list (with the search tools) and GET
// /tool list them all.
func prepareMCPLists(ctx context.Context, w *work, p *preparation) error {
	if !p.sys.inProcess {
		return fmt.Errorf("-op %s creates its tools, in the in-process server only", MCPList)
	}
	n := p.o.Tools
	for i := 1; i <= n; i++ {
		body := mustJSON(map[string]any{"name": fmt.Sprintf("desk-%04d", i), "description": fmt.Sprintf("Help desk %d", i),
			"definition": json.RawMessage(MCPListDefinition(i)), "custom_headers": []header{{"X-Api-Key", fmt.Sprintf("hd-%04d-0123456789", i)}},
			"passthrough_auth": false})
		if _, err := p.caller.call(ctx, "POST", "/admin/tool/custom", body); err != nil {
			return err
		}
		p.screen.fraction("creating tools", i, n)
	}
	p.sys.tools = n
	m := &mcpLists{list: mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})}
	list, err := p.caller.call(ctx, "POST", mcpRoute.path, m.list, mcpHeaders...)
	if err != nil {
		return err
	}
	var out struct {
		Result struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		} `json:"result"`
	}
	// The caller may search: /mcp lists the search tools beside the custom
	// ones (search_indexed_documents, search and fetch).
	const searchTools = 3
	if err := json.Unmarshal(list, &out); err != nil || len(out.Result.Tools) != n+searchTools || out.Result.NextCursor != "" {
		return fmt.Errorf("tools/list answered %d tools (next cursor %q), want %d: %v", len(out.Result.Tools), out.Result.NextCursor, n+searchTools, err)
	}
	all, err := p.caller.call(ctx, "GET", toolListRoute.path, nil)
	if err != nil {
		return err
	}
	w.answers[mcpRoute], w.answers[toolListRoute] = list, all
	w.mcpLists = m
	return nil
}

// stepMCPList lists the tools through /mcp and through GET /tool, in a
// random order.
func stepMCPList(c *client, measure bool) {
	m := c.w.mcpLists
	if c.rng.IntN(2) == 0 {
		c.do(mcpGetToolSeries, toolListRoute.path, nil, measure)
		c.do(mcpListSeries, mcpRoute.path, m.list, measure, mcpHeaders...)
		return
	}
	c.do(mcpListSeries, mcpRoute.path, m.list, measure, mcpHeaders...)
	c.do(mcpGetToolSeries, toolListRoute.path, nil, measure)
}
