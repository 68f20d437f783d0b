-- The file store (issue 33, the file connector): what is uploaded through
-- POST /manage/admin/connector/file/upload, kept in the database so that
-- every replica and worker reaches it. A file's content is split into
-- chunks (store/file.go, fileChunkSize), written and read one at a time,
-- so that no file is ever whole in memory. postgres/00014_files.sql is the
-- same schema.

-- +goose Up
CREATE TABLE files (
    id           TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    file_type    TEXT NOT NULL,
    origin       TEXT NOT NULL,
    size         BIGINT NOT NULL,
    created_by   TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at   BIGINT NOT NULL
);

CREATE TABLE file_chunks (
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (file_id, seq)
);

-- +goose Down
DROP TABLE file_chunks;
DROP TABLE files;
