package quarry

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The header templates of MCP servers: the headers Quarry sends, with
// the values admins or people give for their placeholders.

// MCPAuthTemplate is a server's header template (Onyx's MCPAuthTemplate):
// header names to values with {placeholders}, and the placeholders
// someone must supply.
type MCPAuthTemplate struct {
	Headers        map[string]string `json:"headers"`
	RequiredFields []string          `json:"required_fields"`
}

// placeholderRE matches a {placeholder} in a header value.
var placeholderRE = regexp.MustCompile(`\{([^}]+)\}`)

// UserEmailPlaceholder is the placeholder Quarry fills in with the email
// of the person a call is made for.
const UserEmailPlaceholder = "user_email"

// APIKeyPlaceholder is the placeholder of an API_TOKEN server's token.
const APIKeyPlaceholder = "api_key"

// NewMCPAuthTemplate returns the template of headers, with the fields its
// placeholders ask for.
func NewMCPAuthTemplate(headers map[string]string) *MCPAuthTemplate {
	return &MCPAuthTemplate{Headers: maps.Clone(headers), RequiredFields: RequiredFields(headers)}
}

// DefaultAPITokenTemplate is the template of an API_TOKEN server called
// with the admin's token when none is given: Authorization: Bearer
// {api_key}, as in Onyx.
func DefaultAPITokenTemplate() *MCPAuthTemplate {
	return NewMCPAuthTemplate(map[string]string{"Authorization": "Bearer {" + APIKeyPlaceholder + "}"})
}

// RequiredFields returns the placeholders of headers' values, sorted,
// without those Quarry fills in itself ({user_email}).
func RequiredFields(headers map[string]string) []string {
	seen := map[string]bool{}
	for _, v := range headers {
		for _, m := range placeholderRE.FindAllStringSubmatch(v, -1) {
			if m[1] != UserEmailPlaceholder {
				seen[m[1]] = true
			}
		}
	}
	out := slices.Sorted(maps.Keys(seen))
	if out == nil {
		out = []string{}
	}
	return out
}

// HasPlaceholder reports whether v holds a {placeholder}.
func HasPlaceholder(v string) bool { return placeholderRE.MatchString(v) }

// CheckTemplateHeaders reports the first header of a template, in name
// order, that cannot be sent: a name that is not an HTTP field name, one
// the HTTP client sets itself (Host, Content-Length...), or a name given
// twice in different cases; or a value with a control character. Onyx
// refuses only Host.
func CheckTemplateHeaders(headers map[string]string) error {
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		lower := strings.ToLower(name)
		switch {
		case !validFieldName(name):
			return Errorf(EINVALID, "Invalid MCP header name: %q", name)
		case clientHeader(name):
			return Errorf(EINVALID, "MCP header %q is not allowed: the HTTP client sets it for each call", name)
		case seen[lower]:
			return Errorf(EINVALID, "Duplicate MCP header name: %q", name)
		case !validFieldValue(headers[name]):
			return Errorf(EINVALID, "The value of MCP header %q is not a valid HTTP header value: it must not contain control characters such as CR or LF", name)
		}
		seen[lower] = true
	}
	return nil
}

// Render returns t's headers with subs and email in place of their
// placeholders (Onyx's render): every required field must have a
// non-empty value, and the rendered values must be sendable (a value
// with a line break would add headers). Messages never show a value.
func (t *MCPAuthTemplate) Render(subs map[string]string, email string) (map[string]string, error) {
	var missing []string
	for _, f := range t.RequiredFields {
		if subs[f] == "" {
			missing = append(missing, f)
		}
	}
	if missing != nil {
		slices.Sort(missing)
		return nil, Errorf(EINVALID, "Missing MCP header substitutions: %s", strings.Join(missing, ", "))
	}
	out := make(map[string]string, len(t.Headers))
	for name, v := range t.Headers {
		v = placeholderRE.ReplaceAllStringFunc(v, func(m string) string {
			key := m[1 : len(m)-1]
			if key == UserEmailPlaceholder {
				return email
			}
			if s, ok := subs[key]; ok {
				return s
			}
			return m
		})
		if !validFieldValue(v) {
			return nil, Errorf(EINVALID, "The value given for MCP header %q is not a valid HTTP header value: it must not contain control characters such as CR or LF", name)
		}
		out[name] = v
	}
	return out, nil
}

// Masked returns t as admins see it: values without a placeholder masked
// (they are secrets, such as a static token), as Onyx does.
func (t *MCPAuthTemplate) Masked() *MCPAuthTemplate {
	out := &MCPAuthTemplate{Headers: map[string]string{}, RequiredFields: slices.Clone(t.RequiredFields)}
	for k, v := range t.Headers {
		if HasPlaceholder(v) {
			out.Headers[k] = v
		} else {
			out.Headers[k] = MaskString(v)
		}
	}
	return out
}

// KeepMaskedTemplate returns the template to store when an admin sends
// incoming over stored: a value unchanged per changed (Onyx's
// auth_template_headers_changed) or equal to the mask of the stored value
// of the same header keeps the stored value, so that a form that shows
// masked values can be saved back.
func KeepMaskedTemplate(stored, incoming map[string]string, changed map[string]bool) map[string]string {
	out := make(map[string]string, len(incoming))
	for k, v := range incoming {
		old, ok := stored[k]
		if ok && !changed[k] && (v == old || IsMaskOf(v, old)) {
			v = old
		}
		out[k] = v
	}
	return out
}

// KeepMaskedValues returns the credentials to store when incoming
// replaces stored, for Onyx's *_changed flags: a key not marked changed,
// or whose value is the mask of the stored one, keeps its stored value.
func KeepMaskedValues(stored, incoming map[string]string, changed map[string]bool) map[string]string {
	out := make(map[string]string, len(incoming))
	for k, v := range incoming {
		if old, ok := stored[k]; ok && (!changed[k] || IsMaskOf(v, old)) {
			v = old
		}
		out[k] = v
	}
	return out
}
