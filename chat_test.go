package quarry_test

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// TestCheckReadChatSession is Onyx v4.6.1's GET /chat/get-chat-session
// rule (tests/integration/tests/chat/test_chat_session_access.py), one row
// per case.
func TestCheckReadChatSession(t *testing.T) {
	owner := &quarry.Caller{User: quarry.User{ID: "owner", Role: quarry.RoleBasic}}
	other := &quarry.Caller{User: quarry.User{ID: "other", Role: quarry.RoleBasic}}
	private := &quarry.ChatSession{UserID: "owner", Sharing: quarry.ChatPrivate}
	public := &quarry.ChatSession{UserID: "owner", Sharing: quarry.ChatPublic}
	deleted := &quarry.ChatSession{UserID: "owner", Sharing: quarry.ChatPublic, Deleted: true}
	for _, tt := range []struct {
		name string
		c    *quarry.Caller
		s    *quarry.ChatSession
		how  quarry.ChatRead
		want error
	}{
		{"owner reads a private one", owner, private, quarry.ChatRead{}, nil},
		{"owner through the link of a private one", owner, private, quarry.ChatRead{Shared: true}, quarry.ErrChatNotShared},
		{"another reads a private one", other, private, quarry.ChatRead{}, quarry.ErrChatAccessDenied},
		{"another through the link of a private one", other, private, quarry.ChatRead{Shared: true}, quarry.ErrChatNotShared},
		{"owner reads a public one", owner, public, quarry.ChatRead{}, nil},
		{"owner through the link of a public one", owner, public, quarry.ChatRead{Shared: true}, nil},
		{"another reads a public one without the link", other, public, quarry.ChatRead{}, quarry.ErrChatAccessDenied},
		{"another through the link of a public one", other, public, quarry.ChatRead{Shared: true}, nil},
		{"owner reads a deleted one", owner, deleted, quarry.ChatRead{}, quarry.ErrChatSessionDeleted},
		{"owner asks for a deleted one", owner, deleted, quarry.ChatRead{IncludeDeleted: true}, nil},
		{"another asks for a deleted one", other, deleted, quarry.ChatRead{IncludeDeleted: true}, quarry.ErrChatAccessDenied},
		{"another through the link of a deleted one", other, deleted, quarry.ChatRead{Shared: true}, quarry.ErrChatSessionDeleted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.CheckReadChatSession(tt.s, tt.how); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckOwnChatSession(t *testing.T) {
	owner := &quarry.Caller{User: quarry.User{ID: "owner", Role: quarry.RoleBasic}}
	admin := &quarry.Caller{User: quarry.User{ID: "admin", Role: quarry.RoleAdmin}}
	for _, tt := range []struct {
		name string
		c    *quarry.Caller
		s    *quarry.ChatSession
		want error
	}{
		{"its person", owner, &quarry.ChatSession{UserID: "owner"}, nil},
		{"its person, shared", owner, &quarry.ChatSession{UserID: "owner", Sharing: quarry.ChatPublic}, nil},
		{"an admin, not its person", admin, &quarry.ChatSession{UserID: "owner"}, quarry.ErrChatSessionNotFound},
		{"another, public", admin, &quarry.ChatSession{UserID: "owner", Sharing: quarry.ChatPublic}, quarry.ErrChatSessionNotFound},
		{"deleted", owner, &quarry.ChatSession{UserID: "owner", Deleted: true}, quarry.ErrChatSessionDeleted},
		{"another's deleted one", admin, &quarry.ChatSession{UserID: "owner", Deleted: true}, quarry.ErrChatSessionNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.CheckOwnChatSession(tt.s); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChatRights(t *testing.T) {
	scoped := func(r quarry.Role, scopes ...quarry.Permission) *quarry.Caller {
		c := &quarry.Caller{User: quarry.User{ID: "u", Role: r}}
		c.SetGrants(nil)
		if scopes != nil {
			c.LimitTo(scopes)
		}
		return c
	}
	key := func(r quarry.Role) *quarry.Caller {
		c := &quarry.Caller{User: quarry.User{ID: "k", Role: r, ServiceAccount: true}, APIKeyID: 1}
		c.SetGrants(nil)
		return c
	}
	for _, tt := range []struct {
		name        string
		c           *quarry.Caller
		read, write bool
	}{
		{"basic", scoped(quarry.RoleBasic), true, true},
		{"admin", scoped(quarry.RoleAdmin), true, true},
		{"limited person", scoped(quarry.RoleLimited), false, false},
		{"limited API key (Onyx's role_derived_permissions)", key(quarry.RoleLimited), true, true},
		{"basic API key", key(quarry.RoleBasic), true, true},
		{"token scoped to read:chat", scoped(quarry.RoleBasic, quarry.PermReadChat), true, false},
		{"token scoped to write:chat", scoped(quarry.RoleBasic, quarry.PermWriteChat), true, true},
		{"token scoped to read:search", scoped(quarry.RoleBasic, quarry.PermReadSearch), false, false},
		{"the directory", &quarry.Caller{Directory: &quarry.SCIMToken{ID: 1}}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.CanReadChats(); got != tt.read {
				t.Errorf("CanReadChats = %v, want %v", got, tt.read)
			}
			if got := tt.c.CanWriteChats(); got != tt.write {
				t.Errorf("CanWriteChats = %v, want %v", got, tt.write)
			}
		})
	}
}

// messages makes a session's messages from (id, parent, latest child,
// type) rows.
func messages(rows ...[4]any) []*quarry.ChatMessage {
	var out []*quarry.ChatMessage
	for _, r := range rows {
		m := &quarry.ChatMessage{ID: int64(r[0].(int)), Type: r[3].(quarry.ChatMessageType)}
		if p := r[1].(int); p != 0 {
			m.ParentID = ref(int64(p))
		}
		if c := r[2].(int); c != 0 {
			m.LatestChildID = ref(int64(c))
		}
		out = append(out, m)
	}
	return out
}

func ref[T any](v T) *T { return &v }

func ids(ms []*quarry.ChatMessage) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestChatMainlineAndPlacement(t *testing.T) {
	// 1 root; 2 question; 3 a first answer, 4 the answer regenerated (the
	// latest); 5 a follow-up; 6 its answer.
	msgs := messages(
		[4]any{6, 5, 0, quarry.ChatAssistant},
		[4]any{1, 0, 2, quarry.ChatSystem},
		[4]any{2, 1, 4, quarry.ChatUser},
		[4]any{3, 2, 0, quarry.ChatAssistant},
		[4]any{4, 2, 5, quarry.ChatAssistant},
		[4]any{5, 4, 6, quarry.ChatUser},
	)
	root, mainline := quarry.ChatMainline(msgs)
	if root.ID != 1 || !equalIDs(ids(mainline), 2, 4, 5, 6) {
		t.Fatalf("root %d, mainline %v", root.ID, ids(mainline))
	}
	for _, tt := range []struct {
		name       string
		parent     *int64
		wantParent int64
		history    []int64
		regenerate bool
		err        string
	}{
		{"after the latest", ref(int64(quarry.AutoPlaceMessage)), 6, []int64{2, 4, 5, 6}, false, ""},
		{"from the root (null)", nil, 1, []int64{}, false, ""},
		{"from the root (its id)", ref(int64(1)), 1, []int64{}, false, ""},
		{"after an answer in the middle", ref(int64(4)), 4, []int64{2, 4}, false, ""},
		{"a question asked again", ref(int64(5)), 5, []int64{2, 4, 5}, true, ""},
		{"after an answer off the mainline", ref(int64(3)), 0, nil, false, "The new message sent is not on the latest mainline of messages"},
		{"after no such message", ref(int64(99)), 0, nil, false, "The new message sent is not on the latest mainline of messages"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := quarry.PlaceChatMessage(root, mainline, tt.parent)
			if tt.err != "" {
				if quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != tt.err {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Parent.ID != tt.wantParent || !equalIDs(ids(p.History), tt.history...) || p.Regenerate() != tt.regenerate {
				t.Errorf("parent %d history %v regenerate %v", p.Parent.ID, ids(p.History), p.Regenerate())
			}
			if (p.Question != nil) != tt.regenerate {
				t.Errorf("question %v", p.Question)
			}
		})
	}
	// A session whose root has no child yet.
	root, mainline = quarry.ChatMainline(messages([4]any{7, 0, 0, quarry.ChatSystem}))
	p, err := quarry.PlaceChatMessage(root, mainline, ref(int64(quarry.AutoPlaceMessage)))
	if err != nil || p.Parent.ID != 7 || len(p.History) != 0 {
		t.Fatalf("empty session: %+v %v", p, err)
	}
	if err := quarry.CheckChatMessage("  \n", p); quarry.ErrorCode(err) != quarry.EINVALID {
		t.Errorf("empty message: %v", err)
	}
	if err := quarry.CheckChatMessage("hello", p); err != nil {
		t.Errorf("message: %v", err)
	}
	if err := quarry.CheckChatMessage("", quarry.ChatPlacement{Parent: &quarry.ChatMessage{Type: quarry.ChatUser}}); err != nil {
		t.Errorf("an empty message asking an earlier question again: %v", err)
	}
	// A cycle of latest children (corrupt data) ends the mainline.
	root, mainline = quarry.ChatMainline(messages([4]any{1, 0, 2, quarry.ChatSystem}, [4]any{2, 1, 3, quarry.ChatUser}, [4]any{3, 2, 2, quarry.ChatAssistant}))
	if !equalIDs(ids(mainline), 2, 3) {
		t.Errorf("cycle: %v", ids(mainline))
	}
}

func equalIDs(got []int64, want ...int64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestChatSessionName(t *testing.T) {
	q := func(s string) *quarry.ChatMessage { return &quarry.ChatMessage{Type: quarry.ChatUser, Message: s} }
	a := &quarry.ChatMessage{Type: quarry.ChatAssistant, Message: "an answer"}
	for _, tt := range []struct {
		msgs []*quarry.ChatMessage
		want string
	}{
		{nil, "New Chat"},
		{[]*quarry.ChatMessage{q("   ")}, "New Chat"},
		{[]*quarry.ChatMessage{q("  What is our leave policy?  "), a}, "What is our leave policy?"},
		{[]*quarry.ChatMessage{a, q(""), q("second")}, "second"},
		{[]*quarry.ChatMessage{q(strings.Repeat("é", 40))}, strings.Repeat("é", 40)},
		{[]*quarry.ChatMessage{q(strings.Repeat("word ", 10))}, strings.Repeat("word ", 7) + "word..."},
	} {
		if got := quarry.ChatSessionName(tt.msgs); got != tt.want {
			t.Errorf("ChatSessionName = %q, want %q", got, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{"The quick brown fox jumps over the lazy dog.", 11},
		{"日本語", 3},
		{"café", 2}, // "caf" a token, "é" one of its own.
		{"\xff\xfe", 2},
	} {
		if got := quarry.EstimateTokens(tt.s); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestChatSessionInput(t *testing.T) {
	for _, tt := range []struct {
		in   quarry.ChatSessionInput
		want error
	}{
		{quarry.ChatSessionInput{}, nil},
		{quarry.ChatSessionInput{ProjectID: ref(int64(0))}, nil},
		{quarry.ChatSessionInput{PersonaID: 3}, nil}, // The store checks the assistant (CheckChatPersona).
		{quarry.ChatSessionInput{ProjectID: ref(int64(2))}, quarry.ErrChatProject},
	} {
		if got := tt.in.Check(); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.in, got, tt.want)
		}
	}
	in := quarry.ChatSessionInput{Incognito: true}
	if err := in.Check(); quarry.ErrorCode(err) != quarry.EFORBIDDEN {
		t.Errorf("incognito: %v", err)
	}
}

func TestDefaultAssistant(t *testing.T) {
	search := &quarry.Tool{ID: 1, Name: "internal_search", InCodeToolID: ref("SearchTool"), Enabled: true}
	web := &quarry.Tool{ID: 2, Name: "web_search", InCodeToolID: ref("WebSearchTool"), Enabled: true}
	custom := &quarry.Tool{ID: 5, Name: "weather", Enabled: true}
	off := &quarry.Tool{ID: 6, Name: "tickets", DisplayName: ref("Tickets"), Enabled: false}
	for _, tt := range []struct {
		id   int64
		t    *quarry.Tool
		want string
	}{
		{1, search, ""},
		{5, custom, ""},
		{9, nil, "Tool with ID 9 not found"},
		{2, web, "Tool with ID 2 cannot be assigned: Quarry does not run the built-in tool WebSearchTool"},
		{6, off, "Enable tool Tickets before assigning it"},
	} {
		err := quarry.CheckAssistantTool(tt.id, tt.t)
		if tt.want == "" && err != nil || tt.want != "" && (quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != tt.want) {
			t.Errorf("tool %d: %v, want %q", tt.id, err, tt.want)
		}
	}
	a := quarry.DefaultAssistant{ToolIDs: []int64{1}}
	if a.Prompt() != quarry.DefaultSystemPrompt {
		t.Error("default prompt")
	}
	u := quarry.DefaultAssistantUpdate{ToolIDs: []int64{5, 1, 5}}
	a = u.Apply(a)
	if !equalIDs(a.ToolIDs, 1, 5) || a.SystemPrompt != nil {
		t.Errorf("tools: %+v", a)
	}
	u = quarry.DefaultAssistantUpdate{SetPrompt: true, SystemPrompt: ref("")}
	a = u.Apply(a)
	if a.Prompt() != "" || !equalIDs(a.ToolIDs, 1, 5) {
		t.Errorf("an empty prompt is a prompt: %+v", a)
	}
	u = quarry.DefaultAssistantUpdate{SetPrompt: true}
	if a = u.Apply(a); a.Prompt() != quarry.DefaultSystemPrompt {
		t.Errorf("null resets: %+v", a)
	}
	u = quarry.DefaultAssistantUpdate{ToolIDs: []int64{}}
	if a = u.Apply(a); len(a.ToolIDs) != 0 {
		t.Errorf("no tools: %+v", a)
	}
}

func TestFeedbackTarget(t *testing.T) {
	if err := quarry.CheckFeedbackTarget(&quarry.ChatMessage{Type: quarry.ChatAssistant}, false); err != nil {
		t.Error(err)
	}
	if err := quarry.CheckFeedbackTarget(&quarry.ChatMessage{Type: quarry.ChatUser}, false); quarry.ErrorMessage(err) != "Can only provide feedback on LLM Outputs" {
		t.Error(err)
	}
	if err := quarry.CheckFeedbackTarget(&quarry.ChatMessage{Type: quarry.ChatSystem}, true); quarry.ErrorMessage(err) != "Can only remove feedback from LLM Outputs" {
		t.Error(err)
	}
}
