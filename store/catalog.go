package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/quarryhq/quarry"
)

// The catalog of Quarry's MCP endpoint: the enabled tools it offers, and
// a version that changes whenever a tool or an MCP server does, so that
// replicas rebuild their copy only then.

// ToolCatalogVersion returns a value that changes whenever a tool or an
// MCP server is created, changed or deleted: their counts, their highest
// ids and the sums of their versions (every change bumps a version). It
// reads no clock, so that replicas whose clocks differ agree.
func (db *DB) ToolCatalogVersion(ctx context.Context) (string, error) {
	var n, maxID, at, sn, smax, sat int64
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM tools), (SELECT COALESCE(MAX(id), 0) FROM tools), (SELECT COALESCE(SUM(version), 0) FROM tools),
		(SELECT COUNT(*) FROM mcp_servers), (SELECT COALESCE(MAX(id), 0) FROM mcp_servers), (SELECT COALESCE(SUM(version), 0) FROM mcp_servers)`).
		Scan(&n, &maxID, &at, &sn, &smax, &sat)
	if err != nil {
		return "", mapError(err)
	}
	return fmt.Sprintf("%d.%d.%d.%d.%d.%d", n, maxID, at, sn, smax, sat), nil
}

// ToolCatalog returns the enabled tools that are not built-in, ascending
// by id, without their header values (the catalog needs none).
func (db *DB) ToolCatalog(ctx context.Context) ([]*quarry.Tool, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, description, definition, display_name, mcp_server_id, mcp_input_schema, version
		FROM tools WHERE enabled AND in_code_tool_id IS NULL ORDER BY id`)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.Tool{}
	for rows.Next() {
		var (
			t           = &quarry.Tool{Enabled: true}
			definition  sql.NullString
			inputSchema sql.NullString
		)
		if err := rows.Scan(&t.ID, &t.Name, &t.Description, &definition, &t.DisplayName, &t.MCPServerID, &inputSchema, &t.Version); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if definition.Valid {
			t.Definition = json.RawMessage(definition.String)
		}
		if inputSchema.Valid {
			t.MCPInputSchema = json.RawMessage(inputSchema.String)
		}
		out = append(out, t)
	}
	return out, closeRows(rows)
}
