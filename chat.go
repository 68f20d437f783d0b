package quarry

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Chat: a person's sessions with the assistant, their messages (a tree:
// each message has a parent, and a regenerated answer is a second child of
// the same question), the documents and tools an answer used, the
// feedback on answers, and who may do what with them. The assistant's
// loop is package chat's; the store keeps what is here
// (store/chat.go); package api speaks Onyx v4.6.1's chat API.

// ChatSharing is who may read a session besides its person (Onyx's
// ChatSessionSharedStatus): anyone who may read chats, through its share
// link, once it is public.
type ChatSharing string

// The sharing statuses, in Onyx's order.
const (
	ChatPublic  ChatSharing = "public"
	ChatPrivate ChatSharing = "private"
)

// EnumValues returns the sharing statuses, in Onyx's order.
func (ChatSharing) EnumValues() []string { return []string{string(ChatPublic), string(ChatPrivate)} }

// ModelName returns the name of Onyx's enumeration.
func (ChatSharing) ModelName() string { return "ChatSessionSharedStatus" }

// ChatMessageType is who wrote a message of a session (Onyx's MessageType).
type ChatMessageType string

// The message types. A session's first message is an empty system
// message, the root of its tree, which Onyx keeps so that the first
// question can be asked again.
const (
	ChatSystem    ChatMessageType = "system"
	ChatUser      ChatMessageType = "user"
	ChatAssistant ChatMessageType = "assistant"
)

// ChatSession is a person's conversation with the assistant (Onyx's
// ChatSession).
type ChatSession struct {
	ID        string // A UUID.
	UserID    string
	OwnerName *string // The person's name, for those who read a shared session.
	PersonaID int64
	// PersonaName and PersonaIcon are its assistant's name and icon
	// (nil when it has none).
	PersonaName, PersonaIcon *string
	Description              *string // Its name.
	Sharing                  ChatSharing
	Deleted                  bool // Deleted but kept (Onyx's soft delete).
	CreatedAt                Time
	UpdatedAt                Time // Moved on by every message and change.
}

// ChatMessage is a message of a session (Onyx's ChatMessage). An assistant
// message is reserved, with ChatReservedText, when its question is
// stored, and written whole when its answer ends (or fails: Error).
type ChatMessage struct {
	ID            int64
	SessionID     string
	ParentID      *int64 // nil for the root.
	LatestChildID *int64 // The child the session continues from.
	Type          ChatMessageType
	Message       string
	TokenCount    int // Its estimated length in tokens (EstimateTokens).
	Error         *string
	// Citations map the numbers the answer cites to the documents they
	// name, in the order of first citation.
	Citations []ChatCitation
	// Documents are the documents the answer's searches gave the model.
	Documents []ChatDocument
	ToolCalls []ChatToolCall // The answer's calls of tools, in order.
	// Feedback is the person's latest like (true) or dislike (false), if
	// any.
	Feedback          *bool
	ProcessingSeconds *float64 // How long the answer took to begin.
	ModelDisplayName  *string
	SentAt            Time
}

// ChatReservedText is the text of an assistant message whose answer has
// not ended yet, and stays the text of one whose server stopped before it
// could write the answer (Onyx's).
const ChatReservedText = "Response was terminated prior to completion, try regenerating."

// ChatStoppedText ends the text of an answer the person stopped, after
// what the model had written (Onyx's); ChatStoppedEmpty is the text of one
// stopped before the model wrote anything.
const (
	ChatStoppedText  = " ... \n\nGeneration was stopped by the user."
	ChatStoppedEmpty = "The generation was stopped by the user."
)

// ChatDocument is a document an answer's search gave the model, as the
// session keeps it (Onyx's SavedSearchDoc): the search's result without
// the chunk's text, and the id of the row that keeps it.
type ChatDocument struct {
	ID int64 // Onyx's db_doc_id.
	SearchHit
}

// ChatCitation is a number an answer cites and the copy of the document it
// names (Onyx's CitationInfo; the pair is Quarry's, as each pair's copy of
// a document is its own).
type ChatCitation struct {
	Number     int
	DocumentID string
	PairID     int64
}

// ChatToolCall is a call of a tool an answer made: the search, a custom
// tool's operation or an MCP server's tool (Onyx's ToolCall).
type ChatToolCall struct {
	TurnNumber int    // The step of the answer it was made in, from 0.
	TabIndex   int    // Its place among the calls of that step.
	ToolID     int64  // The tools row (the search's is the built-in SearchTool's).
	CallID     string // The model's id of the call.
	Name       string // The name the model called it by.
	Arguments  json.RawMessage
	// Response is what the tool answered, as the model read it, or why it
	// could not run.
	Response  string
	Documents []ChatDocument // For a search: the documents it gave.
}

// CanReadChats reports whether c may read chat sessions (its own, and
// those shared with everyone): holders of read:chat (every role but
// limited, a limited API key's service account, and a personal access
// token with read:chat or write:chat), not the company's directory.
func (c *Caller) CanReadChats() bool { return c.Directory == nil && c.Has(PermReadChat) }

// CanWriteChats reports whether c may start sessions, ask, stop answers and
// give feedback: holders of write:chat (as CanReadChats, without a token
// scoped to read:chat alone).
func (c *Caller) CanWriteChats() bool { return c.Directory == nil && c.Has(PermWriteChat) }

// The refusals of the chat's sessions, with Onyx's details.
var (
	ErrChatSessionNotFound = Errorf(ENOTFOUND, "Chat session not found")
	ErrChatSessionDeleted  = Errorf(ENOTFOUND, "Chat session has been deleted")
	ErrChatNotShared       = Errorf(EFORBIDDEN, "Chat session is not shared")
	ErrChatAccessDenied    = Errorf(EFORBIDDEN, "Access denied")
	ErrChatPersona         = Errorf(EFORBIDDEN, "User does not have access to persona")
	ErrChatProject         = Errorf(EFORBIDDEN, "User does not have access to project")
)

// ChatRead says how a session is asked for: through its share link, and
// whether a deleted one is wanted (Onyx's is_shared and include_deleted).
type ChatRead struct {
	Shared         bool
	IncludeDeleted bool
}

// CheckReadChatSession reports whether c may read session s asked for as
// how says, as Onyx v4.6.1's GET /chat/get-chat-session answers: its
// person reads it (a deleted one only when asked for); through its share
// link anyone who may read chats reads a public one; a deleted session is
// "has been deleted" (404) unless asked for, a private one through its
// link "is not shared" (403), and another's "Access denied" (403).
func (c *Caller) CheckReadChatSession(s *ChatSession, how ChatRead) error {
	if s.Deleted && !how.IncludeDeleted {
		return ErrChatSessionDeleted
	}
	if how.Shared {
		if s.Sharing != ChatPublic {
			return ErrChatNotShared
		}
		return nil
	}
	if s.UserID != c.ID {
		return ErrChatAccessDenied
	}
	return nil
}

// CheckOwnChatSession reports whether c may change session s or continue
// it (rename, share, delete, send a message, stop an answer, give
// feedback): only its person. Another's session is not found, as one that
// does not exist (so that its existence does not leak); a deleted one has
// been deleted.
func (c *Caller) CheckOwnChatSession(s *ChatSession) error {
	if s.UserID != c.ID {
		return ErrChatSessionNotFound
	}
	if s.Deleted {
		return ErrChatSessionDeleted
	}
	return nil
}

// ChatSessionInput holds what a new session is made with (Onyx's
// ChatSessionCreationRequest).
type ChatSessionInput struct {
	PersonaID   int64
	Description *string
	ProjectID   *int64
	Incognito   bool
}

// Check refuses what Quarry cannot make a session with: a project, or an
// incognito session. The assistant is checked by the store
// (Caller.CheckChatPersona).
func (in *ChatSessionInput) Check() error {
	switch {
	case in.ProjectID != nil && *in.ProjectID != 0:
		return ErrChatProject
	case in.Incognito:
		return Errorf(EFORBIDDEN, "Incognito chat is not supported on this deployment.")
	}
	return nil
}

// ChatSessionUpdate holds the changes of a session: its name, its sharing
// (nil: unchanged), or, with AutoName, the name ChatSessionName gives it.
type ChatSessionUpdate struct {
	Description *string
	Sharing     *ChatSharing
	AutoName    bool
}

// ChatFailedAfter is how old a session without a question must be for the
// listing of sessions to leave it out (Onyx's failed chats): younger ones
// may be about to get their first question.
const ChatFailedAfter = 5 * time.Minute

// ChatTurnInput is a question to store before its answer is asked for: in
// session SessionID, or in a new one made with NewSession when SessionID
// is "", after ParentID (PlaceChatMessage).
type ChatTurnInput struct {
	SessionID        string
	NewSession       ChatSessionInput
	ParentID         *int64
	Message          string
	ModelDisplayName *string
}

// ChatTurn is a question stored and its answer reserved.
type ChatTurn struct {
	Session    *ChatSession
	NewSession bool // The session was made with the question.
	Question   *ChatMessage
	AnswerID   int64 // The answer's reserved message.
	// History is the mainline the model reads, the question last.
	History []*ChatMessage
}

// ChatAnswer is an answer to write in its reserved message: its text (or,
// for one that failed, why: Error), the citations of its text, and its
// calls of tools with their documents.
type ChatAnswer struct {
	MessageID         int64
	SessionID         string
	Text              string
	Error             *string
	Citations         []ChatCitation
	ToolCalls         []ChatToolCall
	ProcessingSeconds *float64
}

// DefaultChatSessionName is the name of a session without a question yet
// (Onyx's).
const DefaultChatSessionName = "New Chat"

// ChatSessionName returns the name a session gets when its person asks
// for one without giving it (Onyx's fallback name): its first question,
// cut to 40 characters, or DefaultChatSessionName.
func ChatSessionName(mainline []*ChatMessage) string {
	for _, m := range mainline {
		if m.Type != ChatUser {
			continue
		}
		q := strings.TrimSpace(m.Message)
		if q == "" {
			continue
		}
		if utf8.RuneCountInString(q) <= 40 {
			return q
		}
		return strings.TrimRightFunc(string([]rune(q)[:40]), func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) + "..."
	}
	return DefaultChatSessionName
}

// ChatMainline returns the root of a session's messages and the messages
// it continues from (Onyx's create_chat_history_chain): from the root,
// each message's latest child, to the last. msgs are the session's
// messages in any order; a session without messages has no root (nil).
func ChatMainline(msgs []*ChatMessage) (root *ChatMessage, mainline []*ChatMessage) {
	byID := make(map[int64]*ChatMessage, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
		if m.ParentID == nil && (root == nil || m.ID < root.ID) {
			root = m
		}
	}
	for m := root; m != nil && m.LatestChildID != nil; {
		next := byID[*m.LatestChildID]
		if next == nil || slices.Contains(mainline, next) {
			break
		}
		mainline = append(mainline, next)
		m = next
	}
	return root, mainline
}

// AutoPlaceMessage is the parent_message_id that places a new message after
// the session's latest (Onyx's AUTO_PLACE_AFTER_LATEST_MESSAGE).
const AutoPlaceMessage = -1

// ChatPlacement is where a new message goes in a session's tree.
type ChatPlacement struct {
	// Parent is the message the new one answers or follows.
	Parent *ChatMessage
	// Question is the question to answer: when Parent is a person's
	// message, the answer is asked for again (regenerated) and no new
	// question is stored.
	Question *ChatMessage
	// History is the mainline up to Parent, which the model reads.
	History []*ChatMessage
}

// Regenerate reports whether p asks for an answer to an earlier question
// again.
func (p ChatPlacement) Regenerate() bool { return p.Parent.Type == ChatUser }

// PlaceChatMessage decides where a new message goes (Onyx's rule): after
// the latest message for AutoPlaceMessage; at the root (a fresh start) for
// nil or the root's id; otherwise after the message parentID names, which
// must be on the mainline (400 otherwise), the mainline being cut there.
// root and mainline are ChatMainline's; a root not stored yet (ID 0) is
// named by no id.
func PlaceChatMessage(root *ChatMessage, mainline []*ChatMessage, parentID *int64) (ChatPlacement, error) {
	var p ChatPlacement
	switch {
	case parentID != nil && *parentID == AutoPlaceMessage:
		p.Parent, p.History = root, mainline
		if len(mainline) > 0 {
			p.Parent = mainline[len(mainline)-1]
		}
	case parentID == nil || root.ID != 0 && *parentID == root.ID:
		p.Parent = root
	default:
		i := slices.IndexFunc(mainline, func(m *ChatMessage) bool { return m.ID == *parentID })
		if i < 0 {
			return p, Errorf(EINVALID, "The new message sent is not on the latest mainline of messages")
		}
		p.Parent, p.History = mainline[i], mainline[:i+1]
	}
	if p.Parent.Type == ChatUser {
		p.Question = p.Parent
	}
	return p, nil
}

// CheckChatMessage refuses a new message that cannot start an answer: an
// empty one, unless an earlier question is asked again (whose text is
// kept).
func CheckChatMessage(text string, p ChatPlacement) error {
	if !p.Regenerate() && strings.TrimSpace(text) == "" {
		return Errorf(EINVALID, "The message is empty: ask a question")
	}
	return nil
}

// ChatFeedback is a person's feedback on an answer (Onyx's
// ChatFeedbackRequest).
type ChatFeedback struct {
	MessageID          int64
	IsPositive         *bool
	Text               *string
	PredefinedFeedback *string
}

// CheckFeedbackTarget reports whether feedback may be given on message m
// (or removed from it): only on an answer (Onyx's 400).
func CheckFeedbackTarget(m *ChatMessage, remove bool) error {
	if m.Type == ChatAssistant {
		return nil
	}
	if remove {
		return Errorf(EINVALID, "Can only remove feedback from LLM Outputs")
	}
	return Errorf(EINVALID, "Can only provide feedback on LLM Outputs")
}

// ErrChatMessageNotFound answers feedback on a message that does not exist
// or is not in a session of the caller's.
var ErrChatMessageNotFound = Errorf(ENOTFOUND, "Chat message not found")

// EstimateTokens returns the length of s in tokens as the chat budgets it,
// without the model's tokenizer (Quarry has none for every model a
// provider may serve): ASCII characters at four a token, the rule of thumb
// OpenAI gives for English text in its tokenizers, and every other
// character a token of its own, as the characters of Chinese, Japanese,
// Korean and most scripts beyond Latin take one or more tokens each in
// GPT-4-class tokenizers (an overestimate for accented Latin letters, which
// errs on the safe side). See docs/decisions.md, "The context window".
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		other++
		i += n
	}
	return (ascii+3)/4 + other
}

// DefaultAssistant is how an assistant answers in chat: the default one's
// is Onyx's DefaultAssistantConfiguration (the tools it offers the model,
// and its instructions, nil for Quarry's, DefaultSystemPrompt); another's
// adds its instructions, its document sets and its model.
type DefaultAssistant struct {
	PersonaID    int64
	ToolIDs      []int64
	SystemPrompt *string
	// Instructions are what the assistant tells the model
	// (Persona.Prompt).
	Instructions string
	// DocumentSetIDs narrow its searches, when any.
	DocumentSetIDs []int64
	// ModelConfigurationID is the model it answers with, if not the
	// default one.
	ModelConfigurationID *int64
	// Search reports whether it offers the search: the built-in search
	// tool is among its tools, and enabled.
	Search bool
	// SearchToolID is the built-in search tool's id (0 if there is none),
	// which allowed_tool_ids and forced_tool_id name.
	SearchToolID int64
}

// Prompt returns the instructions the assistant gives the model.
func (a *DefaultAssistant) Prompt() string {
	if a.Instructions != "" {
		return a.Instructions
	}
	if a.SystemPrompt != nil {
		return *a.SystemPrompt
	}
	return DefaultSystemPrompt
}

// DefaultSystemPrompt is the default assistant's instructions until an
// admin sets others.
const DefaultSystemPrompt = "You are the assistant of the company's content: its documents, mail, wiki pages and the " +
	"tools an admin connected. Answer the person's questions truthfully and precisely. " +
	"When a question may be answered from the company's content, search it with internal_search before answering, " +
	"and base your answer on what the search gives you; say so plainly when it gives nothing useful. " +
	"Use Markdown to format your answers."

// DefaultAssistantUpdate holds a change of the default assistant (Onyx's
// DefaultAssistantUpdateRequest): the tools it offers (nil: unchanged),
// and its instructions when SetPrompt (nil: Quarry's own).
type DefaultAssistantUpdate struct {
	ToolIDs      []int64
	SetPrompt    bool
	SystemPrompt *string
}

// Apply returns a changed by u.
func (u *DefaultAssistantUpdate) Apply(a DefaultAssistant) DefaultAssistant {
	if u.ToolIDs != nil {
		a.ToolIDs = slices.Compact(slices.Sorted(slices.Values(u.ToolIDs)))
	}
	if u.SetPrompt {
		a.SystemPrompt = u.SystemPrompt
	}
	return a
}

// CheckAssistantTool reports whether tool t (nil: no tool of id) may be
// one the default assistant offers, as Onyx v4.6.1 checks it (400): it
// exists, is one a chat may use (the search, a custom tool, or an MCP
// server's tool: Quarry runs none of the other built-ins), and is enabled.
func CheckAssistantTool(id int64, t *Tool) error {
	switch {
	case t == nil:
		return Errorf(EINVALID, "Tool with ID %d not found", id)
	case t.InCodeToolID != nil && *t.InCodeToolID != SearchToolID:
		return Errorf(EINVALID, "Tool with ID %d cannot be assigned: Quarry does not run the built-in tool %s", id, *t.InCodeToolID)
	case !t.Enabled:
		name := t.Name
		if t.DisplayName != nil && *t.DisplayName != "" {
			name = *t.DisplayName
		}
		return Errorf(EINVALID, "Enable tool %s before assigning it", name)
	}
	return nil
}

// SearchToolID is the in_code_tool_id of the built-in search tool, which
// the assistant's model calls internal_search.
const SearchToolID = "SearchTool"
