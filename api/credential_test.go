package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// secretJSON is a credential with a secret of every shape masking knows.
const secretJSON = `{
	"api_token": "my-very-long-secret-token-here",
	"password": "hunter2",
	"port": 5432,
	"ssl": true,
	"none": null,
	"nested": {"client_secret": "another-long-secret-value-of-thirty", "pin": 1234, "scopes": ["read", "write"]},
	"list": ["first-long-secret-value-of-thirty", "short", 99],
	"authentication_method": "oauth",
	"username": "bob"
}`

// maskedSecretJSON is secretJSON as responses show it.
const maskedSecretJSON = `{
	"api_token": "my-v...here",
	"password": "••••••••••••",
	"port": "*****",
	"ssl": true,
	"none": null,
	"nested": {"client_secret": "anot...irty", "pin": "*****", "scopes": ["read", "write"]},
	"list": ["firs...irty", "••••••••••••", "*****"],
	"authentication_method": "oauth",
	"username": "••••••••••••"
}`

// createCredential creates a credential as u and returns its id.
func (e *env) createCredential(u user, body string) int64 {
	e.t.Helper()
	var out struct {
		ID int64 `json:"id"`
	}
	e.do(u, "POST", "/manage/credential", body).decode(e.t, &out)
	return out.ID
}

// createGroup creates a group with members (user ids, curators flagged) and
// returns its id.
func (e *env) createGroup(name string, members []user, curators ...user) int64 {
	e.t.Helper()
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.id
	}
	var g struct {
		ID int64 `json:"id"`
	}
	e.do(e.admin, "POST", "/manage/admin/user-group", map[string]any{"name": name, "user_ids": ids}).decode(e.t, &g)
	for _, c := range curators {
		e.do(e.admin, "POST", fmt.Sprintf("/manage/admin/user-group/%d/set-curator", g.ID),
			map[string]any{"user_id": c.id, "is_curator": true}).want(e.t, 200, `null`)
	}
	return g.ID
}

// stored returns the credential_json kept for credential id, unmasked, as
// its owner u reads it from the store.
func (e *env) stored(u user, id int64) map[string]any {
	e.t.Helper()
	c, err := e.db.Authenticate(context.Background(), quarry.HashAPIKey(u.token))
	if err != nil {
		e.t.Fatal(err)
	}
	k, err := e.db.Credential(context.Background(), c, id)
	if err != nil {
		e.t.Fatalf("reading credential %d: %v", id, err)
	}
	m, err := quarry.DecodeObject(k.CredentialJSON)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// wantStored asserts the stored credential_json of credential id, owned by u.
func (e *env) wantStored(t *testing.T, u user, id int64, want string) {
	t.Helper()
	w, err := quarry.DecodeObject([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, e.stored(u, id)); diff != "" {
		t.Errorf("stored credential_json mismatch (-want +got):\n%s", diff)
	}
}

// snapshot renders the expected CredentialSnapshot of a credential.
func snapshot(id int64, owner user, credJSON, name string, adminPublic, curatorPublic bool, groups string, updated string) string {
	return fmt.Sprintf(`{"credential_json": %s, "admin_public": %t, "source": "confluence", "name": %s,
		"curator_public": %t, "groups": %s, "id": %d, "user_id": %q, "user_email": %q,
		"time_created": %q, "time_updated": %q}`,
		credJSON, adminPublic, name, curatorPublic, groups, id, owner.id, owner.email, testNowJSON, updated)
}

// testLaterJSON is time_updated after one change at the fixed clock: one
// microsecond later, since time_updated always advances.
const testLaterJSON = "2026-11-21T10:15:30.123457Z"

func TestUpdateCredentialFields(t *testing.T) {
	e := newEnv(t)
	g1 := e.createGroup("one", nil)
	g2 := e.createGroup("two", nil)
	newCred := func() int64 {
		return e.createCredential(e.admin, `{"credential_json": `+secretJSON+`, "admin_public": false, "source": "confluence",
			"name": "conf", "curator_public": false, "groups": [`+itoa(g1)+`]}`)
	}
	for _, tt := range []struct {
		name   string
		body   string
		want   func(id int64) string
		stored string
	}{
		{"empty body changes nothing", `{}`,
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `"conf"`, false, false, "["+itoa(g1)+"]", testLaterJSON)
			}, secretJSON},
		{"null leaves fields unchanged", `{"credential_json": null, "admin_public": null, "curator_public": null, "groups": null, "source": null}`,
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `"conf"`, false, false, "["+itoa(g1)+"]", testLaterJSON)
			}, secretJSON},
		{"name null clears the name", `{"name": null}`,
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `null`, false, false, "["+itoa(g1)+"]", testLaterJSON)
			}, secretJSON},
		{"flags, name and groups as sent", fmt.Sprintf(`{"admin_public": true, "curator_public": true, "name": "renamed", "groups": [%d, %d, %d]}`, g2, g1, g2),
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `"renamed"`, true, true, fmt.Sprintf("[%d, %d]", g1, g2), testLaterJSON)
			}, secretJSON},
		{"groups emptied", `{"groups": []}`,
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `"conf"`, false, false, "[]", testLaterJSON)
			}, secretJSON},
		{"credential_json replaced whole", `{"credential_json": {"token": "a-brand-new-token-value-of-thirty"}}`,
			func(id int64) string {
				return snapshot(id, e.admin, `{"token": "a-br...irty"}`, `"conf"`, false, false, "["+itoa(g1)+"]", testLaterJSON)
			}, `{"token": "a-brand-new-token-value-of-thirty"}`},
		{"credential_json emptied", `{"credential_json": {}}`,
			func(id int64) string {
				return snapshot(id, e.admin, `{}`, `"conf"`, false, false, "["+itoa(g1)+"]", testLaterJSON)
			}, `{}`},
		{"the same source is accepted", `{"source": "confluence", "name": "x"}`,
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `"x"`, false, false, "["+itoa(g1)+"]", testLaterJSON)
			}, secretJSON},
		{"lax values", `{"admin_public": "yes", "curator_public": 0, "groups": ["` + itoa(g2) + `"], "unknown": 1}`,
			func(id int64) string {
				return snapshot(id, e.admin, maskedSecretJSON, `"conf"`, true, false, "["+itoa(g2)+"]", testLaterJSON)
			}, secretJSON},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := newCred()
			r := e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), tt.body)
			r.want(t, 200, tt.want(id))
			if got := r.header.Get("ETag"); got != `"2"` {
				t.Errorf("ETag = %q, want \"2\"", got)
			}
			e.wantStored(t, e.admin, id, tt.stored)
			// GET shows what PATCH answered.
			e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil).want(t, 200, tt.want(id))
		})
	}
}

func TestUpdateCredentialMaskedEchoes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		masked bool
		send   string
		stored string
	}{
		{"the masked rendering sent back keeps every secret", true, maskedSecretJSON, secretJSON},
		{"one field changed, the rest echoed", true,
			strings.Replace(maskedSecretJSON, `"username": "••••••••••••"`, `"username": "alice"`, 1),
			strings.Replace(secretJSON, `"username": "bob"`, `"username": "alice"`, 1)},
		{"real new values with dots and bullets are stored", true,
			`{"api_token": "my-v...here-2", "password": "•••••", "nested": {"client_secret": "abcd...wxyz"}, "list": ["firs...irty", "new"]}`,
			`{"api_token": "my-v...here-2", "password": "•••••", "nested": {"client_secret": "abcd...wxyz"}, "list": ["first-long-secret-value-of-thirty", "new"]}`},
		{"numbers echoed as ***** keep their value, new numbers are stored", true,
			`{"port": "*****", "nested": {"pin": 4321}}`, `{"port": 5432, "nested": {"pin": 4321}}`},
		{"a mask under another key is a new value", true,
			`{"password": "my-v...here", "other": "••••••••••••"}`, `{"password": "my-v...here", "other": "••••••••••••"}`},
		{"whitelisted keys are taken as sent", true,
			`{"authentication_method": "••••••••••••", "nested": {"scopes": ["*****"]}}`,
			`{"authentication_method": "••••••••••••", "nested": {"scopes": ["*****"]}}`},
		{"with masking off, masks are stored as sent", false,
			`{"api_token": "my-v...here", "port": "*****"}`, `{"api_token": "my-v...here", "port": "*****"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *api.Config) { c.MaskCredentials = tt.masked })
			id := e.createCredential(e.admin, `{"credential_json": `+secretJSON+`, "admin_public": false, "source": "confluence"}`)
			e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"credential_json": `+tt.send+`}`).decode(t, &struct{}{})
			e.wantStored(t, e.admin, id, tt.stored)
		})
	}
	t.Run("GET then PATCH back with one field changed", func(t *testing.T) {
		e := newEnv(t)
		id := e.createCredential(e.admin, `{"credential_json": `+secretJSON+`, "admin_public": false, "source": "confluence", "name": "n"}`)
		var got map[string]any
		e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil).decode(t, &got)
		got["name"] = "changed"
		got["credential_json"].(map[string]any)["username"] = "carol"
		e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), got).decode(t, &struct{}{})
		e.wantStored(t, e.admin, id, strings.Replace(secretJSON, `"username": "bob"`, `"username": "carol"`, 1))
	})
	t.Run("masking off shows the stored values", func(t *testing.T) {
		e := newEnv(t, func(c *api.Config) { c.MaskCredentials = false })
		id := e.createCredential(e.admin, `{"credential_json": `+secretJSON+`, "admin_public": false, "source": "confluence"}`)
		var got struct {
			CredentialJSON json.RawMessage `json:"credential_json"`
		}
		e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil).decode(t, &got)
		var g, w any
		json.Unmarshal(got.CredentialJSON, &g)
		json.Unmarshal([]byte(secretJSON), &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("unmasked credential_json mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestUpdateCredentialErrors(t *testing.T) {
	e := newEnv(t)
	curator := e.user(quarry.RoleCurator, "curator")
	global := e.user(quarry.RoleGlobalCurator, "global")
	basic := e.user(quarry.RoleBasic, "basic")
	other := e.user(quarry.RoleBasic, "other")
	curated := e.createGroup("curated", []user{curator, global, basic}, curator)
	member := e.createGroup("member", []user{curator})
	lonely := e.createGroup("lonely", nil)

	adminPrivate := e.createCredential(e.admin, `{"credential_json": {}, "admin_public": false, "source": "confluence"}`)
	inCurated := e.createCredential(e.admin, fmt.Sprintf(`{"credential_json": {}, "admin_public": false, "source": "confluence", "groups": [%d]}`, curated))
	inBoth := e.createCredential(e.admin, fmt.Sprintf(`{"credential_json": {}, "admin_public": false, "source": "confluence", "groups": [%d, %d]}`, curated, member))
	curatorPublic := e.createCredential(e.admin, `{"credential_json": {}, "admin_public": false, "source": "confluence", "curator_public": true}`)
	basicOwn := e.createCredential(basic, `{"credential_json": {"k": "v"}, "admin_public": false, "source": "confluence"}`)
	otherOwn := e.createCredential(other, `{"credential_json": {}, "admin_public": false, "source": "confluence"}`)
	otherAdminPublic := e.createCredential(other, `{"credential_json": {}, "admin_public": true, "source": "confluence"}`)
	curatorOwn := e.createCredential(curator, fmt.Sprintf(`{"credential_json": {}, "admin_public": false, "source": "confluence", "groups": [%d]}`, curated))

	notFound := func(id int64) string {
		return fmt.Sprintf(`{"detail":"Credential %d does not exist or does not belong to user"}`, id)
	}
	for _, tt := range []struct {
		name   string
		u      user
		id     int64
		body   string
		status int
		want   string
	}{
		{"missing credential", e.admin, 999999, `{}`, 404, notFound(999999)},
		{"admin: another user's private credential", e.admin, otherOwn, `{}`, 404, notFound(otherOwn)},
		{"admin: another user's admin_public credential", e.admin, otherAdminPublic, `{"name": "ok"}`, 200, ""},
		{"curator: credential in a curated group", curator, inCurated, `{}`, 200, ""},
		{"curator: one group only a member of", curator, inBoth, `{}`, 404, notFound(inBoth)},
		{"curator: group-less admin credential", curator, adminPrivate, `{}`, 404, notFound(adminPrivate)},
		{"curator: curator_public does not grant editing", curator, curatorPublic, `{}`, 404, notFound(curatorPublic)},
		{"curator: its own", curator, curatorOwn, `{}`, 200, ""},
		{"global curator: every group it is a member of", global, inCurated, `{}`, 200, ""},
		{"global curator: not a member of every group", global, inBoth, `{}`, 404, notFound(inBoth)},
		{"basic: its own", basic, basicOwn, `{}`, 200, ""},
		{"basic: another user's", basic, otherOwn, `{}`, 404, notFound(otherOwn)},
		{"basic: shared with its group", basic, inCurated, `{}`, 404, notFound(inCurated)},
		{"another source", e.admin, adminPrivate, `{"source": "slack"}`, 400, `{"detail":"The source of a credential cannot be changed"}`},
		{"unknown group", e.admin, adminPrivate, `{"groups": [999999]}`, 400, `{"detail":"User group 999999 does not exist"}`},
		{"curator names a group it does not curate", curator, curatorOwn, fmt.Sprintf(`{"groups": [%d]}`, member), 403,
			`{"detail":"You can only share with groups you curate"}`},
		{"basic names a group", basic, basicOwn, fmt.Sprintf(`{"groups": [%d]}`, lonely), 403,
			`{"detail":"You can only share with groups you curate"}`},
		// Sharing again follows the rules of sharing at first (contract 6).
		{"basic makes its credential curator_public", basic, basicOwn, `{"curator_public": true}`, 400,
			`{"detail":"Basic users can only create private credentials"}`},
		{"curator takes every group away from a private credential", curator, inCurated, `{"groups": []}`, 400,
			`{"detail":"Curators must specify 1+ groups"}`},
		{"curator makes it public instead", curator, curatorOwn, `{"groups": [], "curator_public": true}`, 200, ""},
		{"not found wins over a bad source", basic, otherOwn, `{"source": "slack"}`, 404, notFound(otherOwn)},
		{"bad path id", e.admin, 0, "", 422, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.status == 422 {
				return // see TestUpdateCredentialValidation
			}
			r := e.do(tt.u, "PATCH", "/manage/credential/"+itoa(tt.id), tt.body)
			if tt.want == "" {
				if r.status != tt.status {
					t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
				}
				return
			}
			r.want(t, tt.status, tt.want)
		})
	}

	t.Run("ownership never changes", func(t *testing.T) {
		var got struct {
			UserID string `json:"user_id"`
		}
		e.do(e.admin, "PATCH", "/manage/credential/"+itoa(otherAdminPublic), `{"name": "mine now?"}`).decode(t, &got)
		if got.UserID != other.id {
			t.Errorf("user_id = %s after an admin's PATCH, want the owner %s", got.UserID, other.id)
		}
	})
	t.Run("a failed PATCH changes nothing", func(t *testing.T) {
		e.do(basic, "PATCH", "/manage/credential/"+itoa(basicOwn), `{"credential_json": {"k": "new"}, "source": "slack"}`).want(t, 400,
			`{"detail":"The source of a credential cannot be changed"}`)
		e.do(basic, "PATCH", "/manage/credential/"+itoa(basicOwn), fmt.Sprintf(`{"credential_json": {"k": "new"}, "groups": [%d]}`, lonely)).want(t, 403,
			`{"detail":"You can only share with groups you curate"}`)
		e.wantStored(t, basic, basicOwn, `{"k": "v"}`)
	})
}

func TestUpdateCredentialValidation(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name, path, body, want string
	}{
		{"path not an integer", "/manage/credential/abc", `{}`,
			`{"detail":[{"type":"int_parsing","loc":["path","credential_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]}`},
		{"path and body errors together", "/manage/credential/1.5", `{"credential_json": 5, "admin_public": "maybe", "name": 7, "curator_public": [], "groups": [1, "x", null], "source": "nowhere"}`,
			`{"detail":[
				{"type":"int_parsing","loc":["path","credential_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"1.5"},
				{"type":"dict_type","loc":["body","credential_json"],"msg":"Input should be a valid dictionary","input":5},
				{"type":"bool_parsing","loc":["body","admin_public"],"msg":"Input should be a valid boolean, unable to interpret input","input":"maybe"},
				{"type":"string_type","loc":["body","name"],"msg":"Input should be a valid string","input":7},
				{"type":"bool_type","loc":["body","curator_public"],"msg":"Input should be a valid boolean","input":[]},
				{"type":"int_parsing","loc":["body","groups",1],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"},
				{"type":"int_type","loc":["body","groups",2],"msg":"Input should be a valid integer","input":null},
				{"type":"enum","loc":["body","source"],"msg":"` + enumMsg + `","input":"nowhere","ctx":{"expected":"` + enumExpected + `"}}]}`},
		{"invalid JSON", "/manage/credential/1", `{"name": "x",}`,
			`{"detail":[{"type":"json_invalid","loc":["body",13],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`},
		{"no body", "/manage/credential/1", ``,
			`{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"not an object", "/manage/credential/1", `[1]`,
			`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1]}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			e.do(e.admin, "PATCH", tt.path, body).want(t, 422, tt.want)
		})
	}
}

// enumMsg and enumExpected are pydantic's wording for a bad DocumentSource.
var enumExpected, enumMsg = func() (string, string) {
	vals := quarry.DocumentSource("").EnumValues()
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "'" + v + "'"
	}
	exp := strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	return exp, "Input should be " + exp
}()

func TestUpdateCredentialIfMatch(t *testing.T) {
	e := newEnv(t)
	id := e.createCredential(e.admin, `{"credential_json": {"k": "v"}, "admin_public": false, "source": "confluence", "name": "n"}`)
	r := e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil)
	tag := r.header.Get("ETag")
	if tag != `"1"` {
		t.Fatalf("GET ETag = %q, want \"1\"", tag)
	}
	r = e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "first"}`, "If-Match", tag)
	if r.status != 200 || r.header.Get("ETag") != `"2"` {
		t.Fatalf("conditional PATCH: %d, ETag %q: %s", r.status, r.header.Get("ETag"), r.body)
	}
	const stale = `{"detail":"The object has changed since you read it; fetch it again and retry"}`
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "second", "credential_json": {"k": "lost"}}`, "If-Match", tag).want(t, 412, stale)
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "third"}`, "If-Match", `W/"2"`).want(t, 412, stale)
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "third"}`, "If-Match", `"nonsense"`).want(t, 412, stale)
	var got struct {
		Name string `json:"name"`
	}
	e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil).decode(t, &got)
	if got.Name != "first" {
		t.Errorf("name = %q after a stale PATCH, want first", got.Name)
	}
	e.wantStored(t, e.admin, id, `{"k": "v"}`)
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "any"}`, "If-Match", `*`).decode(t, &got)
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "list"}`, "If-Match", `"1", "3"`).decode(t, &got)
	// Not found wins over a stale tag.
	e.do(e.admin, "PATCH", "/manage/credential/999999", `{}`, "If-Match", `"1"`).want(t, 404,
		`{"detail":"Credential 999999 does not exist or does not belong to user"}`)
}

// TestUpdateCredentialTwoServers sends concurrent conditional PATCHes to
// two servers on one database: for each version exactly one wins.
func TestUpdateCredentialTwoServers(t *testing.T) {
	e := newEnv(t)
	other := e.replica()
	id := e.createCredential(e.admin, `{"credential_json": {"n": 0}, "admin_public": false, "source": "confluence"}`)
	const clients = 8
	wins := map[string]int{}
	var mu sync.WaitGroup
	var lock sync.Mutex
	for i := range clients {
		mu.Add(1)
		go func() {
			defer mu.Done()
			srv := []*env{e, other}[i%2]
			for v := 1; v <= 5; v++ {
				tag := fmt.Sprintf(`"%d"`, v)
				r := srv.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), fmt.Sprintf(`{"credential_json": {"n": %d}}`, i), "If-Match", tag)
				switch r.status {
				case 200:
					lock.Lock()
					wins[tag]++
					lock.Unlock()
				case http.StatusPreconditionFailed:
				default:
					t.Errorf("client %d: status %d: %s", i, r.status, r.body)
				}
			}
		}()
	}
	mu.Wait()
	for v := 1; v <= 5; v++ {
		if tag := fmt.Sprintf(`"%d"`, v); wins[tag] != 1 {
			t.Errorf("version %s won %d times, want once", tag, wins[tag])
		}
	}
}

// TestUpdateCredentialSecretsNotLogged runs a credential's life at debug
// level and checks that no secret value reaches the log.
func TestUpdateCredentialSecretsNotLogged(t *testing.T) {
	e := newEnv(t)
	id := e.createCredential(e.admin, `{"credential_json": `+secretJSON+`, "admin_public": false, "source": "confluence"}`)
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"credential_json": {"api_token": "my-v...here", "fresh": "a-fresh-secret-value-123"}}`).decode(t, &struct{}{})
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"credential_json": {"fresh": "another-fresh-secret-456"}}`, "If-Match", `"1"`)
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"credential_json": {"fresh": "bad json-secret-789"`)
	e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil)
	e.do(e.admin, "GET", "/manage/admin/connector/status", nil)
	if e.log.Len() == 0 {
		t.Fatal("nothing was logged")
	}
	for _, secret := range []string{"my-very-long-secret-token-here", "hunter2", "another-long-secret-value-of-thirty",
		"first-long-secret-value-of-thirty", "a-fresh-secret-value-123", "another-fresh-secret-456", "json-secret-789", e.admin.token} {
		if strings.Contains(e.log.String(), secret) {
			t.Errorf("the log contains the secret %q", secret)
		}
	}
}

// TestCredentialETagFollowsGroups checks that deleting a group a credential
// is shared with changes the credential's ETag, since its groups change.
func TestCredentialETagFollowsGroups(t *testing.T) {
	e := newEnv(t)
	g := e.createGroup("g", nil)
	id := e.createCredential(e.admin, fmt.Sprintf(`{"credential_json": {}, "admin_public": true, "source": "confluence", "groups": [%d]}`, g))
	before := e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil).header.Get("ETag")
	e.do(e.admin, "DELETE", "/manage/admin/user-group/"+itoa(g), nil).want(t, 200, `null`)
	r := e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil)
	if after := r.header.Get("ETag"); after == before {
		t.Errorf("ETag stayed %s after the credential's group was deleted", after)
	}
	e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"name": "stale"}`, "If-Match", before).want(t, 412,
		`{"detail":"The object has changed since you read it; fetch it again and retry"}`)
}

// TestShortSecretsShowNothing is what a newcomer met (issue 39): a
// 16-character password showed as "imap...2026", half of it. Credentials
// and tool headers now show nothing of a secret under 30 characters, and
// what a client sends back, masked now or as it read it before, keeps the
// stored secret.
func TestShortSecretsShowNothing(t *testing.T) {
	e := newEnv(t)
	const password = "imap-pass--2026!"
	id := e.createCredential(e.admin, `{"credential_json": {"imap_username": "ada@example.com", "imap_password": "`+password+`"},
		"admin_public": true, "source": "imap"}`)
	var got struct {
		CredentialJSON map[string]any `json:"credential_json"`
	}
	e.do(e.admin, "GET", "/manage/credential/"+itoa(id), nil).decode(t, &got)
	if want := (map[string]any{"imap_username": "••••••••••••", "imap_password": "••••••••••••"}); !cmp.Equal(got.CredentialJSON, want) {
		t.Errorf("credential_json = %v, want %v", got.CredentialJSON, want)
	}
	for _, echo := range []string{"••••••••••••", "imap...026!"} { // as read now, and as read before
		e.do(e.admin, "PATCH", "/manage/credential/"+itoa(id), `{"credential_json": {"imap_username": "ada@example.com", "imap_password": "`+echo+`"}}`).
			decode(t, &struct{}{})
		e.wantStored(t, e.admin, id, `{"imap_username": "ada@example.com", "imap_password": "`+password+`"}`)
	}

	tool := e.createTool(e.admin, `{"name": "ping", "definition": `+pingDefinition+`, "passthrough_auth": false,
		"custom_headers": [{"key": "X-Api-Key", "value": "`+password+`"}]}`)
	var tl struct {
		CustomHeaders []quarry.Header `json:"custom_headers"`
	}
	e.do(e.admin, "GET", "/tool/"+itoa(tool), nil).decode(t, &tl)
	if want := []quarry.Header{{Key: "X-Api-Key", Value: "••••••••••••"}}; !cmp.Equal(tl.CustomHeaders, want) {
		t.Errorf("custom_headers = %v, want %v", tl.CustomHeaders, want)
	}
	e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(tool), `{"custom_headers": [{"key": "X-Api-Key", "value": "imap...026!"}]}`).decode(t, &struct{}{})
	if h := e.storedHeaders(tool); len(h) != 1 || h[0].Value != password {
		t.Errorf("stored headers after a masked echo: %v", h)
	}
}
