-- Assistants (issue 42, items 2 and 3): Onyx's personas, with their tools,
-- document sets, labels, and the people and groups they are shared with
-- (each at a level: VIEWER or EDITOR). The default assistant becomes
-- persona 0, built in and ownerless, with the instructions and tools the
-- default_assistant tables held, which go. A persona is never deleted but
-- marked (deleted), as Onyx's, so that its sessions keep it. An owner or
-- owner group that goes leaves the persona vacant (admins manage it).
-- personas, persona_tools and persona_document_sets bump cache_version, as default_assistant's
-- tables did (store/cache.go keeps persona 0). postgres/00024_personas.sql
-- is the same schema.

-- +goose Up
CREATE TABLE personas (
    id                             INTEGER PRIMARY KEY AUTOINCREMENT,
    name                           TEXT NOT NULL,
    description                    TEXT NOT NULL,
    user_id                        TEXT REFERENCES users (id) ON DELETE SET NULL,
    owner_group_id                 INTEGER REFERENCES user_groups (id) ON DELETE SET NULL,
    builtin                        BOOLEAN NOT NULL DEFAULT FALSE,
    is_public                      BOOLEAN NOT NULL,
    public_permission              TEXT NOT NULL DEFAULT 'VIEWER' CHECK (public_permission IN ('VIEWER', 'EDITOR')),
    is_listed                      BOOLEAN NOT NULL DEFAULT TRUE,
    is_featured                    BOOLEAN NOT NULL DEFAULT FALSE,
    display_priority               INTEGER,
    deleted                        BOOLEAN NOT NULL DEFAULT FALSE,
    system_prompt                  TEXT,
    task_prompt                    TEXT,
    datetime_aware                 BOOLEAN NOT NULL DEFAULT TRUE,
    replace_base_system_prompt     BOOLEAN NOT NULL DEFAULT FALSE,
    starter_messages               TEXT,
    default_model_configuration_id INTEGER,
    icon_name                      TEXT,
    search_start_date              INTEGER,
    created_at                     INTEGER NOT NULL,
    updated_at                     INTEGER NOT NULL
);
CREATE INDEX personas_user ON personas (user_id);

CREATE TABLE persona_tools (
    persona_id INTEGER NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    tool_id    INTEGER NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    PRIMARY KEY (persona_id, tool_id)
);
CREATE INDEX persona_tools_tool ON persona_tools (tool_id);

CREATE TABLE persona_document_sets (
    persona_id      INTEGER NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    document_set_id INTEGER NOT NULL REFERENCES document_sets (id) ON DELETE CASCADE,
    PRIMARY KEY (persona_id, document_set_id)
);
CREATE INDEX persona_document_sets_set ON persona_document_sets (document_set_id);

CREATE TABLE persona_users (
    persona_id INTEGER NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    permission TEXT NOT NULL CHECK (permission IN ('VIEWER', 'EDITOR')),
    PRIMARY KEY (persona_id, user_id)
);
CREATE INDEX persona_users_user ON persona_users (user_id);

CREATE TABLE persona_groups (
    persona_id INTEGER NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    group_id   INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    permission TEXT NOT NULL CHECK (permission IN ('VIEWER', 'EDITOR')),
    PRIMARY KEY (persona_id, group_id)
);
CREATE INDEX persona_groups_group ON persona_groups (group_id);

CREATE TABLE persona_labels (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE persona_label_links (
    persona_id INTEGER NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    label_id   INTEGER NOT NULL REFERENCES persona_labels (id) ON DELETE CASCADE,
    PRIMARY KEY (persona_id, label_id)
);
CREATE INDEX persona_label_links_label ON persona_label_links (label_id);

INSERT INTO personas (id, name, description, builtin, is_public, is_listed, is_featured, display_priority, system_prompt, created_at, updated_at)
    SELECT 0, 'Assistant', 'Your AI assistant: it searches the company''s content and calls the tools an admin connected.',
        TRUE, TRUE, TRUE, TRUE, 0, system_prompt, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, CAST(strftime('%s', 'now') AS INTEGER) * 1000000
    FROM default_assistant WHERE id = 0;
INSERT INTO persona_tools (persona_id, tool_id) SELECT 0, tool_id FROM default_assistant_tools;
DROP TABLE default_assistant_tools;
DROP TABLE default_assistant;

-- +goose StatementBegin
CREATE TRIGGER personas_insert_bumps_cache AFTER INSERT ON personas
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER personas_update_bumps_cache AFTER UPDATE ON personas
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER personas_delete_bumps_cache AFTER DELETE ON personas
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER persona_tools_insert_bumps_cache AFTER INSERT ON persona_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER persona_tools_update_bumps_cache AFTER UPDATE ON persona_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER persona_tools_delete_bumps_cache AFTER DELETE ON persona_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER persona_document_sets_insert_bumps_cache AFTER INSERT ON persona_document_sets
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER persona_document_sets_update_bumps_cache AFTER UPDATE ON persona_document_sets
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER persona_document_sets_delete_bumps_cache AFTER DELETE ON persona_document_sets
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose Down
CREATE TABLE default_assistant (
    id            INTEGER PRIMARY KEY CHECK (id = 0),
    system_prompt TEXT,
    version       INTEGER NOT NULL
);
INSERT INTO default_assistant (id, system_prompt, version) SELECT 0, system_prompt, 1 FROM personas WHERE id = 0;
CREATE TABLE default_assistant_tools (
    tool_id INTEGER PRIMARY KEY REFERENCES tools (id) ON DELETE CASCADE
);
INSERT INTO default_assistant_tools (tool_id) SELECT tool_id FROM persona_tools WHERE persona_id = 0;
-- +goose StatementBegin
CREATE TRIGGER default_assistant_insert_bumps_cache AFTER INSERT ON default_assistant
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_update_bumps_cache AFTER UPDATE ON default_assistant
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_delete_bumps_cache AFTER DELETE ON default_assistant
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_tools_insert_bumps_cache AFTER INSERT ON default_assistant_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_tools_update_bumps_cache AFTER UPDATE ON default_assistant_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_tools_delete_bumps_cache AFTER DELETE ON default_assistant_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
DROP TABLE persona_label_links;
DROP TABLE persona_labels;
DROP TABLE persona_groups;
DROP TABLE persona_users;
DROP TABLE persona_document_sets;
DROP TABLE persona_tools;
DROP TABLE personas;
