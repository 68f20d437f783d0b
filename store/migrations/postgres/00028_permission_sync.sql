-- Permission syncing (issue 43): a permission sync and a group sync are
-- index attempts of kinds 'permission_sync' and 'group_sync', leased,
-- renewed and ended as any attempt (quarry.SyncFacts). A permission sync's
-- worker reports each document's access (perm_sync_listed: the documents
-- listed; perm_sync_access: their principals), and its success replaces
-- the access (search_document_access) of the pair's documents it listed.
-- A group sync's worker reports the source's groups with their members'
-- emails (group_sync_listed), and its success replaces the pair's
-- external groups (external_group_members, lowercase emails), which open
-- a sync pair's documents whose access names them ('group:<id>') to
-- their members. last_time_perm_sync and last_time_external_group_sync
-- are when the latest success of each ended (Onyx's columns);
-- next_*_at when the scheduler next makes one, *_requested one asked for.
-- sqlite/00028_permission_sync.sql is the same schema.

-- +goose Up
ALTER TABLE cc_pairs ADD COLUMN last_time_perm_sync BIGINT;
ALTER TABLE cc_pairs ADD COLUMN last_time_external_group_sync BIGINT;
ALTER TABLE cc_pairs ADD COLUMN next_perm_sync_at BIGINT;
ALTER TABLE cc_pairs ADD COLUMN next_group_sync_at BIGINT;
ALTER TABLE cc_pairs ADD COLUMN perm_sync_requested BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE cc_pairs ADD COLUMN group_sync_requested BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX cc_pairs_next_perm_sync ON cc_pairs (next_perm_sync_at) WHERE next_perm_sync_at IS NOT NULL;
CREATE INDEX cc_pairs_next_group_sync ON cc_pairs (next_group_sync_at) WHERE next_group_sync_at IS NOT NULL;
CREATE TABLE perm_sync_listed (
    attempt_id  BIGINT NOT NULL REFERENCES index_attempts (id) ON DELETE CASCADE,
    document_id TEXT NOT NULL,
    PRIMARY KEY (attempt_id, document_id)
);
CREATE TABLE perm_sync_access (
    attempt_id  BIGINT NOT NULL REFERENCES index_attempts (id) ON DELETE CASCADE,
    document_id TEXT NOT NULL,
    principal   TEXT NOT NULL,
    PRIMARY KEY (attempt_id, document_id, principal)
);
CREATE TABLE group_sync_listed (
    attempt_id  BIGINT NOT NULL REFERENCES index_attempts (id) ON DELETE CASCADE,
    group_id    TEXT NOT NULL,
    user_email  TEXT NOT NULL,
    PRIMARY KEY (attempt_id, group_id, user_email)
);
CREATE TABLE external_group_members (
    cc_pair_id  BIGINT NOT NULL REFERENCES cc_pairs (id) ON DELETE CASCADE,
    group_id    TEXT NOT NULL,
    user_email  TEXT NOT NULL,
    PRIMARY KEY (cc_pair_id, group_id, user_email)
);
CREATE INDEX external_group_members_email ON external_group_members (user_email, cc_pair_id);

-- +goose Down
DROP INDEX external_group_members_email;
DROP TABLE external_group_members;
DROP TABLE group_sync_listed;
DROP TABLE perm_sync_access;
DROP TABLE perm_sync_listed;
DROP INDEX cc_pairs_next_group_sync;
DROP INDEX cc_pairs_next_perm_sync;
ALTER TABLE cc_pairs DROP COLUMN group_sync_requested;
ALTER TABLE cc_pairs DROP COLUMN perm_sync_requested;
ALTER TABLE cc_pairs DROP COLUMN next_group_sync_at;
ALTER TABLE cc_pairs DROP COLUMN next_perm_sync_at;
ALTER TABLE cc_pairs DROP COLUMN last_time_external_group_sync;
ALTER TABLE cc_pairs DROP COLUMN last_time_perm_sync;
