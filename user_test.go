package quarry_test

import (
	"testing"

	"github.com/quarryhq/quarry"
)

func TestPeopleRules(t *testing.T) {
	admin := &quarry.User{ID: "a", Email: "a@example.com", Role: quarry.RoleAdmin, IsActive: true}
	inactiveAdmin := &quarry.User{ID: "i", Email: "i@example.com", Role: quarry.RoleAdmin}
	basic := &quarry.User{ID: "b", Email: "b@example.com", Role: quarry.RoleBasic, IsActive: true}
	service := &quarry.User{ID: "s", Email: "s@example.com", Role: quarry.RoleAdmin, IsActive: true, ServiceAccount: true}
	t.Run("last admin", func(t *testing.T) {
		for _, tt := range []struct {
			u      *quarry.User
			others quarry.OtherAdmins
			want   string
		}{
			{admin, quarry.OtherAdmins{}, "invalid: a@example.com is the last active admin and cannot be demoted"},
			{admin, quarry.OtherAdmins{People: 1}, ""},
			// Only people count for a person: keys cannot sort things out.
			{admin, quarry.OtherAdmins{Keys: 3}, "invalid: a@example.com is the last active admin and cannot be demoted"},
			{inactiveAdmin, quarry.OtherAdmins{}, ""},
			{basic, quarry.OtherAdmins{}, ""},
			{service, quarry.OtherAdmins{}, "invalid: s@example.com is the last active admin and cannot be demoted"},
			{service, quarry.OtherAdmins{Keys: 1}, ""},
			{service, quarry.OtherAdmins{People: 1}, ""},
		} {
			if got := errText(quarry.CheckLastAdmin(tt.u, tt.others, "demoted")); got != tt.want {
				t.Errorf("CheckLastAdmin(%s, %+v) = %q, want %q", tt.u.Email, tt.others, got, tt.want)
			}
			k := &quarry.APIKey{ID: 9}
			if tt.u.ServiceAccount {
				want := ""
				if tt.want != "" {
					want = "invalid: API key 9 is the last active admin and cannot be revoked: make another admin first"
				}
				if got := errText(quarry.CheckLastAdminKey(k, tt.u, tt.others, "revoked")); got != want {
					t.Errorf("CheckLastAdminKey(%+v) = %q, want %q", tt.others, got, want)
				}
			}
		}
	})
	t.Run("role change", func(t *testing.T) {
		for _, tt := range []struct {
			u        *quarry.User
			r        quarry.Role
			override bool
			change   bool
			want     string
		}{
			{basic, quarry.RoleAdmin, false, true, ""},
			{basic, quarry.RoleGlobalCurator, false, true, ""},
			{basic, quarry.RoleBasic, false, false, ""},
			{basic, quarry.RoleCurator, false, false, "invalid: Curator role must be set via the User Group Menu"},
			{basic, quarry.RoleCurator, true, true, ""},
			{service, quarry.RoleBasic, false, false, "invalid: Cannot change the role of a service account user: make a new API key instead"},
			{service, quarry.RoleAdmin, true, false, "invalid: Cannot change the role of a service account user: make a new API key instead"},
		} {
			change, err := quarry.CheckRoleChange(tt.u, tt.r, tt.override)
			if change != tt.change || errText(err) != tt.want {
				t.Errorf("CheckRoleChange(%s, %s, %t) = %t, %q; want %t, %q", tt.u.Email, tt.r, tt.override, change, errText(err), tt.change, tt.want)
			}
		}
	})
	t.Run("activation", func(t *testing.T) {
		c := &quarry.Caller{User: *admin}
		if got := errText(c.CheckSetActive(admin, false)); got != "invalid: You cannot deactivate yourself" {
			t.Errorf("deactivating oneself: %q", got)
		}
		for _, tt := range []struct {
			u      *quarry.User
			active bool
		}{{admin, true}, {basic, false}, {basic, true}} {
			if err := c.CheckSetActive(tt.u, tt.active); err != nil {
				t.Errorf("CheckSetActive(%s, %t) = %v", tt.u.Email, tt.active, err)
			}
		}
		if basic.CheckActive() != nil || inactiveAdmin.CheckActive() != quarry.ErrDeactivated {
			t.Error("CheckActive")
		}
		if got := errText(quarry.CheckPasswordReset(service)); got != "invalid: A service account has no password: regenerate its API key instead" {
			t.Errorf("resetting a service account's password: %q", got)
		}
		if quarry.CheckPasswordReset(basic) != nil {
			t.Error("resetting a person's password is refused")
		}
	})
	t.Run("curator flags", func(t *testing.T) {
		for _, tt := range []struct {
			r     quarry.Role
			flags int
			want  quarry.Role
		}{
			{quarry.RoleBasic, 1, quarry.RoleCurator},
			{quarry.RoleBasic, 0, quarry.RoleBasic},
			{quarry.RoleCurator, 0, quarry.RoleBasic},
			{quarry.RoleCurator, 2, quarry.RoleCurator},
			{quarry.RoleGlobalCurator, 0, quarry.RoleGlobalCurator},
			{quarry.RoleAdmin, 3, quarry.RoleAdmin},
		} {
			if got := quarry.RoleWithFlags(tt.r, tt.flags); got != tt.want {
				t.Errorf("RoleWithFlags(%s, %d) = %s, want %s", tt.r, tt.flags, got, tt.want)
			}
		}
		for _, r := range []quarry.Role{quarry.RoleAdmin, quarry.RoleGlobalCurator, quarry.RoleBasic, quarry.RoleLimited} {
			if r.KeepsCuratorFlags() {
				t.Errorf("a %s keeps curator flags", r)
			}
		}
		if !quarry.RoleCurator.KeepsCuratorFlags() {
			t.Error("a curator loses its flags")
		}
	})
	if quarry.CheckAPIKeyRole("owner") == nil || quarry.CheckAPIKeyRole(quarry.RoleLimited) != nil {
		t.Error("CheckAPIKeyRole")
	}
}

func TestCheckSharing(t *testing.T) {
	admin := &quarry.Caller{User: quarry.User{ID: "a", Role: quarry.RoleAdmin}}
	cur := &quarry.Caller{User: quarry.User{ID: "c", Role: quarry.RoleCurator},
		Memberships: []quarry.Membership{{GroupID: 1, IsCurator: true}, {GroupID: 2}}}
	global := &quarry.Caller{User: quarry.User{ID: "g", Role: quarry.RoleGlobalCurator}, Memberships: []quarry.Membership{{GroupID: 2}}}
	basic := &quarry.Caller{User: quarry.User{ID: "b", Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 1}}}
	for _, tt := range []struct {
		name   string
		c      *quarry.Caller
		groups []int64
		public bool
		want   error
	}{
		{"admin, anything", admin, []int64{9}, false, nil},
		{"curator, curated", cur, []int64{1}, false, nil},
		{"curator, public without groups", cur, nil, true, nil},
		{"curator, private without groups", cur, nil, false, quarry.ErrCuratorNoGroup},
		{"curator, a group only a member of", cur, []int64{1, 2}, false, quarry.ErrCuratorGroups},
		{"global curator, its group", global, []int64{2}, false, nil},
		{"global curator, another group", global, []int64{1}, false, quarry.ErrCuratorGroups},
		{"basic, private", basic, nil, false, nil},
		{"basic, a group", basic, []int64{1}, false, quarry.ErrBasicSharing},
		{"basic, public", basic, nil, true, quarry.ErrBasicSharing},
	} {
		if got := tt.c.CheckSharing(tt.groups, tt.public); got != tt.want {
			t.Errorf("%s: CheckSharing = %v, want %v", tt.name, got, tt.want)
		}
	}
	// One status per refusal: sharing a new object against the rules is a
	// bad request; changing another's is forbidden.
	for _, err := range []error{quarry.ErrCuratorNoGroup, quarry.ErrCuratorGroups, quarry.ErrBasicSharing} {
		if quarry.ErrorCode(err) != quarry.EINVALID {
			t.Errorf("%v is not a 400", err)
		}
	}
	for _, err := range []error{quarry.ErrNotYourGroups, quarry.ErrShareNotCurated, quarry.ErrNotYourTool} {
		if quarry.ErrorCode(err) != quarry.EFORBIDDEN {
			t.Errorf("%v is not a 403", err)
		}
	}
	seen := map[string]string{}
	for _, err := range []error{quarry.ErrCuratorNoGroup, quarry.ErrCuratorGroups, quarry.ErrBasicSharing, quarry.ErrNotYourGroups,
		quarry.ErrShareNotCurated, quarry.ErrNotYourTool} {
		msg, code := quarry.ErrorMessage(err), quarry.ErrorCode(err)
		if other, ok := seen[msg]; ok && other != code {
			t.Errorf("%q is both %s and %s", msg, other, code)
		}
		seen[msg] = code
	}
}
