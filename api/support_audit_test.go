package api_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

// The audit log (contract sections 6 and 7): every change leaves an entry
// naming the changed fields, never their values; newest first; filters.

func TestSupportAuditLog(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	member := e.user(quarry.RoleBasic, "member")
	adminKey := f.keyID(e.admin)
	before := len(f.audit("limit=1000"))

	// Every change below is made by the admin with a request id of its own;
	// want lists the entries they must leave, oldest first.
	type step struct {
		method, path string
		body         any
	}
	var want []fxAudit
	do := func(reqID string, s step, action, resourceType string, resourceID any, fields ...string) *response {
		t.Helper()
		r := e.do(e.admin, s.method, s.path, s.body, "X-Request-ID", reqID)
		if r.status != 200 {
			t.Fatalf("%s %s: %d %s", s.method, s.path, r.status, r.body)
		}
		if fields == nil {
			fields = []string{}
		}
		want = append(want, fxAudit{Time: testNowJSON, ActorID: &e.admin.id, ActorEmail: &e.admin.email, APIKeyID: &adminKey,
			Action: action, ResourceType: resourceType, ResourceID: fmt.Sprint(resourceID), Fields: fields, RequestID: reqID, SourceIP: fxLoopback})
		return r
	}
	id := func(r *response) int64 { return f.fxOK(r) }
	// roleChange inserts, before the last entry, the user.role_change entry
	// that a change of reqID made in the same transaction.
	roleChange := func(reqID, userID string) {
		last := want[len(want)-1]
		want[len(want)-1] = fxAudit{Time: testNowJSON, ActorID: &e.admin.id, ActorEmail: &e.admin.email, APIKeyID: &adminKey,
			Action: "user.role_change", ResourceType: "user", ResourceID: userID, Fields: []string{"role"}, RequestID: reqID, SourceIP: fxLoopback}
		want = append(want, last)
	}

	const secret2 = "second-secret-value-abcdefghij"
	conn := id(do("conn-create", step{"POST", "/manage/admin/connector", fxConnectorBody("c", "web")}, "connector.create", "connector", 1,
		"name", "source", "input_type", "connector_specific_config", "refresh_freq", "prune_freq", "indexing_start", "access_type", "groups"))
	want[len(want)-1].ResourceID = fmt.Sprint(conn)
	do("conn-update", step{"PATCH", fmt.Sprint("/manage/admin/connector/", conn), fxConnectorBody("c2", "web", "refresh_freq", 60)},
		"connector.update", "connector", conn, "name", "refresh_freq")
	do("conn-noop", step{"PATCH", fmt.Sprint("/manage/admin/connector/", conn), fxConnectorBody("c2", "web", "refresh_freq", 60)},
		"connector.update", "connector", conn)
	k := id(do("cred-create", step{"POST", "/manage/credential", fxCredentialBody("web", fxSecret, "name", "k")},
		"credential.create", "credential", 0, "credential_json", "admin_public", "source", "name", "curator_public", "groups"))
	want[len(want)-1].ResourceID = fmt.Sprint(k)
	do("cred-update", step{"PATCH", fmt.Sprint("/manage/credential/", k), fmt.Sprintf(`{"credential_json":{"api_key":%q},"name":"k2","admin_public":false}`, secret2)},
		"credential.update", "credential", k, "credential_json", "name")
	pair := id(do("pair-create", step{"PUT", fxPairPath(conn, k), map[string]any{"name": "p", "access_type": "public"}},
		"cc_pair.create", "cc_pair", 0, "name", "access_type", "groups"))
	want[len(want)-1].ResourceID = fmt.Sprint(pair)
	g := id(do("group-create", step{"POST", "/manage/admin/user-group", map[string]any{"name": "g", "user_ids": []string{member.id}}},
		"user_group.create", "user_group", 0, "name", "user_ids", "cc_pair_ids"))
	want[len(want)-1].ResourceID = fmt.Sprint(g)
	do("group-update", step{"PATCH", fmt.Sprint("/manage/admin/user-group/", g), map[string]any{"name": "g2", "cc_pair_ids": []int64{pair}}},
		"user_group.update", "user_group", g, "name", "cc_pair_ids")
	do("set-curator", step{"POST", fmt.Sprintf("/manage/admin/user-group/%d/set-curator", g), map[string]any{"user_id": member.id, "is_curator": true}},
		"user_group.set_curator", "user_group", g, "is_curator")
	roleChange("set-curator", member.id) // basic → curator
	r := do("key-create", step{"POST", "/admin/api-key", `{"name":"bot","role":"basic"}`}, "api_key.create", "api_key", 0, "name", "role")
	var key fxKey
	r.decode(t, &key)
	want[len(want)-1].ResourceID = fmt.Sprint(key.ID)
	var regenerated fxKey
	do("key-regenerate", step{"POST", fmt.Sprintf("/admin/api-key/%d/regenerate", key.ID), nil}, "api_key.regenerate", "api_key", key.ID, "api_key").
		decode(t, &regenerated)
	do("key-delete", step{"DELETE", fmt.Sprint("/admin/api-key/", key.ID), nil}, "api_key.delete", "api_key", key.ID)
	oauth := id(do("oauth-create", step{"POST", "/admin/oauth-config", fxOAuthBody("o")}, "oauth_config.create", "oauth_config", 0,
		"name", "authorization_url", "token_url", "client_id", "client_secret", "scopes"))
	want[len(want)-1].ResourceID = fmt.Sprint(oauth)
	const headerSecret = "Bearer header-secret-value-0123456789"
	tool := id(do("tool-create", step{"POST", "/admin/tool/custom", fmt.Sprintf(`{"name":"ping","definition":%s,"passthrough_auth":false,
		"custom_headers":[{"key":"Authorization","value":%q}],"oauth_config_id":%d}`, fxToolDefinition, headerSecret, oauth)},
		"tool.create", "tool", 0, "name", "description", "definition", "custom_headers", "passthrough_auth", "oauth_config_id"))
	want[len(want)-1].ResourceID = fmt.Sprint(tool)
	do("tool-delete", step{"DELETE", fmt.Sprint("/admin/tool/custom/", tool), nil}, "tool.delete", "tool", tool)
	do("oauth-delete", step{"DELETE", fmt.Sprint("/admin/oauth-config/", oauth), nil}, "oauth_config.delete", "oauth_config", oauth)
	do("pair-delete", step{"DELETE", fxPairPath(conn, k), nil}, "cc_pair.delete", "cc_pair", pair)
	do("cred-delete", step{"DELETE", fmt.Sprint("/manage/credential/", k), nil}, "credential.delete", "credential", k)
	do("conn-delete", step{"DELETE", fmt.Sprint("/manage/admin/connector/", conn), nil}, "connector.delete", "connector", conn)
	do("group-delete", step{"DELETE", fmt.Sprint("/manage/admin/user-group/", g), nil}, "user_group.delete", "user_group", g)
	roleChange("group-delete", member.id) // curator → basic: its last curated group went

	// newest renders want, newest first, with the ids the log gave.
	newest := func(t *testing.T, got []fxAudit, want []fxAudit) string {
		t.Helper()
		out := make([]fxAudit, len(want))
		for i := range want {
			out[i] = want[len(want)-1-i]
			if i < len(got) {
				out[i].ID = got[i].ID
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i].ID >= got[i-1].ID {
				t.Errorf("entries are not newest first: id %d before %d", got[i-1].ID, got[i].ID)
			}
		}
		return fxJSON(out)
	}

	t.Run("every change, newest first", func(t *testing.T) {
		// The log starts with the keys env.user made, outside any request.
		all := []fxAudit{}
		for _, u := range []user{e.admin, member} {
			all = append(all, fxAudit{Time: testNowJSON, Action: "api_key.create", ResourceType: "api_key",
				ResourceID: fmt.Sprint(f.keyID(u)), Fields: []string{"name", "role"}})
		}
		if before != len(all) {
			t.Fatalf("%d entries before the changes, want %d", before, len(all))
		}
		all = append(all, want...)
		r := e.do(e.admin, "GET", "/admin/audit-log?limit=1000", nil)
		var got []fxAudit
		r.decode(t, &got)
		r.want(t, 200, newest(t, got, all))
	})
	t.Run("no secret in any entry or log line", func(t *testing.T) {
		r := e.do(e.admin, "GET", "/admin/audit-log?limit=1000", nil)
		for _, s := range []string{"sk-live-0123456789abcdef", "hunter2", secret2, fxClientSecret, headerSecret,
			strings.TrimPrefix(*key.APIKey, "qry_"), strings.TrimPrefix(*regenerated.APIKey, "qry_"), strings.TrimPrefix(e.admin.token, "qry_")} {
			if strings.Contains(string(r.body), s) {
				t.Errorf("the audit log shows the secret %q", s)
			}
			if strings.Contains(e.log.String(), s) {
				t.Errorf("the server log shows the secret %q", s)
			}
		}
	})
	t.Run("filters", func(t *testing.T) {
		pick := func(actions ...string) []fxAudit {
			var out []fxAudit
			for _, w := range want {
				for _, a := range actions {
					if w.Action == a {
						out = append(out, w)
					}
				}
			}
			return out
		}
		for _, tt := range []struct {
			query string
			want  []fxAudit // oldest first
		}{
			{fmt.Sprintf("resource_type=connector&resource_id=%d", conn), pick("connector.create", "connector.update", "connector.delete")},
			{fmt.Sprintf("resource_type=connector&resource_id=%d&limit=2", conn), pick("connector.update", "connector.delete")[1:]},
			{fmt.Sprintf("resource_id=%d&resource_type=credential", k), pick("credential.create", "credential.update", "credential.delete")},
			{"resource_type=oauth_config", pick("oauth_config.create", "oauth_config.delete")},
			{"resource_type=tool&limit=1", pick("tool.delete")},
			{"resource_type=nope", nil},
			{"resource_type=connector&resource_id=999999", nil},
			{"limit=1", pick("user_group.delete")},
		} {
			t.Run(tt.query, func(t *testing.T) {
				r := e.do(e.admin, "GET", "/admin/audit-log?"+tt.query, nil)
				var got []fxAudit
				r.decode(t, &got)
				if tt.want == nil {
					r.want(t, 200, `[]`)
					return
				}
				r.want(t, 200, newest(t, got, tt.want))
			})
		}
	})
	t.Run("actor, action, time and pages", func(t *testing.T) {
		// The admin's changes, newest first, as the log has them.
		all := f.audit("limit=1000&actor=" + e.admin.id)
		if len(all) != len(want) {
			t.Fatalf("%d entries by the admin's id, want %d", len(all), len(want))
		}
		ids := func(es []fxAudit) []int64 {
			out := []int64{}
			for _, x := range es {
				out = append(out, x.ID)
			}
			return out
		}
		of := func(es []fxAudit, keep func(fxAudit) bool) []int64 {
			out := []int64{}
			for _, x := range es {
				if keep(x) {
					out = append(out, x.ID)
				}
			}
			return out
		}
		total := len(f.audit("limit=1000"))
		just := testNow.Add(time.Microsecond).Format(time.RFC3339Nano)
		upper := strings.ToUpper(e.admin.email)
		for _, tt := range []struct {
			query string
			want  []int64
			total int
		}{
			{"actor=" + url.QueryEscape(upper), ids(all), len(all)},
			{"actor=" + member.id, []int64{}, 0},
			{"actor=nobody%40example.com", []int64{}, 0},
			{"action=credential.update", of(all, func(x fxAudit) bool { return x.Action == "credential.update" }), 1},
			{"action=user.role_change&actor=" + e.admin.id, of(all, func(x fxAudit) bool { return x.Action == "user.role_change" }), 2},
			{"since=" + url.QueryEscape(testNowJSON) + "&limit=1000&actor=" + e.admin.id, ids(all), len(all)},
			{"since=" + url.QueryEscape(just), []int64{}, 0},
			{"until=" + url.QueryEscape(testNowJSON), []int64{}, 0},
			{"until=" + url.QueryEscape(just) + "&limit=1000&actor=" + e.admin.id, ids(all), len(all)},
			{"actor=" + e.admin.id + "&limit=3", ids(all[:3]), len(all)},
			{"actor=" + e.admin.id + "&limit=3&offset=3", ids(all[3:6]), len(all)},
			{"actor=" + e.admin.id + "&offset=1000", []int64{}, len(all)},
			{fmt.Sprintf("actor=%s&before_id=%d&limit=2", e.admin.id, all[4].ID), ids(all[5:7]), len(all) - 5},
			{fmt.Sprintf("actor=%s&before_id=%d&limit=2&offset=2", e.admin.id, all[4].ID), ids(all[7:9]), len(all) - 5},
			{"limit=1", nil, total},
		} {
			t.Run(tt.query, func(t *testing.T) {
				r := e.do(e.admin, "GET", "/admin/audit-log?"+tt.query, nil)
				var got []fxAudit
				r.decode(t, &got)
				if tt.want != nil && fmt.Sprint(ids(got)) != fmt.Sprint(tt.want) {
					t.Errorf("ids %v, want %v", ids(got), tt.want)
				}
				if n := r.header.Get("X-Total-Count"); n != fmt.Sprint(tt.total) {
					t.Errorf("X-Total-Count %q, want %d", n, tt.total)
				}
			})
		}
	})
	t.Run("validation", func(t *testing.T) {
		for _, g := range fxGoldens(t, "auditQuery") {
			t.Run(g.Name, func(t *testing.T) { f.replay(t, e.admin, "GET", "", g) })
		}
		e.do(e.admin, "GET", "/admin/audit-log?limit=0", nil).want(t, 422,
			`{"detail":[{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`)
		e.do(e.admin, "GET", "/admin/audit-log?limit=abc", nil).want(t, 422,
			`{"detail":[{"type":"int_parsing","loc":["query","limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]}`)
	})
	t.Run("gates", func(t *testing.T) {
		curator := e.user(quarry.RoleCurator, "curator")
		e.do(curator, "GET", "/admin/audit-log", nil).want(t, 403, fxNotAdmin)
		e.do(curator, "GET", "/admin/audit-log?limit=0", nil).want(t, 403, fxNotAdmin)
		e.do(user{}, "GET", "/admin/audit-log?limit=0", nil).want(t, 401, fxNotAuthed)
	})
	t.Run("a change by a curator names the curator and its key", func(t *testing.T) {
		curator := e.user(quarry.RoleGlobalCurator, "global")
		g := f.group("audited", []user{curator})
		r := e.do(curator, "POST", "/manage/admin/connector", fxConnectorBody("by curator", "web", "groups", []int64{g}), "X-Request-ID", "by-curator")
		c := f.fxOK(r)
		got := f.audit(fmt.Sprintf("resource_type=connector&resource_id=%d", c))
		ck := f.keyID(curator)
		wantOne := []fxAudit{{Time: testNowJSON, ActorID: &curator.id, ActorEmail: &curator.email, APIKeyID: &ck,
			Action: "connector.create", ResourceType: "connector", ResourceID: fmt.Sprint(c),
			Fields: []string{"name", "source", "input_type", "connector_specific_config", "refresh_freq", "prune_freq", "indexing_start",
				"access_type", "groups"},
			RequestID: "by-curator", SourceIP: fxLoopback}}
		r = &response{status: 200, body: []byte(fxJSON(got))}
		r.want(t, 200, newest(t, got, wantOne))
	})
	t.Run("a failed change leaves no entry", func(t *testing.T) {
		n := len(f.audit("limit=1000"))
		e.do(e.admin, "POST", "/manage/admin/connector", fxConnectorBody("x", "web", "groups", []int64{9999})).want(t, 400, `{"detail":"User group 9999 does not exist"}`)
		e.do(e.admin, "DELETE", "/manage/credential/9999", nil).want(t, 404, `{"detail":"Credential 9999 does not exist or does not belong to user"}`)
		if got := len(f.audit("limit=1000")); got != n {
			t.Errorf("%d entries after failed changes, want %d", got, n)
		}
	})
	t.Run("default limit is 100", func(t *testing.T) {
		for n := len(f.audit("limit=1000")); n <= 100; n++ {
			name := fmt.Sprint("filler ", n)
			if _, _, err := e.db.CreateAPIKey(t.Context(), nil, &name, quarry.RoleBasic); err != nil {
				t.Fatal(err)
			}
		}
		all := f.audit("limit=1000")
		if len(all) <= 100 {
			t.Fatalf("%d entries, want more than 100", len(all))
		}
		if got := f.audit(""); len(got) != 100 || got[0].ID != all[0].ID || got[99].ID != all[99].ID {
			t.Errorf("default listing: %d entries from id %d, want the newest 100 from id %d", len(got), got[0].ID, all[0].ID)
		}
		if got := f.audit("limit=3"); len(got) != 3 || got[2].ID != all[2].ID {
			t.Errorf("limit=3: %+v", got)
		}
	})
	t.Run("group update names only the changed fields", func(t *testing.T) {
		g := f.group("same", nil)
		e.do(e.admin, "PATCH", fmt.Sprint("/manage/admin/user-group/", g), `{"name":"same","user_ids":[],"cc_pair_ids":[]}`).decode(t, &struct{}{})
		got := f.audit(fmt.Sprintf("resource_type=user_group&resource_id=%d&limit=1", g))
		if len(got) != 1 || got[0].Action != "user_group.update" {
			t.Fatalf("entries = %+v", got)
		}
		if len(got[0].Fields) != 0 {
			t.Errorf("fields = %v, want []", got[0].Fields)
		}
	})
}
