package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/toolrun"
)

// TestAssistantsInChromium tells the story of assistants in the console
// (issue 42, item 5), in headless Chromium (web/e2e/assistants.mjs), on a
// new SQLite deployment: two public pairs, "Granite wiki" and "Basalt
// wiki", each holding a document about rock; a public document set
// "Granite climbing" of the granite pair; a custom tool "Tickets"; the
// scripted OpenAI-compatible model (internal/llmtest) as the default
// provider. The admin, with the keyboard alone, meets the API's refusal of
// an assistant without a name, then makes "Granite guide": instructions,
// the search limited to the set, the custom tool, the model, a starter
// message, shared with the basic key "reader", and changes its
// description. The reader sees it in the list and read-only (and, shared
// with them as an editor, changes it but neither deletes it nor makes it
// public), picks it on the chat page (which says what it may call and
// where it searches), asks its starter message, and sees its search for
// rock find one document, not two. The admin deletes it. Every new view is
// checked strictly with axe-core. Then the test reads what reached the
// model: the assistant's instructions, the starter message, its two tools,
// and a search narrowed to the set.
func TestAssistantsInChromium(t *testing.T) {
	node, e2eDir, db, admin, reader := storyDeployment(t)
	ctx := context.Background()
	loopback := toolrun.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	srv := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: true, Version: "e2e", ToolEgress: loopback}, db, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)

	model := llmtest.New(t)
	model.Push(
		llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_1", "internal_search", `{"queries": ["rock"]}`)}},
		llmtest.Text("Granite is the rock for slabs [1]."),
	)
	c := e2eClient{t, srv.URL, admin}
	var made struct {
		ID int64 `json:"id"`
	}
	c.do("PUT", "/admin/llm/provider?is_creation=true", map[string]any{"name": "local", "provider": "openai_compatible",
		"api_key": "sk-e2e-0123456789abcdefghijklmnop", "api_base": model.BaseURL(),
		"model_configurations": []any{map[string]any{"name": "llama", "is_visible": true, "max_input_tokens": 8192}}}, &made)
	c.do("POST", "/admin/llm/default", map[string]any{"provider_id": made.ID, "model_name": "llama"}, nil)
	// A custom tool the assistant is given (it is offered, never called).
	definition := map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "Tickets", "description": "The ticket API", "version": "1.0.0"},
		"servers": []any{map[string]any{"url": "https://tickets.example.com/api"}},
		"paths": map[string]any{"/tickets/{id}": map[string]any{"get": map[string]any{
			"operationId": "get_ticket", "summary": "Get a ticket",
			"parameters": []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}},
			"responses":  map[string]any{"200": map[string]any{"description": "The ticket"}}}}}}
	c.do("POST", "/admin/tool/custom", map[string]any{"name": "Tickets", "description": "The ticket API", "definition": definition,
		"custom_headers": []any{}, "passthrough_auth": false}, nil)
	c.do("POST", "/manage/admin/connector", map[string]any{"name": "pushed", "source": "ingestion_api", "input_type": "load_state",
		"connector_specific_config": map[string]any{}}, &made)
	connector := made.ID
	var granite int64
	for _, p := range []struct{ pair, id, title, text string }{
		{"Granite wiki", "granite", "Granite slab guide", "Granite is a rock of slabs and cracks."},
		{"Basalt wiki", "basalt", "Basalt columns", "Basalt is a rock that forms columns as lava cools."},
	} {
		// One credential per pair: a connector and a credential make one pair.
		c.do("POST", "/manage/credential", map[string]any{"name": "pushed " + p.id, "source": "ingestion_api", "admin_public": true,
			"credential_json": map[string]any{}}, &made)
		var pair struct {
			Data int64 `json:"data"`
		}
		c.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connector, made.ID),
			map[string]any{"name": p.pair, "access_type": "public"}, &pair)
		if p.id == "granite" {
			granite = pair.Data
		}
		c.do("POST", "/onyx-api/ingestion", map[string]any{"cc_pair_id": pair.Data, "document": map[string]any{"id": p.id,
			"semantic_identifier": p.title, "source": "web", "metadata": map[string]any{},
			"sections": []any{map[string]any{"text": p.text, "link": "https://wiki.example.com/" + p.id}}}}, nil)
	}
	c.do("POST", "/manage/admin/document-set", map[string]any{"name": "Granite climbing", "description": "", "cc_pair_ids": []int64{granite},
		"is_public": true, "users": []string{}, "groups": []int64{}}, nil)

	runStory(ctx, t, node, e2eDir, "assistants.mjs", srv.URL, admin, reader)

	// What reached the model: the assistant's instructions, and the
	// search's result narrowed to the set.
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests reached the model, want 2", len(reqs))
	}
	first, second := reqs[0].Messages, reqs[1].Messages
	if s := first[0]; s.Role != "system" || !strings.Contains(s.Content, "Answer as a climbing guide.") {
		t.Errorf("the instructions the model read: %+v", s)
	}
	if q := first[len(first)-1]; q.Role != "user" || q.Content != "Where do we climb today?" {
		t.Errorf("the question the model read (the starter message): %+v", q)
	}
	if names := toolNames(reqs[0]); names != "internal_search get_ticket" {
		t.Errorf("the tools the model was offered: %s", names)
	}
	if r := second[len(second)-1]; r.Role != "tool" || !strings.Contains(r.Content, "Granite slab guide") || strings.Contains(r.Content, "Basalt") {
		t.Errorf("the search's result the model read: %+v", r)
	}
	var left []map[string]any
	c.do("GET", "/persona", nil, &left)
	if len(left) != 1 || left[0]["id"] != float64(0) {
		t.Errorf("the assistants left after the story deleted its own: %v", left)
	}
}

// toolNames returns the names of the tools a request to the model offered,
// in order, space-separated.
func toolNames(r llmtest.Request) string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return strings.Join(names, " ")
}
