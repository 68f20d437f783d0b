package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// Connector/credential pairs (contract section 6; decisions.md "Pairing").

func TestSupportCCPairCreate(t *testing.T) {
	c := newFxCast(t)
	web := c.connector(c.admin, "web", "web")
	slack := c.connector(c.admin, "slack", "slack")
	hidden := c.connector(c.admin, "hidden", "web") // never paired: curators cannot see it
	cur := c.connector(c.curator, "cur", "web", "groups", []int64{c.gA})
	sharedA := c.connector(c.admin, "shared A", "web", "groups", []int64{c.gA}) // never paired, shared with gA
	sharedB := c.connector(c.admin, "shared B", "web", "groups", []int64{c.gB}) // never paired, shared with gB
	public := c.connector(c.admin, "public", "web", "access_type", "public")    // never paired, public
	kWeb := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	kNA := c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true)
	kNA2 := c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true)
	kBasic := c.credential(c.basic, "web", fxSecret)
	kCurA := c.credential(c.curator, "web", fxSecret, "groups", []int64{c.gA})
	kPub := c.credential(c.other, "web", fxSecret, "curator_public", true)
	kOtherB := c.credential(c.other, "web", fxSecret, "groups", []int64{c.gB})

	body := func(access string, groups ...int64) map[string]any {
		return map[string]any{"name": "pair", "access_type": access, "groups": fxIDs(groups)}
	}
	hiddenCred := func(id int64) string {
		return fmt.Sprintf(`{"detail":"Credential %d does not exist or does not belong to user"}`, id)
	}
	const mustGroups = `{"detail":"Curators must specify 1+ groups"}`
	const notCurated = `{"detail":"Curators cannot control groups they don't curate"}`
	for _, tt := range []struct {
		name      string
		u         user
		conn, k   int64
		body      any
		status    int
		want      string // for other statuses than 200
		wantGroup int64  // for 200: a group the new pair must be shared with, or 0
	}{
		{"admin, public", c.admin, web, kWeb, body("public"), 200, "", 0},
		{"admin, private without groups", c.admin, web, kNA, body("private"), 200, "", 0},
		{"admin, sync with any group", c.admin, slack, kNA, body("sync", c.gC), 200, "", c.gC},
		{"existing pair", c.admin, web, kWeb, body("public"), 409, fmt.Sprintf(`{"detail":"Connector %d already has Credential %d"}`, web, kWeb), 0},
		{"existing pair, other body", c.admin, web, kWeb, body("private", c.gA), 409, fmt.Sprintf(`{"detail":"Connector %d already has Credential %d"}`, web, kWeb), 0},
		{"source mismatch", c.admin, slack, kWeb, body("public"), 400,
			fmt.Sprintf(`{"detail":"Credential %d is for web, but connector %d reads slack"}`, kWeb, slack), 0},
		{"unknown connector", c.admin, 9999, kWeb, body("public"), 404, `{"detail":"Connector 9999 does not exist"}`, 0},
		{"unknown connector and credential", c.admin, 9999, 9998, body("public"), 404, `{"detail":"Connector 9999 does not exist"}`, 0},
		{"unknown credential", c.admin, web, 9999, body("public"), 404, hiddenCred(9999), 0},
		{"admin, a basic user's credential", c.admin, web, kBasic, body("public"), 404, hiddenCred(kBasic), 0},
		{"admin, a curator's group credential", c.admin, web, kCurA, body("public"), 404, hiddenCred(kCurA), 0},
		{"admin, unknown group", c.admin, hidden, kWeb, body("private", c.gA, 9999), 400, `{"detail":"User group 9999 does not exist"}`, 0},
		{"curator, no groups", c.curator, cur, kCurA, body("private"), 400, mustGroups, 0},
		{"curator, sync is not public", c.curator, cur, kCurA, body("sync"), 400, mustGroups, 0},
		{"curator, group not curated", c.curator, cur, kCurA, body("private", c.gB), 400, notCurated, 0},
		{"curator, public with a group not curated", c.curator, cur, kCurA, body("public", c.gA, c.gC), 400, notCurated, 0},
		{"curator, unknown group", c.curator, cur, kCurA, body("private", 9999), 400, `{"detail":"User group 9999 does not exist"}`, 0},
		{"curator, connector it cannot see", c.curator, hidden, kCurA, body("private", c.gA), 404, fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, hidden), 0},
		{"curator, credential it cannot see", c.curator, cur, kWeb, body("private", c.gA), 404, hiddenCred(kWeb), 0},
		{"curator, connector shared with a group it is only a member of", c.curator, sharedB, kCurA, body("private", c.gA), 404,
			fmt.Sprintf(`{"detail":"Connector %d does not exist"}`, sharedB), 0},
		{"curator, admin's connector shared with a group it curates", c.curator, sharedA, kCurA, body("private", c.gA), 200, "", c.gA},
		{"curator, admin's public connector", c.curator, public, kCurA, body("private", c.gA), 200, "", c.gA},
		{"global curator, admin's connector shared with its group", c.global, sharedB, kOtherB, body("private", c.gB), 200, "", c.gB},
		// slack has a sync pair, which every curator sees.
		{"curator, source mismatch", c.curator, slack, kCurA, body("private", c.gA), 400,
			fmt.Sprintf(`{"detail":"Credential %d is for web, but connector %d reads slack"}`, kCurA, slack), 0},
		{"curator, curated group", c.curator, cur, kCurA, body("private", c.gA), 200, "", c.gA},
		{"curator, public without groups, curator_public credential", c.curator, cur, kPub, body("public"), 200, "", 0},
		// As Onyx: a curator reads, but does not pair, a credential of a
		// group it is only a member of.
		{"curator, credential of a group it is only a member of", c.curator, cur, kOtherB, body("private", c.gA), 404, hiddenCred(kOtherB), 0},
		{"curator, public connector of the admin", c.curator, web, kCurA, body("private", c.gA), 200, "", c.gA},
		{"global curator, its group", c.global, web, kOtherB, body("private", c.gB), 200, "", c.gB},
		{"global curator, not_applicable credential it cannot see", c.global, web, kNA2, body("private", c.gB), 404, hiddenCred(kNA2), 0},
		{"basic", c.basic, web, kBasic, body("public"), 403, fxNotCurator, 0},
		{"limited", c.limited, web, kBasic, `{`, 403, fxNotCurator, 0},
		{"no token", user{}, web, kWeb, body("public"), 401, fxNotAuthed, 0},
		{"no body", c.admin, web, kNA2, nil, 422, fxMissingBody, 0},
		{"bad groups", c.admin, web, kNA2, `{"name":"p","access_type":"public","groups":[1,"x",null]}`, 422, `{"detail":[
			{"type":"int_parsing","loc":["body","groups",1],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"},
			{"type":"int_type","loc":["body","groups",2],"msg":"Input should be a valid integer","input":null}]}`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do(tt.u, "PUT", fxPairPath(tt.conn, tt.k), tt.body)
			if tt.status != 200 {
				r.want(t, tt.status, tt.want)
				return
			}
			var out struct{ Data int64 }
			r.decode(t, &out)
			r.want(t, 200, fmt.Sprintf(`{"success":true,"message":"Creating new association between Connector %d and Credential %d","data":%d}`,
				tt.conn, tt.k, out.Data))
			if tt.wantGroup != 0 {
				var groups []struct {
					ID        int64   `json:"id"`
					CCPairIDs []int64 `json:"cc_pair_ids"`
				}
				c.do(c.admin, "GET", "/manage/admin/user-group", nil).decode(t, &groups)
				found := false
				for _, g := range groups {
					for _, p := range g.CCPairIDs {
						found = found || (g.ID == tt.wantGroup && p == out.Data)
					}
				}
				if !found {
					t.Errorf("cc-pair %d is not shared with group %d: %+v", out.Data, tt.wantGroup, groups)
				}
			}
		})
	}
	t.Run("bad path", func(t *testing.T) {
		c.do(c.admin, "PUT", "/manage/connector/abc/credential/x1", `{"name":5}`).want(t, 422, `{"detail":[`+
			fxIntParsing("connector_id", "abc")+","+fxIntParsing("credential_id", "x1")+`,
			{"type":"string_type","loc":["body","name"],"msg":"Input should be a valid string","input":5},
			{"type":"missing","loc":["body","access_type"],"msg":"Field required","input":{"name":5}}]}`)
	})
	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "ccPairCreate") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "PUT", "", g) })
		}
	})
}

func TestSupportCCPairDelete(t *testing.T) {
	c := newFxCast(t)
	d := c.connector(c.admin, "d", "web")
	e := c.connector(c.admin, "e", "web")
	f := c.connector(c.curator, "f", "web", "access_type", "public")
	kWeb := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	kNA := c.credential(c.admin, "not_applicable", fxSecret, "admin_public", true)
	kPub := c.credential(c.other, "web", fxSecret, "curator_public", true)
	c.pair(c.admin, d, kWeb, "admin public", "public")
	c.pair(c.admin, d, kNA, "admin A", "private", c.gA)
	c.pair(c.admin, e, kWeb, "admin B", "private", c.gB)
	c.pair(c.admin, e, kNA, "admin C", "private", c.gC)
	c.pair(c.curator, f, kPub, "curator public", "public")

	removed := func(conn, k int64) string {
		return fmt.Sprintf(`{"success":true,"message":"Credential %d removed from Connector","data":%d}`, k, conn)
	}
	missing := func(conn, k int64) string {
		return fmt.Sprintf(`{"detail":"Connector %d does not have Credential %d"}`, conn, k)
	}
	const notCurated = `{"detail":"Curators can only change what is shared with groups they curate"}`
	for _, tt := range []struct {
		name    string
		u       user
		conn, k int64
		status  int
		want    string
	}{
		{"curator, public pair of the admin", c.curator, d, kWeb, 403, notCurated},
		{"curator, pair of a group it is only a member of", c.curator, e, kWeb, 403, notCurated},
		{"curator, pair it cannot see", c.curator, e, kNA, 404, missing(e, kNA)},
		{"other curator, public pair another curator made", c.other, f, kPub, 403, notCurated},
		{"basic", c.basic, d, kWeb, 403, fxNotCurator},
		{"limited", c.limited, d, kWeb, 403, fxNotCurator},
		{"no token", user{}, d, kWeb, 401, fxNotAuthed},
		{"unknown pair", c.admin, d, 9999, 404, missing(d, 9999)},
		{"unknown connector", c.admin, 9999, kWeb, 404, missing(9999, kWeb)},
		{"curator, a pair it made", c.curator, f, kPub, 200, removed(f, kPub)},
		{"curator, a pair of a group it curates", c.curator, d, kNA, 200, removed(d, kNA)},
		{"global curator, a pair of its group", c.global, e, kWeb, 200, removed(e, kWeb)},
		{"admin", c.admin, e, kNA, 200, removed(e, kNA)},
		{"admin, removed", c.admin, e, kNA, 404, missing(e, kNA)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.do(tt.u, "DELETE", fxPairPath(tt.conn, tt.k), nil).want(t, tt.status, tt.want)
		})
	}
	t.Run("bad path", func(t *testing.T) {
		c.do(c.admin, "DELETE", "/manage/connector/1/credential/abc", nil).want(t, 422, `{"detail":[`+fxIntParsing("credential_id", "abc")+`]}`)
		c.do(c.admin, "DELETE", "/manage/connector/abc/credential/-", nil).want(t, 422, `{"detail":[`+
			fxIntParsing("connector_id", "abc")+","+fxIntParsing("credential_id", "-")+`]}`)
		c.do(c.basic, "DELETE", "/manage/connector/abc/credential/1", nil).want(t, 403, fxNotCurator)
	})
	t.Run("what is left", func(t *testing.T) {
		c.do(c.admin, "GET", "/manage/connector", nil).want(t, 200, "["+
			fxShared(fxConnectorJSON(d, "d", "web", kWeb), "private")+","+fxShared(fxConnectorJSON(e, "e", "web"), "private")+","+
			fxShared(fxConnectorJSON(f, "f", "web"), "public")+"]")
	})
}

// TestOnyxCuratorFlows follows Onyx's curator tests (v4.6.1,
// test_cc_pair_permissions and test_whole_curator_flow): an admin creates a
// private connector and credentials shared with groups, and a curator of
// one of them pairs that connector, sees the pair, and removes it.
func TestOnyxCuratorFlows(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	curator := e.user(quarry.RoleCurator, "curator")
	g1 := f.group("curated_user_group", []user{curator}, curator)
	g2 := f.group("uncurated_user_group", []user{curator})
	if got := f.role(curator); got != "curator" {
		t.Fatalf("role = %s, want curator", got)
	}
	pairsSeen := func(u user) []int64 {
		t.Helper()
		var rows []struct {
			ID int64 `json:"cc_pair_id"`
		}
		e.do(u, "GET", "/manage/admin/connector/status", nil).decode(t, &rows)
		ids := []int64{}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return ids
	}

	t.Run("test_cc_pair_permissions", func(t *testing.T) {
		connector := f.connector(e.admin, "admin_owned_connector", "confluence", "groups", []int64{g1}, "access_type", "private")
		credential1 := f.credential(e.admin, "confluence", fxSecret, "name", "curator_owned_credential", "groups", []int64{g1}, "curator_public", false)
		pair := func(name string, cred int64, groups ...int64) *response {
			return e.do(curator, "PUT", fxPairPath(connector, cred), map[string]any{"name": name, "access_type": "private", "groups": fxIDs(groups)})
		}
		// Not for a group it does not curate, nor without a group.
		pair("invalid_cc_pair_2", credential1, g1, g2).want(t, 400, `{"detail":"Curators cannot control groups they don't curate"}`)
		pair("invalid_cc_pair_2", credential1).want(t, 400, `{"detail":"Curators must specify 1+ groups"}`)
		// The connector is the admin's, shared with the group it curates:
		// it sees it, and may pair it for that group.
		e.do(curator, "GET", fmt.Sprint("/manage/connector/", connector), nil).want(t, 200,
			fxShared(fxConnectorJSON(connector, "admin_owned_connector", "confluence"), "private", g1))
		r := pair("valid_cc_pair", credential1, g1)
		var out struct{ Data int64 }
		r.decode(t, &out)
		r.want(t, 200, fmt.Sprintf(`{"success":true,"message":"Creating new association between Connector %d and Credential %d","data":%d}`,
			connector, credential1, out.Data))
		if got := pairsSeen(curator); !slices.Equal(got, []int64{out.Data}) {
			t.Errorf("the curator sees cc-pairs %v, want [%d]", got, out.Data)
		}
		e.do(curator, "DELETE", fxPairPath(connector, credential1), nil).want(t, 200,
			fmt.Sprintf(`{"success":true,"message":"Credential %d removed from Connector","data":%d}`, credential1, connector))
		if got := pairsSeen(curator); len(got) != 0 {
			t.Errorf("the curator sees cc-pairs %v after removing its pair", got)
		}
	})

	t.Run("test_whole_curator_flow", func(t *testing.T) {
		credential := f.credential(curator, "file", fxSecret, "name", "curator_test_credential", "groups", []int64{g1}, "curator_public", false)
		connector := f.connector(curator, "curator_test_connector", "file", "groups", []int64{g1}, "access_type", "private")
		e.do(curator, "PATCH", fmt.Sprint("/manage/admin/connector/", connector),
			fxConnectorBody("updated_test_connector", "file", "groups", []int64{g1}, "access_type", "private")).want(t, 200,
			fxShared(strings.Replace(fxConnectorJSON(connector, "updated_test_connector", "file"), `"time_updated":"`+testNowJSON, `"time_updated":"`+fxLater(1), 1),
				"private", g1))
		id := f.pair(curator, connector, credential, "curator_test_cc_pair", "private", g1)
		if got := pairsSeen(e.admin); !slices.Contains(got, id) {
			t.Errorf("the admin sees cc-pairs %v, want %d among them", got, id)
		}
		e.do(curator, "DELETE", fxPairPath(connector, credential), nil).want(t, 200,
			fmt.Sprintf(`{"success":true,"message":"Credential %d removed from Connector","data":%d}`, credential, connector))
		if got := pairsSeen(e.admin); slices.Contains(got, id) {
			t.Errorf("the admin still sees cc-pair %d", id)
		}
	})
}
