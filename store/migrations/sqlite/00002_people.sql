-- People sign in as themselves: names, an active flag and an optional
-- password hash on users; identities at OpenID providers; sessions; the
-- state of sign-ins in progress at a provider; throttling of failed
-- sign-ins; and invitations. postgres/00002_people.sql is the same schema.

-- +goose Up
ALTER TABLE users ADD COLUMN name TEXT;
ALTER TABLE users ADD COLUMN is_active BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE users ADD COLUMN password_hash TEXT;
-- email_key is the email as it is compared: lower-cased, so that email is
-- unique whatever its case.
ALTER TABLE users ADD COLUMN email_key TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE users SET email_key = lower(email), updated_at = created_at;
CREATE UNIQUE INDEX users_by_email_key ON users (email_key);

-- The address a change (or a sign-in) came from.
ALTER TABLE audit_events ADD COLUMN source_ip TEXT NOT NULL DEFAULT '';

-- An identity at an OpenID provider, keyed as the provider keys it.
CREATE TABLE user_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

-- A signed-in browser (or client). Only the SHA-256 of the session token
-- is stored. id_token is the sealed ID token of an OpenID sign-in, sent back
-- to the provider as the hint of its end-session endpoint.
CREATE TABLE sessions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash   TEXT NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    method       TEXT NOT NULL,
    id_token     BLOB,
    ip           TEXT NOT NULL,
    user_agent   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- A sign-in at an OpenID provider in progress: the SHA-256 of its state,
-- and its sealed nonce and PKCE verifier. Used once, then deleted.
CREATE TABLE oidc_logins (
    state_hash TEXT PRIMARY KEY,
    secret     BLOB NOT NULL,
    next_path  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

-- Failed sign-ins counted per account and per address, to slow down
-- password guessing.
CREATE TABLE sign_in_failures (
    key          TEXT PRIMARY KEY,
    failures     INTEGER NOT NULL,
    window_start INTEGER NOT NULL,
    locked_until INTEGER NOT NULL
);

-- People invited to register when registration is by invitation.
CREATE TABLE invited_users (
    email_key  TEXT PRIMARY KEY,
    email      TEXT NOT NULL,
    invited_by TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE invited_users;
DROP TABLE sign_in_failures;
DROP TABLE oidc_logins;
DROP TABLE sessions;
DROP TABLE user_identities;
ALTER TABLE audit_events DROP COLUMN source_ip;
DROP INDEX users_by_email_key;
ALTER TABLE users DROP COLUMN updated_at;
ALTER TABLE users DROP COLUMN email_key;
ALTER TABLE users DROP COLUMN password_hash;
ALTER TABLE users DROP COLUMN is_active;
ALTER TABLE users DROP COLUMN name;
