package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/onyxtest"
)

// The routes that Onyx's admin clients call besides the contract's (see
// package onyxtest for the replay of their call sequences), in detail: one
// cc-pair's page, its status and name, its deletion, members added to a
// group, a credential's name and secrets, tools enabled and disabled, and
// the routes of indexing, which Quarry does not do.

// fxPairInfoJSON is the expected CCPairFullInfo of a pair with the
// expected ConnectorSnapshot and CredentialSnapshot of its connector and
// credential.
func fxPairInfoJSON(id int64, name, status string, access quarry.AccessType, editable bool, creator user, connector, credential string, groups ...int64) string {
	return fmt.Sprintf(`{"id":%d,"name":%q,"status":%q,"in_repeated_error_state":false,"num_docs_indexed":0,"connector":%s,
		"credential":%s,"number_of_index_attempts":0,"last_index_attempt_status":null,"latest_deletion_attempt":null,
		"access_type":%q,"is_editable_for_current_user":%t,"deletion_failure_message":null,"indexing":false,"creator":%q,
		"creator_email":%q,"last_indexed":null,"last_pruned":null,"last_full_permission_sync":null,"overall_indexing_speed":null,
		"latest_checkpoint_description":null,"last_permission_sync_attempt_status":null,"permission_syncing":false,
		"last_permission_sync_attempt_finished":null,"last_permission_sync_attempt_error_message":null,"supports_targeted_reindex":false,
		"groups":%s,"pruning":false,"last_prune_attempt_status":null,"last_prune_attempt_finished":null,"last_prune_attempt_error_message":null}`,
		id, name, status, connector, credential, access, editable, creator.id, creator.email, fxJSON(fxIDs(groups)))
}

func TestSupportCCPairPage(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "wiki", "web")
	k := c.credential(c.admin, "web", fxSecret, "admin_public", true, "name", "k")
	kNA := c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true)
	private := c.pair(c.admin, conn, k, "wiki A", "private", c.gA)
	public := c.pair(c.admin, conn, kNA, "wiki public", "public")
	cred := fxCred{id: k, owner: c.admin, source: "web", masked: fxMasked, name: "k", adminPublic: true}.String()
	credNA := fxCred{id: kNA, owner: c.admin, source: "not_applicable", masked: fxMasked, adminPublic: true}.String()
	path := func(id int64) string { return fmt.Sprint("/manage/admin/cc-pair/", id) }
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		want   string
	}{
		{"admin", c.admin, path(private), 200,
			fxPairInfoJSON(private, "wiki A", "SCHEDULED", "private", true, c.admin, fxConnectorJSON(conn, "wiki", "web", k, kNA), cred, c.gA)},
		{"curator of its group", c.curator, path(private), 200,
			fxPairInfoJSON(private, "wiki A", "SCHEDULED", "private", true, c.admin, fxConnectorJSON(conn, "wiki", "web", k, kNA), cred, c.gA)},
		// The public pair: every curator sees it, but may not change it;
		// the connector lists the credentials of the pairs the caller sees.
		{"curator, public pair", c.other, path(public), 200,
			fxPairInfoJSON(public, "wiki public", "SCHEDULED", "public", false, c.admin, fxConnectorJSON(conn, "wiki", "web", kNA), credNA)},
		{"curator, pair it cannot see", c.other, path(private), 404, fmt.Sprintf(`{"detail":"CC pair %d does not exist"}`, private)},
		{"unknown", c.admin, path(9999), 404, `{"detail":"CC pair 9999 does not exist"}`},
		{"bad id", c.admin, "/manage/admin/cc-pair/x", 422, `{"detail":[` + fxIntParsing("cc_pair_id", "x") + `]}`},
		{"basic", c.basic, path(private), 403, fxNotCurator},
		{"no token", user{}, path(private), 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do(tt.u, "GET", tt.path, nil)
			r.want(t, tt.status, tt.want)
			if got := r.header.Get("ETag"); tt.status == 200 && got != `"1"` {
				t.Errorf("ETag = %q, want \"1\"", got)
			}
		})
	}
}

func TestSupportCCPairStatusAndName(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "wiki", "web")
	k := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	kNA := c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, k, "wiki A", "private", c.gA)
	public := c.pair(c.admin, conn, kNA, "wiki public", "public")
	status := func(id int64) string { return fmt.Sprintf("/manage/admin/cc-pair/%d/status", id) }
	name := func(id int64, n string) string {
		return fmt.Sprintf("/manage/admin/cc-pair/%d/name?", id) + url.Values{"new_name": {n}}.Encode()
	}
	get := func(t *testing.T, id int64) (st, nm, etag string) {
		t.Helper()
		var out struct{ Status, Name string }
		r := c.do(c.admin, "GET", fmt.Sprint("/manage/admin/cc-pair/", id), nil)
		r.decode(t, &out)
		return out.Status, out.Name, r.header.Get("ETag")
	}
	listing := func(t *testing.T) string {
		t.Helper()
		r := c.do(c.admin, "GET", "/manage/admin/connector/status", nil)
		if r.status != 200 {
			t.Fatalf("status listing: %d %s", r.status, r.body)
		}
		return string(r.body)
	}
	const ok = `{"message":"200"}`

	t.Run("pause and resume", func(t *testing.T) {
		before := listing(t)
		r := c.do(c.curator, "PUT", status(p), map[string]any{"status": "PAUSED"})
		r.want(t, 200, ok)
		if got := r.header.Get("ETag"); got != `"2"` {
			t.Errorf("ETag = %q, want \"2\"", got)
		}
		if st, _, etag := get(t, p); st != "PAUSED" || etag != `"2"` {
			t.Errorf("after pausing: status %s, ETag %s", st, etag)
		}
		// A paused pair stays in the status listing, which does not change.
		if after := listing(t); after != before {
			t.Errorf("the status listing changed when the pair was paused:\nbefore %s\nafter  %s", before, after)
		}
		// Pausing again changes nothing, not even the version, and
		// leaves no audit entry.
		r = c.do(c.admin, "PUT", status(p), map[string]any{"status": "PAUSED"})
		r.want(t, 200, ok)
		if got := r.header.Get("ETag"); got != `"2"` {
			t.Errorf("ETag after pausing again = %q, want \"2\"", got)
		}
		c.do(c.admin, "PUT", status(p), map[string]any{"status": "ACTIVE"}, "If-Match", `"1"`).
			want(t, 412, `{"detail":"The object has changed since you read it; fetch it again and retry"}`)
		c.do(c.admin, "PUT", status(p), map[string]any{"status": "ACTIVE"}, "If-Match", `"2"`).want(t, 200, ok)
		if st, _, etag := get(t, p); st != "ACTIVE" || etag != `"3"` {
			t.Errorf("after resuming: status %s, ETag %s", st, etag)
		}
	})
	t.Run("rename", func(t *testing.T) {
		for range 2 { // The second time changes nothing.
			r := c.do(c.admin, "PUT", name(p, "wiki & co"), nil)
			r.want(t, 200, fmt.Sprintf(`{"success":true,"message":"Name updated successfully","data":%d}`, p))
			if got := r.header.Get("ETag"); got != `"4"` {
				t.Errorf("ETag = %q, want \"4\"", got)
			}
		}
		if _, nm, _ := get(t, p); nm != "wiki & co" {
			t.Errorf("name = %q after renaming", nm)
		}
		var rows []struct {
			ID   int64  `json:"cc_pair_id"`
			Name string `json:"name"`
		}
		c.do(c.admin, "GET", "/manage/admin/connector/status", nil).decode(t, &rows)
		if i := slices.IndexFunc(rows, func(r struct {
			ID   int64  `json:"cc_pair_id"`
			Name string `json:"name"`
		}) bool {
			return r.ID == p
		}); i < 0 || rows[i].Name != "wiki & co" {
			t.Errorf("the status listing shows %+v", rows)
		}
		c.do(c.admin, "PUT", name(p, "x"), nil, "If-Match", `"3"`).
			want(t, 412, `{"detail":"The object has changed since you read it; fetch it again and retry"}`)
	})
	const notCurated = `{"detail":"Curators can only change what is shared with groups they curate"}`
	for _, tt := range []struct {
		name   string
		u      user
		method string
		path   string
		body   any
		status int
		want   string
	}{
		{"status: curator, public pair of the admin", c.curator, "PUT", status(public), map[string]any{"status": "PAUSED"}, 403, notCurated},
		{"status: curator, pair it cannot see", c.other, "PUT", status(p), map[string]any{"status": "PAUSED"}, 404,
			fmt.Sprintf(`{"detail":"CC pair %d does not exist"}`, p)},
		{"status: unknown", c.admin, "PUT", status(9999), map[string]any{"status": "PAUSED"}, 404, `{"detail":"CC pair 9999 does not exist"}`},
		{"status: Onyx's indexer states", c.admin, "PUT", status(p), map[string]any{"status": "INVALID"}, 422,
			`{"detail":[{"type":"enum","loc":["body","status"],"msg":"Input should be 'ACTIVE' or 'PAUSED'","input":"INVALID","ctx":{"expected":"'ACTIVE' or 'PAUSED'"}}]}`},
		{"status: basic", c.basic, "PUT", status(p), map[string]any{"status": "PAUSED"}, 403, fxNotCurator},
		{"status: no token", user{}, "PUT", status(p), map[string]any{"status": "PAUSED"}, 401, fxNotAuthed},
		{"name: curator, public pair of the admin", c.curator, "PUT", name(public, "x"), nil, 403, notCurated},
		{"name: curator, pair it cannot see", c.other, "PUT", name(p, "x"), nil, 404, fmt.Sprintf(`{"detail":"CC pair %d does not exist"}`, p)},
		{"name: missing", c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/name", p), nil, 422,
			`{"detail":[{"type":"missing","loc":["query","new_name"],"msg":"Field required","input":{}}]}`},
		{"name: basic", c.basic, "PUT", name(p, "x"), nil, 403, fxNotCurator},
		{"name: empty", c.admin, "PUT", name(p, " "), nil, 400, `{"detail":"A cc-pair needs a name"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, tt.method, tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "ccPairStatusUpdate") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "PUT", "", g) })
		}
		for _, g := range fxGoldens(t, "ccPairRename") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "PUT", "", g) })
		}
	})
	t.Run("audit", func(t *testing.T) {
		var got [][]string
		for _, a := range c.audit(fmt.Sprintf("resource_type=cc_pair&resource_id=%d", p)) {
			if a.Action == "cc_pair.update" {
				got = append(got, a.Fields)
			}
		}
		// Newest first: rename, resume, pause. Pausing or renaming again
		// changed nothing, and left no entry.
		want := [][]string{{"name"}, {"status"}, {"status"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("cc_pair.update entries with fields %v, want %v", got, want)
		}
	})
}

func TestSupportDeletionAttempt(t *testing.T) {
	c := newFxCast(t)
	two := c.connector(c.admin, "two pairs", "web")
	one := c.connector(c.admin, "one pair", "web", "groups", []int64{c.gA})
	public := c.connector(c.admin, "public", "web", "access_type", "public")
	mine := c.connector(c.curator, "the curator's", "web", "groups", []int64{c.gA})
	k := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	kNA := c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true)
	kPub := c.credential(c.other, "web", fxSecret, "curator_public", true)
	kA := c.credential(c.curator, "web", fxSecret, "groups", []int64{c.gA})
	c.pair(c.admin, two, k, "two/k", "public")
	c.pair(c.admin, two, kNA, "two/na", "private", c.gC)
	c.pair(c.admin, one, k, "one/k", "private", c.gA)
	c.pair(c.curator, public, kPub, "public/pub", "public")
	c.pair(c.curator, mine, kA, "mine/a", "private", c.gA)
	body := func(conn, cred int64) map[string]any {
		return map[string]any{"connector_id": conn, "credential_id": cred}
	}
	gone := func(conn, cred int64) string {
		return fmt.Sprintf(`{"detail":"Connector with ID '%d' and credential ID '%d' does not exist. Has it already been deleted?"}`, conn, cred)
	}
	connectorExists := func(t *testing.T, id int64) bool {
		t.Helper()
		r := c.do(c.admin, "GET", fmt.Sprint("/manage/connector/", id), nil)
		return r.status == 200
	}
	const notCurated = `{"detail":"Curators can only change what is shared with groups they curate"}`
	for _, tt := range []struct {
		name          string
		u             user
		conn, cred    int64
		status        int
		want          string
		connectorGone bool
	}{
		{"curator, public pair of the admin", c.curator, two, k, 403, notCurated, false},
		{"curator, pair it cannot see", c.curator, two, kNA, 404, gone(two, kNA), false},
		{"unknown", c.admin, two, 9999, 404, gone(two, 9999), false},
		{"basic", c.basic, two, k, 403, fxNotCurator, false},
		{"no token", user{}, two, k, 401, fxNotAuthed, false},
		{"admin, a connector's first pair of two: the connector stays", c.admin, two, k, 200, `null`, false},
		{"admin, its last pair: the connector goes", c.admin, two, kNA, 200, `null`, true},
		{"curator, its public pair on the admin's connector: the connector stays", c.curator, public, kPub, 200, `null`, false},
		{"curator, its pair on its own connector: the connector goes", c.curator, mine, kA, 200, `null`, true},
		{"curator, a pair of a group it curates on the admin's connector: the connector stays", c.curator, one, k, 200, `null`, false},
		{"again", c.admin, one, k, 404, gone(one, k), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "POST", "/manage/admin/deletion-attempt", body(tt.conn, tt.cred)).want(t, tt.status, tt.want)
			if connectorExists(t, tt.conn) == tt.connectorGone {
				t.Errorf("connector %d exists: %t, want %t", tt.conn, !tt.connectorGone, !tt.connectorGone)
			}
		})
	}
	t.Run("the credentials stay", func(t *testing.T) {
		for _, id := range []int64{k, kNA} {
			c.do(c.admin, "GET", fmt.Sprint("/manage/credential/", id), nil).decode(t, &struct{}{})
		}
	})
	t.Run("audit", func(t *testing.T) {
		var got []string
		for _, a := range c.audit("resource_type=connector") {
			if a.Action == "connector.delete" {
				got = append(got, a.ResourceID)
			}
		}
		if want := []string{itoa(mine), itoa(two)}; !slices.Equal(got, want) {
			t.Errorf("connector.delete entries for %v, want %v", got, want)
		}
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "ccPairIdentifier") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "POST", "", g) })
		}
	})
}

func TestSupportAddGroupUsers(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	b1, b2 := e.user(quarry.RoleBasic, "b1"), e.user(quarry.RoleBasic, "b2")
	cur, other := e.user(quarry.RoleCurator, "cur"), e.user(quarry.RoleCurator, "other")
	limited := e.user(quarry.RoleLimited, "limited")
	g := f.group("eng", []user{b1, cur}, cur)
	path := func(id int64) string { return fmt.Sprintf("/manage/admin/user-group/%d/add-users", id) }
	members := func(us ...string) []string { return us }
	curJSON := fxMemberJSON(cur, quarry.RoleCurator)

	e.do(e.admin, "POST", path(g), map[string]any{"user_ids": []string{b2.id, b1.id, b2.id}}).want(t, 200,
		fxGroupJSONAt(g, "eng", members(fxMemberJSON(b1, quarry.RoleBasic), fxMemberJSON(b2, quarry.RoleBasic), curJSON), []string{cur.id}, nil, 1))
	// Members already there are no change; the curator keeps its flag.
	e.do(e.admin, "POST", path(g), map[string]any{"user_ids": []string{cur.id}}).want(t, 200,
		fxGroupJSONAt(g, "eng", members(fxMemberJSON(b1, quarry.RoleBasic), fxMemberJSON(b2, quarry.RoleBasic), curJSON), []string{cur.id}, nil, 2))
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		body   any
		status int
		want   string
	}{
		{"unknown user", e.admin, path(g), `{"user_ids":["nope"]}`, 404, `{"detail":"User(s) not found: nope"}`},
		{"unknown group", e.admin, path(9999), `{"user_ids":[]}`, 404, `{"detail":"User group 9999 does not exist"}`},
		// As Onyx v4.6.1: a curator adds members to the groups it curates.
		{"its curator", cur, path(g), `{"user_ids":[]}`, 200,
			fxGroupJSONAt(g, "eng", members(fxMemberJSON(b1, quarry.RoleBasic), fxMemberJSON(b2, quarry.RoleBasic), curJSON), []string{cur.id}, nil, 3)},
		{"another curator", other, path(g), `{"user_ids":[]}`, 403, `{"detail":"Curators can only change the user groups they curate"}`},
		{"basic", b1, path(g), `{"user_ids":[]}`, 403, fxNotCurator},
		{"a default group", e.admin, path(basicGroupID), fmt.Sprintf(`{"user_ids":[%q]}`, limited.id), 409,
			`{"detail":"The members of a default group follow their roles: change the role instead"}`},
		{"a default group, its members", e.admin, path(basicGroupID), fmt.Sprintf(`{"user_ids":[%q]}`, b1.id), 200, ""},
		{"no token", user{}, path(g), `{"user_ids":[]}`, 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.u, "POST", tt.path, tt.body)
			if tt.want == "" {
				r.decode(t, new(any))
				return
			}
			r.want(t, tt.status, tt.want)
		})
	}
	t.Run("audit", func(t *testing.T) {
		var got [][]string
		for _, a := range f.audit(fmt.Sprintf("resource_type=user_group&resource_id=%d", g)) {
			if a.Action == "user_group.update" {
				got = append(got, a.Fields)
			}
		}
		if want := [][]string{{}, {}, {"user_ids"}}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("user_group.update entries with fields %v, want %v", got, want)
		}
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, gc := range fxGoldens(t, "addUsers") {
			t.Run(gc.Name, func(t *testing.T) { f.replay(t, e.admin, "POST", "", gc) })
		}
	})
}

func TestSupportEditCredential(t *testing.T) {
	c := newFxCast(t)
	k := c.credential(c.admin, "web", fxSecret, "admin_public", true, "name", "old")
	kBasic := c.credential(c.basic, "web", fxSecret)
	path := func(id int64) string { return fmt.Sprint("/manage/admin/credential/", id) }

	t.Run("a masked echo keeps the secret", func(t *testing.T) {
		// fxMasked as read, with the password changed and the port removed.
		body := `{"name": "new", "credential_json": {"api_key": "sk-l...cdef", "password": "hunter3",
			"authentication_method": "token", "nested": {"pin": "••••••••••••"}}}`
		r := c.do(c.admin, "PUT", path(k), body)
		var out struct {
			TimeUpdated string `json:"time_updated"`
		}
		r.decode(t, &out)
		r.want(t, 200, fmt.Sprintf(`{"credential_json":{"api_key":"sk-l...cdef","password":"••••••••••••","authentication_method":"token",
			"nested":{"pin":"••••••••••••"}},"admin_public":true,"source":"web","name":"new","curator_public":false,"groups":[],"id":%d,
			"user_id":%q,"user_email":%q,"time_created":%q,"time_updated":%q}`, k, c.admin.id, c.admin.email, testNowJSON, fxLater(1)))
		if got := r.header.Get("ETag"); got != `"2"` {
			t.Errorf("ETag = %q, want \"2\"", got)
		}
		c.wantStored(t, c.admin, k, `{"api_key": "sk-live-0123456789abcdef-0123456789abcdef", "password": "hunter3", "authentication_method": "token",
			"nested": {"pin": "1234"}}`)
	})
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		body   any
		hdrs   []string
		status int
		want   string
	}{
		{"stale If-Match", c.admin, path(k), `{"name":"n","credential_json":{}}`, []string{"If-Match", `"1"`}, 412,
			`{"detail":"The object has changed since you read it; fetch it again and retry"}`},
		{"another user's credential", c.admin, path(kBasic), `{"name":"n","credential_json":{}}`, nil, 404,
			fmt.Sprintf(`{"detail":"Credential %d does not exist or does not belong to user"}`, kBasic)},
		{"unknown", c.admin, path(9999), `{"name":"n","credential_json":{}}`, nil, 404,
			`{"detail":"Credential 9999 does not exist or does not belong to user"}`},
		{"limited", c.limited, path(k), `{"name":"n","credential_json":{}}`, nil, 403, fxLimited},
		{"no token", user{}, path(k), `{"name":"n","credential_json":{}}`, nil, 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "PUT", tt.path, tt.body, tt.hdrs...).want(t, tt.status, tt.want)
		})
	}
	t.Run("a basic user's own credential", func(t *testing.T) {
		var out struct {
			Name           string         `json:"name"`
			CredentialJSON map[string]any `json:"credential_json"`
		}
		c.do(c.basic, "PUT", path(kBasic), `{"name":"mine","credential_json":{"token":"short"}}`).decode(t, &out)
		if out.Name != "mine" || out.CredentialJSON["token"] != "••••••••••••" {
			t.Errorf("got %+v", out)
		}
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "credentialDataUpdate") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "PUT", "", g) })
		}
	})
}

func TestSupportToolStatus(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	cur := e.user(quarry.RoleCurator, "cur")
	admins := e.createTool(e.admin, fmt.Sprintf(`{"name":"admins","definition":%s,"passthrough_auth":false}`, pingDefinition))
	curators := e.createTool(cur, fmt.Sprintf(`{"name":"curators","definition":%s}`, pingDefinition))
	var builtIn int64
	var tools []struct {
		ID           int64   `json:"id"`
		InCodeToolID *string `json:"in_code_tool_id"`
		Enabled      bool    `json:"enabled"`
	}
	e.do(e.admin, "GET", "/tool", nil).decode(t, &tools)
	for _, x := range tools {
		if x.InCodeToolID != nil && *x.InCodeToolID == "SearchTool" {
			builtIn = x.ID
		}
	}
	enabled := func(t *testing.T, id int64) (bool, string) {
		t.Helper()
		var x struct{ Enabled bool }
		r := e.do(e.admin, "GET", fmt.Sprint("/tool/", id), nil)
		r.decode(t, &x)
		return x.Enabled, r.header.Get("ETag")
	}
	body := func(on bool, ids ...int64) map[string]any {
		return map[string]any{"tool_ids": fxIDs(ids), "enabled": on}
	}

	e.do(e.admin, "PATCH", "/admin/tool/status", body(false, builtIn, admins, builtIn)).want(t, 200,
		fmt.Sprintf(`{"updated_count":2,"tool_ids":[%d,%d]}`, builtIn, admins))
	if on, etag := enabled(t, admins); on || etag != `"2"` {
		t.Errorf("tool %d: enabled %t, ETag %s after disabling", admins, on, etag)
	}
	if on, _ := enabled(t, builtIn); on {
		t.Errorf("built-in tool %d still enabled", builtIn)
	}
	// The curator changes its own tool, nothing else; a refusal changes
	// nothing.
	e.do(cur, "PATCH", "/admin/tool/status", body(false, curators)).want(t, 200, fmt.Sprintf(`{"updated_count":1,"tool_ids":[%d]}`, curators))
	for _, tt := range []struct {
		name   string
		u      user
		body   any
		status int
		want   string
	}{
		{"curator, a built-in tool", cur, body(true, curators, builtIn), 403, `{"detail":"You can only modify actions that you created."}`},
		{"curator, the admin's tool", cur, body(true, admins), 403, `{"detail":"You can only modify actions that you created."}`},
		{"unknown tools", e.admin, body(true, admins, 9999, 9998), 404, `{"detail":"Tools with IDs [9999, 9998] not found"}`},
		{"no tools", e.admin, body(true), 400, `{"detail":"No tool IDs provided"}`},
		{"basic", e.user(quarry.RoleBasic, "basic"), body(true, admins), 403, fxNotCurator},
		{"no token", user{}, body(true, admins), 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.do(tt.u, "PATCH", "/admin/tool/status", tt.body).want(t, tt.status, tt.want)
		})
	}
	for _, id := range []int64{admins, curators, builtIn} {
		if on, _ := enabled(t, id); on {
			t.Errorf("tool %d was enabled by a refused request", id)
		}
	}
	t.Run("audit", func(t *testing.T) {
		for _, id := range []int64{admins, curators, builtIn} {
			entries := f.audit(fmt.Sprintf("resource_type=tool&resource_id=%d", id))
			if len(entries) == 0 || entries[0].Action != "tool.update" || !slices.Equal(entries[0].Fields, []string{"enabled"}) {
				t.Errorf("tool %d: newest audit entry %+v, want tool.update of enabled", id, entries)
			}
		}
	})
	t.Run("a PUT keeps a disabled tool disabled", func(t *testing.T) {
		// Contract 4.2 says enabled is true: it predates the toggle
		// (docs/decisions.md).
		var out struct{ Enabled bool }
		e.do(cur, "PUT", fmt.Sprint("/admin/tool/custom/", curators), map[string]any{"description": "d"}).decode(t, &out)
		if on, _ := enabled(t, curators); out.Enabled || on {
			t.Errorf("after a PUT: enabled %t in the answer, %t stored; want false", out.Enabled, on)
		}
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "toolStatusUpdate") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "PATCH", "", g) })
		}
	})
}

func TestSupportNotIndexing(t *testing.T) {
	c := newFxCast(t)
	for _, rt := range []struct{ method, path, what string }{
		{"GET", "/manage/admin/cc-pair/7/get-docs-sync-status", "report the sync status of documents"},
	} {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, u := range []user{c.admin, c.global, c.curator} {
				c.do(u, rt.method, rt.path, nil).want(t, 501, onyxtest.NotIndexing(rt.what))
			}
			c.do(c.basic, rt.method, rt.path, nil).want(t, 403, fxNotCurator)
			c.do(user{}, rt.method, rt.path, nil).want(t, 401, fxNotAuthed)
		})
	}
	t.Run("a bad pair id is 422 first", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/admin/cc-pair/x/get-docs-sync-status", nil).want(t, 422, `{"detail":[`+fxIntParsing("cc_pair_id", "x")+`]}`)
	})
	t.Run("a 501 is not logged as a failure", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/admin/cc-pair/7/get-docs-sync-status", nil, "X-Request-ID", "not-indexing-501")
		if got := loggedRoute(t, c.env, "not-indexing-501"); got != "GET /manage/admin/cc-pair/{cc_pair_id}/get-docs-sync-status" {
			t.Fatalf("logged route %q", got)
		}
		for line := range strings.Lines(c.log.String()) {
			if strings.Contains(line, `"msg":"request failed"`) && strings.Contains(line, "not-indexing-501") {
				t.Errorf("a 501 was logged as a failed request: %s", line)
			}
		}
	})
}

// TestSupportGroupStatements shows that listing user groups, with their
// pairs' connectors and credentials, costs a fixed number of SQL
// statements, whatever the number of pairs.
func TestSupportGroupStatements(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "c", "web")
	other := c.connector(c.admin, "other", "web")
	add := func(n int) {
		for range n {
			k := c.credential(c.admin, "web", fxSecret, "admin_public", true, "groups", []int64{c.gA})
			c.pair(c.admin, conn, k, "p", "private", c.gA, c.gB)
			c.pair(c.admin, other, k, "q", "public", c.gC)
		}
	}
	count := func() int64 {
		before := c.db.Statements()
		var groups []struct {
			CCPairs []any `json:"cc_pairs"`
		}
		c.do(c.admin, "GET", "/manage/admin/user-group", nil).decode(t, &groups)
		return c.db.Statements() - before
	}
	add(1)
	small := count()
	add(30)
	if large := count(); small != large {
		t.Errorf("the group listing ran %d statements with 2 pairs and %d with 62; want the same", small, large)
	}
}
