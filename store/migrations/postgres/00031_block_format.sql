-- The search index's blocks of the second format (issue 45): merges and
-- flushes write each pair's run with its impacts and cut into
-- sub-blocks, which a search reads to skip what cannot be among its best
-- (index/codec.go, docs/decisions.md). The tables do not change; blocks
-- of the first format stay as they are until a merge writes them again.
-- This version marks the change: a build before it reads a block of the
-- second format as one of no postings (its first byte, 0, counts its
-- runs), and Migrate's check refuses it a database that holds them.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
