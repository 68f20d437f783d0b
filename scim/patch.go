package scim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/quarryhq/quarry"
)

// PATCH (RFC 7644 section 3.5.2) as the providers send it: Okta's
// lower-case operations with a path, or without one and an object of
// attributes as the value ({"op":"replace","value":{"active":false}}),
// and Entra ID's capitalised ones ("Replace", "Add"), booleans as strings
// ("False"), member removal by members[value eq "…"] or by a list of
// members, several operations in one request. Operations apply in order to
// a copy of the resource; the store then writes what changed, or nothing.

// MaxOperations bounds the operations of one PATCH request.
const MaxOperations = 1000

// Operation is one PATCH operation.
type Operation struct {
	Op    string // "add", "replace" or "remove"
	Path  string // As sent; "" for none.
	Value json.RawMessage

	path *filter.Path // Path parsed, nil for none.
}

// ParsePatch reads the body of a PATCH request: a PatchOp message whose
// Operations (in any case, as every attribute name) are applied in order.
func ParsePatch(body []byte) ([]Operation, error) {
	o, err := decodeObject(body, "The body")
	if err != nil {
		return nil, err
	}
	raw, ok := o.get("Operations")
	if !ok {
		return nil, errorf(InvalidSyntax, "Operations is required")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorf(InvalidSyntax, "Operations must be a list")
	}
	if len(items) > MaxOperations {
		return nil, errorf(InvalidSyntax, "A request holds at most %d operations", MaxOperations)
	}
	ops := make([]Operation, 0, len(items))
	for i, item := range items {
		what := fmt.Sprintf("Operations[%d]", i)
		io, err := decodeObject(item, what)
		if err != nil {
			return nil, err
		}
		op, err := io.str("op")
		if err != nil || op == nil {
			return nil, errorf(InvalidSyntax, "%s.op must be add, replace or remove", what)
		}
		o := Operation{Op: strings.ToLower(strings.TrimSpace(*op))}
		if o.Op != "add" && o.Op != "replace" && o.Op != "remove" {
			return nil, errorf(InvalidSyntax, "%s.op must be add, replace or remove, not %q", what, *op)
		}
		path, err := io.str("path")
		if err != nil {
			return nil, errorf(InvalidPath, "%s.path must be a string", what)
		}
		if path != nil && strings.TrimSpace(*path) != "" {
			o.Path = strings.TrimSpace(*path)
			if o.path, err = parsePath(o.Path); err != nil {
				return nil, err
			}
		}
		o.Value, _ = io.get("value")
		switch {
		case o.Op != "remove" && o.Value == nil:
			return nil, errorf(InvalidValue, "%s has no value", what)
		case o.Op == "remove" && o.path == nil:
			return nil, errorf(NoTarget, "%s: remove needs a path", what)
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// parsePath parses a PATCH path; a bare schema URI (the enterprise
// extension's) is a path of its own.
func parsePath(s string) (p *filter.Path, err error) {
	if len(s) > MaxFilterBytes {
		return nil, errorf(InvalidPath, "The path is longer than %d bytes", MaxFilterBytes)
	}
	if strings.EqualFold(s, EnterpriseUserSchema) {
		return &filter.Path{AttributePath: filter.AttributePath{AttributeName: EnterpriseUserSchema}}, nil
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, errorf(InvalidPath, "The path %q is not valid", clip(s))
		}
	}()
	parsed, perr := filter.ParsePath([]byte(s))
	if perr != nil {
		return nil, errorf(InvalidPath, "The path %q is not valid", clip(s))
	}
	return &parsed, nil
}

// pathName returns the attribute a path names, in lower case, with its
// sub-attribute ("name.givenname"), without the core schema's URI; the
// enterprise extension's attributes are the lower-case URI, ":" and the
// attribute ("urn:…:user:department"). ok is false for a URI Quarry does
// not know.
func pathName(p *filter.Path, core string) (name string, ok bool) {
	a := p.AttributePath
	name = strings.ToLower(a.AttributeName)
	if sub := a.SubAttributeName(); sub != "" {
		name += "." + strings.ToLower(sub)
	}
	switch uri := a.URI(); {
	case uri == "":
	case strings.EqualFold(uri, core):
	case strings.EqualFold(uri, EnterpriseUserSchema):
		name = strings.ToLower(EnterpriseUserSchema) + ":" + name
	default:
		return "", false
	}
	return name, true
}

// ApplyUser applies ops to u, a copy of a directory person: what the store then
// writes, if anything changed. Read-only attributes (id, schemas, meta)
// are ignored; so are the attributes Quarry does not keep
// (ignoredUserAttributes) and, in an operation without a path, unknown
// ones. groups is read-only (mutability).
func ApplyUser(u *quarry.DirectoryUser, ops []Operation) error {
	return applyAll(u, ops, applyUser)
}

// applyAll applies ops to t, one after another, with apply (the steps of
// ApplyUser and ApplyGroup).
func applyAll[T any](t T, ops []Operation, apply func(T, Operation) error) error {
	for _, op := range ops {
		if err := apply(t, op); err != nil {
			return err
		}
	}
	return nil
}

// eachPathless calls set with each attribute of the value of op, an
// operation without a path, whose value must be an object: its name in
// lower case, without the prefix of schema, and its value.
func eachPathless(op Operation, schema string, set func(name string, raw json.RawMessage) error) error {
	o, err := decodeObject(op.Value, "The value of an operation without a path")
	if err != nil {
		return errorf(InvalidValue, "An operation without a path needs an object as its value")
	}
	for key, raw := range o {
		lower := strings.ToLower(key)
		if strings.HasPrefix(lower, strings.ToLower(schema)+":") {
			lower = lower[len(schema)+1:]
		}
		if err := set(lower, raw); err != nil {
			return err
		}
	}
	return nil
}

func applyUser(u *quarry.DirectoryUser, op Operation) error {
	if op.path == nil {
		return eachPathless(op, UserSchema, func(name string, raw json.RawMessage) error {
			if name == strings.ToLower(EnterpriseUserSchema) {
				return setEnterprise(u, raw, true)
			}
			return setUserAttribute(u, op.Op, name, nil, raw, false)
		})
	}
	name, ok := pathName(op.path, UserSchema)
	if !ok {
		return errorf(InvalidPath, "Unsupported path %q for a User", op.Path)
	}
	if op.Op == "remove" {
		return removeUserAttribute(u, name, op)
	}
	return setUserAttribute(u, op.Op, name, op.path, op.Value, true)
}

// setUserAttribute applies an add or a replace of attribute name (lower
// case) to value raw; p is the operation's path, with its filter, if any.
// strict says whether an unknown attribute is an error (a path) or ignored
// (a key of an object without a path).
func setUserAttribute(u *quarry.DirectoryUser, op, name string, p *filter.Path, raw json.RawMessage, strict bool) error {
	enterprise := strings.ToLower(EnterpriseUserSchema)
	if p != nil && p.ValueExpression != nil {
		switch {
		case name == "emails":
			return setFilteredEmails(u, p, raw)
		case ignoredUserAttribute(name): // phoneNumbers[type eq "work"].value...
			return nil
		}
		return errorf(InvalidPath, "Unsupported path %q for a User", pathString(p))
	}
	var err error
	switch name {
	case "id", "schemas", "meta":
		return nil
	case "groups":
		if !strict {
			return nil
		}
		return errorf(Mutability, "groups is read-only: change a group's members instead")
	case "active":
		u.Active, err = asBool(raw, "active")
	case "username":
		var s *string
		if s, err = asString(raw, "userName"); err == nil {
			if s == nil {
				return errorf(Mutability, "userName cannot be removed")
			}
			u.UserName = *s
		}
	case "externalid":
		u.ExternalID, err = asString(raw, "externalId")
	case "displayname":
		u.DisplayName, err = asString(raw, "displayName")
	case "name":
		if string(raw) == "null" {
			u.GivenName, u.FamilyName, u.Formatted = nil, nil, nil
			return nil
		}
		err = mergeNameObject(u, raw)
	case "name.givenname":
		u.GivenName, err = asString(raw, "name.givenName")
	case "name.familyname":
		u.FamilyName, err = asString(raw, "name.familyName")
	case "name.formatted":
		u.Formatted, err = asString(raw, "name.formatted")
	case "emails":
		var emails []quarry.DirectoryEmail
		if emails, err = decodeEmailValue(raw); err == nil {
			if op == "add" {
				u.Emails = mergeEmails(u.Emails, emails)
			} else {
				u.Emails = emails
			}
		}
	case enterprise:
		err = setEnterprise(u, raw, true)
	case enterprise + ":department":
		u.Department, err = asString(raw, "department")
	case enterprise + ":manager", enterprise + ":manager.value":
		u.Manager, err = managerValue(raw)
	default:
		switch {
		case strings.HasPrefix(name, enterprise+":"):
			// Another attribute of the extension (employeeNumber...), not kept.
		case ignoredUserAttribute(strings.SplitN(name, ".", 2)[0]), ignoredUserAttribute(name):
		case strict:
			return errorf(InvalidPath, "Unsupported path %q for a User", name)
		}
	}
	return err
}

// removeUserAttribute applies a remove of attribute name.
func removeUserAttribute(u *quarry.DirectoryUser, name string, op Operation) error {
	enterprise := strings.ToLower(EnterpriseUserSchema)
	if op.path.ValueExpression != nil {
		if ignoredUserAttribute(name) {
			return nil
		}
		if name != "emails" {
			return errorf(InvalidPath, "Unsupported path %q for a User", op.Path)
		}
		var keep []quarry.DirectoryEmail
		for _, e := range u.Emails {
			ok, err := matchEmail(op.path.ValueExpression, e)
			if err != nil {
				return err
			}
			if !ok {
				keep = append(keep, e)
			}
		}
		u.Emails = keep
		return nil
	}
	switch name {
	case "id", "schemas", "meta":
	case "active", "username", "groups":
		return errorf(Mutability, "%s cannot be removed", op.Path)
	case "externalid":
		u.ExternalID = nil
	case "displayname":
		u.DisplayName = nil
	case "name":
		u.GivenName, u.FamilyName, u.Formatted = nil, nil, nil
	case "name.givenname":
		u.GivenName = nil
	case "name.familyname":
		u.FamilyName = nil
	case "name.formatted":
		u.Formatted = nil
	case "emails":
		u.Emails = nil
	case enterprise:
		u.Department, u.Manager = nil, nil
	case enterprise + ":department":
		u.Department = nil
	case enterprise + ":manager", enterprise + ":manager.value":
		u.Manager = nil
	default:
		if !strings.HasPrefix(name, enterprise+":") && !ignoredUserAttribute(strings.SplitN(name, ".", 2)[0]) {
			return errorf(InvalidPath, "Unsupported path %q for a User", op.Path)
		}
	}
	return nil
}

// decodeEmailValue reads the value of an add or replace of emails: a list,
// or a single email object.
func decodeEmailValue(raw json.RawMessage) ([]quarry.DirectoryEmail, error) {
	if len(raw) > 0 && raw[0] == '{' {
		e, err := decodeEmail(raw, "emails")
		return []quarry.DirectoryEmail{e}, err
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return decodeEmails(raw)
}

// mergeEmails adds emails to list: one with the value of an email there
// (in any case) replaces it; a new primary one makes the others not
// primary.
func mergeEmails(list, emails []quarry.DirectoryEmail) []quarry.DirectoryEmail {
	for _, e := range emails {
		if e.Primary {
			for i := range list {
				list[i].Primary = false
			}
		}
		i := slices.IndexFunc(list, func(x quarry.DirectoryEmail) bool { return strings.EqualFold(x.Value, e.Value) })
		if i >= 0 {
			list[i] = e
		} else {
			list = append(list, e)
		}
	}
	return list
}

// setFilteredEmails applies an add or replace of emails[filter] or
// emails[filter].sub (Okta's emails[primary eq true].value, Entra ID's
// emails[type eq "work"].value): the emails the filter selects get the
// value; when none does, an email is added, with the type the filter
// names, primary if no other is.
func setFilteredEmails(u *quarry.DirectoryUser, p *filter.Path, raw json.RawMessage) error {
	sub := strings.ToLower(p.SubAttributeName())
	matched := false
	for i := range u.Emails {
		ok, err := matchEmail(p.ValueExpression, u.Emails[i])
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		matched = true
		if err := setEmailPart(&u.Emails[i], sub, raw); err != nil {
			return err
		}
	}
	if matched {
		return nil
	}
	e := quarry.DirectoryEmail{Primary: !slices.ContainsFunc(u.Emails, func(e quarry.DirectoryEmail) bool { return e.Primary })}
	if t := filterType(p.ValueExpression); t != nil {
		e.Type = t
	}
	if err := setEmailPart(&e, sub, raw); err != nil {
		return err
	}
	if e.Value == "" {
		return errorf(NoTarget, "No email matches %s", pathString(p))
	}
	u.Emails = append(u.Emails, e)
	return nil
}

// setEmailPart sets sub-attribute sub of e ("" for the whole email).
func setEmailPart(e *quarry.DirectoryEmail, sub string, raw json.RawMessage) error {
	var err error
	switch sub {
	case "":
		var n quarry.DirectoryEmail
		if n, err = decodeEmail(raw, "emails"); err == nil {
			*e = n
		}
	case "value":
		var s *string
		if s, err = asString(raw, "emails.value"); err == nil {
			if s == nil {
				return errorf(InvalidValue, "emails.value cannot be null")
			}
			e.Value = *s
		}
	case "type":
		e.Type, err = asString(raw, "emails.type")
	case "display":
		e.Display, err = asString(raw, "emails.display")
	case "primary":
		e.Primary, err = asBool(raw, "emails.primary")
	default:
		return errorf(InvalidPath, "Unsupported path emails[...].%s", sub)
	}
	return err
}

// filterType returns the type an email filter asks for (type eq "work"),
// if it does so plainly.
func filterType(e filter.Expression) *string {
	a, ok := e.(*filter.AttributeExpression)
	if !ok || !strings.EqualFold(a.AttributePath.AttributeName, "type") || !strings.EqualFold(string(a.Operator), "eq") {
		return nil
	}
	s, ok := a.CompareValue.(string)
	if !ok {
		return nil
	}
	var v string
	if json.Unmarshal([]byte(`"`+s+`"`), &v) != nil {
		return nil
	}
	return &v
}

func pathString(p *filter.Path) string { return p.String() }

// matchEmail reports whether email e matches a filter on its
// sub-attributes (value, type, display, primary).
func matchEmail(expr filter.Expression, e quarry.DirectoryEmail) (bool, error) {
	val := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return match(expr, map[string]any{"value": e.Value, "type": val(e.Type), "display": val(e.Display), "primary": e.Primary})
}

// match evaluates a filter on the sub-attributes of one value of a
// multi-valued attribute (an email, a member): strings are compared
// without regard to case, none of them being case-exact.
func match(expr filter.Expression, attrs map[string]any) (bool, error) {
	switch e := expr.(type) {
	case *filter.LogicalExpression:
		l, err := match(e.Left, attrs)
		if err != nil {
			return false, err
		}
		r, err := match(e.Right, attrs)
		if err != nil {
			return false, err
		}
		if strings.EqualFold(string(e.Operator), "or") {
			return l || r, nil
		}
		return l && r, nil
	case *filter.NotExpression:
		m, err := match(e.Expression, attrs)
		return !m, err
	case *filter.AttributeExpression:
		name := strings.ToLower(e.AttributePath.AttributeName)
		if e.AttributePath.SubAttribute != nil || e.AttributePath.URIPrefix != nil {
			return false, errorf(InvalidFilter, "Unsupported filter %s in a path", e)
		}
		have, known := attrs[name]
		if !known {
			return false, errorf(InvalidFilter, "Unsupported attribute %s in a path's filter", e.AttributePath.AttributeName)
		}
		op := strings.ToLower(string(e.Operator))
		if op == "pr" {
			return have != nil && have != "", nil
		}
		switch want := e.CompareValue.(type) {
		case bool:
			b, ok := have.(bool)
			switch op {
			case "eq":
				return ok && b == want, nil
			case "ne":
				return !ok || b != want, nil
			}
		case string:
			var w string
			if json.Unmarshal([]byte(`"`+want+`"`), &w) != nil {
				return false, errorf(InvalidFilter, "The value %q is not a valid string", want)
			}
			h, _ := have.(string)
			h, w = quarry.FoldCase(h), quarry.FoldCase(w)
			switch op {
			case "eq":
				return have != nil && h == w, nil
			case "ne":
				return have == nil || h != w, nil
			case "co":
				return have != nil && strings.Contains(h, w), nil
			case "sw":
				return have != nil && strings.HasPrefix(h, w), nil
			case "ew":
				return have != nil && strings.HasSuffix(h, w), nil
			}
		}
		return false, errorf(InvalidFilter, "Unsupported comparison %s in a path's filter", e)
	}
	return false, errorf(InvalidFilter, "Unsupported filter in a path")
}

// ApplyGroup applies ops to g, a copy of a group: displayName, externalId
// and members (add, replace, and remove by members[value eq "…"], by a
// list of members, or all of them). Members are the directory's people;
// the store checks that those added are. Read-only attributes (id,
// schemas, meta) are ignored.
func ApplyGroup(g *quarry.DirectoryGroup, ops []Operation) error {
	return applyAll(g, ops, applyGroup)
}

func applyGroup(g *quarry.DirectoryGroup, op Operation) error {
	if op.path == nil {
		return eachPathless(op, GroupSchema, func(name string, raw json.RawMessage) error {
			return setGroupAttribute(g, op.Op, name, raw)
		})
	}
	name, ok := pathName(op.path, GroupSchema)
	if !ok {
		return errorf(InvalidPath, "Unsupported path %q for a Group", op.Path)
	}
	if op.path.ValueExpression != nil {
		if name != "members" || op.Op != "remove" || op.path.SubAttribute != nil {
			return errorf(InvalidPath, "Unsupported path %q for a Group", op.Path)
		}
		var keep []quarry.DirectoryMember
		for _, m := range g.Members {
			ok, err := match(op.path.ValueExpression, map[string]any{"value": m.ID, "display": m.Email})
			if err != nil {
				return err
			}
			if !ok {
				keep = append(keep, m)
			}
		}
		g.Members = keep
		return nil
	}
	if op.Op == "remove" {
		switch name {
		case "id", "schemas", "meta":
		case "externalid":
			g.ExternalID = nil
		case "members":
			if op.Value == nil {
				g.Members = nil // all of them
				return nil
			}
			gone, err := decodeMembers(op.Value)
			if err != nil {
				return err
			}
			g.Members = slices.DeleteFunc(g.Members, func(m quarry.DirectoryMember) bool {
				return slices.ContainsFunc(gone, func(x quarry.DirectoryMember) bool { return x.ID == m.ID })
			})
		case "displayname":
			return errorf(Mutability, "displayName cannot be removed")
		default:
			return errorf(InvalidPath, "Unsupported path %q for a Group", op.Path)
		}
		return nil
	}
	return setGroupAttribute(g, op.Op, name, op.Value)
}

// setGroupAttribute applies an add or a replace of attribute name (lower
// case) of a group.
func setGroupAttribute(g *quarry.DirectoryGroup, op, name string, raw json.RawMessage) error {
	switch name {
	case "id", "schemas", "meta":
	case "displayname":
		s, err := asString(raw, "displayName")
		if err != nil {
			return err
		}
		if s == nil {
			return errorf(Mutability, "displayName cannot be removed")
		}
		g.DisplayName = *s
	case "externalid":
		s, err := asString(raw, "externalId")
		if err != nil {
			return err
		}
		g.ExternalID = s
	case "members":
		members, err := decodeMembers(raw)
		if err != nil {
			return err
		}
		if op == "replace" {
			g.Members = members
			return nil
		}
		for _, m := range members {
			if !slices.ContainsFunc(g.Members, func(x quarry.DirectoryMember) bool { return x.ID == m.ID }) {
				g.Members = append(g.Members, m)
			}
		}
	default:
		return errorf(InvalidPath, "Unsupported path %q for a Group", name)
	}
	return nil
}
