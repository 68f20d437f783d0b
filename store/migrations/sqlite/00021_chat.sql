-- Chat (issue 41): each person's sessions with the assistant, their
-- messages, the calls of tools and the documents of each answer, feedback
-- on answers, and the default assistant (the tools it offers the model,
-- its instructions). postgres/00021_chat.sql is the same schema.
--
-- A session's messages are a tree (Onyx's): parent_id points up,
-- latest_child_id down to the child the session continues from; the root
-- is an empty system message. An answer is reserved when its question is
-- stored (quarry.ChatReservedText) and written when it ends, or fails
-- (error). citations is a JSON list of [number, document_id, cc_pair_id].
-- A session's stop_requested is the stop of a running answer, which the
-- replica running it reads (so that a stop reaches it wherever it runs);
-- each new answer clears it. A document of an answer keeps what search
-- gave (doc, JSON: quarry.SearchHit without the text) with the copy it is
-- (cc_pair_id, document_id), by which it is shown only to those who may
-- read it.

-- +goose Up
CREATE TABLE chat_sessions (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    persona_id     INTEGER NOT NULL DEFAULT 0,
    description    TEXT,
    shared_status  TEXT NOT NULL DEFAULT 'private' CHECK (shared_status IN ('public', 'private')),
    deleted        BOOLEAN NOT NULL DEFAULT FALSE,
    stop_requested BOOLEAN NOT NULL DEFAULT FALSE,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX chat_sessions_user ON chat_sessions (user_id, updated_at);

CREATE TABLE chat_messages (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id         TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    parent_id          INTEGER REFERENCES chat_messages (id) ON DELETE CASCADE,
    latest_child_id    INTEGER,
    message_type       TEXT NOT NULL CHECK (message_type IN ('system', 'user', 'assistant')),
    message            TEXT NOT NULL,
    token_count        INTEGER NOT NULL,
    error              TEXT,
    citations          TEXT,
    model_display_name TEXT,
    processing_micros  INTEGER,
    sent_at            INTEGER NOT NULL
);
CREATE INDEX chat_messages_session ON chat_messages (session_id);
CREATE INDEX chat_messages_parent ON chat_messages (parent_id);

CREATE TABLE chat_tool_calls (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id  INTEGER NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
    turn_number INTEGER NOT NULL,
    tab_index   INTEGER NOT NULL,
    tool_id     INTEGER NOT NULL,
    call_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    response    TEXT NOT NULL
);
CREATE INDEX chat_tool_calls_message ON chat_tool_calls (message_id);

CREATE TABLE chat_documents (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id   INTEGER NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
    tool_call_id INTEGER REFERENCES chat_tool_calls (id) ON DELETE CASCADE,
    cc_pair_id   INTEGER NOT NULL,
    document_id  TEXT NOT NULL,
    doc          TEXT NOT NULL
);
CREATE INDEX chat_documents_message ON chat_documents (message_id);
CREATE INDEX chat_documents_tool_call ON chat_documents (tool_call_id);

CREATE TABLE chat_feedback (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id          INTEGER NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
    is_positive         BOOLEAN,
    feedback_text       TEXT,
    predefined_feedback TEXT,
    created_at          INTEGER NOT NULL
);
CREATE INDEX chat_feedback_message ON chat_feedback (message_id);

CREATE TABLE default_assistant (
    id            INTEGER PRIMARY KEY CHECK (id = 0),
    system_prompt TEXT,
    version       INTEGER NOT NULL
);
INSERT INTO default_assistant (id, system_prompt, version) VALUES (0, NULL, 1);
CREATE TABLE default_assistant_tools (
    tool_id INTEGER PRIMARY KEY REFERENCES tools (id) ON DELETE CASCADE
);
INSERT INTO default_assistant_tools (tool_id) SELECT id FROM tools WHERE in_code_tool_id = 'SearchTool';

-- +goose Down
DROP TABLE default_assistant_tools;
DROP TABLE default_assistant;
DROP TABLE chat_feedback;
DROP TABLE chat_documents;
DROP TABLE chat_tool_calls;
DROP TABLE chat_messages;
DROP TABLE chat_sessions;
