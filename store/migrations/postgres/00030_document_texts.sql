-- A document's text kept compressed, apart from what a search's results
-- read (issue 45). A chunk of the search index keeps its own text, which
-- every result shows; documents.body keeps the document's JSON without
-- its sections' texts, which every result reads for its metadata, and
-- documents.texts the texts, compressed with zstd
-- (store/documenttext.go), which only showing the document whole or
-- indexing it again reads. A document written before keeps its whole JSON
-- in body and NULL here until it is written again.
-- sqlite/00030_document_texts.sql is the same schema.

-- +goose Up
ALTER TABLE documents ADD COLUMN texts BYTEA;

-- +goose Down
-- (Quarry never migrates down; this one would lose the texts of the
-- documents written since.)
ALTER TABLE documents DROP COLUMN texts;
