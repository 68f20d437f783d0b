package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store/storetest"
)

// TestClientWentAway registers, in this test only, a route whose handler
// waits for its request to end and returns the context's error, as any
// handler cut short by a client that hangs up does. The request is logged
// as "client went away" at INFO with status 499, not as a failed request,
// and the metrics count it as a 499, not a 500.
func TestClientWentAway(t *testing.T) {
	var log syncbuf.Buffer
	s := NewServer(Config{Version: "test"}, storetest.Open(t), slog.New(slog.NewJSONHandler(&log, nil)))
	started := make(chan struct{})
	s.mux.HandleFunc("GET /test/wait", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		s.writeError(w, r, r.Context().Err())
	})
	srv := httptest.NewServer(s)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/test/wait", nil)
	req.Header.Set("X-Request-ID", "gone-probe")
	go func() {
		<-started
		cancel()
	}()
	if res, err := srv.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the request was answered %d", res.StatusCode)
	}
	srv.Close() // Waits for the handler, and so for its log lines.

	type entry struct {
		Msg       string `json:"msg"`
		Level     string `json:"level"`
		RequestID string `json:"request_id"`
		Status    int    `json:"status"`
	}
	var got []entry
	for line := range strings.Lines(log.String()) {
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if e.RequestID == "gone-probe" {
			got = append(got, e)
		}
	}
	want := []entry{{"client went away", "INFO", "gone-probe", 0}, {"request", "INFO", "gone-probe", 499}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("log lines of the request %+v, want %+v:\n%s", got, want, log.String())
	}

	rec := httptest.NewRecorder()
	s.metrics.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	counted := `quarry_http_requests_total{method="GET",route="GET /test/wait",status="499"} 1`
	if body := rec.Body.String(); !strings.Contains(body, counted) || strings.Contains(body, `route="GET /test/wait",status="500"`) {
		t.Errorf("metrics lack %s, or count a 500:\n%s", counted, body)
	}
}
