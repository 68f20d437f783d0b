package api_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/internal/mcptest"
)

// Chats with assistants through the scripted provider (internal/llmtest):
// the model an assistant answers with, among the providers its person may
// use with it, and an assistant without the search tool.

// personaChat makes assistant body as the admin and a session of u with
// it, and returns the assistant's and the session's ids.
func (c *chatLLM) personaChat(t *testing.T, u user, body map[string]any) (int64, string) {
	t.Helper()
	var p struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/persona", body).decode(t, &p)
	var s struct {
		ID string `json:"chat_session_id"`
	}
	c.do(u, "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID}).decode(t, &s)
	return p.ID, s.ID
}

// secondsPattern finds the processing time of message_start, which the
// whole lines cannot know.
var secondsPattern = regexp.MustCompile(`"pre_answer_processing_seconds": [0-9.e-]+`)

// wantTextAnswer asserts the whole stream of an answer that is text alone.
func wantTextAnswer(t *testing.T, got []string, text string) {
	t.Helper()
	u, a := messageIDs(t, got)
	pl := `{"turn_index": 0, "tab_index": 0, "sub_turn_index": null, "model_index": 0}`
	want := []string{
		fmt.Sprintf(`{"user_message_id": %d, "reserved_assistant_message_id": %d}`, u, a),
		`{"placement": ` + pl + `, "obj": {"type": "message_start", "final_documents": null, "pre_answer_processing_seconds": S}}`,
		`{"placement": ` + pl + `, "obj": {"type": "message_delta", "content": "` + text + `"}}`,
		`{"placement": ` + pl + `, "obj": {"type": "stop", "stop_reason": null}}`,
	}
	for i := range got {
		got[i] = secondsPattern.ReplaceAllString(got[i], `"pre_answer_processing_seconds": S`)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestChatPersonaModel: an assistant answers with its own model, also when
// the person's llm_override changes only the temperature; a provider
// restricted to an assistant answers in its chats alone, whatever the
// person chooses elsewhere (Onyx v4.6.1's get_llm_for_persona).
func TestChatPersonaModel(t *testing.T) {
	c := newChatLLM(t)
	c.llm.SetModels("llama", "seven")
	var sevens struct {
		ID     int64 `json:"id"`
		Models []struct {
			ID int64 `json:"id"`
		} `json:"model_configurations"`
	}
	// An assistant of its own model, and its provider restricted to it.
	var p struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/persona", paBody("Sevens", true)).decode(t, &p)
	c.putProvider(c.admin, true, fmt.Sprintf(`{"name": "sevens", "provider": "openai_compatible", "api_key": %q, "api_base": %q,
		"personas": [%d], "model_configurations": [{"name": "seven", "is_visible": true}]}`, llmKey, c.llm.BaseURL(), p.ID)).decode(t, &sevens)
	seven := sevens.Models[0].ID
	c.do(c.admin, "PATCH", fmt.Sprintf("/persona/%d", p.ID), paBody("Sevens", true, "default_model_configuration_id", seven)).decode(t, &struct{}{})
	var s struct {
		ID string `json:"chat_session_id"`
	}
	c.do(c.basic, "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID}).decode(t, &s)
	def := c.session(t, c.basic)
	for _, tt := range []struct {
		name    string
		session string
		extra   []any
		model   string
	}{
		{"the assistant's model", s.ID, nil, "seven"},
		{"the assistant's model, another temperature", s.ID, []any{"llm_override", map[string]any{"temperature": 0.5}}, "seven"},
		{"the person's choice in the assistant's chat", s.ID, []any{"llm_override", map[string]any{"model_provider": "local", "model_version": "llama"}}, "llama"},
		{"the restricted provider's model in another chat", def, []any{"llm_override", map[string]any{"model_configuration_id": seven}}, "llama"},
		{"the restricted provider by name in another chat", def, []any{"llm_override", map[string]any{"model_provider": "sevens", "model_version": "seven"}}, "llama"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.llm.Push(llmtest.Text("Fine."))
			wantTextAnswer(t, c.ask(t, c.basic, tt.session, "Which model?", tt.extra...), "Fine.")
			reqs := c.llm.Requests()
			if got := reqs[len(reqs)-1].Model; got != tt.model {
				t.Errorf("model %q answered, want %q", got, tt.model)
			}
		})
	}
}

// TestChatPersonaWithoutSearch: an assistant without the search tool
// offers the model no tool and tells it nothing of citations; a call of
// the search the model makes anyway searches nothing and is answered as
// an unknown tool.
func TestChatPersonaWithoutSearch(t *testing.T) {
	c := newChatLLM(t)
	_, s := c.personaChat(t, c.basic, paBody("Chatty", true))
	c.llm.Push(llmtest.Text("Hello."))
	wantTextAnswer(t, c.ask(t, c.basic, s, "Hi"), "Hello.")
	reqs := c.llm.Requests()
	first := reqs[len(reqs)-1]
	if len(first.Tools) != 0 || len(first.Messages) != 2 || strings.Contains(first.Messages[0].Content, "cite") {
		t.Errorf("the model was offered %+v, told %+v", first.Tools, first.Messages)
	}
	c.llm.Push(llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_1", "internal_search", `{"queries": ["rock"]}`)}},
		llmtest.Text("No search."))
	got := strings.Join(c.ask(t, c.basic, s, "Which rocks?"), "\n")
	if strings.Contains(got, "search_tool") || strings.Contains(got, "basalt") {
		t.Errorf("a search ran:\n%s", got)
	}
	reqs = c.llm.Requests()
	last := reqs[len(reqs)-1]
	var result string
	for _, m := range last.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_1" {
			result = m.Content
		}
	}
	if !strings.HasPrefix(result, "Tool failed with error: ") || strings.Contains(result, "Basalt") {
		t.Errorf("the model read, of its call of the search: %q", result)
	}
}

// TestChatPersonaTools: an assistant's tools are the only ones the model
// is offered in its chats (not the default assistant's), and a forced tool
// must be one of them (Onyx's "Forced tool … not found in tools").
func TestChatPersonaTools(t *testing.T) {
	c := newChatCast(t, allowLoopback)
	items := newItemsServer(t)
	var tool struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/admin/tool/custom", map[string]any{"name": "Items", "definition": json.RawMessage(itemsDefinition(items.URL))}).decode(t, &tool)
	up := mcptest.Start(t, mcptest.Options{})
	server := c.setUpMCPServer(c.admin, fmt.Sprintf(`{"name":"kit","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, up.URL))
	echo := c.syncMCPTools(c.admin, server, "echo")["echo"]
	var conf struct {
		ToolIDs []int64 `json:"tool_ids"`
	}
	c.do(c.admin, "GET", "/admin/default-assistant/configuration", nil).decode(t, &conf)
	search := conf.ToolIDs[0]
	c.do(c.admin, "PATCH", "/admin/default-assistant", map[string]any{"tool_ids": []int64{search, echo}}).decode(t, new(any))
	var p struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/persona", paBody("Items", true, "tool_ids", []int64{tool.ID})).decode(t, &p)
	var s struct {
		ID string `json:"chat_session_id"`
	}
	c.do(c.basic, "POST", "/chat/create-chat-session", map[string]any{"persona_id": p.ID}).decode(t, &s)
	offered := func() string {
		var names []string
		for _, d := range c.model.last().Tools {
			names = append(names, d.Name)
		}
		return strings.Join(names, " ")
	}
	for _, tt := range []struct {
		name    string
		session string
		extra   []any
		want    string
	}{
		{"the assistant's tools", s.ID, nil, "createItem getItem slow whoami"},
		{"the assistant's tool forced", s.ID, []any{"forced_tool_id", tool.ID}, "createItem getItem slow whoami"},
		{"the default assistant's", c.session(t, c.basic), nil, "internal_search echo"},
	} {
		c.model.then(say("ok"))
		c.ask(t, c.basic, tt.session, "Which tools?", tt.extra...)
		if got := offered(); got != tt.want {
			t.Errorf("%s: offered %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, id := range []int64{search, echo} {
		c.do(c.basic, "POST", "/chat/send-chat-message", map[string]any{"message": "x", "chat_session_id": s.ID, "forced_tool_id": id}).
			want(t, 400, fmt.Sprintf(`{"detail": "Forced tool %d not found in tools"}`, id))
	}
}

// TestChatSessionPersona: a session tells its assistant's name and icon
// (Onyx's persona_name and personal_icon_name), the default assistant's
// for a session without one.
func TestChatSessionPersona(t *testing.T) {
	c := newChatLLM(t)
	id, s := c.personaChat(t, c.basic, paBody("Chatty", true, "icon_name", "rocket"))
	var def struct {
		ID string `json:"chat_session_id"`
	}
	c.do(c.basic, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 0}).decode(t, &def)
	type session struct {
		PersonaID   int64   `json:"persona_id"`
		PersonaName *string `json:"persona_name"`
		Icon        *string `json:"personal_icon_name"`
	}
	for sid, want := range map[string]session{s: {id, ptrTo("Chatty"), ptrTo("rocket")}, def.ID: {0, ptrTo("Assistant"), nil}} {
		var got session
		c.do(c.basic, "GET", "/chat/get-chat-session/"+sid, nil).decode(t, &got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("session %s (-want +got):\n%s", sid, diff)
		}
	}
}
