package api_test

import (
	"fmt"
	"testing"

	"github.com/quarryhq/quarry"
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
		list := `[{"document_id":"ingestion_api_Notes_of_1_May","semantic_id":"Notes of 1 May","link":null},
			{"document_id":"test_doc%2F1","semantic_id":"Test doc","link":"https://wiki.example.com/1"}]`
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
			want(t, 200, `[{"document_id":"ingestion_api_Notes_of_1_May","semantic_id":"Notes of 1 May","link":null}]`)
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
