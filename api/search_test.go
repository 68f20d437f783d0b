package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// searchIDs searches q as u and returns the ids of the documents found, in
// order (a refusal fails the test).
func (f fx) searchIDs(t *testing.T, u user, body string) []string {
	t.Helper()
	var out struct {
		SearchDocs []struct {
			DocumentID string `json:"document_id"`
		} `json:"search_docs"`
	}
	f.do(u, "POST", "/search/send-search-message", body).decode(t, &out)
	ids := []string{}
	for _, d := range out.SearchDocs {
		ids = append(ids, d.DocumentID)
	}
	return ids
}

// TestSearch covers Onyx's search API through the real server and
// database, with documents pushed through Onyx's ingestion API: the whole
// answer, streaming, filters, and the rights of every kind of caller over
// public and private pairs, with changes between searches.
func TestSearch(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "pushed", "file", "access_type", "public")
	adminCred := c.credential(c.admin, "file", fxSecret, "admin_public", true)
	pub := c.pair(c.admin, conn, adminCred, "public", quarry.AccessPublic)
	// The pairs of A and B hold their curators' credentials: the admin
	// owns neither.
	privA := c.pair(c.curator, conn, c.credential(c.curator, "file", fxSecret, "groups", []int64{c.gA}), "of A", quarry.AccessPrivate, c.gA)
	privB := c.pair(c.other, conn, c.credential(c.other, "file", fxSecret, "groups", []int64{c.gB}), "of B", quarry.AccessPrivate, c.gB)
	push := func(pair int64, id, title, text string, extra string) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":%q,"semantic_identifier":%q,
			"sections":[{"text":%q,"link":"https://docs.example.com/%s"}],"metadata":{"team":"ops"},
			"doc_updated_at":"2026-01-02T03:04:05Z"%s},"cc_pair_id":%d}`, id, title, text, id, extra, pair)).decode(t, new(any))
	}
	push(pub, "granite", "Granite quarry report", "The quarry produced granite blocks in May. Blocks were shipped by rail.", `,"source":"web"`)
	push(pub, "shipping", "Shipping schedule", "Rail shipping of blocks from the quarry happens weekly.", "")
	push(privA, "safety", "Safety rules of group A", "Hard hats are required in the quarry at all times.", "")
	push(privA, "shipping", "Shipping schedule", "Rail shipping of blocks from the quarry happens weekly.", "")
	push(privB, "budget", "Quarry budget", "The budget of the quarry for next year.", "")

	t.Run("the index's upkeep, in the metrics", func(t *testing.T) {
		metrics := func() string { return string(c.do(user{}, "GET", "/metrics", nil).body) }
		for _, want := range []string{"quarry_search_pending_chunks 5", "quarry_search_segments 0"} {
			if m := metrics(); !strings.Contains(m, "\n"+want+"\n") {
				t.Errorf("before the upkeep, /metrics lacks %q", want)
			}
		}
		if err := c.db.SettleIndex(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"quarry_search_pending_chunks 0", "quarry_search_segments 1"} {
			if m := metrics(); !strings.Contains(m, "\n"+want+"\n") {
				t.Errorf("after the upkeep, /metrics lacks %q", want)
			}
		}
		// The segment's blocks of a search's terms, read once, then kept:
		// two terms, missed then found.
		for range 2 {
			c.do(c.admin, "POST", "/search/send-search-message", `{"search_query":"granite rail","num_hits":1}`).decode(t, new(any))
		}
		m := metrics()
		for _, want := range []string{`quarry_search_cache_lookups_total{result="miss"} 2`, `quarry_search_cache_lookups_total{result="hit"} 2`} {
			if !strings.Contains(m, "\n"+want+"\n") {
				t.Errorf("after two searches, /metrics lacks %q", want)
			}
		}
		if strings.Contains(m, "\nquarry_search_cache_bytes 0\n") || !strings.Contains(m, "\nquarry_search_cache_bytes ") {
			t.Error("after two searches, /metrics has no block kept in quarry_search_cache_bytes")
		}
	})

	t.Run("the whole answer", func(t *testing.T) {
		c.do(c.curator, "POST", "/search/send-search-message", `{"search_query":"granite quarries","num_hits":1,"include_content":true}`).want(t, 200,
			`{"all_executed_queries":["granite quarries"],"search_docs":[{"document_id":"granite","chunk_ind":0,
			"semantic_identifier":"Granite quarry report","link":"https://docs.example.com/granite",
			"blurb":"The quarry produced granite blocks in May. Blocks were shipped by rail.","source_type":"web","boost":0,"hidden":false,
			"metadata":{"team":"ops"},"score":`+scoreOf(t, c.fx, c.curator, "granite quarries")+`,"is_relevant":null,"relevance_explanation":null,
			"match_highlights":["<hi>quarry</hi> produced <hi>granite</hi> blocks in May. Blocks were shipped by rail."],
			"updated_at":"2026-01-02T03:04:05Z","primary_owners":null,"secondary_owners":null,"is_internet":false,"file_id":null,
			"content":"The quarry produced granite blocks in May. Blocks were shipped by rail.",
			"cc_pair_id":`+fmt.Sprint(pub)+`,"cc_pair_name":"public","cc_pair_access_type":"public"}],
			"doc_selection_reasoning":null,"llm_selected_doc_ids":null,"error":null}`)
	})

	t.Run("streamed as Onyx streams it", func(t *testing.T) {
		r := c.do(c.other, "POST", "/search/send-search-message", `{"search_query":"héllo granite","stream":true,"num_docs_fed_to_llm_selection":3}`)
		if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
			t.Fatalf("%d %s", r.status, r.header.Get("Content-Type"))
		}
		lines := strings.Split(string(r.body), "\n")
		if len(lines) != 4 || lines[3] != "" {
			t.Fatalf("want 3 lines, got %q", r.body)
		}
		if want := `{"type": "search_queries", "all_executed_queries": ["h\u00e9llo granite"]}`; lines[0] != want {
			t.Errorf("first packet %s, want %s", lines[0], want)
		}
		if !strings.HasPrefix(lines[1], `{"type": "search_docs", "search_docs": [{"document_id": "granite", "chunk_ind": 0, `) ||
			!strings.Contains(lines[1], `"updated_at": "2026-01-02T03:04:05+00:00"`) || !strings.Contains(lines[1], `"content": null`) {
			t.Errorf("second packet %s", lines[1])
		}
		if want := `{"type": "llm_selected_docs", "llm_selected_doc_ids": null}`; lines[2] != want {
			t.Errorf("third packet %s, want %s", lines[2], want)
		}
	})

	t.Run("rights", func(t *testing.T) {
		q := `{"search_query":"quarry"}`
		for _, tc := range []struct {
			name string
			u    user
			want []string
		}{
			{"admin: being admin opens nothing more", c.admin, []string{"granite", "shipping"}},
			// shipping twice: the public pair's copy and A's, each its own.
			{"curator of A, member of B", c.curator, []string{"budget", "granite", "safety", "shipping", "shipping"}},
			{"curator of B", c.other, []string{"budget", "granite", "shipping"}},
			{"global curator, member of B", c.global, []string{"budget", "granite", "shipping"}},
			{"basic", c.basic, []string{"granite", "shipping"}},
		} {
			got := c.searchIDs(t, tc.u, q)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
		c.do(c.limited, "POST", "/search/send-search-message", q).want(t, 403,
			`{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"You do not have the required permissions for this action."}`)
		c.do(user{}, "POST", "/search/send-search-message", q).want(t, 401, fxNotAuthed)
	})

	t.Run("filters repeated or too many", func(t *testing.T) {
		// A source named 100 times (the list's maximum) is one source; a
		// list of 101 is FastAPI's 422, not a statement of 101 parameters
		// nor a 500; so are 101 tags, even the same one.
		sources := strings.Repeat(`"web",`, 100)
		body := `{"search_query":"granite","filters":{"source_type":[` + sources[:len(sources)-1] + `]}}`
		if r := c.do(c.admin, "POST", "/search/send-search-message", body); r.status != 200 {
			t.Errorf("a source repeated: %d %s", r.status, r.body)
		}
		body = `{"search_query":"granite","filters":{"source_type":[` + sources + `"web"]}}`
		c.do(c.admin, "POST", "/search/send-search-message", body).want(t, 422, `{"detail":[{"type":"too_long","loc":["body","filters","source_type"],
			"msg":"List should have at most 100 items after validation, not 101","input":[`+sources+`"web"],
			"ctx":{"field_type":"List","max_length":100,"actual_length":101}}]}`)
		var tags []string
		for i := range 101 {
			tags = append(tags, fmt.Sprintf(`{"tag_key":"k","tag_value":"%d"}`, i))
		}
		c.do(c.admin, "POST", "/search/send-search-message", `{"search_query":"granite","filters":{"tags":[`+strings.Join(tags, ",")+`]}}`).
			want(t, 422, `{"detail":[{"type":"too_long","loc":["body","filters","tags"],"msg":"List should have at most 100 items after validation, not 101",
				"input":[`+strings.Join(tags, ",")+`],"ctx":{"field_type":"List","max_length":100,"actual_length":101}}]}`)
		tags = tags[:1]
		for range 99 {
			tags = append(tags, tags[0])
		}
		if r := c.do(c.admin, "POST", "/search/send-search-message", `{"search_query":"granite","filters":{"tags":[`+strings.Join(tags, ",")+`]}}`); r.status != 200 {
			t.Errorf("a tag repeated: %d %s", r.status, r.body)
		}
	})

	t.Run("changes show on the next search", func(t *testing.T) {
		q := `{"search_query":"hard hats"}`
		if got := c.searchIDs(t, c.other, q); len(got) != 0 {
			t.Fatalf("before: %v", got)
		}
		// other joins A.
		c.do(c.admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", c.gA), map[string]any{
			"user_ids": []string{c.curator.id, c.other.id}, "cc_pair_ids": []int64{privA}}).decode(t, new(any))
		if got := c.searchIDs(t, c.other, q); !slices.Equal(got, []string{"safety"}) {
			t.Errorf("after joining A: %v", got)
		}
		// A's pair paused, then resumed.
		c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", privA), `{"status":"PAUSED"}`).decode(t, new(any))
		if got := c.searchIDs(t, c.other, q); len(got) != 0 {
			t.Errorf("paused: %v", got)
		}
		c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", privA), `{"status":"ACTIVE"}`).decode(t, new(any))
		if got := c.searchIDs(t, c.other, q); !slices.Equal(got, []string{"safety"}) {
			t.Errorf("resumed: %v", got)
		}
		// other leaves A.
		c.do(c.admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", c.gA), map[string]any{
			"user_ids": []string{c.curator.id}, "cc_pair_ids": []int64{privA}}).decode(t, new(any))
		if got := c.searchIDs(t, c.other, q); len(got) != 0 {
			t.Errorf("after leaving A: %v", got)
		}
		// B's members but its curator leave it: the owner of the pair's
		// credential still sees its documents.
		c.do(c.admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", c.gB), map[string]any{
			"user_ids": []string{}, "cc_pair_ids": []int64{privB}}).decode(t, new(any))
		if got := c.searchIDs(t, c.other, `{"search_query":"budget"}`); !slices.Equal(got, []string{"budget"}) {
			t.Errorf("the credential's owner: %v", got)
		}
		if got := c.searchIDs(t, c.global, `{"search_query":"budget"}`); len(got) != 0 {
			t.Errorf("after leaving B: %v", got)
		}
		// The pushed document deleted.
		c.do(c.admin, "DELETE", "/onyx-api/ingestion/budget", nil).want(t, 200, `null`)
		if got := c.searchIDs(t, c.other, `{"search_query":"budget"}`); len(got) != 0 {
			t.Errorf("after deletion: %v", got)
		}
	})

	t.Run("a change on one replica shows on the next search on another", func(t *testing.T) {
		r := fx{c.replica()}
		q := `{"search_query":"hard hats"}`
		if got := r.searchIDs(t, c.global, q); len(got) != 0 {
			t.Fatalf("before: %v", got)
		}
		c.do(c.admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", c.gA), map[string]any{
			"user_ids": []string{c.curator.id, c.global.id}, "cc_pair_ids": []int64{privA}}).decode(t, new(any))
		if got := r.searchIDs(t, c.global, q); !slices.Equal(got, []string{"safety"}) {
			t.Errorf("on the replica after joining A: %v", got)
		}
		c.do(c.admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", c.gA), map[string]any{
			"user_ids": []string{c.curator.id}, "cc_pair_ids": []int64{privA}}).decode(t, new(any))
		if got := r.searchIDs(t, c.global, q); len(got) != 0 {
			t.Errorf("on the replica after leaving A: %v", got)
		}
	})

	t.Run("filters, phrases and prefixes", func(t *testing.T) {
		for _, tc := range []struct {
			body string
			want []string
		}{
			{`{"search_query":"quarry","filters":{"source_type":["web"]}}`, []string{"granite"}},
			{`{"search_query":"quarry","filters":{"source_type":["ingestion_api"],"tags":[{"tag_key":"team","tag_value":"ops"}]}}`, []string{"shipping"}},
			{`{"search_query":"quarry","filters":{"tags":[{"tag_key":"team","tag_value":"dev"}]}}`, []string{}},
			{`{"search_query":"quarry","filters":{"updated_at_range":{"start":"2026-02-01T00:00:00Z"}}}`, []string{}},
			{`{"search_query":"quarry","filters":{"time_cutoff":"2025-12-01T00:00:00"}}`, []string{"granite", "shipping"}},
			{`{"search_query":"\"blocks rail\""}`, []string{"granite", "shipping"}},           // No phrase: its words.
			{`{"search_query":"granite 6\" blocks weekly"}`, []string{"granite", "shipping"}}, // An unclosed quote is punctuation.
			{`{"search_query":"\"blocks weekly"}`, []string{"granite", "shipping"}},
			{`{"search_query":"gran"}`, []string{"granite"}},
			{`{"search_query":"gran "}`, []string{}},
			{`{"search_query":"the of and"}`, []string{}},
			{`{"search_query":"quarry","num_hits":0}`, []string{}},
		} {
			got := c.searchIDs(t, c.admin, tc.body)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.body, got, tc.want)
			}
		}
	})

	t.Run("phrases first, then their words", func(t *testing.T) {
		for _, tc := range []struct {
			body string
			want []string
		}{
			{`{"search_query":"\"rail shipped\""}`, []string{"shipping", "granite"}}, // Both stem to "rail ship".
			{`{"search_query":"\"shipped by rail\""}`, []string{"granite", "shipping"}},
			{`{"search_query":"\"shipped by rail\"","num_hits":1}`, []string{"granite"}},
			{`{"search_query":"\"produced granite\" weekly"}`, []string{"granite", "shipping"}},
		} {
			if got := c.searchIDs(t, c.admin, tc.body); !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.body, got, tc.want)
			}
		}
	})

	t.Run("rights are filtered before the cut", func(t *testing.T) {
		// Thirty public documents rank above the ten of A that curator
		// may see: it still gets its ten.
		hidden := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "hidden", quarry.AccessPrivate, c.gC)
		for i := range 30 {
			push(hidden, fmt.Sprintf("loud-%d", i), "Feldspar feldspar feldspar", "feldspar feldspar feldspar", "")
		}
		for i := range 12 {
			push(privA, fmt.Sprintf("quiet-%d", i), fmt.Sprintf("Note %d", i), "a long note that mentions feldspar once among many other words", "")
		}
		got := c.searchIDs(t, c.curator, `{"search_query":"feldspar","num_hits":10}`)
		if len(got) != 10 || !strings.HasPrefix(got[0], "quiet-") {
			t.Errorf("curator got %v, want ten of A's", got)
		}
	})

	t.Run("golden 422 bodies", func(t *testing.T) {
		for _, g := range fxGoldens(t, "sendSearchQuery") {
			t.Run(g.Name, func(t *testing.T) { c.replay(t, c.admin, "POST", "", g) })
		}
	})
}

// scoreOf returns the score of the first result of q for u, as its JSON.
func scoreOf(t *testing.T, f fx, u user, q string) string {
	t.Helper()
	var out struct {
		SearchDocs []struct {
			Score float64 `json:"score"`
		} `json:"search_docs"`
	}
	f.do(u, "POST", "/search/send-search-message", fmt.Sprintf(`{"search_query":%q}`, q)).decode(t, &out)
	if len(out.SearchDocs) == 0 {
		t.Fatal("no result")
	}
	return fmt.Sprint(out.SearchDocs[0].Score)
}

// TestSearchTokens covers the callers beside API keys: people signed in,
// their personal access tokens (scoped to read:search, or to chat only),
// and a person deactivated between searches.
func TestSearchTokens(t *testing.T) {
	e := newEnv(t, withLocalAccounts)
	ann := e.person("ann@example.com") // The first person: an admin.
	bob := e.person("bob@example.com")
	f := fx{e}
	conn := f.connector(ann, "pushed", "file", "access_type", "public")
	pub := f.pair(ann, conn, f.credential(ann, "file", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	e.do(ann, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":"obsidian","semantic_identifier":"Obsidian",
		"sections":[{"text":"Volcanic glass"}],"metadata":{}},"cc_pair_id":%d}`, pub)).decode(t, new(any))
	q := `{"search_query":"volcanic"}`
	_, searchTok := e.makePAT(t, bob, `{"name":"search","scopes":["read:search"]}`)
	_, chatTok := e.makePAT(t, bob, `{"name":"chat","scopes":["read:chat"]}`)
	for _, u := range []user{bob, {token: searchTok}} {
		if got := f.searchIDs(t, u, q); !slices.Equal(got, []string{"obsidian"}) {
			t.Errorf("%v", got)
		}
	}
	e.do(user{token: chatTok}, "POST", "/search/send-search-message", q).want(t, 403,
		`{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"You do not have the required permissions for this action."}`)
	e.do(ann, "PATCH", "/manage/admin/deactivate-user", `{"user_email":"bob@example.com"}`).decode(t, new(any))
	if r := e.do(user{token: searchTok}, "POST", "/search/send-search-message", q); r.status != 403 && r.status != 401 {
		t.Errorf("a deactivated person's token: %d %s", r.status, r.body)
	}
}
