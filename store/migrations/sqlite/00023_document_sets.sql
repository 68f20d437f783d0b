-- Document sets (issue 42, item 1): named sets of cc-pairs that a search
-- may be narrowed to (Onyx's document_set), with the people and groups a
-- private set is shared with. A document belongs to the sets of the pairs
-- that hold its copy: nothing is written per document, so a change of a
-- set shows on the next search. A set's name is unique, as in Onyx. A
-- pair, group or person that goes takes its place in every set with it;
-- a set whose maker goes keeps its pairs and sharing, without a maker
-- (Quarry deletes no person, but a deletion would not take a shared set
-- with it). postgres/00023_document_sets.sql is the same schema.

-- +goose Up
CREATE TABLE document_sets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    user_id     TEXT REFERENCES users (id) ON DELETE SET NULL,
    is_public   BOOLEAN NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE document_set_pairs (
    document_set_id INTEGER NOT NULL REFERENCES document_sets (id) ON DELETE CASCADE,
    cc_pair_id      INTEGER NOT NULL REFERENCES cc_pairs (id) ON DELETE CASCADE,
    PRIMARY KEY (document_set_id, cc_pair_id)
);
CREATE INDEX document_set_pairs_pair ON document_set_pairs (cc_pair_id);

CREATE TABLE document_set_users (
    document_set_id INTEGER NOT NULL REFERENCES document_sets (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (document_set_id, user_id)
);
CREATE INDEX document_set_users_user ON document_set_users (user_id);

CREATE TABLE document_set_groups (
    document_set_id INTEGER NOT NULL REFERENCES document_sets (id) ON DELETE CASCADE,
    group_id        INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (document_set_id, group_id)
);
CREATE INDEX document_set_groups_group ON document_set_groups (group_id);

-- +goose Down
DROP TABLE document_set_groups;
DROP TABLE document_set_users;
DROP TABLE document_set_pairs;
DROP TABLE document_sets;
