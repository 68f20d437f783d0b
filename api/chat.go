package api

import (
	"context"
	"net/http"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/chat"
	"github.com/quarryhq/quarry/outbound"
)

// Chat: Onyx v4.6.1's chat API (backend/onyx/server/query_and_chat/
// chat_backend.py): sessions, their messages and feedback, and the
// default assistant (backend/onyx/server/features/default_assistant/).
// The answers are api/chatsend.go's; the rules are the root package's
// (chat.go), the loop package chat's.

// ChatConfig says how the chat answers.
type ChatConfig struct {
	// Models, if set, chooses the model that answers instead of the
	// configured providers (for tests of the loop's control, with a model
	// scripted in Go).
	Models ChatModels
	// ModelLimits bound what a provider's answer may take (zero: package
	// outbound's defaults).
	ModelLimits outbound.ModelLimits
	// Timeout bounds an answer; zero means 10 minutes.
	Timeout time.Duration
	// TestMode honours SendMessageRequest's mock_llm_response (Onyx's
	// INTEGRATION_TESTS_MODE): the answer is that text, whatever the
	// model. For tests only; no request can turn it on.
	TestMode bool
	// MaxSteps and StopEvery are the loop's (zero: package chat's
	// defaults).
	MaxSteps  int
	StopEvery time.Duration
}

// ChatModels chooses the model that answers a person's question.
type ChatModels interface {
	// ChatModel returns the model that answers c, as choice asks (the zero
	// choice: the default model), or an error: a *quarry.Error (EINVALID)
	// when none is configured.
	ChatModel(ctx context.Context, c *quarry.Caller, choice quarry.ModelChoice) (*chat.Binding, error)
}

// providerModels is the ChatModels of a deployment: the providers an
// admin configured (store.DB.ChatModel, quarry.ChooseChatModel), each
// called through package outbound's client, behind the egress guard.
type providerModels struct{ s *Server }

// ChatModel implements ChatModels.
func (m providerModels) ChatModel(ctx context.Context, c *quarry.Caller, choice quarry.ModelChoice) (*chat.Binding, error) {
	cm, err := m.s.db.ChatModel(ctx, c, choice)
	if err != nil {
		return nil, err
	}
	display := cm.Model
	if mc := cm.Provider.Model(cm.Model); mc != nil {
		switch {
		case mc.CustomDisplayName != nil && *mc.CustomDisplayName != "":
			display = *mc.CustomDisplayName
		case mc.DisplayName != nil && *mc.DisplayName != "":
			display = *mc.DisplayName
		}
	}
	return &chat.Binding{Model: m.s.out.Model(cm.Provider, m.s.cfg.Chat.ModelLimits), Name: cm.Model, DisplayName: display,
		MaxInputTokens: int(cm.MaxInputTokens)}, nil
}

// chatTimeout is the longest an answer may take.
func (s *Server) chatTimeout() time.Duration {
	if s.cfg.Chat.Timeout > 0 {
		return s.cfg.Chat.Timeout
	}
	return 10 * time.Minute
}

// The chat's gates: reading sessions takes read:chat, asking and stopping
// write:chat (quarry.Caller.CanReadChats, CanWriteChats), as Onyx's
// require_permission(READ_CHAT / WRITE_CHAT); renaming, sharing and
// deleting take basic, as in Onyx.
var (
	chatRead  = permitted((*quarry.Caller).CanReadChats, quarry.ErrNoPermission)
	chatWrite = permitted((*quarry.Caller).CanWriteChats, quarry.ErrNoPermission)
)

// handleCreateChatSession serves POST /chat/create-chat-session.
func (s *Server) handleCreateChatSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createChatSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	sess, err := s.db.CreateChatSession(r.Context(), c, in.Body.input())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, createChatSessionID{sess.ID, false})
}

// createChatSessionID is Onyx's CreateChatSessionID.
type createChatSessionID struct {
	ChatSessionID string `json:"chat_session_id"`
	Incognito     bool   `json:"incognito"`
}

// parseBefore reads the before parameter of the listing of sessions, an
// ISO 8601 time as Python's datetime.fromisoformat reads it (without a
// zone: UTC).
func parseBefore(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// handleChatSessions serves GET /chat/get-user-chat-sessions: the caller's
// sessions, most recently changed first, a page at a time (before: the
// time_updated of the last one seen). Quarry has no projects: a project_id
// names none, and every session is outside projects.
func (s *Server) handleChatSessions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in chatSessionsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	var before *quarry.Time
	if b := value(in.Before); b != nil {
		t, ok := parseBefore(*b)
		if !ok {
			return quarry.Errorf(quarry.EINVALID, "Invalid 'before' timestamp format")
		}
		before = &quarry.Time{Time: t}
	}
	out := struct {
		Sessions []chatSessionDetails `json:"sessions"`
		HasMore  bool                 `json:"has_more"`
	}{Sessions: []chatSessionDetails{}}
	if !in.ProjectID.Set() {
		sessions, err := s.db.ChatSessions(r.Context(), c, before, int(in.PageSize)+1, in.IncludeFailedChats)
		if err != nil {
			return err
		}
		if out.HasMore = len(sessions) > int(in.PageSize); out.HasMore {
			sessions = sessions[:in.PageSize]
		}
		for _, sess := range sessions {
			out.Sessions = append(out.Sessions, sessionDetails(sess))
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleGetChatSession serves GET /chat/get-chat-session/{session_id}: the
// session as its reader may read it (quarry.Caller.CheckReadChatSession),
// its assistant's name and icon, every message, and the packets that show
// each answer again.
func (s *Server) handleGetChatSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getChatSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	sess, msgs, err := s.db.ReadChatSession(r.Context(), c, in.ID.String(), quarry.ChatRead{Shared: in.IsShared, IncludeDeleted: in.IncludeDeleted})
	if err != nil {
		return err
	}
	persona := sess.PersonaID
	out := struct {
		ChatSessionID                  string              `json:"chat_session_id"`
		Description                    *string             `json:"description"`
		PersonaID                      *int64              `json:"persona_id"`
		PersonaName                    *string             `json:"persona_name"`
		PersonalIconName               *string             `json:"personal_icon_name"`
		Messages                       []chatMessageDetail `json:"messages"`
		TimeCreated                    quarry.Time         `json:"time_created"`
		SharedStatus                   quarry.ChatSharing  `json:"shared_status"`
		CurrentAlternateModel          *string             `json:"current_alternate_model"`
		CurrentTemperatureOverride     *float64            `json:"current_temperature_override"`
		CurrentReasoningEffortOverride *string             `json:"current_reasoning_effort_override"`
		Deleted                        bool                `json:"deleted"`
		OwnerName                      *string             `json:"owner_name"`
		Packets                        [][]packet          `json:"packets"`
		CurrentRun                     *struct{}           `json:"current_run"`
		Incognito                      bool                `json:"incognito"`
	}{ChatSessionID: sess.ID, Description: sess.Description, PersonaID: &persona, PersonaName: sess.PersonaName,
		PersonalIconName: sess.PersonaIcon, Messages: []chatMessageDetail{},
		TimeCreated: sess.CreatedAt, SharedStatus: sess.Sharing, Deleted: sess.Deleted, OwnerName: sess.OwnerName, Packets: [][]packet{}}
	for _, m := range msgs {
		out.Messages = append(out.Messages, messageDetail(m))
		if m.Type == quarry.ChatAssistant {
			out.Packets = append(out.Packets, replayPackets(m))
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleRenameChatSession serves PUT /chat/rename-chat-session: the name
// given, or, without one, the session's first question (Onyx's name when
// its model cannot give one: Quarry asks no model for a name).
func (s *Server) handleRenameChatSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in renameChatSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	u := quarry.ChatSessionUpdate{AutoName: true}
	if name := value(in.Body.Name); name != nil && *name != "" {
		u = quarry.ChatSessionUpdate{Description: name}
	}
	sess, err := s.db.UpdateChatSession(r.Context(), c, in.Body.ChatSessionID.String(), u)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		NewName string `json:"new_name"`
	}{*sess.Description})
}

// handlePatchChatSession serves PATCH /chat/chat-session/{session_id}: its
// sharing.
func (s *Server) handlePatchChatSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in patchChatSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if _, err := s.db.UpdateChatSession(r.Context(), c, in.ID.String(), quarry.ChatSessionUpdate{Sharing: &in.Body.SharingStatus}); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleDeleteChatSession serves DELETE /chat/delete-chat-session/{session_id}:
// soft unless hard_delete (Onyx's default, HARD_DELETE_CHATS off).
func (s *Server) handleDeleteChatSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteChatSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteChatSession(r.Context(), c, in.ID.String(), in.HardDelete.Set() && in.HardDelete.Value); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleDeleteAllChatSessions serves DELETE /chat/delete-all-chat-sessions:
// every session of the caller's, soft.
func (s *Server) handleDeleteAllChatSessions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	if err := s.db.DeleteChatSessions(r.Context(), c, false); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleStopChatSession serves POST /chat/stop-chat-session/{chat_session_id}:
// the answer running in the session stops, on whichever replica runs it.
func (s *Server) handleStopChatSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in stopChatSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.StopChatSession(r.Context(), c, in.ID.String()); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
	}{"Chat session stopped"})
}

// handleCreateChatFeedback serves POST /chat/create-chat-message-feedback.
func (s *Server) handleCreateChatFeedback(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createChatFeedbackRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	f := quarry.ChatFeedback{MessageID: b.ChatMessageID, IsPositive: value(b.IsPositive), Text: value(b.FeedbackText),
		PredefinedFeedback: value(b.PredefinedFeedback)}
	if err := s.db.CreateChatFeedback(r.Context(), c, f); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleRemoveChatFeedback serves DELETE /chat/remove-chat-message-feedback.
func (s *Server) handleRemoveChatFeedback(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in removeChatFeedbackRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RemoveChatFeedback(r.Context(), c, in.ChatMessageID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// defaultAssistantConfiguration is Onyx's DefaultAssistantConfiguration.
type defaultAssistantConfiguration struct {
	ToolIDs             []int64 `json:"tool_ids"`
	SystemPrompt        *string `json:"system_prompt"`
	DefaultSystemPrompt string  `json:"default_system_prompt"`
}

func assistantConfiguration(a *quarry.DefaultAssistant) defaultAssistantConfiguration {
	return defaultAssistantConfiguration{ToolIDs: a.ToolIDs, SystemPrompt: a.SystemPrompt, DefaultSystemPrompt: quarry.DefaultSystemPrompt}
}

// handleDefaultAssistant serves GET /admin/default-assistant/configuration.
func (s *Server) handleDefaultAssistant(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	a, err := s.db.DefaultAssistant(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, assistantConfiguration(a))
}

// handleUpdateDefaultAssistant serves PATCH /admin/default-assistant: the
// tools it offers (each one it may offer: quarry.CheckAssistantTool) and
// its instructions (null: Quarry's).
func (s *Server) handleUpdateDefaultAssistant(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateDefaultAssistantRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := &in.Body
	u := quarry.DefaultAssistantUpdate{SetPrompt: b.SystemPrompt.Present, SystemPrompt: value(b.SystemPrompt)}
	if ids := value(b.ToolIDs); ids != nil {
		u.ToolIDs = *ids
		if u.ToolIDs == nil {
			u.ToolIDs = []int64{}
		}
	}
	a, err := s.db.UpdateDefaultAssistant(r.Context(), c, u)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, assistantConfiguration(a))
}
