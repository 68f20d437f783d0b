package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// TestSearchAPI covers Onyx v4.6.1's POST /search through the real server
// and database, with documents pushed through the ingestion API: the whole
// answer (the first 10 documents, each cited by its rank), the filters
// (document sets in TestDocumentSetSearch), the rights, Onyx's 404s for personas and LLM providers, and FastAPI's
// 422s.
func TestSearchAPI(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "pushed", "file", "access_type", "public")
	pub := c.pair(c.admin, conn, c.credential(c.admin, "file", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	privA := c.pair(c.curator, conn, c.credential(c.curator, "file", fxSecret, "groups", []int64{c.gA}), "of A", quarry.AccessPrivate, c.gA)
	push := func(pair int64, id, title, text, extra string) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":{"id":%q,"semantic_identifier":%q,
			"sections":[{"text":%q,"link":"https://docs.example.com/%s"}],"metadata":{"team":"ops"}%s},"cc_pair_id":%d}`,
			id, title, text, id, extra, pair)).decode(t, new(any))
	}
	push(pub, "granite", "Granite quarry report", "The quarry produced granite granite blocks.", `,"source":"web","doc_updated_at":"2026-01-02T03:04:05.120000Z"`)
	push(pub, "shipping", "Shipping", "Rail shipping of granite from the quarry.", `,"doc_updated_at":"2026-03-01T00:00:00Z"`)
	push(privA, "safety", "Safety rules", "Hard hats in the granite pit.", `,"doc_updated_at":"2026-03-01T00:00:00Z"`)

	granite := func(n int) string {
		return fmt.Sprintf(`{"citation_id":%d,"title":"Granite quarry report","content":"The quarry produced granite granite blocks.",`+
			`"link":"https://docs.example.com/granite","source_type":"web","updated_at":"2026-01-02T03:04:05.120000+00:00"}`, n)
	}
	shipping := func(n int) string {
		return fmt.Sprintf(`{"citation_id":%d,"title":"Shipping","content":"Rail shipping of granite from the quarry.",`+
			`"link":"https://docs.example.com/shipping","source_type":"ingestion_api","updated_at":"2026-03-01T00:00:00+00:00"}`, n)
	}
	safety := func(n int) string {
		return fmt.Sprintf(`{"citation_id":%d,"title":"Safety rules","content":"Hard hats in the granite pit.",`+
			`"link":"https://docs.example.com/safety","source_type":"ingestion_api","updated_at":"2026-03-01T00:00:00+00:00"}`, n)
	}
	for _, tc := range []struct {
		name string
		u    user
		body string
		want string
	}{
		{"onyx's request", c.basic, `{"query":"granite quarry"}`, `{"results":[` + granite(1) + `,` + shipping(2) + `]}`},
		{"the curator of A sees A's", c.curator, `{"query":"granite pit"}`, `{"results":[` + safety(1) + `,` + granite(2) + `,` + shipping(3) + `]}`},
		{"being admin opens nothing more", c.admin, `{"query":"pit"}`, `{"results":[]}`},
		{"sources", c.curator, `{"query":"granite","sources":["ingestion_api"]}`, `{"results":[` + shipping(1) + `,` + safety(2) + `]}`},
		{"time_cutoff", c.basic, `{"query":"granite","time_cutoff":"2026-02-01T00:00:00"}`, `{"results":[` + shipping(1) + `]}`},
		{"tags", c.basic, `{"query":"granite","tags":[{"tag_key":"team","tag_value":"ops"}]}`, `{"results":[` + granite(1) + `,` + shipping(2) + `]}`},
		{"other tags", c.basic, `{"query":"granite","tags":[{"tag_key":"team","tag_value":"sales"}]}`, `{"results":[]}`},
		{"no document set", c.basic, `{"query":"granite quarry","document_sets":[],"skip_query_expansion":true,
			"message_history":[{"message":"granite?","message_type":"user"}]}`, `{"results":[` + granite(1) + `,` + shipping(2) + `]}`},
	} {
		t.Run(tc.name, func(t *testing.T) { c.do(tc.u, "POST", "/search", tc.body).want(t, 200, tc.want) })
	}

	// send-search-message's stream writes times as Python's isoformat too:
	// six digits of microseconds when there are any.
	if r := c.do(c.basic, "POST", "/search/send-search-message", `{"search_query":"granite quarry","stream":true}`); !strings.Contains(string(r.body),
		`"updated_at": "2026-01-02T03:04:05.120000+00:00"`) {
		t.Errorf("the stream's times: %s", r.body)
	}

	for i := range 12 {
		push(pub, fmt.Sprintf("many-%02d", i), "Many", "A page about basalt.", "")
	}
	var many struct {
		Results []struct {
			CitationID int64 `json:"citation_id"`
		} `json:"results"`
	}
	c.do(c.basic, "POST", "/search", `{"query":"basalt"}`).decode(t, &many)
	if len(many.Results) != 10 || many.Results[9].CitationID != 10 {
		t.Errorf("%d results for 12 documents (the last cited %d), want 10", len(many.Results), many.Results[len(many.Results)-1].CitationID)
	}

	for _, tc := range []struct {
		name   string
		u      user
		body   string
		status int
		want   string
	}{
		{"limited", c.limited, `{"query":"granite"}`, 403,
			`{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"You do not have the required permissions for this action."}`},
		{"anonymous (Onyx: 403)", user{}, `{"query":"granite"}`, 401, fxNotAuthed},
		{"a persona", c.basic, `{"query":"granite","persona_id":7}`, 404, `{"error_code":"PERSONA_NOT_FOUND","detail":"Persona 7 not found"}`},
		{"an LLM provider", c.basic, `{"query":"granite","provider":"openai","model":"gpt"}`, 404,
			`{"error_code":"NOT_FOUND","detail":"LLM provider 'openai' not found"}`},
	} {
		t.Run(tc.name, func(t *testing.T) { c.do(tc.u, "POST", "/search", tc.body).want(t, tc.status, tc.want) })
	}
	for _, g := range fxGoldens(t, "searchRequest") {
		t.Run("golden "+g.Name, func(t *testing.T) { c.replay(t, c.basic, "POST", "", g) })
	}
}
