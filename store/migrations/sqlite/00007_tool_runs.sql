-- Running custom tools (issue 23): the tokens people connect for the OAuth
-- configurations of tools, the connections in progress, the access and
-- refresh tokens of single sign-on kept for passthrough tools, the extra
-- authorization parameters of OAuth configurations, and the details of
-- audit entries (a run records its method, host, status and duration).
-- postgres/00007_tool_runs.sql is the same schema.

-- +goose Up
ALTER TABLE oauth_configs ADD COLUMN additional_params TEXT;

ALTER TABLE audit_events ADD COLUMN details TEXT;

-- A person's token for an OAuth configuration: the access token, refresh
-- token, type and scope, sealed together. version is bumped by every
-- write; a replica that refreshes the token first takes it with a
-- compare-and-swap on version, writing refresh_owner and refresh_until
-- (a lease), so that one refresh runs at a time across replicas.
CREATE TABLE oauth_tokens (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    oauth_config_id INTEGER NOT NULL REFERENCES oauth_configs (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token           BLOB NOT NULL,
    expires_at      INTEGER,
    version         INTEGER NOT NULL DEFAULT 1,
    refresh_owner   TEXT NOT NULL DEFAULT '',
    refresh_until   INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (oauth_config_id, user_id)
);
CREATE INDEX oauth_tokens_user ON oauth_tokens (user_id);

-- A connection to an OAuth configuration in progress: the SHA-256 of its
-- state, the person it is for, its sealed PKCE verifier and where the
-- browser goes afterwards. Used once, then deleted; good for 5 minutes.
CREATE TABLE oauth_states (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    state_hash      TEXT NOT NULL UNIQUE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    oauth_config_id INTEGER NOT NULL REFERENCES oauth_configs (id) ON DELETE CASCADE,
    secret          BLOB NOT NULL,
    return_path     TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
);
CREATE INDEX oauth_states_expires ON oauth_states (expires_at);

-- The single sign-on tokens of a session opened by the OpenID provider,
-- sealed, for the tools that pass the person's own access token through.
-- They go with their session (signing out, deactivation, ended sessions).
CREATE TABLE sso_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    INTEGER NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
    token         BLOB NOT NULL,
    expires_at    INTEGER,
    version       INTEGER NOT NULL DEFAULT 1,
    refresh_owner TEXT NOT NULL DEFAULT '',
    refresh_until INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- +goose Down
DROP TABLE sso_tokens;
DROP TABLE oauth_states;
DROP TABLE oauth_tokens;
ALTER TABLE audit_events DROP COLUMN details;
ALTER TABLE oauth_configs DROP COLUMN additional_params;
