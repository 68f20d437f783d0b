-- Model providers (issue 41): the servers of language models that answer
-- in chat (Onyx's llm_provider), the models of each that people may use
-- (Onyx's model_configuration), the groups a provider that is not public
-- is shared with, and the default model. api_key is sealed like a
-- credential's secrets (NULL for a server that takes no key).
-- postgres/00020_llm_providers.sql is the same schema.

-- +goose Up
CREATE TABLE llm_providers (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT,
    provider        TEXT NOT NULL,
    api_key         BLOB,
    api_base        TEXT,
    api_version     TEXT,
    deployment_name TEXT,
    is_public       BOOLEAN NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE TABLE llm_provider_groups (
    llm_provider_id INTEGER NOT NULL REFERENCES llm_providers (id) ON DELETE CASCADE,
    group_id        INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (llm_provider_id, group_id)
);
CREATE INDEX llm_provider_groups_group ON llm_provider_groups (group_id);

-- A model of a provider; its name is unique within the provider.
CREATE TABLE llm_models (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    llm_provider_id      INTEGER NOT NULL REFERENCES llm_providers (id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    is_visible           BOOLEAN NOT NULL,
    max_input_tokens     INTEGER,
    supports_image_input BOOLEAN NOT NULL,
    supports_reasoning   BOOLEAN NOT NULL,
    display_name         TEXT,
    custom_display_name  TEXT,
    UNIQUE (llm_provider_id, name)
);

-- The default model of chat: one row at most, gone with its model.
CREATE TABLE llm_default_model (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    model_id INTEGER NOT NULL REFERENCES llm_models (id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE llm_default_model;
DROP TABLE llm_models;
DROP TABLE llm_provider_groups;
DROP TABLE llm_providers;
