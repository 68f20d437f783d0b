package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/quarryhq/quarry"
)

// OAuthClientSecret returns the client secret of OAuth config id in clear,
// which nothing outside tests reads.
func (db *DB) OAuthClientSecret(ctx context.Context, id int64) (string, error) {
	var ct []byte
	if err := db.read.QueryRowContext(ctx, `SELECT client_secret FROM oauth_configs WHERE id = $1`, id).Scan(&ct); err != nil {
		return "", mapError(err)
	}
	pt, err := db.keys.open(purposeOAuthSecret, ct)
	return string(pt), err
}

// ExecForTest runs a statement outside the store's rules, as a test that
// stands for an older build or an operator does.
func (db *DB) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := db.write.DB.ExecContext(ctx, query, args...)
	return err
}

// QueryRowForTest scans the one row of a query into dest.
func (db *DB) QueryRowForTest(ctx context.Context, query string, dest ...any) error {
	return db.read.DB.QueryRowContext(ctx, query).Scan(dest...)
}

// IngestBatchAround is IngestBatch for a caller allowed to write pair
// pairID, with between run after the documents are analysed and before the
// transaction that writes them.
func (db *DB) IngestBatchAround(ctx context.Context, pairID int64, docs []quarry.Document, between func()) error {
	an, err := db.analyseDocuments(ctx, pairID, docs)
	if err != nil {
		return err
	}
	between()
	return db.update(ctx, func(tx *Tx) error {
		_, _, err := tx.putDocuments(ctx, pairID, 0, docs, an, true)
		return err
	})
}

// HoldIndexLockForTest takes the lock of the index's upkeep, as another
// server's flush does (on SQLite the one writer), until release is called.
func (db *DB) HoldIndexLockForTest(ctx context.Context) (release func(), err error) {
	tx, err := db.write.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if db.dialect == Postgres {
		_, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, searchIndexLock)
	} else {
		_, err = tx.ExecContext(ctx, `DELETE FROM search_pending WHERE chunk_id < 0`) // Takes the write lock.
	}
	if err != nil {
		return nil, errors.Join(err, tx.Rollback())
	}
	return func() { tx.Rollback() }, nil
}

// StoredDocumentsForTest returns every document as StoredDocument reads
// it, by pair id and document id ("1/doc-1").
func (db *DB) StoredDocumentsForTest(ctx context.Context) (map[string]*quarry.Document, error) {
	type key struct {
		pair int64
		id   string
	}
	keys, err := queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (key, error) {
		var k key
		return k, r.Scan(&k.pair, &k.id)
	}, `SELECT cc_pair_id, id FROM documents`)
	if err != nil {
		return nil, err
	}
	out := map[string]*quarry.Document{}
	for _, k := range keys {
		d, err := db.StoredDocument(ctx, k.pair, k.id)
		if err != nil {
			return nil, err
		}
		out[fmt.Sprintf("%d/%s", k.pair, k.id)] = d
	}
	return out, nil
}
