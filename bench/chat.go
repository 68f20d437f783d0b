package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/toolrun"
)

// -op chat: issue 41's targets. The person of -op search's corpus (in 3
// of 50 groups, seeing 13 of 60 pairs; -search-docs documents, 10,000 by
// default) asks the assistant questions, each in a new session, streamed
// (POST /chat/send-chat-message with "stream": true), while the default
// model is a scripted OpenAI-compatible server that bench serves on
// loopback (package llmtest, behind the egress guard as any provider): it
// answers a question by calling internal_search with a query of the
// corpus, then, given the search's documents, streams an answer of
// chatPieces pieces citing the first. What each message costs is taken
// apart:
//
//   - the model's time: from its server receiving each request of the
//     message to its writing the last byte (timed around its handler),
//     summed over the message's two requests;
//   - the search's: the gap between the stream's search_tool_queries_delta
//     packet (sent just before the search) and its
//     search_tool_documents_delta (just after), as the client reads them;
//   - Quarry's own: the message's whole time, from sending the request to
//     reading the answer's last byte, less those two;
//   - the first token's delay: from the model's server writing the first
//     piece of text to the client reading the message_delta that carries
//     it.
//
// An {"error"} line in a 200 stream counts as a failed request. The floor
// serves a session's creation and a message's whole stream from memory.

// Chat is the -op of streamed answers of the assistant.
const Chat = "chat"

// DefaultChatDocs is the corpus of -op chat when -search-docs is not given.
const DefaultChatDocs = 10_000

// The answers' shape, and the targets of issue 41.
const (
	chatPieces       = 20 // Pieces of text of an answer.
	chatProviderName = "bench"
	chatModelName    = "bench-model"
	chatModelKey     = "sk-bench-0123456789abcdefghijklmnopqrstuv"
	targetChatOwnMS  = 5.0
	targetFirstToken = 10.0
)

var (
	chatSessionPath  = "/chat/create-chat-session"
	chatSendPath     = "/chat/send-chat-message"
	chatSessionRoute = route{"POST", chatSessionPath}
	chatSendRoute    = route{"POST", chatSendPath}
	chatSeries       = series{name: Chat, route: chatSendRoute}
	// chatSessionSeries is the session each message is asked in.
	chatSessionSeries = series{name: "chat:session", route: chatSessionRoute, part: true}
)

// chatMarker finds the number bench gives each message in its text.
var chatMarker = regexp.MustCompile(`bench-chat-(\d+):`)

// ChatReport is what -op chat measured beside the latencies (the Results'
// "chat" is a message's whole time).
type ChatReport struct {
	Corpus SearchCorpus `json:"corpus"`
	// DocumentSet is the set each message's search was narrowed to
	// (-document-set), or "".
	DocumentSet string `json:"document_set"`
	// Messages counts the server's measured messages; Cited those whose
	// answer cited a document.
	Messages int64 `json:"messages"`
	Cited    int64 `json:"cited"`
	// Own is Quarry's own time per message: everything but the model and
	// the search. WithSearch is Own with the search.
	Own        Latency `json:"own_ms"`
	WithSearch Latency `json:"own_with_search_ms"`
	Search     Latency `json:"search_ms"`
	Model      Latency `json:"model_ms"`
	// FirstToken is the delay between the model's writing the first piece
	// of text and the client's reading it.
	FirstToken        Latency  `json:"first_token_ms"`
	TargetOwnP50MS    float64  `json:"target_own_p50_ms"`
	TargetFirstP50MS  float64  `json:"target_first_token_p50_ms"`
	HeapAfterLoad     uint64   `json:"heap_inuse_after_load_bytes"`
	HeapAfterMessages uint64   `json:"heap_inuse_after_messages_bytes"`
	Missed            []string `json:"missed"`
}

// chatWork is what the clients of -op chat send, and the parts of the
// messages' times they record.
type chatWork struct {
	token   string   // The person's.
	set     string   // The set each message's search is narrowed to (-document-set), or "".
	queries []string // The corpus's queries the model searches for.
	next    atomic.Int64
	model   *chatModel
	// The server phase's parts of each measured message.
	own, withSearch, search, modelTime, first histogram
	messages, cited                           atomic.Int64
}

// chatModel is the scripted model's server, and the times it took per
// message.
type chatModel struct {
	base string // Its api_base.
	addr netip.Addr
	stop func()

	mu    sync.Mutex
	times map[int64]*modelTime
}

// modelTime is what the model spent on one message. It is noted as each
// chunk is written, before it is, so that it is complete by the time
// Quarry has read the answer (the handler's return may come later).
type modelTime struct {
	requests []time.Duration // Each request's, from its arrival to its last write.
	first    time.Time       // When the first piece of text was written.
}

// startChatModel serves the scripted model on loopback, with the settings
// of the server under test.
func startChatModel(s Server) (*chatModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &chatModel{base: "http://" + ln.Addr().String() + "/v1", addr: netip.MustParseAddr("127.0.0.1"), times: map[int64]*modelTime{}}
	srv := s.HTTP(m.timed(llmtest.NewHandler(chatScript)), slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	m.stop = func() { shutdown(srv) }
	return m, nil
}

// egress opens the model's address, and nothing else, to Quarry's calls.
func (m *chatModel) egress() toolrun.Policy {
	return toolrun.Policy{Allow: []netip.Prefix{netip.PrefixFrom(m.addr, 32)}}
}

// chatScript is the model: a question gets a search of the words after
// its marker, the search's documents an answer citing the first.
func chatScript(req *llmtest.Request) llmtest.Script {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		pieces := make([]string, chatPieces)
		for i := range pieces {
			pieces[i] = fmt.Sprintf("word%d ", i)
		}
		pieces[len(pieces)-1] = "as the first document says [1]."
		return llmtest.Text(pieces...)
	}
	_, query, _ := strings.Cut(last.Content, ": ")
	args, _ := json.Marshal(map[string][]string{"queries": {query}})
	return llmtest.Script{ToolCalls: []llmtest.ToolCall{llmtest.Call("call_search", "internal_search", string(args))}}
}

// timed wraps the model's handler: each request of a message (found by
// its marker) is timed from its arrival to its last write, and the first
// write of a piece of text is noted.
func (m *chatModel) timed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		found := chatMarker.FindAllSubmatch(body, -1)
		if len(found) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		id, _ := strconv.ParseInt(string(found[len(found)-1][1]), 10, 64)
		m.mu.Lock()
		t := m.times[id]
		if t == nil {
			t = &modelTime{}
			m.times[id] = t
		}
		t.requests = append(t.requests, 0)
		tw := &timedWriter{ResponseWriter: w, m: m, t: t, slot: len(t.requests) - 1, start: start}
		m.mu.Unlock()
		h.ServeHTTP(tw, r)
	})
}

// take returns and forgets what the model spent on message id: the sum
// of its requests' times, and when it wrote the first piece of text.
func (m *chatModel) take(id int64) (spent time.Duration, first time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.times[id]
	if !ok {
		return 0, time.Time{}, false
	}
	delete(m.times, id)
	for _, d := range t.requests {
		spent += d
	}
	return spent, t.first, true
}

// timedWriter notes, before each write of a request's answer, the time
// the request has taken, and the first chunk with a piece of text.
type timedWriter struct {
	http.ResponseWriter
	m     *chatModel
	t     *modelTime
	slot  int
	start time.Time
}

func (w *timedWriter) Write(p []byte) (int, error) {
	now := time.Now()
	text := bytes.Contains(p, []byte(`"content":"`)) && !bytes.Contains(p, []byte(`"content":""`))
	w.m.mu.Lock()
	w.t.requests[w.slot] = now.Sub(w.start)
	if text && w.t.first.IsZero() {
		w.t.first = now
	}
	w.m.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController flush the chunks as they go.
func (w *timedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// prepareChat makes the model the default (a provider whose api_base is
// bench's scripted server; on a reused corpus, the provider an earlier run
// made now points there), readies the questions, and asks one, to check
// that it works and to keep its answers for the floor.
func prepareChat(ctx context.Context, w *work, p *preparation) error {
	m := p.sys.model
	if m == nil {
		return errors.New("-op chat needs the in-process server, which serves its scripted model")
	}
	type named struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	var listing struct {
		Providers []named `json:"providers"`
	}
	if err := p.caller.decode(ctx, "GET", "/admin/llm/provider", nil, &listing); err != nil {
		return err
	}
	spec := map[string]any{"name": chatProviderName, "provider": "openai_compatible", "api_key": chatModelKey, "api_base": m.base,
		"model_configurations": []map[string]any{{"name": chatModelName, "is_visible": true, "max_input_tokens": 128_000}}}
	create := true
	if i := slices.IndexFunc(listing.Providers, func(p named) bool { return p.Name == chatProviderName }); i >= 0 {
		spec["id"], spec["api_key_changed"], create = listing.Providers[i].ID, true, false // A new api_base takes the key again.
	}
	var provider named
	if err := p.caller.decode(ctx, "PUT", "/admin/llm/provider?is_creation="+strconv.FormatBool(create), mustJSON(spec), &provider); err != nil {
		return err
	}
	if _, err := p.caller.call(ctx, "POST", "/admin/llm/default", mustJSON(map[string]any{"provider_id": provider.ID, "model_name": chatModelName})); err != nil {
		return err
	}
	cw := &chatWork{token: p.sys.search.personToken, set: p.sys.search.set, model: m}
	cw.queries = searchQueryTexts()
	w.chat = cw
	person := &caller{client: p.caller.client, base: p.caller.base, token: cw.token}
	session, err := person.call(ctx, "POST", chatSessionPath, cw.sessionBody())
	if err != nil {
		return err
	}
	id, err := sessionID(session)
	if err != nil {
		return err
	}
	for _, q := range cw.queries[:10] {
		answer, err := person.call(ctx, "POST", chatSendPath, cw.messageBody(id, q, -1))
		if err != nil {
			return err
		}
		var lines int
		var failed string
		cited := false
		for line := range bytes.Lines(answer) {
			lines++
			var v struct {
				Error *string `json:"error"`
				Obj   struct {
					Type string `json:"type"`
				} `json:"obj"`
			}
			if json.Unmarshal(line, &v) != nil {
				return fmt.Errorf("bench: the chat's answer holds a line that is not JSON: %s", truncate(line, 300))
			}
			if v.Error != nil {
				failed = *v.Error
			}
			cited = cited || v.Obj.Type == "citation_info"
		}
		if failed != "" {
			return fmt.Errorf("bench: the chat answered an error: %s", failed)
		}
		if cited {
			w.answers[chatSessionRoute] = session
			w.answers[chatSendRoute] = answer
			return nil
		}
	}
	return errors.New("bench: no answer of the chat cited a document: is the corpus loaded?")
}

// sessionBody is the body of a session's creation: the default assistant.
func (cw *chatWork) sessionBody() []byte { return []byte(`{"persona_id":0}`) }

// messageBody is the body of a question in session id, numbered n (-1
// for one not measured), narrowed to the corpus's set with -document-set.
func (cw *chatWork) messageBody(session, query string, n int64) []byte {
	body := map[string]any{"chat_session_id": session, "message": fmt.Sprintf("bench-chat-%d: %s", n, query), "stream": true}
	if cw.set != "" {
		body["internal_search_filters"] = map[string]any{"document_set": []string{cw.set}}
	}
	return mustJSON(body)
}

// sessionID reads a session's creation's answer.
func sessionID(answer []byte) (string, error) {
	var v struct {
		ID string `json:"chat_session_id"`
	}
	if err := json.Unmarshal(answer, &v); err != nil || v.ID == "" {
		return "", fmt.Errorf("bench: the session's creation answered %s", truncate(answer, 300))
	}
	return v.ID, nil
}

// stepChat asks one question in a new session, reading the answer's lines
// as they come; on the server, a measured message's parts are recorded.
func stepChat(c *client, measure bool) {
	cw := c.w.chat
	auth := []string{"Authorization", "Bearer " + cw.token}
	var session []byte
	if !c.send(chatSessionSeries, chatSessionPath, cw.sessionBody(), measure, func(r io.Reader) (err error) {
		session, err = io.ReadAll(r)
		return err
	}, auth...) {
		return
	}
	id, err := sessionID(session)
	if err != nil {
		c.ph.errs.add(c.ph.name, chatSessionSeries.name, "POST", chatSessionPath, 200, err.Error())
		return
	}
	n := cw.next.Add(1)
	var firstText, queries, documents time.Time
	cited := false
	var failed string
	// The lines are only kept and stamped as they come; they are decoded
	// after the message's end, so that the client's decoding (the search's
	// documents are a line of kilobytes) is not counted as Quarry's time.
	var lines [][]byte
	var arrived []time.Time
	start := time.Now()
	ok := c.send(chatSeries, chatSendPath, cw.messageBody(id, cw.queries[c.rng.IntN(len(cw.queries))], n), measure, func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			arrived = append(arrived, time.Now())
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
		return sc.Err()
	}, auth...)
	whole := time.Since(start)
	if ok {
		for i, line := range lines {
			var v struct {
				Error *string `json:"error"`
				Obj   struct {
					Type    string `json:"type"`
					Content string `json:"content"`
				} `json:"obj"`
			}
			if err := json.Unmarshal(line, &v); err != nil {
				c.ph.errs.add(c.ph.name, chatSeries.name, "POST", chatSendPath, 0, "reading the answer: a line that is not JSON: "+err.Error())
				return
			}
			at := arrived[i]
			switch {
			case v.Error != nil:
				failed = *v.Error
			case v.Obj.Type == "message_delta" && v.Obj.Content != "" && firstText.IsZero():
				firstText = at
			case v.Obj.Type == "search_tool_queries_delta":
				queries = at
			case v.Obj.Type == "search_tool_documents_delta":
				documents = at
			case v.Obj.Type == "citation_info":
				cited = true
			}
		}
	}
	if !ok {
		return
	}
	if failed != "" {
		c.ph.errs.add(c.ph.name, chatSeries.name, "POST", chatSendPath, 200, `{"error": `+strconv.Quote(failed)+`}`)
		return
	}
	if c.ph.name != "server" || !measure {
		return
	}
	spent, modelFirst, ok := cw.model.take(n)
	if !ok || queries.IsZero() || documents.IsZero() || firstText.IsZero() || modelFirst.IsZero() {
		c.ph.errs.add(c.ph.name, chatSeries.name, "POST", chatSendPath, 200, "the answer did not search, or the model was not asked")
		return
	}
	search := documents.Sub(queries)
	cw.messages.Add(1)
	if cited {
		cw.cited.Add(1)
	}
	cw.own.record(c.shard, whole-spent-search)
	cw.withSearch.record(c.shard, whole-spent)
	cw.search.record(c.shard, search)
	cw.modelTime.record(c.shard, spent)
	cw.first.record(c.shard, firstText.Sub(modelFirst))
}

// startChatReport begins the report's chat part after the corpus's load.
func (r *Report) startChatReport(sys *system) {
	s := sys.search
	r.Chat = &ChatReport{
		Corpus: SearchCorpus{Documents: s.docs, Pairs: searchGroups + searchPublic, PublicPairs: searchPublic, Groups: searchGroups,
			PersonGroups: searchPersonGroups, VisiblePairs: searchPublic + searchPersonGroups, Reused: s.reused},
		DocumentSet: s.set, TargetOwnP50MS: targetChatOwnMS, TargetFirstP50MS: targetFirstToken, HeapAfterLoad: heapInUse(), Missed: []string{},
	}
}

// endChatReport ends it once the loads are done: the parts of the
// messages' times, and the targets.
func (r *Report) endChatReport(cw *chatWork) {
	cr := r.Chat
	cr.Messages, cr.Cited = cw.messages.Load(), cw.cited.Load()
	cr.Own, cr.WithSearch, cr.Search = latency(cw.own.summary()), latency(cw.withSearch.summary()), latency(cw.search.summary())
	cr.Model, cr.FirstToken = latency(cw.modelTime.summary()), latency(cw.first.summary())
	cr.HeapAfterMessages = heapInUse()
	if cr.Own.P50 > targetChatOwnMS {
		cr.Missed = append(cr.Missed, fmt.Sprintf("Quarry's own time per message: p50 %s, over %s", ms(cr.Own.P50), ms(targetChatOwnMS)))
	}
	if cr.FirstToken.P50 > targetFirstToken {
		cr.Missed = append(cr.Missed, fmt.Sprintf("first token: p50 %s after the model sent it, over %s", ms(cr.FirstToken.P50), ms(targetFirstToken)))
	}
}

// writeChatText writes -op chat's figures beside the latencies.
func (r *Report) writeChatText(w io.Writer) {
	cr := r.Chat
	fmt.Fprintf(w, "messages  %d measured, %d citing a document; each in a new session, as a person in %d of %d groups (%d of %d pairs)\n",
		cr.Messages, cr.Cited, cr.Corpus.PersonGroups, cr.Corpus.Groups, cr.Corpus.VisiblePairs, cr.Corpus.Pairs)
	if cr.DocumentSet != "" {
		fmt.Fprintf(w, "filter    document set %q (every pair of the corpus), in internal_search_filters\n", cr.DocumentSet)
	}
	const row = "%-28s %9s %9s %9s %9s %9s\n"
	fmt.Fprintf(w, row, "per message", "mean", "p50", "p90", "p99", "max")
	for _, x := range []struct {
		label string
		l     Latency
	}{{"Quarry's own", cr.Own}, {"  with the search", cr.WithSearch}, {"the search", cr.Search}, {"the model", cr.Model},
		{"first token after the model", cr.FirstToken}} {
		fmt.Fprintf(w, row, x.label, ms(x.l.Mean), ms(x.l.P50), ms(x.l.P90), ms(x.l.P99), ms(x.l.Max))
	}
	fmt.Fprintf(w, "targets   Quarry's own p50 ≤ %s; first token p50 ≤ %s", ms(cr.TargetOwnP50MS), ms(cr.TargetFirstP50MS))
	if len(cr.Missed) == 0 {
		fmt.Fprintln(w, ": met")
	} else {
		fmt.Fprintf(w, "; missed: %s\n", strings.Join(cr.Missed, "; "))
	}
	fmt.Fprintf(w, "memory    Go heap in use %s after the corpus, %s after the messages\n", formatBytes(int64(cr.HeapAfterLoad)), formatBytes(int64(cr.HeapAfterMessages)))
}
