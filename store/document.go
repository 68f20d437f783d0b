package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quarryhq/quarry"
)

// Documents pushed through Onyx's ingestion API, and the documents of a
// pair as those routes list them. Documents brought by workers are written
// by ReportProgress (store/indexing.go); both go through putDocuments.

// Ingest writes document d, pushed by c, to pair pairID (nil: none named,
// quarry.ErrNoDefaultPair), as Onyx's POST /onyx-api/ingestion does. The
// pair must exist and c see it (quarry.ErrPushPairNotFound otherwise) and
// may change it (quarry.Caller.CheckChangePair). It reports whether the
// pair already held a document of that id.
func (db *DB) Ingest(ctx context.Context, c *quarry.Caller, pairID *int64, d *quarry.Document) (alreadyExisted bool, err error) {
	newDocs, err := db.IngestBatch(ctx, c, pairID, []quarry.Document{*d})
	return newDocs == 0, err
}

// IngestBatch writes documents docs to pair pairID in one transaction,
// under the rules of Ingest, and returns how many the pair did not hold:
// what loads many documents at once (a benchmark's corpus, say).
func (db *DB) IngestBatch(ctx context.Context, c *quarry.Caller, pairID *int64, docs []quarry.Document) (newDocs int64, err error) {
	if pairID == nil {
		return 0, quarry.ErrNoDefaultPair
	}
	for i := range docs {
		d := &docs[i]
		if err := d.Check(); err != nil {
			return 0, err
		}
		body, err := json.Marshal(d)
		if err != nil {
			return 0, err
		}
		if len(body) > quarry.MaxDocumentBytes {
			return 0, quarry.Errorf(quarry.EINVALID, "A document may hold at most %d bytes of JSON", quarry.MaxDocumentBytes)
		}
	}
	// The rights first, and again in the transaction: a caller who may
	// not write to the pair has nothing analysed.
	if _, err := db.reader().ingestPair(ctx, c, *pairID); err != nil {
		return 0, mapError(err)
	}
	an, err := db.analyseDocuments(ctx, *pairID, docs)
	if err != nil {
		return 0, err
	}
	err = db.update(ctx, func(tx *Tx) error {
		p, err := tx.ingestPair(ctx, c, *pairID)
		if err != nil {
			return err
		}
		var written int64
		newDocs, written, err = tx.putDocuments(ctx, p.ID, 0, docs, an, true)
		if err != nil {
			return err
		}
		if newDocs > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET total_docs_indexed = total_docs_indexed + $1 WHERE id = $2`, newDocs, p.ID); err != nil {
				return err
			}
		}
		if written == 0 { // Unchanged: nothing to record.
			return nil
		}
		return tx.audit(ctx, c, "document.ingest", "cc_pair", p.ID, []string{"document"})
	})
	return newDocs, err
}

// ingestPair returns pair id, to which caller c pushes documents: one c
// does not see is quarry.ErrPushPairNotFound, and c must be allowed to
// change it (quarry.Caller.CheckChangePair).
func (tx *Tx) ingestPair(ctx context.Context, c *quarry.Caller, id int64) (*quarry.CCPair, error) {
	p, err := tx.pair(ctx, id)
	if quarry.ErrorCode(err) == quarry.ENOTFOUND || (err == nil && !c.CanSeePair(p)) {
		return nil, quarry.ErrPushPairNotFound
	}
	if err != nil {
		return nil, err
	}
	return p, c.CheckChangePair(p)
}

// scanDocumentInfo reads a copy's id, semantic identifier, link and pair.
func scanDocumentInfo(r interface{ Scan(...any) error }) (quarry.DocumentInfo, error) {
	var d quarry.DocumentInfo
	return d, r.Scan(&d.DocumentID, &d.SemanticID, &d.Link, &d.CCPairID)
}

// IngestedDocuments returns the documents pushed through the ingestion API
// to the pairs c can see, those c may read (documentsReadable), each
// pair's copy as its own, by id then pair.
func (db *DB) IngestedDocuments(ctx context.Context, c *quarry.Caller) ([]quarry.DocumentInfo, error) {
	var args []any
	return queryAll(ctx, db.read, scanDocumentInfo, `SELECT d.id, d.semantic_identifier, d.link, d.cc_pair_id FROM documents d
		JOIN cc_pairs p ON p.id = d.cc_pair_id WHERE d.from_ingestion_api AND `+pairsVisibleTo(c, "p", &args)+`
		AND `+documentsReadable(c, "d", &args)+` ORDER BY d.id, d.cc_pair_id`, args...)
}

// PairDocuments returns the documents of pair id that c may read
// (documentsReadable), by id, if c may see the pair (Onyx's 400
// otherwise).
func (db *DB) PairDocuments(ctx context.Context, c *quarry.Caller, id int64) ([]quarry.DocumentInfo, error) {
	var out []quarry.DocumentInfo
	err := db.snapshot(ctx, func(q querier) error {
		if err := db.checkSeesPair(ctx, q, c, id); err != nil {
			return err
		}
		args := []any{id}
		var err error
		out, err = queryAll(ctx, q, scanDocumentInfo, `SELECT d.id, d.semantic_identifier, d.link, d.cc_pair_id FROM documents d
			WHERE d.cc_pair_id = $1 AND `+documentsReadable(c, "d", &args)+` ORDER BY d.id`, args...)
		return err
	})
	return out, mapError(err)
}

// DeleteIngested deletes document id, pushed through the ingestion API,
// from every pair c can see that holds a copy c may read
// (documentsReadable): a document no such pair holds is
// quarry.ErrDocumentNotFound, one a connector brought
// quarry.ErrNotIngested, and c must be able to change every pair that
// holds it (quarry.Caller.CheckChangePair).
func (db *DB) DeleteIngested(ctx context.Context, c *quarry.Caller, id string) error {
	return db.update(ctx, func(tx *Tx) error {
		type holder struct {
			pair     int64
			ingested bool
		}
		args := []any{id}
		holders, err := queryAll(ctx, tx, func(r interface{ Scan(...any) error }) (holder, error) {
			var h holder
			return h, r.Scan(&h.pair, &h.ingested)
		}, `SELECT d.cc_pair_id, d.from_ingestion_api FROM documents d JOIN cc_pairs p ON p.id = d.cc_pair_id
			WHERE d.id = $1 AND `+pairsVisibleTo(c, "p", &args)+` AND `+documentsReadable(c, "d", &args)+` ORDER BY d.cc_pair_id`, args...)
		if err != nil {
			return err
		}
		if len(holders) == 0 {
			return quarry.ErrDocumentNotFound
		}
		for _, h := range holders {
			if !h.ingested {
				return quarry.ErrNotIngested
			}
			p, err := tx.pair(ctx, h.pair)
			if err != nil {
				return err
			}
			if err := c.CheckChangePair(p); err != nil {
				return err
			}
		}
		for _, h := range holders {
			if _, err := tx.deleteDocuments(ctx, h.pair, `documents.id = $2`, id); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "document.delete", "cc_pair", h.pair, []string{"document"}); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanPairDocument reads the pairDocumentColumns of one row.
func scanPairDocument(r interface{ Scan(...any) error }) (quarry.PairDocument, error) {
	var (
		d       quarry.PairDocument
		updated sql.NullInt64
		indexed int64
	)
	err := r.Scan(&d.DocumentID, &d.SemanticID, &d.Link, &updated, &indexed, &d.FromIngestionAPI)
	d.DocUpdatedAt, d.IndexedAt = timeOrNil(updated), quarry.TimeFromMicros(indexed)
	return d, err
}

// pairDocumentColumns are the columns of a quarry.PairDocument.
const pairDocumentColumns = `id, semantic_identifier, link, doc_updated_at, indexed_at, from_ingestion_api`

// PairDocumentPage returns page page (of size) of the documents of pair
// id that c may read (documentsReadable), by id, and how many there are,
// if c may see the pair (Onyx's 400 otherwise).
func (db *DB) PairDocumentPage(ctx context.Context, c *quarry.Caller, id, page, size int64) ([]quarry.PairDocument, int64, error) {
	var (
		out   []quarry.PairDocument
		total int64
	)
	err := db.snapshot(ctx, func(q querier) error {
		if err := db.checkSeesPair(ctx, q, c, id); err != nil {
			return err
		}
		args := []any{id}
		readable := documentsReadable(c, "documents", &args)
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM documents WHERE cc_pair_id = $1 AND `+readable, args...).Scan(&total); err != nil {
			return err
		}
		n := len(args)
		var err error
		out, err = queryAll(ctx, q, scanPairDocument, `SELECT `+pairDocumentColumns+` FROM documents WHERE cc_pair_id = $1 AND `+readable+
			fmt.Sprintf(` ORDER BY id LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, size, page*size)...)
		return err
	})
	return out, total, mapError(err)
}

// PairDocumentText returns document docID of pair id with its text, if c
// may see the pair (Onyx's 400 otherwise) and the pair holds it where c
// may read it (documentsReadable; quarry.ErrPairDocumentNotFound
// otherwise).
func (db *DB) PairDocumentText(ctx context.Context, c *quarry.Caller, id int64, docID string) (*quarry.PairDocumentText, error) {
	var out quarry.PairDocumentText
	err := db.snapshot(ctx, func(q querier) error {
		if err := db.checkSeesPair(ctx, q, c, id); err != nil {
			return err
		}
		var (
			body    string
			texts   []byte
			updated sql.NullInt64
			indexed int64
		)
		args := []any{id, docID}
		err := q.QueryRowContext(ctx, `SELECT id, semantic_identifier, link, doc_updated_at, indexed_at, from_ingestion_api, body, texts
			FROM documents WHERE cc_pair_id = $1 AND id = $2 AND `+documentsReadable(c, "documents", &args), args...).
			Scan(&out.DocumentID, &out.SemanticID, &out.Link, &updated, &indexed, &out.FromIngestionAPI, &body, &texts)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.ErrPairDocumentNotFound
		}
		if err != nil {
			return err
		}
		out.DocUpdatedAt, out.IndexedAt = timeOrNil(updated), quarry.TimeFromMicros(indexed)
		var d quarry.Document
		if err := db.texts.unpack(body, texts, &d); err != nil {
			return err
		}
		out.Title, out.Source, out.Metadata, out.Sections, out.Text = d.Title, d.Source, d.Metadata, d.Sections, d.DocumentText()
		if out.Metadata == nil {
			out.Metadata = map[string]any{}
		}
		if out.Sections == nil {
			out.Sections = []quarry.Section{}
		}
		return nil
	})
	if err != nil {
		return nil, mapError(err)
	}
	return &out, nil
}
