-- MCP (issue 25): MCP servers as sources of tools, the credentials and
-- OAuth tokens people (or admins) give for them, OAuth connections to
-- them in progress, the input schema of the tools they list, and personal
-- access tokens. postgres/00010_mcp.sql is the same schema.

-- +goose Up
-- An MCP server (Onyx's mcp_server). config holds its secrets, sealed as
-- one value: the admin's API token, the header template, the admin's
-- values for it, and the OAuth client Quarry is at its authorization
-- server. transport, auth_type and auth_performer are NULL until its
-- authentication is configured.
CREATE TABLE mcp_servers (
    id                           INTEGER PRIMARY KEY AUTOINCREMENT,
    name                         TEXT NOT NULL,
    description                  TEXT,
    server_url                   TEXT NOT NULL,
    owner_id                     TEXT REFERENCES users (id) ON DELETE SET NULL,
    transport                    TEXT,
    auth_type                    TEXT,
    auth_performer               TEXT,
    oauth_provider_mode          TEXT NOT NULL DEFAULT 'AUTO_DISCOVERY',
    oauth_authorization_endpoint TEXT,
    oauth_token_endpoint         TEXT,
    oauth_scopes_override        TEXT,
    oauth_additional_auth_params TEXT,
    status                       TEXT NOT NULL DEFAULT 'CREATED',
    last_refreshed_at            INTEGER,
    config                       BLOB,
    version                      INTEGER NOT NULL DEFAULT 1,
    created_at                   INTEGER NOT NULL,
    updated_at                   INTEGER NOT NULL
);

-- A person's values for a server's header template (Onyx's per-user
-- connection config), sealed.
CREATE TABLE mcp_user_credentials (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    mcp_server_id INTEGER NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credentials   BLOB NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (mcp_server_id, user_id)
);
CREATE INDEX mcp_user_credentials_user ON mcp_user_credentials (user_id);

-- An OAuth token for a server: a person's, or (user_id '') the one an
-- admin connected for everyone. Sealed, and refreshed one at a time
-- across replicas with the lease of oauth_tokens (version, refresh_owner,
-- refresh_until).
CREATE TABLE mcp_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    mcp_server_id INTEGER NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,
    token         BLOB NOT NULL,
    expires_at    INTEGER,
    version       INTEGER NOT NULL DEFAULT 1,
    refresh_owner TEXT NOT NULL DEFAULT '',
    refresh_until INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (mcp_server_id, user_id)
);
CREATE INDEX mcp_tokens_user ON mcp_tokens (user_id);

-- An OAuth connection to a server in progress: the SHA-256 of its state,
-- the person, whether they connect the shared token, the sealed PKCE
-- verifier and redirect URI. Used once; good for 5 minutes.
CREATE TABLE mcp_oauth_states (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    state_hash    TEXT NOT NULL UNIQUE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mcp_server_id INTEGER NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    shared        BOOLEAN NOT NULL,
    secret        BLOB NOT NULL,
    return_path   TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX mcp_oauth_states_expires ON mcp_oauth_states (expires_at);

-- The tools an MCP server lists are tool rows with mcp_server_id set,
-- one per name and server, keeping the input schema the server gave.
ALTER TABLE tools ADD COLUMN mcp_input_schema TEXT;
CREATE UNIQUE INDEX tools_mcp_server_name ON tools (mcp_server_id, name) WHERE mcp_server_id IS NOT NULL;

-- A personal access token (Onyx's personal_access_token): only the
-- SHA-256 of the token is kept. scopes is a JSON list of permissions, or
-- NULL for the person's whole rights. A revoked token is deleted.
CREATE TABLE personal_access_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    hashed_token  TEXT NOT NULL UNIQUE,
    token_display TEXT NOT NULL,
    scopes        TEXT,
    expires_at    INTEGER,
    last_used_at  INTEGER,
    created_at    INTEGER NOT NULL
);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id);

-- +goose Down
DROP TABLE personal_access_tokens;
DROP INDEX tools_mcp_server_name;
ALTER TABLE tools DROP COLUMN mcp_input_schema;
DROP TABLE mcp_oauth_states;
DROP TABLE mcp_tokens;
DROP TABLE mcp_user_credentials;
DROP TABLE mcp_servers;
