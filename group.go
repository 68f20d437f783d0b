package quarry

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
)

// UserGroup is a named set of users that cc-pairs and credentials are shared
// with, and that is granted permissions (see Permission). A member may
// curate the group (see Caller.Curates).
type UserGroup struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Users      []User   `json:"users"`       // Members, ascending by email.
	CuratorIDs []string `json:"curator_ids"` // Members whose membership has is_curator.
	CCPairIDs  []int64  `json:"cc_pair_ids"` // Attached cc-pairs, ascending.
	// CCPairs are the attached cc-pairs, ascending by id, with their
	// credentials in clear: responses show them masked.
	CCPairs   []*CCPairInfo `json:"-"`
	IsDefault bool          `json:"is_default"` // One of the default groups, Admin and Basic.
	// SCIMSynced says whether the company's directory manages the group,
	// and SCIMMemberIDs are its members whom the directory manages (see
	// DirectoryGroup), ascending.
	SCIMSynced    bool     `json:"-"`
	SCIMMemberIDs []string `json:"-"`
	CreatedAt     Time     `json:"time_created"`
	UpdatedAt     Time     `json:"time_updated"`
}

// Membership is a user's membership of a group.
type Membership struct {
	GroupID   int64
	IsCurator bool
	IsDefault bool // The group is a default one (Admin, Basic): nothing is shared through it.
}

// UserGroupInput holds the fields of a group to create or change. A nil
// field is left unchanged on update.
type UserGroupInput struct {
	Name      *string
	UserIDs   []string // nil: unchanged
	CCPairIDs []int64  // nil: unchanged
}

// CheckNew reports why in cannot make a new group: it needs a name, which
// may not be a default group's (see CheckGroupName).
func (in *UserGroupInput) CheckNew() error {
	if in.Name == nil {
		return Errorf(EINVALID, "A user group needs a name")
	}
	return CheckGroupName(*in.Name)
}

// The default groups, as in Onyx v4.6.1: every admin is a member of Admin,
// which is granted admin, and every global curator, curator and basic user
// (people and API keys' service accounts alike) of Basic, which is granted
// basic. Their members follow their roles (DefaultGroupFor): nobody adds
// or removes them by hand, and nothing is shared with them.
const (
	DefaultGroupAdmin = "Admin"
	DefaultGroupBasic = "Basic"
)

// DefaultGroupFor returns the name of the default group a user whose role
// is r belongs to, or "" for a limited user, who belongs to none.
func DefaultGroupFor(r Role) string {
	switch r {
	case RoleAdmin:
		return DefaultGroupAdmin
	case RoleGlobalCurator, RoleCurator, RoleBasic:
		return DefaultGroupBasic
	}
	return ""
}

// ReservedGroupName reports whether name is the name of one of the default
// groups, or looks like it, in any case and whatever space surrounds it:
// no other group may have it, whether made by hand or by the company's
// directory. Looks like: the same skeleton (groupNameSkeleton), as emails
// are compared (EmailSkeleton), so that "Admın" (a dotless i), "Аdmin" (a
// Cyrillic А) and "Admin" with a zero-width space are refused too.
func ReservedGroupName(name string) bool {
	folded, upper := groupNameSkeletons(name)
	for _, d := range []string{DefaultGroupAdmin, DefaultGroupBasic} {
		if f, u := groupNameSkeletons(d); folded == f || upper == u {
			return true
		}
	}
	return false
}

// groupNameSkeletons returns what name looks like, in two forms, since
// the confusables table is not made for folded text alone: name without
// the space around it and the characters that show nothing (format
// characters such as U+200B, variation selectors, other
// default-ignorable code points), case-folded then taken to its TR39
// skeleton (the table emails use: "Аdmin", "Admın"), and taken to its
// skeleton then folded (a Greek "Β" is a "B" before folding, not after).
func groupNameSkeletons(name string) (folded, upper string) {
	shown := strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			return -1
		}
		return r
	}, name))
	return confusables.Skeleton(FoldCase(shown)), FoldCase(confusables.Skeleton(shown))
}

// CheckGroupName reports why a group may not be given name: the names of
// the default groups are reserved (ReservedGroupName).
func CheckGroupName(name string) error {
	if ReservedGroupName(name) {
		return Errorf(ECONFLICT, "The name '%s' is reserved for a default group", name)
	}
	return nil
}

// The refusals of changes to the default groups.
var (
	ErrDeleteDefaultGroup  = Errorf(ECONFLICT, "Cannot delete a default system group.")
	ErrRenameDefaultGroup  = Errorf(ECONFLICT, "Cannot rename a default system group.")
	ErrDefaultGroupMembers = Errorf(ECONFLICT, "The members of a default group follow their roles: change the role instead")
	ErrDefaultGroupCurator = Errorf(EINVALID, "A default group has no curators")
)

// CheckDelete reports why g may not be deleted: the default groups stay.
func (g *UserGroup) CheckDelete() error {
	if g.IsDefault {
		return ErrDeleteDefaultGroup
	}
	return nil
}

// CheckChangeGroup reports why c may not apply in to g (see
// CanChangeGroup): a default group keeps its name and its members (who
// follow their roles) and is shared nothing; only those who manage groups
// rename a group.
func (c *Caller) CheckChangeGroup(g *UserGroup, in UserGroupInput) error {
	if err := c.CheckGroupScope(g.ID); err != nil {
		return err
	}
	if in.Name != nil && *in.Name != g.Name {
		if g.IsDefault {
			return ErrRenameDefaultGroup
		}
		if !c.ManagesGroups() {
			return ErrRenameGroup
		}
		if err := CheckGroupName(*in.Name); err != nil {
			return err
		}
	}
	if g.IsDefault && in.UserIDs != nil {
		old := make([]string, len(g.Users))
		for i, u := range g.Users {
			old[i] = u.ID
		}
		if !slices.Equal(sortedSet(old), sortedSet(in.UserIDs)) {
			return ErrDefaultGroupMembers
		}
	}
	if g.IsDefault && in.CCPairIDs != nil && len(in.CCPairIDs) > 0 {
		return ErrShareDefault([]string{g.Name})
	}
	return nil
}

// ErrRenameGroup answers a curator who renames a group it curates: a name
// is everyone's, so only those who manage groups change it.
var ErrRenameGroup = Errorf(EFORBIDDEN, "Only admins can rename a user group")

// ErrNotYourGroup answers a curator who changes a group it does not curate.
var ErrNotYourGroup = Errorf(EFORBIDDEN, "Curators can only change the user groups they curate")

// CanChangeGroup reports whether c may change the members and cc-pairs of
// group id, as Onyx v4.6.1 lets curators do: those who manage groups any
// group; curators the groups they curate (a global curator those it is a
// member of). It needs nothing but id, so that a curator is refused before
// the group is looked up (and learns nothing of groups it does not curate).
func (c *Caller) CanChangeGroup(id int64) bool {
	return c.ManagesGroups() || (c.IsCurator() && c.Curates(id))
}

// CheckGroupScope reports why c may not change group id (see
// CanChangeGroup).
func (c *Caller) CheckGroupScope(id int64) error {
	if !c.CanChangeGroup(id) {
		return ErrNotYourGroup
	}
	return nil
}

// CheckNotDefault reports why an object may not be shared with groups of
// which defaults, the names of the default ones, is not empty.
func CheckNotDefault(defaults []string) error {
	if len(defaults) > 0 {
		return ErrShareDefault(defaults)
	}
	return nil
}

// ErrShareDefault answers sharing an object with the default groups named:
// everyone is in them, so the object is to be made public instead.
func ErrShareDefault(names []string) error {
	return Errorf(EINVALID, "Cannot share with the default system group(s): %s. Make the resource public instead.", strings.Join(names, ", "))
}

// ErrUsersNotFound answers a list of user ids of which ids name no user
// (Onyx's detail, ids in the order given).
func ErrUsersNotFound(ids []string) error {
	return Errorf(ENOTFOUND, "User(s) not found: %s", strings.Join(ids, ", "))
}

// ErrUserNotFound answers a user id that names no user, in set-curator.
func ErrUserNotFound(id string) error {
	return Errorf(ENOTFOUND, "User with id '%s' not found", id)
}

// CheckCuratorFlag reports why the curator flag of member u of group g may
// not be set or cleared, with Onyx v4.6.1's details (404): flags apply to
// basic users and curators, who are members of g; and no default group
// has curators.
func (g *UserGroup) CheckCuratorFlag(u *User, member bool) error {
	switch u.Role {
	case RoleAdmin:
		return Errorf(ENOTFOUND, "User '%s' is an admin and therefore has all permissions of a curator. "+
			"If you'd like this user to only have curator permissions, you must update their role to BASIC "+
			"then assign them to be CURATOR in the appropriate groups.", u.Email)
	case RoleGlobalCurator:
		return Errorf(ENOTFOUND, "User '%s' is a global_curator and therefore has all permissions of a curator for all groups. "+
			"If you'd like this user to only have curator permissions for a specific group, you must update their role "+
			"to BASIC then assign them to be CURATOR in the appropriate groups.", u.Email)
	case RoleBasic, RoleCurator:
	default:
		return Errorf(ENOTFOUND, "This endpoint can only be used to update the curator relationship for users with the CURATOR or BASIC role. \n"+
			"Target user: %s \nTarget user role: %s \n", u.Email, pythonRole(u.Role))
	}
	if !member {
		return Errorf(ENOTFOUND, "target user %s is not in group '%d'", u.Email, g.ID)
	}
	if g.IsDefault {
		return ErrDefaultGroupCurator
	}
	return nil
}

// pythonRole renders r as Python renders Onyx's UserRole member in an
// f-string (UserRole.LIMITED).
func pythonRole(r Role) string { return fmt.Sprintf("UserRole.%s", strings.ToUpper(string(r))) }
