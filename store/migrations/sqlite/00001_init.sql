-- The initial schema. Timestamps are microseconds since the Unix epoch (UTC),
-- identical on both dialects. Secrets are AES-256-GCM ciphertexts (see
-- store/crypt.go). postgres/00001_init.sql is the same schema.

-- +goose Up
CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    email           TEXT NOT NULL UNIQUE,
    role            TEXT NOT NULL,
    service_account BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT,
    hashed_key TEXT NOT NULL UNIQUE,
    display    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE user_groups (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE user_group_members (
    group_id   INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    is_curator BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX user_group_members_user ON user_group_members (user_id);

CREATE TABLE connectors (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL,
    source         TEXT NOT NULL,
    input_type     TEXT NOT NULL,
    config         TEXT NOT NULL,
    refresh_freq   INTEGER,
    prune_freq     INTEGER,
    indexing_start INTEGER,
    creator_id     TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    UNIQUE (name, source)
);

CREATE TABLE credentials (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT,
    source         TEXT NOT NULL,
    secret         BLOB NOT NULL,
    admin_public   BOOLEAN NOT NULL,
    curator_public BOOLEAN NOT NULL,
    user_id        TEXT REFERENCES users (id) ON DELETE SET NULL,
    version        INTEGER NOT NULL DEFAULT 1,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX credentials_user ON credentials (user_id);

CREATE TABLE credential_groups (
    credential_id INTEGER NOT NULL REFERENCES credentials (id) ON DELETE CASCADE,
    group_id      INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (credential_id, group_id)
);
CREATE INDEX credential_groups_group ON credential_groups (group_id);

CREATE TABLE cc_pairs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL,
    connector_id  INTEGER NOT NULL REFERENCES connectors (id),
    credential_id INTEGER NOT NULL REFERENCES credentials (id),
    access_type   TEXT NOT NULL,
    creator_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (connector_id, credential_id)
);
CREATE INDEX cc_pairs_credential ON cc_pairs (credential_id);

CREATE TABLE cc_pair_groups (
    cc_pair_id INTEGER NOT NULL REFERENCES cc_pairs (id) ON DELETE CASCADE,
    group_id   INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (cc_pair_id, group_id)
);
CREATE INDEX cc_pair_groups_group ON cc_pair_groups (group_id);

CREATE TABLE oauth_configs (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    name              TEXT NOT NULL,
    authorization_url TEXT NOT NULL,
    token_url         TEXT NOT NULL,
    client_id         TEXT NOT NULL,
    client_secret     BLOB NOT NULL,
    scopes            TEXT NOT NULL,
    user_id           TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);

CREATE TABLE tools (
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    name                      TEXT NOT NULL,
    description               TEXT,
    definition                TEXT,
    display_name              TEXT,
    in_code_tool_id           TEXT UNIQUE,
    headers                   BLOB,
    passthrough_auth          BOOLEAN NOT NULL DEFAULT FALSE,
    mcp_server_id             INTEGER,
    user_id                   TEXT REFERENCES users (id) ON DELETE SET NULL,
    oauth_config_id           INTEGER REFERENCES oauth_configs (id),
    enabled                   BOOLEAN NOT NULL,
    chat_selectable           BOOLEAN NOT NULL,
    agent_creation_selectable BOOLEAN NOT NULL,
    default_enabled           BOOLEAN NOT NULL,
    version                   INTEGER NOT NULL DEFAULT 1,
    created_at                INTEGER NOT NULL,
    updated_at                INTEGER NOT NULL
);
CREATE INDEX tools_oauth_config ON tools (oauth_config_id);

CREATE TABLE audit_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            INTEGER NOT NULL,
    actor_id      TEXT,
    api_key_id    INTEGER,
    action        TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    fields        TEXT NOT NULL,
    request_id    TEXT NOT NULL
);
CREATE INDEX audit_events_resource ON audit_events (resource_type, resource_id, id);

-- data_version counts committed changes to what the connector status listing
-- shows; a cached listing is served only while the count is unchanged.
CREATE TABLE data_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO data_version (id, version) VALUES (1, 0);

-- settings holds one-off facts, such as whether the bootstrap key was made.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

INSERT INTO tools (name, description, display_name, in_code_tool_id, enabled, chat_selectable, agent_creation_selectable, default_enabled, created_at, updated_at) VALUES
    ('internal_search', 'The Search Action allows the assistant to search through connected knowledge to help build an answer.', 'Internal Search', 'SearchTool', TRUE, TRUE, TRUE, TRUE, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, CAST(strftime('%s', 'now') AS INTEGER) * 1000000),
    ('web_search', 'The Web Search Action allows the assistant to perform internet searches for up-to-date information.', 'Web Search', 'WebSearchTool', TRUE, TRUE, TRUE, TRUE, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, CAST(strftime('%s', 'now') AS INTEGER) * 1000000),
    ('generate_image', 'The Image Generation Action allows the assistant to generate images from a text description.', 'Image Generation', 'ImageGenerationTool', TRUE, TRUE, TRUE, FALSE, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, CAST(strftime('%s', 'now') AS INTEGER) * 1000000),
    ('open_url', 'The Open URL Action allows the assistant to fetch and read the content of web pages.', 'Open URL', 'OpenURLTool', TRUE, FALSE, TRUE, TRUE, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);

-- +goose Down
DROP TABLE settings;
DROP TABLE data_version;
DROP TABLE audit_events;
DROP TABLE tools;
DROP TABLE oauth_configs;
DROP TABLE cc_pair_groups;
DROP TABLE cc_pairs;
DROP TABLE credential_groups;
DROP TABLE credentials;
DROP TABLE connectors;
DROP TABLE user_group_members;
DROP TABLE user_groups;
DROP TABLE api_keys;
DROP TABLE users;
