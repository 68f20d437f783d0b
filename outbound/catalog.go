package outbound

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/toolrun"
)

// ToolOperation is something a caller (an outside assistant over Quarry's
// MCP endpoint, or the chat's model) may run through RunTool: an operation
// of an enabled custom tool whose definition compiles, or an enabled tool
// of an MCP server that is configured and reachable over HTTP.
type ToolOperation struct {
	ToolID int64
	// Method is what RunTool runs: the operation's name, or the MCP
	// server's name of its tool.
	Method string
	// Prefix is the custom tool's name, or the MCP server's.
	Prefix      string
	Title       string
	Description string
	InputSchema json.RawMessage // A JSON Schema object.
	ReadOnly    bool            // A GET operation.
	FromMCP     bool            // A tool of an MCP server: its run answers a tools/call result.
}

// ToolOperations returns the operations of the enabled tools, by tool id
// and then name: those that the MCP endpoint and the chat offer alike.
func (s *Service) ToolOperations(ctx context.Context) ([]ToolOperation, error) {
	dctx, cancel := s.dbContext(ctx)
	defer cancel()
	tools, err := s.db.ToolCatalog(dctx)
	if err != nil {
		return nil, err
	}
	servers := map[int64]*quarry.MCPServer{}
	ms, err := s.db.MCPServers(dctx)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		servers[m.ID] = m
	}
	var out []ToolOperation
	for _, t := range tools {
		desc := ""
		if t.Description != nil {
			desc = *t.Description
		}
		if t.MCPServerID != nil {
			m := servers[*t.MCPServerID]
			if m == nil || !m.Configured() || m.Status == quarry.MCPDisconnected || *m.Transport == quarry.MCPStdio {
				continue
			}
			schema := t.MCPInputSchema
			if len(schema) == 0 {
				schema = json.RawMessage(`{"type":"object"}`)
			}
			title := t.Name
			if t.DisplayName != nil && *t.DisplayName != "" {
				title = *t.DisplayName
			}
			out = append(out, ToolOperation{ToolID: t.ID, Method: t.Name, Prefix: m.Name, Title: title, Description: desc,
				InputSchema: schema, FromMCP: true})
			continue
		}
		d, err := s.Definition(ctx, t.Definition)
		if err != nil {
			continue // A definition that no longer compiles offers nothing (a run says why).
		}
		for _, method := range d.Methods() {
			op, err := d.Operation(method)
			if err != nil {
				continue
			}
			out = append(out, ToolOperation{ToolID: t.ID, Method: method, Prefix: t.Name, Title: t.Name + ": " + firstNonEmpty(op.Summary, method),
				Description: describeOperation(op, desc), InputSchema: op.InputSchema(), ReadOnly: op.Method == http.MethodGet})
		}
	}
	return out, nil
}

// describeOperation returns the description of an operation: its
// summary, its description, and its tool's.
func describeOperation(op *toolrun.Operation, toolDesc string) string {
	var parts []string
	for _, p := range []string{op.Summary, op.Description, toolDesc} {
		if p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n\n")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
