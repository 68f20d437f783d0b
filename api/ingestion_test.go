package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestIngestion covers Onyx's ingestion API through the real server and
// database: pushing documents into a pair, listing and deleting them, the
// documents of a pair, and who may do what.
func TestIngestion(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "pushed", "file")
	cred := c.credential(c.admin, "file", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "pushed", quarry.AccessPrivate, c.gA)
	other := c.connector(c.admin, "other", "web")
	q := c.pair(c.admin, other, c.credential(c.admin, "web", fxSecret, "admin_public", true), "other", quarry.AccessPrivate, c.gC)
	push := func(u user, doc string, pair any) *response {
		t.Helper()
		return c.do(u, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":%s,"cc_pair_id":%v}`, doc, pair))
	}
	doc := `{"id":"test doc/1","sections":[{"text":"Test document","link":"https://wiki.example.com/1"}],
		"semantic_identifier":"Test doc","metadata":{"team":"eng","n":3,"tags":["a",1,true],"x":null}}`

	t.Run("push, again, list, delete", func(t *testing.T) {
		push(c.admin, doc, p).want(t, 200, `{"document_id":"test_doc%2F1","already_existed":false}`)
		push(c.admin, doc, p).want(t, 200, `{"document_id":"test_doc%2F1","already_existed":true}`)
		push(c.curator, `{"sections":[{"text":"No id"}],"semantic_identifier":"Notes of 1 May","metadata":{}}`, p).
			want(t, 200, `{"document_id":"ingestion_api_Notes_of_1_May","already_existed":false}`)
		list := fmt.Sprintf(`[{"document_id":"ingestion_api_Notes_of_1_May","semantic_id":"Notes of 1 May","link":null,"cc_pair_id":%d},
			{"document_id":"test_doc%%2F1","semantic_id":"Test doc","link":"https://wiki.example.com/1","cc_pair_id":%[1]d}]`, p)
		c.do(c.admin, "GET", "/onyx-api/ingestion", nil).want(t, 200, list)
		c.do(c.curator, "GET", "/onyx-api/ingestion", nil).want(t, 200, list)
		c.do(c.other, "GET", "/onyx-api/ingestion", nil).want(t, 200, `[]`)
		c.do(c.admin, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200, list)
		c.do(c.other, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).
			want(t, 400, `{"detail":"CC Pair not found for current user permissions"}`)
		c.do(c.other, "DELETE", "/onyx-api/ingestion/test_doc%252F1", nil).want(t, 404, `{"detail":"Document not found"}`)
		c.do(c.admin, "DELETE", "/onyx-api/ingestion/test_doc%252F1", nil).want(t, 200, `null`)
		c.do(c.admin, "DELETE", "/onyx-api/ingestion/test_doc%252F1", nil).want(t, 404, `{"detail":"Document not found"}`)
		c.do(c.admin, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).
			want(t, 200, fmt.Sprintf(`[{"document_id":"ingestion_api_Notes_of_1_May","semantic_id":"Notes of 1 May","link":null,"cc_pair_id":%d}]`, p))
		if n := fxCount(c.audit("resource_type=cc_pair"), "document.ingest"); n != 2 {
			t.Errorf("%d document.ingest entries, want 2 (the unchanged push writes nothing)", n)
		}
	})

	t.Run("a document a connector brought is not the ingestion API's", func(t *testing.T) {
		w := c.worker(t, "ingestion-indexer")
		c.schedule(t, 2, 0)
		var l struct {
			Attempt struct {
				ID   int64 `json:"attempt_id"`
				Pair int64 `json:"cc_pair_id"`
			} `json:"attempt"`
		}
		for l.Attempt.Pair != q {
			c.do(w, "POST", "/worker/lease", `{}`).decode(t, &l)
		}
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", l.Attempt.ID), `{"documents":[{"id":"crawled","sections":[{"text":"x"}],
			"source":"web","semantic_identifier":"Crawled","metadata":{}}]}`).decode(t, new(any))
		c.do(c.admin, "DELETE", "/onyx-api/ingestion/crawled", nil).want(t, 400, `{"detail":"Document was not created via the ingestion API"}`)
	})

	t.Run("refusals", func(t *testing.T) {
		push(c.admin, doc, "null").want(t, 400,
			`{"detail":"cc_pair_id is required: Quarry has no default pair for pushed documents; name the pair they belong to"}`)
		push(c.admin, doc, 999).want(t, 400, `{"detail":"Connector-Credential Pair specified does not exist"}`)
		push(c.other, doc, p).want(t, 400, `{"detail":"Connector-Credential Pair specified does not exist"}`)
		// The curator of gA is a plain member of gB: it sees a pair of gB
		// but may not change it.
		gb := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "of B", quarry.AccessPrivate, c.gB)
		push(c.curator, doc, gb).want(t, 403, `{"detail":"Curators can only change what is shared with groups they curate"}`)
		push(c.admin, `{"sections":[{"type":"image","image_file_id":"f"}],"semantic_identifier":"img","metadata":{}}`, p).want(t, 400,
			`{"detail":"Section 0 is not a text section ({\"text\": …, \"link\": …}): Quarry keeps no files for image or tabular sections"}`)
		push(c.admin, `{"sections":[],"semantic_identifier":" ","metadata":{}}`, p).want(t, 400,
			`{"detail":"Document ingestion_api__ needs a semantic_identifier"}`)
		push(c.basic, doc, p).want(t, 403, fxNotCurator)
		c.do(user{}, "GET", "/onyx-api/ingestion", nil).want(t, 401, fxNotAuthed)
		c.do(c.admin, "GET", "/onyx-api/connector-docs/x", nil).want(t, 422, `{"detail":[`+fxIntParsing("cc_pair_id", "x")+`]}`)
	})

	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "ingestionDocument") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "POST", "", g) })
		}
	})
}

// TestOnyxIngestionAPICrud replays Onyx v4.6.1's
// tests/integration/tests/ingestion/test_ingestion_api.py
// (test_ingestion_api_crud): a file pair made from scratch, a document
// pushed through the ingestion API, found in the store and in the index
// (Onyx asks Vespa; Quarry's index is asked by a search), listed, deleted,
// then gone from both.
func TestOnyxIngestionAPICrud(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "Ingestion-API-Test", "file", "input_type", "load_state",
		"connector_specific_config", map[string]any{"file_locations": []string{}, "file_names": []string{}, "zip_metadata_file_id": nil})
	p := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "Ingestion-API-Test", quarry.AccessPublic)
	// CREATE
	c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":"test-doc-1","sections":[{"text":"Test document"}],
		"source":"file","semantic_identifier":"test-doc-1","metadata":{}},"cc_pair_id":%d}`, p)).
		want(t, 200, `{"document_id":"test-doc-1","already_existed":false}`)
	docs := fmt.Sprintf("/manage/admin/cc-pair/%d/documents", p)
	var page struct {
		Items []struct {
			ID               string `json:"document_id"`
			FromIngestionAPI bool   `json:"from_ingestion_api"`
		} `json:"items"`
		TotalItems int `json:"total_items"`
	}
	c.do(c.admin, "GET", docs, nil).decode(t, &page)
	if len(page.Items) != 1 || page.Items[0].ID != "test-doc-1" || !page.Items[0].FromIngestionAPI {
		t.Fatalf("the pair's documents %+v, want test-doc-1 from the ingestion API", page)
	}
	search := `{"search_query":"test document"}`
	if got := c.searchIDs(t, c.admin, search); len(got) != 1 || got[0] != "test-doc-1" {
		t.Fatalf("the index finds %v, want [test-doc-1]", got)
	}
	// LIST
	c.do(c.admin, "GET", "/onyx-api/ingestion", nil).want(t, 200, fmt.Sprintf(`[{"document_id":"test-doc-1","semantic_id":"test-doc-1","link":null,"cc_pair_id":%d}]`, p))
	// DELETE
	c.do(c.admin, "DELETE", "/onyx-api/ingestion/test-doc-1", nil).want(t, 200, `null`)
	page.Items = nil
	c.do(c.admin, "GET", docs, nil).decode(t, &page)
	if len(page.Items) != 0 || page.TotalItems != 0 {
		t.Fatalf("the pair's documents %+v after the delete, want none", page)
	}
	if got := c.searchIDs(t, c.admin, search); len(got) != 0 {
		t.Fatalf("the index still finds %v", got)
	}
}

// TestIngestionExternalAccess pushes documents with Onyx's external_access
// into a sync pair: each is found by the people its access names (by
// email, in any case) or by everyone when public, and by no one when it
// reports none; pushing it again with other access moves it.
func TestIngestionExternalAccess(t *testing.T) {
	c := newFxCast(t)
	storetest.ProveEmails(t, c.url) // The cast's keys stand for people whose emails are proven.
	conn := c.connector(c.admin, "synced", "file", "access_type", "sync")
	p := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "synced", quarry.AccessSync)
	push := func(id, access string, existed bool) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":%q,"semantic_identifier":%q,
			"sections":[{"text":"basalt columns"}],"metadata":{}%s},"cc_pair_id":%d}`, id, id, access, p)).
			want(t, 200, fmt.Sprintf(`{"document_id":%q,"already_existed":%t}`, id, existed))
	}
	access := func(public bool, emails ...string) string {
		b, _ := json.Marshal(map[string]any{"external_user_emails": append([]string{}, emails...),
			"external_user_group_ids": []string{"engineering"}, "is_public": public})
		return `,"external_access":` + string(b)
	}
	push("for-all", access(true), false)
	push("for-basic", access(false, strings.ToUpper(c.basic.email), c.basic.email), false)
	push("unreported", "", false)
	push("null-access", `,"external_access":null`, false)
	found := func(want map[string][]string) {
		t.Helper()
		for _, u := range []user{c.admin, c.basic, c.other} {
			got := c.searchIDs(t, u, `{"search_query":"basalt"}`)
			slices.Sort(got)
			if !slices.Equal(got, want[u.name]) {
				t.Errorf("%s finds %v, want %v", u.name, got, want[u.name])
			}
		}
	}
	found(map[string][]string{c.admin.name: {"for-all"}, c.basic.name: {"for-all", "for-basic"}, c.other.name: {"for-all"}})
	push("for-basic", access(false, c.other.email), true)
	found(map[string][]string{c.admin.name: {"for-all"}, c.basic.name: {"for-all"}, c.other.name: {"for-all", "for-basic"}})
}
