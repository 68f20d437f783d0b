-- Onyx's ingestion API (issue 33): a document that another system pushed
-- (POST /onyx-api/ingestion) is marked so, so that the ingestion routes
-- list and delete it, and pruning leaves it alone. Documents are looked up
-- by their id across pairs. postgres/00013_ingestion.sql is the same
-- schema.

-- +goose Up
ALTER TABLE documents ADD COLUMN from_ingestion_api BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX documents_id ON documents (id);

-- +goose Down
DROP INDEX documents_id;
ALTER TABLE documents DROP COLUMN from_ingestion_api;
