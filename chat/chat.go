// Package chat is the assistant's loop: it answers a person's question
// with a language model, offering the model the company's search (Onyx's
// internal_search) and the person's tools, running each call the model
// makes with the person's rights, feeding the results back, and citing
// the documents the searches gave, as Onyx v4.6.1's chat does
// (backend/onyx/chat/). It knows neither HTTP (package api speaks Onyx's
// chat API and keeps the sessions, through package store) nor the model's
// client (package outbound's client of OpenAI's Chat Completions): it
// declares what it needs of them, Model, Searcher and ToolRunner, and
// emits Onyx's packets through a callback.
//
// What reaches the model: the default assistant's instructions, the
// session's earlier questions and answers (their text, as much as fits the
// context window: see Fit), the question, and what this answer's calls
// of tools gave. Documents reach it only through the searches of this
// answer, run with the person's rights at this message: earlier answers'
// search results are not given again, so that a change of rights is seen
// by the next message.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quarryhq/quarry"
)

// Model is a language model the loop talks to.
type Model interface {
	// Stream sends r and calls each with the answer's events in order, the
	// last one with its FinishReason; it returns a *quarry.ModelError when
	// the provider refuses or fails, ctx's error when ctx ends (the request
	// is then cut), or each's error, which stops it.
	Stream(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error
}

// Binding is the model that answers, as its provider's configuration
// says: the client (Model), the model's name at the provider, the name
// shown with its answers, its context window (0: FallbackContextWindow)
// and its sampling temperature (nil: the provider's).
type Binding struct {
	Model          Model
	Name           string
	DisplayName    string
	MaxInputTokens int
	Temperature    *float64
}

// MockModel is a Model that answers with its text: Onyx's
// mock_llm_response, for tests. At the answer's first step, when tools are
// offered and the text holds calls of them written as JSON objects
// {"name": …, "arguments": {…}} (one a line, or inside other text), it
// calls those tools instead, as Onyx's loop reads calls written in a
// model's text once; at later steps it answers the text.
type MockModel string

// Stream implements Model.
func (m MockModel) Stream(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	firstStep := !slices.ContainsFunc(r.Messages, func(m quarry.ModelMessage) bool { return m.Role == quarry.ModelToolResult })
	if calls := writtenCalls(string(m), r.Tools); firstStep && len(calls) > 0 {
		return each(quarry.ModelEvent{FinishReason: "tool_calls", ToolCalls: calls})
	}
	if err := each(quarry.ModelEvent{Text: string(m)}); err != nil {
		return err
	}
	return each(quarry.ModelEvent{FinishReason: "stop"})
}

// writtenCalls returns the calls of offered tools written in text as JSON
// objects {"name": …, "arguments": {…}}, in order.
func writtenCalls(text string, offered []quarry.ModelTool) []quarry.ModelToolCall {
	var calls []quarry.ModelToolCall
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if dec.Decode(&c) != nil || c.Name == "" || !slices.ContainsFunc(offered, func(t quarry.ModelTool) bool { return t.Name == c.Name }) {
			continue
		}
		args := string(c.Arguments)
		if args == "" {
			args = "{}"
		}
		calls = append(calls, quarry.ModelToolCall{ID: fmt.Sprintf("mock_call_%d", len(calls)+1), Name: c.Name, Arguments: args})
		i += int(dec.InputOffset()) - 1
	}
	return calls
}

// Searcher is the company's search, with the rights of the person who
// searches.
type Searcher interface {
	// Search returns the copies of documents c may read that best match
	// query, best first, at most limit of them.
	Search(ctx context.Context, c *quarry.Caller, query string, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error)
}

// ToolRunner runs a custom tool's operation or an MCP server's tool as a
// person: with their rights and connections, through the egress guard.
type ToolRunner interface {
	// RunTool runs method of tool id with args (a JSON object) as c. A
	// call that cannot be made, or is refused, fails with an error, a
	// *ToolFailure when it says why for the person.
	RunTool(ctx context.Context, c *quarry.Caller, id int64, method string, args json.RawMessage) (*quarry.ToolRunResult, error)
}

// Tool is a tool the model may call besides the search: an operation of a
// custom tool, or a tool of an MCP server.
type Tool struct {
	ToolID      int64
	Method      string // The operation's name, or the MCP server's name of its tool.
	ToolName    string // The custom tool's name, or the MCP server's.
	MCP         bool   // A tool of an MCP server.
	Description string
	Parameters  json.RawMessage // A JSON Schema object.
	// Name is the name the model calls it by (NameTools).
	Name string
}

// Turn is a question to answer and all the loop needs to answer it.
type Turn struct {
	Caller *quarry.Caller // The person: searches and tools run as them.
	Model  Model
	// ModelName is the model's name at its provider, MaxInputTokens its
	// context window (0: FallbackContextWindow), and Temperature its
	// sampling temperature (nil: the provider's).
	ModelName      string
	MaxInputTokens int
	Temperature    *float64
	// SystemPrompt is the assistant's instructions.
	SystemPrompt string
	// History is the session's mainline, the question last.
	History []*quarry.ChatMessage
	// Context is text the model reads before the question, not kept in
	// the session (Onyx's additional_context).
	Context string
	// Search offers the model the company's search; SearchToolID is the
	// built-in search tool's id, and Filters narrow its searches.
	Search       bool
	SearchToolID int64
	Filters      quarry.SearchFilters
	// Tools are the other tools offered, named (NameTools).
	Tools []Tool
	// Forced are the names of the tools offered at the first step, alone,
	// when the person asked for a tool (Onyx's forced_tool_id: the
	// search, or a custom tool's operations).
	Forced []string
	// Citations: the answer cites the documents as links and citation
	// packets; otherwise the model's citations are removed.
	Citations bool
	// Debug shows each call of a tool as the model made it
	// (ToolCallDebug packets): Onyx's test mode.
	Debug bool
	// Stopped reports whether the person asked the answer to stop; the loop
	// asks it every Loop.StopEvery.
	Stopped func(context.Context) (bool, error)
	// Now is when the answer was asked for (for the prompt's date and the
	// time the answer took to begin); the zero time is the loop's clock.
	Now time.Time
}

// Result is what an answer made, to keep: its text (with its citations as
// Onyx's links), whether the person stopped it, the citations and
// documents, and its calls of tools.
type Result struct {
	Text      string
	Stopped   bool
	Citations []quarry.ChatCitation
	Documents []quarry.SearchHit // What the searches gave the model, in order of their numbers.
	ToolCalls []quarry.ChatToolCall
	// ProcessingSeconds is how long the answer took to begin (nil: it
	// wrote nothing).
	ProcessingSeconds *float64
	Usage             quarry.ModelUsage
}

// Loop answers questions.
type Loop struct {
	Searcher Searcher
	Runner   ToolRunner
	// MaxSteps bounds the requests to the model an answer makes: at the
	// last, no tool is offered, so that it answers (Onyx's MAX_LLM_CYCLES).
	MaxSteps int
	// StopEvery is how often a running answer asks whether it was stopped.
	StopEvery time.Duration
	// SearchLimit is how many documents a search gives the model, at most.
	SearchLimit int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// The loop's defaults.
const (
	DefaultMaxSteps    = 6 // Onyx's MAX_LLM_CYCLES.
	DefaultStopEvery   = 250 * time.Millisecond
	DefaultSearchLimit = 10 // The sections Onyx's search keeps when its model's selection fails.
	// MaxQueries bounds the queries one call of internal_search runs.
	MaxQueries = 5
)

func (l *Loop) maxSteps() int {
	if l.MaxSteps > 0 {
		return l.MaxSteps
	}
	return DefaultMaxSteps
}

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// errStopped is the cause of a run's context when the person stopped it.
var errStopped = errors.New("chat: the person stopped the answer")

// ErrNoAnswer is an answer the model ended without text.
var ErrNoAnswer = quarry.Errorf(quarry.EBADGATEWAY, "The model ended its answer without any text")

// Run answers t, emitting its packets, and returns what it made. When the
// person stops the answer (t.Stopped), Run returns the answer so far with
// Stopped set and a nil error. Otherwise an error ends it: the model's
// (*quarry.ModelError), ctx's when the person's request ended, or the
// loop's (its message fit for the person); the Result then holds what
// was made until then.
func (l *Loop) Run(ctx context.Context, t *Turn, emit func(Packet)) (*Result, error) {
	start := t.Now
	if start.IsZero() {
		start = l.now()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var stopped atomic.Bool
	if t.Stopped != nil {
		every := l.StopEvery
		if every <= 0 {
			every = DefaultStopEvery
		}
		go func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if stop, err := t.Stopped(ctx); err == nil && stop {
						stopped.Store(true)
						cancel(errStopped)
						return
					}
				}
			}
		}()
	}
	r := &run{loop: l, t: t, emit: emit, res: &Result{}, cite: newCiter(t.Citations), numbers: map[copyKey]int{}, start: start}
	err := r.answer(ctx)
	r.finish()
	if stopped.Load() {
		r.res.Stopped = true
		r.emit(Packet{Placement{Turn: r.step}, Stop{Reason: "user_cancelled"}})
		return r.res, nil
	}
	if err == nil {
		r.emit(Packet{Placement{Turn: r.step}, Stop{}})
	}
	return r.res, err
}

// run is the state of one answer.
type run struct {
	loop    *Loop
	t       *Turn
	emit    func(Packet)
	res     *Result
	cite    *citer
	numbers map[copyKey]int // The number of each document given to the model.
	text    strings.Builder // The answer's text, as shown.
	started bool            // message_start went out.
	step    int
	start   time.Time
}

// answer asks the model, a step at a time, until it answers without
// calling tools or the steps run out.
func (r *run) answer(ctx context.Context) error {
	w := newWindow(r.t.MaxInputTokens)
	system := quarry.ModelMessage{Role: quarry.ModelSystem, Content: r.systemPrompt()}
	history := historyMessages(r.t.History[:len(r.t.History)-1])
	current := questionMessages(r.t)
	defs := r.definitions()
	maxSteps := r.loop.maxSteps()
	for r.step = 0; r.step < maxSteps; r.step++ {
		offered := defs
		switch {
		case r.step == maxSteps-1:
			offered = nil
		case r.step == 0 && len(r.t.Forced) > 0:
			offered = slices.DeleteFunc(slices.Clone(defs), func(d quarry.ModelTool) bool { return !slices.Contains(r.t.Forced, d.Name) })
		}
		msgs, err := w.fit(system, history, current, offered)
		if err != nil {
			return err
		}
		req := quarry.ModelRequest{Model: r.t.ModelName, Messages: msgs, Tools: offered, Temperature: r.t.Temperature}
		var (
			stepText strings.Builder
			calls    []quarry.ModelToolCall
		)
		err = r.t.Model.Stream(ctx, req, func(ev quarry.ModelEvent) error {
			if ev.Text != "" {
				stepText.WriteString(ev.Text)
				r.write(ev.Text)
			}
			if ev.FinishReason != "" {
				calls = ev.ToolCalls
				if ev.Usage != nil {
					r.res.Usage.PromptTokens += ev.Usage.PromptTokens
					r.res.Usage.CompletionTokens += ev.Usage.CompletionTokens
				}
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		}
		if len(calls) == 0 {
			break
		}
		current = append(current, quarry.ModelMessage{Role: quarry.ModelAssistant, Content: stepText.String(), ToolCalls: calls})
		if r.t.Debug {
			for i, call := range calls {
				args, err := objectArgs(call.Arguments)
				if err != nil {
					args = json.RawMessage("{}")
				}
				r.emit(Packet{Placement{Turn: r.step, Tab: i}, ToolCallDebug{CallID: call.ID, Name: call.Name, Args: args}})
			}
		}
		for i, call := range calls {
			room := w.room(system, current, offered)
			out := r.call(ctx, call, Placement{Turn: r.step, Tab: i}, offered, room)
			current = append(current, quarry.ModelMessage{Role: quarry.ModelToolResult, Content: out, ToolCallID: call.ID})
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		if r.step == maxSteps-1 {
			break // It called tools when none was offered: no step is left to read them.
		}
	}
	r.flush()
	if strings.TrimSpace(r.text.String()) == "" {
		return ErrNoAnswer
	}
	return nil
}

// write shows a piece of the model's text.
func (r *run) write(s string) {
	r.show(r.cite.write(s))
}

// flush shows what the citer holds at the end.
func (r *run) flush() { r.show(r.cite.flush()) }

// show emits pieces of the answer: message_start before the first.
func (r *run) show(ps []piece) {
	for _, p := range ps {
		if !r.started {
			r.started = true
			secs := r.loop.now().Sub(r.start).Seconds()
			r.res.ProcessingSeconds = &secs
			r.emit(Packet{Placement{Turn: r.step}, MessageStart{Documents: slices.Clone(r.res.Documents), PreAnswerSeconds: secs}})
		}
		if p.cite != nil {
			r.emit(Packet{Placement{Turn: r.step}, Citation{*p.cite}})
			continue
		}
		r.text.WriteString(p.text)
		r.emit(Packet{Placement{Turn: r.step}, MessageDelta{Content: p.text}})
	}
}

// finish fills the result with what the answer made.
func (r *run) finish() {
	r.flush()
	r.res.Text = r.text.String()
	r.res.Citations = slices.Clone(r.cite.out)
}

// systemPrompt returns the assistant's instructions, with the date and,
// when the search is offered, how to cite.
func (r *run) systemPrompt() string {
	var b strings.Builder
	b.WriteString(r.t.SystemPrompt)
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString("The current date is " + r.start.UTC().Format("Monday, January 2, 2006") + ".")
	if r.t.Search && r.t.Citations {
		b.WriteString("\n\nThe results of internal_search are numbered documents. When your answer uses a document, " +
			"cite it by its number in brackets right after what it supports, like [1] or [1, 3]. Cite only the documents you were given.")
	}
	return b.String()
}

// SearchToolName is the name the model calls the company's search by, as
// in Onyx.
const SearchToolName = "internal_search"

// searchDefinition is internal_search as Onyx v4.6.1 offers it
// (backend/onyx/tools/tool_implementations/search/search_tool.py).
var searchDefinition = quarry.ModelTool{
	Name:        SearchToolName,
	Description: "Search connected applications for information.",
	Parameters: json.RawMessage(`{"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}, ` +
		`"description": "List of search queries to execute, typically a single query. Query expansion and filter extraction ` +
		`steps will be run automatically downstream, do not include time or source type scoping details in your query."}}, ` +
		`"required": ["queries"]}`),
}

// definitions returns the tools offered to the model: the search first.
func (r *run) definitions() []quarry.ModelTool {
	var out []quarry.ModelTool
	if r.t.Search {
		out = append(out, searchDefinition)
	}
	for _, tool := range r.t.Tools {
		out = append(out, quarry.ModelTool{Name: tool.Name, Description: tool.Description, Parameters: objectSchema(tool.Parameters)})
	}
	return out
}

// objectSchema returns p as a JSON Schema of an object, as Chat
// Completions' function parameters must be: {"type": "object"} when p is
// not an object, p with "type": "object" when it has no type.
func objectSchema(p json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil || m == nil {
		return json.RawMessage(`{"type": "object", "properties": {}}`)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = json.RawMessage(`"object"`)
		b, _ := json.Marshal(m)
		return b
	}
	return p
}

// historyMessages returns the earlier messages of the mainline as the
// model reads them: the questions, and the answers' text (without their
// citation links, whose numbers were of their own searches); answers that
// failed or never ended are left out.
func historyMessages(msgs []*quarry.ChatMessage) []quarry.ModelMessage {
	var out []quarry.ModelMessage
	for _, m := range msgs {
		switch {
		case m.Type == quarry.ChatUser:
			out = append(out, quarry.ModelMessage{Role: quarry.ModelUser, Content: m.Message})
		case m.Type == quarry.ChatAssistant && m.Error == nil && m.Message != quarry.ChatReservedText:
			out = append(out, quarry.ModelMessage{Role: quarry.ModelAssistant, Content: RemoveCitationLinks(m.Message)})
		}
	}
	return out
}

// questionMessages returns the question, after the context the person's
// client gave (not kept in the session).
func questionMessages(t *Turn) []quarry.ModelMessage {
	var out []quarry.ModelMessage
	if strings.TrimSpace(t.Context) != "" {
		out = append(out, quarry.ModelMessage{Role: quarry.ModelUser, Content: "Context for my next message:\n\n" + t.Context})
	}
	return append(out, quarry.ModelMessage{Role: quarry.ModelUser, Content: t.History[len(t.History)-1].Message})
}

// RemoveCitationLinks returns an answer's text without its citation links
// ("[[1]](https://…)", with the spaces before them), as Onyx's
// remove_answer_citations does for answer_citationless.
func RemoveCitationLinks(s string) string {
	var b strings.Builder
	for {
		loc := citationLinkStart.FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		end := linkEnd(s, loc[1])
		if end < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:loc[0]])
		s = s[end+1:]
	}
}

// citationLinkStart matches the start of a citation link.
var citationLinkStart = regexp.MustCompile(`\s*\[\[\d+\]\]\(`)

// linkEnd returns the index of the parenthesis that closes a link's
// destination beginning at i, or -1.
func linkEnd(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}
