package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/quarryhq/quarry"
)

// What the search page and the MCP endpoint read beside the search itself
// (store/search.go), with the same rights: the sources to filter by, and
// a document's text.

// SearchSources returns the sources of the connectors of the pairs c may
// search (searchPairs), sorted, without the ingestion API's: Onyx's
// indexed sources (fetch_unique_document_sources), which Onyx lists for
// every connector whoever asks, with the caller's rights. A caller who may
// not search is refused (quarry.Caller.CheckSearch).
func (db *DB) SearchSources(ctx context.Context, c *quarry.Caller) ([]quarry.DocumentSource, error) {
	if err := c.CheckSearch(); err != nil {
		return nil, err
	}
	var args []any
	return queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (quarry.DocumentSource, error) {
		var s quarry.DocumentSource
		return s, r.Scan(&s)
	}, `SELECT DISTINCT cn.source FROM (SELECT id AS cc_pair_id, connector_id FROM cc_pairs) sp
		JOIN connectors cn ON cn.id = sp.connector_id
		WHERE `+searchPairs(c, "sp", &args)+` AND cn.source <> 'ingestion_api' ORDER BY cn.source`, args...)
}

// SearchDocument returns document id as a pair c may search holds it
// (searchRights: the rights of a search's results), the copy written last
// when several such pairs hold it; quarry.ErrDocumentNotFound when none
// does, whether or not another pair holds it.
func (db *DB) SearchDocument(ctx context.Context, c *quarry.Caller, id string) (*quarry.Document, error) {
	if err := c.CheckSearch(); err != nil {
		return nil, err
	}
	args := []any{id}
	var body string
	err := db.read.QueryRowContext(ctx, `SELECT ch.body FROM (SELECT cc_pair_id, id AS document_id, body, indexed_at FROM documents WHERE id = $1) ch
		WHERE `+searchRights(c, "ch", &args)+` ORDER BY ch.indexed_at DESC, ch.cc_pair_id LIMIT 1`, args...).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.ErrDocumentNotFound
	}
	if err != nil {
		return nil, mapError(err)
	}
	var d quarry.Document
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		return nil, err
	}
	return &d, nil
}
