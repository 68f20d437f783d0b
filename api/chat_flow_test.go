package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/mcptest"
)

// ask sends a question as u in session id and returns the stream's lines.
func (c *chatCast) ask(t *testing.T, u user, id, message string, extra ...any) []string {
	t.Helper()
	body := map[string]any{"message": message, "chat_session_id": id}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return lines(t, c.do(u, "POST", "/chat/send-chat-message", body))
}

// messageIDs returns the ids the stream's lines begin with.
func messageIDs(t *testing.T, ls []string) (user, assistant int64) {
	t.Helper()
	for _, l := range ls {
		var ids struct {
			User      *int64 `json:"user_message_id"`
			Assistant int64  `json:"reserved_assistant_message_id"`
		}
		if json.Unmarshal([]byte(l), &ids) == nil && ids.User != nil {
			return *ids.User, ids.Assistant
		}
	}
	t.Fatalf("no message ids in %v", ls)
	return 0, 0
}

// chatSession reads a session back.
type chatSessionBody struct {
	ChatSessionID string `json:"chat_session_id"`
	Description   string `json:"description"`
	SharedStatus  string `json:"shared_status"`
	Deleted       bool   `json:"deleted"`
	OwnerName     string `json:"owner_name"`
	Messages      []struct {
		MessageID          int64             `json:"message_id"`
		ParentMessage      *int64            `json:"parent_message"`
		LatestChildMessage *int64            `json:"latest_child_message"`
		Message            string            `json:"message"`
		MessageType        string            `json:"message_type"`
		ContextDocs        []json.RawMessage `json:"context_docs"`
		Citations          map[string]string `json:"citations"`
		Error              *string           `json:"error"`
		CurrentFeedback    *string           `json:"current_feedback"`
		ModelDisplayName   *string           `json:"model_display_name"`
	} `json:"messages"`
	Packets [][]json.RawMessage `json:"packets"`
}

func (c *chatCast) read(t *testing.T, u user, id string, query string) chatSessionBody {
	t.Helper()
	var out chatSessionBody
	c.do(u, "GET", "/chat/get-chat-session/"+id+query, nil).decode(t, &out)
	return out
}

// TestChatSessions covers a session's life through the API: questions,
// an answer asked for again, reading it back (messages, documents,
// citations, the packets of each answer), the listing, renaming, sharing,
// feedback, and deleting; on both databases, with a second replica
// reading what the first wrote.
func TestChatSessions(t *testing.T) {
	c := newChatCast(t)
	id := c.session(t, c.basic)
	c.model.then(
		callTools(quarry.ModelToolCall{ID: "call_1", Name: "internal_search", Arguments: `{"queries": ["basalt"]}`}),
		say("Basalt is volcanic [1]."),
		say("It cools fast."),
		say("Basalt is a volcanic rock."),
	)
	q1, a1 := messageIDs(t, c.ask(t, c.basic, id, "What is basalt?"))
	q2, a2 := messageIDs(t, c.ask(t, c.basic, id, "Does it cool fast?"))
	// The first question asked again: no new question, a new answer.
	q3, a3 := messageIDs(t, c.ask(t, c.basic, id, "", "parent_message_id", q1))
	if q3 != q1 || a3 <= a2 {
		t.Fatalf("regenerated: question %d answer %d", q3, a3)
	}
	// What the model read for the regenerated answer: only the question.
	if r := c.model.last(); len(r.Messages) != 2 || r.Messages[1].Content != "What is basalt?" {
		t.Errorf("regenerated from %+v", r.Messages)
	}
	replica := c.replica()
	s := (&chatCast{fxCast: &fxCast{fx: fx{replica}}}).read(t, c.basic, id, "")
	if s.Description != "rocks" || s.SharedStatus != "private" || s.OwnerName != "basic" || len(s.Messages) != 6 || len(s.Packets) != 3 {
		t.Fatalf("session read back: %+v", s)
	}
	byID := map[int64]int{}
	for i, m := range s.Messages {
		byID[m.MessageID] = i
	}
	root := s.Messages[0]
	if root.MessageType != "system" || root.ParentMessage != nil || *root.LatestChildMessage != q1 {
		t.Errorf("root %+v", root)
	}
	first := s.Messages[byID[a1]]
	if first.Message != "Basalt is volcanic [[1]](https://wiki.example.com/basalt)." || len(first.ContextDocs) != 1 ||
		first.Citations["1"] != "basalt" || *first.ModelDisplayName != "GPT Test" || first.Error != nil {
		t.Errorf("first answer %+v", first)
	}
	if q := s.Messages[byID[q1]]; *q.LatestChildMessage != a3 {
		t.Errorf("the question continues from %d, want the regenerated answer %d", *q.LatestChildMessage, a3)
	}
	if q := s.Messages[byID[q2]]; *q.ParentMessage != a1 {
		t.Errorf("the follow-up's parent %d", *q.ParentMessage)
	}
	// The packets that show the first answer again: the search in step 0,
	// the text in step 1, its citation in step 2, the stop.
	var types []string
	for _, p := range s.Packets[0] {
		var x struct {
			Placement struct {
				Turn  int  `json:"turn_index"`
				Model *int `json:"model_index"`
			} `json:"placement"`
			Obj struct {
				Type string `json:"type"`
			} `json:"obj"`
		}
		json.Unmarshal(p, &x)
		if x.Placement.Model != nil {
			t.Errorf("replayed packet with a model_index: %s", p)
		}
		types = append(types, fmt.Sprintf("%d:%s", x.Placement.Turn, x.Obj.Type))
	}
	if got := strings.Join(types, " "); got != "0:search_tool_start 0:search_tool_queries_delta 0:search_tool_documents_delta 0:section_end "+
		"1:message_start 1:message_delta 1:section_end 2:citation_info 2:section_end 2:stop" {
		t.Errorf("replayed packets: %s", got)
	}

	// The listing: newest change first.
	other := c.session(t, c.basic)
	var list struct {
		Sessions []struct {
			ID           string `json:"id"`
			Name         string `json:"name"`
			TimeCreated  string `json:"time_created"`
			SharedStatus string `json:"shared_status"`
		} `json:"sessions"`
		HasMore bool `json:"has_more"`
	}
	c.do(c.basic, "GET", "/chat/get-user-chat-sessions?page_size=1", nil).decode(t, &list)
	if len(list.Sessions) != 1 || !list.HasMore || list.Sessions[0].TimeCreated != "2026-11-21T10:15:30.123456+00:00" {
		t.Errorf("listing %+v", list)
	}
	c.do(c.basic, "GET", "/chat/get-user-chat-sessions", nil).decode(t, &list)
	if len(list.Sessions) != 2 || list.HasMore {
		t.Errorf("listing %+v", list)
	}
	c.do(c.other, "GET", "/chat/get-user-chat-sessions", nil).want(t, 200, `{"sessions": [], "has_more": false}`)
	c.do(c.basic, "GET", "/chat/get-user-chat-sessions?before=yesterday", nil).want(t, 400, `{"detail": "Invalid 'before' timestamp format"}`)
	c.do(c.basic, "GET", "/chat/get-user-chat-sessions?project_id=3", nil).want(t, 200, `{"sessions": [], "has_more": false}`)

	// Renaming: a name given, or the first question.
	c.do(c.basic, "PUT", "/chat/rename-chat-session", map[string]any{"chat_session_id": id, "name": "Volcanic"}).want(t, 200, `{"new_name": "Volcanic"}`)
	c.do(c.basic, "PUT", "/chat/rename-chat-session", map[string]any{"chat_session_id": id}).want(t, 200, `{"new_name": "What is basalt?"}`)
	c.do(c.basic, "PUT", "/chat/rename-chat-session", map[string]any{"chat_session_id": other, "name": ""}).want(t, 200, `{"new_name": "New Chat"}`)
	c.do(c.other, "PUT", "/chat/rename-chat-session", map[string]any{"chat_session_id": id, "name": "mine"}).want(t, 404, `{"detail": "Chat session not found"}`)

	// Sharing: others read it through its link, without its documents
	// they may not read.
	c.do(c.other, "GET", "/chat/get-chat-session/"+id+"?is_shared=true", nil).want(t, 403, `{"detail": "Chat session is not shared"}`)
	c.do(c.other, "PATCH", "/chat/chat-session/"+id, `{"sharing_status": "public"}`).want(t, 404, `{"detail": "Chat session not found"}`)
	c.do(c.basic, "PATCH", "/chat/chat-session/"+id, `{"sharing_status": "public"}`).want(t, 200, `null`)
	c.do(c.other, "GET", "/chat/get-chat-session/"+id, nil).want(t, 403, `{"detail": "Access denied"}`)
	if s := c.read(t, c.other, id, "?is_shared=true"); len(s.Messages) != 6 || s.SharedStatus != "public" {
		t.Errorf("shared %+v", s)
	}

	// Feedback on answers.
	c.do(c.basic, "POST", "/chat/create-chat-message-feedback", map[string]any{"chat_message_id": a1, "is_positive": false, "feedback_text": "vague"}).want(t, 200, `null`)
	c.do(c.basic, "POST", "/chat/create-chat-message-feedback", map[string]any{"chat_message_id": a1, "is_positive": true}).want(t, 200, `null`)
	c.do(c.basic, "POST", "/chat/create-chat-message-feedback", map[string]any{"chat_message_id": q1, "is_positive": true}).want(t, 400,
		`{"detail": "Can only provide feedback on LLM Outputs"}`)
	c.do(c.other, "POST", "/chat/create-chat-message-feedback", map[string]any{"chat_message_id": a1, "is_positive": true}).want(t, 404,
		`{"detail": "Chat message not found"}`)
	feedback := func() *string {
		s := c.read(t, c.basic, id, "")
		return s.Messages[byID[a1]].CurrentFeedback
	}
	if f := feedback(); f == nil || *f != "like" {
		t.Errorf("feedback %v", f)
	}
	c.do(c.basic, "DELETE", fmt.Sprintf("/chat/remove-chat-message-feedback?chat_message_id=%d", a1), nil).want(t, 200, `null`)
	if f := feedback(); f != nil {
		t.Errorf("feedback after removal %v", *f)
	}

	// Deleting: soft (kept, read when asked for), hard, all.
	c.do(c.basic, "DELETE", "/chat/delete-chat-session/"+id, nil).want(t, 200, `null`)
	c.do(c.basic, "GET", "/chat/get-chat-session/"+id, nil).want(t, 404, `{"detail": "Chat session has been deleted"}`)
	if s := c.read(t, c.basic, id, "?include_deleted=true"); !s.Deleted {
		t.Errorf("deleted %+v", s)
	}
	c.do(c.other, "GET", "/chat/get-chat-session/"+id+"?include_deleted=true", nil).want(t, 403, `{"detail": "Access denied"}`)
	c.do(c.basic, "DELETE", "/chat/delete-chat-session/"+other+"?hard_delete=true", nil).want(t, 200, `null`)
	c.do(c.basic, "GET", "/chat/get-chat-session/"+other+"?include_deleted=true", nil).want(t, 404, `{"detail": "Chat session not found"}`)
	third := c.session(t, c.basic)
	c.do(c.basic, "DELETE", "/chat/delete-all-chat-sessions", nil).want(t, 200, `null`)
	c.do(c.basic, "GET", "/chat/get-chat-session/"+third, nil).want(t, 404, `{"detail": "Chat session has been deleted"}`)
	c.do(c.basic, "GET", "/chat/get-user-chat-sessions", nil).want(t, 200, `{"sessions": [], "has_more": false}`)
}

// TestChatTools offers the model the default assistant's custom tool and
// MCP server's tool, run as the person through the tool runtime (the
// egress guard, the audit log), with the packets Onyx sends for them.
func TestChatTools(t *testing.T) {
	c := newChatCast(t, allowLoopback)
	items := newItemsServer(t)
	var tool struct {
		ID int64 `json:"id"`
	}
	c.do(c.admin, "POST", "/admin/tool/custom", map[string]any{"name": "Items", "definition": json.RawMessage(itemsDefinition(items.URL))}).decode(t, &tool)
	up := mcptest.Start(t, mcptest.Options{})
	server := c.setUpMCPServer(c.admin, fmt.Sprintf(`{"name":"kit","server_url":%q,"auth_type":"NONE","auth_performer":"ADMIN"}`, up.URL))
	mcpTools := c.syncMCPTools(c.admin, server, "echo")
	// The default assistant offers the search alone until an admin adds
	// tools to it.
	var conf struct {
		ToolIDs []int64 `json:"tool_ids"`
	}
	c.do(c.admin, "GET", "/admin/default-assistant/configuration", nil).decode(t, &conf)
	c.do(c.basic, "GET", "/admin/default-assistant/configuration", nil).want(t, 403, `{"detail": "Access denied. User is not an admin."}`)
	c.do(c.admin, "PATCH", "/admin/default-assistant", map[string]any{"tool_ids": []int64{conf.ToolIDs[0], tool.ID, mcpTools["echo"]}}).decode(t, new(any))
	c.do(c.admin, "PATCH", "/admin/default-assistant", map[string]any{"tool_ids": []int64{mcpTools["add"]}}).want(t, 400,
		`{"detail": "Enable tool add before assigning it"}`)

	id := c.session(t, c.basic)
	c.model.then(
		callTools(
			quarry.ModelToolCall{ID: "a", Name: "getItem", Arguments: `{"id": 7}`},
			quarry.ModelToolCall{ID: "b", Name: "echo", Arguments: `{"message": "hi"}`},
			quarry.ModelToolCall{ID: "c", Name: "createItem", Arguments: `{"name": 5}`},
			quarry.ModelToolCall{ID: "d", Name: "rm_rf", Arguments: `{}`},
		),
		say("Done."),
	)
	got := c.ask(t, c.basic, id, "Get item 7 and say hi")
	offered := []string{}
	for _, d := range c.model.requests[0].Tools {
		offered = append(offered, d.Name)
	}
	if strings.Join(offered, " ") != "internal_search createItem getItem slow whoami echo" {
		t.Errorf("offered %v", offered)
	}
	var toolLines []string
	for _, l := range got {
		if strings.Contains(l, `"custom_tool_`) {
			toolLines = append(toolLines, l)
		}
	}
	pl := func(tab int) string {
		return fmt.Sprintf(`{"placement": {"turn_index": 0, "tab_index": %d, "sub_turn_index": null, "model_index": 0}, "obj": `, tab)
	}
	want := []string{
		pl(0) + fmt.Sprintf(`{"type": "custom_tool_start", "tool_name": "getItem", "tool_id": %d}}`, tool.ID),
		pl(0) + fmt.Sprintf(`{"type": "custom_tool_delta", "tool_name": "getItem", "tool_id": %d, "response_type": "json", "data": {"id": 7, "verbose": "", "key": ""}, "file_ids": null, "error": null}}`, tool.ID),
		pl(1) + fmt.Sprintf(`{"type": "custom_tool_start", "tool_name": "echo", "tool_id": %d}}`, mcpTools["echo"]),
		pl(1) + fmt.Sprintf(`{"type": "custom_tool_delta", "tool_name": "echo", "tool_id": %d, "response_type": "json", "data": {"content": [{"type": "text", "text": "echo: hi"}]}, "file_ids": null, "error": null}}`, mcpTools["echo"]),
		pl(2) + fmt.Sprintf(`{"type": "custom_tool_start", "tool_name": "createItem", "tool_id": %d}}`, tool.ID),
	}
	if len(toolLines) != 6 {
		t.Fatalf("tool packets:\n%s", strings.Join(toolLines, "\n"))
	}
	for i, w := range want {
		if toolLines[i] != w {
			t.Errorf("packet %d:\n got %s\nwant %s", i, toolLines[i], w)
		}
	}
	if !strings.Contains(toolLines[5], `"error": {"is_auth_error": false, "status_code": 400, "message": `) {
		t.Errorf("bad arguments: %s", toolLines[5])
	}
	// What the model read of each call.
	results := map[string]string{}
	for _, m := range c.model.last().Messages {
		if m.Role == quarry.ModelToolResult {
			results[m.ToolCallID] = m.Content
		}
	}
	if results["a"] != `{"id":7,"verbose":"","key":""}` || results["b"] != "echo: hi" || !strings.HasPrefix(results["c"], "Tool failed with error: ") ||
		!strings.HasPrefix(results["d"], `Tool failed with error: There is no tool named "rm_rf"; the tools are internal_search, createItem`) {
		t.Errorf("results %v", results)
	}
	// The runs were the person's, in the audit log.
	entries := c.audit(fmt.Sprintf("resource_type=tool&resource_id=%d", tool.ID))
	if fxCount(entries, "tool.run") != 2 {
		t.Errorf("audit %+v", entries)
	}
	// Read back, the calls show again.
	s := c.read(t, c.basic, id, "")
	var replay []string
	for _, p := range s.Packets[0] {
		if strings.Contains(string(p), `"custom_tool_`) {
			replay = append(replay, string(p))
		}
	}
	if len(replay) != 9 || !strings.Contains(replay[1], `"custom_tool_args"`) || !strings.Contains(replay[2], `"data":{"id":7,"verbose":"","key":""}`) {
		t.Errorf("replayed:\n%s", strings.Join(replay, "\n"))
	}
	// allowed_tool_ids narrows what is offered.
	c.model.then(say("ok"))
	c.ask(t, c.basic, id, "again", "allowed_tool_ids", []int64{mcpTools["echo"]})
	if r := c.model.last(); len(r.Tools) != 1 || r.Tools[0].Name != "echo" {
		t.Errorf("allowed: %+v", r.Tools)
	}
	c.do(c.basic, "POST", "/chat/send-chat-message", map[string]any{"message": "x", "chat_session_id": id, "forced_tool_id": 9999}).want(t, 400,
		`{"detail": "Forced tool 9999 not found in tools"}`)
}

// TestChatFailures: a model that fails mid-answer, an answer stopped by
// the person from another replica, and a client that goes away; each
// keeps the session consistent and the server serving.
func TestChatFailures(t *testing.T) {
	c := newChatCast(t, func(cfg *api.Config) { cfg.Chat.StopEvery = 5 * time.Millisecond })
	id := c.session(t, c.basic)

	// The provider fails after some text.
	c.model.then(func(_ context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		each(quarry.ModelEvent{Text: "Half"})
		return &quarry.ModelError{Status: 429, Message: "rate limited, retry after 2s"}
	})
	got := c.ask(t, c.basic, id, "q1")
	last := got[len(got)-1]
	if last != `{"error": "the model's provider answered 429: rate limited, retry after 2s", "stack_trace": null, "error_code": "RATE_LIMIT", "is_retryable": true, "details": null}` {
		t.Errorf("error line %s", last)
	}
	_, a1 := messageIDs(t, got)

	// Stopped by the person, on another replica.
	started := make(chan struct{})
	var cut error
	c.model.then(func(ctx context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		each(quarry.ModelEvent{Text: "Partial"})
		close(started)
		<-ctx.Done()
		cut = ctx.Err()
		return ctx.Err()
	})
	replica := c.replica()
	go func() {
		<-started
		replica.do(c.basic, "POST", "/chat/stop-chat-session/"+id, nil).want(t, 200, `{"message": "Chat session stopped"}`)
	}()
	got = c.ask(t, c.basic, id, "q2")
	if last := got[len(got)-1]; last != `{"placement": {"turn_index": 0, "tab_index": 0, "sub_turn_index": null, "model_index": 0}, "obj": {"type": "stop", "stop_reason": "user_cancelled"}}` || cut == nil {
		t.Errorf("stopped: %s (model cut: %v)", last, cut)
	}
	_, a2 := messageIDs(t, got)
	c.do(c.other, "POST", "/chat/stop-chat-session/"+id, nil).want(t, 404, `{"detail": "Chat session not found"}`)

	// The client goes away mid-answer: the model's call is cut.
	reached := make(chan struct{})
	gone := make(chan error, 1)
	c.model.then(func(ctx context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		each(quarry.ModelEvent{Text: "Before"})
		close(reached)
		select {
		case <-ctx.Done():
			gone <- ctx.Err()
		case <-time.After(10 * time.Second):
			gone <- nil
		}
		return ctx.Err()
	})
	body, _ := json.Marshal(map[string]any{"message": "q3", "chat_session_id": id})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", c.srv.URL+"/chat/send-chat-message", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+c.basic.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Scan() // The ids.
	var ids struct {
		Assistant int64 `json:"reserved_assistant_message_id"`
	}
	json.Unmarshal(sc.Bytes(), &ids)
	<-reached
	cancel()
	res.Body.Close()
	if err := <-gone; err == nil {
		t.Fatal("the model's call went on after the client left")
	}

	// The session is whole: each answer says what became of it.
	var s chatSessionBody
	for range 100 { // The last answer is written once its run ends.
		s = c.read(t, c.basic, id, "")
		if len(s.Messages) == 7 && s.Messages[6].Message != quarry.ChatReservedText {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := map[int64]string{
		a1:            "Error from GPT Test: the model's provider answered 429: rate limited, retry after 2s",
		a2:            "Partial ... \n\nGeneration was stopped by the user.",
		ids.Assistant: "Before ... \n\nGeneration was stopped by the user.",
	}
	for _, m := range s.Messages {
		if w, ok := want[m.MessageID]; ok && m.Message != w {
			t.Errorf("answer %d: %q, want %q", m.MessageID, m.Message, w)
		}
		if m.MessageID == a1 && (m.Error == nil || *m.Error != want[a1]) {
			t.Errorf("the failed answer's error %v", m.Error)
		}
	}
	// The server still answers.
	c.model.then(say("Fine."))
	if got := c.ask(t, c.basic, id, "q4"); !strings.Contains(strings.Join(got, "\n"), `"content": "Fine."`) {
		t.Errorf("after the failures: %v", got)
	}
}

// TestChatWhole asks without streaming: Onyx's ChatFullResponse, and a
// failure in its error_msg; and mock_llm_response, honoured only in the
// test mode.
func TestChatWhole(t *testing.T) {
	c := newChatCast(t, func(cfg *api.Config) { cfg.Chat.TestMode = true })
	c.model.then(
		callTools(quarry.ModelToolCall{ID: "s", Name: "internal_search", Arguments: `{"queries": ["basalt"]}`}),
		say("Basalt is volcanic [1]."),
	)
	r := c.do(c.basic, "POST", "/chat/send-chat-message", map[string]any{"message": "What is basalt?", "stream": false,
		"chat_session_info": map[string]any{"description": "new"}})
	var out struct {
		Answer             string `json:"answer"`
		AnswerCitationless string `json:"answer_citationless"`
		ToolCalls          []struct {
			ToolName      string            `json:"tool_name"`
			ToolArguments map[string]any    `json:"tool_arguments"`
			SearchDocs    []json.RawMessage `json:"search_docs"`
		} `json:"tool_calls"`
		TopDocuments []json.RawMessage `json:"top_documents"`
		CitationInfo []map[string]any  `json:"citation_info"`
		MessageID    int64             `json:"message_id"`
		SessionID    string            `json:"chat_session_id"`
		ErrorMsg     *string           `json:"error_msg"`
	}
	r.decode(t, &out)
	if out.Answer != "Basalt is volcanic [[1]](https://wiki.example.com/basalt)." || out.AnswerCitationless != "Basalt is volcanic." ||
		len(out.ToolCalls) != 1 || out.ToolCalls[0].ToolName != "internal_search" || len(out.ToolCalls[0].SearchDocs) != 1 ||
		len(out.TopDocuments) != 1 || len(out.CitationInfo) != 1 || out.CitationInfo[0]["document_id"] != "basalt" ||
		out.ErrorMsg != nil || !uuidPattern.MatchString(out.SessionID) || out.MessageID == 0 {
		t.Errorf("whole answer %s", r.body)
	}
	c.model.then(func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error {
		return &quarry.ModelError{Status: 401, Message: "the provider refused the key"}
	})
	r = c.do(c.basic, "POST", "/chat/send-chat-message", map[string]any{"message": "again", "stream": false, "chat_session_id": out.SessionID})
	r.decode(t, &out)
	if out.Answer != "" || out.ErrorMsg == nil || *out.ErrorMsg != "the model's provider answered 401: the provider refused the key" {
		t.Errorf("failed whole answer %s", r.body)
	}
	// The test hook.
	got := c.ask(t, c.basic, out.SessionID, "hi", "mock_llm_response", "A mocked answer")
	if !strings.Contains(strings.Join(got, "\n"), `"content": "A mocked answer"`) {
		t.Errorf("mocked: %v", got)
	}
	off := newChatCast(t)
	off.do(off.basic, "POST", "/chat/send-chat-message", map[string]any{"message": "hi", "mock_llm_response": "x"}).want(t, 400,
		`{"detail": "mock_llm_response can only be used when INTEGRATION_TESTS_MODE=true"}`)
}

// TestChatConcurrentQuestions asks several questions of one session at
// once: each is stored with its answer, none lost.
func TestChatConcurrentQuestions(t *testing.T) {
	c := newChatCast(t)
	id := c.session(t, c.basic)
	const n = 8
	for range n {
		c.model.then(say("ok"))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.ask(t, c.basic, id, fmt.Sprint("q", i))
		}()
	}
	wg.Wait()
	s := c.read(t, c.basic, id, "")
	if len(s.Messages) != 1+2*n {
		t.Errorf("%d messages, want %d", len(s.Messages), 1+2*n)
	}
}
