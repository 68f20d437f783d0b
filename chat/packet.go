package chat

import (
	"encoding/json"

	"github.com/quarryhq/quarry"
)

// Packet is a piece of an answer as it is made, Onyx v4.6.1's streamed
// packet (backend/onyx/server/query_and_chat/streaming_models.py) without
// its wire form, which package api writes: where it goes (its step and
// its place among the step's calls of tools) and what it is, one of the
// types below.
type Packet struct {
	Placement Placement
	Obj       any
}

// Placement is where a packet goes (Onyx's Placement): the answer's step
// (turn_index) and the call of a tool within it (tab_index).
type Placement struct {
	Turn int
	Tab  int
}

// MessageStart begins the answer's text (message_start): the documents
// the answer's searches gave so far (nil when none), and how long the
// answer took to begin.
type MessageStart struct {
	Documents        []quarry.SearchHit
	PreAnswerSeconds float64
}

// MessageDelta is a piece of the answer's text (message_delta).
type MessageDelta struct{ Content string }

// SearchStart begins a search (search_tool_start).
type SearchStart struct{}

// SearchQueries are the queries a search runs (search_tool_queries_delta).
type SearchQueries struct{ Queries []string }

// SearchDocuments are the documents a search gave the model
// (search_tool_documents_delta).
type SearchDocuments struct{ Documents []quarry.SearchHit }

// Citation announces the first citation of a document in the answer's
// text (citation_info).
type Citation struct{ quarry.ChatCitation }

// ToolStart begins the call of a custom tool or an MCP server's tool
// (custom_tool_start): the name the model called it by, and its tool's id.
type ToolStart struct {
	Name   string
	ToolID int64
}

// ToolResult is what a custom tool or MCP server's tool answered
// (custom_tool_delta): how (ResponseType: "json" or "text"), the answer
// (JSON text for "json", a string for "text"), or why the call failed.
type ToolResult struct {
	Name         string
	ToolID       int64
	ResponseType string
	Data         json.RawMessage // JSON: an object, array or string.
	Error        *ToolFailure
}

// ToolCallDebug shows a call of a tool as the model made it, before it
// runs (tool_call_debug): only in the test mode (Turn.Debug), as Onyx
// sends it only with INTEGRATION_TESTS_MODE.
type ToolCallDebug struct {
	CallID string
	Name   string
	Args   json.RawMessage // A JSON object ({} when the model's arguments are not one).
}

// SectionEnd ends the packets of a call of a tool (section_end).
type SectionEnd struct{}

// Stop ends the answer (stop): Reason is "user_cancelled" when the person
// stopped it, "" otherwise.
type Stop struct{ Reason string }

// ToolFailure is why a call of a tool failed, as Onyx's
// CustomToolErrorInfo says it: the HTTP status the call answered (or the
// one Quarry refused it with), whether it was refused for want of the
// person's credentials (IsAuth), and a message for the person.
type ToolFailure struct {
	IsAuth  bool
	Status  int
	Message string
}

// Error implements the error interface.
func (f *ToolFailure) Error() string { return f.Message }
