package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
)

// scripted is a Model that answers each request with the next of its
// steps, and keeps the requests.
type scripted struct {
	mu       sync.Mutex
	steps    []func(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error
	requests []quarry.ModelRequest
}

func (m *scripted) Stream(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
	m.mu.Lock()
	m.requests = append(m.requests, r)
	if len(m.steps) == 0 {
		m.mu.Unlock()
		return errors.New("scripted: no step left")
	}
	step := m.steps[0]
	m.steps = m.steps[1:]
	m.mu.Unlock()
	return step(ctx, r, each)
}

// says is a step that streams pieces of text, then stops.
func says(pieces ...string) func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error {
	return func(_ context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		for _, p := range pieces {
			if err := each(quarry.ModelEvent{Text: p}); err != nil {
				return err
			}
		}
		return each(quarry.ModelEvent{FinishReason: "stop", Usage: &quarry.ModelUsage{PromptTokens: 10, CompletionTokens: 5}})
	}
}

// calls is a step that calls tools.
func calls(cs ...quarry.ModelToolCall) func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error {
	return func(_ context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
		return each(quarry.ModelEvent{ToolCalls: cs, FinishReason: "tool_calls"})
	}
}

// searcher is a Searcher over fixed results, by query.
type searcher struct {
	hits    map[string][]quarry.SearchHit
	callers []*quarry.Caller
	queries []string
	err     error
}

func (s *searcher) Search(_ context.Context, c *quarry.Caller, q string, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error) {
	s.callers = append(s.callers, c)
	s.queries = append(s.queries, q)
	if s.err != nil {
		return nil, s.err
	}
	h := s.hits[q]
	if len(h) > limit {
		h = h[:limit]
	}
	return h, nil
}

// runner is a ToolRunner with fixed answers, by method.
type runner struct {
	answers map[string]*quarry.ToolRunResult
	errs    map[string]error
	calls   []string
}

func (r *runner) RunTool(_ context.Context, c *quarry.Caller, id int64, method string, args json.RawMessage) (*quarry.ToolRunResult, error) {
	r.calls = append(r.calls, fmt.Sprintf("%s %d %s %s", c.ID, id, method, args))
	if err := r.errs[method]; err != nil {
		return nil, err
	}
	return r.answers[method], nil
}

func doc(pair int64, id, title string, link *string, content string) quarry.SearchHit {
	at := quarry.TimeFromMicros(1_700_000_000_000_000)
	return quarry.SearchHit{DocumentID: id, Pair: quarry.PairRef{ID: pair, Name: "p", AccessType: quarry.AccessPublic}, SemanticIdentifier: title, Link: link,
		Blurb: content, Source: "web", Metadata: map[string]any{}, Score: 2, UpdatedAt: &at, PrimaryOwners: []string{"ann"}, Content: content}
}

func question(text string, earlier ...*quarry.ChatMessage) []*quarry.ChatMessage {
	return append(earlier, &quarry.ChatMessage{Type: quarry.ChatUser, Message: text})
}

// record runs the loop and returns its packets, rendered as lines.
func record(t *testing.T, l *Loop, turn *Turn) (*Result, error, []string) {
	t.Helper()
	var lines []string
	res, err := l.Run(context.Background(), turn, func(p Packet) {
		b, _ := json.Marshal(p.Obj)
		lines = append(lines, fmt.Sprintf("%d.%d %T %s", p.Placement.Turn, p.Placement.Tab, p.Obj, b))
	})
	return res, err, lines
}

var me = &quarry.Caller{User: quarry.User{ID: "me", Role: quarry.RoleBasic}}

func TestAnswerWithSearch(t *testing.T) {
	basalt := doc(1, "basalt", "Basalt", link("https://wiki/basalt"), "Basalt is a volcanic rock.")
	granite := doc(2, "granite", "Granite", nil, "Granite is plutonic.")
	s := &searcher{hits: map[string][]quarry.SearchHit{"basalt": {basalt, granite}, "rocks": {basalt}}}
	m := &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		calls(quarry.ModelToolCall{ID: "call_1", Name: "internal_search", Arguments: `{"queries": ["basalt", "rocks", "basalt", " "]}`}),
		says("Basalt is volcanic [", "1]; granite is not [2", "]."),
	}}
	l := &Loop{Searcher: s, Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }}
	res, err, lines := record(t, l, &Turn{Caller: me, Model: m, ModelName: "gpt", SystemPrompt: "Be precise.", History: question("What is basalt?"),
		Search: true, SearchToolID: 1, Citations: true})
	if err != nil {
		t.Fatal(err)
	}
	docs := `[{"DocumentID":"basalt","Pair":{"ID":1,"Name":"p","AccessType":"public"},"ChunkNo":0,"SemanticIdentifier":"Basalt","Link":"https://wiki/basalt","Blurb":"Basalt is a volcanic rock.","Source":"web","Metadata":{},"Score":2,"MatchHighlights":null,"UpdatedAt":"2023-11-14T22:13:20Z","PrimaryOwners":["ann"],"SecondaryOwners":null,"Content":""},` +
		`{"DocumentID":"granite","Pair":{"ID":2,"Name":"p","AccessType":"public"},"ChunkNo":0,"SemanticIdentifier":"Granite","Link":null,"Blurb":"Granite is plutonic.","Source":"web","Metadata":{},"Score":2,"MatchHighlights":null,"UpdatedAt":"2023-11-14T22:13:20Z","PrimaryOwners":["ann"],"SecondaryOwners":null,"Content":""}]`
	want := []string{
		`0.0 chat.SearchStart {}`,
		`0.0 chat.SearchQueries {"Queries":["basalt","rocks"]}`,
		`0.0 chat.SearchDocuments {"Documents":` + docs + `}`,
		`0.0 chat.SectionEnd {}`,
		`1.0 chat.MessageStart {"Documents":` + docs + `,"PreAnswerSeconds":0}`,
		`1.0 chat.MessageDelta {"Content":"Basalt is volcanic "}`,
		`1.0 chat.Citation {"Number":1,"DocumentID":"basalt","PairID":1}`,
		`1.0 chat.MessageDelta {"Content":"[[1]](https://wiki/basalt)"}`,
		`1.0 chat.MessageDelta {"Content":"; granite is not "}`,
		`1.0 chat.Citation {"Number":2,"DocumentID":"granite","PairID":2}`,
		`1.0 chat.MessageDelta {"Content":"[[2]]()"}`,
		`1.0 chat.MessageDelta {"Content":"."}`,
		`1.0 chat.Stop {"Reason":""}`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("packets (-want +got):\n%s", diff)
	}
	if res.Text != "Basalt is volcanic [[1]](https://wiki/basalt); granite is not [[2]]()." || res.Stopped || *res.ProcessingSeconds != 0 {
		t.Errorf("result %+v", res)
	}
	if diff := cmp.Diff([]quarry.ChatCitation{{Number: 1, DocumentID: "basalt", PairID: 1}, {Number: 2, DocumentID: "granite", PairID: 2}}, res.Citations); diff != "" {
		t.Errorf("citations: %s", diff)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].ToolID != 1 || res.ToolCalls[0].CallID != "call_1" || len(res.ToolCalls[0].Documents) != 2 {
		t.Errorf("tool calls %+v", res.ToolCalls)
	}
	if res.Usage.PromptTokens != 10 || len(res.Documents) != 2 || res.Documents[0].Content != "" {
		t.Errorf("usage %+v documents %+v", res.Usage, res.Documents)
	}
	// The searches ran as the person, each query once.
	if len(s.callers) != 2 || s.callers[0] != me || !cmp.Equal(s.queries, []string{"basalt", "rocks"}) {
		t.Errorf("searches %v %v", s.callers, s.queries)
	}
	// What reached the model.
	if len(m.requests) != 2 {
		t.Fatalf("%d requests", len(m.requests))
	}
	first, second := m.requests[0], m.requests[1]
	if first.Model != "gpt" || len(first.Tools) != 1 || first.Tools[0].Name != "internal_search" || len(first.Messages) != 2 ||
		first.Messages[0].Role != quarry.ModelSystem || !strings.HasPrefix(first.Messages[0].Content, "Be precise.\n\nThe current date is Sunday, March 1, 2026.") ||
		!strings.Contains(first.Messages[0].Content, "cite it by its number in brackets") || first.Messages[1].Content != "What is basalt?" {
		t.Errorf("first request %+v", first)
	}
	result := second.Messages[3]
	wantResult := `{
  "results": [
    {
      "document": 1,
      "title": "Basalt",
      "updated_at": "2023-11-14T22:13:20Z",
      "authors": [
        "ann"
      ],
      "source_type": "web",
      "content": "Basalt is a volcanic rock."
    },
    {
      "document": 2,
      "title": "Granite",
      "updated_at": "2023-11-14T22:13:20Z",
      "authors": [
        "ann"
      ],
      "source_type": "web",
      "content": "Granite is plutonic."
    }
  ]
}`
	if len(second.Messages) != 4 || second.Messages[2].Role != quarry.ModelAssistant || second.Messages[2].ToolCalls[0].ID != "call_1" ||
		result.Role != quarry.ModelToolResult || result.ToolCallID != "call_1" || result.Content != wantResult {
		t.Errorf("second request %+v\n%s", second.Messages, result.Content)
	}
	if res.ToolCalls[0].Response != wantResult {
		t.Errorf("kept response %s", res.ToolCalls[0].Response)
	}
}

// TestToolCallsThatFail checks that an unknown tool, bad arguments, a
// refused run and a search refused are answered to the model with why,
// and the answer goes on.
func TestToolCallsThatFail(t *testing.T) {
	r := &runner{
		answers: map[string]*quarry.ToolRunResult{
			"getWeather": {Status: 200, ContentType: "application/json", Body: []byte(`{"temp": 3}`), BodyEncoding: "json"},
			"echo":       {Status: 200, Body: []byte(`{"content": [{"type": "text", "text": "hello"}], "isError": false}`), BodyEncoding: "json"},
			"broken":     {Status: 200, Body: []byte(`{"content": [{"type": "text", "text": "no such city"}], "isError": true}`), BodyEncoding: "json"},
			"page":       {Status: 404, ContentType: "text/plain", Body: []byte(`"missing"`), BodyEncoding: "text"},
		},
		errs: map[string]error{"private": &ToolFailure{IsAuth: true, Status: http.StatusConflict, Message: "Connect your account first"}},
	}
	tools := NameTools([]Tool{
		{ToolID: 5, ToolName: "Weather", Method: "getWeather", Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}}`)},
		{ToolID: 6, ToolName: "docs", Method: "echo", MCP: true, Parameters: json.RawMessage(`{"properties": {}}`)},
		{ToolID: 6, ToolName: "docs", Method: "broken", MCP: true},
		{ToolID: 7, ToolName: "files", Method: "private"},
		{ToolID: 8, ToolName: "wiki", Method: "page"},
	})
	m := &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		calls(
			quarry.ModelToolCall{ID: "a", Name: "nowhere", Arguments: `{}`},
			quarry.ModelToolCall{ID: "b", Name: "getWeather", Arguments: `{"city": `},
			quarry.ModelToolCall{ID: "c", Name: "getWeather", Arguments: `{"city": "Oslo"}`},
			quarry.ModelToolCall{ID: "d", Name: "echo", Arguments: ``},
			quarry.ModelToolCall{ID: "e", Name: "broken", Arguments: `{}`},
			quarry.ModelToolCall{ID: "f", Name: "private", Arguments: `{}`},
			quarry.ModelToolCall{ID: "g", Name: "page", Arguments: `{}`},
			quarry.ModelToolCall{ID: "h", Name: "internal_search", Arguments: `{"queries": []}`},
		),
		says("Done."),
	}}
	s := &searcher{}
	l := &Loop{Searcher: s, Runner: r}
	res, err, lines := record(t, l, &Turn{Caller: me, Model: m, History: question("go"), Tools: tools, Search: true, SearchToolID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Done." {
		t.Errorf("text %q", res.Text)
	}
	got := map[string]string{}
	for _, msg := range m.requests[1].Messages {
		if msg.Role == quarry.ModelToolResult {
			got[msg.ToolCallID] = msg.Content
		}
	}
	want := map[string]string{
		"a": `Tool failed with error: There is no tool named "nowhere"; the tools are internal_search, getWeather, echo, broken, private, page`,
		"b": `Tool failed with error: the arguments must be a JSON object, not {"city":`,
		"c": `{"temp": 3}`,
		"d": `hello`,
		"e": `Tool failed with error: no such city`,
		"f": `Tool failed with error: Connect your account first`,
		"g": `HTTP 404 Not Found: missing`,
		"h": `Tool failed with error: 'queries' holds no query: give at least one, like: {"queries": ["your search query here"]}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the model read (-want +got):\n%s", diff)
	}
	if !cmp.Equal(r.calls, []string{`me 5 getWeather {"city": "Oslo"}`, `me 6 echo {}`, `me 6 broken {}`, `me 7 private {}`, `me 8 page {}`}) {
		t.Errorf("runs %v", r.calls)
	}
	// The packets of the tools: start, result, end, each in its tab.
	var toolLines []string
	for _, l := range lines {
		if strings.Contains(l, "chat.Tool") {
			toolLines = append(toolLines, l)
		}
	}
	wantLines := []string{
		`0.1 chat.ToolStart {"Name":"getWeather","ToolID":5}`,
		`0.1 chat.ToolResult {"Name":"getWeather","ToolID":5,"ResponseType":"text","Data":null,"Error":{"IsAuth":false,"Status":400,"Message":"the arguments must be a JSON object, not {\"city\":"}}`,
		`0.2 chat.ToolStart {"Name":"getWeather","ToolID":5}`,
		`0.2 chat.ToolResult {"Name":"getWeather","ToolID":5,"ResponseType":"json","Data":{"temp":3},"Error":null}`,
		`0.3 chat.ToolStart {"Name":"echo","ToolID":6}`,
		`0.3 chat.ToolResult {"Name":"echo","ToolID":6,"ResponseType":"json","Data":{"content":[{"type":"text","text":"hello"}],"isError":false},"Error":null}`,
		`0.4 chat.ToolStart {"Name":"broken","ToolID":6}`,
		`0.4 chat.ToolResult {"Name":"broken","ToolID":6,"ResponseType":"json","Data":{"content":[{"type":"text","text":"no such city"}],"isError":true},"Error":{"IsAuth":false,"Status":200,"Message":"no such city"}}`,
		`0.5 chat.ToolStart {"Name":"private","ToolID":7}`,
		`0.5 chat.ToolResult {"Name":"private","ToolID":7,"ResponseType":"text","Data":null,"Error":{"IsAuth":true,"Status":409,"Message":"Connect your account first"}}`,
		`0.6 chat.ToolStart {"Name":"page","ToolID":8}`,
		`0.6 chat.ToolResult {"Name":"page","ToolID":8,"ResponseType":"text","Data":"missing","Error":{"IsAuth":false,"Status":404,"Message":"page answered HTTP 404 Not Found"}}`,
	}
	if diff := cmp.Diff(wantLines, toolLines); diff != "" {
		t.Errorf("tool packets (-want +got):\n%s", diff)
	}
	// The unknown tool is not kept; the others are, with Onyx's summary.
	if len(res.ToolCalls) != 7 {
		t.Fatalf("%d tool calls kept", len(res.ToolCalls))
	}
	s1, ok := ParseToolSummary(res.ToolCalls[1].Response)
	if !ok || s1.ResponseType != "json" || string(s1.Data) != `{"temp":3}` || s1.Error != nil {
		t.Errorf("summary %+v %v", s1, ok)
	}
	s4, ok := ParseToolSummary(res.ToolCalls[4].Response)
	if !ok || s4.Error == nil || !s4.Error.IsAuth || s4.Error.Status != 409 {
		t.Errorf("summary of a refusal %+v", s4)
	}
	// The MCP tool's schema without a type was given one.
	for _, d := range m.requests[0].Tools {
		if d.Name == "echo" && string(d.Parameters) != `{"properties":{},"type":"object"}` {
			t.Errorf("echo's parameters %s", d.Parameters)
		}
		if d.Name == "broken" && string(d.Parameters) != `{"type": "object", "properties": {}}` {
			t.Errorf("broken's parameters %s", d.Parameters)
		}
	}
}

// TestStepsAreBounded checks that a model that keeps calling tools is
// offered none at the last step, and that one that calls tools then says
// nothing fails plainly.
func TestStepsAreBounded(t *testing.T) {
	search := calls(quarry.ModelToolCall{ID: "s", Name: "internal_search", Arguments: `{"queries": ["x"]}`})
	steps := []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{}
	for range DefaultMaxSteps - 1 {
		steps = append(steps, search)
	}
	m := &scripted{steps: append(steps, says("Enough."))}
	l := &Loop{Searcher: &searcher{}}
	res, err, lines := record(t, l, &Turn{Caller: me, Model: m, History: question("q"), Search: true})
	if err != nil || res.Text != "Enough." {
		t.Fatalf("%+v %v", res, err)
	}
	if len(m.requests) != DefaultMaxSteps || len(m.requests[DefaultMaxSteps-2].Tools) != 1 || m.requests[DefaultMaxSteps-1].Tools != nil {
		t.Errorf("%d requests; tools of the last %v", len(m.requests), m.requests[len(m.requests)-1].Tools)
	}
	if last := lines[len(lines)-1]; last != `5.0 chat.Stop {"Reason":""}` {
		t.Errorf("last packet %s", last)
	}
	// Calling tools when none is offered, at the last step, answers nothing.
	m = &scripted{steps: append(append([]func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{}, steps...), search)}
	_, err = (&Loop{Searcher: &searcher{}}).Run(context.Background(), &Turn{Caller: me, Model: m, History: question("q"), Search: true}, func(Packet) {})
	if err != ErrNoAnswer {
		t.Errorf("no answer: %v", err)
	}
	// An empty answer too.
	m = &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{says()}}
	if _, err = (&Loop{}).Run(context.Background(), &Turn{Caller: me, Model: m, History: question("q")}, func(Packet) {}); err != ErrNoAnswer {
		t.Errorf("empty answer: %v", err)
	}
}

// TestModelFails checks that a provider's failure mid-answer ends the run
// with its error and what was made.
func TestModelFails(t *testing.T) {
	fail := &quarry.ModelError{Status: 429, Message: "rate limited"}
	m := &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		func(_ context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
			each(quarry.ModelEvent{Text: "Half an ans"})
			return fail
		},
	}}
	res, err, lines := record(t, &Loop{}, &Turn{Caller: me, Model: m, History: question("q")})
	if err != fail || res.Text != "Half an ans" {
		t.Fatalf("%+v %v", res, err)
	}
	if lines[len(lines)-1] != `0.0 chat.MessageDelta {"Content":"Half an ans"}` {
		t.Errorf("packets %v", lines)
	}
}

// TestStop checks that the person's stop cancels the model's call and
// ends the answer as stopped, with what was written.
func TestStop(t *testing.T) {
	var asked sync.WaitGroup
	asked.Add(1)
	var cut error
	m := &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		func(ctx context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
			each(quarry.ModelEvent{Text: "Partial"})
			asked.Done()
			<-ctx.Done()
			cut = ctx.Err()
			return ctx.Err()
		},
	}}
	stop := make(chan struct{})
	go func() { asked.Wait(); close(stop) }()
	turn := &Turn{Caller: me, Model: m, History: question("q"), Stopped: func(context.Context) (bool, error) {
		select {
		case <-stop:
			return true, nil
		default:
			return false, nil
		}
	}}
	res, err, lines := record(t, &Loop{StopEvery: time.Millisecond}, turn)
	if err != nil || !res.Stopped || res.Text != "Partial" || cut == nil {
		t.Fatalf("%+v %v %v", res, err, cut)
	}
	if lines[len(lines)-1] != `0.0 chat.Stop {"Reason":"user_cancelled"}` {
		t.Errorf("packets %v", lines)
	}
	// The person's request ending (a client gone) cuts the model's call and
	// ends the run with ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	m = &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		func(ctx context.Context, _ quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		},
	}}
	_, err = (&Loop{}).Run(ctx, &Turn{Caller: me, Model: m, History: question("q")}, func(Packet) {})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("client gone: %v", err)
	}
}

// TestContextWindow checks the rule: the newest history that fits, the
// question and the answer's calls always; search results trimmed to
// their share; a question that cannot fit refused before asking.
func TestContextWindow(t *testing.T) {
	var earlier []*quarry.ChatMessage
	for i := range 10 {
		earlier = append(earlier, &quarry.ChatMessage{Type: quarry.ChatUser, Message: fmt.Sprintf("question %d %s", i, strings.Repeat("word ", 50))},
			&quarry.ChatMessage{Type: quarry.ChatAssistant, Message: fmt.Sprintf("answer %d [[1]](https://x) %s", i, strings.Repeat("word ", 50))})
	}
	earlier = append(earlier, &quarry.ChatMessage{Type: quarry.ChatAssistant, Message: quarry.ChatReservedText},
		&quarry.ChatMessage{Type: quarry.ChatAssistant, Message: "Error from m: down", Error: link("down")})
	m := &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{says("ok")}}
	turn := &Turn{Caller: me, Model: m, MaxInputTokens: 1000, History: question("now", earlier...)}
	if _, err := (&Loop{}).Run(context.Background(), turn, func(Packet) {}); err != nil {
		t.Fatal(err)
	}
	msgs := m.requests[0].Messages
	total := 0
	for _, msg := range msgs {
		total += MessageTokens(msg)
		if strings.Contains(msg.Content, "https://x") || msg.Content == quarry.ChatReservedText || strings.HasPrefix(msg.Content, "Error from") {
			t.Errorf("history holds %q", msg.Content)
		}
	}
	if total > 950 || total < 700 || msgs[len(msgs)-1].Content != "now" || !strings.HasPrefix(msgs[len(msgs)-2].Content, "answer 9 ") {
		t.Errorf("%d tokens in %d messages; last %q", total, len(msgs), msgs[len(msgs)-2].Content)
	}
	// The oldest kept is where the budget ran out: the one before it
	// would not have fit.
	kept := len(msgs) - 2
	if kept >= 20 || kept < 4 {
		t.Errorf("%d earlier messages kept", kept)
	}

	// A search's results take at most half the room left.
	big := strings.Repeat("lava ", 400)
	var hits []quarry.SearchHit
	for i := range 10 {
		hits = append(hits, doc(1, fmt.Sprint("d", i), "T", nil, big))
	}
	m = &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		calls(quarry.ModelToolCall{ID: "s", Name: "internal_search", Arguments: `{"queries": ["lava"]}`}), says("ok")}}
	var given int
	_, err := (&Loop{Searcher: &searcher{hits: map[string][]quarry.SearchHit{"lava": hits}}}).Run(context.Background(),
		&Turn{Caller: me, Model: m, MaxInputTokens: 4000, History: question("lava?"), Search: true}, func(p Packet) {
			if d, ok := p.Obj.(SearchDocuments); ok {
				given = len(d.Documents)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	result := m.requests[1].Messages[len(m.requests[1].Messages)-1].Content
	if given == 0 || given >= 10 || !strings.Contains(result, fmt.Sprintf(`"note": "%d more results did not fit in the model's context window."`, 10-given)) {
		t.Errorf("%d documents given; %s", given, result[len(result)-200:])
	}
	if n := quarry.EstimateTokens(result); n > 4000*95/100/2 {
		t.Errorf("the search's result takes %d tokens", n)
	}

	// A question that cannot fit is refused before asking.
	turn = &Turn{Caller: me, MaxInputTokens: 100, History: question(strings.Repeat("long ", 200)), Search: true}
	if err := CheckFits(turn); quarry.ErrorCode(err) != quarry.EINVALID || !strings.Contains(quarry.ErrorMessage(err), "more than the 95 the model's context window holds") {
		t.Errorf("CheckFits: %v", err)
	}
	if err := CheckFits(&Turn{Caller: me, History: question("short")}); err != nil {
		t.Errorf("CheckFits of a short question: %v", err)
	}
	// Forced: the one tool offered at the first step only.
	m = &scripted{steps: []func(context.Context, quarry.ModelRequest, func(quarry.ModelEvent) error) error{
		calls(quarry.ModelToolCall{ID: "s", Name: "internal_search", Arguments: `{"queries": ["x"]}`}), says("ok")}}
	tools := NameTools([]Tool{{ToolID: 5, ToolName: "w", Method: "get"}})
	_, err = (&Loop{Searcher: &searcher{}}).Run(context.Background(), &Turn{Caller: me, Model: m, History: question("q"), Search: true, Tools: tools,
		Forced: []string{"internal_search"}}, func(Packet) {})
	if err != nil || len(m.requests[0].Tools) != 1 || len(m.requests[1].Tools) != 2 {
		t.Errorf("forced: %v %v %v", err, m.requests[0].Tools, m.requests[1].Tools)
	}
}

// TestMockModel: mock_llm_response's calls of offered tools written as JSON
// objects are made at the first step only; otherwise the text answers.
func TestMockModel(t *testing.T) {
	search := []quarry.ModelTool{{Name: SearchToolName}}
	first := quarry.ModelRequest{Tools: search, Messages: []quarry.ModelMessage{{Role: quarry.ModelUser, Content: "q"}}}
	later := quarry.ModelRequest{Tools: search, Messages: append(slices.Clone(first.Messages), quarry.ModelMessage{Role: quarry.ModelToolResult, Content: "r"})}
	for _, tt := range []struct {
		name, mock string
		r          quarry.ModelRequest
		calls      string // name(arguments) each
		text       string
	}{
		{"one call", `{"name":"internal_search","arguments":{"queries":["a"]}}`, first, `internal_search({"queries":["a"]})`, ""},
		{"two calls, a line each", "{\"name\":\"internal_search\",\"arguments\":{\"queries\":[\"a\"]}}\n{\"name\":\"internal_search\",\"arguments\":{}}", first,
			`internal_search({"queries":["a"]}) internal_search({})`, ""},
		{"inside text", `I will search. {"name":"internal_search","arguments":{"queries":["g"]}} now`, first, `internal_search({"queries":["g"]})`, ""},
		{"a tool not offered", `{"name":"rm_rf","arguments":{}}`, first, "", `{"name":"rm_rf","arguments":{}}`},
		{"no tools offered", `{"name":"internal_search","arguments":{}}`, quarry.ModelRequest{}, "", `{"name":"internal_search","arguments":{}}`},
		{"a later step", `{"name":"internal_search","arguments":{}}`, later, "", `{"name":"internal_search","arguments":{}}`},
		{"plain text", "Hello", first, "", "Hello"},
	} {
		var text strings.Builder
		var calls []string
		err := MockModel(tt.mock).Stream(context.Background(), tt.r, func(ev quarry.ModelEvent) error {
			text.WriteString(ev.Text)
			for _, c := range ev.ToolCalls {
				calls = append(calls, c.Name+"("+c.Arguments+")")
			}
			return nil
		})
		if err != nil || strings.Join(calls, " ") != tt.calls || text.String() != tt.text {
			t.Errorf("%s: calls %q text %q err %v; want %q %q", tt.name, calls, text.String(), err, tt.calls, tt.text)
		}
	}
}
