package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/mcptest"
)

// searchCast is a company of documents for the search tests: a public
// pair of web pages, a private pair of group A's files, a private pair of
// group C's, and one document in both private pairs.
type searchCast struct {
	*fxCast
	public, pairA, pairC int64
}

func newSearchCast(t *testing.T) *searchCast {
	t.Helper()
	c := &searchCast{fxCast: newFxCast(t)}
	web := c.connector(c.admin, "handbook", "web")
	files := c.connector(c.admin, "files", "file")
	c.public = c.pair(c.admin, web, c.credential(c.admin, "web", fxSecret, "admin_public", true), "handbook", quarry.AccessPublic)
	c.pairA = c.pair(c.admin, files, c.credential(c.admin, "file", fxSecret, "admin_public", true), "team A", quarry.AccessPrivate, c.gA)
	c.pairC = c.pair(c.admin, files, c.credential(c.admin, "file", fxSecret, "admin_public", true), "team C", quarry.AccessPrivate, c.gC)
	c.push(t, c.public, "vacation-policy", "Vacation policy", "web", "Every employee takes thirty days of vacation a year.", "https://handbook.example.com/vacation")
	c.push(t, c.pairA, "a-plans", "Team A plans", "file", "Team A plans its vacation rota in March.", "")
	c.push(t, c.pairC, "c-budget", "Team C budget", "file", "Team C keeps a vacation budget of its own.", "")
	c.push(t, c.pairA, "shared-notes", "Shared notes", "file", "Notes both teams keep about vacation travel.", "")
	// Team C's copy is written a second after team A's.
	c.db.Now = func() time.Time { return testNow.Add(time.Second) }
	c.push(t, c.pairC, "shared-notes", "Shared notes", "file", "Notes both teams keep about vacation travel, as team C wrote them.", "")
	c.db.Now = func() time.Time { return testNow }
	return c
}

// push sends a document through Onyx's ingestion API into pair.
func (c *searchCast) push(t *testing.T, pair int64, id, title, source, text, link string) {
	t.Helper()
	sec := map[string]any{"text": text}
	if link != "" {
		sec["link"] = link
	}
	doc, _ := json.Marshal(map[string]any{"id": id, "semantic_identifier": title, "source": source, "sections": []any{sec},
		"metadata": map[string]any{"team": "people"}, "doc_updated_at": "2026-03-01T10:00:00Z"})
	c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":%s,"cc_pair_id":%d}`, doc, pair)).decode(t, new(any))
}

// resultText returns the JSON of a tool's one text item, checking that the
// structured content says the same.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items, want 1: %s", len(res.Content), resultJSON(t, res))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("not text: %s", resultJSON(t, res))
	}
	if res.StructuredContent != nil {
		jsonEq(t, "structuredContent", mustJSON(t, res.StructuredContent), text.Text)
	}
	return text.Text
}

// searchIDs returns the ids the search tool finds for query.
func searchIDs(t *testing.T, cs *mcp.ClientSession, query string) []string {
	t.Helper()
	var out struct {
		Results []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
			URL   string `json:"url"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(resultText(t, mcpCall(t, cs, "search", map[string]any{"query": query}))), &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range out.Results {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

// withID returns the JSON object doc with its id set to id.
func withID(t *testing.T, doc, id string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	m["id"] = id
	return mustJSON(t, m)
}

// TestMCPSearchRights: each person's search, fetch, indexed sources and
// search_indexed_documents over /mcp (the Go SDK's client) find exactly
// the copies of documents of the pairs they may search, as the HTTP
// routes do; a copy of a pair they may not search is neither found nor
// fetched, and a document in two pairs is a copy in each, found and
// fetched as its own.
func TestMCPSearchRights(t *testing.T) {
	c := newSearchCast(t)
	type copyOf struct {
		pair int64
		doc  string
	}
	id := func(x copyOf) string { return fmt.Sprintf("cc_pair:%d:%s", x.pair, x.doc) }
	ids := func(xs ...copyOf) []string {
		out := []string{}
		for _, x := range xs {
			out = append(out, id(x))
		}
		slices.Sort(out)
		return out
	}
	vacation, aPlans, aNotes := copyOf{c.public, "vacation-policy"}, copyOf{c.pairA, "a-plans"}, copyOf{c.pairA, "shared-notes"}
	cBudget, cNotes := copyOf{c.pairC, "c-budget"}, copyOf{c.pairC, "shared-notes"}
	all := []copyOf{vacation, aPlans, aNotes, cBudget, cNotes}
	for _, tt := range []struct {
		name    string
		u       user
		found   []copyOf
		sources string
	}{
		// The admin owns every pair's credential: the owner of a private
		// pair's credential may search it (Onyx's rule; being an admin
		// opens nothing more).
		{"admin", c.admin, all, `["file", "web"]`},
		{"curator of A", c.curator, []copyOf{vacation, aPlans, aNotes}, `["file", "web"]`},
		{"curator of B", c.other, []copyOf{vacation}, `["web"]`},
		{"global curator of B", c.global, []copyOf{vacation}, `["web"]`},
		{"basic", c.basic, []copyOf{vacation}, `["web"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := c.mcpSession(t, tt.u.token)
			if got, want := searchIDs(t, cs, "vacation"), ids(tt.found...); !slices.Equal(got, want) {
				t.Errorf("search: %v, want %v", got, want)
			}
			for _, x := range all {
				res := mcpCall(t, cs, "fetch", map[string]any{"id": id(x)})
				may := slices.Contains(tt.found, x)
				if res.IsError == may {
					t.Errorf("fetch %s: %s (may see it: %v)", id(x), resultJSON(t, res), may)
				}
				direct := c.do(tt.u, "GET", fmt.Sprintf("/search/document/%s?cc_pair_id=%d", x.doc, x.pair), nil)
				if may {
					var got map[string]any
					direct.decode(t, &got)
					jsonEq(t, "fetch and GET /search/document", resultText(t, res), withID(t, string(direct.body), id(x)))
				} else {
					res.Meta = nil
					jsonEq(t, "fetch refused", resultJSON(t, res),
						fmt.Sprintf(`{"content":[{"type":"text","text":"Document not found: \"%s\""}],"isError":true}`, id(x)))
					direct.want(t, 404, `{"detail":"Document not found"}`)
				}
			}
			read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "resource://indexed_sources"})
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Contents) != 1 || read.Contents[0].Text != tt.sources || read.Contents[0].MIMEType != "application/json" {
				t.Errorf("indexed_sources: %+v, want %s", read.Contents, tt.sources)
			}
			var sources []string
			json.Unmarshal([]byte(tt.sources), &sources)
			c.do(tt.u, "GET", "/manage/indexed-sources", nil).want(t, 200, `{"sources":`+mustJSON(t, sources)+`}`)

			var indexed struct {
				Results []struct {
					Title string `json:"title"`
					Pair  int64  `json:"cc_pair_id"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(resultText(t, mcpCall(t, cs, "search_indexed_documents", map[string]any{"query": "vacation"}))), &indexed); err != nil {
				t.Fatal(err)
			}
			if len(indexed.Results) != len(tt.found) {
				t.Errorf("search_indexed_documents: %+v, want the %d copies %v", indexed.Results, len(tt.found), tt.found)
			}
		})
	}

	t.Run("a document in two pairs", func(t *testing.T) {
		// By its id alone: the curator of A, who may search A's copy only,
		// reads it; the admin, who may search both, is told the two.
		var got struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		json.Unmarshal([]byte(resultText(t, mcpCall(t, c.mcpSession(t, c.curator.token), "fetch", map[string]any{"id": "shared-notes"}))), &got)
		if got.ID != id(aNotes) || got.Text != "Notes both teams keep about vacation travel." {
			t.Errorf("the curator of A fetched %+v, want A's copy", got)
		}
		admin := c.mcpSession(t, c.admin.token)
		res := mcpCall(t, admin, "fetch", map[string]any{"id": "shared-notes"})
		res.Meta = nil
		jsonEq(t, "the admin's fetch", resultJSON(t, res), mustJSON(t, map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
			"text": fmt.Sprintf(`Document "shared-notes" is in 2 pairs you may search; fetch one of their copies by id: %q ("team A", private), %q ("team C", private)`,
				id(aNotes), id(cNotes))}}}))
		// Each copy by its own id.
		for x, want := range map[copyOf]string{aNotes: "Notes both teams keep about vacation travel.",
			cNotes: "Notes both teams keep about vacation travel, as team C wrote them."} {
			json.Unmarshal([]byte(resultText(t, mcpCall(t, admin, "fetch", map[string]any{"id": id(x)}))), &got)
			if got.ID != id(x) || got.Text != want {
				t.Errorf("the admin fetched %+v, want %s: %q", got, id(x), want)
			}
		}
		// An id of a copy's form is always read as one.
		res = mcpCall(t, admin, "fetch", map[string]any{"id": fmt.Sprintf("cc_pair:%d:shared-notes", c.public)})
		res.Meta = nil
		jsonEq(t, "a copy that is not", resultJSON(t, res), mustJSON(t, map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
			"text": fmt.Sprintf(`Document not found: "cc_pair:%d:shared-notes"`, c.public)}}}))
	})

	t.Run("limited", func(t *testing.T) {
		cs := c.mcpSession(t, c.limited.token)
		if got := mcptest.Names(mcpTools(t, cs)); len(got) != 0 {
			t.Errorf("tools/list: %v", got)
		}
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "vacation"}}); err == nil ||
			!strings.Contains(err.Error(), `unknown tool "search"`) {
			t.Errorf("search: %v", err)
		}
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "resource://indexed_sources"}); err == nil {
			t.Error("indexed_sources read")
		}
		c.do(c.limited, "GET", "/manage/indexed-sources", nil).want(t, 403, fxLimited)
		c.do(c.limited, "GET", "/search/document/vacation-policy", nil).want(t, 403,
			`{"detail":"You do not have the required permissions for this action."}`)
	})

	t.Run("a change of membership shows at the next search", func(t *testing.T) {
		cs := c.mcpSession(t, c.basic.token)
		c.do(c.admin, "POST", fmt.Sprintf("/manage/admin/user-group/%d/add-users", c.gC), fmt.Sprintf(`{"user_ids":[%q]}`, c.basic.id)).decode(t, new(any))
		if got := searchIDs(t, cs, "vacation"); !slices.Equal(got, ids(vacation, cBudget, cNotes)) {
			t.Errorf("search after joining C: %v", got)
		}
	})
}

// TestMCPSearchIndexedDocuments holds search_indexed_documents to Onyx's
// tool: its answer's shape, its filters, its answers to arguments it
// skips, and its answer when nothing is indexed.
func TestMCPSearchIndexedDocuments(t *testing.T) {
	t.Run("nothing indexed", func(t *testing.T) {
		e := newEnv(t)
		basic := e.user(quarry.RoleBasic, "basic")
		cs := e.mcpSession(t, basic.token)
		got := resultText(t, mcpCall(t, cs, "search_indexed_documents", map[string]any{"query": "anything"}))
		jsonEq(t, "no sources", got, `{"error":"No document sources are indexed yet. Add connectors or upload data through Onyx before calling search_indexed_documents.","results":[]}`)
		read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "resource://indexed_sources"})
		if err != nil || read.Contents[0].Text != "[]" {
			t.Errorf("indexed_sources: %v %+v", err, read)
		}
		e.do(basic, "GET", "/manage/indexed-sources", nil).want(t, 200, `{"sources":[]}`)
		jsonEq(t, "search", resultText(t, mcpCall(t, cs, "search", map[string]any{"query": "anything"})), `{"results":[]}`)
	})

	c := newSearchCast(t)
	cs := c.mcpSession(t, c.basic.token)
	call := func(args map[string]any) string {
		t.Helper()
		return resultText(t, mcpCall(t, cs, "search_indexed_documents", args))
	}
	want := fmt.Sprintf(`{"results":[{"title":"Vacation policy","url":"https://handbook.example.com/vacation","source_type":"web",
		"content":"Every employee takes thirty days of vacation a year.","updated_at":"2026-03-01T10:00:00+00:00",
		"cc_pair_id":%d,"cc_pair_name":"handbook","cc_pair_access_type":"public"}]}`, c.public)
	jsonEq(t, "a search", call(map[string]any{"query": "thirty days"}), want)
	jsonEq(t, "by source, in capitals", call(map[string]any{"query": "thirty days", "source_types": []string{"WEB", "nonsense"}}), want)
	jsonEq(t, "an empty list is no filter", call(map[string]any{"query": "thirty days", "source_types": []string{}}), want)
	jsonEq(t, "another source", call(map[string]any{"query": "thirty days", "source_types": []string{"file"}}), `{"results":[]}`)
	jsonEq(t, "unknown sources only", call(map[string]any{"query": "thirty days", "source_types": []string{"nonsense"}}), `{"results":[]}`)
	jsonEq(t, "before the cutoff", call(map[string]any{"query": "thirty days", "time_cutoff": "2026-03-02"}), `{"results":[]}`)
	jsonEq(t, "after the cutoff", call(map[string]any{"query": "thirty days", "time_cutoff": "2026-03-01T09:00:00+00:00"}), want)
	jsonEq(t, "a naive cutoff is UTC", call(map[string]any{"query": "thirty days", "time_cutoff": "2026-03-01T10:30:00"}), `{"results":[]}`)
	jsonEq(t, "a cutoff that does not parse is none", call(map[string]any{"query": "thirty days", "time_cutoff": "last week"}), want)
	// Document sets: the sets the caller may see narrow the search (Onyx's
	// POST /search, whose 403 the tool answers for the others), and the
	// document_sets resource lists them by name.
	c.do(c.admin, "POST", "/manage/admin/document-set", `{"name":"Handbook","description":"The \u00e9mployee handbook","cc_pair_ids":[`+
		fmt.Sprint(c.public)+`],"is_public":true}`).want(t, 200, `1`)
	c.do(c.admin, "POST", "/manage/admin/document-set", fmt.Sprintf(`{"name":"Team A","description":"","cc_pair_ids":[%d],"is_public":false,"groups":[%d]}`,
		c.pairA, c.gA)).want(t, 200, `2`)
	c.do(c.admin, "POST", "/manage/admin/document-set", fmt.Sprintf(`{"name":"Another's handbook","description":"","cc_pair_ids":[%d],"is_public":true}`,
		c.pairA)).want(t, 200, `3`)
	jsonEq(t, "a set", call(map[string]any{"query": "thirty days", "document_set_names": []string{"Handbook"}}), want)
	jsonEq(t, "a set of a pair one may not read", call(map[string]any{"query": "thirty days", "document_set_names": []string{"Another's handbook"}}),
		`{"results":[]}`)
	jsonEq(t, "no set is no filter", call(map[string]any{"query": "thirty days", "document_set_names": []string{}}), want)
	jsonEq(t, "sets one may not see", call(map[string]any{"query": "thirty days", "document_set_names": []string{"Team A", "Handbook", "Engineering"}}),
		`{"error":"User does not have access to document sets: ['Engineering', 'Team A']","results":[]}`)
	jsonEq(t, "sets one may not see, and no source", call(map[string]any{"query": "thirty days", "document_set_names": []string{"Engineering"},
		"source_types": []string{"nonsense"}}), `{"error":"User does not have access to document sets: ['Engineering']","results":[]}`)
	read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "resource://document_sets"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/json" || read.Contents[0].Text !=
		`[{"name": "Another's handbook", "description": ""}, {"name": "Handbook", "description": "The \u00e9mployee handbook"}]` {
		t.Errorf("document_sets: %v %+v", err, read)
	}
	jsonEq(t, "no expansion to skip", call(map[string]any{"query": "thirty days", "skip_query_expansion": true}), want)
	jsonEq(t, "an empty query", call(map[string]any{"query": ""}), `{"error":"Document search failed: 1 validation error for SearchRequest\nquery\n  String should have at least 1 character [type=string_too_short, input_type=str]","results":[]}`)
	res := mcpCall(t, cs, "search_indexed_documents", map[string]any{})
	if !res.IsError {
		t.Errorf("no query: %s", resultJSON(t, res))
	}
	// An id the ingestion API made URL-compatible ("/" as %2F) is fetched
	// as search gave it, and read at its escaped path.
	c.push(t, c.public, "dir/page 1", "Deep page", "web", "A page about zeppelins.", "")
	escaped := fmt.Sprintf("cc_pair:%d:dir%%2Fpage_1", c.public)
	jsonEq(t, "search of an escaped id", resultText(t, mcpCall(t, cs, "search", map[string]any{"query": "zeppelins"})), fmt.Sprintf(
		`{"results":[{"id":%q,"title":"Deep page","url":"","cc_pair_id":%d,"cc_pair_name":"handbook","cc_pair_access_type":"public"}]}`, escaped, c.public))
	fetched := resultText(t, mcpCall(t, cs, "fetch", map[string]any{"id": escaped}))
	c.do(c.basic, "GET", "/search/document/dir%252Fpage_1", nil).want(t, 200, withID(t, fetched, "dir%2Fpage_1"))
	c.do(c.basic, "GET", "/search/document/dir%2Fpage_1", nil).want(t, 404, `{"detail":"Document not found"}`)
	// search: one result per copy, ids, titles, URLs and pairs.
	jsonEq(t, "search", resultText(t, mcpCall(t, cs, "search", map[string]any{"query": "thirty days"})), fmt.Sprintf(
		`{"results":[{"id":"cc_pair:%d:vacation-policy","title":"Vacation policy","url":"https://handbook.example.com/vacation",
		"cc_pair_id":%[1]d,"cc_pair_name":"handbook","cc_pair_access_type":"public"}]}`, c.public))
	vacation := fmt.Sprintf(`{"id":"cc_pair:%d:vacation-policy","title":"Vacation policy","text":"Every employee takes thirty days of vacation a year.",
		"url":"https://handbook.example.com/vacation","metadata":{"team":"people","source_type":"web","semantic_identifier":"Vacation policy",
		"updated_at":"2026-03-01T10:00:00+00:00","cc_pair_id":%[1]d,"cc_pair_name":"handbook","cc_pair_access_type":"public"}}`, c.public)
	jsonEq(t, "fetch", resultText(t, mcpCall(t, cs, "fetch", map[string]any{"id": fmt.Sprintf("cc_pair:%d:vacation-policy", c.public)})), vacation)
	// A document's id alone, as search gave it before copies had ids of
	// their own, fetches the one copy the caller may search.
	jsonEq(t, "fetch by the id alone", resultText(t, mcpCall(t, cs, "fetch", map[string]any{"id": "vacation-policy"})), vacation)
}

// TestMCPSearchTypeScriptClient: the TypeScript SDK's client lists the
// search tools and the indexed_sources resource, calls
// search_indexed_documents and reads the resource.
func TestMCPSearchTypeScriptClient(t *testing.T) {
	c := newSearchCast(t)
	out := mcptest.RunScript(t, time.Minute, "client.mjs", c.srv.URL+"/mcp", c.curator.token, "search_indexed_documents",
		`{"query":"rota","source_types":["file"]}`, "resource://indexed_sources")
	var got struct {
		Tools     []string `json:"tools"`
		Call      *mcp.CallToolResult
		Resources []string `json:"resources"`
		Resource  []struct {
			JSON []string `json:"json"`
		} `json:"resource"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !slices.Contains(got.Tools, "search_indexed_documents") || !slices.Contains(got.Tools, "search") || !slices.Contains(got.Tools, "fetch") ||
		!slices.Contains(got.Resources, "resource://indexed_sources") || len(got.Resource) != 1 || !slices.Equal(got.Resource[0].JSON, []string{"file", "web"}) {
		t.Errorf("the TypeScript client got %s", out)
	}
	jsonEq(t, "call", resultText(t, got.Call), fmt.Sprintf(`{"results":[{"title":"Team A plans","url":null,"source_type":"file",
		"content":"Team A plans its vacation rota in March.","updated_at":"2026-03-01T10:00:00+00:00",
		"cc_pair_id":%d,"cc_pair_name":"team A","cc_pair_access_type":"private"}]}`, c.pairA))
}
