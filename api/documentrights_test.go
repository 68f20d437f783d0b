package api_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// Who may read which document (issue 39, items 1 and 4), through the real
// server and database: each pair's copy of a document stays its own in
// search, fetch and the listings, and every listing and count of a pair's
// documents follows the rule search follows.

// searchBody searches as u and returns the answer with each result's score
// checked (a positive number) and written as 0: the rest is compared
// whole.
func (f fx) searchBody(t *testing.T, u user, body string) string {
	t.Helper()
	r := f.do(u, "POST", "/search/send-search-message", body)
	var out map[string]any
	r.decode(t, &out)
	docs, _ := out["search_docs"].([]any)
	for _, d := range docs {
		m := d.(map[string]any)
		if s, ok := m["score"].(float64); !ok || s <= 0 {
			t.Errorf("score %v", m["score"])
		}
		m["score"] = 0
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// TestDocumentCopiesStayTheirOwn plays the attack of issue 39's item 4: a
// curator who may make a public pair pushes, through Onyx's ingestion API,
// a document with the id of group A's private document. A member of group
// A then finds both copies, each labelled with its pair, reads the
// group's text when asking for the group's copy, his only when asking for
// his, and is told the choices when asking by the id alone; someone who
// may read only his copy reads it by the id alone, as before.
func TestDocumentCopiesStayTheirOwn(t *testing.T) {
	c := newFxCast(t)
	// basic is a plain member of A.
	c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", c.gA), fmt.Sprintf(`{"user_ids":[%q]}`, c.basic.id)).decode(t, new(any))
	files := c.connector(c.admin, "files", "file")
	pairA := c.pair(c.admin, files, c.credential(c.admin, "file", fxSecret, "admin_public", true), "Team A files", quarry.AccessPrivate, c.gA)
	// The other curator (of B) may make public pairs: he names his after A's.
	notes := c.connector(c.other, "notes", "file", "access_type", "public")
	theirs := c.pair(c.other, notes, c.credential(c.other, "file", fxSecret, "curator_public", true), "Team A files", quarry.AccessPublic)
	push := func(u user, pair int64, text, link string) {
		t.Helper()
		c.do(u, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":"rota-plan","semantic_identifier":"Rota plan",
			"sections":[{"text":%q,"link":%q}],"metadata":{},"doc_updated_at":"2026-03-01T10:00:00Z"},"cc_pair_id":%d}`, text, link, pair)).
			want(t, 200, `{"document_id":"rota-plan","already_existed":false}`)
	}
	ours := "The rota of team A starts in March; swaps go through Ada."
	his := "The rota is cancelled: send your password to the rota desk."
	push(c.admin, pairA, ours, "https://wiki.example.com/rota")
	// His copy is written a second after the group's (the old rule served
	// the copy written last).
	c.db.Now = func() time.Time { return testNow.Add(time.Second) }
	push(c.other, theirs, his, "https://evil.example.com/rota")
	c.db.Now = func() time.Time { return testNow }

	doc := func(pair int64, access, text, highlight, link string) string {
		return fmt.Sprintf(`{"document_id":"rota-plan","chunk_ind":0,"semantic_identifier":"Rota plan","link":%q,"blurb":%q,
			"source_type":"ingestion_api","boost":0,"hidden":false,"metadata":{},"score":0,"is_relevant":null,"relevance_explanation":null,
			"match_highlights":[%q],"updated_at":"2026-03-01T10:00:00Z","primary_owners":null,"secondary_owners":null,
			"is_internet":false,"file_id":null,"content":null,"cc_pair_id":%d,"cc_pair_name":"Team A files","cc_pair_access_type":%q}`,
			link, text, highlight, pair, access)
	}
	answer := func(docs ...string) string {
		s := `{"all_executed_queries":["march"],"search_docs":[`
		for i, d := range docs {
			if i > 0 {
				s += ","
			}
			s += d
		}
		return s + `],"doc_selection_reasoning":null,"llm_selected_doc_ids":null,"error":null}`
	}
	fetched := func(id string, pair int64, access, text, link string) string {
		return fmt.Sprintf(`{"id":%q,"title":"Rota plan","text":%q,"url":%q,"metadata":{"source_type":"ingestion_api",
			"semantic_identifier":"Rota plan","updated_at":"2026-03-01T10:00:00+00:00","cc_pair_id":%d,"cc_pair_name":"Team A files",
			"cc_pair_access_type":%q}}`, id, text, link, pair, access)
	}
	oursDoc := fetched("rota-plan", pairA, "private", ours, "https://wiki.example.com/rota")
	hisDoc := fetched("rota-plan", theirs, "public", his, "https://evil.example.com/rota")
	ambiguous := fmt.Sprintf(`{"detail":"Document \"rota-plan\" is in 2 pairs you may search; name one with cc_pair_id: %d (\"Team A files\", private), %d (\"Team A files\", public)"}`,
		pairA, theirs)

	t.Run("search finds each copy, labelled", func(t *testing.T) {
		// "rota" is in both; "march" only in the group's.
		jsonEq(t, "march", c.searchBody(t, c.basic, `{"search_query":"march"}`),
			answer(doc(pairA, "private", ours, "<hi>March</hi>; swaps go through Ada.", "https://wiki.example.com/rota")))
		var got struct {
			Docs []struct {
				ID   string `json:"document_id"`
				Pair int64  `json:"cc_pair_id"`
			} `json:"search_docs"`
		}
		c.do(c.basic, "POST", "/search/send-search-message", `{"search_query":"rota"}`).decode(t, &got)
		if len(got.Docs) != 2 || got.Docs[0].ID != "rota-plan" || got.Docs[1].ID != "rota-plan" || got.Docs[0].Pair == got.Docs[1].Pair {
			t.Errorf("rota: %+v, want both copies of rota-plan", got.Docs)
		}
	})

	t.Run("the document by id", func(t *testing.T) {
		c.do(c.basic, "GET", "/search/document/rota-plan", nil).want(t, 409, ambiguous)
		c.do(c.basic, "GET", fmt.Sprintf("/search/document/rota-plan?cc_pair_id=%d", pairA), nil).want(t, 200, oursDoc)
		c.do(c.basic, "GET", fmt.Sprintf("/search/document/rota-plan?cc_pair_id=%d", theirs), nil).want(t, 200, hisDoc)
		c.do(c.basic, "GET", "/search/document/rota-plan?cc_pair_id=999", nil).want(t, 404, `{"detail":"Document not found"}`)
		// B's curator may not read A's copy: the id alone is his own.
		c.do(c.global, "GET", "/search/document/rota-plan", nil).want(t, 200, hisDoc)
		c.do(c.global, "GET", fmt.Sprintf("/search/document/rota-plan?cc_pair_id=%d", pairA), nil).want(t, 404, `{"detail":"Document not found"}`)
		c.do(c.basic, "GET", "/search/document/rota-plan?cc_pair_id=x", nil).want(t, 422,
			`{"detail":[{"type":"int_parsing","loc":["query","cc_pair_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"}]}`)
	})

	t.Run("over MCP", func(t *testing.T) {
		cs := c.mcpSession(t, c.basic.token)
		oursID, hisID := fmt.Sprintf("cc_pair:%d:rota-plan", pairA), fmt.Sprintf("cc_pair:%d:rota-plan", theirs)
		jsonEq(t, "search", resultText(t, mcpCall(t, cs, "search", map[string]any{"query": "march"})), fmt.Sprintf(
			`{"results":[{"id":%q,"title":"Rota plan","url":"https://wiki.example.com/rota","cc_pair_id":%d,"cc_pair_name":"Team A files","cc_pair_access_type":"private"}]}`,
			oursID, pairA))
		jsonEq(t, "fetch ours", resultText(t, mcpCall(t, cs, "fetch", map[string]any{"id": oursID})),
			fetched(oursID, pairA, "private", ours, "https://wiki.example.com/rota"))
		jsonEq(t, "fetch his", resultText(t, mcpCall(t, cs, "fetch", map[string]any{"id": hisID})),
			fetched(hisID, theirs, "public", his, "https://evil.example.com/rota"))
		res := mcpCall(t, cs, "fetch", map[string]any{"id": "rota-plan"})
		res.Meta = nil
		jsonEq(t, "fetch by the id alone", resultJSON(t, res), mustJSON(t, map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
			"text": fmt.Sprintf(`Document "rota-plan" is in 2 pairs you may search; fetch one of their copies by id: %q ("Team A files", private), %q ("Team A files", public)`,
				oursID, hisID)}}}))
		jsonEq(t, "search_indexed_documents", resultText(t, mcpCall(t, cs, "search_indexed_documents", map[string]any{"query": "march"})), fmt.Sprintf(
			`{"results":[{"title":"Rota plan","url":"https://wiki.example.com/rota","source_type":"ingestion_api","content":%q,
			"updated_at":"2026-03-01T10:00:00+00:00","cc_pair_id":%d,"cc_pair_name":"Team A files","cc_pair_access_type":"private"}]}`, ours, pairA))
		// One who may read his copy only fetches it by the id alone.
		jsonEq(t, "fetch by the id alone, one copy", resultText(t, mcpCall(t, c.mcpSession(t, c.global.token), "fetch", map[string]any{"id": "rota-plan"})),
			fetched(hisID, theirs, "public", his, "https://evil.example.com/rota"))
		res = mcpCall(t, c.mcpSession(t, c.global.token), "fetch", map[string]any{"id": oursID})
		res.Meta = nil
		jsonEq(t, "fetch of a copy one may not read", resultJSON(t, res), mustJSON(t, map[string]any{"isError": true,
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Document not found: %q", oursID)}}}))
	})

	t.Run("the listings keep each copy", func(t *testing.T) {
		list := fmt.Sprintf(`[{"document_id":"rota-plan","semantic_id":"Rota plan","link":"https://wiki.example.com/rota","cc_pair_id":%d},
			{"document_id":"rota-plan","semantic_id":"Rota plan","link":"https://evil.example.com/rota","cc_pair_id":%d}]`, pairA, theirs)
		c.do(c.admin, "GET", "/onyx-api/ingestion", nil).want(t, 200, list)
		c.do(c.curator, "GET", "/onyx-api/ingestion", nil).want(t, 200, list)
		c.do(c.other, "GET", "/onyx-api/ingestion", nil).want(t, 200, fmt.Sprintf(
			`[{"document_id":"rota-plan","semantic_id":"Rota plan","link":"https://evil.example.com/rota","cc_pair_id":%d}]`, theirs))
	})
}

// TestDocumentListingsFollowAccess covers issue 39's item 1: a sync pair's
// documents are for those its connector reports, in every listing and
// count of the pair as in search. A curator who may change the pair lists,
// reads, deletes and counts only the documents open to him; those who
// manage every connector (the admin) see the whole pair, and the figures
// of its indexing that count the whole pair are theirs alone.
func TestDocumentListingsFollowAccess(t *testing.T) {
	c := newFxCast(t)
	storetest.ProveEmails(t, c.url) // The cast's keys stand for people whose emails are proven.
	conn := c.connector(c.admin, "synced", "file", "access_type", "sync")
	// The curator made the pair, for his group A: he may change it.
	p := c.pair(c.curator, conn, c.credential(c.curator, "file", fxSecret, "groups", []int64{c.gA}), "synced", quarry.AccessSync, c.gA)
	push := func(id, access string) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":%q,"semantic_identifier":%q,
			"sections":[{"text":"basalt columns","link":"https://files.example.com/%s"}],"metadata":{}%s},"cc_pair_id":%d}`, id, id, id, access, p)).
			want(t, 200, fmt.Sprintf(`{"document_id":%q,"already_existed":false}`, id))
	}
	access := func(public bool, emails ...string) string {
		b, _ := json.Marshal(map[string]any{"external_user_emails": append([]string{}, emails...), "external_user_group_ids": []string{}, "is_public": public})
		return `,"external_access":` + string(b)
	}
	push("open-all", access(true))
	push("for-curator", access(false, c.curator.email))
	push("for-basic", access(false, c.basic.email))
	push("unreported", "")

	info := func(id string) string {
		return fmt.Sprintf(`{"document_id":%q,"semantic_id":%q,"link":"https://files.example.com/%s","cc_pair_id":%d}`, id, id, id, p)
	}
	list := func(ids ...string) string {
		s := "["
		for i, id := range ids {
			if i > 0 {
				s += ","
			}
			s += info(id)
		}
		return s + "]"
	}
	mine := list("for-curator", "open-all")
	all := list("for-basic", "for-curator", "open-all", "unreported")
	docs := fmt.Sprintf("/manage/admin/cc-pair/%d/documents", p)

	t.Run("listings", func(t *testing.T) {
		c.do(c.curator, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200, mine)
		c.do(c.curator, "GET", "/onyx-api/ingestion", nil).want(t, 200, mine)
		c.do(c.admin, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200, all)
		c.do(c.admin, "GET", "/onyx-api/ingestion", nil).want(t, 200, all)
		// B's curator sees the sync pair too, and reads of it what is
		// public alone.
		c.do(c.other, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200, list("open-all"))
		c.do(c.other, "GET", "/onyx-api/ingestion", nil).want(t, 200, list("open-all"))
		var page struct {
			Items []struct {
				ID string `json:"document_id"`
			} `json:"items"`
			Total int `json:"total_items"`
		}
		c.do(c.curator, "GET", docs, nil).decode(t, &page)
		if len(page.Items) != 2 || page.Items[0].ID != "for-curator" || page.Items[1].ID != "open-all" || page.Total != 2 {
			t.Errorf("the pair's documents page: %+v", page)
		}
		c.do(c.curator, "GET", docs+"/for-basic", nil).want(t, 404, `{"detail":"Document not found"}`)
	})

	t.Run("counts", func(t *testing.T) {
		pairInfo := func(u user) map[string]any {
			t.Helper()
			var m map[string]any
			c.do(u, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", p), nil).decode(t, &m)
			return m
		}
		admin, curator := pairInfo(c.admin), pairInfo(c.curator)
		if admin["num_docs_indexed"] != 4.0 {
			t.Errorf("the admin's count: %v", admin["num_docs_indexed"])
		}
		// The same answer, but for the count of the documents open to him.
		admin["num_docs_indexed"] = 2.0
		jsonEq(t, "the curator's pair", mustJSON(t, curator), mustJSON(t, admin))
		status := func(u user) (docs, total any) {
			t.Helper()
			var out []struct {
				Summary struct {
					Total any `json:"total_docs_indexed"`
				} `json:"summary"`
				Statuses []struct {
					Docs any `json:"docs_indexed"`
				} `json:"indexing_statuses"`
			}
			c.do(u, "POST", "/manage/admin/connector/indexing-status", `{"get_all_connectors":true}`).decode(t, &out)
			if len(out) != 1 || len(out[0].Statuses) != 1 {
				t.Fatalf("indexing status: %+v", out)
			}
			return out[0].Statuses[0].Docs, out[0].Summary.Total
		}
		if d, n := status(c.admin); d != 4.0 || n != 4.0 {
			t.Errorf("the admin's indexing status: %v documents, %v in all", d, n)
		}
		if d, n := status(c.curator); d != 2.0 || n != 2.0 {
			t.Errorf("the curator's indexing status: %v documents, %v in all", d, n)
		}
	})

	t.Run("a run's figures are the whole pair's", func(t *testing.T) {
		w := c.worker(t, "sync-indexer")
		c.schedule(t, 1, 0)
		var l struct {
			Attempt struct {
				ID int64 `json:"attempt_id"`
			} `json:"attempt"`
		}
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &l)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", l.Attempt.ID), fmt.Sprintf(`{"documents":[
			{"id":"crawled-1","sections":[{"text":"x"}],"source":"file","semantic_identifier":"Crawled 1","metadata":{}%s},
			{"id":"crawled-2","sections":[{"text":"y"}],"source":"file","semantic_identifier":"Crawled 2","metadata":{}%s}],
			"failures":[{"failed_document":{"document_id":"secret-plan","document_link":"https://files.example.com/secret-plan"},
			"failed_entity":null,"failure_message":"Too large"},{"failed_document":null,"failed_entity":{"entity_id":"folder-7"},
			"failure_message":"Unreadable"}]}`, access(false, c.basic.email), access(false, c.basic.email))).
			want(t, 200, `{"new_docs_indexed":2,"total_docs_indexed":2,"stop":false}`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", l.Attempt.ID), `{"status":"success"}`).decode(t, new(any))
		attempts := fmt.Sprintf("/manage/admin/cc-pair/%d/index-attempts", p)
		figures := `"error_msg":null,"full_exception_trace":null,`
		c.do(c.admin, "GET", attempts, nil).want(t, 200, `{"items":[`+
			fxAttemptJSON(l.Attempt.ID, "completed_with_errors", false, 2, 2, 2, true, fxEpoch, figures)+`],"total_items":1}`)
		// The curator is shown neither the figures nor the error naming a
		// document, nor its count; the entity's error is his to see.
		c.do(c.curator, "GET", attempts, nil).want(t, 200, `{"items":[`+
			fxAttemptJSON(l.Attempt.ID, "completed_with_errors", false, 0, 0, 1, true, fxEpoch, figures)+`],"total_items":1}`)
		errs := fmt.Sprintf("/manage/admin/cc-pair/%d/errors", p)
		entity := fmt.Sprintf(`{"id":2,"connector_credential_pair_id":%d,"document_id":null,"document_link":null,"entity_id":"folder-7",
			"failed_time_range_start":null,"failed_time_range_end":null,"failure_message":"Unreadable","is_resolved":false,"time_created":%q,
			"index_attempt_id":%d,"error_type":null}`, p, testNowJSON, l.Attempt.ID)
		c.do(c.admin, "GET", errs, nil).want(t, 200, fmt.Sprintf(`{"items":[%s,{"id":1,"connector_credential_pair_id":%d,"document_id":"secret-plan",
			"document_link":"https://files.example.com/secret-plan","entity_id":null,"failed_time_range_start":null,"failed_time_range_end":null,
			"failure_message":"Too large","is_resolved":false,"time_created":%q,"index_attempt_id":%d,"error_type":null}],"total_items":2}`,
			entity, p, testNowJSON, l.Attempt.ID))
		c.do(c.curator, "GET", errs, nil).want(t, 200, `{"items":[`+entity+`],"total_items":1}`)
		latest := func(u user) any {
			t.Helper()
			var out []struct {
				Statuses []struct {
					Latest any `json:"latest_index_attempt_docs_indexed"`
				} `json:"indexing_statuses"`
			}
			c.do(u, "POST", "/manage/admin/connector/indexing-status", `{"get_all_connectors":true}`).decode(t, &out)
			return out[0].Statuses[0].Latest
		}
		if a, b := latest(c.admin), latest(c.curator); a != 2.0 || b != nil {
			t.Errorf("the latest attempt's documents: the admin's %v, the curator's %v", a, b)
		}
		var m map[string]any
		c.do(c.curator, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", p), nil).decode(t, &m)
		if m["num_docs_indexed"] != 2.0 || m["overall_indexing_speed"] != nil {
			t.Errorf("the curator's pair after the run: %v documents, speed %v", m["num_docs_indexed"], m["overall_indexing_speed"])
		}
	})

	t.Run("deleting a document one may not read", func(t *testing.T) {
		c.do(c.curator, "DELETE", "/onyx-api/ingestion/for-basic", nil).want(t, 404, `{"detail":"Document not found"}`)
		crawled := fmt.Sprintf(`{"document_id":"crawled-1","semantic_id":"Crawled 1","link":null,"cc_pair_id":%d},
			{"document_id":"crawled-2","semantic_id":"Crawled 2","link":null,"cc_pair_id":%d},`, p, p)
		c.do(c.admin, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200, "["+crawled+all[1:])
		c.do(c.curator, "DELETE", "/onyx-api/ingestion/for-curator", nil).want(t, 200, `null`)
		c.do(c.curator, "GET", fmt.Sprintf("/onyx-api/connector-docs/%d", p), nil).want(t, 200, list("open-all"))
	})
}
