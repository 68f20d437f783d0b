package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/llmtest"
	"github.com/quarryhq/quarry/store"
)

// TestChatServerKilled (issue 41, item 5): quarry serve killed with
// SIGKILL while the model streams an answer loses no earlier message. A
// session holds a first question and its answer; a second answer is being
// written when the server dies. After a restart on the same database the
// session reads back whole: both questions, the first answer as it was,
// and the second as Onyx leaves an answer cut short (its reserved text,
// which asks to regenerate); asking again then answers.
func TestChatServerKilled(t *testing.T) {
	indexingDatabases(t, func(t *testing.T, url string) {
		vars := map[string]string{
			"QUARRY_DATABASE_URL":      url,
			"QUARRY_ENCRYPTION_KEY":    store.NewKey(),
			"QUARRY_INPROCESS_WORKER":  "false",
			"QUARRY_TOOL_EGRESS_ALLOW": "127.0.0.1",
		}
		c := newProcClient(procAPIKey(t, vars))
		s := startServe(t, vars)
		model := llmtest.New(t)
		long := []string{"The second answer "}
		for range 600 {
			long = append(long, "goes on ")
		}
		model.Push(llmtest.Text("The first ", "answer."), llmtest.Script{Text: long, Delay: 50 * time.Millisecond})

		call := func(method, path string, body any, out any) {
			t.Helper()
			r, err := c.do(s.base, method, path, body)
			if err != nil || r.status != http.StatusOK {
				t.Fatalf("%s %s: %v %v %s", method, path, err, r.status, r.body)
			}
			if out != nil {
				if err := json.Unmarshal(r.body, out); err != nil {
					t.Fatal(err)
				}
			}
		}
		var provider struct {
			ID int64 `json:"id"`
		}
		call("PUT", "/admin/llm/provider?is_creation=true", map[string]any{"name": "local", "provider": "openai_compatible",
			"api_key": "sk-kill-0123456789abcdefghij", "api_base": model.BaseURL(),
			"model_configurations": []any{map[string]any{"name": "llama", "is_visible": true}}}, &provider)
		call("POST", "/admin/llm/default", map[string]any{"provider_id": provider.ID, "model_name": "llama"}, nil)
		var session struct {
			ID string `json:"chat_session_id"`
		}
		call("POST", "/chat/create-chat-session", map[string]any{"persona_id": 0}, &session)
		call("POST", "/chat/send-chat-message", map[string]any{"chat_session_id": session.ID, "message": "A first question", "stream": false}, nil)

		// The second answer streams; the server dies after its first words.
		body, _ := json.Marshal(map[string]any{"chat_session_id": session.ID, "message": "A second question", "stream": true})
		req, _ := http.NewRequest("POST", s.base+"/chat/send-chat-message", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := c.http.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("the second question: %v %v", err, res)
		}
		lines := bufio.NewScanner(res.Body)
		for lines.Scan() && !strings.Contains(lines.Text(), "The second answer") {
		}
		s.kill()
		res.Body.Close()

		s = startServe(t, vars)
		var read struct {
			Messages []struct {
				ID      int64  `json:"message_id"`
				Type    string `json:"message_type"`
				Message string `json:"message"`
			} `json:"messages"`
		}
		call("GET", "/chat/get-chat-session/"+session.ID, nil, &read)
		var got []string
		for _, m := range read.Messages {
			got = append(got, m.Type+": "+m.Message)
		}
		want := []string{"user: A first question", "assistant: The first answer.", "user: A second question", "assistant: " + quarry.ChatReservedText}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("the session after the kill:\n%q\nwant\n%q", got, want)
		}

		// Asked again, the cut answer is answered.
		model.Push(llmtest.Text("Answered ", "again."))
		var again struct {
			Answer string `json:"answer"`
		}
		call("POST", "/chat/send-chat-message", map[string]any{"chat_session_id": session.ID, "message": "",
			"parent_message_id": read.Messages[2].ID, "stream": false}, &again)
		if again.Answer != "Answered again." {
			t.Errorf("asked again after the kill: %+v", again)
		}
	})
}
