package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry"
)

// Chat (chat_sessions, chat_messages, chat_tool_calls, chat_documents,
// chat_feedback; 00021_chat.sql): the store reads the facts, the root
// package decides (quarry.Caller.CheckReadChatSession,
// CheckOwnChatSession, quarry.PlaceChatMessage), and the store writes. A
// question and the reservation of its answer are one transaction,
// committed before the model is asked; the answer is written when it
// ends (FinishChatTurn), so that a server that stops in between loses no
// earlier message.

// chatSessionColumns are a session's columns, its person's name by a
// subquery, all named by the table's own name (SQLite's RETURNING knows
// no alias): an INSERT or UPDATE of chat_sessions returns them too.
const chatSessionColumns = `chat_sessions.id, chat_sessions.user_id, (SELECT u.name FROM users u WHERE u.id = chat_sessions.user_id),
	chat_sessions.persona_id, (SELECT p.name FROM personas p WHERE p.id = chat_sessions.persona_id),
	(SELECT p.icon_name FROM personas p WHERE p.id = chat_sessions.persona_id), chat_sessions.description, chat_sessions.shared_status, chat_sessions.deleted, chat_sessions.created_at,
	chat_sessions.updated_at`

const chatSessionFrom = ` FROM chat_sessions`

func scanChatSession(r interface{ Scan(...any) error }) (*quarry.ChatSession, error) {
	var (
		out              quarry.ChatSession
		created, updated int64
	)
	if err := r.Scan(&out.ID, &out.UserID, &out.OwnerName, &out.PersonaID, &out.PersonaName, &out.PersonaIcon, &out.Description, &out.Sharing, &out.Deleted, &created, &updated); err != nil {
		return nil, err
	}
	out.CreatedAt, out.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	return &out, nil
}

// chatSession reads session id, deleted or not (ErrChatSessionNotFound).
func chatSession(ctx context.Context, q querier, id string) (*quarry.ChatSession, error) {
	out, err := scanChatSession(q.QueryRowContext(ctx, `SELECT `+chatSessionColumns+chatSessionFrom+` WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.ErrChatSessionNotFound
	}
	return out, err
}

// CreateChatSession makes a session of c's (its root message comes with
// its first question).
func (db *DB) CreateChatSession(ctx context.Context, c *quarry.Caller, in quarry.ChatSessionInput) (*quarry.ChatSession, error) {
	var out *quarry.ChatSession
	err := db.update(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.createChatSession(ctx, c, in)
		return err
	})
	return out, err
}

func (tx *Tx) createChatSession(ctx context.Context, c *quarry.Caller, in quarry.ChatSessionInput) (*quarry.ChatSession, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	// The assistant must be one c may chat with (Onyx's 403), the
	// default one included (an admin could not delete it, but the check
	// costs one read).
	p, _, err := tx.db.chatPersona(ctx, tx, c, "", in.PersonaID)
	if err != nil {
		return nil, err
	}
	if err := c.CheckChatPersona(p); err != nil {
		return nil, err
	}
	id := uuid.NewString()
	sess, err := scanChatSession(tx.QueryRowContext(ctx, `INSERT INTO chat_sessions (id, user_id, persona_id, description, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) RETURNING `+chatSessionColumns, id, c.ID, in.PersonaID, in.Description, tx.now.Micros()))
	if err != nil {
		return nil, err
	}
	fields := []string{"persona_id"}
	if in.Description != nil {
		fields = append(fields, "description")
	}
	if err := tx.audit(ctx, c, "chat_session.create", "chat_session", id, fields); err != nil {
		return nil, err
	}
	return sess, nil
}

// ReadChatSession returns session id and every message of it, as c may
// read it (quarry.Caller.CheckReadChatSession), ascending by parent (the
// root first), then by id. The documents of its answers are those c may
// read now (search's rule), and its citations those of them.
func (db *DB) ReadChatSession(ctx context.Context, c *quarry.Caller, id string, how quarry.ChatRead) (*quarry.ChatSession, []*quarry.ChatMessage, error) {
	var (
		sess *quarry.ChatSession
		msgs []*quarry.ChatMessage
	)
	err := db.snapshot(ctx, func(q querier) error {
		var err error
		if sess, err = chatSession(ctx, q, id); err != nil {
			return err
		}
		if err := c.CheckReadChatSession(sess, how); err != nil {
			return err
		}
		msgs, err = db.chatMessages(ctx, q, c, id)
		return err
	})
	if err != nil {
		return nil, nil, mapError(err)
	}
	return sess, msgs, nil
}

const chatMessageColumns = `m.id, m.session_id, m.parent_id, m.latest_child_id, m.message_type, m.message, m.token_count, m.error,
	m.citations, m.model_display_name, m.processing_micros, m.sent_at`

func scanChatMessage(r interface{ Scan(...any) error }) (*quarry.ChatMessage, error) {
	var (
		m          quarry.ChatMessage
		citations  sql.NullString
		processing sql.NullInt64
		sent       int64
	)
	if err := r.Scan(&m.ID, &m.SessionID, &m.ParentID, &m.LatestChildID, &m.Type, &m.Message, &m.TokenCount, &m.Error,
		&citations, &m.ModelDisplayName, &processing, &sent); err != nil {
		return nil, err
	}
	if citations.Valid {
		var rows [][3]json.RawMessage
		if err := json.Unmarshal([]byte(citations.String), &rows); err != nil {
			return nil, fmt.Errorf("chat message %d citations: %w", m.ID, err)
		}
		for _, r := range rows {
			var c quarry.ChatCitation
			if err := errors.Join(json.Unmarshal(r[0], &c.Number), json.Unmarshal(r[1], &c.DocumentID), json.Unmarshal(r[2], &c.PairID)); err != nil {
				return nil, fmt.Errorf("chat message %d citations: %w", m.ID, err)
			}
			m.Citations = append(m.Citations, c)
		}
	}
	if processing.Valid {
		v := float64(processing.Int64) / 1e6
		m.ProcessingSeconds = &v
	}
	m.SentAt = quarry.TimeFromMicros(sent)
	return &m, nil
}

// chatMessages reads the messages of session id, with their calls of
// tools, the documents c may read now and the latest feedback.
func (db *DB) chatMessages(ctx context.Context, q querier, c *quarry.Caller, id string) ([]*quarry.ChatMessage, error) {
	msgs, err := queryAll(ctx, q, scanChatMessage, `SELECT `+chatMessageColumns+` FROM chat_messages m WHERE m.session_id = $1
		ORDER BY CASE WHEN m.parent_id IS NULL THEN 0 ELSE 1 END, m.parent_id, m.id`, id)
	if err != nil || len(msgs) == 0 {
		return msgs, err
	}
	byID := make(map[int64]*quarry.ChatMessage, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
	}
	// The calls of tools, in order.
	type call struct {
		id  int64
		msg int64
		quarry.ChatToolCall
	}
	calls, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) (*call, error) {
		var k call
		var args string
		if err := r.Scan(&k.id, &k.msg, &k.TurnNumber, &k.TabIndex, &k.ToolID, &k.CallID, &k.Name, &args, &k.Response); err != nil {
			return nil, err
		}
		k.Arguments = json.RawMessage(args)
		return &k, nil
	}, `SELECT t.id, t.message_id, t.turn_number, t.tab_index, t.tool_id, t.call_id, t.name, t.arguments, t.response
		FROM chat_tool_calls t JOIN chat_messages m ON m.id = t.message_id WHERE m.session_id = $1 ORDER BY t.id`, id)
	if err != nil {
		return nil, err
	}
	callAt := map[int64]*call{}
	for _, k := range calls {
		callAt[k.id] = k
	}
	// The documents c may read now: search's rule on each copy.
	args := []any{id}
	type docRow struct {
		msg  int64
		call sql.NullInt64
		doc  quarry.ChatDocument
	}
	docs, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) (*docRow, error) {
		var (
			d    docRow
			body string
		)
		if err := r.Scan(&d.doc.ID, &d.msg, &d.call, &body); err != nil {
			return nil, err
		}
		var err error
		d.doc.SearchHit, err = decodeChatDoc(body)
		return &d, err
	}, `SELECT d.id, d.message_id, d.tool_call_id, d.doc FROM chat_documents d JOIN chat_messages m ON m.id = d.message_id
		WHERE m.session_id = $1 AND `+searchRights(c, "d", &args)+` ORDER BY d.id`, args...)
	if err != nil {
		return nil, err
	}
	type copyKey struct {
		pair int64
		doc  string
	}
	seen := map[int64]map[copyKey]bool{}
	for _, d := range docs {
		m := byID[d.msg]
		if m == nil {
			continue
		}
		if d.call.Valid {
			if k := callAt[d.call.Int64]; k != nil {
				k.Documents = append(k.Documents, d.doc)
			}
		}
		key := copyKey{d.doc.Pair.ID, d.doc.DocumentID}
		if seen[m.ID] == nil {
			seen[m.ID] = map[copyKey]bool{}
		}
		if !seen[m.ID][key] {
			seen[m.ID][key] = true
			m.Documents = append(m.Documents, d.doc)
		}
	}
	for _, k := range calls {
		if m := byID[k.msg]; m != nil {
			m.ToolCalls = append(m.ToolCalls, k.ChatToolCall)
		}
	}
	for _, m := range msgs {
		m.Citations = slices.DeleteFunc(m.Citations, func(c quarry.ChatCitation) bool {
			return !seen[m.ID][copyKey{c.PairID, c.DocumentID}]
		})
	}
	// The latest feedback of each answer.
	err = eachFeedback(ctx, q, id, func(msg int64, positive *bool) {
		if m := byID[msg]; m != nil {
			m.Feedback = positive
		}
	})
	return msgs, err
}

// eachFeedback calls fn with the latest feedback on each message of
// session id that has any.
func eachFeedback(ctx context.Context, q querier, id string, fn func(msg int64, positive *bool)) error {
	rows, err := q.QueryContext(ctx, `SELECT f.message_id, f.is_positive FROM chat_feedback f JOIN chat_messages m ON m.id = f.message_id
		WHERE m.session_id = $1 ORDER BY f.id`, id)
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			msg int64
			pos sql.NullBool
		)
		if err := rows.Scan(&msg, &pos); err != nil {
			rows.Close()
			return err
		}
		var p *bool
		if pos.Valid {
			p = &pos.Bool
		}
		fn(msg, p)
	}
	return closeRows(rows)
}

// chatDoc is how a document of an answer is kept (chat_documents.doc).
type chatDoc struct {
	ChunkInd           int            `json:"chunk_ind"`
	PairName           string         `json:"cc_pair_name"`
	PairAccessType     string         `json:"cc_pair_access_type"`
	SemanticIdentifier string         `json:"semantic_identifier"`
	Link               *string        `json:"link"`
	Blurb              string         `json:"blurb"`
	Source             string         `json:"source_type"`
	Metadata           map[string]any `json:"metadata"`
	Score              float64        `json:"score"`
	MatchHighlights    []string       `json:"match_highlights"`
	UpdatedAt          *int64         `json:"updated_at"`
	PrimaryOwners      []string       `json:"primary_owners"`
	SecondaryOwners    []string       `json:"secondary_owners"`
	DocumentID         string         `json:"document_id"`
	PairID             int64          `json:"cc_pair_id"`
}

func encodeChatDoc(h *quarry.SearchHit) string {
	d := chatDoc{ChunkInd: h.ChunkNo, PairName: h.Pair.Name, PairAccessType: string(h.Pair.AccessType), SemanticIdentifier: h.SemanticIdentifier,
		Link: h.Link, Blurb: h.Blurb, Source: string(h.Source), Metadata: h.Metadata, Score: h.Score, MatchHighlights: h.MatchHighlights,
		PrimaryOwners: h.PrimaryOwners, SecondaryOwners: h.SecondaryOwners, DocumentID: h.DocumentID, PairID: h.Pair.ID}
	if h.UpdatedAt != nil {
		v := h.UpdatedAt.Micros()
		d.UpdatedAt = &v
	}
	return jsonText(d)
}

func decodeChatDoc(s string) (quarry.SearchHit, error) {
	var d chatDoc
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return quarry.SearchHit{}, fmt.Errorf("chat document: %w", err)
	}
	h := quarry.SearchHit{DocumentID: d.DocumentID, Pair: quarry.PairRef{ID: d.PairID, Name: d.PairName, AccessType: quarry.AccessType(d.PairAccessType)},
		ChunkNo: d.ChunkInd, SemanticIdentifier: d.SemanticIdentifier, Link: d.Link, Blurb: d.Blurb, Source: quarry.DocumentSource(d.Source),
		Metadata: d.Metadata, Score: d.Score, MatchHighlights: d.MatchHighlights, PrimaryOwners: d.PrimaryOwners, SecondaryOwners: d.SecondaryOwners}
	if d.UpdatedAt != nil {
		t := quarry.TimeFromMicros(*d.UpdatedAt)
		h.UpdatedAt = &t
	}
	return h, nil
}

// ChatSessions returns c's sessions that are not deleted, most recently
// changed first, changed before before (nil: any time), at most limit of
// them. Unless failed, a session over quarry.ChatFailedAfter old that
// has no question (Onyx's failed chat) is left out.
func (db *DB) ChatSessions(ctx context.Context, c *quarry.Caller, before *quarry.Time, limit int, failed bool) ([]*quarry.ChatSession, error) {
	args := []any{c.ID, limit}
	where := ""
	if before != nil {
		args = append(args, before.Micros())
		where += fmt.Sprintf(" AND updated_at < $%d", len(args))
	}
	if !failed {
		args = append(args, db.now().Add(-quarry.ChatFailedAfter).UnixMicro())
		where += fmt.Sprintf(` AND (created_at >= $%d OR EXISTS (SELECT 1 FROM chat_messages m WHERE m.session_id = chat_sessions.id AND m.message_type <> 'system'))`, len(args))
	}
	out, err := queryAll(ctx, db.read, scanChatSession, `SELECT `+chatSessionColumns+chatSessionFrom+`
		WHERE user_id = $1 AND NOT deleted`+where+` ORDER BY updated_at DESC, id LIMIT $2`, args...)
	return out, mapError(err)
}

// UpdateChatSession changes c's session id as u says, and returns it.
func (db *DB) UpdateChatSession(ctx context.Context, c *quarry.Caller, id string, u quarry.ChatSessionUpdate) (*quarry.ChatSession, error) {
	var out *quarry.ChatSession
	err := db.update(ctx, func(tx *Tx) error {
		s, err := chatSession(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckOwnChatSession(s); err != nil {
			return err
		}
		if u.AutoName {
			msgs, err := queryAll(ctx, tx, scanChatMessage, `SELECT `+chatMessageColumns+` FROM chat_messages m WHERE m.session_id = $1`, id)
			if err != nil {
				return err
			}
			_, mainline := quarry.ChatMainline(msgs)
			name := quarry.ChatSessionName(mainline)
			u.Description = &name
		}
		var fields []string
		if u.Description != nil && !quarry.PtrEqual(u.Description, s.Description) {
			fields = append(fields, "description")
		}
		if u.Sharing != nil && *u.Sharing != s.Sharing {
			fields = append(fields, "shared_status")
		}
		description, sharing := s.Description, s.Sharing
		if u.Description != nil {
			description = u.Description
		}
		if u.Sharing != nil {
			sharing = *u.Sharing
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chat_sessions SET description = $2, shared_status = $3, updated_at = $4 WHERE id = $1`,
			id, description, sharing, tx.now.Micros()); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "chat_session.update", "chat_session", id, fields); err != nil {
			return err
		}
		out, err = chatSession(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteChatSession deletes c's session id: with hard, its rows and its
// messages'; otherwise it is marked deleted (Onyx's soft delete), kept
// for c to read when asking for it. A deleted session cannot be deleted
// again (404).
func (db *DB) DeleteChatSession(ctx context.Context, c *quarry.Caller, id string, hard bool) error {
	return db.update(ctx, func(tx *Tx) error {
		s, err := chatSession(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckOwnChatSession(s); err != nil {
			return err
		}
		if hard {
			_, err = tx.ExecContext(ctx, `DELETE FROM chat_sessions WHERE id = $1`, id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE chat_sessions SET deleted = TRUE, updated_at = $2 WHERE id = $1`, id, tx.now.Micros())
		}
		if err != nil {
			return err
		}
		return tx.audit(ctx, c, "chat_session.delete", "chat_session", id, deletionFields(hard))
	})
}

// deletionFields are the fields of the audit entry of a deletion: none
// for a hard one, deleted for a soft one.
func deletionFields(hard bool) []string {
	if hard {
		return nil
	}
	return []string{"deleted"}
}

// DeleteChatSessions deletes every session of c's, as DeleteChatSession
// does one (a soft deletion leaves those already deleted as they are).
func (db *DB) DeleteChatSessions(ctx context.Context, c *quarry.Caller, hard bool) error {
	return db.update(ctx, func(tx *Tx) error {
		var err error
		if hard {
			_, err = tx.ExecContext(ctx, `DELETE FROM chat_sessions WHERE user_id = $1`, c.ID)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE chat_sessions SET deleted = TRUE, updated_at = $2 WHERE user_id = $1 AND NOT deleted`, c.ID, tx.now.Micros())
		}
		if err != nil {
			return err
		}
		return tx.audit(ctx, c, "chat_session.delete_all", "chat_session", c.ID, deletionFields(hard))
	})
}

// StopChatSession asks the answer running in c's session id to stop:
// whichever replica runs it reads the request (ChatStopRequested).
func (db *DB) StopChatSession(ctx context.Context, c *quarry.Caller, id string) error {
	return db.update(ctx, func(tx *Tx) error {
		s, err := chatSession(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckOwnChatSession(s); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE chat_sessions SET stop_requested = TRUE WHERE id = $1`, id)
		return err
	})
}

// ChatStopRequested reports whether the answer running in session id has
// been asked to stop since it began.
func (db *DB) ChatStopRequested(ctx context.Context, id string) (bool, error) {
	var stop bool
	err := db.read.QueryRowContext(ctx, `SELECT stop_requested FROM chat_sessions WHERE id = $1`, id).Scan(&stop)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil // Deleted while answering: nobody waits for the answer.
	}
	return stop, mapError(err)
}

// StartChatTurn stores a question of c's and reserves its answer, in one
// transaction committed before the model is asked: it makes the session
// when in.Session is nil (from in.NewSession), places the message
// (quarry.PlaceChatMessage), stores it (unless an earlier question is
// asked again), reserves the answer (quarry.ChatReservedText) as the
// question's latest child, and clears the session's stop. In a session
// that exists, it costs PostgreSQL two round trips (a pipe).
func (db *DB) StartChatTurn(ctx context.Context, c *quarry.Caller, in quarry.ChatTurnInput) (*quarry.ChatTurn, error) {
	t := &quarry.ChatTurn{}
	if in.SessionID == "" {
		err := db.update(ctx, func(tx *Tx) error {
			var err error
			if t.Session, err = tx.createChatSession(ctx, c, in.NewSession); err != nil {
				return err
			}
			t.NewSession = true
			return tx.pipe(ctx).placeChatTurn(t, in, nil)
		})
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	err := db.piped(ctx, func(p *pipe) error {
		// The update comes first: on PostgreSQL it holds the session's
		// row, so that two questions of a session are placed one after
		// the other.
		p.query(`UPDATE chat_sessions SET stop_requested = FALSE, updated_at = $2 WHERE id = $1 RETURNING `+chatSessionColumns,
			[]any{in.SessionID, p.now.Micros()}, func(row scanner) (err error) {
				t.Session, err = scanChatSession(row)
				return err
			})
		var msgs []*quarry.ChatMessage
		p.query(`SELECT `+chatMessageColumns+` FROM chat_messages m WHERE m.session_id = $1`, []any{in.SessionID}, func(row scanner) error {
			m, err := scanChatMessage(row)
			msgs = append(msgs, m)
			return err
		})
		if err := p.send(); err != nil {
			return err
		}
		if t.Session == nil {
			return quarry.ErrChatSessionNotFound
		}
		if err := c.CheckOwnChatSession(t.Session); err != nil {
			return err
		}
		return p.placeChatTurn(t, in, msgs)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// placeChatTurn places turn t's question among msgs, the messages of its
// session, and stores the question and the answer's reservation.
func (p *pipe) placeChatTurn(t *quarry.ChatTurn, in quarry.ChatTurnInput, msgs []*quarry.ChatMessage) error {
	root, mainline := quarry.ChatMainline(msgs)
	if root == nil {
		root = p.addChatMessage(t.Session.ID, nil, quarry.ChatSystem, "", nil)
	}
	place, err := quarry.PlaceChatMessage(root, mainline, in.ParentID)
	if err != nil {
		return err
	}
	if err := quarry.CheckChatMessage(in.Message, place); err != nil {
		return err
	}
	t.History, t.Question = place.History, place.Question
	if t.Question == nil {
		t.Question = p.addChatMessage(t.Session.ID, place.Parent, quarry.ChatUser, in.Message, nil)
		t.History = append(slices.Clip(t.History), t.Question)
	}
	answer := p.addChatMessage(t.Session.ID, t.Question, quarry.ChatAssistant, quarry.ChatReservedText, in.ModelDisplayName)
	if err := p.send(); err != nil {
		return err
	}
	t.AnswerID = answer.ID
	return nil
}

// addChatMessage queues a message of session, which becomes the latest
// child of parent (a trigger of migration 00022 sets the parent's
// latest_child_id: one statement a message, not two). Its ID is set at
// the pipe's send. A parent queued in the same send (ID 0 until then) is
// the session's newest message: the transaction that places a message
// holds its session's row, so no other inserts into the session
// meanwhile. (Not the connection's last insert: PostgreSQL draws the
// new row's own id before it reads lastval().)
func (p *pipe) addChatMessage(session string, parent *quarry.ChatMessage, typ quarry.ChatMessageType, text string, model *string) *quarry.ChatMessage {
	m := &quarry.ChatMessage{SessionID: session, Type: typ, Message: text, TokenCount: quarry.EstimateTokens(text),
		ModelDisplayName: model, SentAt: p.now}
	parentSQL, args := `$2`, []any{session, nil, typ, text, m.TokenCount, model, p.now.Micros()}
	if parent != nil && parent.ID != 0 {
		args[1] = parent.ID
	} else if parent != nil {
		parentSQL = `COALESCE($2, (SELECT MAX(id) FROM chat_messages WHERE session_id = $1))`
	}
	p.query(`INSERT INTO chat_messages (session_id, parent_id, message_type, message, token_count, model_display_name, sent_at)
		VALUES ($1, `+parentSQL+`, $3, $4, $5, $6, $7) RETURNING id`, args, func(row scanner) error {
		if parent != nil {
			id := parent.ID // Set by now: its statement came first.
			m.ParentID = &id
		}
		return row.Scan(&m.ID)
	})
	return m
}

// FinishChatTurn writes the answer a reserved for, with its calls of
// tools and their documents, whatever became of its session's person's
// request: it is written even when the request's context has ended. It
// costs PostgreSQL two round trips (a pipe), or one without documents.
func (db *DB) FinishChatTurn(ctx context.Context, a *quarry.ChatAnswer) error {
	ctx = context.WithoutCancel(ctx)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return db.piped(ctx, func(p *pipe) error {
		// The session's row is not written: its updated_at moved when the
		// question was asked (StartChatTurn), and a question asked while
		// this answer is written, which holds that row, waits for the
		// answer's own row on PostgreSQL without this transaction waiting
		// for anything it holds.
		var citations *string
		if len(a.Citations) > 0 {
			rows := make([][3]any, len(a.Citations))
			for i, c := range a.Citations {
				rows[i] = [3]any{c.Number, c.DocumentID, c.PairID}
			}
			s := jsonText(rows)
			citations = &s
		}
		var processing *int64
		if a.ProcessingSeconds != nil {
			v := int64(*a.ProcessingSeconds * 1e6)
			processing = &v
		}
		p.exec(`UPDATE chat_messages SET message = $3, token_count = $4, error = $5, citations = $6, processing_micros = $7
			WHERE id = $1 AND session_id = $2`, []any{a.MessageID, a.SessionID, a.Text, quarry.EstimateTokens(a.Text), a.Error, citations, processing},
			func(changed int64) error {
				if changed == 0 {
					return quarry.ErrChatSessionNotFound // Deleted while answering.
				}
				return nil
			})
		calls := make([]int64, len(a.ToolCalls))
		documents := false
		for i, k := range a.ToolCalls {
			args := string(k.Arguments)
			if !json.Valid(k.Arguments) {
				args = jsonText(string(k.Arguments))
			}
			p.query(`INSERT INTO chat_tool_calls (message_id, turn_number, tab_index, tool_id, call_id, name, arguments, response)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, []any{a.MessageID, k.TurnNumber, k.TabIndex, k.ToolID, k.CallID, k.Name,
				args, k.Response}, func(row scanner) error { return row.Scan(&calls[i]) })
			documents = documents || len(k.Documents) > 0
		}
		if !documents {
			return nil
		}
		if err := p.send(); err != nil {
			return err
		}
		for i, k := range a.ToolCalls {
			p.insertChatDocuments(a.MessageID, calls[i], k.Documents)
		}
		return nil
	})
}

// chatDocumentsPerInsert bounds the rows of one INSERT of
// insertChatDocuments: 5 parameters a row, far below both databases'
// limits (32,766 on SQLite, 65,535 on PostgreSQL).
const chatDocumentsPerInsert = 500

// insertChatDocuments queues the documents a call of a tool gave, a few
// hundred rows a statement.
func (p *pipe) insertChatDocuments(message, call int64, docs []quarry.ChatDocument) {
	for len(docs) > 0 {
		n := min(len(docs), chatDocumentsPerInsert)
		var q strings.Builder
		q.WriteString(`INSERT INTO chat_documents (message_id, tool_call_id, cc_pair_id, document_id, doc) VALUES `)
		args := make([]any, 0, 5*n)
		for i := range n {
			h := &docs[i].SearchHit
			if i > 0 {
				q.WriteString(", ")
			}
			p := len(args)
			fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d)", p+1, p+2, p+3, p+4, p+5)
			args = append(args, message, call, h.Pair.ID, h.DocumentID, encodeChatDoc(h))
		}
		p.exec(q.String(), args, nil)
		docs = docs[n:]
	}
}

// chatMessageOf reads message id of a session of c's (or
// ErrChatMessageNotFound).
func chatMessageOf(ctx context.Context, q querier, c *quarry.Caller, id int64) (*quarry.ChatMessage, error) {
	m, err := scanChatMessage(q.QueryRowContext(ctx, `SELECT `+chatMessageColumns+` FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id
		WHERE m.id = $1 AND s.user_id = $2 AND NOT s.deleted`, id, c.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.ErrChatMessageNotFound
	}
	return m, err
}

// CreateChatFeedback records c's feedback on an answer of theirs.
func (db *DB) CreateChatFeedback(ctx context.Context, c *quarry.Caller, f quarry.ChatFeedback) error {
	return db.update(ctx, func(tx *Tx) error {
		m, err := chatMessageOf(ctx, tx, c, f.MessageID)
		if err != nil {
			return err
		}
		if err := quarry.CheckFeedbackTarget(m, false); err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO chat_feedback (message_id, is_positive, feedback_text, predefined_feedback, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, m.ID, f.IsPositive, f.Text, f.PredefinedFeedback, tx.now.Micros()).Scan(&id); err != nil {
			return err
		}
		var fields []string
		for _, f := range []struct {
			name string
			set  bool
		}{{"is_positive", f.IsPositive != nil}, {"feedback_text", f.Text != nil}, {"predefined_feedback", f.PredefinedFeedback != nil}} {
			if f.set {
				fields = append(fields, f.name)
			}
		}
		return tx.audit(ctx, c, "chat_feedback.create", "chat_message", m.ID, fields)
	})
}

// RemoveChatFeedback removes every feedback on c's answer id.
func (db *DB) RemoveChatFeedback(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		m, err := chatMessageOf(ctx, tx, c, id)
		if err != nil {
			return err
		}
		if err := quarry.CheckFeedbackTarget(m, true); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_feedback WHERE message_id = $1`, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "chat_feedback.delete", "chat_message", id, nil)
	})
}

// DefaultAssistant returns how the default assistant (persona 0) answers,
// and whether it offers the search (the built-in search tool is among its
// tools, and enabled), kept between requests while it holds (see
// readCache).
func (db *DB) DefaultAssistant(ctx context.Context) (*quarry.DefaultAssistant, error) {
	return cached(ctx, db, (*readCache).getAssistant,
		func(q querier) (*quarry.DefaultAssistant, error) { return assistant(ctx, q, quarry.DefaultPersonaID) },
		(*readCache).putAssistant)
}

// Assistant returns how assistant p answers in chat: the default one's
// kept copy (DefaultAssistant), another's read at once.
func (db *DB) Assistant(ctx context.Context, p *quarry.Persona) (*quarry.DefaultAssistant, error) {
	if p.ID == quarry.DefaultPersonaID {
		return db.DefaultAssistant(ctx)
	}
	return assistant(ctx, db.read, p.ID)
}

// assistant returns how assistant id answers in chat.
func assistant(ctx context.Context, q querier, id int64) (*quarry.DefaultAssistant, error) {
	p, err := persona(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, quarry.ErrPersonaNotFound(id)
	}
	a := &quarry.DefaultAssistant{ToolIDs: []int64{}, SystemPrompt: p.SystemPrompt, PersonaID: id, Instructions: p.Prompt(),
		DocumentSetIDs: p.DocumentSetIDs, ModelConfigurationID: p.ModelConfigurationID}
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MIN(id), 0) FROM tools WHERE in_code_tool_id = $1`, quarry.SearchToolID).Scan(&a.SearchToolID); err != nil {
		return nil, mapError(err)
	}
	rows, err := q.QueryContext(ctx, `SELECT t.id, t.in_code_tool_id, t.enabled FROM persona_tools a JOIN tools t ON t.id = a.tool_id
		WHERE a.persona_id = $1 ORDER BY t.id`, id)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var (
			id      int64
			inCode  sql.NullString
			enabled bool
		)
		if err := rows.Scan(&id, &inCode, &enabled); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		a.ToolIDs = append(a.ToolIDs, id)
		if inCode.String == quarry.SearchToolID && enabled {
			a.Search = true
		}
	}
	return a, closeRows(rows)
}

// UpdateDefaultAssistant changes the default assistant as u says: each
// tool must be one it may offer (quarry.CheckAssistantTool, in the order
// given).
func (db *DB) UpdateDefaultAssistant(ctx context.Context, c *quarry.Caller, u quarry.DefaultAssistantUpdate) (*quarry.DefaultAssistant, error) {
	var out *quarry.DefaultAssistant
	err := db.update(ctx, func(tx *Tx) error {
		for _, id := range u.ToolIDs {
			t, err := db.tool(ctx, tx, id)
			if quarry.ErrorCode(err) == quarry.ENOTFOUND {
				t, err = nil, nil
			}
			if err != nil {
				return err
			}
			if err := quarry.CheckAssistantTool(id, t); err != nil {
				return err
			}
		}
		before, err := assistant(ctx, tx, quarry.DefaultPersonaID)
		if err != nil {
			return err
		}
		after := u.Apply(*before)
		var fields []string
		if u.ToolIDs != nil {
			if !slices.Equal(before.ToolIDs, after.ToolIDs) {
				fields = append(fields, "tool_ids")
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM persona_tools WHERE persona_id = $1`, quarry.DefaultPersonaID); err != nil {
				return err
			}
			for _, id := range after.ToolIDs {
				if _, err := tx.ExecContext(ctx, `INSERT INTO persona_tools (persona_id, tool_id) VALUES ($1, $2)`, quarry.DefaultPersonaID, id); err != nil {
					return err
				}
			}
		}
		if !quarry.PtrEqual(before.SystemPrompt, after.SystemPrompt) {
			fields = append(fields, "system_prompt")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET system_prompt = $1, updated_at = $2 WHERE id = $3`, after.SystemPrompt, tx.now.Micros(),
			quarry.DefaultPersonaID); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "default_assistant.update", "default_assistant", 0, fields); err != nil {
			return err
		}
		out, err = assistant(ctx, tx, quarry.DefaultPersonaID)
		return err
	})
	return out, err
}
