-- listing_changes says what each committed change to the connector status
-- listing touched: the writes that bump data_version to a version add, in
-- the same transaction, a row per cc-pair, connector and credential they
-- changed (kind 'pair', 'connector', 'credential'), or one row of kind
-- 'all'. A server that holds the listing at one version re-reads only what
-- the rows after it name (docs/decisions.md, "The status listing's cache").
-- Old rows are pruned; a version without rows means "re-read everything".
-- sqlite/00005_listing_changes.sql is the same schema.

-- +goose Up
CREATE TABLE listing_changes (
    version BIGINT NOT NULL,
    kind    TEXT NOT NULL,
    id      BIGINT NOT NULL,
    PRIMARY KEY (version, kind, id)
);

-- +goose Down
DROP TABLE listing_changes;
