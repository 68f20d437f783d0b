package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
)

// Connectors (contract section 6, decisions.md "Connectors, credentials,
// pairs").

// TestConnectorSources: the sources Quarry has a connector for, from the
// registry the workers use, for those who make connectors.
func TestConnectorSources(t *testing.T) {
	c := newFxCast(t)
	const sources = `{"sources":["confluence","file","github","google_drive","imap","jira","mediawiki","mock_connector","slack","web","wikipedia"]}`
	for _, tt := range []struct {
		name   string
		u      user
		status int
		want   string
	}{
		{"admin", c.admin, 200, sources},
		{"curator", c.curator, 200, sources},
		{"global curator", c.global, 200, sources},
		{"basic", c.basic, 403, fxNotCurator},
		{"limited", c.limited, 403, fxNotCurator},
		{"no token", user{}, 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "GET", "/manage/connector-sources", nil).want(t, tt.status, tt.want)
		})
	}
}

func TestSupportConnectorCreate(t *testing.T) {
	c := newFxCast(t)
	c.connector(c.admin, "docs", "web")
	for _, tt := range []struct {
		name   string
		u      user
		body   any
		status int
		want   string // for 200: empty, the body is {"id":<new>,"credential":null}
	}{
		{"admin, no groups", c.admin, fxConnectorBody("admin", "web"), 200, ""},
		{"admin, any group", c.admin, fxConnectorBody("admin C", "web", "groups", []int64{c.gC}), 200, ""},
		{"curator, curated group", c.curator, fxConnectorBody("cur A", "web", "groups", []int64{c.gA}), 200, ""},
		{"curator, public without groups", c.curator, fxConnectorBody("cur public", "web", "access_type", "public"), 200, ""},
		{"global curator, group it is a member of", c.global, fxConnectorBody("global B", "web", "groups", []int64{c.gB}), 200, ""},
		{"same name, other source", c.admin, fxConnectorBody("docs", "slack"), 200, ""},
		{"curator, no groups", c.curator, fxConnectorBody("x", "web"), 400, `{"detail":"Curators must specify 1+ groups"}`},
		{"curator, private without groups", c.curator, fxConnectorBody("x", "web", "access_type", "private"), 400, `{"detail":"Curators must specify 1+ groups"}`},
		{"curator, group not curated", c.curator, fxConnectorBody("x", "web", "groups", []int64{c.gB}), 400, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"curator, one group of two not curated", c.curator, fxConnectorBody("x", "web", "groups", []int64{c.gA, c.gC}), 400, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"global curator, group it is not in", c.global, fxConnectorBody("x", "web", "groups", []int64{c.gA}), 400, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"unknown group", c.curator, fxConnectorBody("x", "web", "groups", []int64{9999}), 400, `{"detail":"User group 9999 does not exist"}`},
		{"unknown group, admin", c.admin, fxConnectorBody("x", "web", "groups", []int64{c.gA, 9999}), 400, `{"detail":"User group 9999 does not exist"}`},
		{"same name and source", c.admin, fxConnectorBody("docs", "web"), 409, `{"detail":"Connector by this name already exists, duplicate naming not allowed."}`},
		{"same name and source, curator", c.curator, fxConnectorBody("docs", "web", "groups", []int64{c.gA}), 409, `{"detail":"Connector by this name already exists, duplicate naming not allowed."}`},
		{"basic", c.basic, fxConnectorBody("x", "web"), 403, fxNotCurator},
		{"limited", c.limited, fxConnectorBody("x", "web"), 403, fxNotCurator},
		{"no token", user{}, fxConnectorBody("x", "web"), 401, fxNotAuthed},
		{"no token, bad body", user{}, `{`, 401, fxNotAuthed},
		{"basic, bad body", c.basic, `{`, 403, fxNotCurator},
		{"no body", c.admin, nil, 422, fxMissingBody},
		{"config not an object", c.admin, fxConnectorBody("x", "web", "connector_specific_config", []int{1}), 422,
			`{"detail":[{"type":"dict_type","loc":["body","connector_specific_config"],"msg":"Input should be a valid dictionary","input":[1]}]}`},
		{"bad access type", c.admin, fxConnectorBody("x", "web", "access_type", "shared"), 422,
			`{"detail":[{"type":"enum","loc":["body","access_type"],"msg":"Input should be 'public', 'private' or 'sync'","input":"shared","ctx":{"expected":"'public', 'private' or 'sync'"}}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do(tt.u, "POST", "/manage/admin/connector", tt.body)
			if tt.want != "" {
				r.want(t, tt.status, tt.want)
				return
			}
			var out struct{ ID int64 }
			r.decode(t, &out)
			r.want(t, 200, fmt.Sprintf(`{"id":%d,"credential":null}`, out.ID))
			b := tt.body.(map[string]any)
			access, _ := b["access_type"].(string)
			if access == "" {
				access = "private"
			}
			groups, _ := b["groups"].([]int64)
			c.do(c.admin, "GET", fmt.Sprintf("/manage/connector/%d", out.ID), nil).
				want(t, 200, fxShared(fxConnectorJSON(out.ID, b["name"].(string), b["source"].(string)), quarry.AccessType(access), groups...))
		})
	}
	t.Run("all fields", func(t *testing.T) {
		body := `{"name":"full","source":"confluence","input_type":"load_state","connector_specific_config":{"wiki_base":"https://w","space":"ENG"},
			"refresh_freq":3600,"prune_freq":86400,"indexing_start":"2026-01-02T03:04:05.5+01:00","unknown":"ignored"}`
		var out struct{ ID int64 }
		c.do(c.admin, "POST", "/manage/admin/connector", body).decode(t, &out)
		c.do(c.admin, "GET", fmt.Sprintf("/manage/connector/%d", out.ID), nil).want(t, 200, fmt.Sprintf(`{
			"name":"full","source":"confluence","input_type":"load_state","connector_specific_config":{"wiki_base":"https://w","space":"ENG"},
			"refresh_freq":3600,"prune_freq":86400,"indexing_start":"2026-01-02T02:04:05.500000Z","id":%d,"credential_ids":[],
			"time_created":%q,"time_updated":%q,"access_type":"private","groups":[]}`, out.ID, testNowJSON, testNowJSON))
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "connectorInput") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "POST", "/manage/admin/connector", g) })
		}
	})
}

func TestSupportConnectorRead(t *testing.T) {
	c := newFxCast(t)
	own := c.connector(c.curator, "own", "web", "groups", []int64{c.gA})        // created by the curator
	hidden := c.connector(c.admin, "hidden", "web")                             // no pair
	shared := c.connector(c.admin, "shared", "web")                             // a public and a gC pair
	member := c.connector(c.admin, "member", "web")                             // a private pair shared with gB
	private := c.connector(c.admin, "private", "web")                           // a private pair shared with gC
	sharedA := c.connector(c.admin, "shared A", "web", "groups", []int64{c.gA}) // no pair, shared with gA
	sharedB := c.connector(c.admin, "shared B", "web", "groups", []int64{c.gB}) // no pair, shared with gB
	public := c.connector(c.admin, "public", "web", "access_type", "public")    // no pair, public
	k1 := c.credential(c.admin, "web", `{"token":"t1"}`, "admin_public", true)  // visible to the admin
	k2 := c.credential(c.admin, "web", `{"token":"t2"}`, "admin_public", true)
	c.pair(c.admin, shared, k1, "shared public", "public")
	c.pair(c.admin, shared, k2, "shared C", "private", c.gC)
	c.pair(c.admin, member, k1, "member B", "private", c.gB)
	c.pair(c.admin, private, k1, "private C", "private", c.gC)
	// view is the connector's JSON, as the connector routes answer it.
	view := func(id int64, name, source string, credentialIDs ...int64) string {
		snapshot := fxConnectorJSON(id, name, source, credentialIDs...)
		switch id {
		case own, sharedA:
			return fxShared(snapshot, "private", c.gA)
		case sharedB:
			return fxShared(snapshot, "private", c.gB)
		case public:
			return fxShared(snapshot, "public")
		}
		return fxShared(snapshot, "private")
	}

	t.Run("list", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/connector", nil).want(t, 200, "["+
			view(own, "own", "web")+","+
			view(hidden, "hidden", "web")+","+
			view(shared, "shared", "web", k1, k2)+","+
			view(member, "member", "web", k1)+","+
			view(private, "private", "web", k1)+","+
			view(sharedA, "shared A", "web")+","+
			view(sharedB, "shared B", "web")+","+
			view(public, "public", "web")+"]")
		// The curator sees what it created, the connectors of the pairs it
		// can see (with only the credentials of those pairs), the public
		// connectors and those shared with a group it curates (gA, not gB,
		// where it is only a member).
		c.do(c.curator, "GET", "/manage/connector", nil).want(t, 200, "["+
			view(own, "own", "web")+","+
			view(shared, "shared", "web", k1)+","+
			view(member, "member", "web", k1)+","+
			view(sharedA, "shared A", "web")+","+
			view(public, "public", "web")+"]")
		c.do(c.other, "GET", "/manage/connector", nil).want(t, 200, "["+
			view(shared, "shared", "web", k1)+","+
			view(member, "member", "web", k1)+","+
			view(sharedB, "shared B", "web")+","+
			view(public, "public", "web")+"]")
	})
	// Onyx's GET /manage/admin/connector: the same list, and with
	// credential only the connectors paired with it that the caller sees.
	t.Run("by credential", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/admin/connector", nil).want(t, 200, string(c.do(c.admin, "GET", "/manage/connector", nil).body))
		c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/connector?credential=%d", k2), nil).want(t, 200, "["+
			view(shared, "shared", "web", k1, k2)+"]")
		c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/connector?credential=%d", k1), nil).want(t, 200, "["+
			view(shared, "shared", "web", k1, k2)+","+
			view(member, "member", "web", k1)+","+
			view(private, "private", "web", k1)+"]")
		// The curator does not see the pair of k2, which is shared with gC.
		c.do(c.curator, "GET", fmt.Sprintf("/manage/admin/connector?credential=%d", k2), nil).want(t, 200, "[]")
		c.do(c.admin, "GET", "/manage/admin/connector?credential=99999", nil).want(t, 200, "[]")
		c.do(c.admin, "GET", "/manage/admin/connector?credential=k", nil).want(t, 422, `{"detail":[{"type":"int_parsing",
			"loc":["query","credential"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"k"}]}`)
		c.do(c.basic, "GET", "/manage/admin/connector", nil).want(t, 403, fxNotCurator)
		for _, gc := range fxGoldens(t, "connectorsQuery") {
			t.Run(gc.Name, func(t *testing.T) { c.replay(t, c.admin, "GET", "", gc) })
		}
	})
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		want   string
	}{
		{"admin", c.admin, fmt.Sprint("/manage/connector/", shared), 200, view(shared, "shared", "web", k1, k2)},
		{"admin, no pair", c.admin, fmt.Sprint("/manage/connector/", hidden), 200, view(hidden, "hidden", "web")},
		{"curator, own", c.curator, fmt.Sprint("/manage/connector/", own), 200, view(own, "own", "web")},
		{"curator, public pair", c.curator, fmt.Sprint("/manage/connector/", shared), 200, view(shared, "shared", "web", k1)},
		{"global curator, pair of its group", c.global, fmt.Sprint("/manage/connector/", member), 200, view(member, "member", "web", k1)},
		{"curator, no pair", c.curator, fmt.Sprint("/manage/connector/", hidden), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, hidden)},
		{"curator, shared with a group it curates", c.curator, fmt.Sprint("/manage/connector/", sharedA), 200, view(sharedA, "shared A", "web")},
		{"curator, shared with a group it is only a member of", c.curator, fmt.Sprint("/manage/connector/", sharedB), 404,
			fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, sharedB)},
		{"global curator, shared with its group", c.global, fmt.Sprint("/manage/connector/", sharedB), 200, view(sharedB, "shared B", "web")},
		{"curator, public, no pair", c.curator, fmt.Sprint("/manage/connector/", public), 200, view(public, "public", "web")},
		{"curator, pair of another group", c.curator, fmt.Sprint("/manage/connector/", private), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, private)},
		{"other curator, connector of a curator", c.other, fmt.Sprint("/manage/connector/", own), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, own)},
		{"unknown", c.admin, "/manage/connector/9999", 404, `{"detail":"Connector 9999 does not exist"}`},
		{"bad id", c.admin, "/manage/connector/abc", 422, `{"detail":[` + fxIntParsing("connector_id", "abc") + `]}`},
		{"float id", c.admin, "/manage/connector/1.5", 422, `{"detail":[` + fxIntParsing("connector_id", "1.5") + `]}`},
		{"id too big", c.admin, "/manage/connector/9999999999999999999", 422,
			`{"detail":[{"type":"less_than_equal","loc":["path","connector_id"],"msg":"Input should be less than or equal to 9223372036854775807","input":"9999999999999999999","ctx":{"le":9223372036854775807}}]}`},
		{"basic", c.basic, fmt.Sprint("/manage/connector/", shared), 403, fxNotCurator},
		{"basic list", c.basic, "/manage/connector", 403, fxNotCurator},
		{"limited", c.limited, "/manage/connector/abc", 403, fxNotCurator},
		{"no token", user{}, "/manage/connector/abc", 401, fxNotAuthed},
		{"no token list", user{}, "/manage/connector", 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "GET", tt.path, nil).want(t, tt.status, tt.want)
		})
	}
}

func TestSupportConnectorUpdate(t *testing.T) {
	c := newFxCast(t)
	own := c.connector(c.curator, "own", "web", "groups", []int64{c.gA})
	c.connector(c.admin, "taken", "web")
	public := c.connector(c.admin, "public", "web")                            // one public pair, no group
	curated := c.connector(c.admin, "curated", "web", "groups", []int64{c.gA}) // shared with gA, one pair shared with gA only
	private := c.connector(c.admin, "private", "web")                          // no group, one pair shared with gA only
	mixed := c.connector(c.admin, "mixed", "web", "groups", []int64{c.gA})     // shared with gA, pairs shared with gA and with gB
	hidden := c.connector(c.admin, "hidden", "web")
	k := c.credential(c.admin, "web", `{"token":"t"}`, "admin_public", true)
	k2 := c.credential(c.admin, "web", `{"token":"t2"}`, "admin_public", true)
	c.pair(c.admin, public, k, "p", "public")
	c.pair(c.admin, curated, k, "a", "private", c.gA)
	c.pair(c.admin, private, k, "pa", "private", c.gA)
	c.pair(c.admin, mixed, k, "ma", "private", c.gA)
	c.pair(c.admin, mixed, k2, "mb", "private", c.gB)

	path := func(id int64) string { return fmt.Sprint("/manage/admin/connector/", id) }
	changed := func(id int64, name string, n int, credentialIDs ...int64) string {
		return fmt.Sprintf(`{"name":%q,"source":"web","input_type":"poll","connector_specific_config":%s,
			"refresh_freq":null,"prune_freq":null,"indexing_start":null,"id":%d,"credential_ids":%s,
			"time_created":%q,"time_updated":%q}`, name, fxWeb, id, fxJSON(fxIDs(credentialIDs)), testNowJSON, fxLater(n))
	}
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		body   any
		status int
		want   string
	}{
		{"admin renames", c.admin, path(hidden), fxConnectorBody("hidden 2", "web"), 200, fxShared(changed(hidden, "hidden 2", 1), "private")},
		{"admin renames again", c.admin, path(hidden), fxConnectorBody("hidden 3", "web"), 200, fxShared(changed(hidden, "hidden 3", 2), "private")},
		{"curator, own connector", c.curator, path(own), fxConnectorBody("own 2", "web", "groups", []int64{c.gA}), 200, fxShared(changed(own, "own 2", 1), "private", c.gA)},
		{"curator, every pair curated", c.curator, path(curated), fxConnectorBody("curated 2", "web", "groups", []int64{c.gA}), 200, fxShared(changed(curated, "curated 2", 1, k), "private", c.gA)},
		{"curator, own connector, public, groups left out", c.curator, path(own), fxConnectorBody("own 3", "web", "access_type", "public"), 200,
			fxShared(changed(own, "own 3", 2), "public", c.gA)},
		{"curator, own connector, no groups", c.curator, path(own), fxConnectorBody("own 4", "web", "access_type", "private", "groups", []int64{}), 400, `{"detail":"Curators must specify 1+ groups"}`},
		{"curator, own connector, group not curated", c.curator, path(own), fxConnectorBody("own 4", "web", "groups", []int64{c.gB}), 400, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"curator, own connector, unknown group", c.curator, path(own), fxConnectorBody("own 4", "web", "groups", []int64{9999}), 400, `{"detail":"User group 9999 does not exist"}`},
		{"curator, an admin's connector shared with no group", c.curator, path(private), fxConnectorBody("private 2", "web", "groups", []int64{c.gA}), 403, `{"detail":"Curators can only change what is shared with groups they curate"}`},
		{"curator, public pair only", c.curator, path(public), fxConnectorBody("public 2", "web", "access_type", "public"), 403, `{"detail":"Curators can only change what is shared with groups they curate"}`},
		{"curator, one pair of a group not curated", c.curator, path(mixed), fxConnectorBody("mixed 2", "web", "groups", []int64{c.gA}), 403, `{"detail":"Curators can only change what is shared with groups they curate"}`},
		{"curator, invisible connector", c.curator, path(hidden), fxConnectorBody("x", "web", "groups", []int64{c.gA}), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, hidden)},
		{"global curator, pair of its group", c.global, path(mixed), fxConnectorBody("mixed 2", "web", "groups", []int64{c.gB}), 403, `{"detail":"Curators can only change what is shared with groups they curate"}`},
		{"name and source taken", c.admin, path(hidden), fxConnectorBody("taken", "web"), 409, `{"detail":"Connector by this name already exists, duplicate naming not allowed."}`},
		{"unknown", c.admin, path(9999), fxConnectorBody("x", "web"), 404, `{"detail":"Connector 9999 does not exist"}`},
		{"bad id", c.admin, "/manage/admin/connector/abc", fxConnectorBody("x", "web"), 422, `{"detail":[` + fxIntParsing("connector_id", "abc") + `]}`},
		{"bad id and body", c.admin, "/manage/admin/connector/abc", `{"name":"x"}`, 422, `{"detail":[` + fxIntParsing("connector_id", "abc") + `,
			{"type":"missing","loc":["body","source"],"msg":"Field required","input":{"name":"x"}},
			{"type":"missing","loc":["body","input_type"],"msg":"Field required","input":{"name":"x"}},
			{"type":"missing","loc":["body","connector_specific_config"],"msg":"Field required","input":{"name":"x"}}]}`},
		{"no body", c.admin, path(hidden), nil, 422, fxMissingBody},
		{"not json", c.admin, path(hidden), `{"name": x}`, 422,
			`{"detail":[{"type":"json_invalid","loc":["body",9],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{"basic", c.basic, path(hidden), fxConnectorBody("x", "web"), 403, fxNotCurator},
		{"limited, bad id", c.limited, "/manage/admin/connector/abc", `{`, 403, fxNotCurator},
		{"no token", user{}, path(hidden), fxConnectorBody("x", "web"), 401, fxNotAuthed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "PATCH", tt.path, tt.body).want(t, tt.status, tt.want)
		})
	}
	t.Run("every field", func(t *testing.T) {
		c.do(c.admin, "PATCH", path(public), `{"name":"public","source":"web","input_type":"event",
			"connector_specific_config":{"url":"https://example.org"},"refresh_freq":60,"prune_freq":120,"indexing_start":"2026-03-04T00:00:00Z"}`).
			want(t, 200, fmt.Sprintf(`{"name":"public","source":"web","input_type":"event","connector_specific_config":{"url":"https://example.org"},
				"refresh_freq":60,"prune_freq":120,"indexing_start":"2026-03-04T00:00:00Z","id":%d,"credential_ids":[%d],
				"time_created":%q,"time_updated":%q,"access_type":"private","groups":[]}`, public, k, testNowJSON, fxLater(1)))
		// Absent optional fields are cleared: the body replaces the
		// connector, but for its sharing.
		c.do(c.admin, "PATCH", path(public), fxConnectorBody("public", "web")).want(t, 200, fxShared(changed(public, "public", 2, k), "private"))
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "connectorInput") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "PATCH", "", g) })
		}
	})
}

func TestSupportConnectorDelete(t *testing.T) {
	c := newFxCast(t)
	used := c.connector(c.admin, "used", "web")
	free := c.connector(c.other, "free", "web", "groups", []int64{c.gB})
	mine := c.connector(c.curator, "mine", "web", "groups", []int64{c.gA})
	k := c.credential(c.admin, "web", `{"token":"t"}`, "admin_public", true)
	c.pair(c.admin, used, k, "p", "public")
	path := func(id int64) string { return fmt.Sprint("/manage/admin/connector/", id) }
	notCreator := `{"detail":"Curators can only delete the connectors they created"}`
	for _, tt := range []struct {
		name   string
		u      user
		path   string
		status int
		want   string
	}{
		// Contract section 6: a curator deletes the connectors it created.
		{"curator, connector it cannot see", c.curator, path(free), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, free)},
		{"global curator, another's connector it sees", c.global, path(free), 403, notCreator},
		{"basic", c.basic, path(free), 403, fxNotCurator},
		{"limited, bad id", c.limited, "/manage/admin/connector/abc", 403, fxNotCurator},
		{"curator, bad id", c.curator, "/manage/admin/connector/abc", 422, `{"detail":[` + fxIntParsing("connector_id", "abc") + `]}`},
		{"curator, own connector", c.curator, path(mine), 200, fmt.Sprintf(`{"success":true,"message":"Connector deleted successfully","data":%d}`, mine)},
		{"no token", user{}, path(free), 401, fxNotAuthed},
		{"bad id", c.admin, "/manage/admin/connector/abc", 422, `{"detail":[` + fxIntParsing("connector_id", "abc") + `]}`},
		{"negative id", c.admin, "/manage/admin/connector/-1", 404, `{"detail":"Connector -1 does not exist"}`},
		{"unknown", c.admin, path(9999), 404, `{"detail":"Connector 9999 does not exist"}`},
		{"in use", c.admin, path(used), 409, fmt.Sprintf(`{"detail":"Connector %d is still used by 1 cc-pair(s); remove them first"}`, used)},
		{"unused", c.admin, path(free), 200, fmt.Sprintf(`{"success":true,"message":"Connector deleted successfully","data":%d}`, free)},
		{"deleted", c.admin, path(free), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, free)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "DELETE", tt.path, nil).want(t, tt.status, tt.want)
		})
	}
	t.Run("gone from reads", func(t *testing.T) {
		c.do(c.admin, "GET", fmt.Sprint("/manage/connector/", free), nil).want(t, 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, free))
		c.do(c.admin, "GET", "/manage/connector", nil).want(t, 200, "["+fxShared(fxConnectorJSON(used, "used", "web", k), "private")+"]")
	})
	t.Run("after its pair is removed", func(t *testing.T) {
		c.do(c.admin, "DELETE", fxPairPath(used, k), nil).want(t, 200, fmt.Sprintf(`{"success":true,"message":"Credential %d removed from Connector","data":%d}`, k, used))
		c.do(c.admin, "DELETE", path(used), nil).want(t, 200, fmt.Sprintf(`{"success":true,"message":"Connector deleted successfully","data":%d}`, used))
	})
}

// TestSupportConnectorSharing checks that a connector's access type and
// groups, as created or last changed, decide which curators see it, and
// that seeing a connector does not let a curator change it.
func TestSupportConnectorSharing(t *testing.T) {
	c := newFxCast(t)
	id := c.connector(c.admin, "x", "web", "groups", []int64{c.gA})
	path := fmt.Sprint("/manage/connector/", id)
	adminPath := fmt.Sprint("/manage/admin/connector/", id)
	notFound := fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, id)
	updated := func(n int, access quarry.AccessType, groups ...int64) string {
		return fxShared(strings.Replace(fxConnectorJSON(id, "x", "web"), `"time_updated":"`+testNowJSON, `"time_updated":"`+fxLater(n), 1),
			access, groups...)
	}
	c.do(c.curator, "GET", path, nil).want(t, 200, fxShared(fxConnectorJSON(id, "x", "web"), "private", c.gA))
	c.do(c.other, "GET", path, nil).want(t, 404, notFound)
	// Seeing is not changing: the curator neither made it nor curates its pairs.
	c.do(c.curator, "PATCH", adminPath, fxConnectorBody("x", "web", "groups", []int64{c.gA})).
		want(t, 403, `{"detail":"Curators can only change what is shared with groups they curate"}`)

	c.do(c.admin, "PATCH", adminPath, fxConnectorBody("x", "web", "groups", []int64{c.gB})).want(t, 200, updated(1, "private", c.gB))
	c.do(c.curator, "GET", path, nil).want(t, 404, notFound)
	c.do(c.other, "GET", path, nil).want(t, 200, updated(1, "private", c.gB))
	c.do(c.global, "GET", path, nil).want(t, 200, updated(1, "private", c.gB))

	// What a PATCH leaves out of the sharing stays as it was.
	c.do(c.admin, "PATCH", adminPath, fxConnectorBody("x", "web", "access_type", "public")).want(t, 200, updated(2, "public", c.gB))
	c.do(c.curator, "GET", path, nil).want(t, 200, updated(2, "public", c.gB))
	c.do(c.admin, "PATCH", adminPath, fxConnectorBody("x", "web", "access_type", nil, "groups", nil)).want(t, 200, updated(3, "public", c.gB))

	c.do(c.admin, "PATCH", adminPath, fxConnectorBody("x", "web", "access_type", "private", "groups", []int64{})).want(t, 200, updated(4, "private"))
	for _, u := range []user{c.curator, c.other, c.global} {
		c.do(u, "GET", path, nil).want(t, 404, notFound)
	}
	var fields [][]string
	for _, a := range c.audit(fmt.Sprintf("resource_type=connector&resource_id=%d", id)) {
		fields = append(fields, a.Fields)
	}
	want := [][]string{{"access_type", "groups"}, {}, {"access_type"}, {"groups"},
		{"name", "source", "input_type", "connector_specific_config", "refresh_freq", "prune_freq", "indexing_start", "access_type", "groups"}}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("audit fields, newest first (-want +got):\n%s", diff)
	}
}

// TestSupportConnectorNotTakenOver checks that a curator who pairs a
// connector another user made public (issue 17 lets it) neither changes
// the connector nor deletes it, even once its pair is the connector's only
// one: the connector is everyone's to see and pair.
func TestSupportConnectorNotTakenOver(t *testing.T) {
	c := newFxCast(t)
	public := c.connector(c.admin, "public", "web", "access_type", "public")
	k := c.credential(c.curator, "web", fxSecret, "groups", []int64{c.gA})
	c.pair(c.curator, public, k, "mine", "private", c.gA)
	adminPath := fmt.Sprint("/manage/admin/connector/", public)
	before := fxShared(fxConnectorJSON(public, "public", "web"), "public")

	c.do(c.curator, "PATCH", adminPath, fxConnectorBody("renamed by curator", "web", "access_type", "private", "groups", []int64{c.gA})).
		want(t, 403, `{"detail":"Curators can only change what is shared with groups they curate"}`)
	c.do(c.other, "GET", fmt.Sprint("/manage/connector/", public), nil).want(t, 200, before)

	// The deletion attempt removes the curator's pair; the connector stays.
	c.do(c.curator, "POST", "/manage/admin/deletion-attempt", map[string]any{"connector_id": public, "credential_id": k}).want(t, 200, `null`)
	c.do(c.admin, "GET", fmt.Sprint("/manage/connector/", public), nil).want(t, 200, before)
	c.do(c.other, "GET", fmt.Sprint("/manage/connector/", public), nil).want(t, 200, before)
	var actions []string
	for _, a := range c.audit(fmt.Sprintf("resource_type=connector&resource_id=%d", public)) {
		actions = append(actions, a.Action)
	}
	if want := []string{"connector.create"}; !slices.Equal(actions, want) {
		t.Errorf("audit entries of the connector %v, want %v", actions, want)
	}
}

// TestSupportConnectorReadEditWrite checks that a client that changes one
// field of a connector keeps its sharing, whether it sends back what it
// read (which shows the sharing) or a body without the sharing, as Onyx's
// clients do.
func TestSupportConnectorReadEditWrite(t *testing.T) {
	c := newFxCast(t)
	public := c.connector(c.admin, "public", "web", "access_type", "public")
	shared := c.connector(c.admin, "shared", "web", "groups", []int64{c.gA, c.gB})
	for i, id := range []int64{public, shared} {
		var got map[string]any
		c.do(c.admin, "GET", fmt.Sprint("/manage/connector/", id), nil).decode(t, &got)
		got["refresh_freq"] = 3600
		c.do(c.admin, "PATCH", fmt.Sprint("/manage/admin/connector/", id), got).decode(t, &struct{}{})
		c.do(c.admin, "PATCH", fmt.Sprint("/manage/admin/connector/", id), fxConnectorBody(fmt.Sprint("renamed ", i), "web")).decode(t, &struct{}{})
	}
	c.do(c.curator, "GET", fmt.Sprint("/manage/connector/", public), nil).want(t, 200,
		fxShared(strings.Replace(fxConnectorJSON(public, "renamed 0", "web"), `"time_updated":"`+testNowJSON, `"time_updated":"`+fxLater(2), 1), "public"))
	c.do(c.other, "GET", fmt.Sprint("/manage/connector/", shared), nil).want(t, 200,
		fxShared(strings.Replace(fxConnectorJSON(shared, "renamed 1", "web"), `"time_updated":"`+testNowJSON, `"time_updated":"`+fxLater(2), 1), "private", c.gA, c.gB))
	for _, id := range []int64{public, shared} {
		var fields [][]string
		for _, a := range c.audit(fmt.Sprintf("resource_type=connector&resource_id=%d", id)) {
			if a.Action == "connector.update" {
				fields = append(fields, a.Fields)
			}
		}
		if want := [][]string{{"name", "refresh_freq"}, {"refresh_freq"}}; !cmp.Equal(want, fields) {
			t.Errorf("connector %d: update entries with fields %v, want %v", id, fields, want)
		}
	}
}
