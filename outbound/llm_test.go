package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/toolrun"
)

// The client of language models (llm.go) against the scripted
// OpenAI-compatible server of internal/llmtest, through the egress guard.

// testKey is the key of the tests' provider.
const testKey = "sk-test-0123456789abcdefghijklmnopqrstuvwxyz"

// loopbackClient is the egress guard's client, opened to loopback.
func loopbackClient(t *testing.T) *http.Client {
	t.Helper()
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return toolrun.NewRunner(toolrun.Policy{Allow: nets, AllowHosts: hosts}).Client()
}

// newTestModel returns a client of srv, as an OpenAI-compatible provider
// with testKey.
func newTestModel(t *testing.T, srv *llmtest.Server, lim ModelLimits) *Model {
	t.Helper()
	base := srv.BaseURL()
	return NewModel(loopbackClient(t), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base, APIKey: testKey}, lim)
}

// collect streams r and returns the events and the error.
func collect(m *Model, r quarry.ModelRequest) ([]quarry.ModelEvent, error) {
	var events []quarry.ModelEvent
	err := m.Stream(context.Background(), r, func(e quarry.ModelEvent) error {
		events = append(events, e)
		return nil
	})
	return events, err
}

// ask is a request of one user message.
func ask(text string) quarry.ModelRequest {
	return quarry.ModelRequest{Model: "gpt-test", Messages: []quarry.ModelMessage{{Role: quarry.ModelUser, Content: text}}}
}

func TestModelText(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetKey(testKey)
	srv.Push(llmtest.Script{Text: []string{"Hel", "lo", ", world"}, Usage: &llmtest.Usage{PromptTokens: 12, CompletionTokens: 3}})
	m := newTestModel(t, srv, ModelLimits{})
	temp := 0.25
	r := quarry.ModelRequest{Model: "gpt-test", MaxTokens: 100, Temperature: &temp, Messages: []quarry.ModelMessage{
		{Role: quarry.ModelSystem, Content: "Be brief."},
		{Role: quarry.ModelUser, Content: "Greet me."},
	}}
	events, err := collect(m, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []quarry.ModelEvent{{Text: "Hel"}, {Text: "lo"}, {Text: ", world"},
		{FinishReason: "stop", Usage: &quarry.ModelUsage{PromptTokens: 12, CompletionTokens: 3}}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[0]
	if got.Model != "gpt-test" || !got.Stream || !got.IncludeUsage || got.MaxTokens == nil || *got.MaxTokens != 100 ||
		got.Temperature == nil || *got.Temperature != 0.25 || got.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("request: model %q stream %v usage %v max %v temperature %v authorization %q", got.Model, got.Stream, got.IncludeUsage,
			got.MaxTokens, got.Temperature, got.Header.Get("Authorization"))
	}
	// An OpenAI-compatible server reads max_tokens; OpenAI's own API
	// wants max_completion_tokens.
	var body map[string]any
	json.Unmarshal(got.Body, &body)
	if _, ok := body["max_tokens"]; !ok {
		t.Errorf("an OpenAI-compatible provider was not sent max_tokens: %s", got.Body)
	}
	if diff := cmp.Diff([]llmtest.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Greet me."}}, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestModelMaxCompletionTokens(t *testing.T) {
	srv := llmtest.New(t)
	base := srv.BaseURL()
	m := NewModel(loopbackClient(t), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAI, APIBase: &base, APIKey: testKey}, ModelLimits{})
	r := ask("hi")
	r.MaxTokens = 7
	if _, err := collect(m, r); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.Unmarshal(srv.Requests()[0].Body, &body)
	if body["max_completion_tokens"] != 7.0 || body["max_tokens"] != nil {
		t.Errorf("OpenAI's own API: %s", srv.Requests()[0].Body)
	}
}

func TestModelToolCalls(t *testing.T) {
	srv := llmtest.New(t)
	srv.On("weather", llmtest.Script{Text: []string{"Let me look."}, ToolCalls: []llmtest.ToolCall{
		llmtest.Call("call_1", "get_weather", `{"ci`, `ty": "Os`, `lo"}`),
		llmtest.Call("call_2", "internal_search", `{"queries": ["rain"]}`),
	}})
	m := newTestModel(t, srv, ModelLimits{})
	params := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	r := quarry.ModelRequest{Model: "gpt-test",
		Messages: []quarry.ModelMessage{
			{Role: quarry.ModelUser, Content: "first"},
			{Role: quarry.ModelAssistant, ToolCalls: []quarry.ModelToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Bergen"}`}}},
			{Role: quarry.ModelToolResult, ToolCallID: "call_0", Content: `{"rain": true}`},
			{Role: quarry.ModelAssistant, Content: "It rains in Bergen."},
			{Role: quarry.ModelUser, Content: "And the weather in Oslo?"},
		},
		Tools: []quarry.ModelTool{{Name: "get_weather", Description: "The weather in a city.", Parameters: params}, {Name: "internal_search"}},
	}
	events, err := collect(m, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []quarry.ModelEvent{{Text: "Let me look."}, {FinishReason: "tool_calls", Usage: &quarry.ModelUsage{PromptTokens: 10, CompletionTokens: 5},
		ToolCalls: []quarry.ModelToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Oslo"}`},
			{ID: "call_2", Name: "internal_search", Arguments: `{"queries": ["rain"]}`},
		}}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	got := srv.Requests()[0]
	wantMessages := []llmtest.Message{
		{Role: "user", Content: "first"},
		{Role: "assistant", ToolCalls: []llmtest.RequestToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Bergen"}`}}},
		{Role: "tool", ToolCallID: "call_0", Content: `{"rain": true}`},
		{Role: "assistant", Content: "It rains in Bergen."},
		{Role: "user", Content: "And the weather in Oslo?"},
	}
	if diff := cmp.Diff(wantMessages, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if len(got.Tools) != 2 || got.Tools[0].Name != "get_weather" || got.Tools[0].Description != "The weather in a city." ||
		!jsonEqual(got.Tools[0].Parameters, params) || got.Tools[1].Name != "internal_search" {
		t.Errorf("tools: %+v", got.Tools)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}

// TestModelFaults checks each way a provider refuses or fails, and its
// ModelError.
func TestModelFaults(t *testing.T) {
	code := "rate_limit_exceeded"
	for _, tt := range []struct {
		name   string
		script llmtest.Script
		key    string // The key the client sends, if not the server's.
		model  string
		want   quarry.ModelError
		events int // Text events before the failure.
	}{
		{name: "wrong key", key: "sk-wrong-key-0000000000000000000000",
			want: quarry.ModelError{Status: 401, Message: "the provider refused the key"}},
		{name: "no such model", model: "gpt-nope",
			want: quarry.ModelError{Status: 404, Message: "the provider has no such model, or api_base is not the URL of its OpenAI-compatible API: The model `gpt-nope` does not exist or you do not have access to it."}},
		{name: "forbidden", script: llmtest.Errorf(403, "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"),
			want: quarry.ModelError{Status: 403, Message: "the provider refused the key for this request: Country, region, or territory not supported"}},
		{name: "rate limited", script: llmtest.Script{Status: 429, Headers: llmtest.RetryAfter(20),
			Error: llmtest.APIError{Message: "Rate limit reached for gpt-test.", Type: "requests", Code: &code}},
			want: quarry.ModelError{Status: 429, RetryAfter: 20 * time.Second, Message: "the provider is limiting requests; retry after 20s: Rate limit reached for gpt-test."}},
		{name: "rate limited in ms", script: llmtest.Script{Status: 429, Headers: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"},
			Error: llmtest.APIError{Message: "Slow down."}},
			want: quarry.ModelError{Status: 429, RetryAfter: 1500 * time.Millisecond, Message: "the provider is limiting requests; retry after 1.5s: Slow down."}},
		{name: "server error", script: llmtest.Errorf(500, "server_error", "", "The server had an error while processing your request. Sorry about that!"),
			want: quarry.ModelError{Status: 500, Message: "the provider failed: The server had an error while processing your request. Sorry about that!"}},
		{name: "bad gateway with no words", script: llmtest.Script{Status: 502},
			want: quarry.ModelError{Status: 502, Message: "the provider failed: it said nothing more"}},
		{name: "bad request echoing the key", script: llmtest.Errorf(400, "invalid_request_error", "", "Key %s cannot use tools", testKey),
			want: quarry.ModelError{Status: 400, Message: "the provider refused the request: Key •••••••••••• cannot use tools"}},
		{name: "malformed chunk", script: llmtest.Script{Text: []string{"a", "b"}, Fault: llmtest.Malformed, After: 2},
			want: quarry.ModelError{Message: "the provider sent a chunk that is not Chat Completions JSON"}, events: 1},
		{name: "error chunk", script: llmtest.Script{Text: []string{"a", "b"}, Fault: llmtest.ErrorChunk, After: 2,
			Error: llmtest.APIError{Message: "The model overloaded: " + testKey, Type: "server_error"}},
			want: quarry.ModelError{Message: "the provider failed in the middle of the answer: The model overloaded: ••••••••••••"}, events: 1},
		{name: "cut", script: llmtest.Script{Text: []string{"a", "b", "c"}, Fault: llmtest.Cut, After: 3},
			want: quarry.ModelError{Message: "the provider cut the connection before the answer was complete"}, events: 2},
		{name: "ended early", script: llmtest.Script{Text: []string{"a", "b", "c"}, Fault: llmtest.End, After: 2},
			want: quarry.ModelError{Message: "the answer stopped before it was complete: the provider ended its stream without saying why the answer finished"}, events: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.SetKey(testKey)
			srv.SetModels("gpt-test")
			srv.Push(tt.script)
			base := srv.BaseURL()
			key := testKey
			if tt.key != "" {
				key = tt.key
			}
			m := NewModel(loopbackClient(t), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base, APIKey: key}, ModelLimits{})
			r := ask("hi")
			if tt.model != "" {
				r.Model = tt.model
			}
			events, err := collect(m, r)
			var me *quarry.ModelError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T), want a *quarry.ModelError", err, err)
			}
			if *me != tt.want {
				t.Errorf("error\n got %+v\nwant %+v", *me, tt.want)
			}
			if len(events) != tt.events {
				t.Errorf("%d events before the failure, want %d: %+v", len(events), tt.events, events)
			}
			if strings.Contains(me.Error(), testKey) || strings.Contains(me.Error(), tt.key) && tt.key != "" {
				t.Errorf("the error holds a key: %s", me.Error())
			}
		})
	}
}

// TestModelTimeouts checks the wait for the first byte and between chunks,
// and that a slow provider within them is fine.
func TestModelTimeouts(t *testing.T) {
	lim := ModelLimits{FirstByte: 300 * time.Millisecond, Idle: 300 * time.Millisecond}
	t.Run("slow but steady", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.Push(llmtest.Script{Text: []string{"a", "b", "c"}, Delay: 100 * time.Millisecond})
		events, err := collect(newTestModel(t, srv, lim), ask("hi"))
		if err != nil || len(events) != 4 {
			t.Errorf("%d events, %v", len(events), err)
		}
	})
	t.Run("stall", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.Push(llmtest.Script{Text: []string{"a", "b"}, Fault: llmtest.Stall, After: 2})
		events, err := collect(newTestModel(t, srv, lim), ask("hi"))
		var me *quarry.ModelError
		if !errors.As(err, &me) || me.Message != "the provider sent nothing for 300ms in the middle of the answer" || len(events) != 1 {
			t.Errorf("%d events, %v", len(events), err)
		}
	})
	t.Run("no headers", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() { // Accepts, reads, answers nothing.
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		base := "http://" + ln.Addr().String() + "/v1"
		m := NewModel(loopbackClient(t), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base}, lim)
		_, err = collect(m, ask("hi"))
		var me *quarry.ModelError
		if !errors.As(err, &me) || me.Message != "the provider did not start its answer within 300ms" {
			t.Errorf("%v", err)
		}
	})
}

// TestModelHostile checks that a hostile provider's endless answers end
// in a clear error after a bounded read: an endless stream of chunks, one
// endless chunk, endless headers.
func TestModelHostile(t *testing.T) {
	lim := ModelLimits{MaxEventBytes: 64 << 10, MaxAnswerBytes: 1 << 20}
	for _, tt := range []struct {
		name    string
		fault   llmtest.Fault
		want    string
		maxRead int64
	}{
		{"endless stream", llmtest.Endless, "the answer is larger than 1 MiB, the most Quarry reads", 1<<20 + 64<<10},
		{"endless chunk", llmtest.HugeChunk, "a chunk of the answer is larger than 64 KiB, the most Quarry reads", 256 << 10},
		{"endless headers", llmtest.EndlessHeaders, "the provider's answer has headers larger than 1 MiB, the most Quarry reads", 2 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Push(llmtest.Script{Text: []string{"a"}, Fault: tt.fault, After: 1})
			var read atomic.Int64
			counting := countingClient(t, &read)
			base := srv.BaseURL()
			m := NewModel(counting, &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base}, lim)
			_, err := collect(m, ask("hi"))
			var me *quarry.ModelError
			if !errors.As(err, &me) || me.Message != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if n := read.Load(); n > tt.maxRead {
				t.Errorf("read %d bytes from the connection, want at most %d", n, tt.maxRead)
			} else {
				t.Logf("read %d bytes from the connection", n)
			}
		})
	}
}

// countingClient is the egress guard's client, opened to loopback, that
// counts the bytes it reads from its connections.
func countingClient(t *testing.T, n *atomic.Int64) *http.Client {
	t.Helper()
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	r := toolrun.NewRunner(toolrun.Policy{Allow: nets, AllowHosts: hosts})
	c := *r.Client()
	tr := c.Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := r.Dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, n: n}, nil
	}
	c.Transport = tr
	return &c
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestModelEgress checks that the client goes through the egress guard:
// a provider on loopback is refused unless the operator opened it.
func TestModelEgress(t *testing.T) {
	srv := llmtest.New(t)
	base := srv.BaseURL()
	m := NewModel(toolrun.NewRunner(toolrun.Policy{}).Client(), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base}, ModelLimits{})
	_, err := collect(m, ask("hi"))
	var me *quarry.ModelError
	if !errors.As(err, &me) || !strings.Contains(me.Message, "Quarry does not call 127.0.0.1: it is a loopback address") ||
		!strings.Contains(me.Message, toolrun.AllowSetting) {
		t.Errorf("error %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("the request reached the provider")
	}
}

// TestModelNotAStream checks the answer of a server that is not a Chat
// Completions API: a web page, or JSON where a stream was asked for.
func TestModelNotAStream(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html>Welcome</html>")
	}))
	t.Cleanup(page.Close)
	base := page.URL
	m := NewModel(loopbackClient(t), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base}, ModelLimits{})
	_, err := collect(m, ask("hi"))
	var me *quarry.ModelError
	if !errors.As(err, &me) || me.Message != `the provider's answer is not a stream of server-sent events ("text/html; charset=utf-8"): is api_base the URL of its OpenAI-compatible API?` {
		t.Errorf("error %v", err)
	}
}

// TestModelUnreachable checks a provider nobody listens at.
func TestModelUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	m := NewModel(loopbackClient(t), &quarry.LLMProvider{Provider: quarry.LLMProviderOpenAICompatible, APIBase: &base}, ModelLimits{})
	_, err = collect(m, ask("hi"))
	var me *quarry.ModelError
	if !errors.As(err, &me) || me.Message != "the provider could not be reached at "+ln.Addr().String()+": the connection was refused" {
		t.Errorf("error %v", err)
	}
}

// TestModelCancel checks that the end of the caller's context ends the
// request, and that each's error stops the stream.
func TestModelCancel(t *testing.T) {
	srv := llmtest.New(t)
	srv.Push(llmtest.Script{Text: []string{"a", "b"}, Fault: llmtest.Stall, After: 2})
	m := newTestModel(t, srv, ModelLimits{})
	ctx, cancel := context.WithCancel(context.Background())
	err := m.Stream(ctx, ask("hi"), func(e quarry.ModelEvent) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
	stop := errors.New("enough")
	srv.Push(llmtest.Text("a", "b", "c"))
	n := 0
	err = m.Stream(context.Background(), ask("hi"), func(e quarry.ModelEvent) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("each's error: %v after %d events", err, n)
	}
}
