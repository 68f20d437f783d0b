package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/quarryhq/quarry"
)

// AuditEvents returns audit entries, newest first, narrowed by f.
func (db *DB) AuditEvents(ctx context.Context, f quarry.AuditFilter) ([]*quarry.AuditEvent, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT a.id, a.at, a.actor_id, u.email, a.api_key_id, a.action, a.resource_type, a.resource_id, a.fields, a.request_id, a.source_ip
		FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id
		WHERE ($1 = '' OR a.resource_type = $1) AND ($2 = '' OR a.resource_id = $2)
		ORDER BY a.id DESC LIMIT $3`, deref(f.ResourceType), deref(f.ResourceID), limit)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.AuditEvent{}
	for rows.Next() {
		var (
			e      quarry.AuditEvent
			at     int64
			fields string
		)
		if err := rows.Scan(&e.ID, &at, &e.ActorID, &e.ActorEmail, &e.APIKeyID, &e.Action, &e.ResourceType, &e.ResourceID, &fields, &e.RequestID, &e.SourceIP); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		e.At = quarry.TimeFromMicros(at)
		if err := json.Unmarshal([]byte(fields), &e.Fields); err != nil {
			rows.Close()
			return nil, fmt.Errorf("audit event %d: %w", e.ID, err)
		}
		out = append(out, &e)
	}
	return out, closeRows(rows)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
