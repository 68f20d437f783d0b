package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/outbound"
)

// The chat end to end: the provider an admin configured, called by
// package outbound's client through the egress guard, and the scripted
// Chat Completions server (internal/llmtest) as the provider.

// chatLLM is a chat cast whose answers come from a configured provider.
type chatLLM struct {
	*chatCast
	llm *llmtest.Server
}

// newChatLLM starts the scripted provider and a server whose default model
// is its "llama" (a context window of 8,192 tokens, shown as "Llama").
func newChatLLM(t *testing.T, opts ...func(*api.Config)) *chatLLM {
	t.Helper()
	m := llmtest.New(t)
	m.SetKey(llmKey)
	m.SetModels("llama")
	opts = append([]func(*api.Config){allowLoopback, func(cfg *api.Config) {
		cfg.Chat.Models = nil
		cfg.Chat.ModelLimits = outbound.ModelLimits{Idle: 2 * time.Second}
	}}, opts...)
	c := newChatCast(t, opts...)
	var p struct {
		ID int64 `json:"id"`
	}
	c.putProvider(c.admin, true, fmt.Sprintf(`{"name": "local", "provider": "openai_compatible", "api_key": %q, "api_base": %q,
		"model_configurations": [{"name": "llama", "is_visible": true, "max_input_tokens": 8192, "display_name": "Llama"}]}`,
		llmKey, m.BaseURL())).decode(t, &p)
	c.do(c.admin, "POST", "/admin/llm/default", fmt.Sprintf(`{"provider_id": %d, "model_name": "llama"}`, p.ID)).want(t, 200, `null`)
	return &chatLLM{chatCast: c, llm: m}
}

// TestChatProvider asks through the configured provider: the model's
// search runs with the person's rights, what reaches the model is the
// person's question and the documents they may read, and the answer's
// citations are Onyx's packets.
func TestChatProvider(t *testing.T) {
	c := newChatLLM(t)
	c.llm.Push(
		llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_1", "internal_search", `{"queries": `, `["rock"]}`)}},
		llmtest.Text("Basalt is volcanic ", "[1]."),
	)
	id := c.session(t, c.basic)
	got := c.ask(t, c.basic, id, "Which rocks?")
	u, a := messageIDs(t, got)
	if got[0] != fmt.Sprintf(`{"user_message_id": %d, "reserved_assistant_message_id": %d}`, u, a) {
		t.Errorf("first line %s", got[0])
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		`{"type": "search_tool_start", "is_internet_search": false}`,
		`{"type": "search_tool_queries_delta", "queries": ["rock"]}`,
		`"type": "citation_info", "citation_number": 1, "document_id": "basalt"`,
		`{"type": "stop", "stop_reason": null}`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s in\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "granite") || strings.Contains(joined, `"error"`) {
		t.Errorf("a document basic may not read, or an error:\n%s", joined)
	}
	reqs := c.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests reached the model", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if first.Model != "llama" || !first.Stream || first.Header.Get("Authorization") != "Bearer "+llmKey {
		t.Errorf("first request: model %q, stream %v, authorization %q", first.Model, first.Stream, first.Header.Get("Authorization"))
	}
	if n := len(first.Messages); n != 2 || first.Messages[0].Role != "system" || first.Messages[1].Role != "user" ||
		first.Messages[1].Content != "Which rocks?" {
		t.Errorf("first request's messages %+v", first.Messages)
	}
	if len(first.Tools) == 0 || first.Tools[0].Name != "internal_search" {
		t.Errorf("first request's tools %+v", first.Tools)
	}
	var result string
	for _, m := range second.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_1" {
			result = m.Content
		}
	}
	if !strings.Contains(result, "Basalt is a volcanic rock.") || strings.Contains(result, "Granite") {
		t.Errorf("the search's result the model read: %s", result)
	}
	// The session reads back, the answer cited and named by its model.
	s := c.read(t, c.basic, id, "")
	ans := s.Messages[len(s.Messages)-1]
	if ans.Message != "Basalt is volcanic [[1]](https://wiki.example.com/basalt)." || ans.Citations["1"] == "" ||
		ans.ModelDisplayName == nil || *ans.ModelDisplayName != "Llama" {
		t.Errorf("answer read back: %+v", ans)
	}
	// The curator, in group A, finds granite too: the rights are those of
	// the person who asks.
	c.llm.Push(llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_2", "internal_search", `{"queries": ["rock"]}`)}},
		llmtest.Text("Both."))
	c.ask(t, c.curator, c.session(t, c.curator), "Which rocks?")
	reqs = c.llm.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(fmt.Sprint(last.Messages), "Granite is a plutonic rock") {
		t.Errorf("the curator's search did not reach granite: %+v", last.Messages)
	}
}

// TestChatProviderFaults: a provider that refuses, fails, sends malformed
// chunks or stalls gives the person a clear error line inside the 200;
// the answer keeps why; the session stays whole and the next question is
// answered.
func TestChatProviderFaults(t *testing.T) {
	c := newChatLLM(t)
	id := c.session(t, c.basic)
	for _, tc := range []struct {
		name   string
		script llmtest.Script
		key    string // The provider's key, if not llmKey.
		want   string // The error line.
	}{
		{name: "401", key: "sk-other-0123456789abcdefghij",
			want: `{"error": "the model's provider answered 401: the provider refused the key", "stack_trace": null, "error_code": "AUTH_ERROR", "is_retryable": false, "details": null}`},
		{name: "429", script: llmtest.Script{Status: 429, Headers: llmtest.RetryAfter(7), Error: llmtest.APIError{Message: "Slow down.", Type: "rate_limit_error"}},
			want: `{"error": "the model's provider answered 429: the provider is limiting requests; retry after 7s: Slow down.", "stack_trace": null, "error_code": "RATE_LIMIT", "is_retryable": true, "details": null}`},
		{name: "500", script: llmtest.Script{Status: 500, Error: llmtest.APIError{Message: "The server had an error.", Type: "server_error"}},
			want: `{"error": "the model's provider answered 500: the provider failed: The server had an error.", "stack_trace": null, "error_code": "API_ERROR", "is_retryable": true, "details": null}`},
		{name: "malformed", script: llmtest.Script{Text: []string{"Half"}, Fault: llmtest.Malformed, After: 2},
			want: `{"error": "the model's provider failed: the provider sent a chunk that is not Chat Completions JSON", "stack_trace": null, "error_code": "CONNECTION_ERROR", "is_retryable": true, "details": null}`},
		{name: "error chunk", script: llmtest.Script{Text: []string{"Half"}, Fault: llmtest.ErrorChunk, After: 2, Error: llmtest.APIError{Message: "Overloaded.", Type: "server_error"}},
			want: `{"error": "the model's provider failed: the provider failed in the middle of the answer: Overloaded.", "stack_trace": null, "error_code": "CONNECTION_ERROR", "is_retryable": true, "details": null}`},
		{name: "stall", script: llmtest.Script{Text: []string{"Half"}, Fault: llmtest.Stall, After: 2},
			want: `{"error": "the model's provider failed: the provider sent nothing for 2s in the middle of the answer", "stack_trace": null, "error_code": "CONNECTION_ERROR", "is_retryable": true, "details": null}`},
		{name: "cut", script: llmtest.Script{Text: []string{"Half"}, Fault: llmtest.Cut, After: 2},
			want: `{"error": "the model's provider failed: the provider cut the connection before the answer was complete", "stack_trace": null, "error_code": "CONNECTION_ERROR", "is_retryable": true, "details": null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.key != "" {
				c.llm.SetKey(tc.key)
				defer c.llm.SetKey(llmKey)
			} else {
				c.llm.Push(tc.script)
			}
			got := c.ask(t, c.basic, id, "q "+tc.name)
			if last := got[len(got)-1]; last != tc.want {
				t.Errorf("error line\n got %s\nwant %s", last, tc.want)
			}
			_, a := messageIDs(t, got)
			var e struct {
				Error string `json:"error"`
			}
			json.Unmarshal([]byte(got[len(got)-1]), &e)
			s := c.read(t, c.basic, id, "")
			ans := s.Messages[len(s.Messages)-1]
			if ans.MessageID != a || ans.Error == nil || *ans.Error != "Error from Llama: "+e.Error || ans.Message != *ans.Error {
				t.Errorf("the failed answer read back: %+v", ans)
			}
		})
	}
	// A slow provider, within the idle limit, answers.
	c.llm.Push(llmtest.Script{Text: []string{"Slow ", "but ", "sure."}, Delay: 300 * time.Millisecond})
	if got := c.ask(t, c.basic, id, "slowly"); !strings.Contains(strings.Join(got, "\n"), `"content": "sure."`) ||
		strings.Contains(strings.Join(got, "\n"), `"error": "`) {
		t.Errorf("slow: %v", got)
	}
	// The session is whole and the server answers.
	c.llm.Push(llmtest.Text("Fine."))
	if got := c.ask(t, c.basic, id, "again"); !strings.Contains(strings.Join(got, "\n"), `"content": "Fine."`) {
		t.Errorf("after the faults: %v", got)
	}
	s := c.read(t, c.basic, id, "")
	if n := len(s.Messages); n != 1+2*9 {
		t.Errorf("%d messages, want %d", n, 1+2*9)
	}
}

// TestChatProviderDisconnect: a client that goes away mid-answer cuts the
// provider's call (which would otherwise stall for the idle limit), and
// the answer keeps what came before.
func TestChatProviderDisconnect(t *testing.T) {
	c := newChatLLM(t, func(cfg *api.Config) { cfg.Chat.ModelLimits.Idle = time.Minute })
	id := c.session(t, c.basic)
	c.llm.Push(llmtest.Script{Text: []string{"Before"}, Fault: llmtest.Stall, After: 2})
	body, _ := json.Marshal(map[string]any{"message": "q", "chat_session_id": id})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", c.srv.URL+"/chat/send-chat-message", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+c.basic.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"content": "Before"`) {
	}
	left := time.Now()
	cancel()
	res.Body.Close()
	var ans string
	for range 250 { // The answer is written once the model's call ends.
		s := c.read(t, c.basic, id, "")
		if ans = s.Messages[len(s.Messages)-1].Message; ans != quarry.ChatReservedText {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ans != "Before ... \n\nGeneration was stopped by the user." {
		t.Errorf("answer %q", ans)
	}
	// Well within the minute the stalled call would have waited.
	if waited := time.Since(left); waited > 30*time.Second {
		t.Errorf("the call ended %s after the client left", waited)
	}
}

// TestChatProviderToolFaults: calls the loop cannot make (an unknown tool,
// arguments of the wrong shape, arguments that are not JSON at all) are
// answered to the model, which then answers; the stream holds no error.
func TestChatProviderToolFaults(t *testing.T) {
	c := newChatLLM(t)
	c.llm.Push(
		llmtest.Script{ToolCalls: []llmtest.ToolCall{
			llmtest.Call("call_a", "rm_rf", `{}`),
			llmtest.Call("call_b", "internal_search", `{"queries": `, `5}`),
			llmtest.Call("call_c", "internal_search", `{"queries": [`),
		}},
		llmtest.Text("Sorry, I could not search."),
	)
	got := c.ask(t, c.basic, c.session(t, c.basic), "Search badly")
	joined := strings.Join(got, "\n")
	stop := `{"placement": {"turn_index": 1, "tab_index": 0, "sub_turn_index": null, "model_index": 0}, "obj": {"type": "stop", "stop_reason": null}}`
	if strings.Contains(joined, `"error": "`) || got[len(got)-1] != stop {
		t.Errorf("stream:\n%s", joined)
	}
	reqs := c.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	want := map[string]string{
		"call_a": `Tool failed with error: There is no tool named "rm_rf"; the tools are internal_search`,
		"call_b": `Tool failed with error: 'queries' must be an array of strings, like: {"queries": ["your search query here"]}`,
		"call_c": `Tool failed with error: The internal_search tool requires a 'queries' parameter containing an array of search queries. Please provide the queries like: {"queries": ["your search query here"]}`,
	}
	for id, w := range want {
		if results[id] != w {
			t.Errorf("%s: the model read %q, want %q", id, results[id], w)
		}
	}
}
