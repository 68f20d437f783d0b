-- Search (issue 34), its index rebuilt for speed: the postings of a term
-- are no longer a row each (a document of 2 KB wrote some 300 rows in the
-- transaction that wrote it) but packed in blocks, a block per term of a
-- segment, as Lucene's segments keep them. A document's chunks are first
-- pending (a row each, with their terms), searched from there, and merged
-- into segments apart from the writes. The chunks of the old index are
-- dropped: Migrate indexes every document again (store.DB.IndexMissing).
-- postgres/00017_search_segments.sql is the same schema.

-- +goose Up
DROP TABLE search_postings;
DROP TABLE search_terms;
DELETE FROM search_chunks;

-- A chunk not yet in a segment: its pair, its BM25 length and its terms
-- with their weighted frequencies (store/searchindex.go's encoding).
CREATE TABLE search_pending (
    chunk_id   INTEGER PRIMARY KEY REFERENCES search_chunks (id) ON DELETE CASCADE,
    cc_pair_id INTEGER NOT NULL,
    length     INTEGER NOT NULL,
    terms      BLOB NOT NULL
);

-- A segment of the index: live (searched), being built by a merge (at
-- most one at a time), or dropped by a merge (its blocks being removed). chunks and length are its chunks' number and
-- total length; norms lists them (each chunk's id and length).
CREATE TABLE search_segments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    state      TEXT NOT NULL CHECK (state IN ('building', 'live', 'dropped')),
    chunks     INTEGER NOT NULL,
    length     INTEGER NOT NULL,
    norms      BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX search_segments_building ON search_segments (state) WHERE state = 'building';

-- A term's postings in a segment, packed by pair: a header (each pair, its
-- postings' count and bytes), then each pair's postings in the order of
-- their chunks' ids: the chunk, the term's weighted frequency and the
-- chunk's length (store/searchindex.go's encodeBlock).
CREATE TABLE search_blocks (
    segment_id INTEGER NOT NULL,
    term       TEXT NOT NULL,
    df         INTEGER NOT NULL,
    postings   BLOB NOT NULL,
    PRIMARY KEY (segment_id, term)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE search_blocks;
DROP TABLE search_segments;
DROP TABLE search_pending;
DELETE FROM search_chunks;
CREATE TABLE search_postings (
    term       TEXT NOT NULL,
    cc_pair_id INTEGER NOT NULL,
    chunk_id   INTEGER NOT NULL REFERENCES search_chunks (id) ON DELETE CASCADE,
    tf         INTEGER NOT NULL,
    length     INTEGER NOT NULL,
    PRIMARY KEY (term, cc_pair_id, chunk_id)
) WITHOUT ROWID;
CREATE INDEX search_postings_chunk ON search_postings (chunk_id);
CREATE TABLE search_terms (
    term TEXT PRIMARY KEY
) WITHOUT ROWID;
