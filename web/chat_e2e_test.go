package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/toolrun"
)

// ticketKey is the secret header of the ticket API's custom tool.
const ticketKey = "tk-e2e-0123456789abcdefghijklmnop"

// TestChatInChromium is a person chatting in the console (issue 41, item
// 4), in headless Chromium (web/e2e/chat.mjs): the model is the scripted
// OpenAI-compatible server (internal/llmtest) as the default provider,
// reached through the egress guard, and the documents it cites are found
// by the real search with the person's rights. The story checks the
// streamed answer, its search and its numbered source, the citation's
// link, feedback, the conversation after a reload, asking again, a custom
// tool's call and answer (its secret never shown), a stop
// with Escape, a provider's failure, and deleting the conversation; every
// view is checked with axe-core.
func TestChatInChromium(t *testing.T) {
	node, e2eDir, db, admin, basic := storyDeployment(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loopback := toolrun.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	srv := httptest.NewServer(api.NewServer(api.Config{MaskCredentials: true, Version: "e2e", ToolEgress: loopback}, db, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)

	// The model: a search, then an answer citing the first document; a
	// second answer when asked again; a slow one; a failure.
	model := llmtest.New(t)
	model.Push(
		llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_1", "internal_search", `{"queries": ["granite belay"]}`)}},
		llmtest.Text("Belay from the bolted ", "anchor [1]."),
		llmtest.Text("Clip in twice ", "before you lean back."),
		llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_2", "get_ticket", `{"id": "42"}`)}},
		llmtest.Text("Ticket 42 is open."),
	)
	slow := []string{"Slab "}
	for range 80 {
		slow = append(slow, "climbing is balance. ")
	}
	model.On("slowly", llmtest.Script{Text: append(slow, "THE END"), Delay: 100 * time.Millisecond})
	model.On("break", llmtest.Errorf(500, "server_error", "", "The server had an error while processing your request."))

	// The ticket API a custom tool calls, with its secret key.
	tickets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != ticketKey {
			http.Error(w, `{"error": "unauthorized"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": %q, "status": "open", "owner": "ada"}`, strings.TrimPrefix(r.URL.Path, "/api/tickets/"))
	}))
	t.Cleanup(tickets.Close)

	c := e2eClient{t, srv.URL, admin}
	var made struct {
		ID int64 `json:"id"`
	}
	definition := map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "Tickets", "description": "The ticket API", "version": "1.0.0"},
		"servers": []any{map[string]any{"url": tickets.URL + "/api"}},
		"paths": map[string]any{"/tickets/{id}": map[string]any{"get": map[string]any{
			"operationId": "get_ticket", "summary": "Get a ticket",
			"parameters": []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}},
			"responses":  map[string]any{"200": map[string]any{"description": "The ticket"}}}}}}
	c.do("POST", "/admin/tool/custom", map[string]any{"name": "Tickets", "description": "The ticket API", "definition": definition,
		"custom_headers": []any{map[string]any{"key": "X-Api-Key", "value": ticketKey}}, "passthrough_auth": false}, &made)
	// The default assistant offers it beside the search.
	var assistant struct {
		ToolIDs []int64 `json:"tool_ids"`
	}
	c.do("GET", "/admin/default-assistant/configuration", nil, &assistant)
	c.do("PATCH", "/admin/default-assistant", map[string]any{"tool_ids": append(assistant.ToolIDs, made.ID)}, nil)
	c.do("PUT", "/admin/llm/provider?is_creation=true", map[string]any{"name": "local", "provider": "openai_compatible",
		"api_key": "sk-e2e-0123456789abcdefghijklmnop", "api_base": model.BaseURL(),
		"model_configurations": []any{map[string]any{"name": "llama", "is_visible": true, "max_input_tokens": 8192}}}, &made)
	c.do("POST", "/admin/llm/default", map[string]any{"provider_id": made.ID, "model_name": "llama"}, nil)
	c.do("POST", "/manage/admin/connector", map[string]any{"name": "pushed", "source": "ingestion_api", "input_type": "load_state",
		"connector_specific_config": map[string]any{}}, &made)
	connector := made.ID
	c.do("POST", "/manage/credential", map[string]any{"name": "pushed", "source": "ingestion_api", "admin_public": true, "credential_json": map[string]any{}}, &made)
	var pair struct {
		Data int64 `json:"data"`
	}
	c.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connector, made.ID), map[string]any{"name": "pushed", "access_type": "public"}, &pair)
	for id, text := range map[string][2]string{
		"belay":  {"Granite belay guide", "Belay from the bolted anchor on granite slabs, never from a single piece."},
		"basalt": {"Basalt columns", "Basalt forms columns as lava cools."},
	} {
		c.do("POST", "/onyx-api/ingestion", map[string]any{"cc_pair_id": pair.Data, "document": map[string]any{"id": id,
			"semantic_identifier": text[0], "source": "web", "metadata": map[string]any{},
			"sections": []any{map[string]any{"text": text[1], "link": "https://wiki.example.com/" + id}}}}, nil)
	}

	runStory(ctx, t, node, e2eDir, "chat.mjs", srv.URL, basic, ticketKey)

	// What reached the model: the person's question, then the search's
	// result, and never the provider's key.
	reqs := model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests reached the model", len(reqs))
	}
	first, second := reqs[0].Messages, reqs[1].Messages
	if q := first[len(first)-1]; q.Role != "user" || q.Content != "How do we belay on granite?" {
		t.Errorf("the question the model read: %+v", q)
	}
	if r := second[len(second)-1]; r.Role != "tool" || !strings.Contains(r.Content, "Granite belay guide") || strings.Contains(r.Content, "Basalt") {
		t.Errorf("the search's result the model read: %+v", r)
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "sk-e2e") {
			t.Errorf("the key in a request's body: %s", r.Body)
		}
	}
}
