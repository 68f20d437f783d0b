package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/chat"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/outbound"
	"github.com/quarryhq/quarry/store"
)

// POST /chat/send-chat-message: a question, and its answer streamed as
// Onyx v4.6.1 streams it (one JSON object a line: the session made with
// the question, if any; the ids of the question and the answer; then the
// packets) or whole (ChatFullResponse). Everything that can refuse the
// question does so before the answer begins, with a 4xx: the fields, the
// session, an empty question, the model, a question too long for it.
// Once the answer begins, a failure is an {"error": …} line inside the
// 200 (or ChatFullResponse's error_msg), and the answer's message keeps
// why. The question and the answer's reservation are committed before
// the model is asked; the answer is written when it ends, whatever became
// of the request. A client that goes away cuts the model's call.

// handleSendChatMessage serves POST /chat/send-chat-message.
func (s *Server) handleSendChatMessage(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in sendMessageRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	ctx := r.Context()
	if err := s.checkSendMessage(b); err != nil {
		return err
	}
	a, err := s.chatAssistant(ctx, c, b)
	if err != nil {
		return err
	}
	binding, err := s.chatModel(ctx, c, b, a)
	if err != nil {
		return err
	}
	turn, err := s.chatTurn(ctx, c, b, a, binding, r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	// The question fits the model before anything is stored.
	if strings.TrimSpace(b.Message) != "" {
		check := *turn
		check.History = []*quarry.ChatMessage{{Type: quarry.ChatUser, Message: b.Message}}
		if err := chat.CheckFits(&check); err != nil {
			return err
		}
	}
	start := quarry.ChatTurnInput{Message: b.Message, ParentID: b.parent(), ModelDisplayName: &binding.DisplayName}
	if id := value(b.ChatSessionID); id != nil {
		start.SessionID = id.String()
	} else if info := value(b.ChatSessionInfo); info != nil {
		start.NewSession = info.input()
	}
	t, err := s.db.StartChatTurn(ctx, c, start)
	if err != nil {
		return err
	}
	turn.History = t.History
	turn.Stopped = func(ctx context.Context) (bool, error) { return s.db.ChatStopRequested(ctx, t.Session.ID) }
	loop := &chat.Loop{Searcher: chatSearch{s.db}, Runner: chatRunner{s, r.Header.Get("Authorization")}, MaxSteps: s.cfg.Chat.MaxSteps,
		StopEvery: s.cfg.Chat.StopEvery}
	if !b.Stream {
		return s.answerWhole(w, r, loop, turn, t, binding)
	}
	return s.answerStreamed(w, r, loop, turn, t, binding)
}

// checkSendMessage refuses what Quarry does not do (400), and the test
// hook outside the test mode (Onyx's message).
func (s *Server) checkSendMessage(b *sendMessage) error {
	switch {
	case b.MockLLMResponse.Set() && !s.cfg.Chat.TestMode:
		return quarry.Errorf(quarry.EINVALID, "mock_llm_response can only be used when INTEGRATION_TESTS_MODE=true")
	case b.LLMOverrides.Set() && len(b.LLMOverrides.Value) > 1:
		return quarry.Errorf(quarry.EINVALID, "Quarry answers with one model at a time: llm_overrides with more than one entry (Onyx's multi-model mode) is not supported")
	case b.DeepResearch:
		return quarry.Errorf(quarry.EINVALID, "Deep research is not supported")
	case len(b.FileDescriptors) > 0:
		return quarry.Errorf(quarry.EINVALID, "Files attached to chat messages are not supported")
	case b.MCPHeaders.Set() && len(b.MCPHeaders.Value) > 0:
		return quarry.Errorf(quarry.EINVALID, "mcp_headers is not supported: the tools of MCP servers are called with each person's own credentials")
	}
	return nil
}

// chatAssistant returns the assistant that answers: the session's, or, for
// a new session, the one chat_session_info names. One the person may no
// longer chat with is refused (Onyx's 403) before anything is stored; a
// session that is not theirs is left to StartChatTurn to refuse.
func (s *Server) chatAssistant(ctx context.Context, c *quarry.Caller, b *sendMessage) (*quarry.DefaultAssistant, error) {
	sessionID, personaID := "", int64(quarry.DefaultPersonaID)
	if id := value(b.ChatSessionID); id != nil {
		sessionID = id.String()
	} else if info := value(b.ChatSessionInfo); info != nil {
		personaID = info.input().PersonaID
	}
	p, err := s.db.ChatPersona(ctx, c, sessionID, personaID)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return s.db.DefaultAssistant(ctx)
	}
	return s.db.Assistant(ctx, p)
}

// chatModel returns the model that answers (quarry.ChooseChatModel): as
// the request asks, else as assistant a does, of the providers the caller
// may use with a.
func (s *Server) chatModel(ctx context.Context, c *quarry.Caller, b *sendMessage, a *quarry.DefaultAssistant) (*chat.Binding, error) {
	var models ChatModels = providerModels{s}
	if s.cfg.Chat.Models != nil {
		models = s.cfg.Chat.Models
	}
	choice := quarry.ModelChoice{PersonaID: a.PersonaID, PersonaModelID: a.ModelConfigurationID}
	if o := b.override(); o != nil {
		choice.ModelConfigurationID = value(o.ModelConfigurationID)
		if p := value(o.ModelProvider); p != nil {
			choice.ProviderName = *p
		}
		if v := value(o.ModelVersion); v != nil {
			choice.ModelVersion = *v
		}
	}
	binding, err := models.ChatModel(ctx, c, choice)
	if err != nil {
		return nil, err
	}
	if binding.DisplayName == "" {
		binding.DisplayName = binding.Name
	}
	if m := value(b.MockLLMResponse); m != nil {
		binding.Model = chat.MockModel(*m)
	}
	return binding, nil
}

// chatTurn returns the turn to answer, but its history: the model,
// assistant a's instructions and tools (those the caller may use:
// the search for those who may search, the others for those who may run
// tools), narrowed to allowed_tool_ids, the forced tool, and the search's
// filters (internal_search_filters; document sets the caller may not see
// are refused), narrowed to a's document sets when it has any.
func (s *Server) chatTurn(ctx context.Context, c *quarry.Caller, b *sendMessage, a *quarry.DefaultAssistant, m *chat.Binding, authz string) (*chat.Turn, error) {
	t := &chat.Turn{Caller: c, Model: m.Model, ModelName: m.Name, MaxInputTokens: m.MaxInputTokens, Temperature: m.Temperature,
		SystemPrompt: a.Prompt(), Citations: b.IncludeCitations, Now: time.Now(), Debug: s.cfg.Chat.TestMode}
	if o := b.override(); o != nil && o.Temperature.Set() {
		t.Temperature = &o.Temperature.Value
	}
	if ctx := value(b.AdditionalContext); ctx != nil {
		t.Context = *ctx
	}
	if f := value(b.InternalSearchFilters); f != nil {
		t.Filters = f.filters()
		// Sets the person may not see are refused before the answer
		// begins, as Onyx's process_message refuses them (its 403
		// INSUFFICIENT_PERMISSIONS; a line of its stream there).
		if err := s.db.CheckDocumentSetNames(ctx, c, t.Filters.DocumentSets); err != nil {
			return nil, onyxCodedError{error: err}
		}
	}
	t.Filters.DocumentSetIDs = a.DocumentSetIDs
	allowed := func(id int64) bool {
		return !b.AllowedToolIDs.Set() || slices.Contains(b.AllowedToolIDs.Value, id)
	}
	t.SearchToolID = a.SearchToolID
	t.Search = a.Search && c.CanSearch() && allowed(t.SearchToolID)
	others := slices.ContainsFunc(a.ToolIDs, func(id int64) bool { return id != a.SearchToolID })
	if c.Has(quarry.PermBasic) && others {
		cat, err := s.catalogFor(ctx, s.mcp)
		if err != nil {
			return nil, err
		}
		var offered []chat.Tool
		for _, op := range cat.ops {
			if slices.Contains(a.ToolIDs, op.ToolID) && allowed(op.ToolID) {
				offered = append(offered, chat.Tool{ToolID: op.ToolID, Method: op.Method, ToolName: op.Prefix, MCP: op.FromMCP,
					Description: op.Description, Parameters: op.InputSchema})
			}
		}
		t.Tools = chat.NameTools(offered)
	}
	if id := value(b.ForcedToolID); id != nil {
		if *id == t.SearchToolID && t.Search {
			t.Forced = []string{chat.SearchToolName}
		}
		for _, tool := range t.Tools {
			if tool.ToolID == *id {
				t.Forced = append(t.Forced, tool.Name)
			}
		}
		if len(t.Forced) == 0 {
			return nil, quarry.Errorf(quarry.EINVALID, "Forced tool %d not found in tools", *id)
		}
	}
	return t, nil
}

// chatSearch is the chat's Searcher: the store's search, with the
// person's rights.
type chatSearch struct{ db *store.DB }

// Search implements chat.Searcher.
func (a chatSearch) Search(ctx context.Context, c *quarry.Caller, q string, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error) {
	return a.db.Search(ctx, c, index.ParseQuery(q), f, limit)
}

// chatRunner is the chat's ToolRunner: the runs of POST /tool/{id}/run and
// /mcp (Server.run, outbound.Service.RunTool), with the request's
// Authorization for passthrough tools; a refusal or failure is told the
// model with its status and message.
type chatRunner struct {
	s     *Server
	authz string
}

// RunTool implements chat.ToolRunner.
func (a chatRunner) RunTool(ctx context.Context, c *quarry.Caller, id int64, method string, args json.RawMessage) (*quarry.ToolRunResult, error) {
	res, rec, err := a.s.run(ctx, c, id, outbound.RunRequest{Method: method, Args: args, Authorization: a.authz})
	if err != nil {
		status, ok := statuses[quarry.ErrorCode(err)]
		if !ok {
			status = http.StatusInternalServerError
		}
		return nil, &chat.ToolFailure{IsAuth: rec != nil && rec.Outcome == quarry.RunNoToken, Status: status, Message: quarry.ErrorMessage(err)}
	}
	return res, nil
}

// streamingError is Onyx's StreamingError: a failure of an answer, as a
// line of its stream. Quarry sends no stack trace.
type streamingError struct {
	Error       string  `json:"error"`
	StackTrace  *string `json:"stack_trace"`
	ErrorCode   string  `json:"error_code"`
	IsRetryable bool    `json:"is_retryable"`
	Details     any     `json:"details"`
}

// answerFailure returns what the person is told of a failed answer, with
// Onyx's error_code and whether trying again may help.
func answerFailure(err error) streamingError {
	var me *quarry.ModelError
	if errors.As(err, &me) {
		code, retry := "API_ERROR", true
		switch s := me.Status; {
		case s == 0:
			code = "CONNECTION_ERROR"
		case s == http.StatusBadRequest:
			code = "BAD_REQUEST"
		case s == http.StatusUnauthorized:
			code, retry = "AUTH_ERROR", false
		case s == http.StatusForbidden:
			code, retry = "PERMISSION_DENIED", false
		case s == http.StatusNotFound:
			code, retry = "NOT_FOUND", false
		case s == http.StatusRequestEntityTooLarge:
			code, retry = "REQUEST_TOO_LARGE", false
		case s == http.StatusUnprocessableEntity:
			code = "UNPROCESSABLE_ENTITY"
		case s == http.StatusTooManyRequests:
			code = "RATE_LIMIT"
		case s == http.StatusServiceUnavailable:
			code = "SERVICE_UNAVAILABLE"
		}
		return streamingError{Error: me.Error(), ErrorCode: code, IsRetryable: retry}
	}
	if quarry.ErrorCode(err) == quarry.EINVALID {
		return streamingError{Error: quarry.ErrorMessage(err), ErrorCode: "VALIDATION_ERROR"}
	}
	return streamingError{Error: quarry.ErrorMessage(err), ErrorCode: "UNKNOWN_ERROR", IsRetryable: true}
}

// finish writes the answer in its reserved message: its text (a stopped
// one says so), or why it failed (Onyx's "Error from <model>: …").
func (s *Server) finish(ctx context.Context, t *quarry.ChatTurn, binding *chat.Binding, res *chat.Result, err error) {
	a := &quarry.ChatAnswer{MessageID: t.AnswerID, SessionID: t.Session.ID, Text: res.Text, Citations: res.Citations,
		ToolCalls: res.ToolCalls, ProcessingSeconds: res.ProcessingSeconds}
	switch {
	case res.Stopped || err != nil && errors.Is(ctx.Err(), context.Canceled):
		// Stopped by the person, or the person went away.
		if a.Text != "" {
			a.Text += quarry.ChatStoppedText
		} else {
			a.Text = quarry.ChatStoppedEmpty
		}
	case err != nil:
		msg := "Error from " + binding.DisplayName + ": " + answerFailure(err).Error
		a.Text, a.Error = msg, &msg
	}
	if ferr := s.db.FinishChatTurn(ctx, a); ferr != nil && ferr != quarry.ErrChatSessionNotFound {
		s.log.LogAttrs(ctx, slog.LevelError, "the answer could not be written", slog.String("request_id", quarry.RequestIDFrom(ctx)),
			slog.Int64("message_id", t.AnswerID), slog.String("error", ferr.Error()))
	}
}

// errTooSlow is an answer that took longer than the chat's time-out.
func (s *Server) errTooSlow() error {
	return quarry.Errorf(quarry.EGATEWAYTIMEOUT, "The answer took longer than %s, the longest an answer may take", s.chatTimeout())
}

// runError returns the error of a run that ended with err in ctx: the
// time-out's when ctx's time ran out.
func (s *Server) runError(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return s.errTooSlow()
	}
	return err
}

// logFailure logs why an answer failed, for the operator.
func (s *Server) logFailure(ctx context.Context, err error) {
	if err == nil || errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "chat answer failed", slog.String("request_id", quarry.RequestIDFrom(ctx)), slog.String("error", err.Error()))
}

// answerStreamed answers as Onyx's stream: a JSON object a line, each
// flushed as soon as it is made.
func (s *Server) answerStreamed(w http.ResponseWriter, r *http.Request, loop *chat.Loop, turn *chat.Turn, t *quarry.ChatTurn, binding *chat.Binding) error {
	ctx, cancel := context.WithTimeout(r.Context(), s.chatTimeout())
	defer cancel()
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.chatTimeout()))
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var gone bool
	send := func(b []byte, err error) {
		if gone {
			return
		}
		if err == nil {
			_, err = w.Write(b)
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			gone = true
			cancel() // The client went away: the model's call is cut.
		}
	}
	line := func(v any) { send(pythonJSONLine(v)) }
	var (
		delta []byte     // The answer's pieces, written without reflection.
		docs  streamDocs // The documents, encoded once for their two packets.
	)
	packet := func(p chat.Packet) {
		if d, ok := p.Obj.(chat.MessageDelta); ok {
			delta = appendDeltaLine(delta[:0], p.Placement, d.Content)
			send(delta, nil)
			return
		}
		if b, ok, err := docs.line(p); ok {
			send(b, err)
			return
		}
		line(streamed(p))
	}
	if t.NewSession {
		line(createChatSessionID{t.Session.ID, false})
	}
	line(struct {
		UserMessageID              int64 `json:"user_message_id"`
		ReservedAssistantMessageID int64 `json:"reserved_assistant_message_id"`
	}{t.Question.ID, t.AnswerID})
	res, err := loop.Run(ctx, turn, packet)
	err = s.runError(ctx, err)
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		line(answerFailure(err))
	}
	s.logFailure(ctx, err)
	s.finish(ctx, t, binding, res, err)
	return nil
}

// answerWhole answers as Onyx's ChatFullResponse.
func (s *Server) answerWhole(w http.ResponseWriter, r *http.Request, loop *chat.Loop, turn *chat.Turn, t *quarry.ChatTurn, binding *chat.Binding) error {
	ctx, cancel := context.WithTimeout(r.Context(), s.chatTimeout())
	defer cancel()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.chatTimeout()))
	var (
		top       []chatDoc
		citations = []citationInfo{}
	)
	res, err := loop.Run(ctx, turn, func(p chat.Packet) {
		switch o := p.Obj.(type) {
		case chat.MessageStart:
			top = chatDocs(o.Documents, false)
		case chat.Citation:
			citations = append(citations, citationOf(o.ChatCitation))
		}
	})
	err = s.runError(ctx, err)
	s.logFailure(ctx, err)
	s.finish(ctx, t, binding, res, err)
	if errors.Is(r.Context().Err(), context.Canceled) {
		return r.Context().Err() // The client went away.
	}
	out := chatFullResponse{Answer: res.Text, AnswerCitationless: chat.RemoveCitationLinks(res.Text), ToolCalls: []toolCallResponse{},
		TopDocuments: top, CitationInfo: citations, MessageID: t.AnswerID, ChatSessionID: t.Session.ID}
	if out.TopDocuments == nil {
		out.TopDocuments = []chatDoc{}
	}
	if err != nil {
		msg := answerFailure(err).Error
		out.ErrorMsg = &msg
	}
	for _, k := range res.ToolCalls {
		tr := toolCallResponse{ToolName: k.Name, ToolResult: k.Response}
		if json.Valid(k.Arguments) && bytes.HasPrefix(bytes.TrimSpace(k.Arguments), []byte("{")) {
			tr.ToolArguments = k.Arguments
		} else {
			tr.ToolArguments = json.RawMessage("{}")
		}
		if k.Name == chat.SearchToolName {
			docs := make([]quarry.SearchHit, len(k.Documents))
			for i, d := range k.Documents {
				docs[i] = d.SearchHit
			}
			tr.SearchDocs = chatDocs(docs, false)
		}
		out.ToolCalls = append(out.ToolCalls, tr)
	}
	return writeJSON(w, http.StatusOK, out)
}

// chatFullResponse is Onyx's ChatFullResponse.
type chatFullResponse struct {
	Answer             string             `json:"answer"`
	AnswerCitationless string             `json:"answer_citationless"`
	PreAnswerReasoning *string            `json:"pre_answer_reasoning"`
	ToolCalls          []toolCallResponse `json:"tool_calls"`
	TopDocuments       []chatDoc          `json:"top_documents"`
	CitationInfo       []citationInfo     `json:"citation_info"`
	MessageID          int64              `json:"message_id"`
	ChatSessionID      string             `json:"chat_session_id"`
	Incognito          bool               `json:"incognito"`
	ErrorMsg           *string            `json:"error_msg"`
}

// toolCallResponse is Onyx's ToolCallResponse.
type toolCallResponse struct {
	ToolName        string          `json:"tool_name"`
	ToolArguments   json.RawMessage `json:"tool_arguments"`
	ToolResult      string          `json:"tool_result"`
	SearchDocs      []chatDoc       `json:"search_docs"`
	GeneratedImages []any           `json:"generated_images"`
	PreReasoning    *string         `json:"pre_reasoning"`
}
