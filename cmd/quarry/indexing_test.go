package main

// Indexing with real parts (issue 32): quarry serve processes that run the
// scheduler, quarry worker processes that run the attempts, Onyx's mock
// connector against a test server that plays Onyx's mock connector server
// (mockConnectorServer), on SQLite and, when QUARRY_TEST_POSTGRES_URL is
// set, PostgreSQL. The serve processes run no worker of their own
// (QUARRY_INPROCESS_WORKER=false): only the quarry worker processes the
// tests start, stop and kill take attempts.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// indexSecret is the value of every pair's credential: no log line of
// serve or of a worker may show it.
const indexSecret = "idx-secret-7d41c09a-credential-value"

// mockConnectorServer plays Onyx's mock connector server
// (backend/tests/integration/mock_services/mock_connector_server/main.py at
// v4.6.1), as outbound/mockserver_test.go does: a test sets what the mock
// connector's steps yield (set), the connector reads it at the start of
// each run (/get-documents, which clears it, unless the script is sticky:
// then every run plays it) and posts the checkpoint of each step
// (/add-checkpoint), which the test reads back (checkpoints). On top of
// Onyx's, it can hold a run's add-checkpoint calls from its holdFrom-th on
// until released, delay each one, and counts runs and overlapping calls. A
// test fixture.
type mockConnectorServer struct {
	*httptest.Server

	mu          sync.Mutex
	yields      []json.RawMessage
	sticky      bool
	checkpoints []json.RawMessage
	runs        int           // /get-documents answered with a script.
	step        int           // add-checkpoint calls of the current run.
	holdFrom    int           // Hold a run's add-checkpoint calls from this one on (1-based); 0: none.
	hold        chan struct{} // Closed to release the held calls.
	heldc       chan struct{} // Receives one value per call held.
	delay       time.Duration // Each add-checkpoint call waits this long.
	inFlight    int           // add-checkpoint calls being answered,
	maxInFlight int           // and the most at once.
}

func newMockConnectorServer(t *testing.T) *mockConnectorServer {
	m := &mockConnectorServer{hold: make(chan struct{}), heldc: make(chan struct{}, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /get-documents", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		yields := m.yields
		if !m.sticky {
			m.yields, m.checkpoints = nil, nil
		}
		if len(yields) > 0 {
			m.runs++
		}
		m.step = 0
		m.mu.Unlock()
		if len(yields) == 0 {
			mockConnectorJSON(w, http.StatusBadRequest, map[string]string{"detail": "No documents or failures configured"})
			return
		}
		mockConnectorJSON(w, http.StatusOK, yields)
	})
	mux.HandleFunc("POST /add-checkpoint", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || !json.Valid(b) {
			mockConnectorJSON(w, http.StatusUnprocessableEntity, map[string]string{"detail": "not JSON"})
			return
		}
		m.mu.Lock()
		m.checkpoints = append(m.checkpoints, json.RawMessage(b))
		m.step++
		held := m.holdFrom > 0 && m.step >= m.holdFrom
		hold, delay := m.hold, m.delay
		m.inFlight++
		m.maxInFlight = max(m.maxInFlight, m.inFlight)
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.inFlight--
			m.mu.Unlock()
		}()
		if held {
			select {
			case m.heldc <- struct{}{}:
			default:
			}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		mockConnectorJSON(w, http.StatusOK, nil)
	})
	m.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		m.release()
		m.Close()
	})
	return m
}

// set replaces the script (Onyx's /set-behavior) and forgets the
// checkpoints received.
func (m *mockConnectorServer) set(yields ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.yields = nil
	for _, y := range yields {
		b, _ := json.Marshal(y)
		m.yields = append(m.yields, b)
	}
	m.checkpoints = nil
}

// holdFromStep holds each run's add-checkpoint calls from the n-th on.
func (m *mockConnectorServer) holdFromStep(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holdFrom = n
}

// release lets the held calls go on, and holds no more.
func (m *mockConnectorServer) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holdFrom > 0 {
		m.holdFrom = 0
		close(m.hold)
		m.hold = make(chan struct{})
	}
}

// waitHeld waits until a call of m is held.
func (w *indexWorld) waitHeld(m *mockConnectorServer, timeout time.Duration) {
	w.t.Helper()
	select {
	case <-m.heldc:
	case <-time.After(timeout):
		w.t.Fatalf("the mock server held no add-checkpoint call in %s\nserve log:\n%s\nworkers:\n%s", timeout,
			w.servers[0].stderr.String(), w.workerLogs())
	}
}

// received returns the checkpoints posted since the script was set.
func (m *mockConnectorServer) received() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, cp := range m.checkpoints {
		out = append(out, compactJSON(cp))
	}
	return out
}

func (m *mockConnectorServer) counts() (runs, maxInFlight int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs, m.maxInFlight
}

func mockConnectorJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func compactJSON(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// mockDoc is Onyx's create_test_document.
func mockDoc(id string) map[string]any {
	return map[string]any{"id": id, "sections": []map[string]any{{"text": "Test content", "link": "http://example.com"}},
		"source": "mock_connector", "semantic_identifier": id, "doc_updated_at": time.Now().UTC().Format(time.RFC3339Nano),
		"metadata": map[string]any{}}
}

// mockYield is one step of the script.
func mockYield(hasMore bool, last any, docs ...map[string]any) map[string]any {
	if docs == nil {
		docs = []map[string]any{}
	}
	return map[string]any{"documents": docs, "checkpoint": json.RawMessage(mockCheckpoint(hasMore, last)), "failures": []any{}}
}

// mockCheckpoint is a MockConnectorCheckpoint, as the server receives it.
func mockCheckpoint(hasMore bool, last any) string {
	b, _ := json.Marshal(map[string]any{"has_more": hasMore, "last_document_id": last})
	return compactJSON(b)
}

// indexWorld is a database, the quarry serve processes on it, the admin's
// client, and the worker processes started; every process's output is
// checked for the credential's value when the test ends.
type indexWorld struct {
	t       *testing.T
	url     string
	vars    map[string]string
	servers []*procServer
	c       *procClient
	mu      sync.Mutex
	workers []*procWorker
}

// indexingDatabases runs f on SQLite and, when QUARRY_TEST_POSTGRES_URL is
// set, on PostgreSQL, each with a new database.
func indexingDatabases(t *testing.T, f func(t *testing.T, url string)) {
	quarryBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		f(t, "sqlite:"+filepath.Join(t.TempDir(), "quarry.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			t.Skip(storetest.PostgresEnv + " is not set")
		}
		f(t, storetest.URL(t))
	})
}

// newIndexWorld starts replicas quarry serve processes on the database at
// url: the scheduler every 200 ms, no worker in process, loopback open to
// connectors.
func newIndexWorld(t *testing.T, url string, replicas int) *indexWorld {
	t.Helper()
	w := &indexWorld{t: t, url: url, vars: map[string]string{
		"QUARRY_DATABASE_URL":      url,
		"QUARRY_ENCRYPTION_KEY":    store.NewKey(),
		"QUARRY_SCHEDULE_INTERVAL": "200ms",
		"QUARRY_INPROCESS_WORKER":  "false",
		"QUARRY_TOOL_EGRESS_ALLOW": "127.0.0.1",
		"QUARRY_LOG_LEVEL":         "debug",
	}}
	w.c = newProcClient(procAPIKey(t, w.vars))
	for range replicas {
		w.servers = append(w.servers, startServe(t, w.vars))
	}
	t.Cleanup(w.checkLogs)
	return w
}

// checkLogs fails the test if a log line of a process shows the
// credential's value.
func (w *indexWorld) checkLogs() {
	for i, s := range w.servers {
		for what, out := range map[string]string{"stdout": s.stdout.String(), "stderr": s.stderr.String()} {
			if strings.Contains(out, indexSecret) {
				w.t.Errorf("the %s of serve %d shows the credential's value:\n%s", what, i, out)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.workers {
		if out := p.output.String(); strings.Contains(out, indexSecret) {
			w.t.Errorf("the output of worker %s shows the credential's value:\n%s", p.name, out)
		}
	}
}

func (w *indexWorld) base() string { return w.servers[0].base }

// pair makes a mock connector pointed at m (refresh_freq seconds, nil for
// none), a credential with the secret, and their pair; it returns the ids
// of the connector and the pair.
func (w *indexWorld) pair(name string, m *mockConnectorServer, refreshFreq *int64) (connectorID, pairID int64) {
	w.t.Helper()
	u, _ := url.Parse(m.URL)
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	w.c.must(w.t, w.base(), "POST", "/manage/admin/connector", map[string]any{"name": "mock " + name, "source": "mock_connector",
		"input_type": "poll", "refresh_freq": refreshFreq,
		"connector_specific_config": map[string]any{"mock_server_host": u.Hostname(), "mock_server_port": u.Port()}}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.c.must(w.t, w.base(), "POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"api_key": indexSecret},
		"admin_public": true, "source": "mock_connector"}, &id)
	credentialID := id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.c.must(w.t, w.base(), "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": "public", "groups": []int64{}}, &id)
	return connectorID, id.ID + id.Data
}

// registration makes a registration token and returns it and its id.
func (w *indexWorld) registration() (string, int64) {
	w.t.Helper()
	var reg struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	w.c.must(w.t, w.base(), "POST", "/admin/worker/registration-token", map[string]any{"name": "test workers"}, &reg)
	return reg.Token, reg.ID
}

// indexAttempt is an attempt as GET
// /manage/admin/cc-pair/{id}/index-attempts shows it.
type indexAttempt struct {
	ID               int64        `json:"id"`
	Status           string       `json:"status"`
	ErrorMsg         *string      `json:"error_msg"`
	Trace            *string      `json:"full_exception_trace"`
	TotalDocsIndexed int64        `json:"total_docs_indexed"`
	TimeStarted      *quarry.Time `json:"time_started"`
	TimeUpdated      quarry.Time  `json:"time_updated"`
}

func (a indexAttempt) String() string { return fmt.Sprintf("%d:%s", a.ID, a.Status) }

// attempts returns the pair's attempts, newest first, from replica r.
func (w *indexWorld) attempts(r int, pairID int64) []indexAttempt {
	w.t.Helper()
	var page struct {
		Items []indexAttempt `json:"items"`
		Total int            `json:"total_items"`
	}
	w.c.must(w.t, w.servers[r].base, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d/index-attempts?page_size=1000", pairID), nil, &page)
	if page.Total > len(page.Items) {
		w.t.Fatalf("pair %d has %d attempts, more than a page", pairID, page.Total)
	}
	return page.Items
}

// waitAttempt waits until the pair has n attempts, the newest in one of
// the states, and returns it.
func (w *indexWorld) waitAttempt(pairID int64, n int, timeout time.Duration, states ...string) indexAttempt {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		as := w.attempts(0, pairID)
		if len(as) == n && slices.Contains(states, as[0].Status) {
			return as[0]
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("pair %d: attempts %v after %s, want %d with the newest %v\nserve log:\n%s\nworkers:\n%s",
				pairID, as, timeout, n, states, w.servers[0].stderr.String(), w.workerLogs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (w *indexWorld) workerLogs() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, p := range w.workers {
		fmt.Fprintf(&b, "--- %s:\n%s\n", p.name, p.output.String())
	}
	return b.String()
}

// procWorker is a running quarry worker process.
type procWorker struct {
	name   string
	cmd    *exec.Cmd
	output syncbuf.Buffer // Its stdout and stderr.
	exited chan struct{}
	err    error // How it exited, once exited is closed.
}

var registeredRE = regexp.MustCompile(`Registered as worker (\d+) `)

// startWorker starts quarry worker for replica r with the registration
// token, asking for attempts every 100 ms.
func (w *indexWorld) startWorker(r int, name, regToken string) *procWorker {
	w.t.Helper()
	p := &procWorker{name: name, exited: make(chan struct{})}
	p.cmd = exec.Command(quarryBinary(w.t), "worker")
	p.cmd.Env = processEnv(map[string]string{
		"QUARRY_WORKER_SERVER":             w.servers[r].base,
		"QUARRY_WORKER_REGISTRATION_TOKEN": regToken,
		"QUARRY_WORKER_NAME":               name,
		"QUARRY_WORKER_POLL_INTERVAL":      "100ms",
		"QUARRY_TOOL_EGRESS_ALLOW":         "127.0.0.1",
		"QUARRY_LOG_LEVEL":                 "debug",
	})
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	w.mu.Lock()
	w.workers = append(w.workers, p)
	w.mu.Unlock()
	w.t.Cleanup(p.kill)
	return p
}

// id waits until the worker registered and returns its id.
func (p *procWorker) id(t *testing.T) int64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := registeredRE.FindStringSubmatch(p.output.String()); m != nil {
			id, _ := strconv.ParseInt(m[1], 10, 64)
			return id
		}
		select {
		case <-p.exited:
			t.Fatalf("worker %s exited (%v) before registering:\n%s", p.name, p.err, p.output.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("worker %s did not register:\n%s", p.name, p.output.String())
	return 0
}

// kill ends the process with SIGKILL and waits for it.
func (p *procWorker) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Kill()
	<-p.exited
}

// stop ends the process with SIGTERM and waits for it.
func (p *procWorker) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Errorf("worker %s did not stop in 30 s after SIGTERM", p.name)
		p.kill()
	}
}

// wait waits for the process to exit by itself.
func (p *procWorker) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		t.Fatalf("worker %s still runs after %s:\n%s", p.name, timeout, p.output.String())
		return nil
	}
}

func ptr[T any](v T) *T { return &v }

// TestIndexingWorkerKilled: a quarry worker killed with SIGKILL mid-attempt,
// after it reported a checkpoint, stops renewing its lease; the scheduler
// of quarry serve ends the attempt interrupted once the lease expires (60
// s, "no heartbeat": not the source's failure, issue 39), makes the next
// at once, although the pair has no refresh frequency, and a new worker
// resumes it from the checkpoint reported, not from the beginning. The
// pair is not in the repeated error state (one failure would have put it
// there).
func TestIndexingWorkerKilled(t *testing.T) {
	indexingDatabases(t, func(t *testing.T, url string) {
		w := newIndexWorld(t, url, 1)
		m := newMockConnectorServer(t)
		var batch1 []map[string]any
		for i := range 10 {
			batch1 = append(batch1, mockDoc(fmt.Sprintf("batch-1-%02d", i)))
		}
		m.set(mockYield(true, "batch-1-09", batch1...), mockYield(true, "doc-2", mockDoc("doc-2")), mockYield(false, "doc-2"))
		m.holdFromStep(2) // The second step waits: the first one's checkpoint is reported by then.
		// Without a refresh frequency: a failure would put the pair in the
		// repeated error state, and nothing would come until someone asked.
		_, pair := w.pair("killed", m, nil)
		reg, _ := w.registration()
		first := w.startWorker(0, "doomed", reg)
		w.waitHeld(m, 30*time.Second)
		killedAt := time.Now()
		first.kill()
		a := w.attempts(0, pair)[0]
		if a.Status != "in_progress" || a.TotalDocsIndexed != 10 {
			t.Fatalf("attempt %v with %d documents when the worker was killed, want in_progress with 10", a, a.TotalDocsIndexed)
		}
		if got, want := m.received(), []string{mockCheckpoint(true, nil), mockCheckpoint(true, "batch-1-09")}; !slices.Equal(got, want) {
			t.Fatalf("checkpoints before the kill %v, want %v", got, want)
		}

		// The lease expires 60 s after the last report; the scheduler
		// interrupts the attempt and makes the next one, which waits.
		next := w.waitAttempt(pair, 2, 90*time.Second, "not_started")
		if d := time.Since(killedAt); d < 55*time.Second {
			t.Errorf("the attempt ended %s after the kill, before its lease could expire", d)
		}
		as := w.attempts(0, pair)
		if as[1].Status != "interrupted" || as[1].ErrorMsg == nil || !strings.Contains(*as[1].ErrorMsg, "(no heartbeat)") {
			t.Errorf("the killed worker's attempt %v with error %v, want interrupted with the no heartbeat message", as[1], as[1].ErrorMsg)
		}
		var repeated bool
		if err := procSQL(t, url).QueryRow(`SELECT in_repeated_error_state FROM cc_pairs WHERE id = $1`, pair).Scan(&repeated); err != nil || repeated {
			t.Errorf("the pair after its worker was killed: in the repeated error state %v (%v), want not", repeated, err)
		}
		t.Logf("attempt %v ended %s after the kill: %s; next attempt %v", as[1], time.Since(killedAt).Round(100*time.Millisecond),
			*as[1].ErrorMsg, next)

		m.release()
		m.set(mockYield(false, "doc-3", mockDoc("doc-3")))
		w.startWorker(0, "successor", reg)
		a = w.waitAttempt(pair, 2, 30*time.Second, "success", "failed", "completed_with_errors", "canceled", "interrupted")
		if a.Status != "success" {
			t.Errorf("the resumed attempt %v (error %v), want success", a, a.ErrorMsg)
		}
		if got, want := m.received(), []string{mockCheckpoint(true, "batch-1-09")}; !slices.Equal(got, want) {
			t.Errorf("the new worker started from %v, want the checkpoint reported before the kill %v", got, want)
		}
		var docs int
		if err := procSQL(t, url).QueryRow(`SELECT COUNT(*) FROM documents WHERE cc_pair_id = $1`, pair).Scan(&docs); err != nil {
			t.Fatal(err)
		}
		if docs != 11 {
			t.Errorf("%d documents, want the first step's 10 and doc-3", docs)
		}
	})
}

// TestIndexingReplicasAndWorkers: two quarry serve processes on one
// PostgreSQL database both schedule, three quarry worker processes (two on
// one replica, one on the other) run the attempts of several pairs due
// every second, for about 10 s: no two attempts of one pair overlap in
// time, and each attempt was run once (the mock server saw as many runs of
// a pair as the pair has attempts that started, and never two of its calls
// at once).
func TestIndexingReplicasAndWorkers(t *testing.T) {
	quarryBinary(t)
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip(storetest.PostgresEnv + " is not set (two replicas share a PostgreSQL database)")
	}
	w := newIndexWorld(t, storetest.URL(t), 2)
	const pairs = 6
	mocks := make([]*mockConnectorServer, pairs)
	ids := make([]int64, pairs)
	for i := range pairs {
		m := newMockConnectorServer(t)
		m.sticky, m.delay = true, 100*time.Millisecond
		m.set(mockYield(true, "a", mockDoc(fmt.Sprintf("p%d-a", i))), mockYield(false, "b", mockDoc(fmt.Sprintf("p%d-b", i))))
		mocks[i] = m
		_, ids[i] = w.pair(fmt.Sprint("replicated-", i), m, ptr(int64(1)))
	}
	reg, _ := w.registration()
	for i := range 3 {
		w.startWorker(i%2, fmt.Sprint("worker-", i), reg)
	}
	time.Sleep(10 * time.Second)
	// Stop: pause every pair (a running attempt is canceled at its next
	// report), then wait until none has a live attempt.
	for _, id := range ids {
		w.c.must(t, w.servers[1].base, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", id), map[string]string{"status": "PAUSED"}, nil)
	}
	deadline := time.Now().Add(40 * time.Second)
	for {
		live := 0
		for _, id := range ids {
			for _, a := range w.attempts(0, id) {
				if a.Status == "not_started" || a.Status == "in_progress" {
					live++
				}
			}
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts still live 40 s after pausing", live)
		}
		time.Sleep(100 * time.Millisecond)
	}
	total, started := 0, 0
	for i, id := range ids {
		as := w.attempts(i%2, id)
		slices.Reverse(as) // Oldest first.
		var ran []indexAttempt
		for _, a := range as {
			if a.TimeStarted != nil {
				ran = append(ran, a)
			}
			if a.Status != "success" && a.Status != "canceled" {
				t.Errorf("pair %d: attempt %v (error %v), want success or canceled", id, a, a.ErrorMsg)
			}
		}
		slices.SortFunc(ran, func(a, b indexAttempt) int { return a.TimeStarted.Compare(b.TimeStarted.Time) })
		for j := 1; j < len(ran); j++ {
			prev, next := ran[j-1], ran[j]
			if next.TimeStarted.Before(prev.TimeUpdated.Time) {
				t.Errorf("pair %d: attempt %v (%s..%s) and %v (from %s) overlap", id, prev, prev.TimeStarted, prev.TimeUpdated, next, next.TimeStarted)
			}
		}
		runs, most := mocks[i].counts()
		if runs != len(ran) {
			t.Errorf("pair %d: the mock server saw %d runs, the pair has %d attempts that started", id, runs, len(ran))
		}
		if most > 1 {
			t.Errorf("pair %d: the mock server answered %d calls of the pair at once", id, most)
		}
		if len(ran) < 3 {
			t.Errorf("pair %d: %d attempts ran in 10 s, want several", id, len(ran))
		}
		total += len(as)
		started += len(ran)
	}
	t.Logf("%d pairs, %d attempts, %d of them run, none twice, no two of one pair at once", pairs, total, started)
}

// TestIndexingPausedCanceled: pausing a pair while its worker is in the
// middle of a step cancels the attempt: the worker learns it at its next
// heartbeat and ends the attempt canceled.
func TestIndexingPausedCanceled(t *testing.T) {
	indexingDatabases(t, func(t *testing.T, url string) {
		w := newIndexWorld(t, url, 1)
		m := newMockConnectorServer(t)
		m.set(mockYield(false, "d", mockDoc("d")))
		m.holdFromStep(1)
		_, pair := w.pair("paused", m, nil)
		reg, _ := w.registration()
		wk := w.startWorker(0, "pausing", reg)
		w.waitHeld(m, 30*time.Second)
		w.c.must(t, w.base(), "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pair), map[string]string{"status": "PAUSED"}, nil)
		start := time.Now()
		// The heartbeat comes every 15 s.
		a := w.waitAttempt(pair, 1, 40*time.Second, "canceled", "failed", "success", "interrupted")
		if a.Status != "canceled" {
			t.Errorf("the paused pair's attempt %v (error %v), want canceled", a, a.ErrorMsg)
		}
		t.Logf("attempt %v %s after the pause", a, time.Since(start).Round(100*time.Millisecond))
		// The worker goes on, and the paused pair gets no new attempt.
		time.Sleep(time.Second)
		if as := w.attempts(0, pair); len(as) != 1 {
			t.Errorf("attempts %v of the paused pair, want 1", as)
		}
		select {
		case <-wk.exited:
			t.Errorf("the worker exited (%v):\n%s", wk.err, wk.output.String())
		default:
		}
	})
}

// TestIndexingWorkerRevoked: a revoked worker is refused: idle, it exits
// at its next request for an attempt; holding an attempt, the attempt ends
// interrupted at once and the worker exits at its next heartbeat; both
// exit non-zero saying why. A revoked registration token registers no
// worker.
func TestIndexingWorkerRevoked(t *testing.T) {
	indexingDatabases(t, func(t *testing.T, url string) {
		w := newIndexWorld(t, url, 1)
		reg, regID := w.registration()
		const refused = "the server refused this worker's token: an admin revoked the worker"

		idle := w.startWorker(0, "idle", reg)
		w.c.must(t, w.base(), "DELETE", fmt.Sprintf("/admin/worker/%d", idle.id(t)), nil, nil)
		err := idle.wait(t, 20*time.Second)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
			t.Errorf("the revoked idle worker exited with %v, want a non-zero status", err)
		}
		if !strings.Contains(idle.output.String(), refused) {
			t.Errorf("the revoked idle worker's output does not say %q:\n%s", refused, idle.output.String())
		}

		m := newMockConnectorServer(t)
		m.set(mockYield(false, "d", mockDoc("d")))
		m.holdFromStep(1)
		_, pair := w.pair("revoked", m, nil)
		busy := w.startWorker(0, "busy", reg)
		w.waitHeld(m, 30*time.Second)
		w.c.must(t, w.base(), "DELETE", fmt.Sprintf("/admin/worker/%d", busy.id(t)), nil, nil)
		if as := w.attempts(0, pair); len(as) != 1 || as[0].Status != "interrupted" {
			t.Errorf("attempts %v once their worker was revoked, want one interrupted", as)
		}
		err = busy.wait(t, 30*time.Second) // Its next heartbeat, within 15 s.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
			t.Errorf("the revoked busy worker exited with %v, want a non-zero status", err)
		}
		if !strings.Contains(busy.output.String(), refused) {
			t.Errorf("the revoked busy worker's output does not say %q:\n%s", refused, busy.output.String())
		}

		w.c.must(t, w.base(), "DELETE", fmt.Sprintf("/admin/worker/registration-token/%d", regID), nil, nil)
		late := w.startWorker(0, "late", reg)
		err = late.wait(t, 20*time.Second)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
			t.Errorf("a worker with a revoked registration token exited with %v, want a non-zero status", err)
		}
		if want := "the server refused the registration token"; !strings.Contains(late.output.String(), want) {
			t.Errorf("the worker with a revoked registration token does not say %q:\n%s", want, late.output.String())
		}
	})
}

// TestIndexingNoCredentialInLogs: a pair whose credential holds a
// distinctive value runs a step, then fails with an exception that quotes
// the value; serve and the worker log at debug level. The attempt's error
// shows the value masked, and no log line of serve or of the worker shows
// it (newIndexWorld's check, which every test of this file makes).
func TestIndexingNoCredentialInLogs(t *testing.T) {
	indexingDatabases(t, func(t *testing.T, url string) {
		w := newIndexWorld(t, url, 1)
		m := newMockConnectorServer(t)
		m.set(mockYield(true, "d1", mockDoc("d1")), map[string]any{"documents": []any{}, "failures": []any{},
			"checkpoint": map[string]any{"has_more": false}, "unhandled_exception": "the upstream said no to api_key=" + indexSecret})
		_, pair := w.pair("secret", m, nil) // One failure, and it is not due again.
		reg, _ := w.registration()
		wk := w.startWorker(0, "careful", reg)
		a := w.waitAttempt(pair, 1, 30*time.Second, "failed", "success", "canceled", "interrupted")
		if a.Status != "failed" || a.ErrorMsg == nil || strings.Contains(*a.ErrorMsg, indexSecret) || !strings.Contains(*a.ErrorMsg, "api_key=••••") {
			t.Errorf("attempt %v with error %v, want failed with the value masked", a, a.ErrorMsg)
		}
		if a.Trace == nil || strings.Contains(*a.Trace, indexSecret) {
			t.Errorf("trace %v, want one without the value", a.Trace)
		}
		wk.stop(t)
		// The logs were written: the check is not vacuous.
		out := wk.output.String()
		for _, want := range []string{"worker: attempt started", "worker: attempt ended", "api_key=••••"} {
			if !strings.Contains(out, want) {
				t.Errorf("the worker's log has no %q:\n%s", want, out)
			}
		}
		if !strings.Contains(w.servers[0].stderr.String(), "/worker/attempts/") {
			t.Errorf("serve's log shows no request of the worker:\n%s", w.servers[0].stderr.String())
		}
	})
}

// A QUARRY_CONNECTOR_ENDPOINTS that cannot work stops quarry serve and
// quarry worker at start, saying why.
func TestConnectorEndpointsSetting(t *testing.T) {
	for _, cmd := range []string{"serve", "worker"} {
		vars := map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "q.db"), "QUARRY_ADDR": "127.0.0.1:0",
			"QUARRY_CONNECTOR_ENDPOINTS": "github=https://ghe.example.com/api/v3/,slack=slack.com/api"}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{cmd}, envOf(vars), &stdout, &stderr)
		want := `QUARRY_CONNECTOR_ENDPOINTS: "github=https://ghe.example.com/api/v3/,slack=slack.com/api": slack: "slack.com/api" is not an http(s) URL with no query or credentials`
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", cmd, err, want)
		}
	}
}

// QUARRY_PDF_CACHE_DIR is an absolute path, user-cache (the default: the
// user's cache directory) or off; pdfReader makes the directory 0700
// and uses no directory others may write to.
func TestPDFCacheDirSetting(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	for _, tc := range []struct{ value, want, err string }{
		{"", filepath.Join(home, "quarry", "pdfium"), ""},
		{"user-cache", filepath.Join(home, "quarry", "pdfium"), ""},
		{"off", "", ""},
		{"/var/cache/quarry", "/var/cache/quarry", ""},
		{"cache", "", `QUARRY_PDF_CACHE_DIR: "cache": must be an absolute path, user-cache or off`},
	} {
		var stderr bytes.Buffer
		env := &environment{getenv: envOf(map[string]string{"QUARRY_PDF_CACHE_DIR": tc.value}), stderr: &stderr}
		cfg, _, err := loadConfig("worker", nil, env, nil)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %v, want %s", tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.PDFCacheDir != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.value, cfg.PDFCacheDir, err, tc.want)
		}
	}

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	dir := filepath.Join(t.TempDir(), "made", "pdfium")
	pdfReader(dir, log)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || logs.Len() != 0 {
		t.Errorf("made %s: %v %v, log %s", dir, fi, err, logs.String())
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	pdfReader(open, log)
	if !strings.Contains(logs.String(), "is not used") {
		t.Errorf("a directory anyone may write to was used; log: %s", logs.String())
	}
}
