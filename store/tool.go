package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

const toolColumns = `t.id, t.name, t.description, t.definition, t.display_name, t.in_code_tool_id, t.headers,
	t.passthrough_auth, t.mcp_server_id, t.mcp_input_schema, t.user_id, t.oauth_config_id, o.name, t.enabled, t.chat_selectable,
	t.agent_creation_selectable, t.default_enabled, t.version, t.created_at, t.updated_at`

const toolFrom = ` FROM tools t LEFT JOIN oauth_configs o ON o.id = t.oauth_config_id`

// ToolNotFound answers a tool id that names no tool.
var errToolNotFound = quarry.Errorf(quarry.ENOTFOUND, "Tool by specified id does not exist")

func oauthConfigNotFound(id int64) error {
	return quarry.Errorf(quarry.ENOTFOUND, "OAuth config with id %d not found", id)
}

func (db *DB) scanTool(s interface{ Scan(...any) error }) (*quarry.Tool, error) {
	var (
		t                quarry.Tool
		definition       sql.NullString
		inputSchema      sql.NullString
		headers          []byte
		created, updated int64
	)
	err := s.Scan(&t.ID, &t.Name, &t.Description, &definition, &t.DisplayName, &t.InCodeToolID, &headers,
		&t.PassthroughAuth, &t.MCPServerID, &inputSchema, &t.UserID, &t.OAuthConfigID, &t.OAuthConfigName, &t.Enabled,
		&t.ChatSelectable, &t.AgentCreationSelectable, &t.DefaultEnabled, &t.Version, &created, &updated)
	if err != nil {
		return nil, err
	}
	if definition.Valid {
		t.Definition = json.RawMessage(definition.String)
	}
	if inputSchema.Valid {
		t.MCPInputSchema = json.RawMessage(inputSchema.String)
	}
	t.Headers = []quarry.Header{}
	if headers != nil {
		pt, err := db.keys.open(purposeToolHeaders, headers)
		if err != nil {
			return nil, fmt.Errorf("tool %d: %w", t.ID, err)
		}
		if err := json.Unmarshal(pt, &t.Headers); err != nil {
			return nil, fmt.Errorf("tool %d headers: %w", t.ID, err)
		}
	}
	t.CreatedAt, t.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	return &t, nil
}

func (db *DB) tool(ctx context.Context, q querier, id int64) (*quarry.Tool, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+toolColumns+toolFrom+` WHERE t.id = $1`, id)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := closeRows(rows); err != nil {
			return nil, err
		}
		return nil, errToolNotFound
	}
	t, err := db.scanTool(rows)
	if err != nil {
		return nil, mapError(err)
	}
	return t, closeRows(rows)
}

// Tool returns tool id, with its header values in clear. Tools are kept
// between requests while they hold (see readCache).
func (db *DB) Tool(ctx context.Context, id int64) (*quarry.Tool, error) {
	return cached(ctx, db,
		func(rc *readCache, v int64) (*quarry.Tool, bool) { return rc.tool(v, id) },
		func(q querier) (*quarry.Tool, error) { return db.tool(ctx, q, id) },
		func(rc *readCache, v int64, t *quarry.Tool) { rc.putTool(v, t) })
}

// Tools returns every tool, built-ins first, ascending by id.
func (db *DB) Tools(ctx context.Context) ([]*quarry.Tool, error) {
	return queryAll(ctx, db.read, db.scanTool, `SELECT `+toolColumns+toolFrom+` ORDER BY t.id`)
}

func (db *DB) sealHeaders(hs []quarry.Header) []byte {
	if hs == nil {
		hs = []quarry.Header{}
	}
	return db.keys.seal(purposeToolHeaders, []byte(jsonText(hs)))
}

// checkOAuthConfig fails with 404 if id names no OAuth config.
func (tx *Tx) checkOAuthConfig(ctx context.Context, id *int64) error {
	if id == nil {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM oauth_configs WHERE id = $1`, *id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return oauthConfigNotFound(*id)
	}
	return err
}

// CreateTool creates a custom tool owned by c. Its definition must have
// been validated (package tooldef).
func (db *DB) CreateTool(ctx context.Context, c *quarry.Caller, in quarry.ToolInput) (*quarry.Tool, error) {
	var t *quarry.Tool
	err := db.update(ctx, func(tx *Tx) error {
		draft := quarry.Tool{PassthroughAuth: in.PassthroughAuth, Headers: in.Headers}
		if err := draft.CheckAuth(); err != nil {
			return err
		}
		if err := tx.checkOAuthConfig(ctx, in.OAuthConfigID); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO tools (name, description, definition, headers, passthrough_auth, user_id, oauth_config_id,
				enabled, chat_selectable, agent_creation_selectable, default_enabled, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, TRUE, TRUE, FALSE, $8, $8) RETURNING id`,
			in.Name, in.Description, string(in.Definition), db.sealHeaders(in.Headers), in.PassthroughAuth, c.ID,
			in.OAuthConfigID, tx.now.Micros()).Scan(&id)
		if err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "tool.create", "tool", id, []string{"name", "description", "definition", "custom_headers", "passthrough_auth", "oauth_config_id"}); err != nil {
			return err
		}
		t, err = db.tool(ctx, tx, id)
		return err
	})
	return t, err
}

// UpdateTool applies a partial update to custom tool id for c (contract
// section 4.2, checks 1–3 and 5–7; the caller validates the definition,
// check 4), as quarry.ToolUpdate.Apply says. The If-Match check and the
// write are one conditional statement.
func (db *DB) UpdateTool(ctx context.Context, c *quarry.Caller, id int64, u quarry.ToolUpdate) (*quarry.Tool, error) {
	return retryRaced(fmt.Sprintf("Tool %d", id), func() (*quarry.Tool, error) { return db.updateTool(ctx, c, id, u) })
}

func (db *DB) updateTool(ctx context.Context, c *quarry.Caller, id int64, u quarry.ToolUpdate) (*quarry.Tool, error) {
	var t *quarry.Tool
	err := db.update(ctx, func(tx *Tx) error {
		old, err := db.tool(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckToolEdit(old); err != nil {
			return err
		}
		next := u.Apply(old)
		if err := next.CheckAuth(); err != nil {
			return err
		}
		if u.OAuthConfigID != nil {
			if err := tx.checkOAuthConfig(ctx, *u.OAuthConfigID); err != nil {
				return err
			}
		}
		if err := quarry.CheckVersion(u.IfMatch, old.Version); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE tools SET name = $1, description = $2, definition = $3, headers = $4, passthrough_auth = $5,
				oauth_config_id = $6, version = version + 1, updated_at = $7
			WHERE id = $8 AND version = $9`,
			next.Name, next.Description, string(next.Definition), db.sealHeaders(next.Headers), next.PassthroughAuth,
			next.OAuthConfigID, later(tx.now, old.UpdatedAt).Micros(), id, old.Version)
		if err := swapped(res, err, u.IfMatch != nil); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "tool.update", "tool", id, u.ChangedFields(old, next)); err != nil {
			return err
		}
		t, err = db.tool(ctx, tx, id)
		return err
	})
	return t, err
}

// DeleteTool deletes custom tool id, under the same rules as UpdateTool.
func (db *DB) DeleteTool(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		old, err := db.tool(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckToolEdit(old); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tools WHERE id = $1`, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "tool.delete", "tool", id, nil)
	})
}

// SetToolsEnabled enables or disables the tools ids (built-in or custom)
// for c and returns their ids, each once, in the order given. Every tool
// must exist (404, naming the missing ids as Onyx does); admins may change
// any tool, curators the custom tools they own (403). Each tool that
// changes gets a new version and an audit entry.
func (db *DB) SetToolsEnabled(ctx context.Context, c *quarry.Caller, ids []int64, enabled bool) ([]int64, error) {
	if len(ids) == 0 {
		return nil, quarry.ErrNoToolIDs
	}
	var out []int64
	err := db.update(ctx, func(tx *Tx) error {
		seen := map[int64]bool{}
		var tools []*quarry.Tool
		var missing []string
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			t, err := db.tool(ctx, tx, id)
			if quarry.ErrorCode(err) == quarry.ENOTFOUND {
				missing = append(missing, strconv.FormatInt(id, 10))
				continue
			}
			if err != nil {
				return err
			}
			tools = append(tools, t)
		}
		if missing != nil {
			return quarry.Errorf(quarry.ENOTFOUND, "Tools with IDs [%s] not found", strings.Join(missing, ", "))
		}
		for _, t := range tools {
			if err := c.CheckEnableTool(t); err != nil {
				return err
			}
		}
		for _, t := range tools {
			out = append(out, t.ID)
			if t.Enabled == enabled {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE tools SET enabled = $1, version = version + 1, updated_at = $2 WHERE id = $3`,
				enabled, later(tx.now, t.UpdatedAt).Micros(), t.ID); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "tool.update", "tool", t.ID, []string{"enabled"}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
