-- The company's directory (SCIM 2.0): its bearer tokens, the people and
-- groups it manages and what it says of them, and the directory's token as
-- the actor of audit entries. postgres/00009_scim.sql is the same schema.

-- +goose Up
-- A SCIM token: only its SHA-256 is stored. At most one is active (making
-- one revokes the one before); revoked ones stay, for the audit log's
-- names. last_used_at is written at most once a minute.
CREATE TABLE scim_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL,
    hashed_token TEXT NOT NULL UNIQUE,
    display      TEXT NOT NULL,
    is_active    BOOLEAN NOT NULL,
    created_by   TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER
);
CREATE UNIQUE INDEX scim_tokens_one_active ON scim_tokens (is_active) WHERE is_active;

-- A person the directory manages, and what it says of them that the
-- account does not hold: its userName (user_name_key folded by Quarry,
-- quarry.FoldCase), its externalId, the parts of the name, the enterprise
-- extension's department and manager, and whether it says the person is
-- active. seq orders the SCIM listing (the order of provisioning).
CREATE TABLE scim_users (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       TEXT NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    user_name     TEXT NOT NULL,
    user_name_key TEXT NOT NULL UNIQUE,
    external_id   TEXT UNIQUE,
    display_name  TEXT,
    given_name    TEXT,
    family_name   TEXT,
    formatted     TEXT,
    department    TEXT,
    manager       TEXT,
    active        BOOLEAN NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- The emails the directory gives a person, in its order (value_key
-- folded, for filters).
CREATE TABLE scim_user_emails (
    user_id    TEXT NOT NULL REFERENCES scim_users (user_id) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL,
    value      TEXT NOT NULL,
    value_key  TEXT NOT NULL,
    type       TEXT,
    is_primary BOOLEAN NOT NULL,
    display    TEXT,
    PRIMARY KEY (user_id, ordinal)
);
CREATE INDEX scim_user_emails_by_value ON scim_user_emails (value_key);

-- A group the directory manages (made by it, or made by hand and then
-- changed by it), with its externalId.
CREATE TABLE scim_groups (
    group_id    INTEGER PRIMARY KEY REFERENCES user_groups (id) ON DELETE CASCADE,
    external_id TEXT UNIQUE,
    created_at  INTEGER NOT NULL
);

-- A group's name folded (quarry.FoldCase), for the directory's filters;
-- Quarry fills it in for the groups made before this version right after
-- migrating (store.DB.Migrate). NULL until then.
ALTER TABLE user_groups ADD COLUMN name_key TEXT;
CREATE INDEX user_groups_by_name_key ON user_groups (name_key);

-- The directory's token, when it made the change.
ALTER TABLE audit_events ADD COLUMN scim_token_id INTEGER;

-- +goose Down
ALTER TABLE audit_events DROP COLUMN scim_token_id;
DROP INDEX user_groups_by_name_key;
ALTER TABLE user_groups DROP COLUMN name_key;
DROP TABLE scim_groups;
DROP TABLE scim_user_emails;
DROP TABLE scim_users;
DROP TABLE scim_tokens;
