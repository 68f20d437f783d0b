-- Attempts that stop for something other than their source's failure
-- (issue 39): why, kept on the attempt (quarry.StopReason): 'no_connector'
-- (the worker has no connector for the source: the pair is INVALID until
-- something changes), 'credential_refused' (the source refused the
-- credential: later attempts back off) or 'lease_expired' (the worker was
-- lost: a new attempt resumes from the checkpoint); NULL for every other
-- ending. postgres/00019_stop_reason.sql is the same schema.

-- +goose Up
ALTER TABLE index_attempts ADD COLUMN stop_reason TEXT
    CHECK (stop_reason IN ('no_connector', 'credential_refused', 'lease_expired'));

-- +goose Down
ALTER TABLE index_attempts DROP COLUMN stop_reason;
