package quarry

import (
	"encoding/json"
	"slices"
	"strings"
)

// ErrNoToolIDs answers a change of the status of no tools (400).
var ErrNoToolIDs = Errorf(EINVALID, "No tool IDs provided")

// Tool is an action the assistant may call: a built-in (InCodeToolID set)
// or a custom tool described by an OpenAPI document.
type Tool struct {
	ID                      int64
	Name                    string
	Description             *string
	Definition              json.RawMessage // The OpenAPI document; nil for built-ins.
	DisplayName             *string
	InCodeToolID            *string
	Headers                 []Header // Values are secrets: encrypted at rest, masked in responses.
	PassthroughAuth         bool
	MCPServerID             *int64
	MCPInputSchema          json.RawMessage // The input schema an MCP server gave the tool; nil for other tools.
	UserID                  *string         // The owner; nil for built-ins. A tool of an MCP server is its server's owner's.
	OAuthConfigID           *int64
	OAuthConfigName         *string
	Enabled                 bool
	ChatSelectable          bool
	AgentCreationSelectable bool
	DefaultEnabled          bool
	CreatedAt               Time
	UpdatedAt               Time
	Version                 int64 // Bumped by every change; the ETag.
}

// Header is a custom HTTP header a tool sends with every call.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// CheckHeaders reports the first header of hs, in order, whose key is not
// a valid HTTP field name, names a header the HTTP client sets itself for
// each call, or whose value is not a valid field value (RFC 9110 sections
// 5.1 and 5.5): a name is one or more letters, digits and
// !#$%&'*+-.^_`|~; a value has no control character but tab (so no CR or
// LF, which would let it add headers or end them). The message never shows
// a value, which is a secret.
func CheckHeaders(hs []Header) error {
	for _, h := range hs {
		if !validFieldName(h.Key) {
			return Errorf(EINVALID, "Custom header key %q is not a valid HTTP header name: use letters, digits and !#$%%&'*+-.^_`|~ only", h.Key)
		}
		if clientHeader(h.Key) {
			return Errorf(EINVALID, "Custom header %q cannot be set: the HTTP client sets it for each call, as it describes the connection or how the message is framed", h.Key)
		}
		if !validFieldValue(h.Value) {
			return Errorf(EINVALID, "The value of custom header %q is not a valid HTTP header value: it must not contain control characters such as CR or LF", h.Key)
		}
	}
	return nil
}

// clientHeader reports whether the header named key (in any case) is one
// the HTTP client sets for each call: the hop-by-hop headers, which
// describe one connection (RFC 9110 section 7.6.1), and those that frame
// the message or name its host. Sent by a tool, they would break its calls
// or smuggle a second request into them.
func clientHeader(key string) bool {
	switch strings.ToLower(key) {
	case "host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer",
		"keep-alive", "proxy-connection":
		return true
	}
	return false
}

// validFieldName reports whether s is an RFC 9110 token.
func validFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validFieldValue reports whether s has no control character but tab.
// Bytes from 0x80 up (RFC 9110's obs-text, UTF-8 here) are allowed.
func validFieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// ToolInput holds the fields of a custom tool to create.
type ToolInput struct {
	Name            string
	Description     *string
	Definition      json.RawMessage
	Headers         []Header
	PassthroughAuth bool
	OAuthConfigID   *int64
}

// ToolUpdate holds the changes of a partial tool update. A nil field is left
// unchanged.
type ToolUpdate struct {
	Name            *string
	Description     **string // *Description == nil clears it.
	Definition      json.RawMessage
	Headers         *[]Header // Replaces the headers, keeping masked echoes (see KeepMaskedHeaders).
	PassthroughAuth *bool
	OAuthConfigID   **int64 // *OAuthConfigID == nil unlinks the OAuth config.
	IfMatch         []int64 // If not nil, the versions the caller accepts (If-Match).
	// KeepEchoes says that a header value equal to the masked rendering of
	// the stored value of the same header keeps the stored value (see
	// KeepMaskedHeaders): true when responses are masked.
	KeepEchoes bool
}

// Apply returns old as u changes it. It checks nothing: see CheckToolEdit
// and CheckAuth.
func (u *ToolUpdate) Apply(old *Tool) *Tool {
	next := *old
	if u.Name != nil {
		next.Name = *u.Name
	}
	if u.Description != nil {
		next.Description = *u.Description
	}
	if u.Definition != nil {
		next.Definition = u.Definition
	}
	if u.Headers != nil {
		next.Headers = *u.Headers
		if u.KeepEchoes {
			next.Headers = KeepMaskedHeaders(old.Headers, *u.Headers)
		}
	}
	if u.PassthroughAuth != nil {
		next.PassthroughAuth = *u.PassthroughAuth
	}
	if u.OAuthConfigID != nil {
		next.OAuthConfigID = *u.OAuthConfigID
	}
	return &next
}

// IsBuiltIn reports whether t is implemented in code rather than described
// by a definition. Built-in tools cannot be changed through the API.
func (t *Tool) IsBuiltIn() bool { return t.InCodeToolID != nil }

// CanEditTool reports whether c may change or delete t: admins (and
// holders of manage:actions, see ManagesActions) any custom tool, curators
// the tools they own (contract section 3.1).
func (c *Caller) CanEditTool(t *Tool) bool {
	return c.ManagesActions() || (c.IsCurator() && t.UserID != nil && *t.UserID == c.ID)
}

// CanEnableTool reports whether c may enable or disable t: admins (and
// holders of manage:actions) any tool, built-ins included; curators the
// custom tools they own.
func (c *Caller) CanEnableTool(t *Tool) bool {
	return c.ManagesActions() || (!t.IsBuiltIn() && c.CanEditTool(t))
}

// ErrNotYourTool answers a change of another user's tool (contract section
// 3.1).
var ErrNotYourTool = Errorf(EFORBIDDEN, "You can only modify actions that you created.")

// CheckEnableTool reports why c may not enable or disable t (see
// CanEnableTool).
func (c *Caller) CheckEnableTool(t *Tool) error {
	if !c.CanEnableTool(t) {
		return ErrNotYourTool
	}
	return nil
}

// CheckAuth reports the one rule that ties a tool's headers to its
// authentication: passthrough auth excludes an Authorization header.
func (t *Tool) CheckAuth() error {
	if !t.PassthroughAuth {
		return nil
	}
	for _, h := range t.Headers {
		if strings.EqualFold(h.Key, "authorization") {
			return Errorf(EINVALID, "Cannot use passthrough auth with custom authorization headers")
		}
	}
	return nil
}

// KeepMaskedHeaders returns the headers to store when a client sends
// incoming to replace stored: a value equal to the masked rendering of the
// stored value of the same header (keys compared case-insensitively) keeps
// the stored value.
func KeepMaskedHeaders(stored, incoming []Header) []Header {
	out := make([]Header, len(incoming))
	for i, h := range incoming {
		out[i] = h
		for _, s := range stored {
			if strings.EqualFold(s.Key, h.Key) && IsMaskOf(h.Value, s.Value) {
				out[i].Value = s.Value
				break
			}
		}
	}
	return out
}

// MaskHeaders returns a copy of hs with every value masked.
func MaskHeaders(hs []Header) []Header {
	out := make([]Header, len(hs))
	for i, h := range hs {
		out[i] = Header{Key: h.Key, Value: MaskString(h.Value)}
	}
	return out
}

// CheckToolEdit reports why c may not change or delete t, if it may not:
// built-in tools are never changed through the API (400), nor are the
// tools of MCP servers, which follow their server's listing (400); only
// admins and their owners change custom tools (403).
func (c *Caller) CheckToolEdit(t *Tool) error {
	if t.IsBuiltIn() {
		return Errorf(EINVALID, "Built-in tools cannot be modified through this endpoint.")
	}
	if t.MCPServerID != nil {
		return Errorf(EINVALID, "Tools of MCP servers cannot be modified through this endpoint: they follow their server's tool list "+
			"(GET /admin/mcp/server/%d/tools lists them again; POST /admin/mcp/servers/update or PATCH /admin/tool/status enables them).", *t.MCPServerID)
	}
	if !c.CanEditTool(t) {
		return ErrNotYourTool
	}
	return nil
}

// ChangedFields returns the JSON names of the fields u changes from old to
// updated, in a fixed order, for the audit log.
func (u *ToolUpdate) ChangedFields(old, updated *Tool) []string {
	var f []string
	add := func(changed bool, name string) {
		if changed {
			f = append(f, name)
		}
	}
	add(old.Name != updated.Name, "name")
	add(!PtrEqual(old.Description, updated.Description), "description")
	add(u.Definition != nil && !SameJSON(old.Definition, updated.Definition), "definition")
	add(!slices.Equal(old.Headers, updated.Headers), "custom_headers")
	add(old.PassthroughAuth != updated.PassthroughAuth, "passthrough_auth")
	add(!PtrEqual(old.OAuthConfigID, updated.OAuthConfigID), "oauth_config_id")
	return f
}
