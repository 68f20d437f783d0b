package api

import (
	"net/http"
	"strings"
)

// handleNoRoute answers requests that match no route as FastAPI does:
// 405 {"detail":"Method Not Allowed"} with an Allow header when the path
// exists for other methods, 404 {"detail":"Not Found"} otherwise.
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		writeJSON(w, http.StatusNotFound, errorBody{"Not Found"})
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method Not Allowed"})
}
