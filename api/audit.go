package api

import (
	"net/http"
	"strconv"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// handleAuditLog serves GET /admin/audit-log: one page of the entries the
// filters select, newest first, with their number in X-Total-Count.
func (s *Server) handleAuditLog(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in auditQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f := quarry.AuditFilter{
		ResourceType: value(in.ResourceType),
		ResourceID:   value(in.ResourceID),
		Actor:        value(in.Actor),
		Action:       value(in.Action),
		BeforeID:     value(in.BeforeID),
		Offset:       int(in.Offset),
		Limit:        int(in.Limit),
	}
	if in.Since.Set() {
		f.Since = &quarry.Time{Time: in.Since.Value.UTC()}
	}
	if in.Until.Set() {
		f.Until = &quarry.Time{Time: in.Until.Value.UTC()}
	}
	es, total, err := s.db.AuditEvents(r.Context(), f)
	if err != nil {
		return err
	}
	w.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	return writeJSON(w, http.StatusOK, es)
}
