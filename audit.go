package quarry

// AuditEvent records one change: who made it, when, to what, and the names
// (never the values) of the fields it changed.
type AuditEvent struct {
	ID           int64    `json:"id"`
	At           Time     `json:"time"`
	ActorID      *string  `json:"actor_user_id"`
	ActorEmail   *string  `json:"actor_email"`
	APIKeyID     *int64   `json:"api_key_id"`
	Action       string   `json:"action"` // e.g. "credential.update"
	ResourceType string   `json:"resource_type"`
	ResourceID   string   `json:"resource_id"`
	Fields       []string `json:"fields"`
	RequestID    string   `json:"request_id"`
	SourceIP     string   `json:"source_ip"`
}

// AuditFilter narrows the audit log listing.
type AuditFilter struct {
	ResourceType *string
	ResourceID   *string
	Limit        int
}
