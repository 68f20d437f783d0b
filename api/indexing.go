package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Quarry is the control plane only: it keeps connectors, credentials and
// their pairs, but indexes nothing. The routes of Onyx's that start,
// report on or wait for indexing, pruning and permission syncing are
// served all the same, so that a client learns why they cannot work: after
// the usual checks (401, 403, 422 for a bad path), they answer 501 with a
// sentence that says so.

// errNotIndexing returns the 501 of a route that needs an indexer; what
// says what the route would have done, e.g. "run a connector".
func errNotIndexing(what string) error {
	return quarry.Errorf(quarry.ENOTIMPLEMENTED,
		"Quarry does not index documents: it is a control plane only, so it cannot %s", what)
}

// notIndexing returns the handler of a route that needs an indexer.
func notIndexing(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		return errNotIndexing(what)
	}
}

// notIndexingPair returns the handler of a route about one cc-pair that
// needs an indexer: its path parameter is checked first.
func notIndexingPair(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in struct {
			ID int64 `path:"cc_pair_id"`
		}
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		return errNotIndexing(what)
	}
}
