package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestPanicIsRecovered registers, in this test only, a route whose handler
// panics, on a real server's mux, behind the server's own middleware. The
// caller gets the contract's 500 body with its request id, the process
// lives on (the server keeps serving), and the log has the panic value,
// its stack and the request line, all under that request id.
func TestPanicIsRecovered(t *testing.T) {
	var log syncbuf.Buffer
	s := NewServer(Config{Version: "test"}, storetest.Open(t), slog.New(slog.NewJSONHandler(&log, nil)))
	s.mux.HandleFunc("GET /test/panic", func(w http.ResponseWriter, r *http.Request) {
		panic("test panic: kaboom")
	})
	s.mux.HandleFunc("GET /test/panic-after-write", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "partial")
		panic("test panic: after the header")
	})
	srv := httptest.NewServer(s)
	defer srv.Close()

	get := func(path, id string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("X-Request-ID", id)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := get("/test/panic", "panic-probe")
	if res.StatusCode != 500 || body != `{"detail":"Internal server error"}` {
		t.Errorf("GET /test/panic: %d %s, want 500 {\"detail\":\"Internal server error\"}", res.StatusCode, body)
	}
	if got := res.Header.Get("X-Request-ID"); got != "panic-probe" {
		t.Errorf("X-Request-ID = %q", got)
	}
	if strings.Contains(body, "kaboom") {
		t.Error("the response leaks the panic value")
	}
	// A panic after the response started cannot change its status: the
	// response stays as it was, and the panic is still logged.
	res, body = get("/test/panic-after-write", "panic-late-probe")
	if res.StatusCode != http.StatusAccepted || body != "partial" {
		t.Errorf("GET /test/panic-after-write: %d %q", res.StatusCode, body)
	}
	// The server goes on serving.
	if res, body := get("/health", "after-panic"); res.StatusCode != 200 {
		t.Errorf("GET /health after a panic: %d %s", res.StatusCode, body)
	}

	type entry struct {
		Msg       string `json:"msg"`
		Level     string `json:"level"`
		RequestID string `json:"request_id"`
		Panic     string `json:"panic"`
		Stack     string `json:"stack"`
		Route     string `json:"route"`
		Status    int    `json:"status"`
	}
	var entries []entry
	for line := range strings.Lines(log.String()) {
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	for _, want := range []struct {
		id, panic, route string
		status           int
	}{
		{"panic-probe", "test panic: kaboom", "GET /test/panic", 500},
		{"panic-late-probe", "test panic: after the header", "GET /test/panic-after-write", 202},
	} {
		var logged, requested bool
		for _, e := range entries {
			switch {
			case e.RequestID != want.id:
			case e.Msg == "panic":
				logged = true
				if e.Level != "ERROR" || e.Panic != want.panic || !strings.Contains(e.Stack, "panic_test.go") {
					t.Errorf("%s: panic line %+v lacks the level, value or stack", want.id, e)
				}
			case e.Msg == "request":
				requested = true
				if e.Route != want.route || e.Status != want.status {
					t.Errorf("%s: request line has route %q status %d, want %q %d", want.id, e.Route, e.Status, want.route, want.status)
				}
			}
		}
		if !logged || !requested {
			t.Errorf("%s: panic line logged %v, request line logged %v:\n%s", want.id, logged, requested, log.String())
		}
	}
}
