package store_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// chatFixture is a database with people and two pairs: a public one, and a
// private one shared with group A, of which "member" is a member.
type chatFixture struct {
	db                     *store.DB
	u                      string
	keys                   *store.Keyring
	admin, member, outside *quarry.Caller
	public, private        quarry.PairRef
	tokens                 map[string]string
}

func newChatFixture(t *testing.T) *chatFixture {
	t.Helper()
	f := &chatFixture{u: storetest.URL(t), keys: storetest.Key(t), tokens: map[string]string{}}
	f.db = storetest.OpenURL(t, f.u, f.keys)
	user := func(role quarry.Role, name string) *quarry.Caller {
		t.Helper()
		_, token, err := f.db.CreateAPIKey(ctx, nil, &name, role)
		if err != nil {
			t.Fatal(err)
		}
		c := f.auth(t, token)
		f.tokens[c.ID] = token
		return c
	}
	f.admin, f.member, f.outside = user(quarry.RoleAdmin, "admin"), user(quarry.RoleBasic, "member"), user(quarry.RoleBasic, "outside")
	name := "A"
	g, err := f.db.CreateGroup(ctx, f.admin, quarry.UserGroupInput{Name: &name, UserIDs: []string{f.member.ID}, CCPairIDs: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	f.member = f.auth(t, f.tokens[f.member.ID])
	pair := func(name string, access quarry.AccessType, groups ...int64) quarry.PairRef {
		t.Helper()
		conn, err := f.db.CreateConnector(ctx, f.admin, quarry.ConnectorInput{Name: name, Source: "web", InputType: "poll",
			Config: json.RawMessage(`{}`), AccessType: access, Groups: &groups})
		if err != nil {
			t.Fatal(err)
		}
		k, err := f.db.CreateCredential(ctx, f.admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
		if err != nil {
			t.Fatal(err)
		}
		id, err := f.db.CreateCCPair(ctx, f.admin, conn, k.ID, quarry.CCPairInput{Name: name, AccessType: access, Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		d := quarry.Document{ID: name + "-doc", SemanticIdentifier: name + " doc", Source: "web", Metadata: map[string]any{},
			Sections: []quarry.Section{{Text: "basalt " + name}}}
		if _, err := f.db.Ingest(ctx, f.admin, &id, &d); err != nil {
			t.Fatal(err)
		}
		return quarry.PairRef{ID: id, Name: name, AccessType: access}
	}
	f.public, f.private = pair("public", quarry.AccessPublic), pair("private", quarry.AccessPrivate, g.ID)
	return f
}

func (f *chatFixture) auth(t *testing.T, token string) *quarry.Caller {
	t.Helper()
	c, err := f.db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hit returns a search result of the document of pair p.
func hit(p quarry.PairRef) quarry.SearchHit {
	at := quarry.TimeFromMicros(1_700_000_000_000_000)
	return quarry.SearchHit{DocumentID: p.Name + "-doc", Pair: p, ChunkNo: 0, SemanticIdentifier: p.Name + " doc", Blurb: "basalt",
		Source: "web", Metadata: map[string]any{"k": "v"}, Score: 1.5, MatchHighlights: []string{"<hi>basalt</hi>"}, UpdatedAt: &at,
		PrimaryOwners: []string{"ann"}, SecondaryOwners: []string{}}
}

func wantErr(t *testing.T, err error, code, msg string) {
	t.Helper()
	if quarry.ErrorCode(err) != code || quarry.ErrorMessage(err) != msg {
		t.Fatalf("err %v, want %s %q", err, code, msg)
	}
}

// TestChatTurns stores questions and answers as the loop does, and reads
// them back: the tree, regeneration, the reserved answer, the tool calls
// and documents, the citations, feedback; on both databases, and after a
// restart (another handle of the database).
func TestChatTurns(t *testing.T) {
	f := newChatFixture(t)
	db, me := f.db, f.member
	s, err := db.CreateChatSession(ctx, me, quarry.ChatSessionInput{Description: ptr("first")})
	if err != nil {
		t.Fatal(err)
	}
	if s.UserID != me.ID || *s.Description != "first" || s.Sharing != quarry.ChatPrivate || s.Deleted {
		t.Fatalf("session %+v", s)
	}
	if _, err := db.CreateChatSession(ctx, me, quarry.ChatSessionInput{PersonaID: 2}); err != quarry.ErrChatPersona {
		t.Fatalf("persona: %v", err)
	}
	// An empty session reads back without messages.
	_, msgs, err := db.ReadChatSession(ctx, me, s.ID, quarry.ChatRead{})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("empty session: %v %v", msgs, err)
	}
	auto := ptr(int64(quarry.AutoPlaceMessage))
	turn, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: auto, Message: "what is basalt?", ModelDisplayName: ptr("m")})
	if err != nil {
		t.Fatal(err)
	}
	if turn.NewSession || turn.Question.Message != "what is basalt?" || len(turn.History) != 1 || turn.History[0] != turn.Question {
		t.Fatalf("turn %+v", turn)
	}
	// Before the answer is written, the question and the reservation are
	// there, on any handle (a restart).
	other := storetest.OpenURL(t, f.u, f.keys)
	_, msgs, err = other.ReadChatSession(ctx, me, s.ID, quarry.ChatRead{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[0].Type != quarry.ChatSystem || msgs[1].ID != turn.Question.ID || msgs[2].ID != turn.AnswerID ||
		msgs[2].Message != quarry.ChatReservedText || *msgs[0].LatestChildID != msgs[1].ID || *msgs[1].LatestChildID != msgs[2].ID ||
		*msgs[2].ModelDisplayName != "m" {
		t.Fatalf("after the question: %+v", msgs)
	}
	search := hit(f.public)
	hidden := hit(f.private)
	answer := &quarry.ChatAnswer{MessageID: turn.AnswerID, SessionID: s.ID, Text: "Basalt is a rock [[1]]() [[2]]().",
		Citations:         []quarry.ChatCitation{{Number: 1, DocumentID: search.DocumentID, PairID: f.public.ID}, {Number: 2, DocumentID: hidden.DocumentID, PairID: f.private.ID}},
		ProcessingSeconds: ptr(0.25),
		ToolCalls: []quarry.ChatToolCall{
			{TurnNumber: 0, TabIndex: 0, ToolID: 1, CallID: "call_1", Name: "internal_search", Arguments: json.RawMessage(`{"queries": ["basalt"]}`),
				Response: `{"results": []}`, Documents: []quarry.ChatDocument{{SearchHit: search}, {SearchHit: hidden}}},
			{TurnNumber: 1, TabIndex: 0, ToolID: 7, CallID: "call_2", Name: "weather", Arguments: json.RawMessage(`{"city": `),
				Response: "Tool failed with error: bad arguments"},
		}}
	if err := db.FinishChatTurn(ctx, answer); err != nil {
		t.Fatal(err)
	}
	read := func(c *quarry.Caller, how quarry.ChatRead) []*quarry.ChatMessage {
		t.Helper()
		_, msgs, err := other.ReadChatSession(ctx, c, s.ID, how)
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	msgs = read(me, quarry.ChatRead{})
	a := msgs[2]
	if a.Message != answer.Text || a.Error != nil || *a.ProcessingSeconds != 0.25 || a.TokenCount != quarry.EstimateTokens(answer.Text) {
		t.Fatalf("answer %+v", a)
	}
	if diff := cmp.Diff(answer.Citations, a.Citations); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].Name != "internal_search" || string(a.ToolCalls[0].Arguments) != `{"queries": ["basalt"]}` ||
		len(a.ToolCalls[0].Documents) != 2 || a.ToolCalls[1].Response != "Tool failed with error: bad arguments" ||
		string(a.ToolCalls[1].Arguments) != `"{\"city\": "` {
		t.Fatalf("tool calls %+v", a.ToolCalls)
	}
	if len(a.Documents) != 2 || a.Documents[0].ID == 0 {
		t.Fatalf("documents %+v", a.Documents)
	}
	if diff := cmp.Diff(search, a.Documents[0].SearchHit); diff != "" {
		t.Errorf("document kept (-want +got):\n%s", diff)
	}

	// Shared: someone who may not read the private pair's copy sees
	// neither it nor its citation.
	if _, _, err := other.ReadChatSession(ctx, f.outside, s.ID, quarry.ChatRead{Shared: true}); err != quarry.ErrChatNotShared {
		t.Fatalf("private through its link: %v", err)
	}
	if _, err := db.UpdateChatSession(ctx, me, s.ID, quarry.ChatSessionUpdate{Sharing: ptr(quarry.ChatPublic)}); err != nil {
		t.Fatal(err)
	}
	msgs = read(f.outside, quarry.ChatRead{Shared: true})
	if a := msgs[2]; len(a.Documents) != 1 || a.Documents[0].DocumentID != "public-doc" || len(a.Citations) != 1 || a.Citations[0].Number != 1 ||
		len(a.ToolCalls[0].Documents) != 1 {
		t.Errorf("read by another: %+v", a)
	}
	if _, _, err := other.ReadChatSession(ctx, f.outside, s.ID, quarry.ChatRead{}); err != quarry.ErrChatAccessDenied {
		t.Errorf("another without the link: %v", err)
	}

	// A follow-up, then the first question asked again: its new answer
	// becomes the mainline, the follow-up off it.
	turn2, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: auto, Message: "and granite?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(turn2.History) != 3 || turn2.History[1].ID != turn.AnswerID || turn2.History[1].Message != answer.Text {
		t.Fatalf("history %+v", turn2.History)
	}
	if err := db.FinishChatTurn(ctx, &quarry.ChatAnswer{MessageID: turn2.AnswerID, SessionID: s.ID, Text: "", Error: ptr("the model failed")}); err != nil {
		t.Fatal(err)
	}
	again, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: &turn.Question.ID, Message: ""})
	if err != nil {
		t.Fatal(err)
	}
	if again.Question.ID != turn.Question.ID || len(again.History) != 1 {
		t.Fatalf("regenerated: %+v", again)
	}
	msgs = read(me, quarry.ChatRead{})
	root, mainline := quarry.ChatMainline(msgs)
	if root.Type != quarry.ChatSystem || len(mainline) != 2 || mainline[1].ID != again.AnswerID || len(msgs) != 6 {
		t.Fatalf("after regenerating: %d messages, mainline %v", len(msgs), mainline)
	}
	for _, m := range msgs {
		if m.ID == turn2.AnswerID && (m.Error == nil || *m.Error != "the model failed") {
			t.Errorf("failed answer %+v", m)
		}
	}
	// The follow-up's answer is no longer on the mainline.
	_, err = db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: &turn2.AnswerID, Message: "more"})
	wantErr(t, err, quarry.EINVALID, "The new message sent is not on the latest mainline of messages")
	_, err = db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: auto, Message: " "})
	wantErr(t, err, quarry.EINVALID, "The message is empty: ask a question")
	if _, err := db.StartChatTurn(ctx, f.outside, quarry.ChatTurnInput{SessionID: s.ID, ParentID: auto, Message: "mine?"}); err != quarry.ErrChatSessionNotFound {
		t.Errorf("another's session: %v", err)
	}
	if _, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: "00000000-0000-0000-0000-000000000000", ParentID: auto, Message: "x"}); err != quarry.ErrChatSessionNotFound {
		t.Errorf("no such session: %v", err)
	}
	// A refused question writes nothing.
	if after := read(me, quarry.ChatRead{}); len(after) != 6 {
		t.Errorf("%d messages after refusals", len(after))
	}

	// A question in a new session.
	fresh, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{NewSession: quarry.ChatSessionInput{}, ParentID: auto, Message: "hi"})
	if err != nil || !fresh.NewSession || fresh.Session.UserID != me.ID || fresh.Session.Description != nil {
		t.Fatalf("new session: %+v %v", fresh, err)
	}

	// Feedback: on answers of one's own; the latest counts.
	if err := db.CreateChatFeedback(ctx, me, quarry.ChatFeedback{MessageID: turn.AnswerID, IsPositive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateChatFeedback(ctx, me, quarry.ChatFeedback{MessageID: turn.AnswerID, IsPositive: ptr(true), Text: ptr("good")}); err != nil {
		t.Fatal(err)
	}
	err = db.CreateChatFeedback(ctx, me, quarry.ChatFeedback{MessageID: turn.Question.ID, IsPositive: ptr(true)})
	wantErr(t, err, quarry.EINVALID, "Can only provide feedback on LLM Outputs")
	if err := db.CreateChatFeedback(ctx, f.outside, quarry.ChatFeedback{MessageID: turn.AnswerID, IsPositive: ptr(true)}); err != quarry.ErrChatMessageNotFound {
		t.Errorf("another's answer: %v", err)
	}
	feedback := func() *bool {
		for _, m := range read(me, quarry.ChatRead{}) {
			if m.ID == turn.AnswerID {
				return m.Feedback
			}
		}
		return nil
	}
	if fb := feedback(); fb == nil || !*fb {
		t.Errorf("feedback %v", fb)
	}
	if err := db.RemoveChatFeedback(ctx, me, turn.AnswerID); err != nil {
		t.Fatal(err)
	}
	if fb := feedback(); fb != nil {
		t.Errorf("feedback after removal %v", *fb)
	}
	wantErr(t, db.RemoveChatFeedback(ctx, me, turn.Question.ID), quarry.EINVALID, "Can only remove feedback from LLM Outputs")

	// An answer whose session was deleted while it ran is not written.
	late, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: fresh.Session.ID, ParentID: auto, Message: "late"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteChatSession(ctx, me, fresh.Session.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishChatTurn(ctx, &quarry.ChatAnswer{MessageID: late.AnswerID, SessionID: fresh.Session.ID, Text: "x"}); err != quarry.ErrChatSessionNotFound {
		t.Errorf("answer of a deleted session: %v", err)
	}
}

// TestChatManyDocuments: a search that gave more documents than one
// INSERT writes keeps them all, in their order.
func TestChatManyDocuments(t *testing.T) {
	f := newChatFixture(t)
	db, me := f.db, f.member
	turn, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{NewSession: quarry.ChatSessionInput{}, Message: "basalt?"})
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]quarry.ChatDocument, 1203) // Three INSERTs of insertChatDocuments.
	for i := range docs {
		docs[i].SearchHit = hit(f.public)
		docs[i].DocumentID = fmt.Sprintf("doc-%04d", i)
	}
	if err := db.FinishChatTurn(ctx, &quarry.ChatAnswer{MessageID: turn.AnswerID, SessionID: turn.Session.ID, Text: "many",
		ToolCalls: []quarry.ChatToolCall{{ToolID: 1, CallID: "call_1", Name: "internal_search", Arguments: json.RawMessage(`{}`),
			Response: "{}", Documents: docs}}}); err != nil {
		t.Fatal(err)
	}
	_, msgs, err := db.ReadChatSession(ctx, me, turn.Session.ID, quarry.ChatRead{})
	if err != nil {
		t.Fatal(err)
	}
	got := msgs[len(msgs)-1].ToolCalls[0].Documents
	if len(got) != len(docs) {
		t.Fatalf("%d documents read back, want %d", len(got), len(docs))
	}
	for i := range got {
		if got[i].DocumentID != docs[i].DocumentID {
			t.Fatalf("document %d is %s, want %s", i, got[i].DocumentID, docs[i].DocumentID)
		}
	}
}

// TestChatSessionsListing checks the listing of one's sessions: newest
// change first, pages by before, failed (empty, old) sessions left out,
// deleted ones too; and renames, shares, soft and hard deletions.
func TestChatSessionsListing(t *testing.T) {
	f := newChatFixture(t)
	db, me := f.db, f.member
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	var ids []string
	for i := range 4 {
		now = now.Add(time.Minute)
		s, err := db.CreateChatSession(ctx, me, quarry.ChatSessionInput{Description: ptr(fmt.Sprint("s", i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	if _, err := db.CreateChatSession(ctx, f.outside, quarry.ChatSessionInput{}); err != nil {
		t.Fatal(err)
	}
	list := func(before *quarry.Time, limit int, failed bool) []string {
		t.Helper()
		ss, err := db.ChatSessions(ctx, me, before, limit, failed)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, s := range ss {
			out = append(out, *s.Description)
		}
		return out
	}
	if got := list(nil, 10, false); !cmp.Equal(got, []string{"s3", "s2", "s1", "s0"}) {
		t.Errorf("listing %v", got)
	}
	// Ten minutes later, sessions without a question are failed ones.
	now = now.Add(10 * time.Minute)
	if _, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: ids[1], ParentID: ptr(int64(-1)), Message: "q"}); err != nil {
		t.Fatal(err)
	}
	if got := list(nil, 10, false); !cmp.Equal(got, []string{"s1"}) {
		t.Errorf("without failed %v", got)
	}
	if got := list(nil, 2, true); !cmp.Equal(got, []string{"s1", "s3"}) {
		t.Errorf("first page %v", got)
	}
	s3, _, _ := db.ReadChatSession(ctx, me, ids[3], quarry.ChatRead{})
	if got := list(&s3.UpdatedAt, 10, true); !cmp.Equal(got, []string{"s2", "s0"}) {
		t.Errorf("before s3 %v", got)
	}

	// Renaming: given, or after the first question.
	s, err := db.UpdateChatSession(ctx, me, ids[1], quarry.ChatSessionUpdate{AutoName: true})
	if err != nil || *s.Description != "q" {
		t.Fatalf("auto name %+v %v", s, err)
	}
	s, err = db.UpdateChatSession(ctx, me, ids[0], quarry.ChatSessionUpdate{AutoName: true})
	if err != nil || *s.Description != "New Chat" {
		t.Fatalf("auto name of an empty session %+v %v", s, err)
	}
	if _, err := db.UpdateChatSession(ctx, f.outside, ids[0], quarry.ChatSessionUpdate{Description: ptr("x")}); err != quarry.ErrChatSessionNotFound {
		t.Errorf("rename of another's: %v", err)
	}

	// Deletions: soft (kept, readable when asked for), hard, all.
	if err := db.DeleteChatSession(ctx, me, ids[0], false); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteChatSession(ctx, me, ids[0], false); err != quarry.ErrChatSessionDeleted {
		t.Errorf("deleted twice: %v", err)
	}
	if _, _, err := db.ReadChatSession(ctx, me, ids[0], quarry.ChatRead{}); err != quarry.ErrChatSessionDeleted {
		t.Errorf("read deleted: %v", err)
	}
	if s, _, err := db.ReadChatSession(ctx, me, ids[0], quarry.ChatRead{IncludeDeleted: true}); err != nil || !s.Deleted {
		t.Errorf("read deleted when asked: %+v %v", s, err)
	}
	if err := db.DeleteChatSession(ctx, me, ids[1], true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.ReadChatSession(ctx, me, ids[1], quarry.ChatRead{IncludeDeleted: true}); err != quarry.ErrChatSessionNotFound {
		t.Errorf("read hard-deleted: %v", err)
	}
	if got := list(nil, 10, true); !cmp.Equal(got, []string{"s3", "s2"}) {
		t.Errorf("after deletions %v", got)
	}
	if err := db.DeleteChatSessions(ctx, me, false); err != nil {
		t.Fatal(err)
	}
	if got := list(nil, 10, true); len(got) != 0 {
		t.Errorf("after deleting all %v", got)
	}
	others, err := db.ChatSessions(ctx, f.outside, nil, 10, true)
	if err != nil || len(others) != 1 {
		t.Errorf("another's sessions after deleting all of mine: %v %v", others, err)
	}
	if err := db.DeleteChatSessions(ctx, me, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.ReadChatSession(ctx, me, ids[3], quarry.ChatRead{IncludeDeleted: true}); err != quarry.ErrChatSessionNotFound {
		t.Errorf("after deleting all for good: %v", err)
	}
}

// TestChatStop checks the stop of a running answer: a row any replica
// reads, cleared by the next question.
func TestChatStop(t *testing.T) {
	f := newChatFixture(t)
	db, me := f.db, f.member
	replica := storetest.OpenURL(t, f.u, f.keys)
	s, err := db.CreateChatSession(ctx, me, quarry.ChatSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: ptr(int64(-1)), Message: "q"}); err != nil {
		t.Fatal(err)
	}
	if stop, err := replica.ChatStopRequested(ctx, s.ID); err != nil || stop {
		t.Fatalf("before: %v %v", stop, err)
	}
	if err := db.StopChatSession(ctx, f.outside, s.ID); err != quarry.ErrChatSessionNotFound {
		t.Errorf("another stops: %v", err)
	}
	if err := db.StopChatSession(ctx, me, s.ID); err != nil {
		t.Fatal(err)
	}
	if stop, err := replica.ChatStopRequested(ctx, s.ID); err != nil || !stop {
		t.Fatalf("after: %v %v", stop, err)
	}
	if _, err := db.StartChatTurn(ctx, me, quarry.ChatTurnInput{SessionID: s.ID, ParentID: ptr(int64(-1)), Message: "again"}); err != nil {
		t.Fatal(err)
	}
	if stop, err := replica.ChatStopRequested(ctx, s.ID); err != nil || stop {
		t.Fatalf("next question: %v %v", stop, err)
	}
	if stop, err := replica.ChatStopRequested(ctx, "00000000-0000-0000-0000-000000000000"); err != nil || !stop {
		t.Errorf("no session: %v %v", stop, err)
	}
}

func TestDefaultAssistantStore(t *testing.T) {
	f := newChatFixture(t)
	db := f.db
	a, err := db.DefaultAssistant(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := db.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	search := tools[0]
	if *search.InCodeToolID != "SearchTool" || !cmp.Equal(a.ToolIDs, []int64{search.ID}) || !a.Search || a.SystemPrompt != nil {
		t.Fatalf("seeded %+v", a)
	}
	custom, err := db.CreateTool(ctx, f.admin, quarry.ToolInput{Name: "ping", Definition: json.RawMessage(pingDefinition)})
	if err != nil {
		t.Fatal(err)
	}
	a, err = db.UpdateDefaultAssistant(ctx, f.admin, quarry.DefaultAssistantUpdate{ToolIDs: []int64{custom.ID}, SetPrompt: true, SystemPrompt: ptr("be brief")})
	if err != nil || !cmp.Equal(a.ToolIDs, []int64{custom.ID}) || a.Search || *a.SystemPrompt != "be brief" {
		t.Fatalf("updated %+v %v", a, err)
	}
	_, err = db.UpdateDefaultAssistant(ctx, f.admin, quarry.DefaultAssistantUpdate{ToolIDs: []int64{search.ID, tools[1].ID}})
	wantErr(t, err, quarry.EINVALID, fmt.Sprintf("Tool with ID %d cannot be assigned: Quarry does not run the built-in tool WebSearchTool", tools[1].ID))
	_, err = db.UpdateDefaultAssistant(ctx, f.admin, quarry.DefaultAssistantUpdate{ToolIDs: []int64{999}})
	wantErr(t, err, quarry.EINVALID, "Tool with ID 999 not found")
	// A refused change changes nothing.
	if a, _ = db.DefaultAssistant(ctx); !cmp.Equal(a.ToolIDs, []int64{custom.ID}) {
		t.Errorf("after refusals %+v", a)
	}
	if _, err := db.SetToolsEnabled(ctx, f.admin, []int64{search.ID}, false); err != nil {
		t.Fatal(err)
	}
	_, err = db.UpdateDefaultAssistant(ctx, f.admin, quarry.DefaultAssistantUpdate{ToolIDs: []int64{search.ID}})
	wantErr(t, err, quarry.EINVALID, "Enable tool Internal Search before assigning it")
	// A tool deleted leaves the assistant; the prompt is reset by null.
	if err := db.DeleteTool(ctx, f.admin, custom.ID); err != nil {
		t.Fatal(err)
	}
	a, err = db.UpdateDefaultAssistant(ctx, f.admin, quarry.DefaultAssistantUpdate{SetPrompt: true})
	if err != nil || len(a.ToolIDs) != 0 || a.SystemPrompt != nil {
		t.Fatalf("after deleting the tool %+v %v", a, err)
	}
}

const pingDefinition = `{"openapi": "3.0.0", "info": {"title": "Ping", "description": "Pings", "version": "1"},
	"servers": [{"url": "https://ping.example.com"}],
	"paths": {"/ping": {"get": {"summary": "ping", "operationId": "ping", "responses": {"200": {"description": "ok"}}}}}}`
