package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
)

// handleSCIMSearch serves POST /.search (at the root, under /Users and
// under /Groups): RFC 7644 section 3.4.3's search by POST, which Quarry
// does not offer. 501, as section 3.12 gives for an operation the
// service provider does not support, rather than 404 or 405, which say
// nothing of why; a provider searches with GET and a filter.
func (s *Server) handleSCIMSearch(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return quarry.Errorf(quarry.ENOTIMPLEMENTED, "Searching with POST /.search is not supported: use GET with a filter (RFC 7644 section 3.4.2)")
}
