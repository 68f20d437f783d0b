package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/scim"
)

// Onyx's own SCIM integration tests (onyx-dot-app/onyx v4.6.1,
// backend/tests/integration/tests/scim/: test_scim_tokens.py,
// test_scim_users.py, test_scim_groups.py), ported: the same requests, in
// Okta's and in Entra ID's style as Onyx runs them (Entra's capitalised
// operations, enterprise extension and emails), with at least Onyx's
// assertions. Not ported: the seat-limit tests (Quarry has no licence
// seats). The reserved default groups "Admin" and "Basic" are those the
// migrations seed, as in Onyx: SCIM people join Basic, SCIM groups are
// granted basic.

// onyxStyles are Onyx's idp_style parameters.
var onyxStyles = []string{"okta", "entra"}

// onyxUser is Onyx's _make_user_resource.
func onyxUser(email, externalID, given, family string, active bool, style, department, manager string) map[string]any {
	schemas := []string{scim.UserSchema}
	r := map[string]any{"userName": email, "externalId": externalID,
		"name": map[string]any{"givenName": given, "familyName": family}, "active": active}
	if style == "entra" {
		if department == "" {
			department = "Engineering"
		}
		if manager == "" {
			manager = "mgr-ext-001"
		}
		schemas = append(schemas, scim.EnterpriseUserSchema)
		r[scim.EnterpriseUserSchema] = map[string]any{"department": department, "manager": map[string]any{"value": manager}}
		r["emails"] = []any{map[string]any{"value": email, "type": "work", "primary": true}}
	}
	r["schemas"] = schemas
	return r
}

// onyxPatch is Onyx's _make_patch_request: Entra capitalises operations.
func onyxPatch(style string, ops ...map[string]any) map[string]any {
	for _, op := range ops {
		if style == "entra" {
			s := op["op"].(string)
			op["op"] = strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return map[string]any{"schemas": []string{scim.PatchOpSchema}, "Operations": ops}
}

// assertEntra is Onyx's _assert_entra_extension and _assert_entra_emails.
func assertEntra(t *testing.T, body map[string]any, email, department, manager string) {
	t.Helper()
	if !strings.Contains(fmt.Sprint(body["schemas"]), scim.EnterpriseUserSchema) {
		t.Errorf("schemas %v", body["schemas"])
	}
	ext, _ := body[scim.EnterpriseUserSchema].(map[string]any)
	if ext["department"] != department || fmt.Sprint(ext["manager"]) != "map[value:"+manager+"]" {
		t.Errorf("enterprise extension %v", ext)
	}
	emails, _ := body["emails"].([]any)
	found := false
	for _, e := range emails {
		m := e.(map[string]any)
		if m["type"] == "work" {
			found = m["value"] == email && m["primary"] == true
		}
	}
	if !found {
		t.Errorf("emails %v", emails)
	}
}

// TestOnyxSCIMTokens ports test_scim_tokens.py.
func TestOnyxSCIMTokens(t *testing.T) {
	e := newEnv(t)
	basic := e.user(quarry.RoleBasic, "scim_basic_user")
	t.Run("test_no_active_token_returns_null", func(t *testing.T) {
		e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 200, `null`)
	})
	t.Run("test_scim_token_lifecycle", func(t *testing.T) {
		var token map[string]any
		e.do(e.admin, "POST", "/admin/enterprise-settings/scim/token", map[string]any{"name": "Test SCIM Token"}).decode(t, &token)
		raw, _ := token["raw_token"].(string)
		if !strings.HasPrefix(raw, quarry.SCIMTokenPrefix) || token["is_active"] != true || !strings.Contains(token["token_display"].(string), "****") {
			t.Errorf("token %v", token)
		}
		var active map[string]any
		e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).decode(t, &active)
		delete(token, "raw_token")
		if fmt.Sprint(active) != fmt.Sprint(token) {
			t.Errorf("active %v, want %v", active, token)
		}
		list := scimJSON(t, e.do(user{token: raw}, "GET", "/scim/v2/Users", nil), 200)
		if _, ok := list["Resources"]; !ok || list["totalResults"].(float64) < 0 {
			t.Errorf("list %v", list)
		}
	})
	t.Run("test_scim_token_rotation_revokes_previous", func(t *testing.T) {
		first := e.newDirectory("First Token")
		scimJSON(t, first.do("GET", "/Users", nil), 200)
		second := e.newDirectory("Second Token")
		var active map[string]any
		e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).decode(t, &active)
		if active["name"] != "Second Token" {
			t.Errorf("active %v", active)
		}
		scimJSON(t, first.do("GET", "/Users", nil), 401)
		scimJSON(t, second.do("GET", "/Users", nil), 200)
	})
	t.Run("test_scim_request_without_token_rejected", func(t *testing.T) {
		scimJSON(t, e.do(user{}, "GET", "/scim/v2/Users", nil), 401)
	})
	t.Run("test_scim_request_with_bad_token_rejected", func(t *testing.T) {
		scimJSON(t, e.do(user{token: "qrd_bogus_token_value"}, "GET", "/scim/v2/Users", nil), 401)
		scimJSON(t, e.do(user{token: "onyx_scim_bogus_token_value"}, "GET", "/scim/v2/Users", nil), 401)
	})
	t.Run("test_non_admin_cannot_create_token", func(t *testing.T) {
		e.do(basic, "POST", "/admin/enterprise-settings/scim/token", map[string]any{"name": "Should Fail"}).want(t, 403, fxNotAdmin)
	})
	t.Run("test_non_admin_cannot_get_token", func(t *testing.T) {
		e.do(basic, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 403, fxNotAdmin)
	})
	t.Run("test_service_discovery_no_auth_required", func(t *testing.T) {
		for _, path := range []string{"/ServiceProviderConfig", "/ResourceTypes", "/Schemas"} {
			scimJSON(t, e.do(user{}, "GET", "/scim/v2"+path, nil), 200)
		}
	})
	t.Run("test_last_used_at_updated_after_scim_request", func(t *testing.T) {
		d := e.newDirectory("Last Used Token")
		var active map[string]any
		e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).decode(t, &active)
		if active["last_used_at"] != nil {
			t.Errorf("last_used_at before use: %v", active["last_used_at"])
		}
		scimJSON(t, d.do("GET", "/Users", nil), 200)
		e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).decode(t, &active)
		if active["last_used_at"] == nil {
			t.Errorf("last_used_at after use: null")
		}
	})
}

// TestOnyxSCIMUsers ports test_scim_users.py.
func TestOnyxSCIMUsers(t *testing.T) {
	for _, style := range onyxStyles {
		t.Run(style, func(t *testing.T) {
			e := newEnv(t)
			d := e.newDirectory("scim-user-tests-" + style)
			create := func(email, ext string) *response {
				return d.do("POST", "/Users", onyxUser(email, ext, "Test", "User", true, style, "", ""))
			}
			t.Run("test_create_user", func(t *testing.T) {
				email, ext := "scim_create_"+style+"@example.com", "ext-create-"+style
				body := scimJSON(t, create(email, ext), 201)
				name := body["name"].(map[string]any)
				if body["userName"] != email || body["externalId"] != ext || body["active"] != true || body["id"] == "" ||
					body["meta"].(map[string]any)["resourceType"] != "User" || name["givenName"] != "Test" || name["familyName"] != "User" {
					t.Errorf("created %v", body)
				}
				if style == "entra" {
					assertEntra(t, body, email, "Engineering", "mgr-ext-001")
				}
			})
			t.Run("test_create_user_default_group_and_account_type", func(t *testing.T) {
				email := "scim_defaults_" + style + "@example.com"
				id := created(t, create(email, "ext-defaults-"+style))
				got := scimJSON(t, d.do("GET", "/Users/"+id, nil), 200)
				names := map[any]bool{}
				for _, g := range got["groups"].([]any) {
					names[g.(map[string]any)["display"]] = true
				}
				if !names["Basic"] {
					t.Errorf("Expected 'Basic' in groups, got %v", got["groups"])
				}
				if names["Admin"] {
					t.Errorf("SCIM user should not be in Admin group: %v", got["groups"])
				}
				var page struct {
					TotalItems int              `json:"total_items"`
					Items      []map[string]any `json:"items"`
				}
				e.do(e.admin, "GET", "/manage/users/accepted?q="+email, nil).decode(t, &page)
				var snapshot map[string]any
				for _, u := range page.Items {
					if u["email"] == email {
						snapshot = u
					}
				}
				if page.TotalItems < 1 || snapshot == nil {
					t.Fatalf("SCIM user %s not found in user listing: %v", email, page.Items)
				}
				if snapshot["account_type"] != "STANDARD" {
					t.Errorf("Expected STANDARD, got %v", snapshot["account_type"])
				}
			})
			t.Run("test_get_user", func(t *testing.T) {
				email, ext := "scim_get_"+style+"@example.com", "ext-get-"+style
				id := created(t, create(email, ext))
				body := scimJSON(t, d.do("GET", "/Users/"+id, nil), 200)
				name := body["name"].(map[string]any)
				if body["id"] != id || body["userName"] != email || body["externalId"] != ext || name["givenName"] != "Test" || name["familyName"] != "User" {
					t.Errorf("got %v", body)
				}
				if style == "entra" {
					assertEntra(t, body, email, "Engineering", "mgr-ext-001")
				}
			})
			t.Run("test_list_users", func(t *testing.T) {
				email := "scim_list_" + style + "@example.com"
				create(email, "ext-list-"+style)
				body := scimJSON(t, d.do("GET", "/Users", nil), 200)
				found := false
				for _, r := range body["Resources"].([]any) {
					found = found || r.(map[string]any)["userName"] == email
				}
				if body["totalResults"].(float64) < 1 || !found {
					t.Errorf("list %v", body)
				}
			})
			t.Run("test_list_users_pagination", func(t *testing.T) {
				create("scim_page1_"+style+"@example.com", "ext-page-1-"+style)
				create("scim_page2_"+style+"@example.com", "ext-page-2-"+style)
				body := scimJSON(t, d.do("GET", "/Users?startIndex=1&count=1", nil), 200)
				if body["startIndex"] != 1.0 || body["itemsPerPage"] != 1.0 || body["totalResults"].(float64) < 2 || len(body["Resources"].([]any)) != 1 {
					t.Errorf("page %v", body)
				}
			})
			t.Run("test_filter_users_by_username", func(t *testing.T) {
				email := "scim_filter_" + style + "@example.com"
				create(email, "ext-filter-"+style)
				body := scimJSON(t, d.do("GET", `/Users?filter=userName%20eq%20%22`+email+`%22`, nil), 200)
				if body["totalResults"] != 1.0 || body["Resources"].([]any)[0].(map[string]any)["userName"] != email {
					t.Errorf("filtered %v", body)
				}
			})
			t.Run("test_replace_user", func(t *testing.T) {
				email, ext := "scim_replace_"+style+"@example.com", "ext-replace-"+style
				id := created(t, create(email, ext))
				body := scimJSON(t, d.do("PUT", "/Users/"+id, onyxUser(email, ext, "Updated", "Name", true, style, "Product", "")), 200)
				name := body["name"].(map[string]any)
				if name["givenName"] != "Updated" || name["familyName"] != "Name" {
					t.Errorf("replaced %v", body)
				}
				if style == "entra" {
					assertEntra(t, body, email, "Product", "mgr-ext-001")
				}
			})
			t.Run("test_patch_deactivate_user", func(t *testing.T) {
				id := created(t, create("scim_deactivate_"+style+"@example.com", "ext-deactivate-"+style))
				body := scimJSON(t, d.do("PATCH", "/Users/"+id, onyxPatch(style, map[string]any{"op": "replace", "path": "active", "value": false})), 200)
				if body["active"] != false {
					t.Errorf("patched %v", body)
				}
				if scimJSON(t, d.do("GET", "/Users/"+id, nil), 200)["active"] != false {
					t.Errorf("still active")
				}
			})
			t.Run("test_patch_reactivate_user", func(t *testing.T) {
				id := created(t, create("scim_reactivate_"+style+"@example.com", "ext-reactivate-"+style))
				if scimJSON(t, d.do("PATCH", "/Users/"+id, onyxPatch(style, map[string]any{"op": "replace", "path": "active", "value": false})), 200)["active"] != false {
					t.Errorf("not deactivated")
				}
				if scimJSON(t, d.do("PATCH", "/Users/"+id, onyxPatch(style, map[string]any{"op": "replace", "path": "active", "value": true})), 200)["active"] != true {
					t.Errorf("not reactivated")
				}
			})
			t.Run("test_delete_user", func(t *testing.T) {
				id := created(t, create("scim_delete_"+style+"@example.com", "ext-delete-"+style))
				if r := d.do("DELETE", "/Users/"+id, nil); r.status != 204 {
					t.Errorf("DELETE: %d", r.status)
				}
				scimJSON(t, d.do("DELETE", "/Users/"+id, nil), 404)
			})
			t.Run("test_create_user_missing_external_id", func(t *testing.T) {
				email := "scim_no_extid_" + style + "@example.com"
				body := scimJSON(t, d.do("POST", "/Users", map[string]any{"schemas": []string{scim.UserSchema}, "userName": email, "active": true}), 201)
				if _, has := body["externalId"]; body["userName"] != email || has {
					t.Errorf("created %v", body)
				}
			})
			t.Run("test_create_user_duplicate_email", func(t *testing.T) {
				email := "scim_dup_" + style + "@example.com"
				scimJSON(t, create(email, "ext-dup-1-"+style), 201)
				scimJSON(t, create(email, "ext-dup-2-"+style), 409)
			})
			t.Run("test_get_nonexistent_user", func(t *testing.T) {
				scimJSON(t, d.do("GET", "/Users/00000000-0000-0000-0000-000000000000", nil), 404)
			})
			t.Run("test_filter_users_by_external_id", func(t *testing.T) {
				ext := "ext-unique-filter-id-" + style
				create("scim_extfilter_"+style+"@example.com", ext)
				body := scimJSON(t, d.do("GET", `/Users?filter=externalId%20eq%20%22`+ext+`%22`, nil), 200)
				if body["totalResults"] != 1.0 || body["Resources"].([]any)[0].(map[string]any)["externalId"] != ext {
					t.Errorf("filtered %v", body)
				}
			})
		})
	}
}

// TestOnyxSCIMGroups ports test_scim_groups.py.
func TestOnyxSCIMGroups(t *testing.T) {
	for _, style := range onyxStyles {
		t.Run(style, func(t *testing.T) {
			e := newEnv(t)
			d := e.newDirectory("scim-group-tests-" + style)
			newUser := func(email, ext string) string {
				return created(t, d.do("POST", "/Users", map[string]any{"schemas": []string{scim.UserSchema}, "userName": email,
					"externalId": ext, "name": map[string]any{"givenName": "Test", "familyName": "User"}, "active": true}))
			}
			group := func(name, ext string, members ...string) *response {
				g := map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": name}
				if ext != "" {
					g["externalId"] = ext
				}
				if members != nil {
					ms := []any{}
					for _, m := range members {
						ms = append(ms, map[string]any{"value": m})
					}
					g["members"] = ms
				}
				return d.do("POST", "/Groups", g)
			}
			memberIDs := func(body map[string]any) []string {
				var ids []string
				for _, m := range body["members"].([]any) {
					ids = append(ids, m.(map[string]any)["value"].(string))
				}
				return ids
			}
			has := func(ids []string, id string) bool { return strings.Contains(strings.Join(ids, " "), id) }
			adminID := func() string {
				body := scimJSON(t, d.do("GET", `/Groups?filter=displayName%20eq%20%22Admin%22`, nil), 200)
				res := body["Resources"].([]any)
				if len(res) < 1 {
					t.Fatalf("expected the reserved 'Admin' group to exist")
				}
				return res[0].(map[string]any)["id"].(string)
			}
			wantReserved := func(r *response) {
				t.Helper()
				body := scimJSON(t, r, 409)
				if !strings.Contains(strings.ToLower(body["detail"].(string)), "reserved") {
					t.Errorf("detail %v", body["detail"])
				}
			}

			t.Run("test_create_group", func(t *testing.T) {
				name := "Engineering " + style
				body := scimJSON(t, group(name, "ext-eng-"+style), 201)
				if body["displayName"] != name || body["externalId"] != "ext-eng-"+style || body["id"] == "" || body["meta"].(map[string]any)["resourceType"] != "Group" {
					t.Errorf("created %v", body)
				}
			})
			t.Run("test_create_group_with_members", func(t *testing.T) {
				u := newUser("grp_member1_"+style+"@example.com", "ext-gm-"+style)
				if !has(memberIDs(scimJSON(t, group("Backend Team "+style, "ext-backend-"+style, u), 201)), u) {
					t.Errorf("member missing")
				}
			})
			t.Run("test_get_group", func(t *testing.T) {
				u := newUser("grp_get_m_"+style+"@example.com", "ext-ggm-"+style)
				g := scimJSON(t, group("Frontend Team "+style, "ext-fe-"+style, u), 201)
				body := scimJSON(t, d.do("GET", "/Groups/"+g["id"].(string), nil), 200)
				if body["id"] != g["id"] || body["displayName"] != "Frontend Team "+style || body["externalId"] != "ext-fe-"+style || !has(memberIDs(body), u) {
					t.Errorf("got %v", body)
				}
			})
			t.Run("test_list_groups", func(t *testing.T) {
				group("DevOps Team "+style, "ext-devops-"+style)
				body := scimJSON(t, d.do("GET", "/Groups", nil), 200)
				found := false
				for _, r := range body["Resources"].([]any) {
					found = found || r.(map[string]any)["displayName"] == "DevOps Team "+style
				}
				if body["totalResults"].(float64) < 1 || !found {
					t.Errorf("list %v", body)
				}
			})
			t.Run("test_list_groups_pagination", func(t *testing.T) {
				group("Page Group A "+style, "ext-page-a-"+style)
				group("Page Group B "+style, "ext-page-b-"+style)
				body := scimJSON(t, d.do("GET", "/Groups?startIndex=1&count=1", nil), 200)
				if body["startIndex"] != 1.0 || body["itemsPerPage"] != 1.0 || body["totalResults"].(float64) < 2 || len(body["Resources"].([]any)) != 1 {
					t.Errorf("page %v", body)
				}
			})
			t.Run("test_filter_groups_by_display_name", func(t *testing.T) {
				name := "Unique QA Team " + style
				group(name, "ext-qa-filter-"+style)
				body := scimJSON(t, d.do("GET", `/Groups?filter=displayName%20eq%20%22`+strings.ReplaceAll(name, " ", "%20")+`%22`, nil), 200)
				if body["totalResults"] != 1.0 || body["Resources"].([]any)[0].(map[string]any)["displayName"] != name {
					t.Errorf("filtered %v", body)
				}
			})
			t.Run("test_filter_groups_by_external_id", func(t *testing.T) {
				ext := "ext-unique-group-id-" + style
				group("ExtId Filter Group "+style, ext)
				body := scimJSON(t, d.do("GET", `/Groups?filter=externalId%20eq%20%22`+ext+`%22`, nil), 200)
				if body["totalResults"] != 1.0 || body["Resources"].([]any)[0].(map[string]any)["externalId"] != ext {
					t.Errorf("filtered %v", body)
				}
			})
			t.Run("test_replace_group", func(t *testing.T) {
				g := scimJSON(t, group("Original Name "+style, "ext-replace-g-"+style), 201)
				u := newUser("grp_replace_m_"+style+"@example.com", "ext-grm-"+style)
				body := scimJSON(t, d.do("PUT", "/Groups/"+g["id"].(string), map[string]any{"schemas": []string{scim.GroupSchema},
					"displayName": "Renamed Group " + style, "externalId": "ext-replace-g-" + style, "members": []any{map[string]any{"value": u}}}), 200)
				if body["displayName"] != "Renamed Group "+style || !has(memberIDs(body), u) {
					t.Errorf("replaced %v", body)
				}
			})
			t.Run("test_replace_group_clears_members", func(t *testing.T) {
				u := newUser("grp_clear_m_"+style+"@example.com", "ext-gcm-"+style)
				g := scimJSON(t, group("Clear Members Group "+style, "ext-clear-g-"+style, u), 201)
				if len(g["members"].([]any)) != 1 {
					t.Fatalf("members %v", g["members"])
				}
				body := scimJSON(t, d.do("PUT", "/Groups/"+g["id"].(string), map[string]any{"schemas": []string{scim.GroupSchema},
					"displayName": "Clear Members Group " + style, "externalId": "ext-clear-g-" + style, "members": []any{}}), 200)
				if len(body["members"].([]any)) != 0 {
					t.Errorf("members %v", body["members"])
				}
			})
			t.Run("test_patch_add_member", func(t *testing.T) {
				g := scimJSON(t, group("Patch Add Group "+style, "ext-patch-add-"+style), 201)
				u := newUser("grp_patch_add_"+style+"@example.com", "ext-gpa-"+style)
				body := scimJSON(t, d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "add", "path": "members", "value": []any{map[string]any{"value": u}}})), 200)
				if !has(memberIDs(body), u) {
					t.Errorf("members %v", body["members"])
				}
			})
			t.Run("test_patch_remove_member", func(t *testing.T) {
				u := newUser("grp_patch_rm_"+style+"@example.com", "ext-gpr-"+style)
				g := scimJSON(t, group("Patch Remove Group "+style, "ext-patch-rm-"+style, u), 201)
				body := scimJSON(t, d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "remove", "path": `members[value eq "` + u + `"]`})), 200)
				if len(body["members"].([]any)) != 0 {
					t.Errorf("members %v", body["members"])
				}
			})
			t.Run("test_patch_replace_members", func(t *testing.T) {
				a := newUser("grp_repl_a_"+style+"@example.com", "ext-gra-"+style)
				b := newUser("grp_repl_b_"+style+"@example.com", "ext-grb-"+style)
				g := scimJSON(t, group("Patch Replace Group "+style, "ext-patch-repl-"+style, a), 201)
				body := scimJSON(t, d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "replace", "path": "members", "value": []any{map[string]any{"value": b}}})), 200)
				if ids := memberIDs(body); !has(ids, b) || has(ids, a) {
					t.Errorf("members %v", ids)
				}
			})
			t.Run("test_patch_rename_group", func(t *testing.T) {
				g := scimJSON(t, group("Old Group Name "+style, "ext-rename-g-"+style), 201)
				name := "New Group Name " + style
				if body := scimJSON(t, d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "replace", "path": "displayName", "value": name})), 200); body["displayName"] != name {
					t.Errorf("renamed %v", body)
				}
				if scimJSON(t, d.do("GET", "/Groups/"+g["id"].(string), nil), 200)["displayName"] != name {
					t.Errorf("not renamed")
				}
			})
			t.Run("test_delete_group", func(t *testing.T) {
				g := scimJSON(t, group("Delete Me Group "+style, "ext-del-g-"+style), 201)
				if r := d.do("DELETE", "/Groups/"+g["id"].(string), nil); r.status != 204 {
					t.Errorf("DELETE %d", r.status)
				}
				scimJSON(t, d.do("DELETE", "/Groups/"+g["id"].(string), nil), 404)
			})
			t.Run("test_delete_group_preserves_members", func(t *testing.T) {
				u := newUser("grp_del_member_"+style+"@example.com", "ext-gdm-"+style)
				g := scimJSON(t, group("Delete With Members "+style, "ext-del-wm-"+style, u), 201)
				if r := d.do("DELETE", "/Groups/"+g["id"].(string), nil); r.status != 204 {
					t.Errorf("DELETE %d", r.status)
				}
				if scimJSON(t, d.do("GET", "/Users/"+u, nil), 200)["active"] != true {
					t.Errorf("the member was deactivated")
				}
			})
			t.Run("test_create_group_duplicate_name", func(t *testing.T) {
				name := "Dup Name Group " + style
				scimJSON(t, group(name, "ext-dup-g1-"+style), 201)
				scimJSON(t, group(name, "ext-dup-g2-"+style), 409)
			})
			t.Run("test_get_nonexistent_group", func(t *testing.T) {
				scimJSON(t, d.do("GET", "/Groups/999999999", nil), 404)
			})
			t.Run("test_create_group_with_invalid_member", func(t *testing.T) {
				body := scimJSON(t, group("Bad Member Group "+style, "ext-bad-m-"+style, "00000000-0000-0000-0000-000000000000"), 400)
				if !strings.Contains(strings.ToLower(body["detail"].(string)), "not found") {
					t.Errorf("detail %v", body["detail"])
				}
			})
			t.Run("test_patch_add_nonexistent_member", func(t *testing.T) {
				g := scimJSON(t, group("Patch Bad Member Group "+style, "ext-pbm-"+style), 201)
				body := scimJSON(t, d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "add", "path": "members", "value": []any{map[string]any{"value": "00000000-0000-0000-0000-000000000000"}}})), 400)
				if !strings.Contains(strings.ToLower(body["detail"].(string)), "not found") {
					t.Errorf("detail %v", body["detail"])
				}
			})
			t.Run("test_patch_add_duplicate_member_is_idempotent", func(t *testing.T) {
				u := newUser("grp_dup_add_"+style+"@example.com", "ext-gda-"+style)
				g := scimJSON(t, group("Idempotent Add Group "+style, "ext-idem-g-"+style, u), 201)
				body := scimJSON(t, d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "add", "path": "members", "value": []any{map[string]any{"value": u}}})), 200)
				if len(body["members"].([]any)) != 1 {
					t.Errorf("members %v", body["members"])
				}
			})
			t.Run("test_create_group_reserved_name_admin", func(t *testing.T) {
				wantReserved(group("Admin", "ext-reserved-admin"))
			})
			t.Run("test_create_group_reserved_name_basic", func(t *testing.T) {
				wantReserved(group("Basic", "ext-reserved-basic"))
			})
			t.Run("test_replace_group_cannot_rename_to_reserved", func(t *testing.T) {
				g := scimJSON(t, group("Rename To Reserved "+style, "ext-rtr-"+style), 201)
				wantReserved(d.do("PUT", "/Groups/"+g["id"].(string), map[string]any{"schemas": []string{scim.GroupSchema},
					"displayName": "Admin", "externalId": "ext-rtr-" + style}))
			})
			t.Run("test_patch_rename_to_reserved_name", func(t *testing.T) {
				g := scimJSON(t, group("Patch Rename Reserved "+style, "ext-prr-"+style), 201)
				wantReserved(d.do("PATCH", "/Groups/"+g["id"].(string), onyxPatch(style,
					map[string]any{"op": "replace", "path": "displayName", "value": "Basic"})))
			})
			t.Run("test_delete_reserved_group_rejected", func(t *testing.T) {
				wantReserved(d.do("DELETE", "/Groups/"+adminID(), nil))
			})
			t.Run("test_scim_created_group_has_basic_permission", func(t *testing.T) {
				g := scimJSON(t, group("Basic Perm Group "+style, "ext-basic-perm-"+style), 201)
				e.do(e.admin, "GET", "/manage/admin/user-group/"+g["id"].(string)+"/permissions", nil).want(t, 200, `["basic"]`)
			})
			t.Run("test_replace_group_cannot_rename_from_reserved", func(t *testing.T) {
				wantReserved(d.do("PUT", "/Groups/"+adminID(), map[string]any{"schemas": []string{scim.GroupSchema},
					"displayName": "RenamedAdmin", "externalId": "ext-rename-from-reserved"}))
			})
			t.Run("test_patch_rename_from_reserved_name", func(t *testing.T) {
				wantReserved(d.do("PATCH", "/Groups/"+adminID(), onyxPatch(style,
					map[string]any{"op": "replace", "path": "displayName", "value": "RenamedAdmin"})))
			})
		})
	}
}
