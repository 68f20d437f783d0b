package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// Group permissions and the default groups (docs/decisions.md, "Group
// permissions and default groups"), with Onyx v4.6.1's routes.

// fxBasicPerms is what a basic user holds: basic and what it implies.
const fxBasicPerms = `["basic","generate:image","read:chat","read:search","use:llm_gateway","write:chat"]`

// fxAllPerms is what an admin holds: every token, sorted.
var fxAllPerms = func() string {
	return fxJSON(quarry.EffectivePermissions(quarry.RoleAdmin, nil).Sorted())
}()

// grant gives group g permission p (or takes it back) as the test's admin.
func (f fx) grant(g int64, p quarry.Permission, enabled bool) {
	f.t.Helper()
	f.do(f.admin, "PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g), map[string]any{"permission": p, "enabled": enabled}).
		want(f.t, 200, fmt.Sprintf(`{"permission":%q,"enabled":%t}`, p, enabled))
}

func TestSupportGroupPermissions(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	basic := e.user(quarry.RoleBasic, "basic")
	cur := e.user(quarry.RoleCurator, "cur")
	limited := e.user(quarry.RoleLimited, "limited")
	g := f.group("ops", []user{basic})
	path := func(id any) string { return fmt.Sprintf("/manage/admin/user-group/%v/permissions", id) }

	t.Run("me", func(t *testing.T) {
		e.do(e.admin, "GET", "/me/permissions", nil).want(t, 200, fxAllPerms)
		e.do(basic, "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
		e.do(cur, "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
		e.do(limited, "GET", "/me/permissions", nil).want(t, 403, fxLimited)
		e.do(user{}, "GET", "/me/permissions", nil).want(t, 401, fxNotAuthed)
	})
	t.Run("a group's", func(t *testing.T) {
		e.do(e.admin, "GET", path(g), nil).want(t, 200, `["basic"]`)
		e.do(e.admin, "GET", path(adminGroupID), nil).want(t, 200, `["admin"]`)
		e.do(e.admin, "GET", path(basicGroupID), nil).want(t, 200, `["basic"]`)
		e.do(e.admin, "GET", path(9999), nil).want(t, 404, `{"detail":"User group 9999 does not exist"}`)
		e.do(e.admin, "GET", path("abc"), nil).want(t, 422, `{"detail":[`+fxIntParsing("group_id", "abc")+`]}`)
		e.do(cur, "GET", path(g), nil).want(t, 403, fxNotAdmin)
	})
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		body   any
		status int
		want   string
	}{
		{"grant", e.admin, path(g), `{"permission":"manage:connectors","enabled":true}`, 200, `{"permission":"manage:connectors","enabled":true}`},
		{"grant again", e.admin, path(g), `{"permission":"manage:connectors","enabled":"yes"}`, 200, `{"permission":"manage:connectors","enabled":true}`},
		{"take back one not granted", e.admin, path(g), `{"permission":"manage:llms","enabled":false}`, 200, `{"permission":"manage:llms","enabled":false}`},
		{"basic", e.admin, path(g), `{"permission":"basic","enabled":false}`, 400, `{"detail":"Permission 'basic' cannot be toggled via this endpoint"}`},
		{"admin", e.admin, path(g), `{"permission":"admin","enabled":true}`, 400, `{"detail":"Permission 'admin' cannot be toggled via this endpoint"}`},
		{"an implied token", e.admin, path(g), `{"permission":"read:users","enabled":true}`, 400, `{"detail":"Permission 'read:users' cannot be toggled via this endpoint"}`},
		{"craft_sandbox", e.admin, path(g), `{"permission":"craft_sandbox","enabled":true}`, 400, `{"detail":"Permission 'craft_sandbox' cannot be toggled via this endpoint"}`},
		{"unknown group", e.admin, path(9999), `{"permission":"manage:llms","enabled":true}`, 404, `{"detail":"User group 9999 does not exist"}`},
		{"curator", cur, path(g), `{"permission":"manage:llms","enabled":true}`, 403, fxNotAdmin},
		{"a member of the group", basic, path(g), `{"permission":"manage:llms","enabled":true}`, 403, fxNotAdmin},
		{"no token", user{}, path(g), `{}`, 401, fxNotAuthed},
	} {
		t.Run("put/"+tt.name, func(t *testing.T) {
			e.do(tt.u, "PUT", tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("put/golden 422 bodies", func(t *testing.T) {
		for _, gc := range fxGoldens(t, "setPermission") {
			t.Run(gc.Name, func(t *testing.T) { f.replay(t, e.admin, "PUT", "", gc) })
		}
	})
	t.Run("the members hold it", func(t *testing.T) {
		e.do(e.admin, "GET", path(g), nil).want(t, 200, `["basic","manage:connectors"]`)
		e.do(basic, "GET", "/me/permissions", nil).want(t, 200,
			`["add:connectors","basic","generate:image","manage:connectors","read:chat","read:connectors","read:search","use:llm_gateway","write:chat"]`)
		e.do(cur, "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
		// A grant to the default group Basic reaches every basic user,
		// curator and global curator; admins hold everything anyway.
		f.grant(basicGroupID, quarry.PermManageLLMs, true)
		e.do(cur, "GET", "/me/permissions", nil).want(t, 200,
			`["basic","generate:image","manage:llms","read:chat","read:search","use:llm_gateway","write:chat"]`)
		f.grant(basicGroupID, quarry.PermManageLLMs, false)
		f.grant(g, quarry.PermManageConnectors, false)
		e.do(basic, "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
		e.do(e.admin, "GET", path(g), nil).want(t, 200, `["basic"]`)
	})
	t.Run("audit", func(t *testing.T) {
		var got []string
		for _, a := range f.audit(fmt.Sprintf("resource_type=user_group&resource_id=%d", g)) {
			if a.Action == "user_group.set_permission" {
				got = append(got, fmt.Sprint(a.Fields))
			}
		}
		// Newest first: the grant taken back, the grant again, the grant
		// taken back that was not there, the grant.
		if want := "[[permissions] [] [] [permissions]]"; fmt.Sprint(got) != want {
			t.Errorf("user_group.set_permission entries with fields %v, want %s", got, want)
		}
	})
}

// fxDefaultGroupJSON is the expected UserGroup of a default group, made by
// the migration at created (its clock, not the test's).
func fxDefaultGroupJSON(id int64, name string, users []string, created string) string {
	return fmt.Sprintf(`{"id":%d,"name":%q,"users":[%s],"curator_ids":[],"cc_pairs":[],"document_sets":[],"personas":[],
		"is_up_to_date":true,"is_up_for_deletion":false,"is_default":true,"incognito_enabled":false,"cc_pair_ids":[],"time_created":%q,"time_updated":%q,
		"is_scim_synced":false}`,
		id, name, strings.Join(users, ","), created, created)
}

func TestSupportDefaultGroups(t *testing.T) {
	c := newFxCast(t)
	// The default groups were made by the migration, at its own time.
	var groups []struct {
		Time string `json:"time_created"`
	}
	c.do(c.admin, "GET", "/manage/admin/user-group?include_default=true", nil).decode(t, &groups)
	created := groups[0].Time
	admin := fxMemberJSON(c.admin, quarry.RoleAdmin)
	// The members of Basic, in email order: basic, curator, global, other.
	basics := []string{fxMemberJSON(c.basic, quarry.RoleBasic), fxMemberJSON(c.curator, quarry.RoleCurator),
		fxMemberJSON(c.global, quarry.RoleGlobalCurator), fxMemberJSON(c.other, quarry.RoleCurator)}
	custom := []string{
		fxGroupJSON(c.gA, "A", []string{fxMemberJSON(c.curator, quarry.RoleCurator)}, []string{c.curator.id}, nil),
		fxGroupJSON(c.gB, "B", []string{fxMemberJSON(c.curator, quarry.RoleCurator), fxMemberJSON(c.global, quarry.RoleGlobalCurator),
			fxMemberJSON(c.other, quarry.RoleCurator)}, []string{c.other.id}, nil),
		fxGroupJSON(c.gC, "C", nil, nil, nil),
	}
	t.Run("listed on request", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/admin/user-group", nil).want(t, 200, "["+strings.Join(custom, ",")+"]")
		c.do(c.admin, "GET", "/manage/admin/user-group?include_default=true", nil).want(t, 200, "["+
			fxDefaultGroupJSON(adminGroupID, "Admin", []string{admin}, created)+","+
			fxDefaultGroupJSON(basicGroupID, "Basic", basics, created)+","+strings.Join(custom, ",")+"]")
		c.do(c.admin, "GET", "/manage/admin/user-group?include_default=maybe", nil).want(t, 422,
			`{"detail":[{"type":"bool_parsing","loc":["query","include_default"],"msg":"Input should be a valid boolean, unable to interpret input","input":"maybe"}]}`)
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, gc := range fxGoldens(t, "groupsQuery") {
			t.Run(gc.Name, func(t *testing.T) { c.replay(t, c.admin, "GET", "", gc) })
		}
	})
	conn := c.connector(c.admin, "wiki", "web")
	k := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, k, "p", quarry.AccessPublic)
	group := func(id int64) string { return fmt.Sprint("/manage/admin/user-group/", id) }
	shareDefault := `{"detail":"Cannot share with the default system group(s): %s. Make the resource public instead."}`
	for _, tt := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"delete", "DELETE", group(basicGroupID), nil, 409, `{"detail":"Cannot delete a default system group."}`},
		{"rename", "PATCH", group(adminGroupID), `{"name":"Admins"}`, 409, `{"detail":"Cannot rename a default system group."}`},
		{"change the members", "PATCH", group(basicGroupID), fmt.Sprintf(`{"user_ids":[%q]}`, c.basic.id), 409,
			`{"detail":"The members of a default group follow their roles: change the role instead"}`},
		{"add a member", "POST", group(adminGroupID) + "/add-users", fmt.Sprintf(`{"user_ids":[%q]}`, c.basic.id), 409,
			`{"detail":"The members of a default group follow their roles: change the role instead"}`},
		{"share a pair through the group", "PATCH", group(basicGroupID), fmt.Sprintf(`{"cc_pair_ids":[%d]}`, p), 400, fmt.Sprintf(shareDefault, "Basic")},
		{"share a credential", "POST", "/manage/credential", fxCredentialBody("web", fxSecret, "groups", []int64{basicGroupID}), 400,
			fmt.Sprintf(shareDefault, "Basic")},
		{"share a pair", "PUT", fxPairPath(conn, c.credential(c.admin, "web", fxSecret)), map[string]any{"name": "q", "access_type": "private",
			"groups": []int64{c.gA, adminGroupID, basicGroupID}}, 400, fmt.Sprintf(shareDefault, "Admin, Basic")},
		{"share a connector", "POST", "/manage/admin/connector", fxConnectorBody("other", "web", "groups", []int64{basicGroupID}), 400,
			fmt.Sprintf(shareDefault, "Basic")},
		{"a curator flag", "POST", group(basicGroupID) + "/set-curator", map[string]any{"user_id": c.basic.id, "is_curator": true}, 400,
			`{"detail":"A default group has no curators"}`},
		{"a group named like one", "POST", "/manage/admin/user-group", `{"name":"ADMIN"}`, 409, `{"detail":"The name 'ADMIN' is reserved for a default group"}`},
		// A global curator curates the groups it is a member of, Basic
		// among them, but no more than anyone else may change it.
		{"a global curator, its default group", "PATCH", group(basicGroupID), `{"user_ids":[]}`, 409,
			`{"detail":"The members of a default group follow their roles: change the role instead"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := c.admin
			if strings.HasPrefix(tt.name, "a global curator") {
				u = c.global
			}
			c.do(u, tt.method, tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("nothing changed", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/admin/user-group?include_default=true", nil).want(t, 200, "["+
			fxDefaultGroupJSON(adminGroupID, "Admin", []string{admin}, created)+","+
			fxDefaultGroupJSON(basicGroupID, "Basic", basics, created)+","+strings.Join(custom, ",")+"]")
	})
}

// TestSupportPermissionHolders: a basic user whose group is granted
// manage:connectors, manage:user_groups or manage:actions uses the routes
// of those objects with an admin's authority over them, and no more; the
// grant taken back, it is a basic user again.
func TestSupportPermissionHolders(t *testing.T) {
	c := newFxCast(t)
	m := c.env.user(quarry.RoleBasic, "manager")
	g := c.group("managers", []user{m})
	hidden := c.connector(c.admin, "hidden", "web", "groups", []int64{c.gC})
	k := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	p := c.pair(c.admin, hidden, k, "p", quarry.AccessPrivate, c.gC)
	tool := c.env.createTool(c.admin, fmt.Sprintf(`{"name":"admins","definition":%s,"passthrough_auth":false}`, pingDefinition))
	conn := func(name string) map[string]any { return fxConnectorBody(name, "web") }

	t.Run("manage:connectors", func(t *testing.T) {
		c.do(m, "POST", "/manage/admin/connector", conn("mine")).want(t, 403, fxNotCurator)
		c.do(m, "GET", fmt.Sprint("/manage/connector/", hidden), nil).want(t, 403, fxNotCurator)
		c.grant(g, quarry.PermManageConnectors, true)
		mine := c.fxOK(c.do(m, "POST", "/manage/admin/connector", conn("mine")))
		// Every connector, credential and pair, as an admin.
		c.do(m, "GET", fmt.Sprint("/manage/connector/", hidden), nil).want(t, 200,
			fxShared(fxConnectorJSON(hidden, "hidden", "web", k), "private", c.gC))
		c.do(m, "PATCH", fmt.Sprint("/manage/credential/", k), `{"name":"renamed"}`).decode(t, new(any))
		c.do(m, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/name?new_name=q", p), nil).want(t, 200,
			fmt.Sprintf(`{"success":true,"message":"Name updated successfully","data":%d}`, p))
		c.do(m, "DELETE", fmt.Sprint("/manage/admin/connector/", mine), nil).want(t, 200,
			fmt.Sprintf(`{"success":true,"message":"Connector deleted successfully","data":%d}`, mine))
		// Not groups, tools or people.
		c.do(m, "GET", "/manage/admin/user-group", nil).want(t, 403, fxNotAdmin)
		c.do(m, "PATCH", "/admin/tool/status", fmt.Sprintf(`{"tool_ids":[%d],"enabled":false}`, tool)).want(t, 403, fxNotCurator)
		c.do(m, "GET", "/manage/users", nil).want(t, 403, fxNotCurator)
		c.grant(g, quarry.PermManageConnectors, false)
		c.do(m, "GET", fmt.Sprint("/manage/connector/", hidden), nil).want(t, 403, fxNotCurator)
	})
	t.Run("manage:user_groups", func(t *testing.T) {
		c.grant(g, quarry.PermManageUserGroups, true)
		made := c.fxOK(c.do(m, "POST", "/manage/admin/user-group", map[string]any{"name": "made by a manager", "user_ids": []string{c.basic.id}}))
		c.do(m, "PATCH", fmt.Sprint("/manage/admin/user-group/", c.gA), `{"name":"A renamed"}`).decode(t, new(any))
		c.do(m, "POST", fmt.Sprintf("/manage/admin/user-group/%d/set-curator", made), map[string]any{"user_id": c.basic.id, "is_curator": true}).
			want(t, 200, `null`)
		c.do(m, "GET", "/manage/users", nil).decode(t, new(any))
		c.do(m, "DELETE", fmt.Sprint("/manage/admin/user-group/", made), nil).want(t, 200, `null`)
		// A group's permissions stay an admin's.
		c.do(m, "PUT", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g), `{"permission":"manage:actions","enabled":true}`).
			want(t, 403, fxNotAdmin)
		c.do(m, "GET", fmt.Sprintf("/manage/admin/user-group/%d/permissions", g), nil).want(t, 403, fxNotAdmin)
		// Sharing a pair through a group is changing who sees it: the
		// holder may, as an admin.
		c.do(m, "PATCH", fmt.Sprint("/manage/admin/user-group/", c.gA), fmt.Sprintf(`{"cc_pair_ids":[%d]}`, p)).decode(t, new(any))
		c.grant(g, quarry.PermManageUserGroups, false)
		c.do(m, "GET", "/manage/admin/user-group", nil).want(t, 403, fxNotAdmin)
	})
	t.Run("manage:actions", func(t *testing.T) {
		update := fmt.Sprintf("/admin/tool/custom/%d", tool)
		c.do(m, "PUT", update, `{"description":"by a manager"}`).want(t, 403, fxNotCurator)
		c.grant(g, quarry.PermManageActions, true)
		var out struct {
			Description string `json:"description"`
		}
		c.do(m, "PUT", update, `{"description":"by a manager"}`).decode(t, &out)
		if out.Description != "by a manager" {
			t.Errorf("description %q", out.Description)
		}
		c.do(m, "PATCH", "/admin/tool/status", fmt.Sprintf(`{"tool_ids":[%d],"enabled":false}`, tool)).
			want(t, 200, fmt.Sprintf(`{"updated_count":1,"tool_ids":[%d]}`, tool))
		c.grant(g, quarry.PermManageActions, false)
		c.do(m, "PUT", update, `{"description":"again"}`).want(t, 403, fxNotCurator)
	})
}

// fxListedJSON is a user as GET /manage/users lists it: Onyx's
// FullUserSnapshot without groups, not the directory's.
func fxListedJSON(id, email string, name any, role, accountType string, password bool) string {
	return fmt.Sprintf(`{"id":%q,"email":%q,"role":%q,"account_type":%q,"is_active":true,"password_configured":%t,
		"personal_name":%s,"created_at":%q,"updated_at":%q,"groups":[],"is_scim_synced":false,"craft_enabled":null,"sso_issuers":[],
		"scim_active":null}`,
		id, email, role, accountType, password, fxJSON(name), testNowJSON, testNowJSON)
}

func TestSupportAllUsers(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	ada := e.person("ada@example.com") // the first person: an admin
	bob := e.person("bob@example.com")
	cur := e.user(quarry.RoleCurator, "cur")
	basic := e.user(quarry.RoleBasic, "basic")
	e.do(ada, "PUT", "/manage/admin/users", `{"emails": ["carol@example.com", "bobby@example.org"]}`).want(t, 200, `2`)
	people := []string{fxListedJSON(ada.id, ada.email, nil, "admin", "STANDARD", true), fxListedJSON(bob.id, bob.email, nil, "basic", "STANDARD", true)}
	keys := []string{
		fxListedJSON(e.admin.id, e.admin.email, "admin", "admin", "SERVICE_ACCOUNT", false),
		fxListedJSON(basic.id, basic.email, "basic", "basic", "SERVICE_ACCOUNT", false),
		fxListedJSON(cur.id, cur.email, "cur", "curator", "SERVICE_ACCOUNT", false),
	}
	body := func(accepted []string, invited string, pages ...int) string {
		if pages == nil {
			pages = []int{1, 1, 1}
		}
		return fmt.Sprintf(`{"accepted":[%s],"invited":%s,"slack_users":[],"accepted_pages":%d,"invited_pages":%d,"slack_users_pages":%d}`,
			strings.Join(accepted, ","), invited, pages[0], pages[1], pages[2])
	}
	invited := `[{"email":"bobby@example.org"},{"email":"carol@example.com"}]`
	for _, tt := range []struct {
		name, query string
		u           user
		status      int
		want        string
	}{
		{"people and invitations", "", ada, 200, body(people, invited)},
		// Ascending by email: ada, api_key__…, bob.
		{"with the keys' service accounts", "?include_api_keys=true", ada, 200, body(slices.Concat(people[:1], keys, people[1:]), invited)},
		{"a part of the email", "?q=BO", ada, 200, body(people[1:], invited[:len(`[{"email":"bobby@example.org"}`)]+"]")},
		{"not the name", "?q=cur&include_api_keys=true", ada, 200, body([]string{keys[2]}, "[]")},
		{"pages", "?accepted_page=0&invited_page=0&slack_users_page=0", ada, 200, body(people, invited, 1, 1, 0)},
		{"a page past the end", "?accepted_page=1&invited_page=1&slack_users_page=0", ada, 200, body(nil, "[]", 1, 1, 0)},
		{"not all pages given", "?accepted_page=1", ada, 200, body(people, invited)},
		{"a curator", "", cur, 200, body(people, invited)},
		{"a basic user", "", basic, 403, fxNotCurator},
		{"no token", "", user{}, 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, "GET", "/manage/users"+tt.query, nil).want(t, tt.status, tt.want)
		})
	}
	t.Run("a revoked key's user is not listed", func(t *testing.T) {
		e.do(ada, "DELETE", fmt.Sprint("/admin/api-key/", fx{e}.keyID(basic)), nil).want(t, 200, `null`)
		e.do(ada, "GET", "/manage/users?include_api_keys=true", nil).want(t, 200, body([]string{people[0], keys[0], keys[2], people[1]}, invited))
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, gc := range fxGoldens(t, "allUsersQuery") {
			t.Run(gc.Name, func(t *testing.T) { fx{e}.replay(t, ada, "GET", "", gc) })
		}
	})
}
