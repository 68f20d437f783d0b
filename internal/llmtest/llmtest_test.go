package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quarryhq/quarry/internal/llmtest"
)

// The scripted server read by OpenAI's official Go client, as an
// application reads OpenAI: streamed and whole answers, calls of tools,
// usage, errors. (outbound's client is built on the same library; this
// test uses it directly, with its own accumulator of chunks, so that the
// server's shape is checked by OpenAI's code, not Quarry's.)

const key = "sk-llmtest-key"

func client(srv *llmtest.Server) openai.ChatCompletionService {
	return openai.NewChatCompletionService(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func weatherRequest() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather in Oslo? [tools]")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

var weatherScript = llmtest.Script{Text: []string{"Checking", "…"},
	ToolCalls: []llmtest.ToolCall{llmtest.Call("call_a", "get_weather", `{"city"`, `: "Oslo"}`), llmtest.Call("call_b", "get_weather", `{"city": "Bergen"}`)},
	Usage:     &llmtest.Usage{PromptTokens: 21, CompletionTokens: 9}}

func TestOpenAIGoStreaming(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetKey(key)
	srv.On("[tools]", weatherScript)
	c := client(srv)
	stream := c.NewStreaming(context.Background(), weatherRequest())
	acc := openai.ChatCompletionAccumulator{}
	var text strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if len(chunk.Choices) > 0 {
			text.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "Checking…" {
		t.Errorf("text %q", text.String())
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("choices: %+v", acc.Choices)
	}
	ch := acc.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != "Checking…" || len(ch.Message.ToolCalls) != 2 {
		t.Fatalf("choice %+v", ch)
	}
	for i, want := range [][3]string{{"call_a", "get_weather", `{"city": "Oslo"}`}, {"call_b", "get_weather", `{"city": "Bergen"}`}} {
		got := ch.Message.ToolCalls[i]
		if got.ID != want[0] || got.Function.Name != want[1] || got.Function.Arguments != want[2] || got.Type != "function" {
			t.Errorf("call %d: %+v, want %v", i, got, want)
		}
	}
	if acc.Usage.PromptTokens != 21 || acc.Usage.CompletionTokens != 9 || acc.Usage.TotalTokens != 30 {
		t.Errorf("usage %+v", acc.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "get_weather" || !reqs[0].Stream || !reqs[0].IncludeUsage ||
		len(reqs[0].Messages) != 2 || reqs[0].Messages[1].Content != "Weather in Oslo? [tools]" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestOpenAIGoWhole(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetKey(key)
	srv.On("[tools]", weatherScript)
	c := client(srv)
	params := weatherRequest()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	res, err := c.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "chat.completion" || res.Model != "gpt-test" || len(res.Choices) != 1 || res.Usage.TotalTokens != 30 {
		t.Fatalf("answer %s", res.RawJSON())
	}
	ch := res.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != "Checking…" || len(ch.Message.ToolCalls) != 2 ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"city": "Oslo"}` {
		t.Errorf("choice %s", ch.RawJSON())
	}
	res, err = c.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil || res.Choices[0].Message.Content != "OK" || res.Choices[0].FinishReason != "stop" {
		t.Errorf("the default answer: %v %v", res, err)
	}
}

func TestOpenAIGoErrors(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetKey(key)
	srv.SetModels("gpt-test")
	srv.On("[busy]", llmtest.Script{Status: 429, Headers: llmtest.RetryAfter(3), Error: llmtest.APIError{Message: "Rate limit reached.", Type: "requests"}})
	for _, tt := range []struct {
		name   string
		key    string
		params openai.ChatCompletionNewParams
		status int
		code   string
	}{
		{"wrong key", "sk-other", openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}, 401, "invalid_api_key"},
		{"unknown model", key, openai.ChatCompletionNewParams{Model: "gpt-x", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}, 404, "model_not_found"},
		{"no messages", key, openai.ChatCompletionNewParams{Model: "gpt-test"}, 400, ""},
		{"a tool message answering no call", key, openai.ChatCompletionNewParams{Model: "gpt-test",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi"), openai.ToolMessage("x", "call_z")}}, 400, ""},
		{"a bad tool name", key, openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "a tool"})}}, 400, ""},
		{"rate limited", key, openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("[busy]")}}, 429, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := openai.NewChatCompletionService(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey(tt.key), option.WithMaxRetries(0))
			_, err := c.New(context.Background(), tt.params)
			var e *openai.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v", err)
			}
			if e.StatusCode != tt.status || e.Code != tt.code || e.Message == "" || e.Type == "" {
				t.Errorf("error %d %q %q %q, want %d %q", e.StatusCode, e.Code, e.Type, e.Message, tt.status, tt.code)
			}
		})
	}
}

// TestWire checks the bytes of a streamed answer against OpenAI's
// documented form: events of one data line, ended by a blank line, the
// last one [DONE]; each chunk a chat.completion.chunk; usage null on
// every chunk but the last when asked for.
func TestWire(t *testing.T) {
	srv := llmtest.New(t)
	body := `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	res, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	raw, _ := io.ReadAll(res.Body)
	events := strings.Split(string(raw), "\n\n")
	if events[len(events)-1] != "" || events[len(events)-2] != "data: [DONE]" {
		t.Fatalf("the stream does not end with data: [DONE] and a blank line: %q", raw)
	}
	events = events[:len(events)-2]
	if len(events) != 4 { // role, "OK", finish, usage
		t.Fatalf("%d chunks: %q", len(events), raw)
	}
	for i, ev := range events {
		sc := bufio.NewScanner(strings.NewReader(ev))
		sc.Scan()
		line := sc.Text()
		if sc.Scan() || !strings.HasPrefix(line, "data: ") {
			t.Fatalf("event %d is not one data line: %q", i, ev)
		}
		var chunk map[string]json.RawMessage
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &chunk); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if string(chunk["object"]) != `"chat.completion.chunk"` || string(chunk["model"]) != `"gpt-test"` {
			t.Errorf("event %d: %s", i, line)
		}
		last := i == len(events)-1
		if usage := string(chunk["usage"]); (usage == "null") == last {
			t.Errorf("event %d: usage %s", i, usage)
		}
		if last && string(chunk["choices"]) != "[]" {
			t.Errorf("the usage chunk has choices: %s", line)
		}
	}
	if !strings.Contains(events[2], `"delta":{}`) || !strings.Contains(events[2], `"finish_reason":"stop"`) {
		t.Errorf("the finishing chunk: %s", events[2])
	}
}
