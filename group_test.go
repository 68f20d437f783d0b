package quarry_test

import (
	"testing"

	"github.com/quarryhq/quarry"
)

func TestDefaultGroups(t *testing.T) {
	for r, want := range map[quarry.Role]string{quarry.RoleAdmin: "Admin", quarry.RoleGlobalCurator: "Basic",
		quarry.RoleCurator: "Basic", quarry.RoleBasic: "Basic", quarry.RoleLimited: ""} {
		if got := quarry.DefaultGroupFor(r); got != want {
			t.Errorf("DefaultGroupFor(%s) = %q, want %q", r, got, want)
		}
	}
	for name, want := range map[string]string{
		"Admin":  "conflict: The name 'Admin' is reserved for a default group",
		"basic":  "conflict: The name 'basic' is reserved for a default group",
		"BASIC":  "conflict: The name 'BASIC' is reserved for a default group",
		"Admins": "", "Basic (Custom)": "",
	} {
		if got := errText(quarry.CheckGroupName(name)); got != want {
			t.Errorf("CheckGroupName(%q) = %q, want %q", name, got, want)
		}
	}
	if got := errText((&quarry.UserGroup{IsDefault: true}).CheckDelete()); got != "conflict: Cannot delete a default system group." {
		t.Errorf("deleting a default group: %q", got)
	}
	if err := (&quarry.UserGroup{}).CheckDelete(); err != nil {
		t.Errorf("deleting a group: %v", err)
	}
	if got := errText(quarry.CheckNotDefault([]string{"Admin", "Basic"})); got !=
		"invalid: Cannot share with the default system group(s): Admin, Basic. Make the resource public instead." {
		t.Errorf("sharing with default groups: %q", got)
	}
	if err := quarry.CheckNotDefault(nil); err != nil {
		t.Errorf("sharing with no default group: %v", err)
	}
}

func TestChangeGroup(t *testing.T) {
	caller := func(r quarry.Role, ms []quarry.Membership, grants ...quarry.Permission) *quarry.Caller {
		c := &quarry.Caller{User: quarry.User{ID: string(r), Role: r}, Memberships: ms}
		c.SetGrants(grants)
		return c
	}
	admin := caller(quarry.RoleAdmin, nil, quarry.PermAdmin)
	cur := caller(quarry.RoleCurator, []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}})
	global := caller(quarry.RoleGlobalCurator, []quarry.Membership{{GroupID: 2}})
	manager := caller(quarry.RoleBasic, []quarry.Membership{{GroupID: 9}}, quarry.PermBasic, quarry.PermManageUserGroups)
	basic := caller(quarry.RoleBasic, []quarry.Membership{{GroupID: 1}}, quarry.PermBasic)
	u1, u2 := quarry.User{ID: "u1"}, quarry.User{ID: "u2"}
	g1 := &quarry.UserGroup{ID: 1, Name: "one", Users: []quarry.User{u1}}
	g2 := &quarry.UserGroup{ID: 2, Name: "two", Users: []quarry.User{u1}}
	basicGroup := &quarry.UserGroup{ID: 8, Name: "Basic", IsDefault: true, Users: []quarry.User{u1, u2}}
	name := func(s string) *string { return &s }
	notCurated := "forbidden: Curators can only change the user groups they curate"
	for _, tt := range []struct {
		name string
		c    *quarry.Caller
		g    *quarry.UserGroup
		in   quarry.UserGroupInput
		want string
	}{
		{"admin, any group", admin, g2, quarry.UserGroupInput{Name: name("2"), UserIDs: []string{"u2"}}, ""},
		{"a holder of manage:user_groups, any group", manager, g2, quarry.UserGroupInput{Name: name("2")}, ""},
		{"curator, the group it curates", cur, g1, quarry.UserGroupInput{UserIDs: []string{"u1", "u2"}, CCPairIDs: []int64{}}, ""},
		{"curator, its group as it is named", cur, g1, quarry.UserGroupInput{Name: name("one")}, ""},
		{"curator, renaming", cur, g1, quarry.UserGroupInput{Name: name("uno")}, "forbidden: Only admins can rename a user group"},
		{"curator, a group it is only a member of", cur, g2, quarry.UserGroupInput{}, notCurated},
		{"global curator, a group it is a member of", global, g2, quarry.UserGroupInput{UserIDs: []string{}}, ""},
		{"global curator, another group", global, g1, quarry.UserGroupInput{}, notCurated},
		{"basic", basic, g1, quarry.UserGroupInput{}, notCurated},
		{"a default group's name", admin, g1, quarry.UserGroupInput{Name: name("admin")}, "conflict: The name 'admin' is reserved for a default group"},
		{"renaming a default group", admin, basicGroup, quarry.UserGroupInput{Name: name("Everyone")}, "conflict: Cannot rename a default system group."},
		{"a default group's members", admin, basicGroup, quarry.UserGroupInput{UserIDs: []string{"u1"}},
			"conflict: The members of a default group follow their roles: change the role instead"},
		{"a default group's members, as they are", admin, basicGroup, quarry.UserGroupInput{Name: name("Basic"), UserIDs: []string{"u2", "u1"}, CCPairIDs: []int64{}}, ""},
		{"sharing with a default group", admin, basicGroup, quarry.UserGroupInput{CCPairIDs: []int64{4}},
			"invalid: Cannot share with the default system group(s): Basic. Make the resource public instead."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(tt.c.CheckChangeGroup(tt.g, tt.in)); got != tt.want {
				t.Errorf("CheckChangeGroup = %q, want %q", got, tt.want)
			}
		})
	}
	// The scope is checked on the id alone, before the group is looked up.
	if cur.CanChangeGroup(99) || !admin.CanChangeGroup(99) || !manager.CanChangeGroup(99) || !cur.CanChangeGroup(1) {
		t.Error("CanChangeGroup on ids")
	}
}

func TestCuratorFlagRules(t *testing.T) {
	g := &quarry.UserGroup{ID: 4}
	for _, tt := range []struct {
		role   quarry.Role
		member bool
		def    bool
		want   string
	}{
		{quarry.RoleBasic, true, false, ""},
		{quarry.RoleCurator, true, false, ""},
		{quarry.RoleBasic, false, false, "not_found: target user u@example.com is not in group '4'"},
		{quarry.RoleBasic, true, true, "invalid: A default group has no curators"},
		{quarry.RoleAdmin, true, false, "not_found: User 'u@example.com' is an admin and therefore has all permissions of a curator. " +
			"If you'd like this user to only have curator permissions, you must update their role to BASIC then assign them to be CURATOR in the appropriate groups."},
		{quarry.RoleGlobalCurator, false, false, "not_found: User 'u@example.com' is a global_curator and therefore has all permissions of a curator for all groups. " +
			"If you'd like this user to only have curator permissions for a specific group, you must update their role to BASIC then assign them to be CURATOR in the appropriate groups."},
		{quarry.RoleLimited, true, false, "not_found: This endpoint can only be used to update the curator relationship for users with the CURATOR or BASIC role. \n" +
			"Target user: u@example.com \nTarget user role: UserRole.LIMITED \n"},
	} {
		g.IsDefault = tt.def
		u := &quarry.User{Email: "u@example.com", Role: tt.role}
		if got := errText(g.CheckCuratorFlag(u, tt.member)); got != tt.want {
			t.Errorf("%s (member %t, default %t): %q, want %q", tt.role, tt.member, tt.def, got, tt.want)
		}
	}
	if got := errText(quarry.ErrUsersNotFound([]string{"b", "a"})); got != "not_found: User(s) not found: b, a" {
		t.Errorf("ErrUsersNotFound: %q", got)
	}
}
