package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestChatSurvivesSIGKILL asks a quarry serve process a question whose
// answer the model (the scripted server) leaves hanging, kills the process
// with SIGKILL mid-answer, restarts it and reads the session back: the
// earlier question and answer are whole, the question asked is kept, its
// answer says it was cut (Onyx's reserved text), and the next question is
// answered. On SQLite and, with QUARRY_TEST_POSTGRES_URL, PostgreSQL.
func TestChatSurvivesSIGKILL(t *testing.T) {
	quarryBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		chatCrashTest(t, "sqlite:"+filepath.Join(t.TempDir(), "quarry.db"), map[string]string{})
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			t.Skip(storetest.PostgresEnv + " is not set")
		}
		chatCrashTest(t, storetest.URL(t), map[string]string{"QUARRY_ENCRYPTION_KEY": store.NewKey()})
	})
}

func chatCrashTest(t *testing.T, url string, vars map[string]string) {
	model := llmtest.New(t)
	vars["QUARRY_DATABASE_URL"] = url
	vars["QUARRY_LOG_LEVEL"] = "warn"
	vars["QUARRY_INDEXING"] = "false"
	vars["QUARRY_TOOL_EGRESS_ALLOW"] = "127.0.0.1"
	c := newProcClient(procAPIKey(t, vars))
	srv := startServe(t, vars)
	var p struct {
		ID int64 `json:"id"`
	}
	c.must(t, srv.base, "PUT", "/admin/llm/provider?is_creation=true", map[string]any{"name": "local", "provider": "openai_compatible",
		"api_base": model.BaseURL(), "model_configurations": []any{map[string]any{"name": "llama", "is_visible": true}}}, &p)
	c.must(t, srv.base, "POST", "/admin/llm/default", map[string]any{"provider_id": p.ID, "model_name": "llama"}, nil)
	var s struct {
		ID string `json:"chat_session_id"`
	}
	c.must(t, srv.base, "POST", "/chat/create-chat-session", map[string]any{"persona_id": 0}, &s)
	// ask asks question and reads the answer's lines, up to one holding
	// until if given; the answer's response stays open until close is
	// called (closing it is the person going away, which stops the answer).
	ask := func(base, question string, until string) (lines []string, close func()) {
		body, _ := json.Marshal(map[string]any{"message": question, "chat_session_id": s.ID})
		req, _ := http.NewRequest("POST", base+"/chat/send-chat-message", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 {
			res.Body.Close()
			t.Fatalf("send-chat-message: %d", res.StatusCode)
		}
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if until != "" && strings.Contains(sc.Text(), until) {
				break
			}
		}
		return lines, func() { res.Body.Close() }
	}
	model.Push(llmtest.Text("First ", "answer."))
	lines, done := ask(srv.base, "q1", "")
	done()
	if got := strings.Join(lines, "\n"); !strings.Contains(got, `"stop_reason": null`) {
		t.Fatalf("first answer: %s", got)
	}
	model.Push(llmtest.Script{Text: []string{"Partial"}, Fault: llmtest.Stall, After: 2})
	// Killed in the middle of the answer, while its person still reads it.
	_, done = ask(srv.base, "q2", `"content": "Partial"`)
	srv.kill()
	done()

	srv = startServe(t, vars)
	type message struct {
		Message     string `json:"message"`
		MessageType string `json:"message_type"`
	}
	read := func() []message {
		var out struct {
			Messages []message `json:"messages"`
		}
		c.must(t, srv.base, "GET", "/chat/get-chat-session/"+s.ID, nil, &out)
		return out.Messages
	}
	want := []message{{"", "system"}, {"q1", "user"}, {"First answer.", "assistant"}, {"q2", "user"}, {quarry.ChatReservedText, "assistant"}}
	if got := read(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after SIGKILL:\n got %v\nwant %v", got, want)
	}
	model.Push(llmtest.Text("Fine."))
	_, done = ask(srv.base, "q3", "")
	done()
	want = append(want, message{"q3", "user"}, message{"Fine.", "assistant"})
	deadline := time.Now().Add(5 * time.Second)
	for got := read(); fmt.Sprint(got) != fmt.Sprint(want); got = read() {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart:\n got %v\nwant %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
