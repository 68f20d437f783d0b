package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/quarryhq/quarry"
)

// A document is stored in two parts (migration 00030): documents.body, its
// JSON without its sections' texts, which every result of a search reads
// for the document's metadata, and documents.texts, the texts, compressed,
// which only showing the document whole or indexing it again reads (a
// result's text is its chunk's). A document written before 00030 has its
// whole JSON in body and no texts until it is written again.

// textCodec compresses and decompresses documents' texts, with zstd at its
// fastest level: it is safe for concurrent use and keeps no state between
// documents.
type textCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// maxTexts bounds what decompressing a document's texts may make: far
// above quarry.MaxDocumentBytes (a document's texts, as JSON, are never
// longer than the document's JSON, which is never longer than that), so
// that a limit lowered later still reads what was written before, and low
// enough that bytes that are not a document's texts cannot take the
// server's memory.
const maxTexts = 64 << 20

// newTextCodec returns a textCodec. It needs no closing: with no stream to
// read, the decoder keeps no goroutine.
func newTextCodec() (*textCodec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxTexts))
	if err != nil {
		return nil, err
	}
	return &textCodec{enc: enc, dec: dec}, nil
}

// pack returns document d as documents keeps it: body, d's JSON with its
// sections' texts empty, and texts, the texts as a JSON list, compressed.
func (c *textCodec) pack(d *quarry.Document) (body string, texts []byte, err error) {
	bare := *d
	list := make([]string, len(d.Sections))
	if d.Sections != nil {
		bare.Sections = make([]quarry.Section, len(d.Sections))
	}
	for i, s := range d.Sections {
		list[i], bare.Sections[i].Link = s.Text, s.Link
	}
	b, err := json.Marshal(&bare)
	if err != nil {
		return "", nil, err
	}
	t, err := json.Marshal(list)
	if err != nil {
		return "", nil, err
	}
	return string(b), c.enc.EncodeAll(t, make([]byte, 0, len(t)/2)), nil
}

// unpack reads into d the document that pack made body and texts of, or,
// with texts nil, one written whole in body before migration 00030.
func (c *textCodec) unpack(body string, texts []byte, d *quarry.Document) error {
	if err := json.Unmarshal([]byte(body), d); err != nil {
		return err
	}
	if texts == nil {
		return nil
	}
	t, err := c.dec.DecodeAll(texts, nil)
	if err != nil {
		return fmt.Errorf("store: document %q: its texts: %w", d.ID, err)
	}
	var list []string
	if err := json.Unmarshal(t, &list); err != nil {
		return fmt.Errorf("store: document %q: its texts: %w", d.ID, err)
	}
	if len(list) != len(d.Sections) {
		return fmt.Errorf("store: document %q: %d texts for %d sections", d.ID, len(list), len(d.Sections))
	}
	for i := range list {
		d.Sections[i].Text = list[i]
	}
	return nil
}

// storedDocument reads document id of pair pairID, as stored, with q;
// suffix ends the statement (" FOR UPDATE", say). One the pair does not
// hold is sql.ErrNoRows.
func (db *DB) storedDocument(ctx context.Context, q querier, pairID int64, id, suffix string) (*quarry.Document, error) {
	var (
		body  string
		texts []byte
	)
	if err := q.QueryRowContext(ctx, `SELECT body, texts FROM documents WHERE cc_pair_id = $1 AND id = $2`+suffix, pairID, id).Scan(&body, &texts); err != nil {
		return nil, err
	}
	var d quarry.Document
	return &d, db.texts.unpack(body, texts, &d)
}

// StoredDocument returns document id of pair pairID as it is stored,
// whoever asks (quarry.ErrPairDocumentNotFound if the pair does not hold
// it): for the tests of what a connector brought, which no route shows
// whole.
func (db *DB) StoredDocument(ctx context.Context, pairID int64, id string) (*quarry.Document, error) {
	d, err := db.storedDocument(ctx, db.read, pairID, id, "")
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.ErrPairDocumentNotFound
	}
	return d, mapError(err)
}
