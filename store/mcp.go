package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
)

// MCP servers (Onyx's mcp_server), the values people give for them
// (mcp_user_credentials), their OAuth tokens (mcp_tokens: a person's, or
// the one an admin connected for everyone, under user_id '') and
// connections to them in progress (mcp_oauth_states). A server's secrets
// are sealed as one value (config); the tools it lists are tool rows with
// mcp_server_id set.

const mcpServerColumns = `s.id, s.name, s.description, s.server_url, s.owner_id, COALESCE(u.email, ''), s.transport, s.auth_type,
	s.auth_performer, s.oauth_provider_mode, s.oauth_authorization_endpoint, s.oauth_token_endpoint, s.oauth_scopes_override,
	s.oauth_additional_auth_params, s.status, s.last_refreshed_at, s.config, s.version, s.created_at, s.updated_at,
	(SELECT COUNT(*) FROM tools t WHERE t.mcp_server_id = s.id)`

const mcpServerFrom = ` FROM mcp_servers s LEFT JOIN users u ON u.id = s.owner_id`

// mcpTokens are the OAuth tokens of MCP servers, refreshed like tools'
// (store/tooltoken.go).
var mcpTokens = tokenTable{"mcp_tokens", "mcp_server_id = $1 AND user_id = $2", purposeMCPToken}

// SharedMCPUser is the user_id under which a server's shared OAuth token
// (connected by an admin for everyone) is kept.
const SharedMCPUser = ""

func mcpServerNotFound() error { return quarry.Errorf(quarry.ENOTFOUND, "MCP server not found") }

func (db *DB) scanMCPServer(s interface{ Scan(...any) error }) (*quarry.MCPServer, error) {
	var (
		m                         quarry.MCPServer
		transport, auth, perf     sql.NullString
		scopes, params            sql.NullString
		refreshed                 sql.NullInt64
		config                    []byte
		created, updated, version int64
	)
	err := s.Scan(&m.ID, &m.Name, &m.Description, &m.ServerURL, &m.OwnerID, &m.OwnerEmail, &transport, &auth, &perf,
		&m.ProviderMode, &m.AuthorizationEndpoint, &m.TokenEndpoint, &scopes, &params, &m.Status, &refreshed, &config,
		&version, &created, &updated, &m.ToolCount)
	if err != nil {
		return nil, err
	}
	if transport.Valid {
		t := quarry.MCPTransport(transport.String)
		m.Transport = &t
	}
	if auth.Valid {
		a := quarry.MCPAuthType(auth.String)
		m.AuthType = &a
	}
	if perf.Valid {
		p := quarry.MCPPerformer(perf.String)
		m.Performer = &p
	}
	if scopes.Valid {
		if err := json.Unmarshal([]byte(scopes.String), &m.ScopesOverride); err != nil {
			return nil, fmt.Errorf("mcp server %d scopes: %w", m.ID, err)
		}
	}
	if params.Valid {
		if err := json.Unmarshal([]byte(params.String), &m.AdditionalAuthParams); err != nil {
			return nil, fmt.Errorf("mcp server %d params: %w", m.ID, err)
		}
	}
	if refreshed.Valid {
		t := quarry.TimeFromMicros(refreshed.Int64)
		m.LastRefreshedAt = &t
	}
	if config != nil {
		pt, err := db.keys.open(purposeMCPConfig, config)
		if err != nil {
			return nil, fmt.Errorf("mcp server %d: %w", m.ID, err)
		}
		if err := json.Unmarshal(pt, &m.Config); err != nil {
			return nil, fmt.Errorf("mcp server %d config: %w", m.ID, err)
		}
	}
	m.Version, m.CreatedAt, m.UpdatedAt = version, quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	return &m, nil
}

func (db *DB) mcpServers(ctx context.Context, q querier, where string, args ...any) ([]*quarry.MCPServer, error) {
	return queryAll(ctx, q, db.scanMCPServer, `SELECT `+mcpServerColumns+mcpServerFrom+where+` ORDER BY s.id`, args...)
}

func (db *DB) mcpServer(ctx context.Context, q querier, id int64) (*quarry.MCPServer, error) {
	ms, err := db.mcpServers(ctx, q, ` WHERE s.id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, mcpServerNotFound()
	}
	return ms[0], nil
}

// MCPServer returns server id, its secrets in clear: never answer them.
func (db *DB) MCPServer(ctx context.Context, id int64) (*quarry.MCPServer, error) {
	return db.mcpServer(ctx, db.read, id)
}

// EditableMCPServer returns server id (as MCPServer does) for c to change,
// list and sync: 403 when c may not (quarry.Caller.CheckEditMCPServer).
func (db *DB) EditableMCPServer(ctx context.Context, c *quarry.Caller, id int64) (*quarry.MCPServer, error) {
	m, err := db.mcpServer(ctx, db.read, id)
	if err != nil {
		return nil, err
	}
	return m, c.CheckEditMCPServer(m)
}

// MCPServers returns every MCP server, ascending by id, with the number
// of its tools.
func (db *DB) MCPServers(ctx context.Context) ([]*quarry.MCPServer, error) {
	return db.mcpServers(ctx, db.read, "")
}

// nullJSON renders v as JSON text, or NULL for a nil slice or map.
func nullJSON[T any](v T, isNil bool) *string {
	if isNil {
		return nil
	}
	s := jsonText(v)
	return &s
}

// mcpServerArgs are the columns of m that writes set, in the order of
// mcpServerSet.
func (db *DB) mcpServerArgs(m *quarry.MCPServer) []any {
	var config []byte
	if c := m.Config; c.APIToken != "" || len(c.HeaderTemplate) > 0 || len(c.AdminCredentials) > 0 || c.OAuth != nil {
		config = db.keys.seal(purposeMCPConfig, []byte(jsonText(c)))
	}
	var refreshed *int64
	if m.LastRefreshedAt != nil {
		v := m.LastRefreshedAt.Micros()
		refreshed = &v
	}
	return []any{m.Name, m.Description, m.ServerURL, m.Transport, m.AuthType, m.Performer, m.ProviderMode,
		m.AuthorizationEndpoint, m.TokenEndpoint, nullJSON(m.ScopesOverride, m.ScopesOverride == nil),
		nullJSON(m.AdditionalAuthParams, m.AdditionalAuthParams == nil), m.Status, refreshed, config}
}

const mcpServerSet = `name = $1, description = $2, server_url = $3, transport = $4, auth_type = $5, auth_performer = $6,
	oauth_provider_mode = $7, oauth_authorization_endpoint = $8, oauth_token_endpoint = $9, oauth_scopes_override = $10,
	oauth_additional_auth_params = $11, status = $12, last_refreshed_at = $13, config = $14`

// insertMCPServer inserts m, owned by c, and returns its id.
func (tx *Tx) insertMCPServer(ctx context.Context, c *quarry.Caller, m *quarry.MCPServer) (int64, error) {
	args := append(tx.db.mcpServerArgs(m), c.ID, tx.now.Micros())
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO mcp_servers (name, description, server_url, transport, auth_type, auth_performer,
			oauth_provider_mode, oauth_authorization_endpoint, oauth_token_endpoint, oauth_scopes_override,
			oauth_additional_auth_params, status, last_refreshed_at, config, owner_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16) RETURNING id`, args...).Scan(&id)
	return id, err
}

// writeMCPServer writes next over old (a conditional update on old's
// version, so that a concurrent change makes the write lose: errRaced).
func (tx *Tx) writeMCPServer(ctx context.Context, old, next *quarry.MCPServer) error {
	args := append(tx.db.mcpServerArgs(next), later(tx.now, old.UpdatedAt).Micros(), old.ID, old.Version)
	res, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET `+mcpServerSet+`, version = version + 1, updated_at = $15
		WHERE id = $16 AND version = $17`, args...)
	return swapped(res, err, false)
}

// forgetMCPConnections deletes what people gave for server id: their
// values for its header template, and every OAuth token for it (the
// shared one too).
func (tx *Tx) forgetMCPConnections(ctx context.Context, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_user_credentials WHERE mcp_server_id = $1`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_tokens WHERE mcp_server_id = $1`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM mcp_oauth_states WHERE mcp_server_id = $1`, id)
	return err
}

// CreateMCPServer registers an MCP server owned by c (Onyx's simple
// create: a name, a description and a URL; its authentication is
// configured later).
func (db *DB) CreateMCPServer(ctx context.Context, c *quarry.Caller, name string, description *string, serverURL string) (*quarry.MCPServer, error) {
	var out *quarry.MCPServer
	err := db.update(ctx, func(tx *Tx) error {
		m := &quarry.MCPServer{Name: name, Description: description, ServerURL: strings.TrimSpace(serverURL),
			ProviderMode: quarry.MCPAutoDiscovery, Status: quarry.MCPCreated}
		id, err := tx.insertMCPServer(ctx, c, m)
		if err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "mcp_server.create", "mcp_server", id, quarry.MCPServerChangedFields(nil, m)); err != nil {
			return err
		}
		out, err = db.mcpServer(ctx, tx, id)
		return err
	})
	return out, err
}

// SetUpMCPServer configures an MCP server's authentication as in says
// (Onyx's POST /admin/mcp/servers/create): a new one owned by c when id is
// nil, else server id, which c must be allowed to change. When in changes
// how or where the server authenticates, the tokens and values people gave
// for it are deleted in the same transaction (audit field "connections").
// adminCreds, when not nil, are c's own values for a per-person template,
// kept as c's credentials (as Onyx keeps the admin's).
func (db *DB) SetUpMCPServer(ctx context.Context, c *quarry.Caller, id *int64, in *quarry.MCPServerSetup, adminCreds map[string]string) (*quarry.MCPServer, error) {
	return retryRaced("MCP server", func() (*quarry.MCPServer, error) {
		var out *quarry.MCPServer
		err := db.update(ctx, func(tx *Tx) error {
			var old *quarry.MCPServer
			if id != nil {
				var err error
				if old, err = db.mcpServer(ctx, tx, *id); err != nil {
					if quarry.ErrorCode(err) == quarry.ENOTFOUND {
						return quarry.Errorf(quarry.ENOTFOUND, "MCP server with ID %d not found", *id)
					}
					return err
				}
				if err := c.CheckEditMCPServer(old); err != nil {
					return err
				}
			}
			next, forget, err := in.Apply(old)
			if err != nil {
				return err
			}
			fields := quarry.MCPServerChangedFields(old, next)
			sid := int64(0)
			if old == nil {
				if sid, err = tx.insertMCPServer(ctx, c, next); err != nil {
					return err
				}
			} else {
				sid = old.ID
				if err := tx.writeMCPServer(ctx, old, next); err != nil {
					return err
				}
				if forget {
					if err := tx.forgetMCPConnections(ctx, sid); err != nil {
						return err
					}
					fields = append(fields, "connections")
				}
			}
			if adminCreds != nil && next.PerUser() {
				if err := tx.saveMCPCredentials(ctx, sid, c.ID, adminCreds); err != nil {
					return err
				}
			}
			action := "mcp_server.update"
			if old == nil {
				action = "mcp_server.create"
			}
			if err := tx.audit(ctx, c, action, "mcp_server", sid, fields); err != nil {
				return err
			}
			out, err = db.mcpServer(ctx, tx, sid)
			return err
		})
		return out, err
	})
}

// UpdateMCPServer applies p to server id for c (Onyx's PATCH
// /admin/mcp/server/{id}). A new URL forgets the tokens and values people
// gave: they were for the old one.
func (db *DB) UpdateMCPServer(ctx context.Context, c *quarry.Caller, id int64, p quarry.MCPServerPatch) (*quarry.MCPServer, error) {
	return retryRaced("MCP server", func() (*quarry.MCPServer, error) {
		var out *quarry.MCPServer
		err := db.update(ctx, func(tx *Tx) error {
			old, err := db.mcpServer(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := c.CheckEditMCPServer(old); err != nil {
				return err
			}
			next, forget := p.Apply(old)
			if err := tx.writeMCPServer(ctx, old, next); err != nil {
				return err
			}
			fields := quarry.MCPServerChangedFields(old, next)
			if forget {
				if err := tx.forgetMCPConnections(ctx, id); err != nil {
					return err
				}
				fields = append(fields, "connections")
			}
			if err := tx.audit(ctx, c, "mcp_server.update", "mcp_server", id, fields); err != nil {
				return err
			}
			out, err = db.mcpServer(ctx, tx, id)
			return err
		})
		return out, err
	})
}

// SetMCPServerStatus sets server id's status for c.
func (db *DB) SetMCPServerStatus(ctx context.Context, c *quarry.Caller, id int64, status quarry.MCPServerStatus) error {
	return db.update(ctx, func(tx *Tx) error {
		old, err := db.mcpServer(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckEditMCPServer(old); err != nil {
			return err
		}
		if old.Status == status {
			return tx.audit(ctx, c, "mcp_server.update", "mcp_server", id, nil)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET status = $1, version = version + 1, updated_at = $2 WHERE id = $3`,
			status, later(tx.now, old.UpdatedAt).Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "mcp_server.update", "mcp_server", id, []string{"status"})
	})
}

// DeleteMCPServer deletes server id for c, with its tools, and what people
// gave for it.
func (db *DB) DeleteMCPServer(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		old, err := db.mcpServer(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckEditMCPServer(old); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tools WHERE mcp_server_id = $1`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_servers WHERE id = $1`, id); err != nil {
			return err
		}
		fields := []string{}
		if old.ToolCount > 0 {
			fields = append(fields, "tools")
		}
		return tx.audit(ctx, c, "mcp_server.delete", "mcp_server", id, fields)
	})
}

// SetMCPOAuthClient keeps what Quarry learned of server id's authorization
// server, or the client it registered there. It is not a change by
// anyone: no audit entry but the caller's connection, and the server's
// version is not bumped (a form open on it stays current).
func (db *DB) SetMCPOAuthClient(ctx context.Context, id int64, client *quarry.MCPOAuthClient) error {
	return db.update(ctx, func(tx *Tx) error {
		m, err := db.mcpServer(ctx, tx, id)
		if err != nil {
			return err
		}
		m.Config.OAuth = client
		_, err = tx.ExecContext(ctx, `UPDATE mcp_servers SET config = $1 WHERE id = $2`,
			db.keys.seal(purposeMCPConfig, []byte(jsonText(m.Config))), id)
		return err
	})
}

// MCPToolsOf returns the tool rows of server id, ascending by id.
func (db *DB) MCPToolsOf(ctx context.Context, id int64) ([]*quarry.Tool, error) {
	return db.mcpToolsOf(ctx, db.read, id)
}

func (db *DB) mcpToolsOf(ctx context.Context, q querier, id int64) ([]*quarry.Tool, error) {
	return queryAll(ctx, q, db.scanTool, `SELECT `+toolColumns+toolFrom+` WHERE t.mcp_server_id = $1 ORDER BY t.id`, id)
}

// MCPTools returns the tool rows of every MCP server, ascending by id.
func (db *DB) MCPTools(ctx context.Context) ([]*quarry.Tool, error) {
	return queryAll(ctx, db.read, db.scanTool, `SELECT `+toolColumns+toolFrom+` WHERE t.mcp_server_id IS NOT NULL ORDER BY t.id`)
}

// SyncMCPTools makes server id's tool rows those of tools, the server's
// listing (Onyx's _upsert_db_tools): a new tool gets a row, disabled until
// an admin enables it, owned by the server's owner; a tool whose
// description, display name or input schema changed is updated; a row
// whose tool is gone is deleted. The server is then CONNECTED (unless
// disconnected), refreshed now. Each change is an audit entry.
func (db *DB) SyncMCPTools(ctx context.Context, c *quarry.Caller, id int64, tools []quarry.MCPToolInfo) (*quarry.MCPToolSync, error) {
	out := &quarry.MCPToolSync{}
	err := db.update(ctx, func(tx *Tx) error {
		m, err := db.mcpServer(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckEditMCPServer(m); err != nil {
			return err
		}
		*out = quarry.MCPToolSync{}
		existing, err := db.mcpToolsOf(ctx, tx, id)
		if err != nil {
			return err
		}
		byName := map[string]*quarry.Tool{}
		for _, t := range existing {
			byName[t.Name] = t
		}
		seen := map[string]bool{}
		for _, in := range tools {
			if in.Name == "" || seen[in.Name] {
				continue
			}
			seen[in.Name] = true
			if t, ok := byName[in.Name]; ok {
				var fields []string
				if deref(t.Description) != in.Description {
					fields = append(fields, "description")
				}
				if deref(t.DisplayName) != in.DisplayName {
					fields = append(fields, "display_name")
				}
				if !quarry.SameJSON(t.MCPInputSchema, in.InputSchema) {
					fields = append(fields, "mcp_input_schema")
				}
				if fields == nil {
					continue
				}
				if _, err := tx.ExecContext(ctx, `UPDATE tools SET description = $1, display_name = $2, mcp_input_schema = $3,
						version = version + 1, updated_at = $4 WHERE id = $5`,
					in.Description, in.DisplayName, string(in.InputSchema), later(tx.now, t.UpdatedAt).Micros(), t.ID); err != nil {
					return err
				}
				if err := tx.audit(ctx, c, "tool.update", "tool", t.ID, fields); err != nil {
					return err
				}
				out.Updated = append(out.Updated, in.Name)
				continue
			}
			var tid int64
			err := tx.QueryRowContext(ctx, `INSERT INTO tools (name, description, display_name, mcp_server_id, mcp_input_schema, user_id,
					passthrough_auth, enabled, chat_selectable, agent_creation_selectable, default_enabled, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, FALSE, FALSE, TRUE, TRUE, FALSE, $7, $7) RETURNING id`,
				in.Name, in.Description, in.DisplayName, id, string(in.InputSchema), m.OwnerID, tx.now.Micros()).Scan(&tid)
			if err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "tool.create", "tool", tid, []string{"name", "description", "display_name", "mcp_server_id", "mcp_input_schema"}); err != nil {
				return err
			}
			out.Created = append(out.Created, in.Name)
		}
		for _, t := range existing {
			if seen[t.Name] {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM tools WHERE id = $1`, t.ID); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "tool.delete", "tool", t.ID, nil); err != nil {
				return err
			}
			out.Deleted = append(out.Deleted, t.Name)
		}
		now := tx.now.Micros()
		_, err = tx.ExecContext(ctx, `UPDATE mcp_servers SET status = $1, last_refreshed_at = $2 WHERE id = $3`,
			quarry.MCPStatusAfterListing(m.Status, nil), now, id)
		return err
	})
	return out, err
}

// MarkMCPListingFailed records that server id's tools could not be listed
// (Onyx: AWAITING_AUTH), unless it is disconnected.
func (db *DB) MarkMCPListingFailed(ctx context.Context, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET status = $1 WHERE id = $2 AND status <> $3`,
			quarry.MCPAwaitingAuth, id, quarry.MCPDisconnected)
		return err
	})
}

// SelectMCPTools enables the tools of server id named in selected and
// disables the others (Onyx's POST /admin/mcp/servers/update), after
// renaming or describing the server when name or description is given. It
// returns the server and the number of tools changed.
func (db *DB) SelectMCPTools(ctx context.Context, c *quarry.Caller, id int64, name, description *string, selected []string) (*quarry.MCPServer, int, error) {
	var (
		out     *quarry.MCPServer
		changed int
	)
	err := db.update(ctx, func(tx *Tx) error {
		m, err := db.mcpServer(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckEditMCPServer(m); err != nil {
			return err
		}
		changed = 0
		var fields []string
		if name != nil && *name != m.Name {
			fields = append(fields, "name")
		}
		if description != nil && !quarry.PtrEqual(m.Description, description) {
			fields = append(fields, "description")
		}
		if fields != nil {
			next := *m
			if name != nil {
				next.Name = *name
			}
			if description != nil {
				next.Description = description
			}
			if err := tx.writeMCPServer(ctx, m, &next); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "mcp_server.update", "mcp_server", id, fields); err != nil {
				return err
			}
		}
		tools, err := db.mcpToolsOf(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, t := range tools {
			want := slices.Contains(selected, t.Name)
			if t.Enabled == want {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE tools SET enabled = $1, version = version + 1, updated_at = $2 WHERE id = $3`,
				want, later(tx.now, t.UpdatedAt).Micros(), t.ID); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "tool.update", "tool", t.ID, []string{"enabled"}); err != nil {
				return err
			}
			changed++
		}
		out, err = db.mcpServer(ctx, tx, id)
		return err
	})
	return out, changed, err
}

// saveMCPCredentials keeps user's values for server id's header template,
// sealed, replacing theirs.
func (tx *Tx) saveMCPCredentials(ctx context.Context, serverID int64, userID string, creds map[string]string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO mcp_user_credentials (mcp_server_id, user_id, credentials, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4)
		ON CONFLICT (mcp_server_id, user_id) DO UPDATE SET credentials = excluded.credentials, updated_at = excluded.updated_at`,
		serverID, userID, tx.db.keys.seal(purposeMCPCreds, []byte(jsonText(creds))), tx.now.Micros())
	return err
}

// SaveMCPCredentials keeps c's values for server id's header template
// (POST /mcp/user-credentials; the caller checked them against the server).
func (db *DB) SaveMCPCredentials(ctx context.Context, c *quarry.Caller, id int64, creds map[string]string) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := db.mcpServer(ctx, tx, id); err != nil {
			return err
		}
		if err := tx.saveMCPCredentials(ctx, id, c.ID, creds); err != nil {
			return err
		}
		return tx.audit(ctx, c, "mcp_credentials.save", "mcp_server", id, []string{"credentials"})
	})
}

// DeleteMCPCredentials disconnects c from server id: their values for its
// template and their OAuth token go (DELETE /mcp/user-credentials/{id}).
// An admin's shared token stays.
func (db *DB) DeleteMCPCredentials(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := db.mcpServer(ctx, tx, id); err != nil {
			return err
		}
		var fields []string
		for _, q := range []struct{ table, field string }{{"mcp_user_credentials", "credentials"}, {"mcp_tokens", "token"}} {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+q.table+` WHERE mcp_server_id = $1 AND user_id = $2`, id, c.ID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				fields = append(fields, q.field)
			}
		}
		return tx.audit(ctx, c, "mcp_credentials.delete", "mcp_server", id, fields)
	})
}

// MCPCredentials returns person userID's values for server id's template,
// or nil when they gave none.
func (db *DB) MCPCredentials(ctx context.Context, id int64, userID string) (map[string]string, error) {
	var sealed []byte
	err := db.read.QueryRowContext(ctx, `SELECT credentials FROM mcp_user_credentials WHERE mcp_server_id = $1 AND user_id = $2`,
		id, userID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapError(err)
	}
	pt, err := db.keys.open(purposeMCPCreds, sealed)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if err := json.Unmarshal(pt, &out); err != nil {
		return nil, fmt.Errorf("mcp credentials: %w", err)
	}
	return out, nil
}

// MCPConnections returns, for person userID, the servers they gave values
// for and those they have an OAuth token for (the shared tokens too,
// under SharedMCPUser).
func (db *DB) MCPConnections(ctx context.Context, userID string) (creds, tokens map[int64]bool, err error) {
	creds, tokens = map[int64]bool{}, map[int64]bool{}
	rows, err := db.read.QueryContext(ctx, `SELECT mcp_server_id, 1 FROM mcp_user_credentials WHERE user_id = $1
		UNION ALL SELECT mcp_server_id, 2 FROM mcp_tokens WHERE user_id = $1 OR user_id = ''`, userID)
	if err != nil {
		return nil, nil, mapError(err)
	}
	for rows.Next() {
		var id, kind int64
		if err := rows.Scan(&id, &kind); err != nil {
			rows.Close()
			return nil, nil, mapError(err)
		}
		if kind == 1 {
			creds[id] = true
		} else {
			tokens[id] = true
		}
	}
	return creds, tokens, closeRows(rows)
}

// HasMCPToken reports whether server id has a token for userID
// (SharedMCPUser: the shared one), usable or not.
func (db *DB) HasMCPToken(ctx context.Context, id int64, userID string) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM mcp_tokens WHERE mcp_server_id = $1 AND user_id = $2`, id, userID).Scan(&n)
	return n > 0, mapError(err)
}

// MCPToken returns the OAuth token of userID (SharedMCPUser: the shared
// one) for server s, refreshed with refresh when due, one refresh at a
// time across replicas. Without a usable one, it answers
// quarry.ConnectMCPFirst (409).
func (db *DB) MCPToken(ctx context.Context, s *quarry.MCPServer, userID string, refresh RefreshFunc) (*quarry.OAuthToken, error) {
	tok, err := db.freshToken(ctx, mcpTokens, refresh, s.ID, userID)
	if errors.Is(err, errReconnect) {
		return nil, quarry.ConnectMCPFirst(s, quarry.MCPNeedsOAuth)
	}
	return tok, err
}

// SaveMCPToken keeps c's OAuth token for server id (the shared one when
// shared), sealed, replacing the one there was.
func (db *DB) SaveMCPToken(ctx context.Context, c *quarry.Caller, id int64, shared bool, tok quarry.OAuthToken) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := db.mcpServer(ctx, tx, id); err != nil {
			return err
		}
		user := c.ID
		if shared {
			user = SharedMCPUser
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_tokens (mcp_server_id, user_id, token, expires_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (mcp_server_id, user_id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at,
				version = mcp_tokens.version + 1, refresh_owner = '', refresh_until = 0, updated_at = excluded.updated_at`,
			id, user, db.sealToken(mcpTokens, tok), db.expiryOf(tok), tx.now.Micros())
		if err != nil {
			return err
		}
		field := "token"
		if shared {
			field = "shared_token"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET status = $1 WHERE id = $2 AND status = $3`,
			quarry.MCPConnected, id, quarry.MCPAwaitingAuth); err != nil {
			return err
		}
		return tx.audit(ctx, c, "mcp_token.connect", "mcp_server", id, []string{field})
	})
}

// BeginMCPOAuth keeps connection k of c in progress under the hash of its
// state, for quarry.OAuthConnectionTTL; its PKCE verifier and redirect URI
// are sealed.
func (db *DB) BeginMCPOAuth(ctx context.Context, c *quarry.Caller, state string, k *quarry.MCPOAuthConnection) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := db.mcpServer(ctx, tx, k.ServerID); err != nil {
			return err
		}
		now := tx.now.Micros()
		if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_oauth_states WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_oauth_states (state_hash, user_id, mcp_server_id, shared, secret, return_path, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, quarry.HashToken(state), c.ID, k.ServerID, k.Shared,
			db.keys.seal(purposeMCPState, []byte(jsonText(k))), k.ReturnPath, now, now+quarry.OAuthConnectionTTL.Microseconds())
		return err
	})
}

// TakeMCPOAuth removes the connection in progress whose state is state and
// returns it: good once, for quarry.OAuthConnectionTTL.
func (db *DB) TakeMCPOAuth(ctx context.Context, state string) (*quarry.MCPOAuthConnection, error) {
	var (
		k       quarry.MCPOAuthConnection
		userID  string
		id      int64
		shared  bool
		ret     string
		sealed  []byte
		expires int64
	)
	err := db.update(ctx, func(tx *Tx) error {
		err := tx.QueryRowContext(ctx, `DELETE FROM mcp_oauth_states WHERE state_hash = $1
			RETURNING user_id, mcp_server_id, shared, secret, return_path, expires_at`, quarry.HashToken(state)).
			Scan(&userID, &id, &shared, &sealed, &ret, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.Errorf(quarry.EINVALID, "Invalid or expired state parameter")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if expires <= db.now().Micros() {
		return nil, quarry.Errorf(quarry.EINVALID, "Invalid or expired state parameter")
	}
	pt, err := db.keys.open(purposeMCPState, sealed)
	if err != nil || json.Unmarshal(pt, &k) != nil {
		return nil, quarry.Errorf(quarry.EINVALID, "Invalid or expired state parameter")
	}
	k.UserID, k.ServerID, k.Shared, k.ReturnPath = userID, id, shared, ret
	return &k, nil
}

// dropMCPConnections deletes what person userID gave for MCP servers:
// their values and their OAuth tokens. It is called in the transaction
// that deactivates them.
func (tx *Tx) dropMCPConnections(ctx context.Context, userID string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_user_credentials WHERE user_id = $1`, userID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM mcp_tokens WHERE user_id = $1`, userID)
	return err
}

// UpdateMCPOAuthClient gives server id the OAuth client an admin typed
// (POST /admin/mcp/oauth/connect's oauth_client_id and
// oauth_client_secret, each when its *_changed flag says so; a masked echo
// keeps the stored value). A new client forgets the tokens people
// connected through the old one, and what was registered or discovered
// for it is kept only when the provider stays.
func (db *DB) UpdateMCPOAuthClient(ctx context.Context, c *quarry.Caller, id int64, idChanged bool, clientID string, secretChanged bool, secret string) (*quarry.MCPServer, error) {
	return retryRaced("MCP server", func() (*quarry.MCPServer, error) {
		var out *quarry.MCPServer
		err := db.update(ctx, func(tx *Tx) error {
			old, err := db.mcpServer(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := c.CheckEditMCPServer(old); err != nil {
				return err
			}
			next := *old
			client := quarry.MCPOAuthClient{}
			if old.Config.OAuth != nil {
				client = *old.Config.OAuth
			}
			prev := client
			if idChanged && !quarry.IsMaskOf(clientID, prev.ClientID) {
				client.ClientID, client.Registered = clientID, false
			}
			if secretChanged && !quarry.IsMaskOf(secret, prev.ClientSecret) {
				client.ClientSecret = secret
			}
			if client.ClientID == prev.ClientID && client.ClientSecret == prev.ClientSecret {
				out = old
				return nil
			}
			next.Config.OAuth = &client
			if err := tx.writeMCPServer(ctx, old, &next); err != nil {
				return err
			}
			if err := tx.forgetMCPConnections(ctx, id); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "mcp_server.update", "mcp_server", id,
				append(quarry.MCPServerChangedFields(old, &next), "connections")); err != nil {
				return err
			}
			out, err = db.mcpServer(ctx, tx, id)
			return err
		})
		return out, err
	})
}
