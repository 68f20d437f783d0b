package quarry_test

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

func ptr(s string) *string { return &s }

func TestSCIMTokenFormat(t *testing.T) {
	token, hash := quarry.NewSCIMToken()
	if !quarry.ValidSCIMTokenFormat(token) || hash != quarry.HashToken(token) || quarry.ValidAPIKeyFormat(token) || quarry.ValidSessionTokenFormat(token) {
		t.Errorf("token %q", token)
	}
	if got, want := quarry.DisplaySCIMToken(token), "qrd_****"+token[len(token)-4:]; got != want {
		t.Errorf("display %q, want %q", got, want)
	}
	for _, bad := range []string{"", "qrd_", "qry_" + token[4:], token + "A", "onyx_scim_x"} {
		if quarry.ValidSCIMTokenFormat(bad) {
			t.Errorf("%q is taken for a SCIM token", bad)
		}
	}
}

func TestReservedGroupName(t *testing.T) {
	for name, want := range map[string]bool{"Admin": true, "admin": true, "BASIC": true, " Basic ": true, "\uff21dmin": true,
		// Lookalikes (issue 31): a dotless i, a zero-width space, a
		// Cyrillic А, a soft hyphen, a Greek Β, a variation selector.
		"Adm\u0131n": true, "Admin\u200b": true, "\u0410dmin": true, "Ad\u00admin": true, "\u0392asic": true, "Basi\ufe0fc": true,
		"\u200b Admin \u200b": true,
		"Admins":              false, "Basic users": false, "": false, "Eng": false} {
		if got := quarry.ReservedGroupName(name); got != want {
			t.Errorf("ReservedGroupName(%q) = %t", name, got)
		}
	}
	for _, tt := range []struct{ old, next, want string }{
		{"", "Eng", ""},
		{"", "admin", "conflict: 'admin' is a reserved group name."},
		{"", " ", "invalid: displayName is required"},
		{"", strings.Repeat("x", 513), "invalid: displayName is longer than 512 bytes"},
		{"Eng", "Basic", "conflict: 'Basic' is a reserved group name."},
		{"Eng", " BASIC ", "conflict: ' BASIC ' is a reserved group name."},
		{"Eng", "Ops", ""},
		{"Eng", "Eng", ""},
	} {
		if got := errText(quarry.CheckDirectoryGroupName(tt.old, tt.next)); got != tt.want {
			t.Errorf("CheckDirectoryGroupName(%q, %q) = %q, want %q", tt.old, tt.next, got, tt.want)
		}
	}
}

// TestDirectoryGroupCheckWrite: the directory changes and deletes the
// groups it sees but the default ones, whatever their names.
func TestDirectoryGroupCheckWrite(t *testing.T) {
	for _, tt := range []struct {
		g    quarry.DirectoryGroup
		want string
	}{
		{quarry.DirectoryGroup{DisplayName: "Admin", IsDefault: true}, "conflict: 'Admin' is a reserved group name and cannot be changed or deleted."},
		{quarry.DirectoryGroup{DisplayName: "Basic", IsDefault: true, Managed: false}, "conflict: 'Basic' is a reserved group name and cannot be changed or deleted."},
		{quarry.DirectoryGroup{DisplayName: "Eng", Managed: true}, ""},
		{quarry.DirectoryGroup{DisplayName: "Made by hand"}, ""},
	} {
		if got := errText(tt.g.CheckWrite()); got != tt.want {
			t.Errorf("CheckWrite(%+v) = %q, want %q", tt.g, got, tt.want)
		}
	}
}

func TestDirectoryUserPrepare(t *testing.T) {
	work := ptr("work")
	for _, tt := range []struct {
		name       string
		in         quarry.DirectoryUser
		email      string
		personName *string
		err        string
	}{
		{"userName is the email", quarry.DirectoryUser{UserName: " ann@corp.example "}, "ann@corp.example", nil, ""},
		{"the primary email wins", quarry.DirectoryUser{UserName: "ann@corp.example",
			Emails: []quarry.DirectoryEmail{{Value: "x@corp.example", Type: work}, {Value: "a.lee@corp.example", Primary: true}}}, "a.lee@corp.example", nil, ""},
		{"else the first", quarry.DirectoryUser{UserName: "Test_User_1", Emails: []quarry.DirectoryEmail{{Value: "t@corp.example"}}}, "t@corp.example", nil, ""},
		{"a primary that is no email: userName", quarry.DirectoryUser{UserName: "u@corp.example", Emails: []quarry.DirectoryEmail{{Value: "nope", Primary: true}}}, "u@corp.example", nil, ""},
		{"no email at all", quarry.DirectoryUser{UserName: "Test_User_1"}, "", nil, "invalid: A person needs an email address: give a primary email, or a userName that is one"},
		{"no userName", quarry.DirectoryUser{UserName: "  "}, "", nil, "invalid: userName is required"},
		{"two primaries", quarry.DirectoryUser{UserName: "a@corp.example", Emails: []quarry.DirectoryEmail{{Value: "a@corp.example", Primary: true}, {Value: "b@corp.example", Primary: true}}},
			"", nil, "invalid: Only one email may be primary"},
		{"too long", quarry.DirectoryUser{UserName: "a@corp.example", Department: ptr(strings.Repeat("d", 513))}, "", nil, "invalid: department is longer than 512 bytes"},
		{"displayName names", quarry.DirectoryUser{UserName: "a@corp.example", DisplayName: ptr(" Dr. A "), GivenName: ptr("A"), FamilyName: ptr("B")}, "a@corp.example", ptr("Dr. A"), ""},
		{"formatted next", quarry.DirectoryUser{UserName: "a@corp.example", Formatted: ptr("A M B"), GivenName: ptr("A")}, "a@corp.example", ptr("A M B"), ""},
		{"given and family", quarry.DirectoryUser{UserName: "a@corp.example", GivenName: ptr("A"), FamilyName: ptr("B")}, "a@corp.example", ptr("A B"), ""},
		{"the full-width email is read as NFKC", quarry.DirectoryUser{UserName: "\uff41@corp.example"}, "a@corp.example", nil, ""},
	} {
		u := tt.in
		err := u.Prepare()
		if errText(err) != tt.err {
			t.Errorf("%s: %q, want %q", tt.name, errText(err), tt.err)
			continue
		}
		if err == nil && (u.Email != tt.email || (u.Name == nil) != (tt.personName == nil) || (u.Name != nil && *u.Name != *tt.personName)) {
			t.Errorf("%s: email %q, name %v; want %q, %v", tt.name, u.Email, u.Name, tt.email, tt.personName)
		}
	}
	// A person the directory names nothing keeps their name.
	u := quarry.DirectoryUser{UserName: "a@corp.example", Name: ptr("Kept")}
	if u.Prepare(); *u.Name != "Kept" {
		t.Errorf("name %q", *u.Name)
	}
}

func TestDirectoryVersion(t *testing.T) {
	u := &quarry.DirectoryUser{ID: "1", UserName: "a@corp.example", Email: "a@corp.example", Active: true}
	v := u.Version()
	c := u.Clone()
	if c.Version() != v || len(v) != 20 {
		t.Errorf("clone %q, %q", c.Version(), v)
	}
	for _, change := range []func(*quarry.DirectoryUser){
		func(u *quarry.DirectoryUser) { u.Active = false },
		func(u *quarry.DirectoryUser) { u.Department = ptr("") },
		func(u *quarry.DirectoryUser) { u.Groups = []quarry.GroupBrief{{ID: 1, Name: "g"}} },
		func(u *quarry.DirectoryUser) { u.Emails = []quarry.DirectoryEmail{{Value: "a@corp.example"}} },
	} {
		c := u.Clone()
		change(c)
		if c.Version() == v {
			t.Errorf("a change kept the version")
		}
	}
	g := &quarry.DirectoryGroup{ID: 1, DisplayName: "g", Members: []quarry.DirectoryMember{{ID: "a", Email: "a@x"}}}
	h := g.Clone()
	h.Members[0].Email = "b@x"
	if g.Version() == h.Version() || g.Members[0].Email != "a@x" {
		t.Errorf("group versions")
	}
	for _, tt := range []struct {
		values []string
		want   bool
	}{
		{[]string{`W/"` + v + `"`}, true}, {[]string{`"` + v + `"`}, true}, {[]string{`"x", W/"` + v + `"`}, true},
		{[]string{"*"}, true}, {[]string{`W/"x"`}, false}, {[]string{v}, false}, {nil, false},
	} {
		if got := quarry.VersionMatches(tt.values, v); got != tt.want {
			t.Errorf("VersionMatches(%q) = %t", tt.values, got)
		}
	}
}

func TestDirectoryEmailRules(t *testing.T) {
	for _, tt := range []struct{ old, next, want string }{
		{"ann@corp.example", "ann.lee@corp.example", "ann.lee@corp.example"},
		{"ann@corp.example", "0123456789abcdef0123456789ABCDEFann@corp.example", "ann@corp.example"}, // Entra's soft delete
		{"ann@corp.example", "0123456789abcdef0123456789abcdefbob@corp.example", "0123456789abcdef0123456789abcdefbob@corp.example"},
	} {
		if got := quarry.DirectoryEmailChange(tt.old, tt.next); got != tt.want {
			t.Errorf("DirectoryEmailChange(%q, %q) = %q, want %q", tt.old, tt.next, got, tt.want)
		}
	}
	for role, refused := range map[quarry.Role]bool{quarry.RoleAdmin: true, quarry.RoleCurator: true, quarry.RoleGlobalCurator: true,
		quarry.RoleBasic: false, quarry.RoleLimited: false} {
		err := quarry.CheckDirectoryEmailChange(&quarry.User{Email: "x@corp.example", Role: role})
		if (err != nil) != refused || (err != nil && quarry.ErrorCode(err) != quarry.EFORBIDDEN) {
			t.Errorf("%s: %v", role, err)
		}
	}
}

// TestCheckDirectoryDeactivation: the directory deactivates people, not
// admins or curators; an admin deactivates anyone (the last admin rule
// aside); activating is never refused here.
func TestCheckDirectoryDeactivation(t *testing.T) {
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	directory := quarry.DirectoryCaller(&quarry.SCIMToken{ID: 1})
	for _, tt := range []struct {
		c      *quarry.Caller
		role   quarry.Role
		active bool
		want   string
	}{
		{directory, quarry.RoleAdmin, false, "forbidden: The directory cannot deactivate an admin or curator (x@corp.example): deactivate them in Quarry, or demote them first"},
		{directory, quarry.RoleCurator, false, "forbidden: The directory cannot deactivate an admin or curator (x@corp.example): deactivate them in Quarry, or demote them first"},
		{directory, quarry.RoleGlobalCurator, false, "forbidden: The directory cannot deactivate an admin or curator (x@corp.example): deactivate them in Quarry, or demote them first"},
		{directory, quarry.RoleBasic, false, ""},
		{directory, quarry.RoleLimited, false, ""},
		{directory, quarry.RoleAdmin, true, ""},
		{admin, quarry.RoleAdmin, false, ""},
		{nil, quarry.RoleAdmin, false, ""},
	} {
		u := &quarry.User{Email: "x@corp.example", Role: tt.role, IsActive: !tt.active}
		if got := errText(tt.c.CheckDirectoryDeactivation(u, tt.active)); got != tt.want {
			t.Errorf("%v %s active=%t: %q, want %q", tt.c != nil && tt.c.Directory != nil, tt.role, tt.active, got, tt.want)
		}
	}
}

// TestCheckDirectoryAddition: the directory adds people to groups that
// hold basic alone; removing, or adding no one, is always allowed.
func TestCheckDirectoryAddition(t *testing.T) {
	for _, tt := range []struct {
		grants []quarry.Permission
		added  []string
		want   string
	}{
		{[]quarry.Permission{quarry.PermBasic}, []string{"p"}, ""},
		{nil, []string{"p"}, ""},
		{[]quarry.Permission{quarry.PermBasic, quarry.PermManageUserGroups}, nil, ""},
		{[]quarry.Permission{quarry.PermBasic, quarry.PermManageUserGroups}, []string{"p"},
			"forbidden: Group 'Ops' is granted manage:user_groups beyond basic: the directory cannot add people to it (grant such permissions to a group made in Quarry, and add people there; or take them back from this group)"},
		{[]quarry.Permission{quarry.PermAdmin, quarry.PermBasic, quarry.PermManageConnectors}, []string{"p", "q"},
			"forbidden: Group 'Ops' is granted admin, manage:connectors beyond basic: the directory cannot add people to it (grant such permissions to a group made in Quarry, and add people there; or take them back from this group)"},
	} {
		if got := errText(quarry.CheckDirectoryAddition("Ops", tt.grants, tt.added)); got != tt.want {
			t.Errorf("%v, %v: %q, want %q", tt.grants, tt.added, got, tt.want)
		}
	}
}

// TestAdminRefusalsOnTheDirectory: what an admin may not change through
// the admin API of what the directory manages, and what they still may.
func TestAdminRefusalsOnTheDirectory(t *testing.T) {
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	directory := quarry.DirectoryCaller(&quarry.SCIMToken{ID: 1})
	managed := &quarry.UserGroup{ID: 7, SCIMSynced: true}
	byHand := &quarry.UserGroup{ID: 8}
	people := map[string]bool{"p": true}
	for _, tt := range []struct {
		name           string
		c              *quarry.Caller
		g              *quarry.UserGroup
		renamed        bool
		added, removed []string
		want           string
	}{
		{"rename", admin, managed, true, nil, nil, "conflict: User group 7 is managed by the company's directory (SCIM): rename it there"},
		{"add a directory person", admin, managed, false, []string{"p"}, nil,
			"conflict: User group 7 is managed by the company's directory (SCIM), and so is user p: change their membership there"},
		{"remove a directory person", admin, managed, false, nil, []string{"p"},
			"conflict: User group 7 is managed by the company's directory (SCIM), and so is user p: change their membership there"},
		{"add a service account", admin, managed, false, []string{"bot"}, []string{"other"}, ""},
		{"a group made by hand", admin, byHand, true, []string{"p"}, nil, ""},
		{"the directory itself", directory, managed, true, []string{"p"}, nil, ""},
	} {
		if got := errText(tt.c.CheckDirectoryGroupChange(tt.g, tt.renamed, tt.added, tt.removed, people)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := errText(admin.CheckDirectoryGroupDelete(managed)); got != "conflict: User group 7 is managed by the company's directory (SCIM): delete it there" {
		t.Errorf("delete: %q", got)
	}
	if admin.CheckDirectoryGroupDelete(byHand) != nil || directory.CheckDirectoryGroupDelete(managed) != nil {
		t.Errorf("deletes that may be made were refused")
	}
	u := &quarry.User{Email: "p@corp.example"}
	for _, tt := range []struct {
		c                                *quarry.Caller
		managed, directoryActive, active bool
		refused                          bool
	}{
		{admin, true, false, true, true},   // the directory deactivated them
		{admin, true, true, true, false},   // the admin undoes their own deactivation
		{admin, true, false, false, false}, // deactivating is always allowed
		{admin, false, false, true, false}, // not the directory's
		{directory, true, false, true, false},
	} {
		if err := tt.c.CheckDirectoryActivation(u, tt.managed, tt.directoryActive, tt.active); (err != nil) != tt.refused {
			t.Errorf("%+v: %v", tt, err)
		}
	}
}
