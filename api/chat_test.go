package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/chat"
)

// The chat's API through the real server and database. The model is a
// scripted chat.Model (scriptModel) until the model providers land
// (issue 41's other half), when these tests go through the
// OpenAI-compatible client and the scripted server instead.

// scriptStep is what the scripted model does with one request.
type scriptStep func(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error

// scriptModel answers each request with its next step, and keeps the
// requests.
type scriptModel struct {
	mu       sync.Mutex
	steps    []scriptStep
	requests []quarry.ModelRequest
}

func (m *scriptModel) Stream(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
	m.mu.Lock()
	m.requests = append(m.requests, r)
	if len(m.steps) == 0 {
		m.mu.Unlock()
		return &quarry.ModelError{Status: 500, Message: "the script has no step left"}
	}
	step := m.steps[0]
	m.steps = m.steps[1:]
	m.mu.Unlock()
	return step(ctx, r, each)
}

// then queues steps.
func (m *scriptModel) then(steps ...scriptStep) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

func (m *scriptModel) last() quarry.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests[len(m.requests)-1]
}

func say(pieces ...string) scriptStep {
	return func(_ context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		for _, p := range pieces {
			if err := each(quarry.ModelEvent{Text: p}); err != nil {
				return err
			}
		}
		return each(quarry.ModelEvent{FinishReason: "stop"})
	}
}

func callTools(cs ...quarry.ModelToolCall) scriptStep {
	return func(_ context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		return each(quarry.ModelEvent{ToolCalls: cs, FinishReason: "tool_calls"})
	}
}

// scriptModels is the server's api.ChatModels: the scripted model, with a
// context window.
type scriptModels struct {
	model  *scriptModel
	window int
}

func (s *scriptModels) ChatModel(_ context.Context, _ *quarry.Caller, o quarry.ModelChoice) (*chat.Binding, error) {
	b := &chat.Binding{Model: s.model, Name: "gpt-test", DisplayName: "GPT Test", MaxInputTokens: s.window}
	if o.ModelVersion != "" {
		b.Name = o.ModelVersion
	}
	return b, nil
}

// chatCast is a server with the chat on, people, and documents.
type chatCast struct {
	*fxCast
	model  *scriptModel
	models *scriptModels
	public int64 // A public pair.
	privA  int64 // A pair of group A's.
}

func newChatCast(t *testing.T, opts ...func(*api.Config)) *chatCast {
	t.Helper()
	m := &scriptModel{}
	models := &scriptModels{model: m}
	e := newEnv(t, append([]func(*api.Config){func(c *api.Config) {
		c.Chat = api.ChatConfig{Models: models}
	}}, opts...)...)
	c := &chatCast{fxCast: &fxCast{fx: fx{e}}, model: m, models: models}
	c.curator = e.user(quarry.RoleCurator, "curator")
	c.basic = e.user(quarry.RoleBasic, "basic")
	c.other = e.user(quarry.RoleBasic, "other")
	c.limited = e.user(quarry.RoleLimited, "limited")
	c.gA = c.group("A", []user{c.curator}, c.curator)
	conn := c.connector(c.admin, "pushed", "web", "access_type", "public")
	c.public = c.pair(c.admin, conn, c.credential(c.admin, "web", fxSecret, "admin_public", true), "public", quarry.AccessPublic)
	c.privA = c.pair(c.curator, conn, c.credential(c.curator, "web", fxSecret, "groups", []int64{c.gA}), "of A", quarry.AccessPrivate, c.gA)
	c.push(t, c.public, "basalt", "Basalt", "Basalt is a volcanic rock.", "https://wiki.example.com/basalt")
	c.push(t, c.privA, "granite", "Granite", "Granite is a plutonic rock, unlike basalt.", "")
	return c
}

func (c *chatCast) push(t *testing.T, pair int64, id, title, text, link string) {
	t.Helper()
	sec := map[string]any{"text": text}
	if link != "" {
		sec["link"] = link
	}
	doc, _ := json.Marshal(map[string]any{"id": id, "semantic_identifier": title, "source": "web", "sections": []any{sec},
		"metadata": map[string]any{}, "doc_updated_at": "2026-03-01T10:00:00Z"})
	c.do(c.admin, "POST", "/onyx-api/ingestion", fmt.Sprintf(`{"document":%s,"cc_pair_id":%d}`, doc, pair)).decode(t, new(any))
}

// session creates a session as u and returns its id.
func (c *chatCast) session(t *testing.T, u user) string {
	t.Helper()
	var out struct {
		ID string `json:"chat_session_id"`
	}
	c.do(u, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 0, "description": "rocks"}).decode(t, &out)
	return out.ID
}

// lines splits a stream's body into its lines.
func lines(t *testing.T, r *response) []string {
	t.Helper()
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("status %d, %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var out []string
	s := bufio.NewScanner(bytes.NewReader(r.body))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestChatAnswer asks a question through the API: the model searches with
// the person's rights and cites what it found; the stream is Onyx's, line
// for line; the session reads back with its messages and the packets that
// show the answer again.
func TestChatAnswer(t *testing.T) {
	c := newChatCast(t)
	id := c.session(t, c.basic)
	if !uuidPattern.MatchString(id) {
		t.Fatalf("session id %q", id)
	}
	c.model.then(
		callTools(quarry.ModelToolCall{ID: "call_1", Name: "internal_search", Arguments: `{"queries": ["basalt"]}`}),
		say("Basalt is volcanic [", "1]."),
	)
	got := lines(t, c.do(c.basic, "POST", "/chat/send-chat-message", map[string]any{"message": "What is basalt?", "chat_session_id": id}))
	doc := `{"document_id": "basalt", "chunk_ind": 0, "semantic_identifier": "Basalt", "link": "https://wiki.example.com/basalt", ` +
		`"blurb": "Basalt is a volcanic rock.", "source_type": "web", "boost": 0, "hidden": false, "metadata": {}, "score": %s, ` +
		`"is_relevant": null, "relevance_explanation": null, "match_highlights": ["<hi>Basalt</hi> is a volcanic rock."], ` +
		`"updated_at": "2026-03-01T10:00:00+00:00", "primary_owners": null, "secondary_owners": null, "is_internet": false, "file_id": null, ` +
		`"cc_pair_id": %d, "cc_pair_name": "public", "cc_pair_access_type": "public"}`
	var score string
	if len(got) > 3 {
		if m := regexp.MustCompile(`"score": ([0-9.e-]+)`).FindStringSubmatch(got[3]); m != nil {
			score = m[1]
		}
	}
	d := fmt.Sprintf(doc, score, c.public)
	pl := func(turn int) string {
		return fmt.Sprintf(`{"turn_index": %d, "tab_index": 0, "sub_turn_index": null, "model_index": 0}`, turn)
	}
	var ids struct {
		User      int64 `json:"user_message_id"`
		Assistant int64 `json:"reserved_assistant_message_id"`
	}
	json.Unmarshal([]byte(got[0]), &ids)
	want := []string{
		fmt.Sprintf(`{"user_message_id": %d, "reserved_assistant_message_id": %d}`, ids.User, ids.Assistant),
		`{"placement": ` + pl(0) + `, "obj": {"type": "search_tool_start", "is_internet_search": false}}`,
		`{"placement": ` + pl(0) + `, "obj": {"type": "search_tool_queries_delta", "queries": ["basalt"]}}`,
		`{"placement": ` + pl(0) + `, "obj": {"type": "search_tool_documents_delta", "documents": [` + d + `]}}`,
		`{"placement": ` + pl(0) + `, "obj": {"type": "section_end"}}`,
		`{"placement": ` + pl(1) + `, "obj": {"type": "message_start", "final_documents": [` + d + `], "pre_answer_processing_seconds": %s}}`,
		`{"placement": ` + pl(1) + `, "obj": {"type": "message_delta", "content": "Basalt is volcanic "}}`,
		`{"placement": ` + pl(1) + fmt.Sprintf(`, "obj": {"type": "citation_info", "citation_number": 1, "document_id": "basalt", "cc_pair_id": %d}}`, c.public),
		`{"placement": ` + pl(1) + `, "obj": {"type": "message_delta", "content": "[[1]](https://wiki.example.com/basalt)"}}`,
		`{"placement": ` + pl(1) + `, "obj": {"type": "message_delta", "content": "."}}`,
		`{"placement": ` + pl(1) + `, "obj": {"type": "stop", "stop_reason": null}}`,
	}
	if len(got) != len(want) || score == "" {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	secs := regexp.MustCompile(`"pre_answer_processing_seconds": ([0-9.e-]+)`).FindStringSubmatch(got[5])
	want[5] = fmt.Sprintf(want[5], secs[1])
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if ids.Assistant != ids.User+1 {
		t.Errorf("ids %+v", ids)
	}
	// The model read the question and, at its second step, the document.
	r := c.model.last()
	if len(r.Messages) != 4 || r.Messages[1].Content != "What is basalt?" || !strings.Contains(r.Messages[3].Content, `"content": "Basalt is a volcanic rock."`) {
		t.Errorf("the model read %+v", r.Messages)
	}
	// The person's rights: basic may not read group A's granite.
	if strings.Contains(r.Messages[3].Content, "plutonic") {
		t.Errorf("the search gave a document the person may not read")
	}
}

func TestChatRefusesBeforeStreaming(t *testing.T) {
	c := newChatCast(t)
	id := c.session(t, c.basic)
	other := c.session(t, c.other)
	c.do(c.curator, "POST", "/manage/admin/document-set", dsSet("rocks of A", []int64{c.privA}, false, []int64{c.gA})).want(t, 200, `1`)
	for _, tc := range []struct {
		name string
		u    user
		body string
		want int
		text string
	}{
		{"a document set one may not see", c.basic, `{"message": "hi", "chat_session_id": "` + id + `", "internal_search_filters": {"document_set": ["rocks of A", "none"]}}`,
			403, `{"error_code":"INSUFFICIENT_PERMISSIONS","detail":"User does not have access to document sets: ['none', 'rocks of A']"}`},
		{"no such session", c.basic, `{"message": "hi", "chat_session_id": "00000000-0000-0000-0000-000000000000"}`, 404, `{"detail": "Chat session not found"}`},
		{"another's session", c.basic, `{"message": "hi", "chat_session_id": "` + other + `"}`, 404, `{"detail": "Chat session not found"}`},
		{"an empty message", c.basic, `{"message": "  ", "chat_session_id": "` + id + `"}`, 400, `{"detail": "The message is empty: ask a question"}`},
		{"both a session and its info", c.basic, `{"message": "hi", "chat_session_id": "` + id + `", "chat_session_info": {}}`, 422, ""},
		{"a parent off the mainline", c.basic, `{"message": "hi", "chat_session_id": "` + id + `", "parent_message_id": 12345}`, 400,
			`{"detail": "The new message sent is not on the latest mainline of messages"}`},
		{"deep research", c.basic, `{"message": "hi", "deep_research": true}`, 400, `{"detail": "Deep research is not supported"}`},
		{"a persona", c.basic, `{"message": "hi", "chat_session_info": {"persona_id": 3}}`, 403, `{"detail": "User does not have access to persona"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.u, "POST", "/chat/send-chat-message", tc.body)
			if r.status != tc.want || tc.text != "" && compact(t, r.body) != compact(t, []byte(tc.text)) {
				t.Errorf("%d %s, want %d %s", r.status, r.body, tc.want, tc.text)
			}
		})
	}
	// Nothing was stored by the refusals.
	var s struct {
		Messages []any `json:"messages"`
	}
	c.do(c.basic, "GET", "/chat/get-chat-session/"+id, nil).decode(t, &s)
	if len(s.Messages) != 0 {
		t.Errorf("%d messages after refusals", len(s.Messages))
	}
	// No model configured.
	// No provider configured: the configured providers answer, and there
	// are none.
	bare := newChatCast(t, func(cfg *api.Config) { cfg.Chat.Models = nil })
	bareID := bare.session(t, bare.basic)
	bare.do(bare.basic, "POST", "/chat/send-chat-message", `{"message": "hi", "chat_session_id": "`+bareID+`"}`).want(t, 400,
		`{"detail": "No default LLM model found"}`)
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

// searched asks the model's search (internal_search) for "rock" in a chat
// of u's with the chat's filters (internal_search_filters; none when nil),
// and returns the ids of the documents it found, sorted.
func (c *chatCast) searched(t *testing.T, u user, filters map[string]any) []string {
	t.Helper()
	c.model.then(callTools(quarry.ModelToolCall{ID: "call_1", Name: "internal_search", Arguments: `{"queries": ["rock"]}`}), say("Rocks."))
	body := map[string]any{"message": "Which rocks?", "chat_session_id": c.session(t, u)}
	if filters != nil {
		body["internal_search_filters"] = filters
	}
	var ids []string
	for _, l := range lines(t, c.do(u, "POST", "/chat/send-chat-message", body)) {
		var p struct {
			Obj struct {
				Type      string `json:"type"`
				Documents []struct {
					ID string `json:"document_id"`
				} `json:"documents"`
			} `json:"obj"`
		}
		if json.Unmarshal([]byte(l), &p) == nil && p.Obj.Type == "search_tool_documents_delta" {
			for _, d := range p.Obj.Documents {
				ids = append(ids, d.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// TestChatDocumentSets narrows a chat's searches to the document sets of
// internal_search_filters: the model's search finds only the sets'
// documents, within what the person may read.
func TestChatDocumentSets(t *testing.T) {
	c := newChatCast(t)
	c.do(c.curator, "POST", "/manage/admin/document-set", dsSet("rocks of A", []int64{c.privA}, false, []int64{c.gA})).want(t, 200, `1`)
	c.do(c.admin, "POST", "/manage/admin/document-set", dsSet("all rocks", []int64{c.privA, c.public}, true, nil)).want(t, 200, `2`)
	found := func(u user, sets []string) []string {
		t.Helper()
		if sets == nil {
			return c.searched(t, u, nil)
		}
		return c.searched(t, u, map[string]any{"document_set": sets})
	}
	for _, tc := range []struct {
		name string
		u    user
		sets []string
		want []string
	}{
		{"no filter", c.curator, nil, []string{"basalt", "granite"}},
		{"A's set", c.curator, []string{"rocks of A"}, []string{"granite"}},
		{"no set named is no filter", c.curator, []string{}, []string{"basalt", "granite"}},
		// The public set holds A's pair: the person reads only the rest.
		{"a set narrows, never widens", c.basic, []string{"all rocks"}, []string{"basalt"}},
	} {
		if got := found(tc.u, tc.sets); !slices.Equal(got, tc.want) {
			t.Errorf("%s: the search found %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestChatTags narrows a chat's searches to the tags of
// internal_search_filters (any of them), within what the person may read.
func TestChatTags(t *testing.T) {
	c := newChatCast(t)
	push := func(pair int64, id string, metadata map[string]any) {
		t.Helper()
		c.do(c.admin, "POST", "/onyx-api/ingestion", map[string]any{"document": map[string]any{"id": id, "semantic_identifier": id,
			"sections": []map[string]any{{"text": "A rock: " + id + "."}}, "metadata": metadata}, "cc_pair_id": pair}).decode(t, new(any))
	}
	push(c.public, "obsidian", map[string]any{"kind": "volcanic", "colour": []string{"black"}})
	push(c.privA, "pumice", map[string]any{"kind": "volcanic"})
	tags := func(kv ...string) map[string]any {
		out := []map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out = append(out, map[string]string{"tag_key": kv[i], "tag_value": kv[i+1]})
		}
		return map[string]any{"tags": out}
	}
	for _, tc := range []struct {
		name    string
		u       user
		filters map[string]any
		want    []string
	}{
		{"no filter", c.basic, nil, []string{"basalt", "obsidian"}},
		{"a tag", c.curator, tags("kind", "volcanic"), []string{"obsidian", "pumice"}},
		{"a tag narrows, never widens", c.basic, tags("kind", "volcanic"), []string{"obsidian"}},
		{"a list's item, or another tag", c.curator, tags("colour", "black", "kind", "plutonic"), []string{"obsidian"}},
		{"no tag named is no filter", c.basic, tags(), []string{"basalt", "obsidian"}},
	} {
		if got := c.searched(t, tc.u, tc.filters); !slices.Equal(got, tc.want) {
			t.Errorf("%s: the search found %v, want %v", tc.name, got, tc.want)
		}
	}
}
