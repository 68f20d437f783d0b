package api_test

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// The role gates and the order of checks of every route of the supporting
// API (contract sections 2.1, 3 and 6): authentication (401), then role
// (403), then path parameters and body (422).

func TestSupportGates(t *testing.T) {
	e := newEnv(t)
	callers := map[quarry.Role]user{
		quarry.RoleAdmin:         e.admin,
		quarry.RoleGlobalCurator: e.user(quarry.RoleGlobalCurator, "global"),
		quarry.RoleCurator:       e.user(quarry.RoleCurator, "curator"),
		quarry.RoleBasic:         e.user(quarry.RoleBasic, "basic"),
		quarry.RoleLimited:       e.user(quarry.RoleLimited, "limited"),
	}
	// The gates: the roles each admits, and the 403 body of the others.
	type gate struct {
		admits []quarry.Role
		denied string
	}
	var (
		curators = gate{[]quarry.Role{quarry.RoleAdmin, quarry.RoleGlobalCurator, quarry.RoleCurator}, fxNotCurator}
		admins   = gate{[]quarry.Role{quarry.RoleAdmin}, fxNotAdmin}
		notLtd   = gate{[]quarry.Role{quarry.RoleAdmin, quarry.RoleGlobalCurator, quarry.RoleCurator, quarry.RoleBasic}, fxLimited}
	)
	// Each route with its path parameters set to "abc"; params names them,
	// and body says whether it takes one.
	for _, rt := range []struct {
		method, path string
		g            gate
		params       []string
		body         bool
	}{
		{"POST", "/manage/admin/connector", curators, nil, true},
		{"GET", "/manage/connector", curators, nil, false},
		{"GET", "/manage/admin/connector", curators, nil, false},
		{"GET", "/manage/connector/abc", curators, []string{"connector_id"}, false},
		{"PATCH", "/manage/admin/connector/abc", curators, []string{"connector_id"}, true},
		{"DELETE", "/manage/admin/connector/abc", curators, []string{"connector_id"}, false},
		{"POST", "/manage/credential", notLtd, nil, true},
		{"GET", "/manage/credential", notLtd, nil, false},
		{"GET", "/manage/credential/abc", notLtd, []string{"credential_id"}, false},
		{"DELETE", "/manage/credential/abc", notLtd, []string{"credential_id"}, false},
		{"PUT", "/manage/connector/abc/credential/abc", curators, []string{"connector_id", "credential_id"}, true},
		{"DELETE", "/manage/connector/abc/credential/abc", curators, []string{"connector_id", "credential_id"}, false},
		{"POST", "/manage/admin/user-group", admins, nil, true},
		{"GET", "/manage/admin/user-group", admins, nil, false},
		{"PATCH", "/manage/admin/user-group/abc", curators, []string{"group_id"}, true},
		{"DELETE", "/manage/admin/user-group/abc", admins, []string{"group_id"}, false},
		{"POST", "/manage/admin/user-group/abc/set-curator", admins, []string{"group_id"}, true},
		{"GET", "/manage/admin/user-group/abc/permissions", admins, []string{"group_id"}, false},
		{"PUT", "/manage/admin/user-group/abc/permissions", admins, []string{"group_id"}, true},
		{"GET", "/me/permissions", notLtd, nil, false},
		{"GET", "/manage/users", curators, nil, false},
		{"POST", "/admin/api-key", admins, nil, true},
		{"GET", "/admin/api-key", admins, nil, false},
		{"DELETE", "/admin/api-key/abc", admins, []string{"api_key_id"}, false},
		{"POST", "/admin/api-key/abc/regenerate", admins, []string{"api_key_id"}, false},
		{"POST", "/admin/oauth-config", admins, nil, true},
		{"GET", "/admin/oauth-config", admins, nil, false},
		{"DELETE", "/admin/oauth-config/abc", admins, []string{"oauth_config_id"}, false},
		{"GET", "/admin/audit-log", admins, nil, false},
		// The routes of Onyx's admin clients (support_onyx_test.go).
		{"PUT", "/manage/admin/credential/abc", notLtd, []string{"credential_id"}, true},
		{"GET", "/manage/admin/cc-pair/abc", curators, []string{"cc_pair_id"}, false},
		{"PUT", "/manage/admin/cc-pair/abc/status", curators, []string{"cc_pair_id"}, true},
		{"PUT", "/manage/admin/cc-pair/abc/name?new_name=x", curators, []string{"cc_pair_id"}, false},
		{"POST", "/manage/admin/deletion-attempt", curators, nil, true},
		{"POST", "/manage/admin/user-group/abc/add-users", curators, []string{"group_id"}, true},
		{"PATCH", "/admin/tool/status", curators, nil, true},
		{"POST", "/manage/admin/connector/run-once", curators, nil, false},
		{"POST", "/manage/admin/connector/indexing-status", curators, nil, true},
		{"POST", "/manage/admin/cc-pair/abc/prune", curators, []string{"cc_pair_id"}, false},
		{"GET", "/manage/admin/cc-pair/abc/last_pruned", curators, []string{"cc_pair_id"}, false},
		{"POST", "/manage/admin/cc-pair/abc/sync-permissions", curators, []string{"cc_pair_id"}, false},
		{"GET", "/manage/admin/cc-pair/abc/sync-permissions", curators, []string{"cc_pair_id"}, false},
		{"POST", "/manage/admin/cc-pair/abc/sync-groups", curators, []string{"cc_pair_id"}, false},
		{"GET", "/manage/admin/cc-pair/abc/sync-groups", curators, []string{"cc_pair_id"}, false},
		{"GET", "/manage/admin/cc-pair/abc/get-docs-sync-status", curators, []string{"cc_pair_id"}, false},
	} {
		var body any
		if rt.body {
			body = `{`
		}
		// What a caller the gate admits gets for this request: the body is
		// read first, so a body that is not JSON hides the bad path.
		admitted := ""
		switch {
		case rt.body:
			admitted = `{"detail":[{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`
		case rt.params != nil:
			entries := []string{}
			for _, p := range rt.params {
				entries = append(entries, fxIntParsing(p, "abc"))
			}
			admitted = `{"detail":[` + strings.Join(entries, ",") + `]}`
		}
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			r := e.do(user{}, rt.method, rt.path, body)
			r.want(t, 401, fxNotAuthed)
			if got := r.header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("WWW-Authenticate = %q, want Bearer", got)
			}
			e.do(user{token: "qry_" + strings.Repeat("A", 43)}, rt.method, rt.path, body).want(t, 401, fxNotAuthed)
			for role, u := range callers {
				admits := false
				for _, a := range rt.g.admits {
					admits = admits || a == role
				}
				switch {
				case !admits:
					e.do(u, rt.method, rt.path, body).want(t, 403, rt.g.denied)
				case admitted != "":
					e.do(u, rt.method, rt.path, body).want(t, 422, admitted)
				}
			}
			if rt.body && rt.params != nil {
				// With a JSON body, the path errors come first, then the body's.
				r := e.do(e.admin, rt.method, rt.path, `[]`)
				entries := []string{}
				for _, p := range rt.params {
					entries = append(entries, fxIntParsing(p, "abc"))
				}
				entries = append(entries, `{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[]}`)
				r.want(t, 422, `{"detail":[`+strings.Join(entries, ",")+`]}`)
			}
		})
	}
}
