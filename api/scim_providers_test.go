package api_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/scim"
)

// The request sequences that Okta and Microsoft Entra ID document for their
// SCIM 2.0 integrations, replayed: Okta's "SCIM 2.0 Spec Test" (the
// Runscope suite every Okta integration must pass) and the requests Okta
// sends for users and for Group Push (Okta's "SCIM 2.0" reference); the
// requests Entra ID's provisioning service sends, as Microsoft's "Develop a
// SCIM endpoint" pages show them, with Entra's habits (capitalised
// operations, booleans as strings, a userName that is not an email,
// several operations in one request, members removed by a list). Each step
// asserts what the provider checks, and what Quarry then holds.

// filterQuery renders a filter parameter.
func filterQuery(f string) string { return "filter=" + url.QueryEscape(f) }

// TestOktaSpecTest replays Okta's SCIM 2.0 Spec Test, step by step.
func TestOktaSpecTest(t *testing.T) {
	e := newEnv(t)
	d := e.newDirectory("Okta")
	// The suite expects a user in the app already.
	created(t, d.do("POST", "/Users", oktaUser("existing@example.com", "Existing", "User")))
	okta := func(method, path string, body any) *response {
		t.Helper()
		return d.do(method, path, body, "Accept", "application/scim+json", "Accept-Charset", "utf-8", "User-Agent", "OKTA SCIM Integration")
	}
	nonEmpty := func(what string, v any) {
		t.Helper()
		if v == nil || v == "" {
			t.Errorf("%s is empty", what)
		}
	}
	checkUser := func(u map[string]any) {
		t.Helper()
		nonEmpty("id", u["id"])
		nonEmpty("name.familyName", u["name"].(map[string]any)["familyName"])
		nonEmpty("name.givenName", u["name"].(map[string]any)["givenName"])
		nonEmpty("userName", u["userName"])
		nonEmpty("active", u["active"])
		nonEmpty("emails[0].value", u["emails"].([]any)[0].(map[string]any)["value"])
	}
	hasSchema := func(body map[string]any, schema string) bool {
		return strings.Contains(fmt.Sprint(body["schemas"]), schema)
	}

	// Required Test: Test Users endpoint.
	list := scimJSON(t, okta("GET", "/Users?count=1&startIndex=1", nil), 200)
	if !hasSchema(list, scim.ListResponseSchema) || list["itemsPerPage"] != 1.0 || list["startIndex"] != 1.0 || list["totalResults"] != 1.0 {
		t.Errorf("Users endpoint: %v", list)
	}
	first := list["Resources"].([]any)[0].(map[string]any)
	checkUser(first)
	id := first["id"].(string)
	// Required Test: Get Users/{{id}}.
	got := scimJSON(t, okta("GET", "/Users/"+id, nil), 200)
	checkUser(got)
	if got["id"] != id {
		t.Errorf("id %v", got["id"])
	}
	// Required Test: Test invalid User by username.
	if r := scimJSON(t, okta("GET", "/Users?"+filterQuery(`userName eq "invalid-user-4fb9@example.com"`), nil), 200); r["totalResults"] != 0.0 || !hasSchema(r, scim.ListResponseSchema) {
		t.Errorf("invalid user: %v", r)
	}
	// Required Test: Test invalid User by ID.
	if r := scimJSON(t, okta("GET", "/Users/010101001010101011", nil), 404); r["detail"] == "" || !hasSchema(r, scim.ErrorSchema) {
		t.Errorf("invalid id: %v", r)
	}
	// Required Test: Make sure random user doesn't exist.
	if r := scimJSON(t, okta("GET", "/Users?"+filterQuery(`userName eq "Ronald.Oneal@example.com"`), nil), 200); r["totalResults"] != 0.0 {
		t.Errorf("random user: %v", r)
	}
	// Required Test: Create Okta user with realistic values (Okta's
	// suite sends this one as application/json; the userName and the
	// email differ).
	d.contentType = "application/json"
	body := map[string]any{"schemas": []string{scim.UserSchema}, "userName": "ronald.oneal@example.com",
		"name": map[string]any{"givenName": "Ronald", "familyName": "Oneal"}, "displayName": "Ronald Oneal", "active": true,
		"emails": []any{map[string]any{"primary": true, "value": "Ronald.Oneal@example.com", "type": "work"}}}
	ronald := scimJSON(t, okta("POST", "/Users", body), 201)
	if ronald["active"] != true || ronald["id"] == "" || ronald["name"].(map[string]any)["familyName"] != "Oneal" ||
		ronald["name"].(map[string]any)["givenName"] != "Ronald" || !hasSchema(ronald, scim.UserSchema) || ronald["userName"] != "ronald.oneal@example.com" {
		t.Errorf("created: %v", ronald)
	}
	// Required Test: Verify that user was created.
	again := scimJSON(t, okta("GET", "/Users/"+ronald["id"].(string), nil), 200)
	if again["userName"] != "ronald.oneal@example.com" || again["name"].(map[string]any)["familyName"] != "Oneal" {
		t.Errorf("verify: %v", again)
	}
	// Required Test: Expect failure when recreating user with same values
	// (the email this time is the userName).
	body["emails"] = []any{map[string]any{"primary": true, "value": "ronald.oneal@example.com", "type": "work"}}
	scimJSON(t, okta("POST", "/Users", body), 409)
	d.contentType = scim.MediaType
	// Required Test: Username Case Sensitivity Check.
	if r := scimJSON(t, okta("GET", "/Users?"+filterQuery(`userName eq "RONALD.ONEAL@EXAMPLE.COM"`), nil), 200); r["totalResults"] != 1.0 {
		t.Errorf("case: %v", r)
	}
	// Optional Test: Verify Groups endpoint. The default groups are
	// groups too (as in Onyx), Basic with the two people in it.
	groups := scimJSON(t, okta("GET", "/Groups", nil), 200)
	var names []string
	for _, g := range groups["Resources"].([]any) {
		g := g.(map[string]any)
		names = append(names, fmt.Sprintf("%s (%d)", g["displayName"], len(g["members"].([]any))))
	}
	if !hasSchema(groups, scim.ListResponseSchema) || groups["totalResults"] != 2.0 || strings.Join(names, ", ") != "Admin (0), Basic (2)" {
		t.Errorf("groups: %v", groups)
	}
	// Required Test: Check status 401.
	r := e.do(user{}, "GET", "/scim/v2/Users?"+filterQuery(`userName eq "RONALD.ONEAL@EXAMPLE.COM"`), nil, "Authorization", "non-token")
	if m := scimJSON(t, r, 401); m["status"] != "401" || m["detail"] == "" || !hasSchema(m, scim.ErrorSchema) {
		t.Errorf("401: %v", m)
	}
	// Required Test: Check status 404.
	if m := scimJSON(t, okta("GET", "/Users/00919288221112222", nil), 404); m["status"] != "404" || m["detail"] == "" || !hasSchema(m, scim.ErrorSchema) {
		t.Errorf("404: %v", m)
	}
}

// TestOktaProvisioning replays what Okta sends for a user assigned to the
// app, updated, deactivated, reactivated, and for Group Push.
func TestOktaProvisioning(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	d := e.newDirectory("Okta")
	// Saving the provisioning settings: Okta reads users and groups.
	scimJSON(t, d.do("GET", "/Users?startIndex=1&count=2", nil), 200)
	scimJSON(t, d.do("GET", "/Groups?startIndex=1&count=100", nil), 200)

	// A user assigned: looked up by userName, then created.
	if r := scimJSON(t, d.do("GET", "/Users?"+filterQuery(`userName eq "test.user@okta.local"`)+"&startIndex=1&count=100", nil), 200); r["totalResults"] != 0.0 {
		t.Fatalf("lookup: %v", r)
	}
	post := map[string]any{"schemas": []string{scim.UserSchema}, "userName": "test.user@okta.local",
		"name": map[string]any{"givenName": "Test", "familyName": "User"}, "emails": []any{map[string]any{"primary": true, "value": "test.user@okta.local", "type": "work"}},
		"displayName": "Test User", "locale": "en-US", "externalId": "00u1dhhb1fkIGP7RL1d8", "groups": []any{}, "password": "1mz050nq-okta", "active": true}
	r := d.do("POST", "/Users", post)
	id := created(t, r)
	d.wantSCIM(t, r, 201, userJSON(id, "test.user@okta.local", "Test", "User", true, `,"externalId":"00u1dhhb1fkIGP7RL1d8"`))
	secretsOf(t).add("1mz050nq-okta") // The password Okta syncs is never kept, logged or shown.
	d.wantSCIM(t, d.do("GET", "/Users/"+id, nil), 200, userJSON(id, "test.user@okta.local", "Test", "User", true, `,"externalId":"00u1dhhb1fkIGP7RL1d8"`))

	// The first name changed in Okta: a PUT of the whole profile.
	put := map[string]any{}
	for k, v := range post {
		put[k] = v
	}
	put["id"], put["name"], put["displayName"] = id, map[string]any{"givenName": "Another", "familyName": "User"}, "Another User"
	u := scimJSON(t, d.do("PUT", "/Users/"+id, put), 200)
	if u["name"].(map[string]any)["givenName"] != "Another" || u["displayName"] != "Another User" || u["active"] != true {
		t.Errorf("after PUT: %v", u)
	}
	// The same PUT again (Okta retries): nothing changes.
	before := len(fx{e}.audit("resource_id=" + id))
	scimJSON(t, d.do("PUT", "/Users/"+id, put), 200)
	if n := len(fx{e}.audit("resource_id=" + id)); n != before {
		t.Errorf("a repeated PUT left %d audit entries", n-before)
	}

	// Deactivated in Okta: its sessions end at once.
	var reset struct {
		Password string `json:"new_password"`
	}
	e.do(e.admin, "POST", "/manage/admin/reset-password", map[string]any{"user_email": "test.user@okta.local"}).decode(t, &reset)
	secretsOf(t).add(reset.Password)
	session := user{cookie: sessionCookie(e.login("test.user@okta.local", reset.Password)).Value}
	e.do(session, "GET", "/me", nil).decode(t, new(any))
	deactivate := `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}`
	if u := scimJSON(t, d.do("PATCH", "/Users/"+id, deactivate), 200); u["active"] != false {
		t.Errorf("after deactivation: %v", u)
	}
	e.do(session, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	// Reactivated: the person may sign in again, the old session stays ended.
	reactivate := `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":true}}]}`
	if u := scimJSON(t, d.do("PATCH", "/Users/"+id, reactivate), 200); u["active"] != true {
		t.Errorf("after reactivation: %v", u)
	}
	e.do(session, "GET", "/me", nil).want(t, 401, fxNotAuthed)

	// Group Push: made with its members, renamed, members swapped,
	// deleted.
	other := created(t, d.do("POST", "/Users", oktaUser("other.user@okta.local", "Other", "User")))
	g := scimJSON(t, d.do("POST", "/Groups", map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": "Test SCIMv2",
		"members": []any{map[string]any{"value": id, "display": "test.user@okta.local"}}}), 201)
	gid := g["id"].(string)
	scimJSON(t, d.do("GET", "/Groups/"+gid, nil), 200)
	renamed := scimJSON(t, d.do("PATCH", "/Groups/"+gid, map[string]any{"schemas": []string{scim.PatchOpSchema},
		"Operations": []any{map[string]any{"op": "replace", "value": map[string]any{"id": gid, "displayName": "Test SCIMv2 renamed"}}}}), 200)
	if renamed["displayName"] != "Test SCIMv2 renamed" {
		t.Errorf("rename: %v", renamed)
	}
	swapped := scimJSON(t, d.do("PATCH", "/Groups/"+gid, map[string]any{"schemas": []string{scim.PatchOpSchema},
		"Operations": []any{
			map[string]any{"op": "remove", "path": `members[value eq "` + id + `"]`},
			map[string]any{"op": "add", "path": "members", "value": []any{map[string]any{"value": other, "display": "other.user@okta.local"}}},
		}}), 200)
	if fmt.Sprint(swapped["members"]) != fmt.Sprintf("[map[display:other.user@okta.local value:%s]]", other) {
		t.Errorf("members: %v", swapped["members"])
	}
	var groups []map[string]any
	e.do(e.admin, "GET", "/manage/admin/user-group", nil).decode(t, &groups)
	if len(groups) != 1 || groups[0]["name"] != "Test SCIMv2 renamed" || groups[0]["is_scim_synced"] != true || len(groups[0]["users"].([]any)) != 1 {
		t.Errorf("the group in Quarry: %v", groups)
	}
	if r := d.do("DELETE", "/Groups/"+gid, nil); r.status != 204 {
		t.Errorf("DELETE: %d %s", r.status, r.body)
	}
	e.do(e.admin, "GET", "/manage/admin/user-group", nil).want(t, 200, `[]`)
}

// TestEntraProvisioning replays Entra ID's provisioning requests.
func TestEntraProvisioning(t *testing.T) {
	e := newEnv(t)
	d := e.newDirectory("Entra ID")
	// Discovery, as Entra's "Test connection" does.
	scimJSON(t, e.do(user{}, "GET", "/scim/v2/Schemas", nil), 200)
	scimJSON(t, d.do("GET", "/Users?"+filterQuery(`userName eq "non-existent user"`), nil), 200)

	// Create User: a userName that is not an email; the work email is the
	// account's.
	userName := "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1"
	if r := scimJSON(t, d.do("GET", "/Users?"+filterQuery(`userName eq "`+userName+`"`), nil), 200); r["totalResults"] != 0.0 {
		t.Fatalf("lookup: %v", r)
	}
	r := d.do("POST", "/Users", map[string]any{
		"schemas":    []string{scim.UserSchema, scim.EnterpriseUserSchema},
		"externalId": "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef", "userName": userName, "active": true,
		"emails": []any{map[string]any{"primary": true, "type": "work", "value": "Test_User_fd0ea19b@testuser.com"}},
		"meta":   map[string]any{"resourceType": "User"},
		"name":   map[string]any{"formatted": "givenName familyName", "familyName": "familyName", "givenName": "givenName"},
		"roles":  []any{}, "title": "Engineer", "addresses": []any{map[string]any{"type": "work", "formatted": "1 Main St"}},
		scim.EnterpriseUserSchema: map[string]any{"department": "Research", "employeeNumber": "42"},
	})
	id := created(t, r)
	d.wantSCIM(t, r, 201, fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"id":%q,"externalId":"0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef","userName":%q,
		"name":{"givenName":"givenName","familyName":"familyName","formatted":"givenName familyName"},
		"emails":[{"value":"Test_User_fd0ea19b@testuser.com","type":"work","primary":true}],"active":true,"groups":[%s],
		"meta":{"resourceType":"User","created":%q,"lastModified":%q,"location":"$BASE/Users/%s","version":"$VERSION"},
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Research"}}`, id, userName, fxBasicGroupRef, testNowJSON, testNowJSON, id))
	// Get User, Get User by query (any case).
	scimJSON(t, d.do("GET", "/Users/"+id, nil), 200)
	if r := scimJSON(t, d.do("GET", "/Users?"+filterQuery(`userName eq "`+strings.ToUpper(userName)+`"`), nil), 200); r["totalResults"] != 1.0 {
		t.Errorf("by query: %v", r)
	}
	// Update User [Multi-valued properties]: two operations in one
	// request.
	u := scimJSON(t, d.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Replace","path":"emails[type eq \"work\"].value","value":"updatedEmail@microsoft.com"},
		{"op":"Replace","path":"name.familyName","value":"updatedFamilyName"}]}`), 200)
	if fmt.Sprint(u["emails"]) != "[map[primary:true type:work value:updatedEmail@microsoft.com]]" || u["name"].(map[string]any)["familyName"] != "updatedFamilyName" {
		t.Errorf("multi-valued: %v", u)
	}
	var people struct {
		Items []map[string]any `json:"items"`
	}
	e.do(e.admin, "GET", "/manage/users/accepted?q=updatedEmail", nil).decode(t, &people)
	if len(people.Items) != 1 || people.Items[0]["email"] != "updatedEmail@microsoft.com" {
		t.Errorf("the account's email follows the work email: %v", people.Items)
	}
	// Update User [Single-valued properties].
	if u := scimJSON(t, d.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Replace","path":"userName","value":"5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com"}]}`), 200); u["userName"] != "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com" {
		t.Errorf("single-valued: %v", u)
	}
	// Attribute changes as Entra sends them by default: several Adds, the
	// manager as a bare id, attributes Quarry does not keep.
	u = scimJSON(t, d.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"mgr-1"},
		{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Eng"},
		{"op":"Add","path":"title","value":"Lead"},
		{"op":"Add","path":"phoneNumbers[type eq \"work\"].value","value":"+1 555 0100"},
		{"op":"Add","path":"displayName","value":"Given Updated"}]}`), 200)
	if fmt.Sprint(u[scim.EnterpriseUserSchema]) != "map[department:Eng manager:map[value:mgr-1]]" || u["displayName"] != "Given Updated" {
		t.Errorf("attributes: %v", u)
	}
	u = scimJSON(t, d.do("PATCH", "/Users/"+id, `{"Operations":[{"op":"Remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager"}]}`), 200)
	if fmt.Sprint(u[scim.EnterpriseUserSchema]) != "map[department:Eng]" {
		t.Errorf("manager removed: %v", u)
	}

	// Groups: looked up by name without members, made, renamed, members
	// added and removed as Entra does (a list, "$ref": null).
	bob := created(t, d.do("POST", "/Users", map[string]any{"schemas": []string{scim.UserSchema}, "userName": "bob@testuser.com",
		"externalId": "b0b", "emails": []any{map[string]any{"primary": true, "type": "work", "value": "bob@testuser.com"}}}))
	if r := scimJSON(t, d.do("GET", "/Groups?excludedAttributes=members&"+filterQuery(`displayName eq "displayName"`), nil), 200); r["totalResults"] != 0.0 {
		t.Fatalf("group lookup: %v", r)
	}
	g := scimJSON(t, d.do("POST", "/Groups", map[string]any{
		"schemas":    []string{scim.GroupSchema, "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"},
		"externalId": "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159", "displayName": "displayName", "meta": map[string]any{"resourceType": "Group"}}), 201)
	gid := g["id"].(string)
	got := scimJSON(t, d.do("GET", "/Groups/"+gid+"?excludedAttributes=members", nil), 200)
	if _, has := got["members"]; has || got["displayName"] != "displayName" {
		t.Errorf("group without members: %v", got)
	}
	got = scimJSON(t, d.do("GET", "/Groups?excludedAttributes=members&"+filterQuery(`displayName eq "DISPLAYNAME"`), nil), 200)
	if got["totalResults"] != 1.0 {
		t.Errorf("group by name: %v", got)
	}
	scimJSON(t, d.do("PATCH", "/Groups/"+gid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Replace","path":"displayName","value":"1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName"}]}`), 200)
	g = scimJSON(t, d.do("PATCH", "/Groups/"+gid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Add","path":"members","value":[{"$ref":null,"value":"`+id+`"},{"$ref":null,"value":"`+strings.ToUpper(bob)+`"}]}]}`), 200)
	if len(g["members"].([]any)) != 2 || g["displayName"] != "1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName" {
		t.Errorf("after adding: %v", g)
	}
	if r := scimJSON(t, d.do("GET", "/Groups?"+filterQuery(`id eq "`+gid+`" and members[value eq "`+bob+`"]`)+"&excludedAttributes=members", nil), 200); r["totalResults"] != 1.0 {
		t.Errorf("membership query: %v", r)
	}
	g = scimJSON(t, d.do("PATCH", "/Groups/"+gid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Remove","path":"members","value":[{"$ref":null,"value":"`+id+`"}]}]}`), 200)
	if fmt.Sprint(g["members"]) != fmt.Sprintf("[map[display:bob@testuser.com value:%s]]", bob) {
		t.Errorf("after removing: %v", g["members"])
	}

	// Disable User: the boolean as Entra's string.
	if u := scimJSON(t, d.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
		{"op":"Replace","path":"active","value":"False"}]}`), 200); u["active"] != false {
		t.Errorf("disable: %v", u)
	}
	// Delete User and Group.
	for _, path := range []string{"/Users/" + id, "/Groups/" + gid} {
		if r := d.do("DELETE", path, nil); r.status != 204 {
			t.Errorf("DELETE %s: %d %s", path, r.status, r.body)
		}
	}
	e.do(e.admin, "GET", "/manage/users/accepted?q=updatedEmail", nil).decode(t, &people)
	if len(people.Items) != 1 || people.Items[0]["is_active"] != false || people.Items[0]["is_scim_synced"] != false {
		t.Errorf("after deletion: %v", people.Items)
	}
	_ = quarry.RoleBasic
}
