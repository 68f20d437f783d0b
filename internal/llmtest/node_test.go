package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/internal/npmtest"
)

// TestOpenAINode reads the scripted server with OpenAI's official Node
// client (npm's openai, npm/package.json), through its own helpers:
// streamed text and calls of tools put together, raw chunks, an answer not
// streamed, error answers as its error classes, an error in the middle of
// a stream. It skips without node, unless QUARRY_E2E=1.
func TestOpenAINode(t *testing.T) {
	dir, err := filepath.Abs("npm")
	if err != nil {
		t.Fatal(err)
	}
	node := npmtest.Install(t, dir)
	srv := llmtest.New(t)
	srv.SetKey(key)
	srv.On("[tools]", weatherScript)
	srv.On("[busy]", llmtest.Script{Status: 429, Headers: llmtest.RetryAfter(3), Error: llmtest.APIError{Message: "Rate limit reached.", Type: "requests"}})
	srv.On("[broken]", llmtest.Errorf(500, "server_error", "", "The server had an error while processing your request."))
	srv.On("[midway]", llmtest.Script{Text: []string{"a", "b"}, Fault: llmtest.ErrorChunk, After: 2,
		Error: llmtest.APIError{Message: "The model is overloaded.", Type: "server_error"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", srv.BaseURL(), key)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	usage := map[string]any{"prompt_tokens": 21.0, "completion_tokens": 9.0, "total_tokens": 30.0}
	want := map[string]any{
		"stream": map[string]any{
			"pieces": []any{"Checking", "…"}, "finish_reason": "tool_calls", "content": "Checking…",
			"tool_calls": []any{
				map[string]any{"id": "call_a", "name": "get_weather", "arguments": `{"city": "Oslo"}`},
				map[string]any{"id": "call_b", "name": "get_weather", "arguments": `{"city": "Bergen"}`},
			},
			"usage": usage,
		},
		"raw":          map[string]any{"text": []any{"OK"}, "finish": "stop"},
		"whole":        map[string]any{"object": "chat.completion", "content": "Checking…", "finish_reason": "tool_calls", "tool_calls": 2.0, "usage": usage},
		"rate_limited": map[string]any{"class": "RateLimitError", "status": 429.0, "message": "Rate limit reached.", "retry_after": "3"},
		"server_error": map[string]any{"class": "InternalServerError", "status": 500.0, "message": "The server had an error while processing your request.", "retry_after": nil},
		"wrong_key":    map[string]any{"class": "AuthenticationError", "status": 401.0, "code": "invalid_api_key"},
		"midway":       map[string]any{"class": "APIError", "message": "The model is overloaded."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the Node client read (-want +got):\n%s", diff)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d requests reached the model, want 6", n)
	}
}
