package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// The calls of tools: the search, and the person's other tools. A call
// the loop cannot make (an unknown tool, arguments that are not a JSON
// object, a refusal, a failure) is answered to the model with why, as
// Onyx's "Tool failed with error: …", and the answer goes on.

// maxNameLen is the longest a function name may be (OpenAI's
// ^[a-zA-Z0-9_-]{1,64}$).
const maxNameLen = 64

var invalidNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// sanitizeName replaces each character outside [a-zA-Z0-9_-] with "_"
// (Onyx's sanitize_tool_name); "" is "_".
func sanitizeName(s string) string {
	if s = invalidNameChars.ReplaceAllString(s, "_"); s == "" {
		return "_"
	}
	return s
}

// NameTools names each tool for the model, in order, each name unique
// (internal_search is the search's) and matching ^[a-zA-Z0-9_-]{1,64}$:
// its own name (the operation's, or the MCP server's name of it) as Onyx
// names it; taken or too long, its tool's name and its own
// ("<tool>_<operation>", or Onyx's "mcp_<server>_<tool>"); taken or too
// long again, that cut to fit with the tool's id after it
// ("…_<id>", then "…_<id>_2" and on).
func NameTools(tools []Tool) []Tool {
	out := slices.Clone(tools)
	taken := map[string]bool{SearchToolName: true}
	for i := range out {
		t := &out[i]
		long := t.ToolName + "_" + t.Method
		if t.MCP {
			long = "mcp_" + t.ToolName + "_" + t.Method
		}
		long = sanitizeName(long)
		name := ""
		for _, c := range []string{sanitizeName(t.Method), long} {
			if len(c) <= maxNameLen && !taken[c] {
				name = c
				break
			}
		}
		for n := 1; name == ""; n++ {
			suffix := "_" + strconv.FormatInt(t.ToolID, 10)
			if n > 1 {
				suffix += "_" + strconv.Itoa(n)
			}
			c := long
			if len(c) > maxNameLen-len(suffix) {
				c = c[:maxNameLen-len(suffix)]
			}
			if c += suffix; !taken[c] {
				name = c
			}
		}
		taken[name] = true
		t.Name = name
	}
	return out
}

// failed is the text the model reads for a call that failed.
func failed(msg string) string { return "Tool failed with error: " + msg }

// call makes one call of the model's and returns what the model reads of
// it; room is how many tokens that may take.
func (r *run) call(ctx context.Context, call quarry.ModelToolCall, pl Placement, offered []quarry.ModelTool, room int) string {
	if slices.ContainsFunc(offered, func(d quarry.ModelTool) bool { return d.Name == call.Name }) {
		if call.Name == SearchToolName && r.t.Search {
			return r.search(ctx, call, pl, room)
		}
		for _, t := range r.t.Tools {
			if t.Name == call.Name {
				return r.runTool(ctx, t, call, pl, room)
			}
		}
	}
	names := make([]string, len(offered))
	for i, d := range offered {
		names[i] = d.Name
	}
	if len(names) == 0 {
		return failed(fmt.Sprintf("There is no tool named %q: no tool is offered now; answer with what you have", call.Name))
	}
	return failed(fmt.Sprintf("There is no tool named %q; the tools are %s", call.Name, strings.Join(names, ", ")))
}

// objectArgs returns a call's arguments as a JSON object ("" is {}), or
// why they are not one.
func objectArgs(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}"), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, fmt.Errorf("the arguments must be a JSON object, not %s", quarry.ClipText(s, 200))
	}
	return json.RawMessage(s), nil
}

// searchQueries returns the queries of a call of internal_search: its
// queries, at most MaxQueries of them, empty ones left out.
func searchQueries(args string) ([]string, error) {
	var in struct {
		Queries json.RawMessage `json:"queries"`
	}
	if err := json.Unmarshal([]byte(args), &in); err != nil || len(in.Queries) == 0 || string(in.Queries) == "null" {
		return nil, errors.New(`The internal_search tool requires a 'queries' parameter containing an array of search queries. ` +
			`Please provide the queries like: {"queries": ["your search query here"]}`)
	}
	var qs []string
	if err := json.Unmarshal(in.Queries, &qs); err != nil {
		var one string
		if json.Unmarshal(in.Queries, &one) != nil {
			return nil, errors.New(`'queries' must be an array of strings, like: {"queries": ["your search query here"]}`)
		}
		qs = []string{one}
	}
	var out []string
	for _, q := range qs {
		if q = strings.TrimSpace(q); q != "" && !slices.Contains(out, q) && len(out) < MaxQueries {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(`'queries' holds no query: give at least one, like: {"queries": ["your search query here"]}`)
	}
	return out, nil
}

// searchEntry is a document as the model reads it (Onyx's search result
// for the model: convert_inference_sections_to_llm_string).
type searchEntry struct {
	Document   int      `json:"document"`
	Title      string   `json:"title"`
	UpdatedAt  string   `json:"updated_at,omitempty"`
	Authors    []string `json:"authors,omitempty"`
	SourceType string   `json:"source_type"`
	Content    string   `json:"content"`
	Metadata   string   `json:"metadata,omitempty"`
}

// searchResult is what a search gives the model.
type searchResult struct {
	Results []searchEntry `json:"results"`
	Note    string        `json:"note,omitempty"`
}

// text returns s as Onyx gives it to the model: JSON indented by two
// spaces, not ASCII-escaped (json.dumps(payload, indent=2,
// ensure_ascii=False)). It is written here rather than re-indented from
// encoding/json's output, which scanned each byte of every content
// again: a third of the time Quarry took to hand a search to the model.
func (s searchResult) text() string {
	n := 64 + len(s.Note) // What the text holds, escapes aside: one allocation, not a doubling.
	for _, e := range s.Results {
		n += 160 + len(e.Title) + len(e.UpdatedAt) + len(e.SourceType) + len(e.Content) + len(e.Metadata)
		for _, a := range e.Authors {
			n += 12 + len(a)
		}
	}
	b := append(make([]byte, 0, n), "{\n  \"results\": ["...)
	for i, e := range s.Results {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = e.appendJSON(b)
	}
	if len(s.Results) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, ']')
	if s.Note != "" {
		b = appendJSONString(append(b, ",\n  \"note\": "...), s.Note)
	}
	return string(append(b, "\n}"...))
}

// appendJSON appends e as an item of searchResult.text's list.
func (e *searchEntry) appendJSON(b []byte) []byte {
	field := func(b []byte, name, v string) []byte {
		b = append(append(append(b, ",\n      \""...), name...), "\": "...)
		return appendJSONString(b, v)
	}
	b = strconv.AppendInt(append(b, "{\n      \"document\": "...), int64(e.Document), 10)
	b = field(b, "title", e.Title)
	if e.UpdatedAt != "" {
		b = field(b, "updated_at", e.UpdatedAt)
	}
	if len(e.Authors) > 0 {
		b = append(b, ",\n      \"authors\": ["...)
		for i, a := range e.Authors {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, "\n        "...), a)
		}
		b = append(b, "\n      ]"...)
	}
	b = field(b, "source_type", e.SourceType)
	b = field(b, "content", e.Content)
	if e.Metadata != "" {
		b = field(b, "metadata", e.Metadata)
	}
	return append(b, "\n    }"...)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// without HTML escaping: quotes, backslashes and control characters
// escaped, U+2028 and U+2029 too, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				b = append(b, s[start:i]...)
				if r == utf8.RuneError {
					b = append(b, `\ufffd`...)
				} else {
					b = append(b, `\u202`...)
					b = append(b, hex[r&0xf])
				}
				start = i + n
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// search runs a call of internal_search with the person's rights: each
// query, the results fused by reciprocal rank (Onyx's RRF, k 50), the
// best SearchLimit given to the model, numbered, as many as fit room.
func (r *run) search(ctx context.Context, call quarry.ModelToolCall, pl Placement, room int) string {
	r.emit(Packet{pl, SearchStart{}})
	defer r.emit(Packet{pl, SectionEnd{}})
	rec := quarry.ChatToolCall{TurnNumber: pl.Turn, TabIndex: pl.Tab, ToolID: r.t.SearchToolID, CallID: call.ID, Name: call.Name,
		Arguments: json.RawMessage(call.Arguments)}
	defer func() { r.res.ToolCalls = append(r.res.ToolCalls, rec) }()
	queries, err := searchQueries(call.Arguments)
	if err != nil {
		rec.Response = failed(err.Error())
		return rec.Response
	}
	r.emit(Packet{pl, SearchQueries{Queries: queries}})
	limit := r.loop.SearchLimit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	type fused struct {
		hit   quarry.SearchHit
		score float64
		first int
	}
	byCopy := map[copyKey]*fused{}
	for _, q := range queries {
		hits, err := r.loop.Searcher.Search(ctx, r.t.Caller, q, r.t.Filters, limit)
		if err != nil {
			rec.Response = failed(quarry.ErrorMessage(err))
			r.emit(Packet{pl, SearchDocuments{Documents: []quarry.SearchHit{}}})
			return rec.Response
		}
		for i, h := range hits {
			k := keyOf(&h)
			f := byCopy[k]
			if f == nil {
				f = &fused{hit: h, first: len(byCopy)}
				byCopy[k] = f
			}
			f.score += 1 / float64(50+i+1)
		}
	}
	ranked := make([]*fused, 0, len(byCopy))
	for _, f := range byCopy {
		ranked = append(ranked, f)
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].score != ranked[j].score {
			return ranked[i].score > ranked[j].score
		}
		return ranked[i].first < ranked[j].first
	})
	if len(ranked) > limit {
		ranked = ranked[:limit]
	}
	var (
		result = searchResult{Results: []searchEntry{}}
		given  = []quarry.SearchHit{}
		used   = quarry.EstimateTokens(result.text())
	)
	for _, f := range ranked {
		h := f.hit
		k := keyOf(&h)
		n, numbered := r.numbers[k]
		if !numbered {
			n = len(r.numbers) + 1
		}
		e := searchEntry{Document: n, Title: h.SemanticIdentifier, SourceType: string(h.Source), Content: h.Content}
		if h.UpdatedAt != nil {
			e.UpdatedAt = h.UpdatedAt.String()
		}
		e.Authors = append(append(e.Authors, h.PrimaryOwners...), h.SecondaryOwners...)
		if len(h.Metadata) > 0 {
			b, _ := json.Marshal(h.Metadata)
			e.Metadata = string(b)
		}
		cost := quarry.EstimateTokens(string(e.appendJSON(nil))) + 4
		if used+cost > room {
			result.Note = fmt.Sprintf("%d more results did not fit in the model's context window.", len(ranked)-len(given))
			break
		}
		used += cost
		if !numbered {
			r.numbers[k] = n
			kept := h
			kept.Content = ""
			r.res.Documents = append(r.res.Documents, kept)
			r.cite.number(n, &kept)
		}
		result.Results = append(result.Results, e)
		h.Content = ""
		given = append(given, h)
	}
	r.emit(Packet{pl, SearchDocuments{Documents: given}})
	rec.Response = result.text()
	for _, h := range given {
		rec.Documents = append(rec.Documents, quarry.ChatDocument{SearchHit: h})
	}
	return rec.Response
}

// toolSummary is how the call of a custom tool or an MCP server's tool is
// kept (Onyx's CustomToolCallSummary), so that reading the session back
// shows its packets again.
type toolSummary struct {
	ToolName     string          `json:"tool_name"`
	ResponseType string          `json:"response_type"`
	ToolResult   json.RawMessage `json:"tool_result"`
	Error        *failureInfo    `json:"error"`
}

// failureInfo is Onyx's CustomToolErrorInfo.
type failureInfo struct {
	IsAuthError bool   `json:"is_auth_error"`
	StatusCode  int    `json:"status_code"`
	Message     string `json:"message"`
}

// ToolSummary is a kept call of a custom tool or an MCP server's tool,
// read back (ParseToolSummary).
type ToolSummary struct {
	ResponseType string
	Data         json.RawMessage
	Error        *ToolFailure
}

// ParseToolSummary reads what a call of a custom tool or an MCP server's
// tool kept (quarry.ChatToolCall.Response); ok is false for what is not a
// summary.
func ParseToolSummary(response string) (s ToolSummary, ok bool) {
	var t toolSummary
	if json.Unmarshal([]byte(response), &t) != nil || t.ResponseType == "" {
		return s, false
	}
	s = ToolSummary{ResponseType: t.ResponseType, Data: t.ToolResult}
	if t.Error != nil {
		s.Error = &ToolFailure{IsAuth: t.Error.IsAuthError, Status: t.Error.StatusCode, Message: t.Error.Message}
	}
	return s, true
}

// runTool runs a call of a custom tool or an MCP server's tool as the
// person (ToolRunner).
func (r *run) runTool(ctx context.Context, t Tool, call quarry.ModelToolCall, pl Placement, room int) string {
	r.emit(Packet{pl, ToolStart{Name: t.Name, ToolID: t.ToolID}})
	defer r.emit(Packet{pl, SectionEnd{}})
	rec := quarry.ChatToolCall{TurnNumber: pl.Turn, TabIndex: pl.Tab, ToolID: t.ToolID, CallID: call.ID, Name: call.Name,
		Arguments: json.RawMessage(call.Arguments)}
	defer func() { r.res.ToolCalls = append(r.res.ToolCalls, rec) }()
	out := ToolResult{Name: t.Name, ToolID: t.ToolID, ResponseType: "text"}
	var text string
	args, err := objectArgs(call.Arguments)
	if err == nil {
		var res *quarry.ToolRunResult
		if res, err = r.loop.Runner.RunTool(ctx, r.t.Caller, t.ToolID, t.Method, args); err == nil {
			text = describe(res, t, &out)
		}
	} else {
		err = &ToolFailure{Status: http.StatusBadRequest, Message: err.Error()}
	}
	if err != nil {
		var f *ToolFailure
		if !errors.As(err, &f) {
			f = &ToolFailure{Status: http.StatusInternalServerError, Message: quarry.ErrorMessage(err)}
		}
		out.Error, out.Data = f, nil
		text = failed(f.Message)
	}
	text = cut(text, room)
	if out.Data == nil {
		out.Data, _ = json.Marshal(nil)
	}
	r.emit(Packet{pl, out})
	s := toolSummary{ToolName: t.Name, ResponseType: out.ResponseType, ToolResult: out.Data}
	if out.Error != nil {
		s.Error = &failureInfo{IsAuthError: out.Error.IsAuth, StatusCode: out.Error.Status, Message: out.Error.Message}
	}
	b, _ := json.Marshal(s)
	rec.Response = string(b)
	return text
}

// describe returns what the model reads of a tool's answer, and fills the
// packet that shows it.
func describe(res *quarry.ToolRunResult, t Tool, out *ToolResult) string {
	if t.MCP {
		out.ResponseType, out.Data = "json", json.RawMessage(res.Body)
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool            `json:"isError"`
		}
		if json.Unmarshal(res.Body, &r) != nil {
			out.Error = &ToolFailure{Status: http.StatusBadGateway, Message: "The MCP server's result cannot be read"}
			return failed(out.Error.Message)
		}
		var parts []string
		for _, c := range r.Content {
			switch c.Type {
			case "text":
				parts = append(parts, c.Text)
			default:
				parts = append(parts, "("+c.Type+" content, not shown)")
			}
		}
		text := strings.Join(parts, "\n")
		if len(r.Structured) > 0 && string(r.Structured) != "null" {
			text = strings.TrimSpace(text + "\n" + string(r.Structured))
		}
		if r.IsError {
			out.Error = &ToolFailure{Status: res.Status, Message: quarry.ClipText(text, 500)}
			return failed(text)
		}
		return text
	}
	var text string
	switch res.BodyEncoding {
	case "json":
		out.ResponseType, out.Data = "json", json.RawMessage(res.Body)
		text = string(res.Body)
	case "text":
		out.Data = json.RawMessage(res.Body)
		json.Unmarshal(res.Body, &text)
	default:
		text = fmt.Sprintf("(%d bytes of %s, not shown)", base64Len(res.Body), contentType(res.ContentType))
		out.Data, _ = json.Marshal(text)
	}
	if res.Truncated {
		text += "\n[The answer was cut at Quarry's size cap]"
	}
	if res.Status >= 400 {
		out.Error = &ToolFailure{IsAuth: res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden, Status: res.Status,
			Message: fmt.Sprintf("%s answered HTTP %d %s", t.Name, res.Status, http.StatusText(res.Status))}
		text = "HTTP " + strconv.Itoa(res.Status) + " " + http.StatusText(res.Status) + ": " + text
	}
	return text
}

// base64Len returns the length of the bytes a JSON string of base64
// encodes.
func base64Len(body []byte) int {
	var s string
	json.Unmarshal(body, &s)
	return len(s) * 3 / 4
}

func contentType(ct string) string {
	if ct == "" {
		return "an unknown type"
	}
	return strings.TrimSpace(strings.Split(ct, ";")[0])
}

// cut returns text cut to fit tokens, with a note when cut.
func cut(text string, tokens int) string {
	if quarry.EstimateTokens(text) <= tokens {
		return text
	}
	const note = "\n[Cut to fit the model's context window]"
	n := len(text)
	for n > 0 && quarry.EstimateTokens(text[:n])+quarry.EstimateTokens(note) > tokens {
		n = n * 9 / 10
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
	}
	return text[:n] + note
}
