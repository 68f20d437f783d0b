// Package llmtest is a scripted OpenAI-compatible Chat Completions server
// for tests: it answers POST …/chat/completions as OpenAI documents it
// (https://platform.openai.com/docs/api-reference/chat), streamed as
// server-sent events (data: {chunk} lines, data: [DONE] last) or in one
// JSON object, with the answer a test scripts: text in pieces, calls of
// tools with their arguments in pieces, a finish reason, usage, an error
// answer with its status, or a fault (slow chunks, a stall, a stream cut
// or ended early, a malformed chunk, an error in the stream, an endless
// body, a huge chunk, endless headers). A script is chosen per request: the
// first whose marker the last user message holds (On), else the next of
// the queue (Push), else the default (SetDefault). The server records
// every request it received (Requests), so that a test asserts what
// reached the model.
//
// The official clients read it as they read OpenAI (llmtest_test.go with
// openai-go, node_test.go with npm's openai package), so that a server of
// its shape is what production talks to. It is for tests only.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a scripted Chat Completions server on loopback.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	key      string
	models   []string
	markers  []marked
	queue    []Script
	fallback Script
	requests []Request
	record   bool                  // Whether requests are kept (Requests).
	chooser  func(*Request) Script // Chooses every script, when set (Choose).
	done     chan struct{}         // Closed when the test ends: stalls give up.
}

type marked struct {
	marker string
	script Script
}

// Script is the answer to one request: Text and ToolCalls streamed in
// their pieces, then FinishReason and Usage; or, with Status set, an error
// answer; and a Fault, if any, after After chunks.
type Script struct {
	// Text is the answer's text, one piece a chunk.
	Text []string
	// ToolCalls are the calls of tools the answer makes, after its text.
	ToolCalls []ToolCall
	// FinishReason is the last chunk's finish_reason; "" means
	// "tool_calls" when there are calls, "stop" otherwise.
	FinishReason string
	// Usage is sent as the last chunk when the request asks for it
	// (stream_options.include_usage), and in every answer not streamed;
	// nil means 10 prompt tokens and one completion token a piece.
	Usage *Usage
	// Delay is waited before each chunk.
	Delay time.Duration

	// Status, when not 0, makes the answer an error: this status, with
	// Error as its body ({"error": {...}}), and Headers.
	Status  int
	Error   APIError
	Headers map[string]string

	// Fault breaks the answer after After chunks (the first, with the
	// role, counts).
	Fault Fault
	After int
}

// ToolCall is a call of a tool, its arguments sent in pieces.
type ToolCall struct {
	ID        string
	Name      string
	Arguments []string
}

// Usage is what an answer cost, in tokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// APIError is the body of an error answer, as OpenAI's: {"error":
// {"message", "type", "param", "code"}}.
type APIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Fault is a way an answer goes wrong.
type Fault int

// The faults.
const (
	NoFault Fault = iota
	// Stall sends nothing more and holds the connection until the client
	// goes (or the test ends).
	Stall
	// Cut closes the connection in the middle of the body.
	Cut
	// End ends the body cleanly, with neither a finish_reason nor [DONE].
	End
	// Malformed sends a chunk that is not JSON, then the rest.
	Malformed
	// ErrorChunk sends an error object as a chunk ({"error": {...}}, with
	// Error), as OpenAI does when it fails in the middle of an answer,
	// and ends the body.
	ErrorChunk
	// Endless sends content pieces without end, until the client goes
	// (at most EndlessBytes).
	Endless
	// HugeChunk sends one data line of EndlessBytes without a line end.
	HugeChunk
	// EndlessHeaders answers with headers without end (at most
	// EndlessBytes of them), before any body.
	EndlessHeaders
)

// EndlessBytes bounds what an endless answer writes, so that the server
// stops by itself when a client does not.
const EndlessBytes = 256 << 20

// Created is the "created" time of every answer, in Unix seconds.
const Created = 1700000000

// Request is a request the server received, as it decoded it.
type Request struct {
	Header       http.Header
	Body         []byte // As it came.
	Model        string
	Messages     []Message
	Tools        []Tool
	Stream       bool
	IncludeUsage bool
	MaxTokens    *int // max_completion_tokens, or max_tokens.
	Temperature  *float64
}

// Message is a message of a request.
type Message struct {
	Role       string
	Content    string // Text parts joined.
	ToolCalls  []RequestToolCall
	ToolCallID string
}

// RequestToolCall is a call of a tool in an assistant message of a request.
type RequestToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Tool is a function tool a request offers.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// New starts a server that lives as long as tb; its default answer is the
// text "OK".
func New(tb testing.TB) *Server {
	s := &Server{fallback: Script{Text: []string{"OK"}}, record: true, done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(func() {
		close(s.done)
		s.Close()
	})
	return s
}

// NewHandler returns a server that is not started, for a caller that
// serves it (quarry bench's load of the chat): it keeps no requests, so
// that a long load does not grow it, and its script is chosen by choose.
func NewHandler(choose func(*Request) Script) *Server {
	return &Server{chooser: choose, done: make(chan struct{})}
}

// ServeHTTP answers one request, as the server started by New does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(w, r) }

// BaseURL is the server's api_base: its URL with /v1, as OpenAI's.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// SetKey makes the server accept only requests with the bearer token key
// (401, as OpenAI's, for others); "" accepts any.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	s.key = key
	s.mu.Unlock()
}

// SetModels makes the server know only the models named (404, as
// OpenAI's, for others); none knows every model.
func (s *Server) SetModels(names ...string) {
	s.mu.Lock()
	s.models = names
	s.mu.Unlock()
}

// Push queues scripts for the next requests that no marker chooses.
func (s *Server) Push(scripts ...Script) {
	s.mu.Lock()
	s.queue = append(s.queue, scripts...)
	s.mu.Unlock()
}

// On answers every request whose last user message holds marker with sc.
func (s *Server) On(marker string, sc Script) {
	s.mu.Lock()
	s.markers = append(s.markers, marked{marker, sc})
	s.mu.Unlock()
}

// SetDefault answers the requests that no marker and no queued script
// choose with sc.
func (s *Server) SetDefault(sc Script) {
	s.mu.Lock()
	s.fallback = sc
	s.mu.Unlock()
}

// Requests returns the requests received so far, in order (those that
// reached the model: a request refused for its key, its model or its
// shape is not recorded).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Text is a script that answers the text in pieces.
func Text(pieces ...string) Script { return Script{Text: pieces} }

// Call is a call of tool name, its arguments in pieces.
func Call(id, name string, arguments ...string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: arguments}
}

// Errorf is a script that answers status with an error of OpenAI's shape.
func Errorf(status int, typ, code, format string, args ...any) Script {
	e := APIError{Message: fmt.Sprintf(format, args...), Type: typ}
	if code != "" {
		e.Code = &code
	}
	return Script{Status: status, Error: e}
}

func strp(s string) *string { return &s }

// serve answers one request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, APIError{Message: "Unknown request URL: " + r.Method + " " + r.URL.Path +
			". Please check the URL for typos, or see the docs at https://platform.openai.com/docs/api-reference/.",
			Type: "invalid_request_error", Code: strp("unknown_url")}, nil)
		return
	}
	s.mu.Lock()
	key, models := s.key, s.models
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		// OpenAI's words (it shows the key's ends; this server shows none).
		writeError(w, http.StatusUnauthorized, APIError{Message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
			Type: "invalid_request_error", Code: strp("invalid_api_key")}, nil)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return
	}
	req, apiErr := parseRequest(body)
	if apiErr != nil {
		writeError(w, http.StatusBadRequest, *apiErr, nil)
		return
	}
	req.Header, req.Body = r.Header.Clone(), body
	if len(models) > 0 && !contains(models, req.Model) {
		writeError(w, http.StatusNotFound, APIError{Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model),
			Type: "invalid_request_error", Code: strp("model_not_found")}, nil)
		return
	}
	sc := s.choose(req)
	if sc.Status != 0 {
		writeError(w, sc.Status, sc.Error, sc.Headers)
		return
	}
	if !req.Stream {
		s.answer(w, req, sc)
		return
	}
	s.stream(w, r, req, sc)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// choose returns req's script (the chooser's, when set), and records req
// (for New's servers).
func (s *Server) choose(req *Request) Script {
	if s.chooser != nil {
		return s.chooser(req)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.record {
		s.requests = append(s.requests, *req)
	}
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	for _, m := range s.markers {
		if strings.Contains(last, m.marker) {
			return m.script
		}
	}
	if len(s.queue) > 0 {
		sc := s.queue[0]
		s.queue = s.queue[1:]
		return sc
	}
	return s.fallback
}

// writeError writes an error answer of OpenAI's shape.
func writeError(w http.ResponseWriter, status int, e APIError, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]APIError{"error": e})
}

// toolName is what OpenAI accepts as a function's name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// parseRequest decodes a request's body as OpenAI does, refusing what it
// refuses with its words: a body that is not a JSON object, no model, no
// messages, a message of an unknown role, a tool message that answers no
// call, a tool whose name OpenAI refuses.
func parseRequest(body []byte) (*Request, *APIError) {
	bad := func(param, format string, args ...any) *APIError {
		e := &APIError{Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}
		if param != "" {
			e.Param = &param
		}
		return e
	}
	var in struct {
		Model    *string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		MaxTokens           *int     `json:"max_tokens"`
		MaxCompletionTokens *int     `json:"max_completion_tokens"`
		Temperature         *float64 `json:"temperature"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, bad("", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
	}
	if in.Model == nil || *in.Model == "" {
		return nil, bad("model", "you must provide a model parameter")
	}
	if len(in.Messages) == 0 {
		return nil, bad("messages", "[] is too short - 'messages'")
	}
	req := &Request{Model: *in.Model, Stream: in.Stream, Temperature: in.Temperature, MaxTokens: in.MaxCompletionTokens}
	if req.MaxTokens == nil {
		req.MaxTokens = in.MaxTokens
	}
	if in.StreamOptions != nil {
		if !in.Stream {
			return nil, bad("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
		req.IncludeUsage = in.StreamOptions.IncludeUsage
	}
	calls := map[string]bool{}
	for i, m := range in.Messages {
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID}
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return nil, bad(fmt.Sprintf("messages.[%d].role", i), "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
		}
		text, ok := contentText(m.Content)
		if !ok {
			return nil, bad(fmt.Sprintf("messages.[%d].content", i), "Invalid type for 'messages[%d].content': expected one of a string or array of objects.", i)
		}
		msg.Content = text
		for _, c := range m.ToolCalls {
			if m.Role != "assistant" || c.ID == "" || c.Type != "function" || c.Function.Name == "" {
				return nil, bad(fmt.Sprintf("messages.[%d].tool_calls", i), "Invalid 'messages[%d].tool_calls': each call needs an id, the type 'function' and a function name.", i)
			}
			calls[c.ID] = true
			msg.ToolCalls = append(msg.ToolCalls, RequestToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		if m.Role == "tool" && !calls[m.ToolCallID] {
			return nil, bad(fmt.Sprintf("messages.[%d].role", i), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
		}
		req.Messages = append(req.Messages, msg)
	}
	for i, t := range in.Tools {
		if t.Type != "function" {
			return nil, bad(fmt.Sprintf("tools[%d].type", i), "Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			return nil, bad(fmt.Sprintf("tools[%d].function.name", i), "Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req, nil
}

// contentText returns a message's content as text: a string, the text
// parts of an array joined, or "" for none.
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), true
}

// finish returns sc's finish reason.
func (sc Script) finish() string {
	switch {
	case sc.FinishReason != "":
		return sc.FinishReason
	case len(sc.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// usage returns sc's usage.
func (sc Script) usage() map[string]int {
	u := Usage{PromptTokens: 10, CompletionTokens: len(sc.Text)}
	for _, c := range sc.ToolCalls {
		u.CompletionTokens += len(c.Arguments)
	}
	if sc.Usage != nil {
		u = *sc.Usage
	}
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens": u.PromptTokens + u.CompletionTokens}
}

// answer writes sc as one chat.completion object.
func (s *Server) answer(w http.ResponseWriter, req *Request, sc Script) {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if len(sc.Text) > 0 {
		msg["content"] = strings.Join(sc.Text, "")
	}
	if len(sc.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range sc.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": strings.Join(c.Arguments, "")}})
		}
		msg["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": Created, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": sc.finish()}},
		"usage":   sc.usage(), "system_fingerprint": "fp_llmtest",
	})
}

// streamer writes the chunks of one streamed answer.
type streamer struct {
	w     http.ResponseWriter
	flush func()
	req   *Request
	n     int // Chunks written.
}

// chunk writes one chunk whose only choice has delta and finish.
func (st *streamer) chunk(delta map[string]any, finish any) error {
	c := map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": Created,
		"model": st.req.Model, "system_fingerprint": "fp_llmtest",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	if st.req.IncludeUsage {
		c["usage"] = nil
	}
	return st.data(c)
}

// data writes v as one event.
func (st *streamer) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return st.line(b)
}

// line writes one event of the data b.
func (st *streamer) line(b []byte) error {
	st.n++
	if _, err := fmt.Fprintf(st.w, "data: %s\n\n", b); err != nil {
		return err
	}
	st.flush()
	return nil
}

// stream writes sc as server-sent events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, sc Script) {
	if sc.Fault == EndlessHeaders {
		endlessHeaders(w)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	st := &streamer{w: w, flush: func() { rc.Flush() }, req: req}
	st.flush()
	// The pieces of the answer, each a chunk: the role first, as OpenAI
	// sends it, with the first piece of text or the first call.
	var pieces []map[string]any
	first := map[string]any{"role": "assistant", "content": "", "refusal": nil}
	pieces = append(pieces, first)
	for _, t := range sc.Text {
		pieces = append(pieces, map[string]any{"content": t})
	}
	for i, c := range sc.ToolCalls {
		head := map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}
		if i == 0 && len(sc.Text) == 0 {
			first["content"] = nil
			first["tool_calls"] = []any{head}
		} else {
			pieces = append(pieces, map[string]any{"tool_calls": []any{head}})
		}
		for _, a := range c.Arguments {
			pieces = append(pieces, map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": a}}}})
		}
	}
	wait := func() bool {
		if sc.Delay <= 0 {
			return true
		}
		select {
		case <-time.After(sc.Delay):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	for i := 0; ; i++ {
		if sc.Fault != NoFault && i == sc.After {
			s.fault(st, r, sc)
			return
		}
		if i == len(pieces) {
			break
		}
		if !wait() || st.chunk(pieces[i], nil) != nil {
			return
		}
	}
	if !wait() || st.chunk(map[string]any{}, sc.finish()) != nil {
		return
	}
	if req.IncludeUsage {
		c := map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": Created,
			"model": req.Model, "system_fingerprint": "fp_llmtest", "choices": []any{}, "usage": sc.usage()}
		if st.data(c) != nil {
			return
		}
	}
	st.line([]byte("[DONE]"))
}

// fault breaks a streamed answer as sc says.
func (s *Server) fault(st *streamer, r *http.Request, sc Script) {
	switch sc.Fault {
	case Stall:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case Cut:
		panic(http.ErrAbortHandler) // net/http closes the connection mid-body.
	case End:
	case Malformed:
		if st.line([]byte(`{"id": "chatcmpl-llmtest", "choices": [{"index": 0, "delta": {"content": "x"`)) != nil {
			return
		}
		st.line([]byte("[DONE]"))
	case ErrorChunk:
		st.data(map[string]APIError{"error": sc.Error})
	case Endless:
		piece, _ := json.Marshal(map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": Created,
			"model": st.req.Model, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "more "}, "finish_reason": nil}}})
		for written := 0; written < EndlessBytes; written += len(piece) + 8 {
			if st.line(piece) != nil {
				return
			}
		}
	case HugeChunk:
		if _, err := io.WriteString(st.w, `data: {"id": "chatcmpl-llmtest", "choices": [{"index": 0, "delta": {"content": "`); err != nil {
			return
		}
		block := bytes.Repeat([]byte("a"), 64<<10)
		for written := 0; written < EndlessBytes; written += len(block) {
			if _, err := st.w.Write(block); err != nil {
				return
			}
			st.flush()
		}
	}
}

// endlessHeaders answers with headers that never end (EndlessBytes of
// them at most), on the raw connection.
func endlessHeaders(w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
	line := "X-Filler: " + strings.Repeat("f", 1000) + "\r\n"
	for written := 0; written < EndlessBytes; written += len(line) {
		if _, err := buf.WriteString(line); err != nil {
			return
		}
		if buf.Writer.Buffered() > 32<<10 {
			if buf.Flush() != nil {
				return
			}
		}
	}
	buf.Flush()
}

// RetryAfter is the Headers of a 429 that asks to wait secs seconds.
func RetryAfter(secs int) map[string]string {
	return map[string]string{"Retry-After": strconv.Itoa(secs)}
}
