package quarry

import "encoding/json"

// AuditEvent records one change: who made it, when, to what, and the names
// (never the values) of the fields it changed.
type AuditEvent struct {
	ID         int64   `json:"id"`
	At         Time    `json:"time"`
	ActorID    *string `json:"actor_user_id"`
	ActorEmail *string `json:"actor_email"`
	APIKeyID   *int64  `json:"api_key_id"`
	// SCIMTokenID and SCIMTokenName name the company's directory's token
	// when the directory made the change (it is no user: ActorID is nil).
	SCIMTokenID   *int64   `json:"scim_token_id"`
	SCIMTokenName *string  `json:"scim_token_name"`
	Action        string   `json:"action"` // e.g. "credential.update"
	ResourceType  string   `json:"resource_type"`
	ResourceID    string   `json:"resource_id"`
	Fields        []string `json:"fields"`
	RequestID     string   `json:"request_id"`
	SourceIP      string   `json:"source_ip"`
	// Details holds facts of the event beyond its fields, as a JSON
	// object (a tool run's method, host, status and duration); absent
	// when there are none. Never secrets.
	Details json.RawMessage `json:"details,omitempty"`
}

// AuditFilter narrows the audit log listing and picks one page of it.
type AuditFilter struct {
	ResourceType *string
	ResourceID   *string
	// Actor is the user who made the change: its id, or its email in any
	// case.
	Actor  *string
	Action *string
	// Since and Until bound the time of the entries: Since included, Until
	// excluded.
	Since *Time
	Until *Time
	// BeforeID keeps only the entries older than the one with this id, so
	// that pages stay put while new entries are written.
	BeforeID *int64
	Offset   int
	Limit    int
}
