-- A cc-pair has a status (ACTIVE or PAUSED, as Onyx names them), and a
-- version that every change of its name or status bumps: the ETag of
-- GET /manage/admin/cc-pair/{id}. Pairs made before are active, at version
-- 1. sqlite/00004_cc_pair_status.sql is the same schema.

-- +goose Up
ALTER TABLE cc_pairs ADD COLUMN status TEXT NOT NULL DEFAULT 'ACTIVE';
ALTER TABLE cc_pairs ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE cc_pairs DROP COLUMN version;
ALTER TABLE cc_pairs DROP COLUMN status;
