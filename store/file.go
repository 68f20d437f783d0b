package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/quarryhq/quarry"
)

// The file store: files uploaded for the file connector, in the database
// so that every replica and worker reaches them (migration 00014). A
// file's content is kept in chunks of fileChunkSize bytes, written one at
// a time as it is read from its source and read back one at a time, so
// that no file is ever whole in memory.

// fileChunkSize is the size of the chunks a file's content is kept in.
const fileChunkSize = 256 << 10

// NewFile is a file to keep: its name and type, and how to read its
// content (opened once, as it is written).
type NewFile struct {
	DisplayName string
	FileType    string
	Origin      string
	Open        func() (io.ReadCloser, error)
}

// SaveFiles keeps files for caller c, all of them or none: an error
// opening or reading any one (a zip entry that inflates beyond what it
// said) leaves no row. It returns the files kept, in order.
func (db *DB) SaveFiles(ctx context.Context, c *quarry.Caller, files []NewFile) ([]quarry.File, error) {
	var out []quarry.File
	err := db.update(ctx, func(tx *Tx) (err error) {
		out, err = tx.saveFiles(ctx, c, files)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// saveFiles keeps files for caller c in tx, and returns them, in order.
func (tx *Tx) saveFiles(ctx context.Context, c *quarry.Caller, files []NewFile) ([]quarry.File, error) {
	out := make([]quarry.File, 0, len(files))
	buf := make([]byte, fileChunkSize)
	for _, nf := range files {
		f := quarry.File{ID: newFileID(), DisplayName: nf.DisplayName, FileType: nf.FileType, Origin: nf.Origin, CreatedAt: tx.now}
		var creator *string
		if c != nil && c.ID != "" {
			creator, f.UploadedBy = &c.ID, c.ID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO files (id, display_name, file_type, origin, size, created_by, created_at)
			VALUES ($1, $2, $3, $4, 0, $5, $6)`, f.ID, f.DisplayName, f.FileType, f.Origin, creator, tx.now.Micros()); err != nil {
			return nil, err
		}
		size, err := tx.writeChunks(ctx, f.ID, nf.Open, buf)
		if err != nil {
			return nil, err
		}
		f.Size = size
		if _, err := tx.ExecContext(ctx, `UPDATE files SET size = $1 WHERE id = $2`, size, f.ID); err != nil {
			return nil, err
		}
		if err := tx.audit(ctx, c, "file.upload", "file", f.ID, nil); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// writeChunks writes the content open gives as the chunks of file id,
// using buf, and returns its size.
func (tx *Tx) writeChunks(ctx context.Context, id string, open func() (io.ReadCloser, error), buf []byte) (int64, error) {
	rc, err := open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var size int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(rc, buf)
		if n > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_chunks (file_id, seq, data) VALUES ($1, $2, $3)`, id, seq, buf[:n]); err != nil {
				return 0, err
			}
			size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return size, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// newFileID returns a new file's id: 32 random hex digits (Onyx's are
// UUIDs; a file id is only ever an opaque string in a connector's
// configuration).
func newFileID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// File returns file id's record, or ENOTFOUND.
func (db *DB) File(ctx context.Context, id string) (*quarry.File, error) {
	return file(ctx, db.read, id)
}

// file returns file id's record, read with q, or ENOTFOUND.
func file(ctx context.Context, q querier, id string) (*quarry.File, error) {
	f := quarry.File{ID: id}
	var (
		at int64
		by sql.NullString
	)
	err := q.QueryRowContext(ctx, `SELECT display_name, file_type, origin, size, created_by, created_at FROM files WHERE id = $1`, id).
		Scan(&f.DisplayName, &f.FileType, &f.Origin, &f.Size, &by, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.Errorf(quarry.ENOTFOUND, "File %s not found", quarry.ClipText(id, 80))
	}
	if err != nil {
		return nil, mapError(err)
	}
	f.UploadedBy, f.CreatedAt = by.String, quarry.TimeFromMicros(at)
	return &f, nil
}

// OpenFile returns the content of file f, read chunk by chunk as it is
// read: files are never changed once kept, so the chunks need no snapshot.
func (db *DB) OpenFile(ctx context.Context, f *quarry.File) io.ReadCloser {
	return &chunkReader{ctx: ctx, db: db, id: f.ID, size: f.Size}
}

// chunkReader reads a file's chunks in order, one query per chunk.
type chunkReader struct {
	ctx  context.Context
	db   *DB
	id   string
	size int64 // Bytes left to read.
	seq  int64
	buf  []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.size <= 0 {
			return 0, io.EOF
		}
		var data []byte
		err := r.db.read.QueryRowContext(r.ctx, `SELECT data FROM file_chunks WHERE file_id = $1 AND seq = $2`, r.id, r.seq).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("file %s: chunk %d is missing", r.id, r.seq)
		}
		if err != nil {
			return 0, mapError(err)
		}
		r.seq++
		r.size -= int64(len(data))
		r.buf = data
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *chunkReader) Close() error { r.buf = nil; r.size = 0; return nil }

// AttemptFile returns file id, for worker workerID, which must hold the
// live lease of attempt attemptID (409 otherwise), whose pair's connector
// names the file in its configuration (file_locations or
// zip_metadata_file_id; 404 otherwise, as for a file that does not
// exist). Read its content with OpenFile. It only reads (one query for the
// lease and the configuration, one for the file): a connector reads its
// files one after the other, and a write transaction each would queue
// them behind every other write on SQLite.
func (db *DB) AttemptFile(ctx context.Context, workerID, attemptID int64, id string) (*quarry.File, error) {
	var config string
	err := db.read.QueryRowContext(ctx, `SELECT c.config FROM index_attempts a
		JOIN cc_pairs p ON p.id = a.cc_pair_id JOIN connectors c ON c.id = p.connector_id
		JOIN workers w ON w.id = a.worker_id
		WHERE a.id = $1 AND a.worker_id = $2 AND a.status = 'in_progress' AND a.lease_expires_at >= $3 AND w.revoked_at IS NULL`,
		attemptID, workerID, db.now().Micros()).Scan(&config)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.ErrAttemptNotHeld(attemptID)
	}
	if err != nil {
		return nil, mapError(err)
	}
	if !configNamesFile(config, id) {
		return nil, quarry.Errorf(quarry.ENOTFOUND, "File %s not found", quarry.ClipText(id, 80))
	}
	return db.File(ctx, id)
}

// configNamesFile reports whether a connector's configuration names file
// id: the id, a JSON string, is in it. It need not be parsed (a
// configuration of thousands of files is read once per file): whoever
// may write the configuration could put any id in file_locations anyway,
// so an id anywhere in it opens no more. Ids are hexadecimal (newFileID),
// which JSON writes as they are.
func configNamesFile(config, id string) bool {
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return false
	}
	return strings.Contains(config, `"`+id+`"`)
}
