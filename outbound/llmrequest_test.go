package outbound

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/quarryhq/quarry"
)

// TestChatRequestIsOpenAIs: the body Quarry sends is, as JSON, the body
// openai-go's ChatCompletionService.NewStreaming sends for the same
// conversation (built below from openai-go's own parameter types, encoded
// by them, with "stream" set as NewStreaming sets it): every role, calls
// of tools with and without text, tools with and without a description
// or parameters, both names of the answer's bound, a temperature.
func TestChatRequestIsOpenAIs(t *testing.T) {
	temp := 0.2
	conversations := map[string]quarry.ModelRequest{
		"question": {Model: "llama", Messages: []quarry.ModelMessage{{Role: quarry.ModelSystem, Content: "be brief"},
			{Role: quarry.ModelUser, Content: "what is <basalt> & \u2028 é?"}}},
		"tools": {Model: "gpt-5", MaxTokens: 512, Temperature: &temp, Messages: []quarry.ModelMessage{
			{Role: quarry.ModelSystem, Content: "s"},
			{Role: quarry.ModelUser, Content: "q"},
			{Role: quarry.ModelAssistant, ToolCalls: []quarry.ModelToolCall{{ID: "call_1", Name: "internal_search", Arguments: `{"queries": ["basalt"]}`},
				{ID: "call_2", Name: "weather", Arguments: `{"city": `}}},
			{Role: quarry.ModelToolResult, ToolCallID: "call_1", Content: `{"results": []}`},
			{Role: quarry.ModelToolResult, ToolCallID: "call_2", Content: "Tool failed"},
			{Role: quarry.ModelAssistant, Content: "I looked.", ToolCalls: []quarry.ModelToolCall{{ID: "call_3", Name: "weather", Arguments: `{}`}}},
			{Role: quarry.ModelToolResult, ToolCallID: "call_3", Content: "sunny"},
			{Role: quarry.ModelAssistant, Content: ""},
			{Role: quarry.ModelUser, Content: "and now?"},
		}, Tools: []quarry.ModelTool{
			{Name: "internal_search", Description: "Search", Parameters: json.RawMessage(`{"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}}, "required": ["queries"]}`)},
			{Name: "bare"},
		}},
	}
	for name, r := range conversations {
		for _, openAI := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/max_completion_tokens=%v", name, openAI), func(t *testing.T) {
				m := &Model{maxCompletionTokens: openAI}
				body, err := m.request(r)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := json.Marshal(body)
				if err != nil {
					t.Fatal(err)
				}
				params := openAIParams(t, r, openAI)
				theirs, err := params.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				var got, want map[string]any
				if err := json.Unmarshal(ours, &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(theirs, &want); err != nil {
					t.Fatal(err)
				}
				want["stream"] = true // option.WithJSONSet("stream", true), as NewStreaming adds it.
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the body differs from openai-go's (-openai-go +Quarry):\n%s", diff)
				}
			})
		}
	}
	if _, err := (&Model{}).request(quarry.ModelRequest{Tools: []quarry.ModelTool{{Name: "bad", Parameters: json.RawMessage(`[1]`)}}}); err == nil {
		t.Error("parameters that are not an object were sent")
	}
}

// openAIParams builds r as openai-go's parameters, as Quarry did before
// it wrote its own body.
func openAIParams(t *testing.T, r quarry.ModelRequest, maxCompletionTokens bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(r.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	for _, msg := range r.Messages {
		switch msg.Role {
		case quarry.ModelSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(msg.Content))
		case quarry.ModelUser:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Content))
		case quarry.ModelAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case quarry.ModelToolResult:
			p.Messages = append(p.Messages, openai.ToolMessage(msg.Content, msg.ToolCallID))
		}
	}
	for _, tool := range r.Tools {
		f := shared.FunctionDefinitionParam{Name: tool.Name}
		if tool.Description != "" {
			f.Description = openai.String(tool.Description)
		}
		if len(tool.Parameters) > 0 {
			if err := json.Unmarshal(tool.Parameters, &f.Parameters); err != nil {
				t.Fatal(err)
			}
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(f))
	}
	if r.MaxTokens > 0 {
		if maxCompletionTokens {
			p.MaxCompletionTokens = openai.Int(int64(r.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(r.MaxTokens))
		}
	}
	if r.Temperature != nil {
		p.Temperature = openai.Float(*r.Temperature)
	}
	return p
}

// TestStreamChunkUsage: the usage of the last chunk is read whatever form
// its numbers take, and its absence or null is no usage.
func TestStreamChunkUsage(t *testing.T) {
	for data, want := range map[string]float64{
		`{"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}`:     12,
		`{"choices": [], "usage": {"prompt_tokens": 12.0, "completion_tokens": 3.0}}`: 12,
		`{"choices": [], "usage": {"prompt_tokens": 1.2e1, "completion_tokens": 3}}`:  12,
		`{"choices": [], "usage": null}`:                                              -1,
		`{"choices": []}`:                                                             -1,
	} {
		var c streamChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Errorf("%s: %v", data, err)
			continue
		}
		switch {
		case want < 0 && c.Usage != nil:
			t.Errorf("%s: usage %+v", data, c.Usage)
		case want >= 0 && (c.Usage == nil || c.Usage.PromptTokens != want || c.Usage.CompletionTokens != 3):
			t.Errorf("%s: usage %+v", data, c.Usage)
		}
	}
}
