package quarry

// User is an account: a person or, for each API key, a service account.
type User struct {
	ID             string `json:"id"` // UUID
	Email          string `json:"email"`
	Role           Role   `json:"role"`
	ServiceAccount bool   `json:"service_account"`
	CreatedAt      Time   `json:"created_at"`
}

// Caller is the authenticated user of a request, with the group memberships
// that decide what it may see and change.
type Caller struct {
	User
	APIKeyID    int64        // The key the request was authenticated with.
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
