-- Indexing (issue 32): index attempts and their per-document errors, as
-- Onyx v4.6.1 keeps them; the indexing state of a pair; the workers that
-- run attempts and the registration tokens that make them; and the
-- documents attempts bring in, per pair. postgres/00012_indexing.sql is the same schema.

-- +goose Up
-- A pair's indexing state (Onyx's connector_credential_pair columns).
-- next_index_at is when the scheduler next makes an attempt for it
-- (quarry.IndexFacts.NextIndexAt; "now" is written as the time it became
-- due), NULL when not until something changes;
-- pairs made before are due at once. Pairs made from now on start
-- SCHEDULED (quarry.CCPairStatus); those made before stay as they were.
ALTER TABLE cc_pairs ADD COLUMN in_repeated_error_state BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE cc_pairs ADD COLUMN last_successful_index_time INTEGER;
ALTER TABLE cc_pairs ADD COLUMN last_pruned INTEGER;
ALTER TABLE cc_pairs ADD COLUMN indexing_trigger TEXT;
ALTER TABLE cc_pairs ADD COLUMN total_docs_indexed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cc_pairs ADD COLUMN next_index_at INTEGER;
UPDATE cc_pairs SET next_index_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000000 WHERE status = 'ACTIVE';
CREATE INDEX cc_pairs_next_index ON cc_pairs (next_index_at) WHERE next_index_at IS NOT NULL;

-- A worker: only the SHA-256 of its token is kept. A revoked worker keeps
-- its row (revoked_at), so that its attempts name it.
CREATE TABLE workers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL,
    hashed_token TEXT NOT NULL UNIQUE,
    in_process   BOOLEAN NOT NULL DEFAULT FALSE,
    created_by   TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER,
    revoked_at   INTEGER
);

-- A registration token, which makes workers until it expires or is
-- revoked; display is its prefix and last characters.
CREATE TABLE worker_registrations (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL,
    hashed_token TEXT NOT NULL UNIQUE,
    display      TEXT NOT NULL,
    created_by   TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    workers      INTEGER NOT NULL DEFAULT 0
);

-- An index attempt (Onyx's index_attempt). The lease is the row: a live
-- attempt in progress is held by worker_id until lease_expires_at. At
-- most one attempt of a pair is live at a time, on every replica.
CREATE TABLE index_attempts (
    id                      INTEGER PRIMARY KEY AUTOINCREMENT,
    cc_pair_id              INTEGER NOT NULL REFERENCES cc_pairs (id) ON DELETE CASCADE,
    status                  TEXT NOT NULL,
    from_beginning          BOOLEAN NOT NULL DEFAULT FALSE,
    new_docs_indexed        INTEGER NOT NULL DEFAULT 0,
    total_docs_indexed      INTEGER NOT NULL DEFAULT 0,
    docs_removed_from_index INTEGER NOT NULL DEFAULT 0,
    completed_batches       INTEGER NOT NULL DEFAULT 0,
    poll_range_start        INTEGER,
    poll_range_end          INTEGER,
    checkpoint              TEXT,
    checkpoint_at           INTEGER,
    error_msg               TEXT,
    full_exception_trace    TEXT,
    cancellation_requested  BOOLEAN NOT NULL DEFAULT FALSE,
    worker_id               INTEGER REFERENCES workers (id) ON DELETE SET NULL,
    lease_expires_at        INTEGER,
    heartbeat_counter       INTEGER NOT NULL DEFAULT 0,
    last_heartbeat_time     INTEGER,
    time_created            INTEGER NOT NULL,
    time_started            INTEGER,
    time_updated            INTEGER NOT NULL
);
CREATE INDEX index_attempts_pair ON index_attempts (cc_pair_id, id);
CREATE UNIQUE INDEX index_attempts_one_live ON index_attempts (cc_pair_id) WHERE status IN ('not_started', 'in_progress');
CREATE INDEX index_attempts_waiting ON index_attempts (id) WHERE status = 'not_started';
CREATE INDEX index_attempts_leases ON index_attempts (lease_expires_at) WHERE status = 'in_progress';
CREATE INDEX index_attempts_worker ON index_attempts (worker_id) WHERE status = 'in_progress';

-- A document or entity an attempt could not take (Onyx's
-- index_attempt_errors).
CREATE TABLE index_attempt_errors (
    id                      INTEGER PRIMARY KEY AUTOINCREMENT,
    index_attempt_id        INTEGER NOT NULL REFERENCES index_attempts (id) ON DELETE CASCADE,
    cc_pair_id              INTEGER NOT NULL REFERENCES cc_pairs (id) ON DELETE CASCADE,
    document_id             TEXT,
    document_link           TEXT,
    entity_id               TEXT,
    failed_time_range_start INTEGER,
    failed_time_range_end   INTEGER,
    failure_message         TEXT NOT NULL,
    is_resolved             BOOLEAN NOT NULL DEFAULT FALSE,
    error_type              TEXT,
    time_created            INTEGER NOT NULL
);
CREATE INDEX index_attempt_errors_pair ON index_attempt_errors (cc_pair_id, id);
CREATE INDEX index_attempt_errors_attempt ON index_attempt_errors (index_attempt_id);

-- The documents of a pair, as its connector last sent them (body is the
-- document's JSON, content_hash its SHA-256: an unchanged document is not
-- written again).
CREATE TABLE documents (
    cc_pair_id          INTEGER NOT NULL REFERENCES cc_pairs (id) ON DELETE CASCADE,
    id                  TEXT NOT NULL,
    semantic_identifier TEXT NOT NULL,
    link                TEXT,
    body                TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    doc_updated_at      INTEGER,
    indexed_at          INTEGER NOT NULL,
    PRIMARY KEY (cc_pair_id, id)
);

-- +goose Down
DROP TABLE documents;
DROP TABLE index_attempt_errors;
DROP TABLE index_attempts;
DROP TABLE worker_registrations;
DROP TABLE workers;
DROP INDEX cc_pairs_next_index;
ALTER TABLE cc_pairs DROP COLUMN next_index_at;
ALTER TABLE cc_pairs DROP COLUMN total_docs_indexed;
ALTER TABLE cc_pairs DROP COLUMN indexing_trigger;
ALTER TABLE cc_pairs DROP COLUMN last_pruned;
ALTER TABLE cc_pairs DROP COLUMN last_successful_index_time;
ALTER TABLE cc_pairs DROP COLUMN in_repeated_error_state;
