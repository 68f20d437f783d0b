package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// User groups and curator flags (contract section 6; decisions.md "Users
// and keys").

// fxGroupPair is a cc-pair shared with a group: its id, and its expected
// CCPairDescriptor (see fxPairDescJSON).
type fxGroupPair struct {
	id   int64
	desc string
}

// fxPairDescJSON is the expected CCPairDescriptor of a pair, as user groups
// list it, with the expected ConnectorSnapshot and CredentialSnapshot of its
// connector and credential.
func fxPairDescJSON(id int64, name string, access quarry.AccessType, connector, credential string) string {
	return fmt.Sprintf(`{"id":%d,"name":%q,"connector":%s,"credential":%s,"access_type":%q}`, id, name, connector, credential, access)
}

// fxMemberJSON is the expected member u of a group (Onyx's UserInfo): a
// service account made by env.user at the fixed clock.
func fxMemberJSON(u user, role quarry.Role) string {
	return fmt.Sprintf(`{"id":%q,"email":%q,"name":%q,"role":%q,"is_active":true,"service_account":true,"created_at":%q,
		"is_superuser":false,"is_verified":false,"preferences":{},"is_scim_synced":false}`, u.id, u.email, u.name, role, testNowJSON)
}

// fxGroupJSON is the expected UserGroup; users are given in email order,
// pairs in id order.
func fxGroupJSON(id int64, name string, users []string, curatorIDs []string, pairs []fxGroupPair) string {
	return fxGroupJSONAt(id, name, users, curatorIDs, pairs, 0)
}

// fxGroupJSONAt is fxGroupJSON for a group changed n times since its
// creation: each change moves time_updated on by a microsecond.
func fxGroupJSONAt(id int64, name string, users []string, curatorIDs []string, pairs []fxGroupPair, n int) string {
	if curatorIDs == nil {
		curatorIDs = []string{}
	}
	ids, descs := []int64{}, []string{}
	for _, p := range pairs {
		ids, descs = append(ids, p.id), append(descs, p.desc)
	}
	return fmt.Sprintf(`{"id":%d,"name":%q,"users":[%s],"curator_ids":%s,"cc_pairs":[%s],"document_sets":[],"personas":[],
		"is_up_to_date":true,"is_up_for_deletion":false,"is_default":false,"incognito_enabled":false,"cc_pair_ids":%s,"time_created":%q,
		"time_updated":%q,"is_scim_synced":false}`,
		id, name, strings.Join(users, ","), fxJSON(curatorIDs), strings.Join(descs, ","), fxJSON(ids), testNowJSON, fxLater(n))
}

func TestSupportUserGroups(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	b1, b2 := e.user(quarry.RoleBasic, "b1"), e.user(quarry.RoleBasic, "b2") // b1's email sorts first
	cur := e.user(quarry.RoleCurator, "cur")
	limited := e.user(quarry.RoleLimited, "limited")
	conn := f.connector(e.admin, "c", "web")
	k := f.credential(e.admin, "web", fxSecret)
	k2 := f.credential(e.admin, "not_applicable", fxSecret)
	p1 := f.pair(e.admin, conn, k, "p1", "public")
	p2 := f.pair(e.admin, conn, k2, "p2", "public")
	basicJSON := func(u user) string { return fxMemberJSON(u, quarry.RoleBasic) }
	connJSON := fxConnectorJSON(conn, "c", "web", k, k2)
	gp1 := fxGroupPair{p1, fxPairDescJSON(p1, "p1", "public", connJSON, fxCred{id: k, owner: e.admin, source: "web", masked: fxMasked}.String())}
	gp2 := fxGroupPair{p2, fxPairDescJSON(p2, "p2", "public", connJSON,
		fxCred{id: k2, owner: e.admin, source: "not_applicable", masked: fxMasked}.String())}

	var eng, empty int64
	t.Run("create", func(t *testing.T) {
		r := e.do(e.admin, "POST", "/manage/admin/user-group",
			map[string]any{"name": "eng", "user_ids": []string{b2.id, b1.id, b1.id}, "cc_pair_ids": []int64{p2, p1, p2}})
		var out struct{ ID int64 }
		r.decode(t, &out)
		eng = out.ID
		r.want(t, 200, fxGroupJSON(eng, "eng", []string{basicJSON(b1), basicJSON(b2)}, nil, []fxGroupPair{gp1, gp2}))
		r = e.do(e.admin, "POST", "/manage/admin/user-group", `{"name":"empty"}`)
		r.decode(t, &out)
		empty = out.ID
		r.want(t, 200, fxGroupJSON(empty, "empty", nil, nil, nil))
	})
	for _, tt := range []struct {
		name   string
		u      user
		body   any
		status int
		want   string
	}{
		{"duplicate name", e.admin, `{"name":"eng"}`, 409, `{"detail":"User group with name 'eng' already exists. Please choose a different name."}`},
		{"unknown user", e.admin, `{"name":"x","user_ids":["nope"]}`, 404, `{"detail":"User(s) not found: nope"}`},
		{"unknown users, as Onyx names them", e.admin, fmt.Sprintf(`{"name":"x","user_ids":["b",%q,"a","b"]}`, b1.id), 404,
			`{"detail":"User(s) not found: b, a"}`},
		{"a default group's name", e.admin, `{"name":"basic"}`, 409, `{"detail":"The name 'basic' is reserved for a default group"}`},
		{"a lookalike of a default group's name", e.admin, `{"name":"\u0410dmin"}`, 409, `{"detail":"The name '\u0410dmin' is reserved for a default group"}`},
		{"a default group's name with a zero-width space", e.admin, `{"name":"Admin\u200b"}`, 409, `{"detail":"The name 'Admin\u200b' is reserved for a default group"}`},
		{"unknown cc-pair", e.admin, fmt.Sprintf(`{"name":"x","cc_pair_ids":[%d,9999]}`, p1), 400, `{"detail":"CC pair 9999 does not exist"}`},
		{"curator", cur, `{"name":"x"}`, 403, fxNotAdmin},
		{"basic", b1, `{"name":"x"}`, 403, fxNotAdmin},
		{"limited", limited, `{"name":"x"}`, 403, fxNotAdmin},
		{"no token", user{}, `{"name":"x"}`, 401, fxNotAuthed},
		{"no body", e.admin, nil, 422, fxMissingBody},
		{"user_ids null", e.admin, `{"name":"x","user_ids":null}`, 422, `{"detail":[{"type":"list_type","loc":["body","user_ids"],"msg":"Input should be a valid list","input":null}]}`},
		{"name null", e.admin, `{"name":null}`, 422, `{"detail":[{"type":"string_type","loc":["body","name"],"msg":"Input should be a valid string","input":null}]}`},
	} {
		t.Run("create/"+tt.name, func(t *testing.T) {
			e.do(tt.u, "POST", "/manage/admin/user-group", tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("create/golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "userGroupCreate") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "POST", "", g) })
		}
	})
	t.Run("list", func(t *testing.T) {
		e.do(e.admin, "GET", "/manage/admin/user-group", nil).want(t, 200, "["+
			fxGroupJSON(eng, "eng", []string{basicJSON(b1), basicJSON(b2)}, nil, []fxGroupPair{gp1, gp2})+","+
			fxGroupJSON(empty, "empty", nil, nil, nil)+"]")
		e.do(cur, "GET", "/manage/admin/user-group", nil).want(t, 403, fxNotAdmin)
		e.do(user{}, "GET", "/manage/admin/user-group", nil).want(t, 401, fxNotAuthed)
	})

	path := func(id int64) string { return fmt.Sprint("/manage/admin/user-group/", id) }
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		body   any
		status int
		want   string
	}{
		{"rename", e.admin, path(eng), `{"name":"eng 2"}`, 200,
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1), basicJSON(b2)}, nil, []fxGroupPair{gp1, gp2}, 1)},
		{"nothing", e.admin, path(eng), `{}`, 200,
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1), basicJSON(b2)}, nil, []fxGroupPair{gp1, gp2}, 2)},
		{"nulls change nothing", e.admin, path(eng), `{"name":null,"user_ids":null,"cc_pair_ids":null}`, 200,
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1), basicJSON(b2)}, nil, []fxGroupPair{gp1, gp2}, 3)},
		{"members", e.admin, path(eng), fmt.Sprintf(`{"user_ids":[%q]}`, b1.id), 200,
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1)}, nil, []fxGroupPair{gp1, gp2}, 4)},
		{"cc-pairs", e.admin, path(eng), fmt.Sprintf(`{"cc_pair_ids":[%d]}`, p2), 200,
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1)}, nil, []fxGroupPair{gp2}, 5)},
		{"own name", e.admin, path(eng), `{"name":"eng 2"}`, 200,
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1)}, nil, []fxGroupPair{gp2}, 6)},
		{"name taken", e.admin, path(eng), `{"name":"empty"}`, 409, `{"detail":"User group with name 'empty' already exists. Please choose a different name."}`},
		{"unknown user", e.admin, path(eng), `{"user_ids":["nope"]}`, 404, `{"detail":"User(s) not found: nope"}`},
		{"a default group's name", e.admin, path(eng), `{"name":"Admin"}`, 409, `{"detail":"The name 'Admin' is reserved for a default group"}`},
		{"a lookalike of a default group's name", e.admin, path(eng), `{"name":"Adm\u0131n"}`, 409, `{"detail":"The name 'Adm\u0131n' is reserved for a default group"}`},
		{"unknown cc-pair", e.admin, path(eng), `{"cc_pair_ids":[9999]}`, 400, `{"detail":"CC pair 9999 does not exist"}`},
		{"unknown group", e.admin, path(9999), `{"name":"x"}`, 404, `{"detail":"User group 9999 does not exist"}`},
		{"bad id", e.admin, "/manage/admin/user-group/abc", `{"name":"x"}`, 422, `{"detail":[` + fxIntParsing("group_id", "abc") + `]}`},
		{"no body", e.admin, path(eng), nil, 422, fxMissingBody},
		{"curator of no group", cur, path(eng), `{}`, 403, `{"detail":"Curators can only change the user groups they curate"}`},
		{"curator, unknown group", cur, path(9999), `{}`, 403, `{"detail":"Curators can only change the user groups they curate"}`},
		{"basic", b1, path(eng), `{}`, 403, fxNotCurator},
		{"no token", user{}, path(eng), `{}`, 401, fxNotAuthed},
	} {
		t.Run("patch/"+tt.name, func(t *testing.T) {
			e.do(tt.u, "PATCH", tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("patch/golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "userGroupUpdate") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "PATCH", "", g) })
		}
	})
	t.Run("patch/failed changes left nothing behind", func(t *testing.T) {
		e.do(e.admin, "PATCH", path(eng), fmt.Sprintf(`{"name":"eng 3","user_ids":[%q],"cc_pair_ids":[9999]}`, b2.id)).
			want(t, 400, `{"detail":"CC pair 9999 does not exist"}`)
		e.do(e.admin, "GET", "/manage/admin/user-group", nil).want(t, 200, "["+
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1)}, nil, []fxGroupPair{gp2}, 6)+","+
			fxGroupJSON(empty, "empty", nil, nil, nil)+"]")
	})

	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		want   string
	}{
		{"curator", cur, path(empty), 403, fxNotAdmin},
		{"no token", user{}, path(empty), 401, fxNotAuthed},
		{"bad id", e.admin, "/manage/admin/user-group/abc", 422, `{"detail":[` + fxIntParsing("group_id", "abc") + `]}`},
		{"unknown", e.admin, path(9999), 404, `{"detail":"User group 9999 does not exist"}`},
		{"delete", e.admin, path(empty), 200, `null`},
		{"deleted", e.admin, path(empty), 404, fmt.Sprintf(`{"detail":"User group %d does not exist"}`, empty)},
	} {
		t.Run("delete/"+tt.name, func(t *testing.T) {
			e.do(tt.u, "DELETE", tt.path, nil).want(t, tt.status, tt.want)
		})
	}
	t.Run("delete/what is left", func(t *testing.T) {
		e.do(e.admin, "GET", "/manage/admin/user-group", nil).want(t, 200, "["+
			fxGroupJSONAt(eng, "eng 2", []string{basicJSON(b1)}, nil, []fxGroupPair{gp2}, 6)+"]")
	})
	t.Run("delete/a group with pairs and credentials", func(t *testing.T) {
		g := f.group("shared", []user{b1})
		kg := f.credential(e.admin, "web", fxSecret, "groups", []int64{g}, "admin_public", true)
		pg := f.pair(e.admin, conn, kg, "pg", "private", g)
		e.do(e.admin, "DELETE", path(g), nil).want(t, 200, `null`)
		e.do(e.admin, "GET", fmt.Sprint("/manage/credential/", kg), nil).
			want(t, 200, fxCred{id: kg, owner: e.admin, source: "web", masked: fxMasked, adminPublic: true}.String())
		var status []struct {
			CCPairID int64   `json:"cc_pair_id"`
			Groups   []int64 `json:"groups"`
		}
		e.do(e.admin, "GET", "/manage/admin/connector/status", nil).decode(t, &status)
		for _, s := range status {
			if s.CCPairID == pg && len(s.Groups) != 0 {
				t.Errorf("cc-pair %d still shared with %v", pg, s.Groups)
			}
		}
	})
}

func TestSupportSetCurator(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	b1, b2 := e.user(quarry.RoleBasic, "b1"), e.user(quarry.RoleBasic, "b2")
	outsider := e.user(quarry.RoleBasic, "outsider")
	admin2 := e.user(quarry.RoleAdmin, "admin2")
	global := e.user(quarry.RoleGlobalCurator, "global")
	limited := e.user(quarry.RoleLimited, "limited")
	cur := e.user(quarry.RoleCurator, "cur")
	g1 := f.group("one", []user{b1, b2, admin2, global, limited, cur})
	g2 := f.group("two", []user{b1, b2})
	path := func(id int64) string { return fmt.Sprintf("/manage/admin/user-group/%d/set-curator", id) }
	body := func(u user, on bool) string { return fmt.Sprintf(`{"user_id":%q,"is_curator":%t}`, u.id, on) }
	curatorIDs := func(t *testing.T, id int64) []string {
		var gs []struct {
			ID         int64    `json:"id"`
			CuratorIDs []string `json:"curator_ids"`
		}
		e.do(e.admin, "GET", "/manage/admin/user-group", nil).decode(t, &gs)
		for _, g := range gs {
			if g.ID == id {
				return g.CuratorIDs
			}
		}
		t.Fatalf("no group %d", id)
		return nil
	}
	const notCurator = `{"detail":"Access denied. User is not a curator or admin."}`

	t.Run("promotes a basic member", func(t *testing.T) {
		e.do(b1, "GET", "/manage/connector", nil).want(t, 403, notCurator)
		e.do(e.admin, "POST", path(g1), body(b1, true)).want(t, 200, `null`)
		if got := f.role(b1); got != "curator" {
			t.Errorf("role = %s, want curator", got)
		}
		if got := curatorIDs(t, g1); len(got) != 1 || got[0] != b1.id {
			t.Errorf("curator_ids = %v, want [%s]", got, b1.id)
		}
		// The new curator may use the curators' routes, and curates g1.
		e.do(b1, "GET", "/manage/connector", nil).want(t, 200, `[]`)
		f.connector(b1, "b1's", "web", "groups", []int64{g1})
		e.do(b1, "POST", "/manage/admin/connector", fxConnectorBody("x", "web", "groups", []int64{g2})).
			want(t, 400, `{"detail":"Curators cannot control groups they don't curate"}`)
	})
	t.Run("setting it twice", func(t *testing.T) {
		e.do(e.admin, "POST", path(g1), body(b1, true)).want(t, 200, `null`)
		e.do(e.admin, "POST", path(g2), body(b1, true)).want(t, 200, `null`)
		if got := f.role(b1); got != "curator" {
			t.Errorf("role = %s, want curator", got)
		}
	})
	t.Run("clearing one of two flags keeps the role", func(t *testing.T) {
		e.do(e.admin, "POST", path(g2), body(b1, false)).want(t, 200, `null`)
		if got := f.role(b1); got != "curator" {
			t.Errorf("role = %s, want curator", got)
		}
	})
	t.Run("clearing the last flag demotes", func(t *testing.T) {
		e.do(e.admin, "POST", path(g1), body(b1, false)).want(t, 200, `null`)
		if got := f.role(b1); got != "basic" {
			t.Errorf("role = %s, want basic", got)
		}
		if got := curatorIDs(t, g1); len(got) != 0 {
			t.Errorf("curator_ids = %v, want []", got)
		}
		e.do(b1, "GET", "/manage/connector", nil).want(t, 403, notCurator)
	})
	t.Run("removing the membership demotes", func(t *testing.T) {
		e.do(e.admin, "POST", path(g2), body(b2, true)).want(t, 200, `null`)
		if got := f.role(b2); got != "curator" {
			t.Fatalf("role = %s, want curator", got)
		}
		e.do(e.admin, "PATCH", fmt.Sprint("/manage/admin/user-group/", g2), fmt.Sprintf(`{"user_ids":[%q]}`, b1.id)).decode(t, &struct{}{})
		if got := f.role(b2); got != "basic" {
			t.Errorf("role = %s, want basic", got)
		}
	})
	t.Run("deleting the group demotes", func(t *testing.T) {
		g3 := f.group("three", []user{b2}, b2)
		if got := f.role(b2); got != "curator" {
			t.Fatalf("role = %s, want curator", got)
		}
		e.do(e.admin, "DELETE", fmt.Sprint("/manage/admin/user-group/", g3), nil).want(t, 200, `null`)
		if got := f.role(b2); got != "basic" {
			t.Errorf("role = %s, want basic", got)
		}
	})
	t.Run("a curator's flag", func(t *testing.T) {
		e.do(e.admin, "POST", path(g1), body(cur, true)).want(t, 200, `null`)
		if got := f.role(cur); got != "curator" {
			t.Errorf("role = %s, want curator", got)
		}
	})
	t.Run("a global curator keeps its role", func(t *testing.T) {
		if got := f.role(global); got != "global_curator" {
			t.Errorf("role = %s, want global_curator", got)
		}
	})
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		body   any
		status int
		want   string
	}{
		// Onyx v4.6.1's statuses and details.
		{"not a member", e.admin, path(g1), body(outsider, true), 404, fmt.Sprintf(`{"detail":"target user %s is not in group '%d'"}`, outsider.email, g1)},
		{"not a member, clearing", e.admin, path(g2), body(b2, false), 404, fmt.Sprintf(`{"detail":"target user %s is not in group '%d'"}`, b2.email, g2)},
		{"admin", e.admin, path(g1), body(admin2, true), 404,
			fmt.Sprintf(`{"detail":"User '%s' is an admin and therefore has all permissions of a curator. If you'd like this user to only have curator permissions, you must update their role to BASIC then assign them to be CURATOR in the appropriate groups."}`, admin2.email)},
		{"global curator", e.admin, path(g1), body(global, true), 404,
			fmt.Sprintf(`{"detail":"User '%s' is a global_curator and therefore has all permissions of a curator for all groups. If you'd like this user to only have curator permissions for a specific group, you must update their role to BASIC then assign them to be CURATOR in the appropriate groups."}`, global.email)},
		{"limited", e.admin, path(g1), body(limited, true), 404,
			fmt.Sprintf(`{"detail":"This endpoint can only be used to update the curator relationship for users with the CURATOR or BASIC role. \nTarget user: %s \nTarget user role: UserRole.LIMITED \n"}`, limited.email)},
		{"unknown user", e.admin, path(g1), `{"user_id":"nope","is_curator":true}`, 404, `{"detail":"User with id 'nope' not found"}`},
		{"a default group", e.admin, path(basicGroupID), body(b1, true), 400, `{"detail":"A default group has no curators"}`},
		{"unknown group", e.admin, path(9999), body(b1, true), 404, `{"detail":"User group 9999 does not exist"}`},
		{"unknown group and user", e.admin, path(9999), `{"user_id":"nope","is_curator":true}`, 404, `{"detail":"User group 9999 does not exist"}`},
		{"bad id", e.admin, "/manage/admin/user-group/abc/set-curator", body(b1, true), 422, `{"detail":[` + fxIntParsing("group_id", "abc") + `]}`},
		{"bad id and body", e.admin, "/manage/admin/user-group/abc/set-curator", `{}`, 422, `{"detail":[` + fxIntParsing("group_id", "abc") + `,
			{"type":"missing","loc":["body","user_id"],"msg":"Field required","input":{}},
			{"type":"missing","loc":["body","is_curator"],"msg":"Field required","input":{}}]}`},
		{"curator", cur, path(g1), body(b1, true), 403, fxNotAdmin},
		{"no token", user{}, path(g1), body(b1, true), 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, "POST", tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "setCurator") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "POST", path(g1), g) })
		}
	})
}
