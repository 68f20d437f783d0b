package store

import (
	"context"

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

// SearchDocument returns the copy of document id that pair *pair holds,
// if c may find it (searchRights: the rights of a search's results); with
// pair nil, the one copy c may find, whichever pair holds it. A copy c may
// not find is quarry.ErrDocumentNotFound, whether or not it exists; an id
// alone that several pairs hold copies of that c may find is a
// *quarry.AmbiguousDocumentError naming those pairs: one pair's copy is
// never served in place of another's (see quarry.DocumentCopy).
func (db *DB) SearchDocument(ctx context.Context, c *quarry.Caller, id string, pair *int64) (*quarry.DocumentCopy, error) {
	if err := c.CheckSearch(); err != nil {
		return nil, err
	}
	var out *quarry.DocumentCopy
	err := db.snapshot(ctx, func(q querier) error {
		args := []any{id}
		where := ""
		if pair != nil {
			args = append(args, *pair)
			where = " AND cc_pair_id = $2"
		}
		pairs, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) (quarry.PairRef, error) {
			var p quarry.PairRef
			return p, r.Scan(&p.ID, &p.Name, &p.AccessType)
		}, `SELECT p.id, p.name, p.access_type FROM (SELECT cc_pair_id, id AS document_id FROM documents WHERE id = $1`+where+`) ch
			JOIN cc_pairs p ON p.id = ch.cc_pair_id WHERE `+searchRights(c, "ch", &args)+` ORDER BY p.id`, args...)
		switch {
		case err != nil:
			return err
		case len(pairs) == 0:
			return quarry.ErrDocumentNotFound
		case len(pairs) > 1:
			return &quarry.AmbiguousDocumentError{ID: id, Pairs: pairs}
		}
		d, err := db.storedDocument(ctx, q, pairs[0].ID, id, "")
		out = &quarry.DocumentCopy{Pair: pairs[0], Document: d}
		return err
	})
	if err != nil {
		return nil, mapError(err)
	}
	return out, nil
}
