package quarry_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
)

// TestEffectivePermissions is the table of how a role and its groups'
// grants combine (quarry.EffectivePermissions), as GET /me/permissions
// lists them; the sets of Onyx v4.6.1 for the same grants are the same.
func TestEffectivePermissions(t *testing.T) {
	all := quarry.Permission("").EnumValues()
	basic := "basic generate:image read:chat read:search use:llm_gateway write:chat"
	for _, tt := range []struct {
		name   string
		role   quarry.Role
		grants []quarry.Permission
		want   string // sorted, space-separated
	}{
		{"admin, no group", quarry.RoleAdmin, nil, strings.Join(slices.Sorted(slices.Values(all)), " ")},
		{"admin, in Admin", quarry.RoleAdmin, []quarry.Permission{quarry.PermAdmin}, strings.Join(slices.Sorted(slices.Values(all)), " ")},
		{"basic, in Basic", quarry.RoleBasic, []quarry.Permission{quarry.PermBasic}, basic},
		{"basic, no group", quarry.RoleBasic, nil, basic},
		{"curator", quarry.RoleCurator, []quarry.Permission{quarry.PermBasic}, basic},
		{"global curator", quarry.RoleGlobalCurator, nil, basic},
		{"limited, whatever its groups", quarry.RoleLimited, []quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors}, ""},
		{"manage:connectors", quarry.RoleBasic, []quarry.Permission{quarry.PermBasic, quarry.PermManageConnectors},
			"add:connectors basic generate:image manage:connectors read:chat read:connectors read:search use:llm_gateway write:chat"},
		{"manage:user_groups", quarry.RoleBasic, []quarry.Permission{quarry.PermManageUserGroups},
			"basic generate:image manage:user_groups read:agents read:chat read:connectors read:document_sets read:search read:users use:llm_gateway write:chat"},
		{"manage:agents", quarry.RoleBasic, []quarry.Permission{quarry.PermManageAgents},
			"add:agents " + strings.Replace(basic, "read:chat", "manage:agents read:agents read:chat", 1)},
		{"add:agents", quarry.RoleCurator, []quarry.Permission{quarry.PermAddAgents},
			"add:agents " + strings.Replace(basic, "read:chat", "read:agents read:chat", 1)},
		{"manage:document_sets", quarry.RoleBasic, []quarry.Permission{quarry.PermManageDocumentSets},
			strings.Replace(basic, "read:chat", "manage:document_sets read:chat read:connectors read:document_sets", 1)},
		{"craft_sandbox", quarry.RoleBasic, []quarry.Permission{quarry.PermCraftSandbox}, "basic craft_sandbox " + basic[len("basic "):]},
		{"the same grant from two groups", quarry.RoleBasic, []quarry.Permission{quarry.PermManageLLMs, quarry.PermManageLLMs},
			"basic generate:image manage:llms read:chat read:search use:llm_gateway write:chat"},
		{"an unknown token is ignored", quarry.RoleBasic, []quarry.Permission{"fly"}, basic},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(quarry.EffectivePermissions(tt.role, tt.grants).Sorted(), " ")
			if got != tt.want {
				t.Errorf("EffectivePermissions(%s, %v)\n got %s\nwant %s", tt.role, tt.grants, got, tt.want)
			}
			// The caller's permissions are the same, worked out once or
			// each time.
			c := &quarry.Caller{User: quarry.User{Role: tt.role}, Grants: tt.grants}
			resolved := &quarry.Caller{User: quarry.User{Role: tt.role}}
			resolved.SetGrants(tt.grants)
			if c.Permissions() != quarry.EffectivePermissions(tt.role, tt.grants) || resolved.Permissions() != c.Permissions() {
				t.Errorf("Caller.Permissions differs from EffectivePermissions")
			}
		})
	}
}

func TestPermissionTokens(t *testing.T) {
	// Onyx v4.6.1's 26 values, in its order (backend/onyx/db/enums.py).
	want := []string{"basic", "read:connectors", "read:document_sets", "read:agents", "read:users", "read:search",
		"read:chat", "write:chat", "read:admin", "generate:image", "use:llm_gateway", "add:agents", "manage:agents",
		"manage:document_sets", "add:connectors", "manage:connectors", "manage:llms", "read:agent_analytics",
		"manage:actions", "read:query_history", "manage:user_groups", "create:user_api_keys",
		"create:service_account_api_keys", "create:slack_discord_bots", "craft_sandbox", "admin"}
	if diff := cmp.Diff(want, quarry.Permission("").EnumValues()); diff != "" {
		t.Errorf("EnumValues (-Onyx +Quarry):\n%s", diff)
	}
	var toggleable []string
	for _, v := range want {
		p := quarry.Permission(v)
		if p.Toggleable() {
			toggleable = append(toggleable, v)
			if err := p.CheckToggle(); err != nil {
				t.Errorf("CheckToggle(%s) = %v", p, err)
			}
		} else if got := errText(p.CheckToggle()); got != "invalid: Permission '"+v+"' cannot be toggled via this endpoint" {
			t.Errorf("CheckToggle(%s) = %q", p, got)
		}
	}
	// Onyx's 13 toggleable tokens.
	if diff := cmp.Diff([]string{"add:agents", "manage:agents", "manage:document_sets", "add:connectors", "manage:connectors",
		"manage:llms", "read:agent_analytics", "manage:actions", "read:query_history", "manage:user_groups",
		"create:user_api_keys", "create:service_account_api_keys", "create:slack_discord_bots"}, toggleable); diff != "" {
		t.Errorf("toggleable (-Onyx +Quarry):\n%s", diff)
	}
	if quarry.Permission("fly").Valid() || quarry.Permission("fly").Toggleable() {
		t.Error("an unknown token is valid")
	}
	if got := quarry.GrantList([]quarry.Permission{quarry.PermManageLLMs, quarry.PermBasic, quarry.PermManageLLMs}); !cmp.Equal(got,
		[]quarry.Permission{quarry.PermBasic, quarry.PermManageLLMs}) {
		t.Errorf("GrantList = %v, want [basic manage:llms]", got)
	}
}

// TestGates is the table of the route gates (api/handler.go asks these):
// what each role opens, and what each grant adds to a basic user.
func TestGates(t *testing.T) {
	caller := func(r quarry.Role, grants ...quarry.Permission) *quarry.Caller {
		c := &quarry.Caller{User: quarry.User{Role: r}}
		c.SetGrants(grants)
		return c
	}
	type doors struct{ basic, admin, connectors, groups, groupAdmin, actions, users bool }
	for _, tt := range []struct {
		name string
		c    *quarry.Caller
		want doors
	}{
		{"admin", caller(quarry.RoleAdmin, quarry.PermAdmin), doors{true, true, true, true, true, true, true}},
		{"global curator", caller(quarry.RoleGlobalCurator, quarry.PermBasic), doors{true, false, true, true, false, true, true}},
		{"curator", caller(quarry.RoleCurator, quarry.PermBasic), doors{true, false, true, true, false, true, true}},
		{"basic", caller(quarry.RoleBasic, quarry.PermBasic), doors{basic: true}},
		{"limited", caller(quarry.RoleLimited), doors{}},
		{"limited in a group that manages connectors", caller(quarry.RoleLimited, quarry.PermManageConnectors), doors{}},
		{"basic, manage:connectors", caller(quarry.RoleBasic, quarry.PermBasic, quarry.PermManageConnectors),
			doors{basic: true, connectors: true}},
		{"basic, add:connectors (opens nothing more)", caller(quarry.RoleBasic, quarry.PermAddConnectors), doors{basic: true}},
		{"basic, manage:user_groups", caller(quarry.RoleBasic, quarry.PermManageUserGroups),
			doors{basic: true, groups: true, groupAdmin: true, users: true}},
		{"basic, manage:actions", caller(quarry.RoleBasic, quarry.PermManageActions), doors{basic: true, actions: true}},
		{"basic, manage:llms (opens nothing)", caller(quarry.RoleBasic, quarry.PermManageLLMs), doors{basic: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := doors{tt.c.Has(quarry.PermBasic), tt.c.Has(quarry.PermAdmin), tt.c.CanReachConnectors(),
				tt.c.CanReachGroups(), tt.c.ManagesGroups(), tt.c.CanReachActions(), tt.c.CanListUsers()}
			if got != tt.want {
				t.Errorf("doors %+v, want %+v", got, tt.want)
			}
			if tt.c.IsAdmin() != tt.want.admin {
				t.Errorf("IsAdmin = %t", tt.c.IsAdmin())
			}
		})
	}
}
