package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/toolrun"
)

// The client of language models: OpenAI's Chat Completions API, streamed,
// for any server that speaks it at a provider's api_base. It is built on
// the official client (github.com/openai/openai-go/v3): its requests (with
// a body and chunks of Quarry's own types, the fields Quarry sends and
// reads, held to openai-go's by TestChatRequestIsOpenAIs), its errors and
// its reader of server-sent events. Its requests go through the egress
// guard's HTTP client (package toolrun) and every read is bounded here:
// the time to the answer's headers and between two reads of its body, the
// size of one event of the stream and of the whole answer (a hostile server's endless stream, huge chunk or endless headers
// ends in a clear error, never in memory or time without end). Every
// failure is a *quarry.ModelError in plain words, without the key.

// ModelLimits bound what a Model reads from a provider.
type ModelLimits struct {
	// FirstByte bounds the wait for the answer's headers; zero means
	// DefaultModelFirstByte.
	FirstByte time.Duration
	// Idle bounds the wait for each read of the answer's body (the gap
	// between two chunks); zero means DefaultModelIdle.
	Idle time.Duration
	// MaxEventBytes bounds one event of the stream (its lines up to the
	// blank line that ends it); zero means DefaultModelMaxEventBytes.
	MaxEventBytes int64
	// MaxAnswerBytes bounds the whole body of an answer; zero means
	// DefaultModelMaxAnswerBytes.
	MaxAnswerBytes int64
}

// The default limits of a Model.
const (
	// DefaultModelFirstByte is how long a provider may take to start its
	// answer: the headers of a streamed answer come before the model's
	// first token, so a minute is long even for a busy server.
	DefaultModelFirstByte = 60 * time.Second
	// DefaultModelIdle is the longest gap between two chunks: reasoning
	// models may think for a while between pieces of text.
	DefaultModelIdle = 120 * time.Second
	// DefaultModelMaxEventBytes bounds one chunk: a chunk holds a piece of
	// text or of a tool call's arguments (bytes), or, from servers that
	// send a call whole, a call's arguments (kilobytes).
	DefaultModelMaxEventBytes = 4 << 20
	// DefaultModelMaxAnswerBytes bounds a whole answer: 128,000 tokens
	// (the longest answers models give) of about 500 bytes each, with the
	// envelope of a chunk around each token.
	DefaultModelMaxAnswerBytes = 64 << 20
)

func (l ModelLimits) withDefaults() ModelLimits {
	if l.FirstByte <= 0 {
		l.FirstByte = DefaultModelFirstByte
	}
	if l.Idle <= 0 {
		l.Idle = DefaultModelIdle
	}
	if l.MaxEventBytes <= 0 {
		l.MaxEventBytes = DefaultModelMaxEventBytes
	}
	if l.MaxAnswerBytes <= 0 {
		l.MaxAnswerBytes = DefaultModelMaxAnswerBytes
	}
	return l
}

// Model is the client of one provider's Chat Completions API. It is safe
// for concurrent use.
type Model struct {
	client openai.Client
	base   string
	key    string
	limits ModelLimits
	// maxCompletionTokens sends ModelRequest.MaxTokens as
	// max_completion_tokens (OpenAI's, which its reasoning models require)
	// rather than max_tokens (what other servers read).
	maxCompletionTokens bool
}

// Model returns the client of provider p's models, through the egress
// guard, with limits lim.
func (s *Service) Model(p *quarry.LLMProvider, lim ModelLimits) *Model {
	return NewModel(s.runner.Client(), p, lim)
}

// NewModel returns the client of provider p's models whose requests go
// through hc (the egress guard's client, see toolrun.Runner.Client), with
// limits lim.
func NewModel(hc *http.Client, p *quarry.LLMProvider, lim ModelLimits) *Model {
	m := &Model{base: strings.TrimRight(p.BaseURL(), "/") + "/", key: p.APIKey, limits: lim.withDefaults(),
		maxCompletionTokens: p.Provider == quarry.LLMProviderOpenAI}
	// A Client of these options only, not openai.NewClient's: that reads
	// OPENAI_* variables of the environment (an organisation's id would go
	// to every provider); only cmd/quarry reads the environment.
	m.client = openai.Client{Options: []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(m.base),
		option.WithAPIKey(p.APIKey),
		option.WithMaxRetries(0), // A refusal reaches the person at once, with its Retry-After.
		option.WithMiddleware(m.bound),
	}}
	return m
}

// streamChunk is what Quarry reads of a chunk of a streamed answer
// (OpenAI's ChatCompletionChunk): openai.ChatCompletionChunk decodes every
// field, twice over (encoding/json, then the client's own decoder), which
// was the largest part of Quarry's own time per message; these few fields
// decode once with encoding/json. A field of the wrong type is a chunk
// that is not Chat Completions JSON.
type streamChunk struct {
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content   string           `json:"content"`
			Refusal   string           `json:"refusal"`
			ToolCalls []streamToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	// Usage's counts are read as numbers of any form (12 or 12.0): the
	// usage comes last, after the answer's text, and a provider's odd
	// number must not fail an answer already shown.
	Usage *struct {
		PromptTokens     float64 `json:"prompt_tokens"`
		CompletionTokens float64 `json:"completion_tokens"`
	} `json:"usage"`
}

// streamToolCall is a piece of a call of a tool in a streamChunk.
type streamToolCall struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Stream sends r and calls each with the answer's events in order, the
// last one with its FinishReason, the whole calls of tools and the usage
// (chat.Model). It returns a *quarry.ModelError when the provider refuses
// or fails, ctx's error when ctx ends (the request is then cut), or each's
// error, which stops it.
func (m *Model) Stream(ctx context.Context, r quarry.ModelRequest, each func(quarry.ModelEvent) error) error {
	body, err := m.request(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// What openai.ChatCompletionService.NewStreaming does, with Quarry's
	// body, read as streamChunks: the client's request, its errors and its
	// reader of server-sent events.
	var raw *http.Response
	err = m.client.Post(ctx, "chat/completions", body, &raw)
	stream := ssestream.NewStream[streamChunk](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	var (
		finish string
		usage  *quarry.ModelUsage
		calls  toolCalls
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Usage != nil {
			usage = &quarry.ModelUsage{PromptTokens: int(chunk.Usage.PromptTokens), CompletionTokens: int(chunk.Usage.CompletionTokens)}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue // Quarry asks for one choice.
			}
			if text := c.Delta.Content + c.Delta.Refusal; text != "" {
				if err := each(quarry.ModelEvent{Text: text}); err != nil {
					return err
				}
			}
			for _, d := range c.Delta.ToolCalls {
				calls.add(d)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return m.failure(ctx, err)
	}
	if finish == "" {
		if err := ctx.Err(); err != nil {
			return err
		}
		return &quarry.ModelError{Message: "the answer stopped before it was complete: the provider ended its stream without saying why the answer finished"}
	}
	return each(quarry.ModelEvent{FinishReason: finish, ToolCalls: calls.whole(), Usage: usage})
}

// chatRequest is the body of a request: OpenAI's Chat Completions
// request, with the fields Quarry sends. It is encoded by encoding/json
// rather than built from openai.ChatCompletionNewParams, whose encoder
// (reflection over its optional and union types, then sjson to set
// "stream") took a fifth of Quarry's own time per chat message;
// TestChatRequestIsOpenAIs holds it to what openai-go sends for the same
// conversation.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Tools               []chatTool    `json:"tools,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitzero"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitzero"`
	Temperature         *float64      `json:"temperature,omitempty"`
	Stream              bool          `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage is a message of a chatRequest.
type chatMessage struct {
	Role       quarry.ModelRole `json:"role"`
	Content    *string          `json:"content,omitempty"`
	ToolCalls  []chatToolCall   `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitzero"`
}

// chatToolCall is a call of a tool in an assistant's chatMessage.
type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatTool is a tool a chatRequest offers.
type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitzero"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// request turns r into the request's body: one choice, streamed, with its
// usage at the end.
func (m *Model) request(r quarry.ModelRequest) (*chatRequest, error) {
	out := &chatRequest{Model: r.Model, Messages: make([]chatMessage, 0, len(r.Messages)), Temperature: r.Temperature, Stream: true}
	out.StreamOptions.IncludeUsage = true
	for _, msg := range r.Messages {
		cm := chatMessage{Role: msg.Role}
		switch msg.Role {
		case quarry.ModelSystem, quarry.ModelUser:
			cm.Content = &msg.Content
		case quarry.ModelAssistant:
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				cm.Content = &msg.Content
			}
			for _, c := range msg.ToolCalls {
				tc := chatToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
				cm.ToolCalls = append(cm.ToolCalls, tc)
			}
		case quarry.ModelToolResult:
			cm.Content, cm.ToolCallID = &msg.Content, msg.ToolCallID
		default:
			return nil, fmt.Errorf("outbound: a message of role %q", msg.Role)
		}
		out.Messages = append(out.Messages, cm)
	}
	for _, t := range r.Tools {
		ct := chatTool{Type: "function"}
		ct.Function.Name, ct.Function.Description = t.Name, t.Description
		if len(t.Parameters) > 0 {
			var object map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &object); err != nil || object == nil {
				return nil, fmt.Errorf("outbound: the parameters of tool %s are not a JSON object", t.Name)
			}
			ct.Function.Parameters = t.Parameters
		}
		out.Tools = append(out.Tools, ct)
	}
	if m.maxCompletionTokens {
		out.MaxCompletionTokens = r.MaxTokens
	} else {
		out.MaxTokens = r.MaxTokens
	}
	return out, nil
}

// toolCalls assembles the pieces of an answer's calls of tools, by their
// index in the answer.
type toolCalls struct {
	order []int64
	calls map[int64]*partialCall
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// add adds the piece d of a call.
func (t *toolCalls) add(d streamToolCall) {
	if t.calls == nil {
		t.calls = map[int64]*partialCall{}
	}
	c := t.calls[d.Index]
	if c == nil {
		c = &partialCall{}
		t.calls[d.Index] = c
		t.order = append(t.order, d.Index)
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Function.Name != "" && c.name == "" {
		c.name = d.Function.Name
	}
	c.args.WriteString(d.Function.Arguments)
}

// whole returns the calls, in the order of their indexes.
func (t *toolCalls) whole() []quarry.ModelToolCall {
	if len(t.order) == 0 {
		return nil
	}
	idx := slices.Clone(t.order)
	slices.Sort(idx)
	out := make([]quarry.ModelToolCall, len(idx))
	for i, n := range idx {
		c := t.calls[n]
		out[i] = quarry.ModelToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()}
	}
	return out
}

// The failures of the limits, which the body's reads return.
var (
	errFirstByte   = errors.New("no answer in time")
	errIdle        = errors.New("no data in time")
	errEventSize   = errors.New("event too large")
	errAnswerSize  = errors.New("answer too large")
	errNotAnSSE    = errors.New("not an event stream")
	errModelClosed = errors.New("closed")
)

// bound is the middleware of every request: it bounds the wait for the
// answer's headers, then hands out the body wrapped in limitedBody.
func (m *Model) bound(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(m.limits.FirstByte, func() { cancel(errFirstByte) })
	res, err := next(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		cancel(errModelClosed)
		if errors.Is(context.Cause(ctx), errFirstByte) {
			return nil, errFirstByte
		}
		return nil, err
	}
	if res.StatusCode == http.StatusOK {
		ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
		if ct != "text/event-stream" {
			res.Body.Close()
			cancel(errModelClosed)
			return nil, fmt.Errorf("%w: %q", errNotAnSSE, res.Header.Get("Content-Type"))
		}
	}
	res.Body = &limitedBody{rc: res.Body, ctx: ctx, cancel: cancel, lim: m.limits, lineStart: true}
	return res, nil
}

// limitedBody is an answer's body, bounded in time between reads and in
// size, per event and in all.
type limitedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	lim    ModelLimits
	total  int64 // Bytes read.
	event  int64 // Bytes of the event being read.
	// lineStart says the next byte starts a line: a line end there ends
	// the event.
	lineStart bool
	err       error
}

// Read reads from the body within the idle limit, and fails past the
// size limits.
func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	timer := time.AfterFunc(b.lim.Idle, func() { b.cancel(errIdle) })
	n, err := b.rc.Read(p)
	timer.Stop()
	for _, c := range p[:n] {
		switch {
		case c == '\n' && b.lineStart:
			b.event = 0
		case c == '\n':
			b.lineStart = true
		case c != '\r':
			b.lineStart = false
			b.event++
		}
	}
	b.total += int64(n)
	switch {
	case b.total > b.lim.MaxAnswerBytes:
		b.err = errAnswerSize
	case b.event > b.lim.MaxEventBytes:
		b.err = errEventSize
	case err != nil && b.ctx.Err() != nil && !errors.Is(context.Cause(b.ctx), errModelClosed):
		b.err = context.Cause(b.ctx)
	case err != nil:
		b.err = err
	}
	if b.err != nil {
		b.cancel(errModelClosed)
		return n, b.err
	}
	return n, nil
}

// Close closes the body and ends its request.
func (b *limitedBody) Close() error {
	err := b.rc.Close()
	b.cancel(errModelClosed)
	return err
}

// failure turns err, the failure of a request, into what Stream returns:
// ctx's own error when it ended, a *quarry.ModelError otherwise. Words
// that come from the provider are clipped and hold no key.
func (m *Model) failure(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !isLimit(err) {
		return cerr
	}
	var (
		apiErr  *openai.Error
		sseErr  *ssestream.StreamError
		refused *toolrun.RefusedError
		syntax  *json.SyntaxError
		typ     *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &apiErr):
		return m.refusal(apiErr)
	case errors.As(err, &sseErr):
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(sseErr.Event.Data, &body)
		return &quarry.ModelError{Message: "the provider failed in the middle of the answer: " + m.words(body.Error.Message)}
	case errors.As(err, &refused):
		return &quarry.ModelError{Message: refused.Error()}
	case errors.Is(err, errFirstByte):
		return &quarry.ModelError{Message: fmt.Sprintf("the provider did not start its answer within %v", m.limits.FirstByte)}
	case errors.Is(err, errIdle):
		return &quarry.ModelError{Message: fmt.Sprintf("the provider sent nothing for %v in the middle of the answer", m.limits.Idle)}
	case errors.Is(err, errEventSize):
		return &quarry.ModelError{Message: fmt.Sprintf("a chunk of the answer is larger than %s, the most Quarry reads", connector.ByteSize(m.limits.MaxEventBytes))}
	case errors.Is(err, errAnswerSize):
		return &quarry.ModelError{Message: fmt.Sprintf("the answer is larger than %s, the most Quarry reads", connector.ByteSize(m.limits.MaxAnswerBytes))}
	case errors.Is(err, errNotAnSSE):
		return &quarry.ModelError{Status: http.StatusOK, Message: "the provider's answer is not a stream of server-sent events (" +
			strings.TrimPrefix(err.Error(), errNotAnSSE.Error()+": ") + "): is api_base the URL of its OpenAI-compatible API?"}
	case errors.As(err, &syntax), errors.As(err, &typ):
		return &quarry.ModelError{Message: "the provider sent a chunk that is not Chat Completions JSON"}
	case strings.Contains(err.Error(), "server response headers exceeded"):
		return &quarry.ModelError{Message: fmt.Sprintf("the provider's answer has headers larger than %s, the most Quarry reads", connector.ByteSize(toolrun.MaxResponseHeaderBytes))}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, net.ErrClosed):
		return &quarry.ModelError{Message: "the provider cut the connection before the answer was complete"}
	}
	return &quarry.ModelError{Message: "the provider could not be reached at " + m.host() + ": " + reachReason(err)}
}

// isLimit reports whether err is one of the limits' failures, which end
// the request's own context.
func isLimit(err error) bool {
	for _, e := range []error{errFirstByte, errIdle, errEventSize, errAnswerSize} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// refusal turns an error answer into a ModelError.
func (m *Model) refusal(e *openai.Error) error {
	me := &quarry.ModelError{Status: e.StatusCode}
	said := m.words(e.Message)
	switch {
	case e.StatusCode == http.StatusUnauthorized:
		me.Message = "the provider refused the key"
	case e.StatusCode == http.StatusForbidden:
		me.Message = "the provider refused the key for this request: " + said
	case e.StatusCode == http.StatusNotFound:
		me.Message = "the provider has no such model, or api_base is not the URL of its OpenAI-compatible API: " + said
	case e.StatusCode == http.StatusTooManyRequests:
		me.RetryAfter = retryAfter(e.Response)
		me.Message = "the provider is limiting requests"
		if me.RetryAfter > 0 {
			me.Message += fmt.Sprintf("; retry after %v", me.RetryAfter)
		}
		me.Message += ": " + said
	case e.StatusCode >= 500:
		me.Message = "the provider failed: " + said
	default:
		me.Message = "the provider refused the request: " + said
	}
	return me
}

// maxWords bounds what a ModelError quotes of the provider's words.
const maxWords = 300

// words returns the provider's words fit for a message: clipped, with the
// key (of minSecretLen characters or more) replaced by
// quarry.MaskedSecret, and something when it said nothing.
func (m *Model) words(s string) string {
	if len(m.key) >= minSecretLen {
		s = strings.ReplaceAll(s, m.key, quarry.MaskedSecret)
	}
	s = quarry.ClipText(strings.TrimSpace(s), maxWords)
	if s == "" {
		return "it said nothing more"
	}
	return s
}

// minSecretLen is the length below which a key is not looked for in the
// provider's words: a shorter one could be any word.
const minSecretLen = 8

// host returns the host requests go to.
func (m *Model) host() string {
	u, err := url.Parse(m.base)
	if err != nil {
		return "the provider"
	}
	return u.Host
}

// reachReason says why a connection failed, without addresses.
func reachReason(err error) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return "its name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "it did not answer in time"
	}
	var ue *url.Error
	if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "tls") {
		return "the TLS handshake failed"
	}
	return "the connection failed"
}

// retryAfter reads the wait a 429 asks for: Retry-After in seconds or as a
// date, or OpenAI's retry-after-ms; 0 if none, at most an hour.
func retryAfter(res *http.Response) time.Duration {
	if res == nil {
		return 0
	}
	var d time.Duration
	if ms, err := strconv.ParseFloat(res.Header.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if v := res.Header.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
			d = time.Duration(secs * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = time.Until(t)
		}
	}
	return min(max(d, 0), time.Hour).Round(time.Millisecond)
}

// TestModelTimeout bounds a test of a provider (TestModel): its answer's
// start and each gap in it, and the whole test.
const TestModelTimeout = 30 * time.Second

// testModelPrompt and testModelTokens are the request of a test, as
// Onyx's test_llm sends it.
const (
	testModelPrompt = "Do not respond"
	testModelTokens = 50
)

// TestModel tests the configuration t of a provider, as Onyx's POST
// /admin/llm/test does: it calls the model t names with a short message,
// with t's key or, when t does not change it, the key of the stored
// provider t names (quarry.LLMTest.Target), and returns nil when an
// answer came whole. A refusal or failure of the provider is a 400 with
// its ModelError's words, as in Onyx.
func (s *Service) TestModel(ctx context.Context, t quarry.LLMTest) error {
	var stored *quarry.LLMProvider
	if t.ID != nil && *t.ID != 0 {
		dctx, cancel := s.dbContext(ctx)
		p, err := s.db.LLMProvider(dctx, *t.ID)
		cancel()
		if err != nil && quarry.ErrorCode(err) != quarry.ENOTFOUND {
			return err
		}
		stored = p // A provider that does not exist lends no key, as in Onyx.
	}
	target, err := t.Target(stored)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, TestModelTimeout)
	defer cancel()
	m := s.Model(&target, ModelLimits{FirstByte: TestModelTimeout, Idle: TestModelTimeout})
	err = m.Stream(cctx, quarry.ModelRequest{Model: t.Model, MaxTokens: testModelTokens,
		Messages: []quarry.ModelMessage{{Role: quarry.ModelUser, Content: testModelPrompt}}},
		func(quarry.ModelEvent) error { return nil })
	var me *quarry.ModelError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &me):
		return quarry.Errorf(quarry.EINVALID, "%s", me.Error())
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return quarry.Errorf(quarry.EINVALID, "%s", (&quarry.ModelError{Message: fmt.Sprintf("the answer did not end within %v", TestModelTimeout)}).Error())
	}
	return err
}
