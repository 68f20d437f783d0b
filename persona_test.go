package quarry_test

import (
	"testing"

	"github.com/quarryhq/quarry"
)

// TestPersonaRules pins who sees, reads, edits and deletes which
// assistant (Onyx v4.6.1's _add_user_filters and get_persona_by_id).
func TestPersonaRules(t *testing.T) {
	owner, other := "owner", "other"
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	basic := &quarry.Caller{User: quarry.User{ID: other, Role: quarry.RoleBasic}}
	member := &quarry.Caller{User: quarry.User{ID: "member", Role: quarry.RoleBasic}, Memberships: []quarry.Membership{{GroupID: 7}}}
	curator := &quarry.Caller{User: quarry.User{ID: "curator", Role: quarry.RoleCurator}, Memberships: []quarry.Membership{{GroupID: 7, IsCurator: true}}}
	mine := &quarry.Caller{User: quarry.User{ID: owner, Role: quarry.RoleBasic}}
	private := &quarry.Persona{ID: 1, OwnerID: &owner, IsListed: true}
	group := &quarry.Persona{ID: 2, OwnerID: &owner, IsListed: true, GroupShares: []quarry.PersonaGroupShare{{GroupID: 7, Permission: quarry.PersonaViewer}}}
	unlisted := &quarry.Persona{ID: 3, OwnerID: &owner, UserShares: []quarry.PersonaUserShare{{UserID: other, Permission: quarry.PersonaEditor}}}
	public := &quarry.Persona{ID: 4, OwnerID: &owner, IsListed: true, IsPublic: true, PublicPermission: quarry.PersonaViewer}
	builtin := &quarry.Persona{ID: 0, Builtin: true, IsListed: true, IsPublic: true, PublicPermission: quarry.PersonaViewer}
	for _, tc := range []struct {
		name                   string
		c                      *quarry.Caller
		p                      *quarry.Persona
		see, read, edit, erase bool
	}{
		{"an admin, another's private one", admin, private, true, true, true, true},
		{"its owner", mine, private, true, true, true, true},
		{"another, a private one", basic, private, false, false, false, false},
		{"a member of its group", member, group, true, true, false, false},
		{"a curator of its only group", curator, group, true, true, true, true},
		{"an editor, unlisted: read, not listed", basic, unlisted, false, true, true, false},
		{"anyone, a public one", basic, public, true, true, false, false},
		{"anyone, the built-in one", basic, builtin, true, true, false, false},
		{"an admin, the built-in one: never deleted", admin, builtin, true, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.CanSeePersona(tc.p); got != tc.see {
				t.Errorf("CanSeePersona = %t, want %t", got, tc.see)
			}
			if got := tc.c.CanReadPersona(tc.p); got != tc.read {
				t.Errorf("CanReadPersona = %t, want %t", got, tc.read)
			}
			if got := tc.c.CanEditPersona(tc.p); got != tc.edit {
				t.Errorf("CanEditPersona = %t, want %t", got, tc.edit)
			}
			if got := tc.c.CheckDeletePersona(tc.p) == nil; got != tc.erase {
				t.Errorf("CheckDeletePersona allows = %t, want %t", got, tc.erase)
			}
		})
	}
}

// TestPersonaShares pins Onyx's update_persona_shared: legacy id lists keep
// each share's level, the owner is left out, and only owners and admins
// change whether it is public.
func TestPersonaShares(t *testing.T) {
	owner := "owner"
	editor := &quarry.Caller{User: quarry.User{ID: "ed", Role: quarry.RoleBasic}}
	p := &quarry.Persona{OwnerID: &owner, UserShares: []quarry.PersonaUserShare{{UserID: "ed", Permission: quarry.PersonaEditor}}}
	yes := true
	users, _, public, _ := editor.ApplyShares(p, quarry.PersonaShareInput{Users: &[]string{"ed", "new", owner}, IsPublic: &yes})
	want := []quarry.PersonaUserShare{{UserID: "ed", Permission: quarry.PersonaEditor}, {UserID: "new", Permission: quarry.PersonaViewer}}
	if len(users) != 2 || users[0] != want[0] || users[1] != want[1] {
		t.Errorf("users = %+v, want %+v", users, want)
	}
	if public {
		t.Error("an editor made the assistant public")
	}
}

// TestCheckChatPersona pins Onyx's 403 for an assistant one may not chat
// with: none, a deleted one, one not shared.
func TestCheckChatPersona(t *testing.T) {
	owner := "owner"
	c := &quarry.Caller{User: quarry.User{ID: "other", Role: quarry.RoleBasic}}
	for _, tc := range []struct {
		name string
		p    *quarry.Persona
		want error
	}{
		{"none", nil, quarry.ErrChatPersona},
		{"deleted", &quarry.Persona{IsListed: true, IsPublic: true, Deleted: true}, quarry.ErrChatPersona},
		{"private", &quarry.Persona{OwnerID: &owner, IsListed: true}, quarry.ErrChatPersona},
		{"public", &quarry.Persona{OwnerID: &owner, IsListed: true, IsPublic: true, PublicPermission: quarry.PersonaViewer}, nil},
	} {
		if got := c.CheckChatPersona(tc.p); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
