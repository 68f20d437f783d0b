-- Connectors keep the access type and groups they were created (or last
-- changed) with, which decide the curators who see and pair them besides
-- their creator. Connectors made before keep no groups and count as private.
-- postgres/00003_connector_sharing.sql is the same schema.

-- +goose Up
ALTER TABLE connectors ADD COLUMN access_type TEXT NOT NULL DEFAULT 'private';

CREATE TABLE connector_groups (
    connector_id INTEGER NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    group_id     INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (connector_id, group_id)
);
CREATE INDEX connector_groups_group ON connector_groups (group_id);

-- +goose Down
DROP TABLE connector_groups;
ALTER TABLE connectors DROP COLUMN access_type;
