package api

import (
	"net/http"
	"strings"

	"github.com/quarryhq/quarry/scim"
)

// handleNoRoute answers requests that match no route as FastAPI does:
// 405 {"detail":"Method Not Allowed"} with an Allow header when the path
// exists for other methods, 404 {"detail":"Not Found"} otherwise; under
// /scim/v2, with SCIM error bodies.
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	scimPath := r.URL.Path == "/scim/v2" || strings.HasPrefix(r.URL.Path, "/scim/v2/")
	if len(allow) == 0 {
		if scimPath { // A SCIM client reads SCIM errors (RFC 7644 section 3.12).
			writeSCIM(w, http.StatusNotFound, scim.NewErrorBody(http.StatusNotFound, "", "Not Found"))
			return
		}
		writeJSON(w, http.StatusNotFound, errorBody{"Not Found"})
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	if scimPath {
		writeSCIM(w, http.StatusMethodNotAllowed, scim.NewErrorBody(http.StatusMethodNotAllowed, "", "Method Not Allowed"))
		return
	}
	writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method Not Allowed"})
}
