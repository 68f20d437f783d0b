-- Tags (issue 42, item 4): each key and value of the documents' metadata
-- once, from its source, and whether it came from a list (Onyx's tag
-- table), so that GET /query/valid-tags walks the tags, not the
-- documents. search_tags, the copies of documents carrying each tag (for
-- the search's filter), names its tag (tag_id): a tag is listed only to
-- those who may find a copy carrying it. key_fold and value_fold are the
-- key and value folded (quarry.FoldTag), for prefixes matched whatever
-- their case, in byte order. A tag is never deleted: one no copy carries
-- any more is listed to no one. postgres/00025_tags.sql is the same
-- schema.

-- +goose Up
CREATE TABLE tags (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tag_key    TEXT NOT NULL,
    tag_value  TEXT NOT NULL,
    source     TEXT NOT NULL,
    is_list    BOOLEAN NOT NULL,
    key_fold   TEXT NOT NULL,
    value_fold TEXT NOT NULL,
    UNIQUE (tag_key, tag_value, source, is_list)
);
CREATE INDEX tags_key ON tags (key_fold, value_fold, id);
CREATE INDEX tags_value ON tags (value_fold, key_fold, id);

ALTER TABLE search_tags ADD COLUMN tag_id INTEGER;
CREATE INDEX search_tags_tag_id ON search_tags (tag_id, cc_pair_id, document_id);

-- The tags of the documents indexed so far: the source and the list-ness
-- from each document's own record. The database lowers (SQLite: ASCII
-- letters only) until a document is indexed again; tags longer than
-- quarry.MaxTagLength are not tags.
INSERT INTO tags (tag_key, tag_value, source, is_list, key_fold, value_fold)
SELECT DISTINCT st.tag_key, st.tag_value, json_extract(d.body, '$.source'),
    COALESCE((SELECT m.type = 'array' FROM json_each(d.body, '$.metadata') m WHERE m.key = st.tag_key), FALSE),
    lower(st.tag_key), lower(st.tag_value)
FROM search_tags st JOIN documents d ON d.cc_pair_id = st.cc_pair_id AND d.id = st.document_id
WHERE length(st.tag_key) + length(st.tag_value) <= 255;

UPDATE search_tags SET tag_id = (
    SELECT t.id FROM documents d JOIN tags t ON t.tag_key = search_tags.tag_key AND t.tag_value = search_tags.tag_value
        AND t.source = json_extract(d.body, '$.source')
        AND t.is_list = COALESCE((SELECT m.type = 'array' FROM json_each(d.body, '$.metadata') m WHERE m.key = search_tags.tag_key), FALSE)
    WHERE d.cc_pair_id = search_tags.cc_pair_id AND d.id = search_tags.document_id);

-- +goose Down
DROP INDEX search_tags_tag_id;
ALTER TABLE search_tags DROP COLUMN tag_id;
DROP TABLE tags;
