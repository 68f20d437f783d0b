package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/chat"
)

// The chat's wire: Onyx v4.6.1's streamed packets
// (backend/onyx/server/query_and_chat/streaming_models.py), its
// SearchDoc and SavedSearchDoc, ChatMessageDetail and
// ChatSessionDetailResponse, and the packets that replay an answer when a
// session is read back (session_loading.py).

// placement is Onyx's Placement. model_index is 0 in a stream (one model
// answers) and null in the packets that replay an answer, as in Onyx.
type placement struct {
	TurnIndex    int  `json:"turn_index"`
	TabIndex     int  `json:"tab_index"`
	SubTurnIndex *int `json:"sub_turn_index"`
	ModelIndex   *int `json:"model_index"`
}

// packet is Onyx's Packet.
type packet struct {
	Placement placement `json:"placement"`
	Obj       any       `json:"obj"`
}

// chatDoc is a document of an answer as Onyx's SearchDoc renders it, with
// SavedSearchDoc's db_doc_id when the document is kept, and the pair its
// copy is of (Quarry's extension, as in search's results).
type chatDoc struct {
	onyxSearchDoc
	DBDocID *int64 `json:"db_doc_id,omitempty"`
	copyPair
}

// chatDocOf renders h; streamed, its time is Python's isoformat (as Onyx's
// get_json_line writes a datetime), otherwise pydantic's.
func chatDocOf(h *quarry.SearchHit, streamed bool) chatDoc {
	d := chatDoc{onyxSearchDoc: onyxSearchDocOf(h), copyPair: pairOf(h.Pair)}
	if d.Metadata == nil {
		d.Metadata = map[string]any{}
	}
	if d.MatchHighlights == nil {
		d.MatchHighlights = []string{}
	}
	if h.UpdatedAt != nil {
		if streamed {
			d.UpdatedAt = pythonISO(h.UpdatedAt.Time)
		} else {
			d.UpdatedAt = h.UpdatedAt
		}
	}
	return d
}

// chatDocs renders hits, each as chatDocOf.
func chatDocs(hits []quarry.SearchHit, streamed bool) []chatDoc {
	out := make([]chatDoc, len(hits))
	for i := range hits {
		out[i] = chatDocOf(&hits[i], streamed)
	}
	return out
}

// savedDocs renders the kept documents of an answer (Onyx's
// SavedSearchDoc), best score first as Onyx sorts them.
func savedDocs(docs []quarry.ChatDocument) []chatDoc {
	out := make([]chatDoc, len(docs))
	for i := range docs {
		out[i] = chatDocOf(&docs[i].SearchHit, false)
		id := docs[i].ID
		out[i].DBDocID = &id
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// citationInfo is Onyx's CitationInfo, with the pair of the copy it names
// (Quarry's extension).
type citationInfo struct {
	Type           string `json:"type"`
	CitationNumber int    `json:"citation_number"`
	DocumentID     string `json:"document_id"`
	CCPairID       int64  `json:"cc_pair_id"`
}

func citationOf(c quarry.ChatCitation) citationInfo {
	return citationInfo{Type: "citation_info", CitationNumber: c.Number, DocumentID: c.DocumentID, CCPairID: c.PairID}
}

// customToolError is Onyx's CustomToolErrorInfo.
type customToolError struct {
	IsAuthError bool   `json:"is_auth_error"`
	StatusCode  int    `json:"status_code"`
	Message     string `json:"message"`
}

// customToolDelta is Onyx's CustomToolDelta.
type customToolDelta struct {
	Type         string           `json:"type"`
	ToolName     string           `json:"tool_name"`
	ToolID       *int64           `json:"tool_id"`
	ResponseType string           `json:"response_type"`
	Data         json.RawMessage  `json:"data"`
	FileIDs      []string         `json:"file_ids"`
	Error        *customToolError `json:"error"`
}

func toolDelta(name string, id int64, typ string, data json.RawMessage, f *chat.ToolFailure) customToolDelta {
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	d := customToolDelta{Type: "custom_tool_delta", ToolName: name, ToolID: &id, ResponseType: typ, Data: data}
	if f != nil {
		d.Error = &customToolError{IsAuthError: f.IsAuth, StatusCode: f.Status, Message: f.Message}
	}
	return d
}

// wireObj renders what a chat packet is.
func wireObj(obj any) any {
	type typed struct {
		Type string `json:"type"`
	}
	switch o := obj.(type) {
	case chat.MessageStart:
		var docs []chatDoc
		if len(o.Documents) > 0 {
			docs = chatDocs(o.Documents, true)
		}
		return struct {
			Type             string    `json:"type"`
			FinalDocuments   []chatDoc `json:"final_documents"`
			PreAnswerSeconds pyFloat   `json:"pre_answer_processing_seconds"`
		}{"message_start", docs, pyFloat(o.PreAnswerSeconds)}
	case chat.MessageDelta:
		return struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}{"message_delta", o.Content}
	case chat.SearchStart:
		return struct {
			Type             string `json:"type"`
			IsInternetSearch bool   `json:"is_internet_search"`
		}{"search_tool_start", false}
	case chat.SearchQueries:
		return struct {
			Type    string   `json:"type"`
			Queries []string `json:"queries"`
		}{"search_tool_queries_delta", o.Queries}
	case chat.SearchDocuments:
		return struct {
			Type      string    `json:"type"`
			Documents []chatDoc `json:"documents"`
		}{"search_tool_documents_delta", chatDocs(o.Documents, true)}
	case chat.Citation:
		return citationOf(o.ChatCitation)
	case chat.ToolStart:
		id := o.ToolID
		return struct {
			Type     string `json:"type"`
			ToolName string `json:"tool_name"`
			ToolID   *int64 `json:"tool_id"`
		}{"custom_tool_start", o.Name, &id}
	case chat.ToolResult:
		return toolDelta(o.Name, o.ToolID, o.ResponseType, o.Data, o.Error)
	case chat.ToolCallDebug:
		return struct {
			Type       string          `json:"type"`
			ToolCallID string          `json:"tool_call_id"`
			ToolName   string          `json:"tool_name"`
			ToolArgs   json.RawMessage `json:"tool_args"`
		}{"tool_call_debug", o.CallID, o.Name, o.Args}
	case chat.SectionEnd:
		return typed{"section_end"}
	case chat.Stop:
		var reason *string
		if o.Reason != "" {
			reason = &o.Reason
		}
		return struct {
			Type       string  `json:"type"`
			StopReason *string `json:"stop_reason"`
		}{"stop", reason}
	}
	panic("api: a chat packet of no known type")
}

// streamed renders a packet of a stream.
func streamed(p chat.Packet) packet {
	zero := 0
	return packet{placement{TurnIndex: p.Placement.Turn, TabIndex: p.Placement.Tab, ModelIndex: &zero}, wireObj(p.Obj)}
}

// chatSessionDetails is Onyx's ChatSessionDetails, in the listing of
// sessions; its times are strings of Python's isoformat, as Onyx makes
// them.
type chatSessionDetails struct {
	ID                             string             `json:"id"`
	Name                           *string            `json:"name"`
	PersonaID                      *int64             `json:"persona_id"`
	TimeCreated                    string             `json:"time_created"`
	TimeUpdated                    string             `json:"time_updated"`
	SharedStatus                   quarry.ChatSharing `json:"shared_status"`
	CurrentAlternateModel          *string            `json:"current_alternate_model"`
	CurrentTemperatureOverride     *float64           `json:"current_temperature_override"`
	CurrentReasoningEffortOverride *string            `json:"current_reasoning_effort_override"`
}

func sessionDetails(s *quarry.ChatSession) chatSessionDetails {
	persona := s.PersonaID
	return chatSessionDetails{ID: s.ID, Name: s.Description, PersonaID: &persona, TimeCreated: pythonISO(s.CreatedAt.Time),
		TimeUpdated: pythonISO(s.UpdatedAt.Time), SharedStatus: s.Sharing}
}

// chatMessageDetail is Onyx's ChatMessageDetail.
type chatMessageDetail struct {
	ChatSessionID             string            `json:"chat_session_id"`
	MessageID                 int64             `json:"message_id"`
	ParentMessage             *int64            `json:"parent_message"`
	LatestChildMessage        *int64            `json:"latest_child_message"`
	Message                   string            `json:"message"`
	ReasoningTokens           *string           `json:"reasoning_tokens"`
	MessageType               string            `json:"message_type"`
	ContextDocs               []chatDoc         `json:"context_docs"`
	Citations                 map[string]string `json:"citations"`
	TimeSent                  quarry.Time       `json:"time_sent"`
	Files                     []any             `json:"files"`
	Error                     *string           `json:"error"`
	CurrentFeedback           *string           `json:"current_feedback"`
	ProcessingDurationSeconds *pyFloat          `json:"processing_duration_seconds"`
	PreferredResponseID       *int64            `json:"preferred_response_id"`
	ModelDisplayName          *string           `json:"model_display_name"`
}

func messageDetail(m *quarry.ChatMessage) chatMessageDetail {
	d := chatMessageDetail{ChatSessionID: m.SessionID, MessageID: m.ID, ParentMessage: m.ParentID, LatestChildMessage: m.LatestChildID,
		Message: m.Message, MessageType: string(m.Type), ContextDocs: savedDocs(m.Documents), TimeSent: m.SentAt, Files: []any{},
		Error: m.Error, ModelDisplayName: m.ModelDisplayName}
	if len(m.Citations) > 0 && len(m.Documents) > 0 {
		d.Citations = map[string]string{}
		for _, c := range m.Citations {
			d.Citations[strconv.Itoa(c.Number)] = c.DocumentID
		}
	}
	if m.Feedback != nil {
		f := "dislike"
		if *m.Feedback {
			f = "like"
		}
		d.CurrentFeedback = &f
	}
	if m.ProcessingSeconds != nil {
		v := pyFloat(*m.ProcessingSeconds)
		d.ProcessingDurationSeconds = &v
	}
	return d
}

// citationNumber matches a citation's number in an answer's text.
var citationNumber = regexp.MustCompile(`\[\[(\d+)\]\]`)

// replayPackets returns the packets that show answer m again (Onyx's
// translate_assistant_message_to_packets): each call of a tool in its
// step, then the text, then its citations in the order the text cites
// them, then the stop.
func replayPackets(m *quarry.ChatMessage) []packet {
	at := func(turn, tab int, obj any) packet { return packet{placement{TurnIndex: turn, TabIndex: tab}, obj} }
	var out []packet
	maxTurn := 0
	calls := slices.Clone(m.ToolCalls)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].TurnNumber < calls[j].TurnNumber })
	for _, k := range calls {
		maxTurn = max(maxTurn, k.TurnNumber)
		turn, tab := k.TurnNumber, k.TabIndex
		if k.Name == chat.SearchToolName {
			out = append(out, at(turn, tab, wireObj(chat.SearchStart{})))
			var args struct {
				Queries []string `json:"queries"`
			}
			json.Unmarshal(k.Arguments, &args)
			if len(args.Queries) > 0 {
				out = append(out, at(turn, tab, wireObj(chat.SearchQueries{Queries: args.Queries})))
			}
			if len(k.Documents) > 0 {
				docs := savedDocs(k.Documents)
				for i := range docs {
					docs[i].DBDocID = nil // Onyx shows them as SearchDoc.
				}
				out = append(out, at(turn, tab, struct {
					Type      string    `json:"type"`
					Documents []chatDoc `json:"documents"`
				}{"search_tool_documents_delta", docs}))
			}
			out = append(out, at(turn, tab, wireObj(chat.SectionEnd{})))
			continue
		}
		out = append(out, at(turn, tab, wireObj(chat.ToolStart{Name: k.Name, ToolID: k.ToolID})))
		var args map[string]json.RawMessage
		if json.Unmarshal(k.Arguments, &args) == nil {
			delete(args, "requestBody")
			if len(args) > 0 {
				out = append(out, at(turn, tab, struct {
					Type     string                     `json:"type"`
					ToolName string                     `json:"tool_name"`
					ToolArgs map[string]json.RawMessage `json:"tool_args"`
				}{"custom_tool_args", k.Name, args}))
			}
		}
		s, ok := chat.ParseToolSummary(k.Response)
		if !ok {
			data, _ := json.Marshal(k.Response)
			s = chat.ToolSummary{ResponseType: "text", Data: data}
		}
		out = append(out, at(turn, tab, toolDelta(k.Name, k.ToolID, s.ResponseType, s.Data, s.Error)))
		out = append(out, at(turn, tab, wireObj(chat.SectionEnd{})))
	}
	msgTurn := maxTurn + 1
	if m.Message != "" {
		var docs []chatDoc
		if len(m.Documents) > 0 {
			docs = savedDocs(m.Documents)
			for i := range docs {
				docs[i].DBDocID = nil
			}
		}
		out = append(out, at(msgTurn, 0, struct {
			Type             string    `json:"type"`
			FinalDocuments   []chatDoc `json:"final_documents"`
			PreAnswerSeconds *pyFloat  `json:"pre_answer_processing_seconds"`
		}{"message_start", docs, nil}))
		out = append(out, at(msgTurn, 0, wireObj(chat.MessageDelta{Content: m.Message})))
		out = append(out, at(msgTurn, 0, wireObj(chat.SectionEnd{})))
	}
	final := maxTurn
	if m.Message != "" {
		final = msgTurn
	}
	if len(m.Citations) > 0 {
		order := map[int]int{}
		for _, g := range citationNumber.FindAllStringSubmatch(m.Message, -1) {
			n, _ := strconv.Atoi(g[1])
			if _, ok := order[n]; !ok {
				order[n] = len(order)
			}
		}
		cites := slices.Clone(m.Citations)
		sort.SliceStable(cites, func(i, j int) bool {
			a, okA := order[cites[i].Number]
			b, okB := order[cites[j].Number]
			return okA && (!okB || a < b)
		})
		final = msgTurn + 1
		for _, c := range cites {
			out = append(out, at(final, 0, citationOf(c)))
		}
		out = append(out, at(final, 0, wireObj(chat.SectionEnd{})))
	}
	reason := ""
	if strings.Contains(strings.ToLower(m.Message), "generation was stopped") {
		reason = "user_cancelled"
	}
	return append(out, at(final, 0, wireObj(chat.Stop{Reason: reason})))
}

// appendDeltaLine appends the stream's line of a message_delta packet at
// placement at with content text: what pythonJSONLine(streamed(p)) makes
// of it, written directly. An answer's text comes as many small pieces, a
// line each, and encoding/json's reflection then pythonJSONLine's second
// pass were most of each line's cost; TestAppendDeltaLine holds the two
// to the same bytes.
func appendDeltaLine(dst []byte, at chat.Placement, text string) []byte {
	dst = append(dst, `{"placement": {"turn_index": `...)
	dst = strconv.AppendInt(dst, int64(at.Turn), 10)
	dst = append(dst, `, "tab_index": `...)
	dst = strconv.AppendInt(dst, int64(at.Tab), 10)
	dst = append(dst, `, "sub_turn_index": null, "model_index": 0}, "obj": {"type": "message_delta", "content": `...)
	dst = appendPythonString(dst, text)
	return append(dst, "}}\n"...)
}

// appendPythonString appends s as a JSON string as Python's json.dumps
// writes it (ensure_ascii: every character past ASCII, and DEL, as \u
// escapes, UTF-16 surrogates past U+FFFF); invalid UTF-8 becomes U+FFFD,
// as encoding/json makes it.
func appendPythonString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			j := i + 1
			for j < len(s) && s[j] >= 0x20 && s[j] < 0x7f && s[j] != '"' && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = u(dst, rune(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			a, b := utf16.EncodeRune(r)
			dst = u(u(dst, a), b)
		} else {
			dst = u(dst, r)
		}
		i += n
	}
	return append(dst, '"')
}

// streamDocs writes the lines of a stream's packets that carry documents
// (search_tool_documents_delta, message_start): what
// pythonJSONLine(streamed(p)) makes of them, with each document encoded
// once. message_start repeats the documents the answer's searches gave,
// and their encoding (encoding/json's reflection, then pythonJSONLine's
// second pass) was most of those lines' cost; a document is encoded again
// only if it differs in anything from the one encoded before under its
// id and pair. TestStreamDocs holds the lines to pythonJSONLine's.
type streamDocs struct {
	seen map[docKey][]encodedDoc
	buf  bytes.Buffer  // encoding/json's output, reused.
	enc  *json.Encoder // Onto buf.
}

// docKey is a document's id and pair.
type docKey struct {
	id   string
	pair int64
}

// encodedDoc is a document and its encoding.
type encodedDoc struct {
	hit  quarry.SearchHit
	json []byte
}

// line returns p's line when its object is one that carries documents;
// ok is false otherwise.
func (s *streamDocs) line(p chat.Packet) (line []byte, ok bool, err error) {
	var (
		kind, field string
		docs        []quarry.SearchHit
		tail        []byte
	)
	switch o := p.Obj.(type) {
	case chat.SearchDocuments:
		kind, field, docs, tail = "search_tool_documents_delta", "documents", o.Documents, []byte("}}\n")
		if docs == nil {
			docs = []quarry.SearchHit{} // chatDocs makes it [], not null.
		}
	case chat.MessageStart:
		kind, field, docs = "message_start", "final_documents", o.Documents
		if len(docs) == 0 {
			docs = nil
		}
		secs, err := pyFloat(o.PreAnswerSeconds).MarshalJSON()
		if err != nil {
			return nil, true, err
		}
		tail = append(append([]byte(`, "pre_answer_processing_seconds": `), secs...), "}}\n"...)
	default:
		return nil, false, nil
	}
	encoded := make([][]byte, len(docs))
	size := 160 + len(kind) + len(field) + len(tail)
	for i := range docs {
		if encoded[i], err = s.encode(&docs[i]); err != nil {
			return nil, true, err
		}
		size += len(encoded[i]) + 2
	}
	line = make([]byte, 0, size)
	line = append(line, `{"placement": {"turn_index": `...)
	line = strconv.AppendInt(line, int64(p.Placement.Turn), 10)
	line = append(line, `, "tab_index": `...)
	line = strconv.AppendInt(line, int64(p.Placement.Tab), 10)
	line = append(line, `, "sub_turn_index": null, "model_index": 0}, "obj": {"type": "`...)
	line = append(line, kind...)
	line = append(line, `", "`...)
	line = append(line, field...)
	line = append(line, `": `...)
	if docs == nil {
		line = append(line, "null"...)
	} else {
		line = append(line, '[')
		for i, b := range encoded {
			if i > 0 {
				line = append(line, ", "...)
			}
			line = append(line, b...)
		}
		line = append(line, ']')
	}
	return append(line, tail...), true, nil
}

// encode returns h's encoding in a stream: the one made before for a
// document equal to h in every field, else a new one.
func (s *streamDocs) encode(h *quarry.SearchHit) ([]byte, error) {
	k := docKey{h.DocumentID, h.Pair.ID}
	for _, e := range s.seen[k] {
		if reflect.DeepEqual(&e.hit, h) {
			return e.json, nil
		}
	}
	if s.enc == nil {
		s.seen, s.enc = map[docKey][]encodedDoc{}, json.NewEncoder(&s.buf)
		s.enc.SetEscapeHTML(false)
	}
	s.buf.Reset()
	if err := s.enc.Encode(chatDocOf(h, true)); err != nil {
		return nil, err
	}
	raw := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	b := appendPythonJSON(make([]byte, 0, len(raw)+len(raw)/8), raw)
	s.seen[k] = append(s.seen[k], encodedDoc{*h, b})
	return b, nil
}
