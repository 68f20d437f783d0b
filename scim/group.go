package scim

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

// Group is a Group resource as Quarry answers it (RFC 7643 section 4.2), in
// the order of Onyx's ScimGroupResource. A nil field is left out.
type Group struct {
	Schemas     []string `json:"schemas"`
	ID          string   `json:"id"`
	ExternalID  *string  `json:"externalId,omitempty"`
	DisplayName string   `json:"displayName,omitempty"`
	Members     *[]Ref   `json:"members,omitempty"`
	Meta        *Meta    `json:"meta,omitempty"`
}

// GroupResource returns g as the SCIM Group resource at location. Its
// members are the people of the directory in the group.
func GroupResource(g *quarry.DirectoryGroup, location string) *Group {
	members := make([]Ref, len(g.Members))
	for i, m := range g.Members {
		members[i] = Ref{Value: m.ID, Display: m.Email}
	}
	return &Group{
		Schemas:     []string{GroupSchema},
		ID:          strconv.FormatInt(g.ID, 10),
		ExternalID:  g.ExternalID,
		DisplayName: g.DisplayName,
		Members:     &members,
		Meta: &Meta{ResourceType: "Group", Created: g.CreatedAt, LastModified: g.UpdatedAt,
			Location: location, Version: ETag(g.Version())},
	}
}

// Location returns where r is: its meta.location.
func (r *Group) Location() string { return r.Meta.Location }

// Project leaves out of r the attributes that attributes and excluded
// leave out (see User.Project).
func (r *Group) Project(attributes, excluded []string) {
	keep := projection(attributes, excluded)
	if !keep("externalId") {
		r.ExternalID = nil
	}
	if !keep("displayName") {
		r.DisplayName = ""
	}
	if !keep("members") {
		r.Members = nil
	}
	if !keep("meta") {
		r.Meta = nil
	}
}

// WantsMembers reports whether a response with these attributes and
// excludedAttributes parameters shows members, so that they need not be
// read when it does not (Entra ID reads groups without them).
func WantsMembers(attributes, excluded []string) bool {
	return projection(attributes, excluded)("members")
}

// DecodeGroup reads the body of POST /Groups or PUT /Groups/{id}: a Group
// resource, of which Quarry keeps displayName (required), externalId and
// members (their value: the id of a person of the directory). Read-only
// attributes (id, meta) and unknown ones are ignored.
func DecodeGroup(body []byte) (*quarry.DirectoryGroup, error) {
	o, err := decodeObject(body, "The body")
	if err != nil {
		return nil, err
	}
	g := &quarry.DirectoryGroup{Members: []quarry.DirectoryMember{}}
	name, err := o.str("displayName")
	if err != nil {
		return nil, err
	}
	if name == nil {
		return nil, errorf(InvalidValue, "displayName is required")
	}
	g.DisplayName = *name
	if g.ExternalID, err = o.str("externalId"); err != nil {
		return nil, err
	}
	if raw, ok := o.get("members"); ok {
		if g.Members, err = decodeMembers(raw); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// decodeMembers reads a list of members, each {"value": id, ...}, without
// repeating one.
func decodeMembers(raw json.RawMessage) ([]quarry.DirectoryMember, error) {
	var items []json.RawMessage
	if string(raw) == "null" {
		return []quarry.DirectoryMember{}, nil
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorf(InvalidValue, "members must be a list")
	}
	out := make([]quarry.DirectoryMember, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		what := "members[" + strconv.Itoa(i) + "]"
		o, err := decodeObject(item, what)
		if err != nil {
			return nil, errorf(InvalidValue, "%s must be an object", what)
		}
		v, err := o.str("value")
		if err != nil {
			return nil, err
		}
		if v == nil || strings.TrimSpace(*v) == "" {
			return nil, errorf(InvalidValue, "%s.value is required", what)
		}
		// Ids are UUIDs, which Quarry writes in lower case; a member's
		// value is not case-exact (RFC 7643 section 8.7.1).
		id := strings.ToLower(strings.TrimSpace(*v))
		if !seen[id] {
			seen[id] = true
			out = append(out, quarry.DirectoryMember{ID: id})
		}
	}
	return out, nil
}
