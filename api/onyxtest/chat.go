package onyxtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The chat: Onyx v4.6.1's ChatSessionManager
// (common_utils/managers/chat.py) and the replays of tests/chat/,
// llm_workflows/test_mock_llm_tool_calls.py and
// permissions/test_chat_scopes.py. Onyx's CI answers with OpenAI (the
// llm_provider fixture's key); the replays' provider is
// LLMProviderManager.create's, its api_base the scripted server of the
// Target (ModelBase), so that the model answers on loopback.

// ---- ChatSessionManager (chat.py) ----

// daChatSession is DATestChatSession.
type daChatSession struct {
	ID          string
	PersonaID   int64
	Description string
}

// createChatSession is ChatSessionManager.create: persona 0, "Test chat
// session" unless described.
func (c client) createChatSession(by User, description string) (daChatSession, error) {
	if description == "" {
		description = "Test chat session"
	}
	var out struct {
		ID string `json:"chat_session_id"`
	}
	r, err := c.do(by, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 0, "description": description, "project_id": nil})
	if err != nil {
		return daChatSession{}, err
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return daChatSession{}, err
	}
	return daChatSession{ID: out.ID, Description: description}, nil
}

// toolCallDebug is ToolCallDebug, as analyze_response reads it.
type toolCallDebug struct {
	ToolCallID string
	ToolName   string
	ToolArgs   map[string]any
}

// streamedResponse is StreamedResponse, the parts the replays read.
type streamedResponse struct {
	FullMessage        string
	AssistantMessageID int64
	ToolCallDebug      []toolCallDebug
	UsedTools          map[int]string // The tool_name of each ToolResult, by turn (ind_to_tool_use).
	Error              *string
}

// sendArgs are send_message's optional arguments.
type sendArgs struct {
	ForcedToolIDs   []int64
	AllowedToolIDs  []int64 // nil: None.
	MockLLMResponse *string
}

// sendChatMessage is ChatSessionManager.send_message: SendMessageRequest
// as model_dump(mode="json") sends it, read by analyze_response.
func (c client) sendChatMessage(id, message string, by User, a sendArgs) (streamedResponse, error) {
	return analyzeResponse(c.postChatMessage(id, message, by, a))
}

// postChatMessage sends send_message's request and returns the answer.
func (c client) postChatMessage(id, message string, by User, a sendArgs) *Response {
	var forced *int64
	if len(a.ForcedToolIDs) > 0 {
		forced = &a.ForcedToolIDs[0]
	}
	body := map[string]any{"message": message, "llm_override": nil, "llm_overrides": nil, "mock_llm_response": a.MockLLMResponse,
		"allowed_tool_ids": a.AllowedToolIDs, "forced_tool_id": forced, "file_descriptors": []any{}, "internal_search_filters": nil,
		"deep_research": false, "mcp_headers": nil, "origin": "unset", "parent_message_id": -1, "chat_session_id": id,
		"chat_session_info": nil, "stream": true, "include_citations": true, "additional_context": nil}
	return c.tg.Do(by, "POST", "/chat/send-chat-message", body)
}

// analyzeResponse is ChatSessionManager.analyze_response.
func analyzeResponse(r *Response) (streamedResponse, error) {
	var out streamedResponse
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var data struct {
			Reserved  int64           `json:"reserved_assistant_message_id"`
			Error     any             `json:"error"`
			Obj       json.RawMessage `json:"obj"`
			Placement struct {
				TurnIndex int `json:"turn_index"`
			} `json:"placement"`
		}
		if err := json.Unmarshal(sc.Bytes(), &data); err != nil {
			return out, fmt.Errorf("json.loads of a line: %w: %s", err, clip(sc.Bytes()))
		}
		var obj struct {
			Type       string         `json:"type"`
			Error      any            `json:"error"`
			Content    string         `json:"content"`
			ToolCallID string         `json:"tool_call_id"`
			ToolName   string         `json:"tool_name"`
			ToolArgs   map[string]any `json:"tool_args"`
		}
		if len(data.Obj) > 0 {
			json.Unmarshal(data.Obj, &obj)
		}
		switch {
		case data.Reserved != 0:
			out.AssistantMessageID = data.Reserved
		case data.Error != nil && data.Error != "":
			e := fmt.Sprint(data.Error)
			out.Error = &e
		case obj.Type == "error" || obj.Error != nil && obj.Error != "":
			e := "Streaming error"
			if obj.Error != nil {
				e = fmt.Sprint(obj.Error)
			}
			out.Error = &e
		case obj.Type == "message_start", obj.Type == "message_delta":
			out.FullMessage += obj.Content
		case obj.Type == "search_tool_start":
			if out.UsedTools == nil {
				out.UsedTools = map[int]string{}
			}
			out.UsedTools[data.Placement.TurnIndex] = "internal_search"
		case obj.Type == "tool_call_debug":
			out.ToolCallDebug = append(out.ToolCallDebug, toolCallDebug{obj.ToolCallID, obj.ToolName, obj.ToolArgs})
		}
	}
	if out.AssistantMessageID == 0 && out.Error == nil {
		return out, fmt.Errorf("Assistant message id not found (status %d: %s)", r.Status, clip(r.Body))
	}
	return out, nil
}

// daChatMessage is DATestChatMessage, the parts the replays read.
type daChatMessage struct {
	ID          int64  `json:"message_id"`
	Message     string `json:"message"`
	MessageType string `json:"message_type"`
}

// chatHistory is ChatSessionManager.get_chat_history.
func (c client) chatHistory(s daChatSession, by User) ([]daChatMessage, error) {
	var out struct {
		Messages []daChatMessage `json:"messages"`
	}
	r, err := c.do(by, "GET", "/chat/get-chat-session/"+s.ID, nil)
	if err != nil {
		return nil, err
	}
	return out.Messages, json.Unmarshal(r.Body, &out)
}

// deleteChatSession is ChatSessionManager.soft_delete (hard false) and
// hard_delete (hard true): whether the answer was not an error.
func (c client) deleteChatSession(s daChatSession, by User, hard bool) bool {
	r := c.tg.Do(by, "DELETE", fmt.Sprintf("/chat/delete-chat-session/%s?hard_delete=%t", s.ID, hard), nil)
	return r.Status < 400
}

// verifyChatDeleted is ChatSessionManager.verify_deleted: a 404.
func (c client) verifyChatDeleted(s daChatSession, by User) bool {
	return c.tg.Do(by, "GET", "/chat/get-chat-session/"+s.ID, nil).Status == 404
}

// verifyChatSoftDeleted is ChatSessionManager.verify_soft_deleted.
func (c client) verifyChatSoftDeleted(s daChatSession, by User) bool {
	r := c.tg.Do(by, "GET", "/chat/get-chat-session/"+s.ID+"?include_deleted=true", nil)
	var out struct {
		Deleted bool `json:"deleted"`
	}
	return r.Status == 200 && json.Unmarshal(r.Body, &out) == nil && out.Deleted
}

// verifyChatHardDeleted is ChatSessionManager.verify_hard_deleted.
func (c client) verifyChatHardDeleted(s daChatSession, by User) bool {
	return c.tg.Do(by, "GET", "/chat/get-chat-session/"+s.ID+"?include_deleted=true", nil).Status != 200
}

// ---- fixtures ----

// chatFixtures are conftest's admin_user, basic_user and the chat modules'
// llm_provider fixture: LLMProviderManager.create, its api_base the
// Target's scripted server.
func chatFixtures(t *testing.T, c client) (admin, basic daUser) {
	t.Helper()
	admin = adminUser(t, c)
	basic = must(c.createUser("basic_user", ""))(t)
	if c.tg.ModelBase == "" {
		t.Fatal("the chat replays need Target.ModelBase")
	}
	base := c.tg.ModelBase
	must(c.createLLMProvider(admin.caller(), llmProviderArgs{APIBase: &base}))(t)
	return admin, basic
}

// searchToolID is test_mock_llm_tool_calls.py's
// _get_internal_search_tool_id: the tool whose in_code_tool_id is
// SearchTool, in ToolManager.list_tools.
func (c client) searchToolID(t *testing.T, by User) int64 {
	t.Helper()
	var tools []struct {
		ID           int64   `json:"id"`
		InCodeToolID *string `json:"in_code_tool_id"`
	}
	r := must(c.do(by, "GET", "/tool", nil))(t)
	must(0, json.Unmarshal(r.Body, &tools))(t)
	i := slices.IndexFunc(tools, func(x struct {
		ID           int64   `json:"id"`
		InCodeToolID *string `json:"in_code_tool_id"`
	}) bool {
		return x.InCodeToolID != nil && *x.InCodeToolID == "SearchTool"
	})
	check(t, i >= 0, "SearchTool must exist for this test")
	return tools[i].ID
}

// ---- tests/chat/, llm_workflows/, permissions/test_chat_scopes.py ----

var chatReplays = slices.Concat(chatPersonaAccessReplays, chatDocumentSetReplays, chatSessionAccessReplays, chatDeletionReplays, mockToolCallReplays, chatScopeReplays, []Replay{
	{Name: "chat/test_chat_session_persona_access.py/test_create_chat_session_with_default_persona_succeeds", Run: func(t *testing.T, c client) {
		_, basic := chatFixtures(t, c)
		r := c.tg.Do(basic.caller(), "POST", "/chat/create-chat-session", map[string]any{"persona_id": 0, "description": "Test with default persona"})
		check(t, r.Status == 200, "default persona: %d %s", r.Status, clip(r.Body))
		_, ok := must(keys(r, "chat_session_id"))(t)["chat_session_id"]
		check(t, ok, "no chat_session_id: %s", clip(r.Body))
	}},
})

// getChatSession is test_chat_session_access.py's _get_chat_session.
func (c client) getChatSession(id string, by User, query string) *Response {
	return c.tg.Do(by, "GET", "/chat/get-chat-session/"+id+query, nil)
}

// secondUser is test_chat_session_access.py's second_user fixture.
func secondUser(t *testing.T, c client) User {
	return must(c.createUser("second_basic_user", ""))(t).caller()
}

// sessionRead is a read of a chat session by a person, with the query
// (is_shared) it asks, and the status it must get.
type sessionRead struct {
	by    User
	query string
	want  int
}

// sessionAccess reads session id as each of reads says and checks the
// statuses.
func (c client) sessionAccess(t *testing.T, id string, reads []sessionRead) {
	t.Helper()
	for _, r := range reads {
		got := c.getChatSession(id, r.by, r.query)
		check(t, got.Status == r.want, "%s%s: %d, want %d: %s", id, r.query, got.Status, r.want, clip(got.Body))
	}
}

var chatSessionAccessReplays = []Replay{
	{Name: "chat/test_chat_session_access.py/test_private_chat_session_access", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic, second := basicU.caller(), secondUser(t, c)
		s := must(c.createChatSession(basic, ""))(t)
		c.sessionAccess(t, s.ID, []sessionRead{{basic, "", 200}, {basic, "?is_shared=true", 403}, {second, "", 403}, {second, "?is_shared=true", 403}})
	}},
	{Name: "chat/test_chat_session_access.py/test_public_shared_chat_session_access", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic, second := basicU.caller(), secondUser(t, c)
		s := must(c.createChatSession(basic, ""))(t)
		r := c.tg.Do(basic, "PATCH", "/chat/chat-session/"+s.ID, map[string]any{"sharing_status": "public"})
		check(t, r.Status == 200, "share: %d %s", r.Status, clip(r.Body))
		c.sessionAccess(t, s.ID, []sessionRead{{basic, "", 200}, {basic, "?is_shared=true", 200}, {second, "", 403}, {second, "?is_shared=true", 200}})
	}},
	{Name: "chat/test_chat_session_access.py/test_deleted_chat_session_access", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic, second := basicU.caller(), secondUser(t, c)
		s := must(c.createChatSession(basic, ""))(t)
		check(t, c.deleteChatSession(s, basic, false), "soft_delete")
		r := c.getChatSession(s.ID, basic, "")
		check(t, r.Status == 404, "deleted: %d", r.Status)
		r = c.getChatSession(s.ID, basic, "?include_deleted=true")
		check(t, r.Status == 200 && string(must(keys(r, "deleted"))(t)["deleted"]) == "true", "include_deleted: %d %s", r.Status, clip(r.Body))
		r = c.getChatSession(s.ID, second, "?include_deleted=true")
		check(t, r.Status == 403, "another's include_deleted: %d", r.Status)
	}},
	{Name: "chat/test_chat_session_access.py/test_chat_session_not_found_returns_404", Run: func(t *testing.T, c client) {
		_, basic := chatFixtures(t, c)
		r := c.getChatSession(uuid.NewString(), basic.caller(), "")
		check(t, r.Status == 404, "unknown id: %d", r.Status)
	}},
	{Name: "chat/test_chat_session_access.py/test_stop_chat_session_rejects_non_owner", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic, second := basicU.caller(), secondUser(t, c)
		s := must(c.createChatSession(basic, ""))(t)
		for _, tc := range []struct {
			id   string
			by   User
			want int
		}{{s.ID, basic, 200}, {s.ID, second, 404}, {uuid.NewString(), second, 404}} {
			r := c.tg.Do(tc.by, "POST", "/chat/stop-chat-session/"+tc.id, nil)
			check(t, r.Status == tc.want, "stop %s: %d, want %d: %s", tc.id, r.Status, tc.want, clip(r.Body))
		}
	}},
}

// chatMessage is test_chat_deletion.py's MESSAGE.
const chatMessage = "Hi"

// askAndCheck sends message in s and asserts what the module's tests
// assert of the answer: no error, some text.
func (c client) askAndCheck(t *testing.T, s daChatSession, message string, by User) {
	t.Helper()
	r := must(c.sendChatMessage(s.ID, message, by, sendArgs{}))(t)
	check(t, r.Error == nil, "Chat response should not have an error: %v", r.Error)
	check(t, len(r.FullMessage) > 0, "Chat response should not be empty")
}

var chatDeletionReplays = []Replay{
	{Name: "chat/test_chat_deletion.py/test_soft_delete_chat_session", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic := basicU.caller()
		s := must(c.createChatSession(basic, "Test chat session for soft deletion"))(t)
		c.askAndCheck(t, s, chatMessage, basic)
		check(t, len(must(c.chatHistory(s, basic))(t)) > 0, "Chat session should have messages")
		check(t, c.deleteChatSession(s, basic, false), "Chat session soft deletion should succeed")
		check(t, c.verifyChatSoftDeleted(s, basic), "Chat session should be soft deleted")
		check(t, c.verifyChatDeleted(s, basic), "Chat session should not be accessible normally after soft delete")
	}},
	{Name: "chat/test_chat_deletion.py/test_hard_delete_chat_session", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic := basicU.caller()
		s := must(c.createChatSession(basic, "Test chat session for hard deletion"))(t)
		c.askAndCheck(t, s, chatMessage, basic)
		check(t, len(must(c.chatHistory(s, basic))(t)) > 0, "Chat session should have messages")
		check(t, c.deleteChatSession(s, basic, true), "Chat session hard deletion should succeed")
		check(t, c.verifyChatHardDeleted(s, basic), "Chat session should be hard deleted")
		check(t, c.verifyChatDeleted(s, basic), "Chat session should not be accessible after hard delete")
		check(t, !c.verifyChatSoftDeleted(s, basic), "Hard deleted chat should not be found as soft deleted")
	}},
	{Name: "chat/test_chat_deletion.py/test_multiple_soft_deletions", Run: func(t *testing.T, c client) {
		c.multipleDeletions(t, false)
	}},
	{Name: "chat/test_chat_deletion.py/test_multiple_hard_deletions_with_agent_data", Run: func(t *testing.T, c client) {
		c.multipleDeletions(t, true)
	}},
	{Name: "chat/test_chat_deletion.py/test_soft_vs_hard_delete_edge_cases", Run: func(t *testing.T, c client) {
		_, basicU := chatFixtures(t, c)
		basic := basicU.caller()
		soft := must(c.createChatSession(basic, "Empty chat session for soft delete"))(t)
		check(t, c.deleteChatSession(soft, basic, false), "Empty chat session should be soft deletable")
		check(t, c.verifyChatSoftDeleted(soft, basic), "Empty chat session should be confirmed as soft deleted")
		hard := must(c.createChatSession(basic, "Empty chat session for hard delete"))(t)
		check(t, c.deleteChatSession(hard, basic, true), "Empty chat session should be hard deletable")
		check(t, c.verifyChatHardDeleted(hard, basic), "Empty chat session should be confirmed as hard deleted")
		multi := must(c.createChatSession(basic, "Multi-message chat session for soft delete"))(t)
		for i := range 3 {
			must(c.sendChatMessage(multi.ID, fmt.Sprintf("Message %d: Tell me about different aspects of this topic", i), basic, sendArgs{}))(t)
		}
		check(t, len(must(c.chatHistory(multi, basic))(t)) >= 3, "Chat should have multiple messages")
		check(t, c.deleteChatSession(multi, basic, false), "Multi-message chat session should be soft deletable")
		check(t, c.verifyChatSoftDeleted(multi, basic), "Multi-message chat session should be confirmed as soft deleted")
	}},
}

// multipleDeletions is test_multiple_soft_deletions and
// test_multiple_hard_deletions_with_agent_data.
func (c client) multipleDeletions(t *testing.T, hard bool) {
	_, basicU := chatFixtures(t, c)
	basic := basicU.caller()
	kind := map[bool]string{false: "soft", true: "hard"}[hard]
	var sessions []daChatSession
	for i := range 3 {
		s := must(c.createChatSession(basic, fmt.Sprintf("Test chat session %d for multi-%s-deletion", i, kind)))(t)
		must(c.sendChatMessage(s.ID, fmt.Sprintf("Tell me about topic %d with detailed analysis", i), basic, sendArgs{}))(t)
		sessions = append(sessions, s)
	}
	for _, s := range sessions {
		check(t, c.deleteChatSession(s, basic, hard), "Failed to %s delete chat %s", kind, s.ID)
	}
	for _, s := range sessions {
		if hard {
			check(t, c.verifyChatHardDeleted(s, basic), "Chat %s should be hard deleted", s.ID)
		} else {
			check(t, c.verifyChatSoftDeleted(s, basic), "Chat %s should be soft deleted", s.ID)
		}
		check(t, c.verifyChatDeleted(s, basic), "Chat %s should not be accessible", s.ID)
	}
}

// mockToolCall runs one of test_mock_llm_tool_calls.py's tests: a
// connector for the search tool, a provider with the module's dummy key,
// a session, and the question with the search forced and mock as the
// model's answer; want are the calls tool_call_debug shows.
func (c client) mockToolCall(t *testing.T, question, mock string, want ...string) {
	admin := adminUser(t, c)
	must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
	base := c.tg.ModelBase
	must(c.createLLMProvider(admin.caller(), llmProviderArgs{APIKey: "sk-mock-llm-workflow-tests", APIBase: &base}))(t)
	s := must(c.createChatSession(admin.caller(), ""))(t)
	search := c.searchToolID(t, admin.caller())
	r := must(c.sendChatMessage(s.ID, question, admin.caller(), sendArgs{ForcedToolIDs: []int64{search}, MockLLMResponse: &mock}))(t)
	check(t, r.Error == nil, "Unexpected stream error: %v", r.Error)
	check(t, len(r.ToolCallDebug) == len(want), "%d tool_call_debug, want %d", len(r.ToolCallDebug), len(want))
	for i, w := range want {
		got := r.ToolCallDebug[i]
		check(t, got.ToolName == "internal_search", "tool_name %q", got.ToolName)
		args, _ := json.Marshal(got.ToolArgs)
		check(t, string(args) == w, "tool_args %s, want %s", args, w)
	}
}

var mockToolCallReplays = []Replay{
	{Name: "llm_workflows/test_mock_llm_tool_calls.py/test_mock_llm_response_single_tool_call_debug", Run: func(t *testing.T, c client) {
		c.mockToolCall(t, "run the search tool", `{"name":"internal_search","arguments":{"queries":["alpha"]}}`, `{"queries":["alpha"]}`)
	}},
	{Name: "llm_workflows/test_mock_llm_tool_calls.py/test_mock_llm_response_parallel_tool_call_debug", Run: func(t *testing.T, c client) {
		c.mockToolCall(t, "run the search tool twice", strings.Join([]string{
			`{"name":"internal_search","arguments":{"queries":["alpha"]}}`,
			`{"name":"internal_search","arguments":{"queries":["beta"]}}`,
		}, "\n"), `{"queries":["alpha"]}`, `{"queries":["beta"]}`)
	}},
	{Name: "llm_workflows/test_mock_llm_tool_calls.py/test_mock_llm_response_embedded_json_fallback_tool_call_debug", Run: func(t *testing.T, c client) {
		c.mockToolCall(t, "use the search tool", `I will call a tool now. {"name":"internal_search","arguments":{"queries":["gamma"]}}`, `{"queries":["gamma"]}`)
	}},
}

// The routes of test_chat_scopes.py.
const chatScopeSession = "00000000-0000-0000-0000-000000000000"

var (
	readChatRoute  = [2]string{"GET", "/chat/get-user-chat-sessions"}
	writeChatRoute = [2]string{"POST", "/chat/stop-chat-session/" + chatScopeSession}
	basicOnlyRoute = [2]string{"DELETE", "/chat/delete-chat-session/" + chatScopeSession}
	chatDepRoute   = [2]string{"GET", "/chat/get-chat-session/" + chatScopeSession}
)

// scopedToken is PATManager.scoped_auth_headers: a token of
// permission_basic_user's with scopes (Onyx mints it in its database;
// the replay asks Quarry's route).
func (c client) scopedToken(t *testing.T, scopes ...string) User {
	t.Helper()
	pat := must(c.createPAT("chat_scope_test_pat", nil, patBasicUser(t, c), scopes))(t)
	return User{Token: deref(pat.Token)}
}

// requestStatus is http_client.request_status.
func (c client) requestStatus(u User, route [2]string) int {
	return c.tg.Do(u, route[0], route[1], nil).Status
}

var chatScopeReplays = func() []Replay {
	type probe struct {
		route [2]string
		ok    func(int) bool
		want  string
	}
	below400 := func(s int) bool { return s > 0 && s < 400 }
	is403 := func(s int) bool { return s == 403 }
	not403 := func(s int) bool { return s != 403 && s != 0 }
	scoped := func(name, scope string, probes ...probe) Replay {
		return Replay{Name: "permissions/test_chat_scopes.py/" + name, Run: func(t *testing.T, c client) {
			u := c.scopedToken(t, scope)
			for _, p := range probes {
				s := c.requestStatus(u, p.route)
				check(t, p.ok(s), "%s %s: %d, want %s", p.route[0], p.route[1], s, p.want)
			}
		}}
	}
	return []Replay{
		scoped("test_read_chat_reaches_read_route", "read:chat", probe{readChatRoute, below400, "< 400"}),
		scoped("test_read_chat_denied_on_write_route", "read:chat", probe{writeChatRoute, is403, "403"}),
		scoped("test_read_chat_denied_on_basic_route", "read:chat", probe{basicOnlyRoute, is403, "403"}),
		scoped("test_write_chat_reaches_read_route", "write:chat", probe{readChatRoute, below400, "< 400"}),
		scoped("test_write_chat_reaches_write_route", "write:chat", probe{writeChatRoute, not403, "not 403"}),
		scoped("test_write_chat_denied_on_delete", "write:chat", probe{basicOnlyRoute, is403, "403"}),
		scoped("test_read_chat_reaches_chat_dep_route", "read:chat", probe{chatDepRoute, not403, "not 403"}),
		scoped("test_non_chat_scope_denied_on_chat_dep_route", "read:search", probe{chatDepRoute, is403, "403"}),
		{Name: "permissions/test_chat_scopes.py/test_limited_service_account_reaches_chat", Run: func(t *testing.T, c client) {
			f := newPermissionFixtures(t, c, false, true)
			u := f.limited.caller()
			for _, p := range []probe{{readChatRoute, below400, "< 400"}, {writeChatRoute, not403, "not 403"}, {basicOnlyRoute, is403, "403"}} {
				s := c.requestStatus(u, p.route)
				check(t, p.ok(s), "%s %s: %d, want %s", p.route[0], p.route[1], s, p.want)
			}
		}},
	}
}()
