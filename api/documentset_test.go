package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// The routes of document sets (api/documentset.go) and the searches
// narrowed to them, on the real server and database, with whole bodies.

// dsPair is a pair of a set as Onyx's CCPairSummary renders it.
type dsPair struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Source     string            `json:"source"`
	AccessType quarry.AccessType `json:"access_type"`
}

// dsSummary is the expected DocumentSetSummary of a set.
func dsSummary(id int64, name, description string, pairs []dsPair, public bool, users []string, groups []int64) rawJSON {
	if users == nil {
		users = []string{}
	}
	if pairs == nil {
		pairs = []dsPair{}
	}
	return rawJSON(fxJSON(map[string]any{"id": id, "name": name, "description": description, "cc_pair_summaries": pairs,
		"is_up_to_date": true, "is_public": public, "users": users, "groups": fxIDs(groups), "federated_connector_summaries": []any{}}))
}

// dsList renders a listing of sets.
func dsList(sets ...rawJSON) string {
	if sets == nil {
		return `[]`
	}
	return fxJSON(sets)
}

// dsSet is the body of a set to make (or, with "id", to change).
func dsSet(name string, pairs []int64, public bool, groups []int64, extra ...any) map[string]any {
	b := map[string]any{"name": name, "description": name + "'s documents", "cc_pair_ids": fxIDs(pairs), "is_public": public,
		"users": []string{}, "groups": fxIDs(groups)}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// fxNoSets is Onyx's 403 of a search narrowed to sets the caller may not
// see, names as Python's repr of a sorted list.
func fxNoSets(names string) string {
	return fxJSON(map[string]string{"error_code": "INSUFFICIENT_PERMISSIONS", "detail": "User does not have access to document sets: " + names})
}

func TestDocumentSets(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "pushed", "file", "access_type", "public")
	pub := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	privA := c.pair(c.curator, conn, c.credential(c.curator, "file", fxSecret, "groups", []int64{c.gA}), "of A", quarry.AccessPrivate, c.gA)
	privB := c.pair(c.other, conn, c.credential(c.other, "file", fxSecret, "groups", []int64{c.gB}), "of B", quarry.AccessPrivate, c.gB)
	privC := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "of C", quarry.AccessPrivate, c.gC)
	pPub := dsPair{pub, "public", "file", quarry.AccessPublic}
	pA := dsPair{privA, "of A", "file", quarry.AccessPrivate}
	pB := dsPair{privB, "of B", "file", quarry.AccessPrivate}

	// Who may call the routes at all.
	c.do(c.basic, "POST", "/manage/admin/document-set", dsSet("x", []int64{pub}, true, nil)).want(t, 403, fxNotCurator)
	c.do(c.basic, "PATCH", "/manage/admin/document-set", dsSet("x", []int64{pub}, true, nil, "id", 1)).want(t, 403, fxNotCurator)
	c.do(c.basic, "DELETE", "/manage/admin/document-set/1", nil).want(t, 403, fxNotCurator)
	c.do(c.limited, "GET", "/manage/document-set", nil).want(t, 403, fxLimited)
	c.do(c.limited, "GET", "/manage/document-set-public", `{"document_set_ids":[]}`).want(t, 403, fxLimited)
	c.do(user{}, "GET", "/manage/document-set", nil).want(t, 401, fxNotAuthed)
	c.do(c.basic, "GET", "/manage/document-set", nil).want(t, 200, `[]`)

	// Making sets: the id, as Onyx answers.
	c.do(c.curator, "POST", "/manage/admin/document-set", dsSet("A docs", []int64{privA, pub, privA}, false, []int64{c.gA})).want(t, 200, `1`)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("Everyone", []int64{pub, privB}, true, nil)).want(t, 200, `2`)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("For the basic user", []int64{pub}, false, nil, "users", []string{c.basic.id})).
		want(t, 200, `3`)
	for _, tc := range []struct {
		name   string
		u      user
		body   map[string]any
		status int
		want   string
	}{
		{"a curator names another's group", c.curator, dsSet("x", []int64{pub}, false, []int64{c.gB}), 400, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"a curator names no group", c.curator, dsSet("x", []int64{pub}, false, nil), 400, `{"detail":"Curators must specify 1+ groups"}`},
		{"a curator names both groups", c.curator, dsSet("x", []int64{pub}, false, []int64{c.gA, c.gB}), 400, `{"detail":"Curators cannot control groups they don't curate"}`},
		{"no pair", c.admin, dsSet("x", nil, false, []int64{c.gA}), 400, `{"detail":"Cannot create a document set with no connectors"}`},
		{"a federated connector", c.admin, dsSet("x", []int64{pub}, true, nil, "federated_connectors",
			[]map[string]any{{"federated_connector_id": 1, "entities": map[string]any{}}}), 400,
			`{"detail":"Quarry has no federated connectors: federated_connectors must be empty"}`},
		{"no name", c.admin, dsSet(" ", []int64{pub}, true, nil), 400, `{"detail":"A document set needs a name"}`},
		{"a pair of none", c.admin, dsSet("x", []int64{999}, true, nil), 400, `{"detail":"CC pair 999 does not exist"}`},
		{"a pair the curator cannot see", c.curator, dsSet("x", []int64{privC}, true, nil), 400, fmt.Sprintf(`{"detail":"CC pair %d does not exist"}`, privC)},
		{"a private pair of another group", c.admin, dsSet("x", []int64{privB}, false, []int64{c.gA}), 400,
			fmt.Sprintf(`{"detail":"Connector Credential Pair with ID: '%d' is not owned by the specified groups"}`, privB)},
		{"a person of none", c.admin, dsSet("x", []int64{pub}, false, nil, "users", []string{"00000000-0000-4000-8000-000000000000"}), 404,
			`{"detail":"User(s) not found: 00000000-0000-4000-8000-000000000000"}`},
		{"a group of none", c.admin, dsSet("x", []int64{pub}, false, []int64{999}), 400, `{"detail":"User group 999 does not exist"}`},
		{"a default group", c.admin, dsSet("x", []int64{pub}, false, []int64{basicGroupID}), 400,
			`{"detail":"Cannot share with the default system group(s): Basic. Make the resource public instead."}`},
		{"a name taken", c.admin, dsSet("Everyone", []int64{pub}, true, nil), 409, `{"detail":"A document set named 'Everyone' already exists"}`},
		{"a NUL in the name", c.admin, dsSet("a\x00b", []int64{pub}, true, nil), 400, `{"detail":"Text may not contain the NUL character (\\u0000)"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.do(tc.u, "POST", "/manage/admin/document-set", tc.body).want(t, tc.status, tc.want)
		})
	}

	setA := dsSummary(1, "A docs", "A docs's documents", []dsPair{pPub, pA}, false, nil, []int64{c.gA})
	everyone := dsSummary(2, "Everyone", "Everyone's documents", []dsPair{pPub, pB}, true, nil, nil)
	// Those who may not see B's pair (not members of B) see the set without it.
	everyonePub := dsSummary(2, "Everyone", "Everyone's documents", []dsPair{pPub}, true, nil, nil)
	forBasic := dsSummary(3, "For the basic user", "For the basic user's documents", []dsPair{pPub}, false, []string{c.basic.id}, nil)
	for _, tc := range []struct {
		name  string
		u     user
		query string
		want  string
	}{
		{"the admin sees every set", c.admin, "", dsList(setA, everyone, forBasic)},
		{"and may change every set", c.admin, "?get_editable=true", dsList(setA, everyone, forBasic)},
		{"the curator sees A's and the public one", c.curator, "", dsList(setA, everyone)},
		{"and changes A's", c.curator, "?get_editable=true", dsList(setA)},
		{"the curator of B, a public one", c.other, "", dsList(everyone)},
		{"and changes none", c.other, "?get_editable=1", dsList()},
		{"the global curator, a member of B", c.global, "?get_editable=false", dsList(everyone)},
		{"a person, the public one and theirs", c.basic, "", dsList(everyonePub, forBasic)},
		{"and changes none", c.basic, "?get_editable=true", dsList()},
	} {
		t.Run(tc.name, func(t *testing.T) { c.do(tc.u, "GET", "/manage/document-set"+tc.query, nil).want(t, 200, tc.want) })
	}

	// Whether sets' pairs are all public; sets one may not see count as
	// sets of no pair.
	for _, tc := range []struct {
		u    user
		ids  string
		want bool
	}{
		{c.admin, "[1]", false}, {c.admin, "[3]", true}, {c.admin, "[2, 3]", false}, {c.admin, "[]", true}, {c.admin, "[99]", true},
		{c.basic, "[1, 3]", true}, {c.curator, "[1, 3]", false},
	} {
		c.do(tc.u, "GET", "/manage/document-set-public", `{"document_set_ids":`+tc.ids+`}`).want(t, 200, fmt.Sprintf(`{"is_public":%t}`, tc.want))
	}
	c.do(c.admin, "GET", "/manage/document-set-public", nil).want(t, 422, fxMissingBody)

	// Changing a set: the whole set, answered null.
	for _, tc := range []struct {
		name   string
		u      user
		body   map[string]any
		status int
		want   string
	}{
		{"a set one cannot see", c.other, dsSet("x", []int64{privA}, false, []int64{c.gA}, "id", 1), 404, `{"detail":"Document set 1 does not exist"}`},
		{"a set of none", c.admin, dsSet("x", []int64{pub}, true, nil, "id", 99), 404, `{"detail":"Document set 99 does not exist"}`},
		{"another's public set", c.global, dsSet("x", []int64{pub}, true, nil, "id", 2), 403,
			`{"detail":"Curators can only change what is shared with groups they curate"}`},
		{"sharing with a group one does not curate", c.curator, dsSet("x", []int64{privA}, false, []int64{c.gA, c.gB}, "id", 1), 403,
			`{"detail":"You can only share with groups you curate"}`},
		{"no pair left", c.curator, dsSet("x", nil, false, []int64{c.gA}, "id", 1), 400, `{"detail":"Cannot update a document set with no connectors"}`},
		{"another set's name", c.curator, dsSet("Everyone", []int64{privA}, false, []int64{c.gA}, "id", 1), 409,
			`{"detail":"A document set named 'Everyone' already exists"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.do(tc.u, "PATCH", "/manage/admin/document-set", tc.body).want(t, tc.status, tc.want)
		})
	}
	c.do(c.curator, "PATCH", "/manage/admin/document-set", dsSet("A only", []int64{privA}, false, []int64{c.gA}, "id", 1)).want(t, 200, `null`)
	setA = dsSummary(1, "A only", "A only's documents", []dsPair{pA}, false, nil, []int64{c.gA})
	c.do(c.curator, "GET", "/manage/document-set", nil).want(t, 200, dsList(setA, everyone))

	// A change keeps the pairs its author may not see: the curator's own
	// public set, to which the admin added C's pair, keeps it when the
	// curator renames the set with the pairs they see.
	c.do(c.curator, "POST", "/manage/admin/document-set", dsSet("Mine", []int64{pub}, true, nil)).want(t, 200, `4`)
	c.do(c.admin, "PATCH", "/manage/admin/document-set", dsSet("Mine", []int64{pub, privC}, true, nil, "id", 4)).want(t, 200, `null`)
	c.do(c.curator, "GET", "/manage/document-set?get_editable=true", nil).want(t, 200,
		dsList(setA, dsSummary(4, "Mine", "Mine's documents", []dsPair{pPub}, true, nil, nil)))
	c.do(c.curator, "PATCH", "/manage/admin/document-set", dsSet("Still mine", []int64{pub}, true, nil, "id", 4)).want(t, 200, `null`)
	c.do(c.admin, "GET", "/manage/document-set?get_editable=true", nil).want(t, 200,
		dsList(setA, everyone, forBasic, dsSummary(4, "Still mine", "Still mine's documents", []dsPair{pPub, {privC, "of C", "file", quarry.AccessPrivate}}, true, nil, nil)))
	c.do(c.curator, "DELETE", "/manage/admin/document-set/4", nil).want(t, 200, `null`)

	// Deleting: gone at once, with what it held.
	c.do(c.global, "DELETE", "/manage/admin/document-set/1", nil).want(t, 404, `{"detail":"Document set 1 does not exist"}`)
	c.do(c.global, "DELETE", "/manage/admin/document-set/2", nil).want(t, 403, `{"detail":"Curators can only change what is shared with groups they curate"}`)
	c.do(c.curator, "DELETE", "/manage/admin/document-set/abc", nil).want(t, 422, `{"detail":[`+fxIntParsing("document_set_id", "abc")+`]}`)
	c.do(c.curator, "DELETE", "/manage/admin/document-set/1", nil).want(t, 200, `null`)
	c.do(c.curator, "DELETE", "/manage/admin/document-set/1", nil).want(t, 404, `{"detail":"Document set 1 does not exist"}`)
	c.do(c.admin, "GET", "/manage/document-set", nil).want(t, 200, dsList(everyone, forBasic))

	var got []string
	for _, a := range c.audit("resource_type=document_set") {
		email := ""
		if a.ActorEmail != nil {
			email = *a.ActorEmail
		}
		got = append(got, fmt.Sprintf("%s %s %s %v", a.Action, a.ResourceID, email, a.Fields))
	}
	want := []string{
		"document_set.delete 1 " + c.curator.email + " []",
		"document_set.delete 4 " + c.curator.email + " []",
		"document_set.update 4 " + c.curator.email + " [name description]",
		"document_set.update 4 " + c.admin.email + " [cc_pair_ids]",
		"document_set.create 4 " + c.curator.email + " [name description cc_pair_ids is_public users groups]",
		"document_set.update 1 " + c.curator.email + " [name description cc_pair_ids]",
		"document_set.create 3 " + c.admin.email + " [name description cc_pair_ids is_public users groups]",
		"document_set.create 2 " + c.admin.email + " [name description cc_pair_ids is_public users groups]",
		"document_set.create 1 " + c.curator.email + " [name description cc_pair_ids is_public users groups]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDocumentSetSearch covers the searches narrowed to document sets, in
// Onyx's search routes: a set's documents are those of its pairs at each
// search (a set is searchable at once, and follows its pairs), within
// what the caller may read; a set the caller may not see, or no set, is
// Onyx's 403.
func TestDocumentSetSearch(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "pushed", "file", "access_type", "public")
	pub := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	privA := c.pair(c.curator, conn, c.credential(c.curator, "file", fxSecret, "groups", []int64{c.gA}), "of A", quarry.AccessPrivate, c.gA)
	other := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "other public", quarry.AccessPublic)
	push := func(pair int64, id, text string) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":%q,"semantic_identifier":%q,
			"sections":[{"text":%q,"link":"https://docs.example.com/%s"}],"metadata":{},"doc_updated_at":"2026-03-01T00:00:00Z"},"cc_pair_id":%d}`,
			id, id, text, id, pair)).decode(t, new(any))
	}
	push(pub, "handbook", "The granite handbook.")
	push(privA, "safety", "Granite safety rules.")
	push(other, "prices", "Granite prices.")
	c.do(c.curator, "POST", "/manage/admin/document-set", dsSet("A", []int64{privA, pub}, false, []int64{c.gA})).want(t, 200, `1`)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("Everything", []int64{pub, privA, other}, true, nil)).want(t, 200, `2`)

	result := func(n int, id, text string) string {
		return fmt.Sprintf(`{"citation_id":%d,"title":%q,"content":%q,"link":"https://docs.example.com/%s","source_type":"ingestion_api","updated_at":"2026-03-01T00:00:00+00:00"}`,
			n, id, text, id)
	}
	handbook, safety, prices := "The granite handbook.", "Granite safety rules.", "Granite prices."
	for _, tc := range []struct {
		name   string
		u      user
		body   string
		status int
		want   string
	}{
		{"no set", c.curator, `{"query":"granite"}`, 200,
			`{"results":[` + result(1, "handbook", handbook) + `,` + result(2, "prices", prices) + `,` + result(3, "safety", safety) + `]}`},
		{"A's set", c.curator, `{"query":"granite","document_sets":["A"]}`, 200,
			`{"results":[` + result(1, "handbook", handbook) + `,` + result(2, "safety", safety) + `]}`},
		{"two sets: any of them", c.curator, `{"query":"granite","document_sets":["A","Everything"]}`, 200,
			`{"results":[` + result(1, "handbook", handbook) + `,` + result(2, "prices", prices) + `,` + result(3, "safety", safety) + `]}`},
		// The public set holds A's pair: it narrows, never widens.
		{"a set of a pair one may not read", c.basic, `{"query":"granite","document_sets":["Everything"]}`, 200,
			`{"results":[` + result(1, "handbook", handbook) + `,` + result(2, "prices", prices) + `]}`},
		{"a set one may not see", c.basic, `{"query":"granite","document_sets":["A"]}`, 403, fxNoSets(`['A']`)},
		{"no such set", c.basic, `{"query":"granite","document_sets":["zz","Everything","nope","it's"]}`, 403, fxNoSets(`["it's", 'nope', 'zz']`)},
		{"the admin sees every set, and names", c.admin, `{"query":"granite","document_sets":["A","nope"]}`, 403, fxNoSets(`['nope']`)},
		{"too many sets", c.basic, `{"query":"granite","document_sets":[` + strings.Repeat(`"x",`, 100) + `"x"]}`, 400,
			`{"error_code":"INVALID_INPUT","detail":"A search filters by 100 document sets at most; this one names 101"}`},
		{"a NUL in a set's name", c.basic, `{"query":"granite","document_sets":["a\u0000b"]}`, 400,
			`{"error_code":"INVALID_INPUT","detail":"Text may not contain the NUL character (\\u0000)"}`},
		{"no set named is no filter", c.basic, `{"query":"granite","document_sets":[]}`, 200,
			`{"results":[` + result(1, "handbook", handbook) + `,` + result(2, "prices", prices) + `]}`},
	} {
		t.Run("POST /search: "+tc.name, func(t *testing.T) { c.do(tc.u, "POST", "/search", tc.body).want(t, tc.status, tc.want) })
	}

	// send-search-message: filters.document_set, the same rules; the
	// refusal comes before any stream.
	for _, stream := range []bool{false, true} {
		c.do(c.basic, "POST", "/search/send-search-message", fmt.Sprintf(`{"search_query":"granite","stream":%t,"filters":{"document_set":["A"]}}`, stream)).
			want(t, 403, fxNoSets(`['A']`))
	}
	if got := c.searchIDs(t, c.curator, `{"search_query":"granite","filters":{"document_set":["A"]}}`); strings.Join(got, ",") != "handbook,safety" {
		t.Errorf("send-search-message by A's set: %v", got)
	}

	// A set follows its pairs: a pair taken out is searched no more, at
	// once; a set made of a pair finds that pair's documents at once.
	c.do(c.curator, "PATCH", "/manage/admin/document-set", dsSet("A", []int64{privA}, false, []int64{c.gA}, "id", 1)).want(t, 200, `null`)
	c.do(c.curator, "POST", "/search", `{"query":"granite","document_sets":["A"]}`).want(t, 200, `{"results":[`+result(1, "safety", safety)+`]}`)
	push(privA, "rota", "The granite rota.")
	c.do(c.curator, "POST", "/search", `{"query":"granite rota","document_sets":["A"]}`).
		want(t, 200, `{"results":[`+result(1, "rota", "The granite rota.")+`,`+result(2, "safety", safety)+`]}`)
	c.do(c.curator, "DELETE", fmt.Sprintf("/manage/connector/%d/credential/%d", conn, c.pairCredential(privA)), nil).decode(t, new(any))
	c.do(c.curator, "POST", "/search", `{"query":"granite","document_sets":["A"]}`).want(t, 200, `{"results":[]}`)
	c.do(c.curator, "GET", "/manage/document-set", nil).want(t, 200, dsList(
		dsSummary(1, "A", "A's documents", nil, false, nil, []int64{c.gA}),
		dsSummary(2, "Everything", "Everything's documents", []dsPair{{pub, "public", "file", quarry.AccessPublic},
			{other, "other public", "file", quarry.AccessPublic}}, true, nil, nil)))
}

// pairCredential returns the credential of cc-pair id.
func (f fx) pairCredential(id int64) int64 {
	f.t.Helper()
	var p struct {
		Credential struct {
			ID int64 `json:"id"`
		} `json:"credential"`
	}
	f.do(f.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", id), nil).decode(f.t, &p)
	return p.Credential.ID
}

// TestDocumentSetGoldens replays the 422s of the request models of
// document sets, generated by scripts/pydantic_goldens.py with pydantic.
func TestDocumentSetGoldens(t *testing.T) {
	e := newEnv(t)
	f := fx{e}
	for _, tt := range []struct{ model, method string }{
		{"documentSetCreate", "POST"}, {"documentSetUpdate", "PATCH"}, {"documentSetDelete", "DELETE"},
		{"documentSetsQuery", "GET"}, {"documentSetPublic", "GET"},
	} {
		for _, c := range fxGoldens(t, tt.model) {
			t.Run(tt.model+"/"+c.Name, func(t *testing.T) { f.replay(t, e.admin, tt.method, "", c) })
		}
	}
}
