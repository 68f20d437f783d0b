package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/scim"
)

// Where the company's directory (SCIM) meets group permissions and the
// default groups (docs/decisions.md, "The company's directory (SCIM)" and
// "Group permissions and default groups").

// fxDirectoryPersonJSON is a person the directory manages as GET
// /manage/users lists them (no groups), with a password an admin set:
// active or not, and active or not as the directory says (scimActive:
// true, false, or null once it no longer manages them).
func fxDirectoryPersonJSON(id, email, name string, active bool, synced bool, scimActive any) string {
	return fmt.Sprintf(`{"id":%q,"email":%q,"role":"basic","account_type":"STANDARD","is_active":%t,"password_configured":true,
		"personal_name":%q,"created_at":%q,"updated_at":%q,"groups":[],"is_scim_synced":%t,"craft_enabled":null,"sso_issuers":[],
		"scim_active":%s}`, id, email, active, name, testNowJSON, testNowJSON, synced, fxJSON(scimActive))
}

// TestSCIMGroupPermissions: a directory group's permissions are Quarry's,
// granted by an admin and kept whatever the directory does to the group;
// its people hold them while they are its members and active, and a
// person the directory deactivates holds nothing at all.
func TestSCIMGroupPermissions(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	f := fx{e}
	d := e.newDirectory("okta")
	ann := created(t, d.do("POST", "/Users", oktaUser("ann@example.com", "Ann", "Lee")))
	r := d.do("POST", "/Groups", map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": "Eng",
		"members": []any{map[string]any{"value": ann}}})
	gid := created(t, r)
	g := mustInt(t, gid)
	perms := fmt.Sprintf("/manage/admin/user-group/%d/permissions", g)
	withConnectors := `["add:connectors","basic","generate:image","manage:connectors","read:chat","read:connectors","read:search","use:llm_gateway","write:chat"]`

	// Made by the directory, granted basic as every group is; an admin
	// grants it more.
	e.do(e.admin, "GET", perms, nil).want(t, 200, `["basic"]`)
	f.grant(g, quarry.PermManageConnectors, true)
	e.do(e.admin, "GET", perms, nil).want(t, 200, `["basic","manage:connectors"]`)
	// SCIM does not show permissions: the group's version is unchanged.
	if r2 := d.do("GET", "/Groups/"+gid, nil, "If-None-Match", r.header.Get("ETag")); r2.status != 304 {
		t.Errorf("the group's version changed with a grant: %d %s", r2.status, r2.body)
	}
	// The directory's changes keep the grant.
	scimJSON(t, d.do("PUT", "/Groups/"+gid, map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": "Engineering",
		"members": []any{map[string]any{"value": ann}}}), 200)
	e.do(e.admin, "GET", perms, nil).want(t, 200, `["basic","manage:connectors"]`)

	// Ann (given a password by an admin) holds it, and uses it.
	var reset struct {
		Password string `json:"new_password"`
	}
	e.do(e.admin, "POST", "/manage/admin/reset-password", map[string]any{"user_email": "ann@example.com"}).decode(t, &reset)
	secretsOf(t).add(reset.Password)
	signIn := func() user { return user{cookie: sessionCookie(e.login("ann@example.com", reset.Password)).Value} }
	annS := signIn()
	e.do(annS, "GET", "/me/permissions", nil).want(t, 200, withConnectors)
	f.fxOK(e.do(annS, "POST", "/manage/admin/connector", fxConnectorBody("ann's", "web")))

	// The directory takes her out of the group: she holds basic only. It
	// cannot put her back while the group holds more than basic (issue
	// 31: 403), in either provider's way; once the admin takes the grant
	// back, it can, and the admin's new grant is hers again.
	scimJSON(t, d.do("PATCH", "/Groups/"+gid, `{"Operations":[{"op":"remove","path":"members[value eq \"`+ann+`\"]"}]}`), 200)
	e.do(annS, "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
	e.do(annS, "POST", "/manage/admin/connector", fxConnectorBody("again", "web")).want(t, 403, fxNotCurator)
	noAddition := scimError(403, "", "Group 'Engineering' is granted manage:connectors beyond basic: the directory cannot add people to it (grant such permissions to a group made in Quarry, and add people there; or take them back from this group)")
	d.wantSCIM(t, d.do("PATCH", "/Groups/"+gid, `{"Operations":[{"op":"Add","path":"members","value":[{"value":"`+ann+`"}]}]}`), 403, noAddition)
	d.wantSCIM(t, d.do("PUT", "/Groups/"+gid, map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": "Engineering",
		"members": []any{map[string]any{"value": ann}}}), 403, noAddition)
	e.do(annS, "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
	f.grant(g, quarry.PermManageConnectors, false)
	scimJSON(t, d.do("PATCH", "/Groups/"+gid, `{"Operations":[{"op":"Add","path":"members","value":[{"value":"`+ann+`"}]}]}`), 200)
	f.grant(g, quarry.PermManageConnectors, true)
	e.do(annS, "GET", "/me/permissions", nil).want(t, 200, withConnectors)

	// An admin deactivates her by hand: the directory still says active.
	annListed := func(active, synced bool, scimActive any) string {
		return fmt.Sprintf(`{"accepted":[%s],"invited":[],"slack_users":[],"accepted_pages":1,"invited_pages":1,"slack_users_pages":1}`,
			fxDirectoryPersonJSON(ann, "ann@example.com", "Ann Lee", active, synced, scimActive))
	}
	e.do(e.admin, "GET", "/manage/users?q=ann", nil).want(t, 200, annListed(true, true, true))
	e.do(e.admin, "PATCH", "/manage/admin/deactivate-user", map[string]any{"user_email": "ann@example.com"}).want(t, 200, `null`)
	e.do(e.admin, "GET", "/manage/users?q=ann", nil).want(t, 200, annListed(false, true, true))
	e.do(annS, "GET", "/me/permissions", nil).want(t, 401, fxNotAuthed)
	e.do(e.admin, "PATCH", "/manage/admin/activate-user", map[string]any{"user_email": "ann@example.com"}).want(t, 200, `null`)
	annS = signIn()

	// Deactivated by the directory: her session ends, she cannot sign in,
	// and her groups' grants open nothing; the listings say who decided.
	scimJSON(t, d.do("PATCH", "/Users/"+ann, `{"Operations":[{"op":"replace","value":{"active":false}}]}`), 200)
	e.do(annS, "GET", "/me/permissions", nil).want(t, 401, fxNotAuthed)
	e.do(annS, "POST", "/manage/admin/connector", fxConnectorBody("gone", "web")).want(t, 401, fxNotAuthed)
	e.login("ann@example.com", reset.Password).want(t, 400, `{"detail":"Wrong email or password"}`)
	e.do(e.admin, "GET", "/manage/users?q=ann", nil).want(t, 200, annListed(false, true, false))
	var accepted struct {
		Items []map[string]any `json:"items"`
	}
	e.do(e.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &accepted)
	if len(accepted.Items) != 1 || accepted.Items[0]["is_active"] != false || accepted.Items[0]["is_scim_synced"] != true ||
		accepted.Items[0]["scim_active"] != false || fmt.Sprint(accepted.Items[0]["groups"]) != fmt.Sprintf("[map[id:%d name:Basic] map[id:%d name:Engineering]]", basicGroupID, g) {
		t.Errorf("Ann deactivated by the directory, in /manage/users/accepted: %v", accepted.Items)
	}
	// Reactivated there: the old session stays ended; a new one holds
	// what her groups grant, which she kept.
	scimJSON(t, d.do("PATCH", "/Users/"+ann, `{"Operations":[{"op":"replace","value":{"active":true}}]}`), 200)
	e.do(annS, "GET", "/me/permissions", nil).want(t, 401, fxNotAuthed)
	annS = signIn()
	e.do(annS, "GET", "/me/permissions", nil).want(t, 200, withConnectors)

	// Deleted from the directory: deactivated, out of its groups (and their
	// grants), still in Basic; no longer the directory's, so an admin may
	// activate her, with a basic user's rights.
	if r := d.do("DELETE", "/Users/"+ann, nil); r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	e.do(annS, "GET", "/me/permissions", nil).want(t, 401, fxNotAuthed)
	e.do(e.admin, "GET", "/manage/users?q=ann", nil).want(t, 200, annListed(false, false, nil))
	e.do(e.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &accepted)
	if len(accepted.Items) != 1 || fmt.Sprint(accepted.Items[0]["groups"]) != fmt.Sprintf("[map[id:%d name:Basic]]", basicGroupID) {
		t.Errorf("Ann after her deletion: %v", accepted.Items)
	}
	e.do(e.admin, "PATCH", "/manage/admin/activate-user", map[string]any{"user_email": "ann@example.com"}).want(t, 200, `null`)
	e.do(signIn(), "GET", "/me/permissions", nil).want(t, 200, fxBasicPerms)
	// The group is still the directory's, with its grant.
	e.do(e.admin, "GET", perms, nil).want(t, 200, `["basic","manage:connectors"]`)
}

// TestSCIMDefaultGroups: the default groups are SCIM groups the directory
// sees (with its people in them) but never changes: not their names, not
// their members, not their existence. An admin grants them permissions,
// which the directory's people in them hold.
func TestSCIMDefaultGroups(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	d := e.newDirectory("entra")
	ann := created(t, d.do("POST", "/Users", oktaUser("ann@example.com", "Ann", "Lee")))
	bob := created(t, d.do("POST", "/Users", oktaUser("bob@example.com", "Bob", "Ray")))
	basic := fmt.Sprint(basicGroupID)
	// Made by the migration, at its own time (its clock, not the test's).
	created := scimJSON(t, d.do("GET", "/Groups/"+basic, nil), 200)["meta"].(map[string]any)["created"].(string)
	basicJSON := func(members ...quarry.DirectoryMember) string {
		return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"id":%q,"displayName":"Basic","members":%s,
			"meta":{"resourceType":"Group","created":%q,"lastModified":%q,"location":"$BASE/Groups/%s","version":"$VERSION"}}`,
			basic, fxDirectoryMembers(members...), created, created, basic)
	}
	r := d.do("GET", "/Groups/"+basic, nil)
	d.wantSCIM(t, r, 200, basicJSON(quarry.DirectoryMember{ID: ann, Email: "ann@example.com"}, quarry.DirectoryMember{ID: bob, Email: "bob@example.com"}))
	etag := r.header.Get("ETag")
	// Found by name, as a provider links groups.
	list := scimJSON(t, d.do("GET", "/Groups?"+filterQuery(`displayName eq "basic"`), nil), 200)
	if list["totalResults"] != 1.0 || list["Resources"].([]any)[0].(map[string]any)["id"] != basic {
		t.Errorf("Basic by name: %v", list)
	}
	reserved := scimError(409, "uniqueness", "'Basic' is a reserved group name and cannot be changed or deleted.")
	for _, tt := range []struct {
		name, method string
		body         any
	}{
		{"replace its members", "PUT", map[string]any{"displayName": "Basic", "members": []any{map[string]any{"value": ann}}}},
		{"rename it", "PUT", map[string]any{"displayName": "Everyone", "members": []any{map[string]any{"value": ann}, map[string]any{"value": bob}}}},
		{"remove a member", "PATCH", `{"Operations":[{"op":"remove","path":"members[value eq \"` + ann + `\"]"}]}`},
		{"add a member it has", "PATCH", `{"Operations":[{"op":"Add","path":"members","value":[{"value":"` + ann + `"}]}]}`},
		{"give it an externalId", "PATCH", `{"Operations":[{"op":"replace","path":"externalId","value":"g-basic"}]}`},
		{"delete it", "DELETE", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r *response
			if s, ok := tt.body.(string); ok {
				r = d.do(tt.method, "/Groups/"+basic, s)
			} else {
				r = d.do(tt.method, "/Groups/"+basic, tt.body)
			}
			d.wantSCIM(t, r, 409, reserved)
		})
	}
	d.wantSCIM(t, d.do("DELETE", fmt.Sprint("/Groups/", adminGroupID), nil), 409,
		scimError(409, "uniqueness", "'Admin' is a reserved group name and cannot be changed or deleted."))
	// Nothing changed: same version, same members, not the directory's.
	if r := d.do("GET", "/Groups/"+basic, nil, "If-None-Match", etag); r.status != 304 {
		t.Errorf("Basic changed: %d %s", r.status, r.body)
	}
	var groups []map[string]any
	e.do(e.admin, "GET", "/manage/admin/user-group?include_default=true", nil).decode(t, &groups)
	if len(groups) != 2 || groups[1]["name"] != "Basic" || groups[1]["is_scim_synced"] != false || len(groups[1]["users"].([]any)) != 2 {
		t.Errorf("the default groups after the directory's attempts: %v", groups)
	}
	// A grant to Basic reaches the directory's people: Bob, made an admin,
	// leaves Basic (and SCIM shows it).
	f.grant(basicGroupID, quarry.PermManageActions, true)
	e.do(e.admin, "PATCH", "/manage/set-user-role", map[string]any{"user_email": "bob@example.com", "new_role": "admin"}).want(t, 200, `null`)
	bobJSON := scimJSON(t, d.do("GET", "/Users/"+bob, nil), 200)
	if fmt.Sprint(bobJSON["groups"]) != fmt.Sprintf("[map[display:Admin value:%d]]", adminGroupID) {
		t.Errorf("Bob's groups as an admin: %v", bobJSON["groups"])
	}
	d.wantSCIM(t, d.do("GET", "/Groups/"+basic, nil), 200, basicJSON(quarry.DirectoryMember{ID: ann, Email: "ann@example.com"}))
}

// fxDirectoryMembers renders the members of a SCIM Group, ascending by
// id as SCIM lists them.
func fxDirectoryMembers(ms ...quarry.DirectoryMember) string {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b quarry.DirectoryMember) int { return strings.Compare(a.ID, b.ID) })
	return fxJSON(append([]quarry.DirectoryMember{}, ms...))
}

// TestSCIMDeactivatesNoAdmin: the directory adopts an admin's account by
// email, but deactivates it neither by active false nor by a deletion
// (403), and the admin still signs in (issue 31).
func TestSCIMDeactivatesNoAdmin(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	boss := e.person("boss@example.com") // the first person: an admin
	d := e.newDirectory("okta")
	id := created(t, d.do("POST", "/Users", oktaUser("boss@example.com", "The", "Boss")))
	refused := scimError(403, "", "The directory cannot deactivate an admin or curator (boss@example.com): deactivate them in Quarry, or demote them first")
	d.wantSCIM(t, d.do("PATCH", "/Users/"+id, `{"Operations":[{"op":"replace","value":{"active":false}}]}`), 403, refused)
	d.wantSCIM(t, d.do("DELETE", "/Users/"+id, nil), 403, refused)
	var me struct {
		Role     string `json:"role"`
		IsActive bool   `json:"is_active"`
	}
	e.do(boss, "GET", "/me", nil).decode(t, &me)
	if me.Role != "admin" || !me.IsActive {
		t.Errorf("the admin after the directory's attempts: %+v", me)
	}
}

// TestSCIMHandsOverUnprovenAccount: somebody registered a colleague's
// email before the directory provisioned the colleague. The directory's
// adoption hands the account over (quarry.User.HandsOver): the password,
// the session and the personal access token of whoever registered it open
// nothing, and the audit entry says so. An admin's account is adopted and
// kept (TestSCIMDeactivatesNoAdmin).
func TestSCIMHandsOverUnprovenAccount(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	e.person("boss@example.com") // the first person: an admin
	stranger := e.person("vic@example.com")
	_, pat := e.makePAT(t, stranger, `{"name":"mine"}`)
	var me struct{ Email string }
	if e.do(user{token: pat}, "GET", "/me", nil).decode(t, &me); me.Email != "vic@example.com" {
		t.Fatalf("the token is %s's", me.Email)
	}
	d := e.newDirectory("okta")
	id := created(t, d.do("POST", "/Users", oktaUser("vic@example.com", "Vic", "Tor")))
	if id != stranger.id {
		t.Fatalf("the directory made %s, want the account with the email, %s", id, stranger.id)
	}
	e.do(stranger, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	e.do(user{token: pat}, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	e.login("vic@example.com", goodSecret).want(t, 400, `{"detail":"Wrong email or password"}`)
	var entries []map[string]any
	e.do(e.admin, "GET", "/admin/audit-log?action=user.adopt&resource_id="+id, nil).decode(t, &entries)
	if len(entries) != 1 || fmt.Sprint(entries[0]["fields"]) != "[userName email externalId name displayName name.givenName name.familyName emails "+
		"password identities sessions personal_access_tokens tool_tokens mcp_connections email_verified]" {
		t.Errorf("audit entries of the adoption: %v", entries)
	}
}
