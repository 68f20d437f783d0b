package scim

import (
	"encoding/json"
	"fmt"
	"strings"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/quarryhq/quarry"
)

// Filters (RFC 7644 section 3.4.2.2), parsed by
// github.com/scim2/filter-parser/v2 and turned into a
// quarry.DirectoryFilter. Supported: the comparisons eq, ne, co, sw, ew and
// pr, joined by and, or, not and parentheses, on the attributes of
// userAttributes and groupAttributes, also with the core schema's URI
// before them; emails[...] and members[...] with a filter on value. Any
// other filter is refused (invalidFilter), never ignored: a provider that
// asks for one user must not get them all.

// Limits on a filter: its length, and the comparisons it holds (which
// bound the SQL it becomes).
const (
	MaxFilterBytes       = 4096
	MaxFilterComparisons = 32
)

// Kind is a kind of resource.
type Kind int

// The kinds of resource.
const (
	Users Kind = iota
	Groups
)

// attribute is a filterable attribute: its canonical name, and whether it
// is a boolean.
type attribute struct {
	name    string
	boolean bool
}

// userAttributes and groupAttributes are the filterable attributes, by
// their lower-case names.
var (
	userAttributes = map[string]attribute{
		"id": {name: "id"}, "username": {name: "userName"}, "externalid": {name: "externalId"},
		"emails": {name: "emails.value"}, "emails.value": {name: "emails.value"},
		"displayname": {name: "displayName"}, "active": {name: "active", boolean: true},
	}
	groupAttributes = map[string]attribute{
		"id": {name: "id"}, "displayname": {name: "displayName"}, "externalid": {name: "externalId"},
		"members": {name: "members.value"}, "members.value": {name: "members.value"},
	}
)

// ParseFilter parses the filter parameter of a listing of kind. An empty
// filter selects everything (nil).
func ParseFilter(s string, kind Kind) (*quarry.DirectoryFilter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if len(s) > MaxFilterBytes {
		return nil, errorf(InvalidFilter, "The filter is longer than %d bytes", MaxFilterBytes)
	}
	expr, err := parse(s)
	if err != nil {
		return nil, errorf(InvalidFilter, "The filter is not a valid SCIM filter: %s", clip(s))
	}
	attrs := userAttributes
	if kind == Groups {
		attrs = groupAttributes
	}
	n := 0
	return convert(expr, attrs, kind, "", &n)
}

// parse runs the parser, which must not take the server down whatever it
// is given.
func parse(s string) (expr filter.Expression, err error) {
	defer func() {
		if p := recover(); p != nil {
			expr, err = nil, fmt.Errorf("scim: filter parser: %v", p)
		}
	}()
	return filter.ParseFilter([]byte(s))
}

// clip shortens a filter for an error message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// convert turns a parsed expression into a DirectoryFilter; within a value
// path (emails[...]), parent is the multi-valued attribute.
func convert(e filter.Expression, attrs map[string]attribute, kind Kind, parent string, n *int) (*quarry.DirectoryFilter, error) {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		l, err := convert(e.Left, attrs, kind, parent, n)
		if err != nil {
			return nil, err
		}
		r, err := convert(e.Right, attrs, kind, parent, n)
		if err != nil {
			return nil, err
		}
		op := quarry.FilterAnd
		if strings.EqualFold(string(e.Operator), "or") {
			op = quarry.FilterOr
		}
		return &quarry.DirectoryFilter{Op: op, Left: l, Right: r}, nil
	case *filter.NotExpression:
		inner, err := convert(e.Expression, attrs, kind, parent, n)
		if err != nil {
			return nil, err
		}
		return &quarry.DirectoryFilter{Op: quarry.FilterNot, Left: inner}, nil
	case *filter.ValuePath:
		if parent != "" {
			return nil, errorf(InvalidFilter, "Filters cannot nest brackets")
		}
		name, err := attributePath(e.AttributePath, kind)
		if err != nil {
			return nil, err
		}
		if name != "emails" && name != "members" {
			return nil, errorf(InvalidFilter, "Filtering on %s[...] is not supported", e.AttributePath)
		}
		return convert(e.ValueFilter, attrs, kind, name, n)
	case *filter.AttributeExpression:
		*n++
		if *n > MaxFilterComparisons {
			return nil, errorf(InvalidFilter, "The filter has more than %d comparisons", MaxFilterComparisons)
		}
		name, err := attributePath(e.AttributePath, kind)
		if err != nil {
			return nil, err
		}
		if parent != "" {
			name = parent + "." + name
		}
		a, ok := attrs[strings.ToLower(name)]
		if !ok || (parent != "" && a.name != parent+".value") {
			return nil, errorf(InvalidFilter, "Filtering on %s is not supported", name)
		}
		return comparison(e, a)
	}
	return nil, errorf(InvalidFilter, "The filter is not supported")
}

// attributePath returns the name of an attribute path ("emails.value"),
// without the core schema's URI of kind, which it may have.
func attributePath(p filter.AttributePath, kind Kind) (string, error) {
	if uri := p.URI(); uri != "" {
		want := UserSchema
		if kind == Groups {
			want = GroupSchema
		}
		if !strings.EqualFold(uri, want) {
			return "", errorf(InvalidFilter, "Filtering on attributes of %s is not supported", uri)
		}
	}
	name := p.AttributeName
	if sub := p.SubAttributeName(); sub != "" {
		name += "." + sub
	}
	return name, nil
}

// comparison turns one comparison into a DirectoryFilter.
func comparison(e *filter.AttributeExpression, a attribute) (*quarry.DirectoryFilter, error) {
	f := &quarry.DirectoryFilter{Attr: a.name}
	switch op := quarry.FilterOp(strings.ToLower(string(e.Operator))); op {
	case quarry.FilterPresent:
		f.Op = op
		return f, nil
	case quarry.FilterEq, quarry.FilterNe:
		f.Op = op
	case quarry.FilterContains, quarry.FilterStartsWith, quarry.FilterEndsWith:
		if a.boolean {
			return nil, errorf(InvalidFilter, "%s is a boolean: compare it with eq or ne", a.name)
		}
		f.Op = op
	default:
		return nil, errorf(InvalidFilter, "The operator %s is not supported", e.Operator)
	}
	switch v := e.CompareValue.(type) {
	case bool:
		if !a.boolean {
			return nil, errorf(InvalidFilter, "%s is compared with a string", a.name)
		}
		f.Value = fmt.Sprint(v)
	case string:
		if a.boolean {
			return nil, errorf(InvalidFilter, "%s is compared with true or false", a.name)
		}
		// The parser keeps the text between the quotes as it is: a JSON
		// string, whose escapes are read here.
		var s string
		if err := json.Unmarshal([]byte(`"`+v+`"`), &s); err != nil {
			return nil, errorf(InvalidFilter, "The value %q is not a valid string", v)
		}
		f.Value = s
	default:
		return nil, errorf(InvalidFilter, "%s is compared with a value of the wrong type", a.name)
	}
	return f, nil
}
