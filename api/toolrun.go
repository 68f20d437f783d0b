package api

import (
	"context"
	"encoding/json"
	"math"
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/outbound"
)

// toolRunAnswer is the answer to POST /tool/{tool_id}/run: what the tool's
// server answered.
type toolRunAnswer struct {
	Status       int               `json:"status"`
	ContentType  *string           `json:"content_type"`
	Headers      map[string]string `json:"headers"`
	Body         json.RawMessage   `json:"body"`
	BodyEncoding string            `json:"body_encoding"`
	Truncated    bool              `json:"truncated"`
	DurationMS   float64           `json:"duration_ms"`
}

// handleRunTool serves POST /tool/{tool_id}/run: it runs one operation of
// a custom tool (or the tool of an MCP server) for the caller and answers
// what the tool's server answered, whatever its status. The checks, the
// call and the audit entry are those of outbound.Service.RunTool, which
// Quarry's MCP endpoint calls too (through run, which counts).
func (s *Server) handleRunTool(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in runToolRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	res, _, err := s.run(r.Context(), c, in.ID, outbound.RunRequest{Method: in.Body.Method.Value, Args: in.Body.Args,
		Authorization: r.Header.Get("Authorization")})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toolRunAnswer{Status: res.Status, ContentType: nonEmpty(res.ContentType),
		Headers: res.Headers, Body: res.Body, BodyEncoding: res.BodyEncoding, Truncated: res.Truncated,
		DurationMS: math.Round(float64(res.Duration.Microseconds())) / 1000})
}

// run runs tool id for c (outbound.Service.RunTool) and counts the run in
// the metrics: every run of an existing tool, refused or not. It returns
// the run's record too (nil when the tool does not exist).
func (s *Server) run(ctx context.Context, c *quarry.Caller, id int64, in outbound.RunRequest) (*quarry.ToolRunResult, *quarry.ToolRunRecord, error) {
	res, rec, err := s.out.RunTool(ctx, c, id, in)
	if rec != nil {
		s.metrics.observeRun(rec.Outcome, rec.Duration)
	}
	return res, rec, err
}

// nonEmpty returns a pointer to s, or nil for "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
