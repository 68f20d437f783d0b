package store_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestDefaultGroupMembers follows a user through what moves it between the
// default groups (quarry.DefaultGroupFor): registering, a new role, a
// curator flag, deactivation and activation, an API key made, re-roled and
// revoked.
func TestDefaultGroupMembers(t *testing.T) {
	db := storetest.Open(t)
	open := &quarry.RegistrationPolicy{Mode: quarry.RegistrationOpen}
	defaults := map[string]int64{}
	gs, err := db.Groups(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.IsDefault {
			defaults[g.Name] = g.ID
		}
	}
	if !cmp.Equal(defaults, map[string]int64{"Admin": 1, "Basic": 2}) {
		t.Fatalf("default groups of a new database: %v", defaults)
	}
	// groupsOf returns the groups user id is a member of, as names.
	groupsOf := func(id string) []string {
		t.Helper()
		gs, err := db.Groups(ctx, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gs {
			if slices.ContainsFunc(g.Users, func(u quarry.User) bool { return u.ID == id }) {
				out = append(out, g.Name)
			}
		}
		return out
	}
	want := func(what, id string, names ...string) {
		t.Helper()
		if got := groupsOf(id); !cmp.Equal(got, names) {
			t.Errorf("%s: groups %v, want %v", what, got, names)
		}
	}
	first := register(t, db, "first@example.com", open)
	second := register(t, db, "second@example.com", open)
	want("the first person", first.ID, "Admin")
	want("the second person", second.ID, "Basic")

	_, adminToken, err := db.CreateAPIKey(ctx, nil, nil, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(adminToken))
	if err != nil {
		t.Fatal(err)
	}
	want("an admin key", admin.ID, "Admin")
	// The caller holds what its groups are granted.
	if !cmp.Equal(admin.Grants, []quarry.Permission{quarry.PermAdmin}) || !admin.IsAdmin() {
		t.Errorf("the admin key's grants %v", admin.Grants)
	}

	if err := db.SetRole(ctx, admin, second.Email, quarry.RoleGlobalCurator, false); err != nil {
		t.Fatal(err)
	}
	want("a global curator", second.ID, "Basic")
	if err := db.SetRole(ctx, admin, second.Email, quarry.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	want("made an admin", second.ID, "Admin")
	if err := db.SetRole(ctx, admin, second.Email, quarry.RoleLimited, false); err != nil {
		t.Fatal(err)
	}
	want("made limited", second.ID)
	if err := db.SetRole(ctx, admin, second.Email, quarry.RoleBasic, false); err != nil {
		t.Fatal(err)
	}
	want("basic again", second.ID, "Basic")

	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: new("team"), UserIDs: []string{second.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetCurator(ctx, admin, g.ID, second.ID, true); err != nil {
		t.Fatal(err)
	}
	want("a curator by its flag", second.ID, "Basic", "team")

	if err := db.SetActive(ctx, admin, second.Email, false); err != nil {
		t.Fatal(err)
	}
	want("deactivated: keeps its groups", second.ID, "Basic", "team")
	if err := db.SetActive(ctx, admin, second.Email, true); err != nil {
		t.Fatal(err)
	}
	want("activated", second.ID, "Basic", "team")

	for _, tt := range []struct {
		role  quarry.Role
		group []string
	}{{quarry.RoleLimited, nil}, {quarry.RoleBasic, []string{"Basic"}}, {quarry.RoleCurator, []string{"Basic"}},
		{quarry.RoleGlobalCurator, []string{"Basic"}}, {quarry.RoleAdmin, []string{"Admin"}}} {
		k, _, err := db.CreateAPIKey(ctx, admin, nil, tt.role)
		if err != nil {
			t.Fatal(err)
		}
		want("a "+string(tt.role)+" key", k.UserID, tt.group...)
		if tt.role == quarry.RoleBasic {
			if _, err := db.UpdateAPIKey(ctx, admin, k.ID, nil, quarry.RoleAdmin); err != nil {
				t.Fatal(err)
			}
			want("a key given the admin role", k.UserID, "Admin")
			if _, err := db.AddGroupMembers(ctx, admin, g.ID, []string{k.UserID}); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteAPIKey(ctx, admin, k.ID); err != nil {
				t.Fatal(err)
			}
			want("a revoked key's user, in no group", k.UserID)
		}
	}
}

// TestGroupPermissions: every group is granted basic, grants are toggled
// once, and a caller holds its groups' grants from its next
// authentication on.
func TestGroupPermissions(t *testing.T) {
	db := storetest.Open(t)
	admin, _, _ := db.CreateAPIKey(ctx, nil, nil, quarry.RoleAdmin)
	_, token, err := db.CreateAPIKey(ctx, nil, nil, quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	caller := func() *quarry.Caller {
		t.Helper()
		c, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	me := caller()
	by := &quarry.Caller{User: quarry.User{ID: admin.UserID, Role: quarry.RoleAdmin}}
	g, err := db.CreateGroup(ctx, by, quarry.UserGroupInput{Name: new("ops"), UserIDs: []string{me.ID}})
	if err != nil {
		t.Fatal(err)
	}
	perms := func(id int64) []quarry.Permission {
		t.Helper()
		ps, err := db.GroupPermissions(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	if got := perms(g.ID); !cmp.Equal(got, []quarry.Permission{quarry.PermBasic}) {
		t.Errorf("a new group: %v", got)
	}
	if got := perms(1); !cmp.Equal(got, []quarry.Permission{quarry.PermAdmin}) {
		t.Errorf("Admin: %v", got)
	}
	if me.ManagesConnectors() {
		t.Fatal("a basic user manages connectors")
	}
	for range 2 {
		if err := db.SetGroupPermission(ctx, by, g.ID, quarry.PermManageConnectors, true); err != nil {
			t.Fatal(err)
		}
	}
	if got := perms(g.ID); !cmp.Equal(got, []quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors}) {
		t.Errorf("after a grant, twice: %v", got)
	}
	if me := caller(); !me.ManagesConnectors() || me.ManagesGroups() {
		t.Errorf("a member of the group: grants %v", me.Grants)
	}
	for range 2 {
		if err := db.SetGroupPermission(ctx, by, g.ID, quarry.PermManageConnectors, false); err != nil {
			t.Fatal(err)
		}
	}
	if me := caller(); me.ManagesConnectors() {
		t.Error("the grant taken back, the member still manages connectors")
	}
	for _, tt := range []struct {
		id   int64
		p    quarry.Permission
		want string
	}{
		{g.ID, quarry.PermAdmin, "invalid: Permission 'admin' cannot be toggled via this endpoint"},
		{g.ID, quarry.PermReadUsers, "invalid: Permission 'read:users' cannot be toggled via this endpoint"},
		{9999, quarry.PermManageLLMs, "not_found: User group 9999 does not exist"},
	} {
		if got := code(db.SetGroupPermission(ctx, by, tt.id, tt.p, true)); got != tt.want {
			t.Errorf("%d %s: %s, want %s", tt.id, tt.p, got, tt.want)
		}
	}
	if _, err := db.GroupPermissions(ctx, 9999); code(err) != "not_found: User group 9999 does not exist" {
		t.Errorf("an unknown group's permissions: %v", err)
	}
	// The grants of a deleted group go with it.
	if err := db.DeleteGroup(ctx, by, g.ID); err != nil {
		t.Fatal(err)
	}
	if me := caller(); !cmp.Equal(me.Grants, []quarry.Permission{quarry.PermBasic}) {
		t.Errorf("after the group's deletion: %v", me.Grants)
	}
}

// TestDefaultGroupsMigration migrates a deployment of schema version 6
// that has groups named like the default groups: they keep their members
// under new names, every group is granted basic, and every user that can
// act joins its role's default group.
func TestDefaultGroupsMigration(t *testing.T) {
	var f *storetest.Fixture
	for _, x := range storetest.Fixtures(t) {
		if filepath.Base(x.Dir) == "00006" {
			f = &x
		}
	}
	if f == nil {
		t.Fatal("no fixture 00006")
	}
	u, m := f.Load(t)
	raw := rawDB(t, u)
	for _, name := range []string{"Admin", "basic", "Admin (Custom)"} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO user_groups (name, created_at, updated_at) VALUES ($1, 0, 0)`, name); err != nil {
			t.Fatal(err)
		}
	}
	var roles = map[string]quarry.Role{}
	rows, err := raw.QueryContext(ctx, `SELECT u.id, u.role FROM users u WHERE NOT u.service_account
		OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var r quarry.Role
		if err := rows.Scan(&id, &r); err != nil {
			t.Fatal(err)
		}
		roles[id] = r
	}
	rows.Close()
	db := storetest.OpenURL(t, u, fixtureKeys(t, m))
	gs, err := db.Groups(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*quarry.UserGroup{}
	for _, g := range gs {
		byName[g.Name] = g
		want := []quarry.Permission{quarry.PermBasic}
		if g.IsDefault && g.Name == "Admin" {
			want = []quarry.Permission{quarry.PermAdmin}
		}
		if got, err := db.GroupPermissions(ctx, g.ID); err != nil || !cmp.Equal(got, want) {
			t.Errorf("group %q: permissions %v (%v), want %v", g.Name, got, err, want)
		}
	}
	for name, isDefault := range map[string]bool{"Admin": true, "Basic": true, "Admin (Custom)": false, "basic (Custom)": false} {
		if g := byName[name]; g == nil || g.IsDefault != isDefault {
			t.Errorf("group %q: %+v, want is_default %t", name, g, isDefault)
		}
	}
	renamed := 0
	for name := range byName {
		if strings.HasPrefix(name, "Admin (Custom ") {
			renamed++
		}
	}
	if renamed != 1 {
		t.Errorf("the group named Admin was not renamed \"Admin (Custom <id>)\": %v", slices.Collect(maps.Keys(byName)))
	}
	for id, r := range roles {
		name := quarry.DefaultGroupFor(r)
		for _, d := range []string{"Admin", "Basic"} {
			in := slices.ContainsFunc(byName[d].Users, func(u quarry.User) bool { return u.ID == id })
			if in != (d == name) {
				t.Errorf("user %s (%s): member of %s %t", id, r, d, in)
			}
		}
	}
	if len(roles) == 0 {
		t.Error("the fixture has no users")
	}
}
