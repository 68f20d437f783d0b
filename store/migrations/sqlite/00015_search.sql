-- Search (issue 34): the index of the documents' chunks, in the database,
-- so that it needs no set-up, is consistent with the documents in each
-- transaction and is shared by every replica. A document's chunks and
-- their postings leave with it (ON DELETE CASCADE), whichever path
-- deletes it. postgres/00015_search.sql is the same schema.

-- +goose Up
-- A chunk of a document (quarry.Chunk): its title and text, and what the
-- filters of a search read (the document's source and update time).
-- length is its BM25 length: its text's terms and its title's, weighted
-- (quarry.TitleWeight).
CREATE TABLE search_chunks (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    cc_pair_id     INTEGER NOT NULL,
    document_id    TEXT NOT NULL,
    chunk_no       INTEGER NOT NULL,
    title          TEXT NOT NULL,
    content        TEXT NOT NULL,
    link           TEXT,
    length         INTEGER NOT NULL,
    source         TEXT NOT NULL,
    doc_updated_at INTEGER,
    FOREIGN KEY (cc_pair_id, document_id) REFERENCES documents (cc_pair_id, id) ON DELETE CASCADE,
    UNIQUE (cc_pair_id, document_id, chunk_no)
);
CREATE INDEX search_chunks_document ON search_chunks (document_id);

-- The postings: a term's weighted frequency in a chunk, and the chunk's
-- length, kept by term then pair, so that a search reads only the
-- postings of its terms in the pairs the person may see.
CREATE TABLE search_postings (
    term       TEXT NOT NULL,
    cc_pair_id INTEGER NOT NULL,
    chunk_id   INTEGER NOT NULL REFERENCES search_chunks (id) ON DELETE CASCADE,
    tf         INTEGER NOT NULL,
    length     INTEGER NOT NULL,
    PRIMARY KEY (term, cc_pair_id, chunk_id)
) WITHOUT ROWID;
CREATE INDEX search_postings_chunk ON search_postings (chunk_id);

-- Every term the index has held (never removed: a term no posting holds
-- any more matches nothing), in byte order, for the prefix of a query's
-- last word.
CREATE TABLE search_terms (
    term TEXT PRIMARY KEY
) WITHOUT ROWID;

-- The access a sync pair's connector reports for a document (Onyx's
-- ExternalAccess), one row per principal: 'public', 'email:<address>'
-- (lowercase) or 'group:<external group id>'.
CREATE TABLE search_document_access (
    cc_pair_id  INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    principal   TEXT NOT NULL,
    FOREIGN KEY (cc_pair_id, document_id) REFERENCES documents (cc_pair_id, id) ON DELETE CASCADE,
    PRIMARY KEY (cc_pair_id, document_id, principal)
) WITHOUT ROWID;

-- A document's tags (its metadata's keys and values), for the tag filter.
CREATE TABLE search_tags (
    cc_pair_id  INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    tag_key     TEXT NOT NULL,
    tag_value   TEXT NOT NULL,
    FOREIGN KEY (cc_pair_id, document_id) REFERENCES documents (cc_pair_id, id) ON DELETE CASCADE,
    PRIMARY KEY (cc_pair_id, document_id, tag_key, tag_value)
) WITHOUT ROWID;
CREATE INDEX search_tags_tag ON search_tags (tag_key, tag_value);

-- +goose Down
DROP TABLE search_tags;
DROP TABLE search_document_access;
DROP TABLE search_terms;
DROP TABLE search_postings;
DROP TABLE search_chunks;
