package store

import (
	"context"
	"strconv"

	"github.com/quarryhq/quarry"
)

// RecordToolRun appends the audit entry of one run of a tool by c: the
// tool, the method, the host called, the status and the duration (see
// quarry.ToolRunRecord), never the arguments or anything secret. A run
// changes nothing in the database, so the entry is written on its own.
func (db *DB) RecordToolRun(ctx context.Context, c *quarry.Caller, r *quarry.ToolRunRecord) error {
	return db.update(ctx, func(tx *Tx) error {
		return tx.auditDetails(ctx, c, "tool.run", "tool", r.ToolID, nil, r.Details())
	})
}

// auditDetails appends an audit entry, as audit does, with details: an
// object of facts about the event (never secrets).
func (tx *Tx) auditDetails(ctx context.Context, c *quarry.Caller, action, resourceType string, resourceID int64, fields []string, details map[string]any) error {
	if fields == nil {
		fields = []string{}
	}
	var actor *string
	var keyID *int64
	if c != nil {
		actor = &c.ID
		if c.APIKeyID != 0 {
			keyID = &c.APIKeyID
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_events (at, actor_id, api_key_id, action, resource_type, resource_id, fields, request_id, source_ip, details)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tx.now.Micros(), actor, keyID, action, resourceType, strconv.FormatInt(resourceID, 10), jsonText(fields),
		quarry.RequestIDFrom(ctx), quarry.ClientIPFrom(ctx), jsonText(details))
	return err
}
