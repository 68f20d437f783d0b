-- Pruning (issue 33): a prune is an index attempt of kind 'prune', leased,
-- renewed and ended as any attempt; its worker lists the ids its
-- connector's source still has (prune_listed), and its success deletes
-- the pair's documents not listed. At most one attempt of a pair, of
-- either kind, is live at a time (index_attempts_one_live). A pair's
-- next_prune_at is when the scheduler next makes a prune
-- (quarry.PruneFacts.NextPruneAt), prune_requested a prune a person asked
-- for. sqlite/00016_pruning.sql is the same schema.

-- +goose Up
ALTER TABLE index_attempts ADD COLUMN kind TEXT NOT NULL DEFAULT 'index';
ALTER TABLE cc_pairs ADD COLUMN next_prune_at BIGINT;
ALTER TABLE cc_pairs ADD COLUMN prune_requested BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX cc_pairs_next_prune ON cc_pairs (next_prune_at) WHERE next_prune_at IS NOT NULL;
CREATE TABLE prune_listed (
    attempt_id  BIGINT NOT NULL REFERENCES index_attempts (id) ON DELETE CASCADE,
    document_id TEXT NOT NULL,
    PRIMARY KEY (attempt_id, document_id)
);

-- +goose Down
DROP TABLE prune_listed;
DROP INDEX cc_pairs_next_prune;
ALTER TABLE cc_pairs DROP COLUMN prune_requested;
ALTER TABLE cc_pairs DROP COLUMN next_prune_at;
ALTER TABLE index_attempts DROP COLUMN kind;
