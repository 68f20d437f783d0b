package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/scim"
	"github.com/quarryhq/quarry/store"
)

// SCIM: the company's directory provisions people and groups under
// /scim/v2 with its token. These tests use the API as a provider does, on a
// real server and database; every exchange is checked against
// openapi.json (env.do).

// directory is the company's directory calling /scim/v2 with its token.
type directory struct {
	e     *env
	token string
	// contentType is the type of the bodies it sends: SCIM's own, or
	// application/json as Okta's spec test sends some.
	contentType string
}

// newDirectory makes a SCIM token named name as e's admin, through the
// API, and returns the directory that uses it.
func (e *env) newDirectory(name string) *directory {
	e.t.Helper()
	var out struct {
		RawToken string `json:"raw_token"`
	}
	r := e.do(e.admin, "POST", "/admin/enterprise-settings/scim/token", map[string]any{"name": name})
	if r.status != 201 {
		e.t.Fatalf("making a SCIM token: %d %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		e.t.Fatal(err)
	}
	return &directory{e: e, token: out.RawToken, contentType: scim.MediaType}
}

// do sends a SCIM request; a body is sent as d.contentType.
func (d *directory) do(method, path string, body any, headers ...string) *response {
	d.e.t.Helper()
	if body != nil {
		headers = append([]string{"Content-Type", d.contentType}, headers...)
	}
	return d.e.do(user{token: d.token}, method, "/scim/v2"+path, body, headers...)
}

// scimJSON decodes a SCIM answer of status into a map.
func scimJSON(t *testing.T, r *response, status int) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != scim.MediaType {
		t.Errorf("Content-Type %q, want %q", ct, scim.MediaType)
	}
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, r.body)
	}
	return m
}

// wantSCIM asserts the status, the SCIM media type and the whole body of a
// SCIM answer; in want, $VERSION stands for the ETag the answer carries
// (whose changes the tests assert apart) and $BASE for the SCIM base URL.
func (d *directory) wantSCIM(t *testing.T, r *response, status int, want string) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != scim.MediaType {
		t.Errorf("Content-Type %q, want %q", ct, scim.MediaType)
	}
	want = strings.ReplaceAll(want, "$BASE", d.e.srv.URL+"/scim/v2")
	if etag := r.header.Get("ETag"); etag != "" {
		if !regexp.MustCompile(`^W/"[0-9a-f]{20}"$`).MatchString(etag) {
			t.Errorf("ETag %q", etag)
		}
		want = strings.ReplaceAll(want, "$VERSION", strings.ReplaceAll(etag, `"`, `\"`))
	}
	r.want(t, status, want)
}

// scimError is the body of a SCIM error.
func scimError(status int, kind, detail string) string {
	return fxJSON(scim.NewErrorBody(status, kind, detail))
}

// userJSON is the SCIM User resource Okta-style people have in these
// tests: userName u, the work email u, given and family names, in no
// group but Basic (the default group of their role, basic, which SCIM
// shows as Onyx does), active, never changed.
func userJSON(id, userName, given, family string, active bool, extra string) string {
	return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":%q%s,"userName":%q,
		"name":{"givenName":%q,"familyName":%q},"displayName":%q,
		"emails":[{"value":%q,"type":"work","primary":true}],"active":%t,"groups":[%s],
		"meta":{"resourceType":"User","created":%q,"lastModified":%q,"location":"$BASE/Users/%s","version":"$VERSION"}}`,
		id, extra, userName, given, family, given+" "+family, userName, active, fxBasicGroupRef, testNowJSON, testNowJSON, id)
}

// fxBasicGroupRef is the default group Basic in a SCIM User's groups.
var fxBasicGroupRef = fmt.Sprintf(`{"value":"%d","display":"Basic"}`, basicGroupID)

// oktaUser is the body of Okta's POST /Users for a person.
func oktaUser(userName, given, family string) map[string]any {
	return map[string]any{"schemas": []string{scim.UserSchema}, "userName": userName,
		"name":        map[string]any{"givenName": given, "familyName": family},
		"emails":      []any{map[string]any{"primary": true, "value": userName, "type": "work"}},
		"displayName": given + " " + family, "locale": "en-US", "externalId": "00u" + given, "groups": []any{},
		"password": "a-password-Okta-syncs-" + given, "active": true}
}

// created decodes the id of a 201 answer.
func created(t *testing.T, r *response) string {
	t.Helper()
	return scimJSON(t, r, 201)["id"].(string)
}

func TestSCIMTokens(t *testing.T) {
	e := newEnv(t)
	basic := e.user(quarry.RoleBasic, "basic")
	e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 200, `null`)
	e.do(basic, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 403, fxNotAdmin)
	e.do(basic, "POST", "/admin/enterprise-settings/scim/token", map[string]any{"name": "x"}).want(t, 403, fxNotAdmin)
	e.do(e.admin, "POST", "/admin/enterprise-settings/scim/token", map[string]any{}).want(t, 422,
		`{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}}]}`)

	r := e.do(e.admin, "POST", "/admin/enterprise-settings/scim/token", map[string]any{"name": "Okta"})
	var first struct {
		ID       int64  `json:"id"`
		RawToken string `json:"raw_token"`
	}
	r.decode(t, &first)
	if !quarry.ValidSCIMTokenFormat(first.RawToken) {
		t.Fatalf("raw_token %q", first.RawToken)
	}
	meta := func(id int64, token, name, lastUsed string) string {
		return fmt.Sprintf(`{"id":%d,"name":%q,"token_display":"qrd_****%s","is_active":true,"created_at":%q,"last_used_at":%s,"idp_domain":null}`,
			id, name, token[len(token)-4:], testNowJSON, lastUsed)
	}
	r.want(t, 201, strings.TrimSuffix(meta(first.ID, first.RawToken, "Okta", "null"), "}")+fmt.Sprintf(`,"raw_token":%q}`, first.RawToken))
	e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 200, meta(first.ID, first.RawToken, "Okta", "null"))

	// The token works for SCIM, and its use is recorded.
	d := &directory{e: e, token: first.RawToken, contentType: scim.MediaType}
	d.wantSCIM(t, d.do("GET", "/Users", nil), 200,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":0,"startIndex":1,"itemsPerPage":0,"Resources":[]}`)
	e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 200, meta(first.ID, first.RawToken, "Okta", `"`+testNowJSON+`"`))

	// A new token revokes the first.
	second := e.newDirectory("Okta again")
	d.wantSCIM(t, d.do("GET", "/Users", nil), 401, scimError(401, "", "Not authenticated"))
	scimJSON(t, second.do("GET", "/Users", nil), 200)

	// Revoked, it opens nothing; revoking none is 404.
	e.do(e.admin, "DELETE", "/admin/enterprise-settings/scim/token", nil).want(t, 200, `null`)
	scimJSON(t, second.do("GET", "/Users", nil), 401)
	e.do(e.admin, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 200, `null`)
	e.do(e.admin, "DELETE", "/admin/enterprise-settings/scim/token", nil).want(t, 404, `{"detail":"There is no active SCIM token"}`)

	// Every act is in the audit log, by the admin.
	f := fx{e}
	var actions []string
	for _, a := range f.audit("resource_type=scim_token") {
		actions = append(actions, a.Action)
	}
	if want := "scim_token.revoke scim_token.create scim_token.revoke scim_token.create"; strings.Join(actions, " ") != want {
		t.Errorf("audit: %v, want %s", actions, want)
	}
}

// TestSCIMTokenOpensOnlySCIM: the SCIM token opens the SCIM routes and
// nothing else; nothing else (an admin's API key, an admin's session)
// opens them.
func TestSCIMTokenOpensOnlySCIM(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	d := e.newDirectory("okta")
	admin := user{token: d.token}
	e.do(admin, "GET", "/me", nil).want(t, 401, fxNotAuthed)
	e.do(admin, "GET", "/manage/admin/connector/status", nil).want(t, 401, fxNotAuthed)
	e.do(admin, "GET", "/admin/enterprise-settings/scim/token", nil).want(t, 401, fxNotAuthed)
	if got := e.do(admin, "GET", "/me", nil).header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	// Nor as a session cookie.
	e.do(user{cookie: d.token}, "GET", "/me", nil).want(t, 401, fxNotAuthed)

	notAuthed := scimError(401, "", "Not authenticated")
	d.wantSCIM(t, e.do(e.admin, "GET", "/scim/v2/Users", nil), 401, notAuthed)
	e.register("boss@example.com", goodSecret) // the first person: an admin
	boss := e.login("boss@example.com", goodSecret)
	session := sessionCookie(boss)
	d.wantSCIM(t, e.do(user{cookie: session.Value}, "GET", "/scim/v2/Users", nil), 401, notAuthed)
	d.wantSCIM(t, e.do(user{token: session.Value}, "GET", "/scim/v2/Users", nil), 401, notAuthed)
	for _, h := range []string{"Basic " + d.token, d.token, "Bearer", "Bearer qrd_short"} {
		d.wantSCIM(t, e.do(user{}, "GET", "/scim/v2/Users", nil, "Authorization", h), 401, notAuthed)
	}
	// Okta's spec test: "Authorization: non-token".
	r := e.do(user{}, "GET", "/scim/v2/Users", nil, "Authorization", "non-token")
	d.wantSCIM(t, r, 401, notAuthed)
	if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
}

func TestSCIMDiscovery(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.BasePath = "/api" })
	for _, prefix := range []string{"", "/api"} {
		base := e.srv.URL + prefix + "/scim/v2"
		r := e.do(user{}, "GET", prefix+"/scim/v2/ServiceProviderConfig", nil)
		(&directory{e: e}).wantSCIM(t, r, 200, fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
			"documentationUri":"https://github.com/quarryhq/quarry/blob/main/docs/operations.md#provisioning-people-and-groups-scim",
			"patch":{"supported":true},"bulk":{"supported":false,"maxOperations":0,"maxPayloadSize":0},
			"filter":{"supported":true,"maxResults":500},"changePassword":{"supported":false},"sort":{"supported":false},
			"etag":{"supported":true},"authenticationSchemes":[{"type":"oauthbearertoken","name":"OAuth Bearer Token",
			"description":"Authentication scheme using a SCIM bearer token","primary":true}],
			"meta":{"resourceType":"ServiceProviderConfig","location":%q}}`, base+"/ServiceProviderConfig"))
		rts := scimJSON(t, e.do(user{}, "GET", prefix+"/scim/v2/ResourceTypes", nil), 200)
		if rts["totalResults"] != 2.0 || len(rts["Resources"].([]any)) != 2 {
			t.Errorf("resource types %v", rts)
		}
		rt := scimJSON(t, e.do(user{}, "GET", prefix+"/scim/v2/ResourceTypes/User", nil), 200)
		if rt["endpoint"] != "/Users" || rt["meta"].(map[string]any)["location"] != base+"/ResourceTypes/User" {
			t.Errorf("User resource type %v", rt)
		}
		schemas := scimJSON(t, e.do(user{}, "GET", prefix+"/scim/v2/Schemas", nil), 200)
		var ids []string
		for _, s := range schemas["Resources"].([]any) {
			ids = append(ids, s.(map[string]any)["id"].(string))
		}
		if want := []string{scim.UserSchema, scim.GroupSchema, scim.EnterpriseUserSchema}; fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("schemas %v", ids)
		}
		scimJSON(t, e.do(user{}, "GET", prefix+"/scim/v2/Schemas/"+scim.EnterpriseUserSchema, nil), 200)
		scimJSON(t, e.do(user{}, "GET", prefix+"/scim/v2/Schemas/urn:nope", nil), 404)
	}
	// Unknown SCIM paths answer in SCIM's words.
	d := &directory{e: e}
	d.wantSCIM(t, e.do(user{}, "GET", "/scim/v2/Bulk", nil), 404, scimError(404, "", "Not Found"))
	d.wantSCIM(t, e.do(user{}, "POST", "/scim/v2/ServiceProviderConfig", nil), 405, scimError(405, "", "Method Not Allowed"))
}

// TestSCIMUsers: a person's life, whole answers, on both databases.
func TestSCIMUsers(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	d := e.newDirectory("okta")
	r := d.do("POST", "/Users", oktaUser("ann@example.com", "Ann", "Lee"))
	id := created(t, r)
	ann := userJSON(id, "ann@example.com", "Ann", "Lee", true, `,"externalId":"00uAnn"`)
	d.wantSCIM(t, r, 201, ann)
	if loc := r.header.Get("Location"); loc != e.srv.URL+"/scim/v2/Users/"+id {
		t.Errorf("Location %q", loc)
	}
	etag := r.header.Get("ETag")
	d.wantSCIM(t, d.do("GET", "/Users/"+id, nil), 200, ann)
	// If-None-Match: 304.
	if r := d.do("GET", "/Users/"+id, nil, "If-None-Match", etag); r.status != 304 || len(r.body) != 0 {
		t.Errorf("If-None-Match: %d %s", r.status, r.body)
	}
	d.wantSCIM(t, d.do("GET", `/Users?filter=userName%20eq%20%22ANN@EXAMPLE.COM%22`, nil), 200,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":1,"startIndex":1,"itemsPerPage":1,"Resources":[`+
			strings.ReplaceAll(ann, "$VERSION", strings.ReplaceAll(etag, `"`, `\"`))+`]}`)
	// The person is a person of Quarry, shown as the directory's.
	var people struct {
		Items []map[string]any `json:"items"`
	}
	e.do(e.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &people)
	if len(people.Items) != 1 || people.Items[0]["is_scim_synced"] != true || people.Items[0]["scim_active"] != true ||
		people.Items[0]["role"] != "basic" || people.Items[0]["password_configured"] != false || people.Items[0]["personal_name"] != "Ann Lee" {
		t.Errorf("people listing: %v", people.Items)
	}

	t.Run("a patch that changes nothing changes nothing", func(t *testing.T) {
		audit := len(fx{e}.audit("resource_type=user&limit=1000"))
		for _, body := range []string{
			`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"id":"` + id + `","active":true}}]}`,
			`{"Operations":[{"op":"Replace","path":"active","value":"True"},{"op":"Add","path":"name.givenName","value":"Ann"}]}`,
			`{"Operations":[]}`,
		} {
			r := d.do("PATCH", "/Users/"+id, body)
			d.wantSCIM(t, r, 200, ann)
			if r.header.Get("ETag") != etag {
				t.Errorf("%s: ETag %s, want %s", body, r.header.Get("ETag"), etag)
			}
		}
		if n := len(fx{e}.audit("resource_type=user&limit=1000")); n != audit {
			t.Errorf("%d audit entries after no-op patches, want %d", n, audit)
		}
	})
	t.Run("conditional changes", func(t *testing.T) {
		body := `{"Operations":[{"op":"replace","path":"displayName","value":"Ann L."}]}`
		d.wantSCIM(t, d.do("PATCH", "/Users/"+id, body, "If-Match", `W/"00000000000000000000"`), 412,
			scimError(412, "", "The resource has changed: its version is no longer the one given in If-Match"))
		r := d.do("PATCH", "/Users/"+id, body, "If-Match", etag)
		m := scimJSON(t, r, 200)
		if m["displayName"] != "Ann L." || r.header.Get("ETag") == etag || m["meta"].(map[string]any)["lastModified"] != fxLater(1) {
			t.Errorf("after a rename: %v, ETag %s", m, r.header.Get("ETag"))
		}
		// The old ETag no longer matches.
		scimJSON(t, d.do("PATCH", "/Users/"+id, body, "If-Match", etag), 412)
	})
	t.Run("errors", func(t *testing.T) {
		for _, tt := range []struct {
			method, path string
			body         any
			status       int
			want         string
		}{
			{"POST", "/Users", oktaUser("ann@example.com", "Other", "Ann"), 409, scimError(409, "uniqueness", "User with userName ann@example.com already exists")},
			{"POST", "/Users", map[string]any{"userName": "x", "emails": []any{map[string]any{"value": "ANN@example.com", "primary": true}}}, 409,
				scimError(409, "uniqueness", "User with email ANN@example.com already exists")},
			{"POST", "/Users", map[string]any{"userName": "not an email"}, 400,
				scimError(400, "invalidValue", "A person needs an email address: give a primary email, or a userName that is one")},
			{"POST", "/Users", map[string]any{"name": map[string]any{"givenName": "x"}}, 400, scimError(400, "invalidValue", "userName is required")},
			{"POST", "/Users", `[1]`, 400, scimError(400, "invalidSyntax", "The body must be a JSON object")},
			{"POST", "/Users", `{"userName":`, 400, scimError(400, "invalidSyntax", "The body must be a JSON object")},
			{"POST", "/Users", map[string]any{"userName": "b@example.com", "active": "maybe"}, 400, scimError(400, "invalidValue", "active must be a boolean")},
			{"GET", "/Users/00000000-0000-0000-0000-000000000000", nil, 404, scimError(404, "", "User 00000000-0000-0000-0000-000000000000 not found")},
			{"GET", "/Users/00919288221112222", nil, 404, scimError(404, "", "User 00919288221112222 not found")},
			{"GET", "/Users?filter=userName%20gt%20%22a%22", nil, 400, scimError(400, "invalidFilter", "The operator gt is not supported")},
			{"GET", "/Users?filter=title%20eq%20%22a%22", nil, 400, scimError(400, "invalidFilter", "Filtering on title is not supported")},
			{"GET", "/Users?filter=userName%20eq", nil, 400, scimError(400, "invalidFilter", "The filter is not a valid SCIM filter: userName eq")},
			{"GET", "/Users?count=ten", nil, 400, scimError(400, "invalidValue", "count must be an integer")},
			{"PATCH", "/Users/" + id, `{"Operations":[{"op":"move","path":"active"}]}`, 400, scimError(400, "invalidSyntax", `Operations[0].op must be add, replace or remove, not "move"`)},
			{"PATCH", "/Users/" + id, `{"Operations":[{"op":"replace","path":"nickname2","value":"x"}]}`, 400, scimError(400, "invalidPath", `Unsupported path "nickname2" for a User`)},
			{"PATCH", "/Users/" + id, `{"Operations":[{"op":"replace","path":"groups","value":[]}]}`, 400, scimError(400, "mutability", "groups is read-only: change a group's members instead")},
			{"PATCH", "/Users/" + id, `{"Operations":[{"op":"remove"}]}`, 400, scimError(400, "noTarget", "Operations[0]: remove needs a path")},
			{"PATCH", "/Users/" + id, `{"Operations":[{"op":"replace","path":"active","value":"perhaps"}]}`, 400, scimError(400, "invalidValue", "active must be a boolean")},
			{"PATCH", "/Users/" + id, `{}`, 400, scimError(400, "invalidSyntax", "Operations is required")},
		} {
			var r *response
			if s, ok := tt.body.(string); ok {
				r = d.do(tt.method, tt.path, s)
			} else {
				r = d.do(tt.method, tt.path, tt.body)
			}
			d.wantSCIM(t, r, tt.status, tt.want)
		}
		// A body that is not JSON by its type.
		d.wantSCIM(t, e.do(user{token: d.token}, "POST", "/scim/v2/Users", `{"userName":"c@example.com"}`, "Content-Type", "text/plain"), 400,
			scimError(400, "invalidSyntax", "The body must be application/scim+json"))
	})
	t.Run("deactivation ends sessions, reactivation brings none back", func(t *testing.T) {
		// Ann signs in (an admin gave her a password).
		var reset struct {
			Password string `json:"new_password"`
		}
		e.do(e.admin, "POST", "/manage/admin/reset-password", map[string]any{"user_email": "ann@example.com"}).decode(t, &reset)
		secretsOf(t).add(reset.Password)
		session := sessionCookie(e.login("ann@example.com", reset.Password))
		annSession := user{cookie: session.Value}
		e.do(annSession, "GET", "/me", nil).decode(t, new(any))
		m := scimJSON(t, d.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}`), 200)
		if m["active"] != false {
			t.Fatalf("after deactivation: %v", m)
		}
		e.do(annSession, "GET", "/me", nil).want(t, 401, fxNotAuthed)
		e.login("ann@example.com", reset.Password).want(t, 400, `{"detail":"Wrong email or password"}`)
		// An admin cannot activate her: the directory deactivated her.
		e.do(e.admin, "PATCH", "/manage/admin/activate-user", map[string]any{"user_email": "ann@example.com"}).want(t, 409,
			`{"detail":"ann@example.com is deactivated by the company's directory (SCIM): activate them there"}`)
		scimJSON(t, d.do("PATCH", "/Users/"+id, `{"Operations":[{"op":"Replace","path":"active","value":"True"}]}`), 200)
		e.do(annSession, "GET", "/me", nil).want(t, 401, fxNotAuthed)
		sessionCookie(e.login("ann@example.com", reset.Password))
	})
	t.Run("the audit log names the token", func(t *testing.T) {
		var entries []map[string]any
		e.do(e.admin, "GET", "/admin/audit-log?resource_id="+id+"&limit=1000", nil).decode(t, &entries)
		var got []string
		for _, a := range entries {
			if a["scim_token_name"] != nil {
				got = append(got, fmt.Sprintf("%s %v by %v", a["action"], a["fields"], a["scim_token_name"]))
				if a["actor_user_id"] != nil {
					t.Errorf("an entry of the directory has an actor user: %v", a)
				}
			}
		}
		want := []string{"user.activate [is_active] by okta", "user.deactivate [is_active] by okta", "user.update [name displayName] by okta",
			"user.create [userName email externalId name displayName name.givenName name.familyName emails] by okta"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("audit entries:\n%v\nwant\n%v", got, want)
		}
	})
	t.Run("delete", func(t *testing.T) {
		r := d.do("DELETE", "/Users/"+id, nil)
		if r.status != 204 || len(r.body) != 0 {
			t.Errorf("DELETE: %d %s", r.status, r.body)
		}
		d.wantSCIM(t, d.do("DELETE", "/Users/"+id, nil), 404, scimError(404, "", "User "+id+" not found"))
		var people struct {
			Items []map[string]any `json:"items"`
		}
		e.do(e.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &people)
		if len(people.Items) != 1 || people.Items[0]["is_active"] != false || people.Items[0]["is_scim_synced"] != false {
			t.Errorf("Ann after deletion: %v", people.Items)
		}
	})
}

// TestSCIMCreateAtOnce: a provider's retries of one creation, at once, on
// two replicas (two store handles on one database), make one person; the
// others get 409 uniqueness.
func TestSCIMCreateAtOnce(t *testing.T) {
	e := newEnv(t)
	d := e.newDirectory("okta")
	replicas := []*directory{d, {e: e.replica(), token: d.token, contentType: scim.MediaType}}
	for round := range 3 {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
		)
		name := fmt.Sprintf("p%d@example.com", round)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := replicas[i%2].do("POST", "/Users", oktaUser(name, fmt.Sprintf("P%d", round), "Q"))
				mu.Lock()
				statuses[r.status]++
				mu.Unlock()
				if r.status == 409 {
					(&directory{e: e}).wantSCIM(t, r, 409, scimError(409, "uniqueness", "User with userName "+name+" already exists"))
				}
			}()
		}
		wg.Wait()
		if statuses[201] != 1 || statuses[409] != 7 {
			t.Errorf("round %d: statuses %v, want one 201 and seven 409", round, statuses)
		}
		ps, total, err := e.db.People(context.Background(), quarry.UserFilter{Query: name, Limit: 10})
		if err != nil || total != 1 || len(ps) != 1 {
			t.Errorf("round %d: %d people with %s", round, total, name)
		}
	}
}

// TestSCIMGroupsAndTheAdminAPI: the directory's groups, and what an admin
// may still change of them.
func TestSCIMGroupsAndTheAdminAPI(t *testing.T) {
	e := newEnv(t)
	d := e.newDirectory("entra")
	f := fx{e}
	ann := created(t, d.do("POST", "/Users", oktaUser("ann@example.com", "Ann", "Lee")))
	bob := created(t, d.do("POST", "/Users", oktaUser("bob@example.com", "Bob", "Ray")))
	bot := e.user(quarry.RoleBasic, "bot")
	r := d.do("POST", "/Groups", map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": "Eng", "externalId": "g-eng",
		"members": []any{map[string]any{"value": ann}}})
	gid := created(t, r)
	d.wantSCIM(t, r, 201, fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"id":%q,"externalId":"g-eng",
		"displayName":"Eng","members":[{"value":%q,"display":"ann@example.com"}],
		"meta":{"resourceType":"Group","created":%q,"lastModified":%q,"location":"$BASE/Groups/%s","version":"$VERSION"}}`,
		gid, ann, testNowJSON, testNowJSON, gid))
	// Ann's groups follow.
	annJSON := scimJSON(t, d.do("GET", "/Users/"+ann, nil), 200)
	if fmt.Sprint(annJSON["groups"]) != fmt.Sprintf("[map[display:Basic value:%d] map[display:Eng value:%s]]", basicGroupID, gid) {
		t.Errorf("Ann's groups: %v", annJSON["groups"])
	}
	// The admin API: the group is the directory's.
	var g map[string]any
	e.do(e.admin, "GET", "/manage/admin/user-group", nil).decode(t, &[]any{})
	path := "/manage/admin/user-group/" + gid
	e.do(e.admin, "PATCH", path, map[string]any{"name": "Engineering"}).want(t, 409,
		`{"detail":"User group `+gid+` is managed by the company's directory (SCIM): rename it there"}`)
	e.do(e.admin, "PATCH", path, map[string]any{"user_ids": []string{ann, bob}}).want(t, 409,
		`{"detail":"User group `+gid+` is managed by the company's directory (SCIM), and so is user `+bob+`: change their membership there"}`)
	e.do(e.admin, "POST", path+"/add-users", map[string]any{"user_ids": []string{bob}}).want(t, 409,
		`{"detail":"User group `+gid+` is managed by the company's directory (SCIM), and so is user `+bob+`: change their membership there"}`)
	e.do(e.admin, "DELETE", path, nil).want(t, 409, `{"detail":"User group `+gid+` is managed by the company's directory (SCIM): delete it there"}`)
	// ... but a service account may be added by hand, curator flags set,
	// cc-pairs shared.
	e.do(e.admin, "POST", path+"/add-users", map[string]any{"user_ids": []string{bot.id}}).decode(t, &g)
	if g["is_scim_synced"] != true {
		t.Errorf("the group is not shown as the directory's: %v", g)
	}
	for _, u := range g["users"].([]any) {
		m := u.(map[string]any)
		if m["is_scim_synced"] != (m["id"] == ann) {
			t.Errorf("member %v", m)
		}
	}
	f.setCurator(mustInt(t, gid), user{id: ann}, true)
	conn := f.connector(e.admin, "c", "web")
	pair := f.pair(e.admin, conn, f.credential(e.admin, "web", fxSecret), "p", "private")
	e.do(e.admin, "PATCH", path, map[string]any{"user_ids": []string{ann, bot.id}, "cc_pair_ids": []int64{pair}}).decode(t, &g)

	// The directory replaces its members: the bot stays; Ann, a curator
	// by her flag, leaves and becomes basic again.
	r = d.do("PUT", "/Groups/"+gid, map[string]any{"displayName": "Eng", "externalId": "g-eng", "members": []any{map[string]any{"value": bob}}})
	if m := scimJSON(t, r, 200); fmt.Sprint(m["members"]) != fmt.Sprintf("[map[display:bob@example.com value:%s]]", bob) {
		t.Errorf("members after PUT: %v", m["members"])
	}
	e.do(e.admin, "GET", "/manage/admin/user-group", nil).decode(t, &[]map[string]any{})
	var people struct {
		Items []map[string]any `json:"items"`
	}
	e.do(e.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &people)
	if people.Items[0]["role"] != "basic" {
		t.Errorf("Ann's role after leaving her curated group: %v", people.Items[0]["role"])
	}
	var groups []map[string]any
	e.do(e.admin, "GET", "/manage/admin/user-group", nil).decode(t, &groups)
	if len(groups) != 1 || len(groups[0]["users"].([]any)) != 2 || fmt.Sprint(groups[0]["cc_pair_ids"]) != fmt.Sprintf("[%d]", pair) {
		t.Errorf("after the directory's PUT: %v", groups)
	}
	// Reserved names.
	for _, name := range []string{"Admin", "BASIC", "Adm\u0131n", "Admin\u200b", "\u0410dmin"} { // lookalikes too (issue 31)
		d.wantSCIM(t, d.do("POST", "/Groups", map[string]any{"displayName": name}), 409, scimError(409, "uniqueness", "'"+name+"' is a reserved group name."))
		d.wantSCIM(t, d.do("PATCH", "/Groups/"+gid, `{"Operations":[{"op":"Replace","path":"displayName","value":"`+name+`"}]}`), 409,
			scimError(409, "uniqueness", "'"+name+"' is a reserved group name."))
	}
	// A member that is not the directory's person.
	d.wantSCIM(t, d.do("PATCH", "/Groups/"+gid, `{"Operations":[{"op":"Add","path":"members","value":[{"value":"`+bot.id+`"}]}]}`), 400,
		scimError(400, "invalidValue", "Member(s) not found: "+bot.id))
	// Deleting: done by the directory.
	if r := d.do("DELETE", "/Groups/"+gid, nil); r.status != 204 {
		t.Errorf("DELETE: %d %s", r.status, r.body)
	}
	d.wantSCIM(t, d.do("GET", "/Groups/"+gid, nil), 404, scimError(404, "", "Group "+gid+" not found"))
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSCIMLargeBody: a body over the limit is 413 in SCIM's words.
func TestSCIMLargeBody(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxBodyBytes = 256 })
	d := e.newDirectory("okta")
	d.wantSCIM(t, d.do("POST", "/Users", map[string]any{"userName": strings.Repeat("a", 300) + "@example.com"}), 413,
		scimError(413, "", "Request body is larger than 256 bytes"))
}

var _ = http.StatusOK
var _ = store.SQLite

// TestSCIMCompliance: what an independent SCIM compliance checker found
// (issue 31): a remove of name or displayName leaves it unassigned; a
// remove of active is refused, as the schema says; POST /.search is 501;
// the Group schema's members list $ref and type; the User schema says a
// person needs an email.
func TestSCIMCompliance(t *testing.T) {
	e := newEnv(t)
	d := e.newDirectory("okta")
	id := created(t, d.do("POST", "/Users", oktaUser("ann@example.com", "Ann", "Lee")))
	u := scimJSON(t, d.do("PATCH", "/Users/"+id, `{"Operations":[{"op":"remove","path":"displayName"}]}`), 200)
	if _, ok := u["displayName"]; ok || u["name"] == nil {
		t.Errorf("after removing displayName: %v", u)
	}
	u = scimJSON(t, d.do("PATCH", "/Users/"+id, `{"Operations":[{"op":"remove","path":"name"}]}`), 200)
	if _, ok := u["name"]; ok {
		t.Errorf("after removing name: %v", u)
	}
	u = scimJSON(t, d.do("GET", "/Users/"+id, nil), 200)
	if _, ok := u["displayName"]; ok || u["name"] != nil {
		t.Errorf("read again: %v", u)
	}
	// Quarry keeps the person's name when the directory sends none.
	var accepted struct {
		Items []map[string]any `json:"items"`
	}
	e.do(e.admin, "GET", "/manage/users/accepted?q=ann", nil).decode(t, &accepted)
	if len(accepted.Items) != 1 || accepted.Items[0]["personal_name"] != "Ann Lee" {
		t.Errorf("Ann's name in Quarry: %v", accepted.Items)
	}
	d.wantSCIM(t, d.do("PATCH", "/Users/"+id, `{"Operations":[{"op":"remove","path":"active"}]}`), 400,
		scimError(400, "mutability", "active cannot be removed"))
	for _, path := range []string{"/.search", "/Users/.search", "/Groups/.search"} {
		d.wantSCIM(t, d.do("POST", path, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],"filter":"userName eq \"ann@example.com\""}`),
			501, scimError(501, "", "Searching with POST /.search is not supported: use GET with a filter (RFC 7644 section 3.4.2)"))
		if r := e.do(user{}, "POST", "/scim/v2"+path, `{}`); r.status != 401 {
			t.Errorf("POST %s without the token: %d", path, r.status)
		}
	}
	var group struct {
		Attributes []struct {
			Name          string `json:"name"`
			SubAttributes []struct {
				Name            string   `json:"name"`
				Type            string   `json:"type"`
				ReferenceTypes  []string `json:"referenceTypes"`
				CanonicalValues []string `json:"canonicalValues"`
			} `json:"subAttributes"`
		} `json:"attributes"`
	}
	if err := json.Unmarshal(d.do("GET", "/Schemas/"+scim.GroupSchema, nil).body, &group); err != nil {
		t.Fatal(err)
	}
	var subs []string
	for _, a := range group.Attributes {
		if a.Name == "members" {
			for _, s := range a.SubAttributes {
				subs = append(subs, fmt.Sprintf("%s:%s%v%v", s.Name, s.Type, s.ReferenceTypes, s.CanonicalValues))
			}
		}
	}
	if strings.Join(subs, " ") != "value:string[][] display:string[][] $ref:reference[User][] type:string[][User]" {
		t.Errorf("the members' sub-attributes: %v", subs)
	}
	user := string(d.do("GET", "/Schemas/"+scim.UserSchema, nil).body)
	if !strings.Contains(user, "A person needs an email address") || !strings.Contains(user, "It cannot be removed (400 mutability") {
		t.Errorf("the User schema does not say that a person needs an email, or why active cannot be removed: %s", user)
	}
	// Members sent with Entra ID's $ref and a type are read as before.
	gid := created(t, d.do("POST", "/Groups", map[string]any{"schemas": []string{scim.GroupSchema}, "displayName": "Eng",
		"members": []any{map[string]any{"value": id, "$ref": nil, "type": "User"}}}))
	if g := scimJSON(t, d.do("GET", "/Groups/"+gid, nil), 200); len(g["members"].([]any)) != 1 {
		t.Errorf("Eng's members: %v", g["members"])
	}
}
