// Package scim speaks SCIM 2.0 (RFC 7643, RFC 7644), the protocol by which
// a company's identity provider (Okta, Entra ID, ...) provisions people and
// groups: the shapes of its resources, its filters and PATCH operations, and
// the discovery documents, as the providers send and expect them and as
// Onyx serves them (backend/ee/onyx/server/scim in onyx-dot-app/onyx).
//
// It translates between the wire and the directory of package quarry
// (quarry.DirectoryUser, quarry.DirectoryGroup, quarry.DirectoryFilter). It
// knows nothing of SQL, and nothing of HTTP but the statuses of its errors'
// kinds: package api routes and answers, package store keeps the records.
package scim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Schema URIs (RFC 7643 section 8).
const (
	UserSchema                  = "urn:ietf:params:scim:schemas:core:2.0:User"
	GroupSchema                 = "urn:ietf:params:scim:schemas:core:2.0:Group"
	EnterpriseUserSchema        = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	ListResponseSchema          = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	PatchOpSchema               = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	ErrorSchema                 = "urn:ietf:params:scim:api:messages:2.0:Error"
	ServiceProviderConfigSchema = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	ResourceTypeSchema          = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	SchemaSchema                = "urn:ietf:params:scim:schemas:core:2.0:Schema"
)

// MediaType is the media type of SCIM bodies (RFC 7644 section 3.1).
const MediaType = "application/scim+json"

// Kinds of Error: RFC 7644 section 3.12's scimType values that Quarry
// answers.
const (
	InvalidFilter = "invalidFilter" // The filter is not valid or not supported.
	InvalidSyntax = "invalidSyntax" // The body is not a valid SCIM message.
	InvalidPath   = "invalidPath"   // A PATCH path names nothing Quarry knows.
	NoTarget      = "noTarget"      // A PATCH path selects nothing where it must.
	InvalidValue  = "invalidValue"  // A value is missing, of the wrong type, or refused.
	Mutability    = "mutability"    // The change would alter what may not be altered.
	Uniqueness    = "uniqueness"    // Another resource has the value (409).
)

// Error is a request the protocol refuses: a bad filter, body or PATCH
// operation. Package api answers it with status 400 and Type as scimType
// (never Uniqueness: conflicts are the store's, quarry.ECONFLICT).
type Error struct {
	Type   string
	Detail string
}

// Error implements the error interface.
func (e *Error) Error() string { return "scim: " + e.Type + ": " + e.Detail }

func errorf(kind, format string, args ...any) *Error {
	return &Error{Type: kind, Detail: fmt.Sprintf(format, args...)}
}

// ErrorBody is the body of every SCIM error response (RFC 7644 section
// 3.12): the status is a string.
type ErrorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail"`
}

// NewErrorBody returns the body of an error response with status, kind
// (a scimType, or "") and detail.
func NewErrorBody(status int, kind, detail string) ErrorBody {
	return ErrorBody{Schemas: []string{ErrorSchema}, Status: fmt.Sprint(status), ScimType: kind, Detail: detail}
}

// ListResponse is the envelope of a list (RFC 7644 section 3.4.2).
type ListResponse struct {
	Schemas      []string `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	StartIndex   int      `json:"startIndex"`
	ItemsPerPage int      `json:"itemsPerPage"`
	Resources    []any    `json:"Resources"`
}

// NewListResponse returns the page of resources that starts at startIndex
// (1-based) of total.
func NewListResponse(resources []any, total, startIndex int) *ListResponse {
	if resources == nil {
		resources = []any{}
	}
	return &ListResponse{Schemas: []string{ListResponseSchema}, TotalResults: total, StartIndex: startIndex,
		ItemsPerPage: len(resources), Resources: resources}
}

// object is a JSON object whose keys are looked up without regard to case,
// as attribute names are (RFC 7643 section 2.1).
type object map[string]json.RawMessage

// decodeObject decodes a JSON object, failing with what names it.
func decodeObject(raw json.RawMessage, what string) (object, error) {
	var o map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errorf(InvalidSyntax, "%s must be a JSON object", what)
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, errorf(InvalidSyntax, "%s must be a JSON object", what)
	}
	return o, nil
}

// get returns the value of key (in any case) and whether it is there and
// not null.
func (o object) get(key string) (json.RawMessage, bool) {
	for k, v := range o {
		if strings.EqualFold(k, key) {
			return v, string(v) != "null"
		}
	}
	return nil, false
}

// has reports whether key (in any case) is there, null or not.
func (o object) has(key string) bool {
	for k := range o {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// str decodes a string attribute: nil when absent or null.
func (o object) str(key string) (*string, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	return asString(raw, key)
}

func asString(raw json.RawMessage, what string) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errorf(InvalidValue, "%s must be a string", what)
	}
	return &s, nil
}

// asBool decodes a boolean, also as the strings "true" and "false" in any
// case, which Entra ID sends in PATCH operations ("False").
func asBool(raw json.RawMessage, what string) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return b, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, errorf(InvalidValue, "%s must be a boolean", what)
}
