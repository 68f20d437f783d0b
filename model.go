package quarry

import (
	"encoding/json"
	"fmt"
	"time"
)

// A conversation with a language model, as the assistant's loop (package
// chat) and the model's client (package outbound) share it: OpenAI's Chat
// Completions API (https://platform.openai.com/docs/api-reference/chat),
// which every OpenAI-compatible server speaks, in Go types. Nothing here
// knows HTTP or a vendor's client.

// ModelRole is who speaks a message of a conversation with a model.
type ModelRole string

// The roles of Chat Completions' messages.
const (
	ModelSystem     ModelRole = "system"    // The instructions.
	ModelUser       ModelRole = "user"      // The person.
	ModelAssistant  ModelRole = "assistant" // The model: text, or calls of tools.
	ModelToolResult ModelRole = "tool"      // A tool's result, answering one call.
)

// ModelMessage is a message of a conversation sent to a model.
type ModelMessage struct {
	Role    ModelRole
	Content string
	// ToolCalls are the calls an assistant message made (its Content may
	// then be empty).
	ToolCalls []ModelToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
}

// ModelToolCall is a call of a tool that a model asked for.
type ModelToolCall struct {
	ID        string // The model's id of the call, which the tool's result names.
	Name      string // The tool's name, as offered (ModelTool.Name).
	Arguments string // JSON text, as the model wrote it: it may not parse.
}

// ModelTool is a tool offered to a model: a function, its description and
// the JSON Schema of its arguments.
type ModelTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // A JSON Schema object.
}

// ModelRequest is one request to a model: a conversation to continue.
type ModelRequest struct {
	Model    string // The model's name at its provider.
	Messages []ModelMessage
	Tools    []ModelTool
	// MaxTokens bounds the answer's length in tokens; 0 leaves it to the
	// provider.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves it to the
	// provider.
	Temperature *float64
}

// ModelEvent is a piece of a model's streamed answer: a piece of its text,
// or, last, why it ended, with the calls of tools it made (whole: their
// arguments' pieces put together) and what it used.
type ModelEvent struct {
	Text string // A piece of the answer's text, in order.
	// ToolCalls are the answer's calls of tools, whole, on its last event.
	ToolCalls []ModelToolCall
	// FinishReason is set on the last event: "stop", "tool_calls",
	// "length", "content_filter", as the provider said.
	FinishReason string
	Usage        *ModelUsage // On the last event, if the provider said.
}

// ModelUsage is what an answer cost, in tokens.
type ModelUsage struct {
	PromptTokens     int
	CompletionTokens int
}

// ModelError is a model's provider refusing or failing a request, or
// answering what is not Chat Completions: Message says so plainly, for the
// person, and never holds a secret.
type ModelError struct {
	Status     int           // The HTTP status, 0 if none came (no answer, a malformed stream).
	Message    string        // What went wrong, plainly.
	RetryAfter time.Duration // From a 429's Retry-After, 0 if none.
}

func (e *ModelError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("the model's provider answered %d: %s", e.Status, e.Message)
	}
	return "the model's provider failed: " + e.Message
}
