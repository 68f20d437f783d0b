package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// handleAuditLog serves GET /admin/audit-log.
func (s *Server) handleAuditLog(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in auditQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	es, err := s.db.AuditEvents(r.Context(), quarry.AuditFilter{
		ResourceType: value(in.ResourceType),
		ResourceID:   value(in.ResourceID),
		Limit:        int(in.Limit),
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, es)
}
