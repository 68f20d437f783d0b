package quarry

import (
	"strings"
	"unicode"
)

// User is an account: a person, or, for each API key, a service account.
type User struct {
	ID             string  `json:"id"` // UUID
	Email          string  `json:"email"`
	Name           *string `json:"name"`
	Role           Role    `json:"role"`
	IsActive       bool    `json:"is_active"`
	ServiceAccount bool    `json:"service_account"`
	CreatedAt      Time    `json:"created_at"`
}

// Caller is the authenticated user of a request, with the group memberships
// that decide what it may see and change, and how it signed in.
type Caller struct {
	User
	APIKeyID    int64        // The key the request was authenticated with, if any.
	SessionID   int64        // The session the request was authenticated with, if any.
	Memberships []Membership // The user's groups, ascending by group id.
}

// IsAdmin reports whether c has the admin role.
func (c *Caller) IsAdmin() bool { return c.Role == RoleAdmin }

// IsCurator reports whether c has the curator or the global_curator role.
func (c *Caller) IsCurator() bool { return c.Role == RoleCurator || c.Role == RoleGlobalCurator }

// CanManage reports whether c may use the admin endpoints that curators
// share with admins (the "curator or admin" gate of contract section 3.1).
func (c *Caller) CanManage() bool { return c.IsAdmin() || c.IsCurator() }

// MemberOf reports whether c is a member of group id.
func (c *Caller) MemberOf(id int64) bool {
	for _, m := range c.Memberships {
		if m.GroupID == id {
			return true
		}
	}
	return false
}

// Curates reports whether c curates group id: a global_curator curates every
// group it is a member of, a curator those where its membership says so, and
// an admin every group.
func (c *Caller) Curates(id int64) bool {
	if c.IsAdmin() {
		return true
	}
	for _, m := range c.Memberships {
		if m.GroupID == id {
			return c.Role == RoleGlobalCurator || (c.Role == RoleCurator && m.IsCurator)
		}
	}
	return false
}

// CuratesAll reports whether c curates every group in ids.
func (c *Caller) CuratesAll(ids []int64) bool {
	for _, id := range ids {
		if !c.Curates(id) {
			return false
		}
	}
	return true
}

// CuratedGroupIDs returns the ids of the groups c is a member of and
// curates (see Curates), ascending.
func (c *Caller) CuratedGroupIDs() []int64 {
	var ids []int64
	for _, m := range c.Memberships {
		if c.Curates(m.GroupID) {
			ids = append(ids, m.GroupID)
		}
	}
	return ids
}

// GroupIDs returns the ids of the groups c is a member of, ascending.
func (c *Caller) GroupIDs() []int64 {
	ids := make([]int64, len(c.Memberships))
	for i, m := range c.Memberships {
		ids[i] = m.GroupID
	}
	return ids
}

// CheckSharing applies the sharing rules of contract section 6 to an object
// that c creates or re-shares with groups: admins may do anything; curators
// must name at least one group unless the object is public, and only groups
// they curate; basic users may only create private, group-less objects.
func (c *Caller) CheckSharing(groups []int64, public bool) error {
	switch {
	case c.IsAdmin():
		return nil
	case c.IsCurator():
		if len(groups) == 0 && !public {
			return Errorf(EINVALID, "Curators must specify 1+ groups")
		}
		if !c.CuratesAll(groups) {
			return Errorf(EINVALID, "Curators cannot control groups they don't curate")
		}
		return nil
	default:
		if len(groups) > 0 || public {
			return Errorf(EINVALID, "Basic users can only create private credentials")
		}
		return nil
	}
}

// maxEmailLength is the longest email address accepted (RFC 5321's limit
// on a path, less its angle brackets).
const maxEmailLength = 254

// ParseEmail checks that s is an email address a person can have and
// returns it without surrounding space, with the key it is compared by:
// emails are unique whatever their case. It checks the shape only (one @, a
// local part and a domain with a dot, no spaces or control characters); only
// mail sent to it could prove more.
func ParseEmail(s string) (email, key string, err error) {
	email = strings.TrimSpace(s)
	local, domain, ok := strings.Cut(email, "@")
	bad := !ok || local == "" || domain == "" || strings.Contains(domain, "@") ||
		!strings.Contains(strings.Trim(domain, "."), ".") || len(email) > maxEmailLength ||
		strings.IndexFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
	if bad {
		return "", "", Errorf(EINVALID, "%q is not a valid email address", s)
	}
	return email, EmailKey(email), nil
}

// EmailKey returns the form in which an email is compared and stored for
// lookups: lower-cased.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// UserFilter narrows a listing of people.
type UserFilter struct {
	Query  string // A part of the email or name, in any case.
	Roles  []Role // Any of these roles; all when empty.
	Active *bool  // Active or deactivated people only; all when nil.
	Offset int
	Limit  int
}

// Person is a user as the people listing shows it: with how they sign in
// and the groups they are in.
type Person struct {
	User
	PasswordConfigured bool         // The person can sign in with a password.
	Identities         []string     // The issuers of the OpenID identities linked to the person.
	Groups             []GroupBrief // The groups the person is a member of, ascending by id.
	UpdatedAt          Time
}

// GroupBrief names a group.
type GroupBrief struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}
