package quarry

import "slices"

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
	APIKeyID  int64 // The key the request was authenticated with, if any.
	SessionID int64 // The session the request was authenticated with, if any.
	PATID     int64 // The personal access token the request was authenticated with, if any.
	// Scopes are the scopes of that token (see LimitTo); nil for a token
	// without scopes, and for every other credential.
	Scopes      []Permission
	Memberships []Membership // The user's groups, ascending by group id.
	// Grants are the permissions granted to the user's groups, read with
	// its Memberships (see SetGrants and Permissions).
	Grants []Permission

	permissions PermissionSet // Permissions, once SetGrants has worked them out.
	resolved    bool
	// Directory, when set, is the SCIM token of the company's directory
	// that made the request: the caller is then no user (see
	// DirectoryCaller).
	Directory *SCIMToken
}

// IsAdmin reports whether c holds the admin permission: whether it is an
// admin (the role, and the default group Admin that follows it).
func (c *Caller) IsAdmin() bool { return c.Has(PermAdmin) }

// IsCurator reports whether c has the curator or the global_curator role.
func (c *Caller) IsCurator() bool { return c.Role == RoleCurator || c.Role == RoleGlobalCurator }

// MemberOf reports whether c is a member of group id.
func (c *Caller) MemberOf(id int64) bool {
	for _, m := range c.Memberships {
		if m.GroupID == id {
			return true
		}
	}
	return false
}

// reachedThrough reports whether what is shared with group id reaches c:
// c is a member of it, and it is not a default group (which nothing is
// shared with). The visibility rules ask it, as their SQL twin
// (store/visibility.go) reads SharingGroupIDs.
func (c *Caller) reachedThrough(id int64) bool {
	for _, m := range c.Memberships {
		if m.GroupID == id {
			return !m.IsDefault
		}
	}
	return false
}

// curatesShared reports whether c curates group id and it is not a
// default group (see CuratedGroupIDs).
func (c *Caller) curatesShared(id int64) bool {
	return c.Curates(id) && slices.ContainsFunc(c.Memberships, func(m Membership) bool { return m.GroupID == id && !m.IsDefault })
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
// curates (see Curates), ascending, but the default groups, which nothing
// is shared with.
func (c *Caller) CuratedGroupIDs() []int64 {
	var ids []int64
	for _, m := range c.Memberships {
		if !m.IsDefault && c.Curates(m.GroupID) {
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

// SharingGroupIDs returns the ids of the groups c is a member of but the
// default ones, ascending: those that objects may be shared with c
// through (nothing is shared with a default group, see CheckNotDefault),
// and so all that decide what c sees.
func (c *Caller) SharingGroupIDs() []int64 {
	ids := []int64{}
	for _, m := range c.Memberships {
		if !m.IsDefault {
			ids = append(ids, m.GroupID)
		}
	}
	return ids
}

// The refusals of the sharing rules. Each has one status: sharing a new
// object (or sharing an object anew) against the rules of contract section
// 6 is a bad request (400); changing an object, or what an object is shared
// with, that is another's to change is forbidden (403).
var (
	// ErrCuratorNoGroup answers a curator who shares a private object with no group.
	ErrCuratorNoGroup = Errorf(EINVALID, "Curators must specify 1+ groups")
	// ErrCuratorGroups answers a curator who shares a new object with groups it does not curate.
	ErrCuratorGroups = Errorf(EINVALID, "Curators cannot control groups they don't curate")
	// ErrBasicSharing answers a basic user who shares an object.
	ErrBasicSharing = Errorf(EINVALID, "Basic users can only create private credentials")
	// ErrNotYourGroups answers a change, by a curator, of an object shared
	// with groups it does not all curate.
	ErrNotYourGroups = Errorf(EFORBIDDEN, "Curators can only change what is shared with groups they curate")
	// ErrShareNotCurated answers a change that would share an existing
	// object with groups the caller does not curate.
	ErrShareNotCurated = Errorf(EFORBIDDEN, "You can only share with groups you curate")
)

// CheckSharing applies the sharing rules of contract section 6 to an object
// that c creates or re-shares with groups: admins (and holders of
// manage:connectors) may do anything; curators
// must name at least one group unless the object is public, and only groups
// they curate; basic users may only create private, group-less objects.
func (c *Caller) CheckSharing(groups []int64, public bool) error {
	switch {
	case c.ManagesConnectors():
		return nil
	case c.IsCurator():
		return c.checkCuratorSharing(groups, public)
	default:
		if len(groups) > 0 || public {
			return ErrBasicSharing
		}
		return nil
	}
}

// checkCuratorSharing applies the curators' sharing rules to an object
// shared with groups: unless it is public, at least one group, and only
// groups c curates (contract section 6, Onyx's
// validate_object_creation_for_user).
func (c *Caller) checkCuratorSharing(groups []int64, public bool) error {
	if len(groups) == 0 && !public {
		return ErrCuratorNoGroup
	}
	if !c.CuratesAll(groups) {
		return ErrCuratorGroups
	}
	return nil
}

// UserFilter narrows a listing of people.
type UserFilter struct {
	Query     string // A part of the email or name, in any case.
	EmailOnly bool   // Query is a part of the email only.
	// ServiceAccounts adds the service accounts of the API keys that are
	// not revoked.
	ServiceAccounts bool
	Roles           []Role // Any of these roles; all when empty.
	Active          *bool  // Active or deactivated people only; all when nil.
	Offset          int
	Limit           int
}

// Person is a user as the people listing shows it: with how they sign in
// and the groups they are in.
type Person struct {
	User
	PasswordConfigured bool         // The person can sign in with a password.
	Identities         []string     // The issuers of the OpenID identities linked to the person.
	Groups             []GroupBrief // The groups the person is a member of, ascending by id.
	UpdatedAt          Time
	// SCIMSynced says whether the company's directory manages the person,
	// and SCIMActive, then, whether it says the person is active.
	SCIMSynced bool
	SCIMActive *bool
}

// GroupBrief names a group.
type GroupBrief struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// HandsOver reports whether u, an account whose email nobody has proven
// (see users.email_verified), changes hands when somebody proves it: an
// OpenID provider that says the email is verified, or the company's
// directory adopting the account. Then the password, other providers'
// identities, sessions, personal access tokens and tools' connections of
// whoever registered the email end: anybody could have registered a
// colleague's email before the colleague arrived. An admin's or curator's
// account (RunsQuarry) stays its holder's: an admin made it one, or it is
// the first admin's.
func (u *User) HandsOver(emailProven bool) bool { return !emailProven && !u.RunsQuarry() }

// IsActiveAdmin reports whether u is an active admin: taking that from u
// may leave nobody who can administer Quarry (see CheckLastAdmin).
func (u *User) IsActiveAdmin() bool { return u.Role == RoleAdmin && u.IsActive }

// OtherAdmins counts the active admins other than the one at stake who
// can sign in: people, and service accounts that still have an API key.
type OtherAdmins struct{ People, Keys int }

// Keep reports whether others are enough for u to stop being an active
// admin: for a person, only people count (an API key is no one who can
// sign in to the console and sort things out: before issue 31 a key
// counted, and the directory could lock every person admin out); for a
// service account, any other way in as an admin does, so that a
// deployment run with keys alone keeps one.
func (o OtherAdmins) Keep(u *User) bool {
	if u.ServiceAccount {
		return o.People+o.Keys > 0
	}
	return o.People > 0
}

// CheckLastAdmin reports why u may not stop being an active admin (what
// says how: "demoted", "deactivated", ...), given the other active admins
// (OtherAdmins.Keep): Quarry always keeps a person as admin once it has
// one.
func CheckLastAdmin(u *User, others OtherAdmins, what string) error {
	if !u.IsActiveAdmin() || others.Keep(u) {
		return nil
	}
	return Errorf(EINVALID, "%s is the last active admin and cannot be %s", u.Email, what)
}

// CheckRoleChange reports whether giving u the role r changes anything, and
// why it may not be done (PATCH /manage/set-user-role, an admin's act; the
// last admin rule comes on top, see CheckLastAdmin): curators are made
// through group curator flags unless the admin overrides that (Onyx's
// explicit_override: a curator of no group until given flags), and service
// accounts keep the role of their key.
func CheckRoleChange(u *User, r Role, override bool) (change bool, err error) {
	switch {
	case u.ServiceAccount:
		return false, Errorf(EINVALID, "Cannot change the role of a service account user: make a new API key instead")
	case r == u.Role:
		return false, nil
	case r == RoleCurator && !override:
		return false, Errorf(EINVALID, "Curator role must be set via the User Group Menu")
	}
	return true, nil
}

// CheckSetActive reports why c may not activate or deactivate u (an
// admin's act; the last admin rule comes on top): nobody deactivates
// themselves.
func (c *Caller) CheckSetActive(u *User, active bool) error {
	if !active && u.ID == c.ID {
		return Errorf(EINVALID, "You cannot deactivate yourself")
	}
	return nil
}

// RoleWithFlags returns the role of a user whose role is r once the number
// of its curator flags has changed to flags, as in Onyx: a basic user who
// gets a flag becomes a curator, and a curator who loses its last flag
// becomes basic again. A curator that never had a flag (its API key's
// role) is not passed here, and keeps its role.
func RoleWithFlags(r Role, flags int) Role {
	switch {
	case r == RoleBasic && flags > 0:
		return RoleCurator
	case r == RoleCurator && flags == 0:
		return RoleBasic
	}
	return r
}

// CheckActive reports ErrDeactivated for a deactivated u.
func (u *User) CheckActive() error {
	if !u.IsActive {
		return ErrDeactivated
	}
	return nil
}

// CheckPasswordReset reports why an admin may not give u a new password:
// a service account has none.
func CheckPasswordReset(u *User) error {
	if u.ServiceAccount {
		return Errorf(EINVALID, "A service account has no password: regenerate its API key instead")
	}
	return nil
}
