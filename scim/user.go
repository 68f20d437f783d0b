package scim

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

// User is a User resource as Quarry answers it (RFC 7643 section 4.1, with
// the enterprise extension of section 4.3), in the order of Onyx's
// ScimUserResource. A nil field is left out.
type User struct {
	Schemas     []string                 `json:"schemas"`
	ID          string                   `json:"id"`
	ExternalID  *string                  `json:"externalId,omitempty"`
	UserName    string                   `json:"userName,omitempty"`
	Name        *Name                    `json:"name,omitempty"`
	DisplayName *string                  `json:"displayName,omitempty"`
	Emails      *[]quarry.DirectoryEmail `json:"emails,omitempty"`
	Active      *bool                    `json:"active,omitempty"`
	Groups      *[]Ref                   `json:"groups,omitempty"`
	Meta        *Meta                    `json:"meta,omitempty"`
	Enterprise  *Enterprise              `json:"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User,omitempty"`
}

// Name is a user's name components: those the directory sent.
type Name struct {
	GivenName  string `json:"givenName,omitempty"`
	FamilyName string `json:"familyName,omitempty"`
	Formatted  string `json:"formatted,omitempty"`
}

// Ref names another resource: a group of a user, or a member of a group.
type Ref struct {
	Value   string `json:"value"`
	Display string `json:"display"`
}

// Enterprise is the part of the enterprise extension that Quarry keeps.
type Enterprise struct {
	Department *string  `json:"department,omitempty"`
	Manager    *Manager `json:"manager,omitempty"`
}

// Manager is a user's manager: their id at the directory.
type Manager struct {
	Value string `json:"value"`
}

// Meta is a resource's metadata (RFC 7643 section 3.1).
type Meta struct {
	ResourceType string      `json:"resourceType"`
	Created      quarry.Time `json:"created"`
	LastModified quarry.Time `json:"lastModified"`
	Location     string      `json:"location"`
	Version      string      `json:"version"`
}

// ETag returns the entity tag of a resource version: weak, as RFC 7644
// section 3.14 shows them.
func ETag(version string) string { return `W/"` + version + `"` }

// UserResource returns u as the SCIM User resource at location (its URL).
func UserResource(u *quarry.DirectoryUser, location string) *User {
	r := &User{
		Schemas:     []string{UserSchema},
		ID:          u.ID,
		ExternalID:  u.ExternalID,
		UserName:    u.UserName,
		Name:        userName(u),
		DisplayName: u.DisplayName,
		Active:      &u.Active,
		Meta: &Meta{ResourceType: "User", Created: u.CreatedAt, LastModified: u.UpdatedAt,
			Location: location, Version: ETag(u.Version())},
	}
	emails := u.Emails
	if len(emails) == 0 {
		work := "work"
		emails = []quarry.DirectoryEmail{{Value: u.Email, Type: &work, Primary: true}}
	}
	r.Emails = &emails
	groups := make([]Ref, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = Ref{Value: strconv.FormatInt(g.ID, 10), Display: g.Name}
	}
	r.Groups = &groups
	if u.Department != nil || u.Manager != nil {
		r.Schemas = append(r.Schemas, EnterpriseUserSchema)
		r.Enterprise = &Enterprise{Department: u.Department}
		if u.Manager != nil {
			r.Enterprise.Manager = &Manager{Value: *u.Manager}
		}
	}
	return r
}

// userName returns the name block of u: the components the directory
// sent, as it sent them (RFC 7643: kept and given back), or nil when it
// sent none or removed them (before issue 31, Onyx's rebuilding from the
// account's name, which a remove could not clear).
func userName(u *quarry.DirectoryUser) *Name {
	if u.GivenName == nil && u.FamilyName == nil && u.Formatted == nil {
		return nil
	}
	val := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return &Name{GivenName: val(u.GivenName), FamilyName: val(u.FamilyName), Formatted: val(u.Formatted)}
}

// Location returns where r is: its meta.location.
func (r *User) Location() string { return r.Meta.Location }

// Project leaves out of r the attributes that a request's attributes and
// excludedAttributes parameters leave out (RFC 7644 section 3.4.2.5). Names
// are compared without regard to case; a sub-attribute ("name.givenName")
// in attributes keeps its attribute whole. id and schemas are always
// returned.
func (r *User) Project(attributes, excluded []string) {
	keep := projection(attributes, excluded)
	if !keep("externalId") {
		r.ExternalID = nil
	}
	if !keep("userName") {
		r.UserName = ""
	}
	if !keep("name") {
		r.Name = nil
	}
	if !keep("displayName") {
		r.DisplayName = nil
	}
	if !keep("emails") {
		r.Emails = nil
	}
	if !keep("active") {
		r.Active = nil
	}
	if !keep("groups") {
		r.Groups = nil
	}
	if !keep("meta") {
		r.Meta = nil
	}
	if !keep(EnterpriseUserSchema) && r.Enterprise != nil {
		r.Enterprise = nil
		r.Schemas = slices.DeleteFunc(r.Schemas, func(s string) bool { return s == EnterpriseUserSchema })
	}
}

// projection returns whether an attribute is returned, given the
// attributes and excludedAttributes parameters.
func projection(attributes, excluded []string) func(string) bool {
	top := func(a string) string {
		a = strings.TrimSpace(a)
		for _, prefix := range []string{UserSchema + ":", GroupSchema + ":"} {
			if len(a) > len(prefix) && strings.EqualFold(a[:len(prefix)], prefix) {
				a = a[len(prefix):]
			}
		}
		if len(a) > len(EnterpriseUserSchema) && strings.EqualFold(a[:len(EnterpriseUserSchema)], EnterpriseUserSchema) {
			return EnterpriseUserSchema
		}
		a, _, _ = strings.Cut(a, ".")
		return a
	}
	return func(name string) bool {
		if len(attributes) > 0 {
			found := false
			for _, a := range attributes {
				found = found || strings.EqualFold(top(a), name)
			}
			if !found {
				return false
			}
		}
		for _, a := range excluded {
			if strings.EqualFold(strings.TrimSpace(a), name) {
				return false
			}
		}
		return true
	}
}

// ParseAttributeList splits the value of an attributes or
// excludedAttributes parameter at its commas.
func ParseAttributeList(v string) []string {
	var out []string
	for a := range strings.SplitSeq(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// ignoredUserAttributes are attributes of the core User schema and of the
// enterprise extension that Quarry accepts and does not keep: providers
// send them by default (Entra ID's default mappings hold title, addresses,
// phone numbers...), and refusing them would fail every provisioning.
// password is among them: people provisioned by the directory sign in with
// single sign-on, and a password sent is never kept, logged or shown.
var ignoredUserAttributes = []string{
	"nickName", "profileUrl", "title", "userType", "preferredLanguage", "locale", "timezone", "password",
	"phoneNumbers", "ims", "photos", "addresses", "entitlements", "roles", "x509Certificates",
	"employeeNumber", "costCenter", "organization", "division",
	"name.middleName", "name.honorificPrefix", "name.honorificSuffix",
}

func ignoredUserAttribute(name string) bool {
	return slices.ContainsFunc(ignoredUserAttributes, func(a string) bool { return strings.EqualFold(a, name) })
}

// DecodeUser reads the body of POST /Users or PUT /Users/{id}: a User
// resource, of which Quarry keeps userName, externalId, displayName, name,
// emails, active (true when absent, as Onyx reads it) and the enterprise
// extension's department and manager. Read-only attributes (id, meta,
// groups) and the attributes of ignoredUserAttributes are ignored, as are
// unknown ones. The result is not checked yet: see
// quarry.DirectoryUser.Prepare.
func DecodeUser(body []byte) (*quarry.DirectoryUser, error) {
	o, err := decodeObject(body, "The body")
	if err != nil {
		return nil, err
	}
	u := &quarry.DirectoryUser{Active: true}
	name, err := o.str("userName")
	if err != nil {
		return nil, err
	}
	if name == nil {
		return nil, errorf(InvalidValue, "userName is required")
	}
	u.UserName = *name
	if u.ExternalID, err = o.str("externalId"); err != nil {
		return nil, err
	}
	if u.DisplayName, err = o.str("displayName"); err != nil {
		return nil, err
	}
	if raw, ok := o.get("name"); ok {
		if err := setNameObject(u, raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := o.get("emails"); ok {
		if u.Emails, err = decodeEmails(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := o.get("active"); ok {
		if u.Active, err = asBool(raw, "active"); err != nil {
			return nil, err
		}
	}
	if raw, ok := o.get(EnterpriseUserSchema); ok {
		if err := setEnterprise(u, raw, false); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// setNameObject sets the name components of u that a name object holds
// (replacing them: a component it does not hold is cleared).
func setNameObject(u *quarry.DirectoryUser, raw json.RawMessage) error {
	n, err := decodeObject(raw, "name")
	if err != nil {
		return errorf(InvalidValue, "name must be an object")
	}
	if u.GivenName, err = n.str("givenName"); err != nil {
		return err
	}
	if u.FamilyName, err = n.str("familyName"); err != nil {
		return err
	}
	u.Formatted, err = n.str("formatted")
	return err
}

// mergeNameObject sets the name components a name object holds, and keeps
// the others (a PATCH's add or replace of name).
func mergeNameObject(u *quarry.DirectoryUser, raw json.RawMessage) error {
	n, err := decodeObject(raw, "name")
	if err != nil {
		return errorf(InvalidValue, "name must be an object")
	}
	for key, dst := range map[string]**string{"givenName": &u.GivenName, "familyName": &u.FamilyName, "formatted": &u.Formatted} {
		if n.has(key) {
			v, err := n.str(key)
			if err != nil {
				return err
			}
			*dst = v
		}
	}
	return nil
}

// decodeEmails reads a list of emails.
func decodeEmails(raw json.RawMessage) ([]quarry.DirectoryEmail, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorf(InvalidValue, "emails must be a list")
	}
	out := make([]quarry.DirectoryEmail, 0, len(items))
	for i, item := range items {
		e, err := decodeEmail(item, "emails["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func decodeEmail(raw json.RawMessage, what string) (quarry.DirectoryEmail, error) {
	var e quarry.DirectoryEmail
	o, err := decodeObject(raw, what)
	if err != nil {
		return e, errorf(InvalidValue, "%s must be an object", what)
	}
	v, err := o.str("value")
	if err != nil {
		return e, err
	}
	if v == nil {
		return e, errorf(InvalidValue, "%s.value is required", what)
	}
	e.Value = *v
	if e.Type, err = o.str("type"); err != nil {
		return e, err
	}
	if e.Display, err = o.str("display"); err != nil {
		return e, err
	}
	if raw, ok := o.get("primary"); ok {
		if e.Primary, err = asBool(raw, what+".primary"); err != nil {
			return e, err
		}
	}
	return e, nil
}

// setEnterprise sets department and manager from the enterprise extension
// object; merge keeps what the object does not hold (a PATCH), otherwise it
// is cleared (a creation or a replacement).
func setEnterprise(u *quarry.DirectoryUser, raw json.RawMessage, merge bool) error {
	o, err := decodeObject(raw, EnterpriseUserSchema)
	if err != nil {
		return errorf(InvalidValue, "%s must be an object", EnterpriseUserSchema)
	}
	if !merge || o.has("department") {
		if u.Department, err = o.str("department"); err != nil {
			return err
		}
	}
	if !merge || o.has("manager") {
		raw, _ := o.get("manager")
		if u.Manager, err = managerValue(raw); err != nil {
			return err
		}
	}
	return nil
}

// managerValue reads a manager: {"value": id} (null or without a value
// clears it), or the id alone, as Entra ID sends it in PATCH operations.
func managerValue(raw json.RawMessage) (*string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &s, nil
	}
	o, err := decodeObject(raw, "manager")
	if err != nil {
		return nil, errorf(InvalidValue, "manager must be an object with a value, or a string")
	}
	return o.str("value")
}
