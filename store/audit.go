package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/quarryhq/quarry"
)

// auditWhere is the condition of f, on audit_events a joined with the
// actor u, with its arguments as $1…$8 (an unset filter is ” or a bound
// that keeps every row).
const auditWhere = `
		WHERE ($1 = '' OR a.resource_type = $1) AND ($2 = '' OR a.resource_id = $2)
		  AND ($3 = '' OR a.actor_id = $3 OR u.email_key = $4) AND ($5 = '' OR a.action = $5)
		  AND a.at >= $6 AND a.at < $7 AND a.id < $8`

// auditArgs returns the arguments of auditWhere for f.
func auditArgs(f quarry.AuditFilter) []any {
	since, until, before := int64(math.MinInt64), int64(math.MaxInt64), int64(math.MaxInt64)
	if f.Since != nil {
		since = f.Since.Micros()
	}
	if f.Until != nil {
		until = f.Until.Micros()
	}
	if f.BeforeID != nil {
		before = *f.BeforeID
	}
	actor := deref(f.Actor)
	return []any{deref(f.ResourceType), deref(f.ResourceID), actor, quarry.EmailKey(actor), deref(f.Action), since, until, before}
}

// AuditEvents returns one page of the audit entries that f selects, newest
// first, and how many entries it selects in all.
func (db *DB) AuditEvents(ctx context.Context, f quarry.AuditFilter) ([]*quarry.AuditEvent, int64, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args := auditArgs(f)
	var total int64
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id`+auditWhere, args...).Scan(&total); err != nil {
		return nil, 0, mapError(err)
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT a.id, a.at, a.actor_id, u.email, a.api_key_id, a.scim_token_id, t.name, a.action, a.resource_type, a.resource_id, a.fields, a.request_id, a.source_ip, a.details
		FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id LEFT JOIN scim_tokens t ON t.id = a.scim_token_id`+auditWhere+`
		ORDER BY a.id DESC LIMIT $9 OFFSET $10`, append(args, limit, f.Offset)...)
	if err != nil {
		return nil, 0, mapError(err)
	}
	out := []*quarry.AuditEvent{}
	for rows.Next() {
		var (
			e       quarry.AuditEvent
			at      int64
			fields  string
			details sql.NullString
		)
		if err := rows.Scan(&e.ID, &at, &e.ActorID, &e.ActorEmail, &e.APIKeyID, &e.SCIMTokenID, &e.SCIMTokenName, &e.Action, &e.ResourceType, &e.ResourceID, &fields, &e.RequestID, &e.SourceIP, &details); err != nil {
			rows.Close()
			return nil, 0, mapError(err)
		}
		e.At = quarry.TimeFromMicros(at)
		if err := json.Unmarshal([]byte(fields), &e.Fields); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("audit event %d: %w", e.ID, err)
		}
		if details.Valid {
			e.Details = json.RawMessage(details.String)
		}
		out = append(out, &e)
	}
	return out, total, closeRows(rows)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
