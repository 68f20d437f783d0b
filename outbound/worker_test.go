package outbound_test

// Onyx's indexing tests of the mock connector
// (backend/tests/integration/tests/indexing/test_checkpointing.py at
// v4.6.1), replayed against the real thing: a real store (SQLite, or
// PostgreSQL when QUARRY_TEST_POSTGRES_URL is set), the real API server,
// the mock connector server (mockserver_test.go), and an outbound.Worker
// that leases the attempts the scheduler (store.DB.Schedule) makes.
//
// The tests are in package outbound_test, not outbound: they import api,
// which may import outbound.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/outbound"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
	"github.com/quarryhq/quarry/toolrun"
)

// secretValue is the credential's value, which no log and no error text
// may show.
const secretValue = "mock-secret-value-8c1f2e"

// world is a Quarry server on a real database, an admin, and the mock
// connector server.
type world struct {
	t       testing.TB
	db      *store.DB
	raw     *sql.DB // The same database, for what no route tells (the documents).
	handler http.Handler
	srv     *httptest.Server
	admin   string // An admin's API key.
	caller  *quarry.Caller
	mock    *mockServer
	log     *syncbuf.Buffer // The server's and the workers' logs.
	// endpoints are the workers' QUARRY_CONNECTOR_ENDPOINTS.
	endpoints connector.Endpoints
	// connectors are the workers' connectors; nil means Quarry's.
	connectors *connector.Registry
}

func newWorld(t testing.TB) *world {
	t.Helper()
	ctx := context.Background()
	u := storetest.URL(t)
	w := &world{t: t, db: storetest.OpenURL(t, u, storetest.Key(t)), raw: rawSQL(t, u), log: &syncbuf.Buffer{}, mock: newMockServer(t)}
	logger := slog.New(slog.NewJSONHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w.handler = api.NewServer(api.Config{MaskCredentials: true, Version: "test", BasePath: "/api"}, w.db, logger)
	w.srv = httptest.NewServer(w.handler)
	t.Cleanup(w.srv.Close)
	name := "admin"
	_, token, err := w.db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	w.admin = token
	if w.caller, err = w.db.Authenticate(ctx, quarry.HashToken(token)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(w.log.String(), secretValue) {
			t.Errorf("a log shows the credential's value:\n%s", w.log.String())
		}
	})
	return w
}

// rawSQL opens the database at u with database/sql.
func rawSQL(t testing.TB, u string) *sql.DB {
	dialect, source, err := store.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	driver := "pgx"
	if dialect == store.SQLite {
		driver, source = "sqlite", "file:"+source+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// document returns document id of pair pairID as it is stored, and its
// JSON.
func (w *world) document(pairID int64, id string) (*quarry.Document, string) {
	w.t.Helper()
	d, err := w.db.StoredDocument(context.Background(), pairID, id)
	if err != nil {
		w.t.Fatalf("document %s: %v", id, err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		w.t.Fatal(err)
	}
	return d, string(b)
}

// do sends a request to the server as the admin, and fails the test unless
// it is answered 200; out (if not nil) is the answer decoded.
func (w *world) do(method, path string, body, out any) {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.srv.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+w.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			w.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// mockCall calls the mock connector server as a test does.
func (w *world) mockCall(method, path string, body, out any) {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.mock.URL+path, r)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("mock server %s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			w.t.Fatal(err)
		}
	}
}

// pair makes a connector of source (the mock connector's configuration
// pointing at the mock server), a credential with the secret, and their
// pair, as the admin, and returns the ids of the connector and the pair.
func (w *world) pair(source string, refreshFreq *int64) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	return w.pairOf(source, refreshFreq, "public")
}

// pairOf is pair, of access type access.
func (w *world) pairOf(source string, refreshFreq *int64, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	mu, _ := url.Parse(w.mock.URL)
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	conn := map[string]any{"name": "mock " + w.t.Name(), "source": source, "input_type": "poll",
		"connector_specific_config": map[string]any{"mock_server_host": mu.Hostname(), "mock_server_port": mu.Port()},
		"refresh_freq":              refreshFreq}
	if access != "public" {
		conn["access_type"] = access
	}
	w.do("POST", "/manage/admin/connector", conn, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{"api_key": secretValue},
		"admin_public": true, "source": source}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + w.t.Name(), "access_type": access, "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// schedule runs a pass of the scheduler.
func (w *world) schedule() store.ScheduleResult {
	w.t.Helper()
	res, err := w.db.Schedule(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

// attempts returns the attempts of a pair, newest first.
func (w *world) attempts(pairID int64) []*quarry.IndexAttempt {
	w.t.Helper()
	as, _, err := w.db.IndexAttempts(context.Background(), w.caller, pairID, 0, 100)
	if err != nil {
		w.t.Fatal(err)
	}
	return as
}

// waitAttempt waits until the pair has n attempts and the newest is in
// one of the states, and returns it.
func (w *world) waitAttempt(pairID int64, n int, states ...quarry.IndexingStatus) *quarry.IndexAttempt {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		as := w.attempts(pairID)
		if len(as) == n && slices.Contains(states, as[0].Status) {
			return as[0]
		}
		if time.Now().After(deadline) {
			var got []string
			for _, a := range as {
				got = append(got, fmt.Sprintf("%d:%s", a.ID, a.Status))
			}
			w.t.Fatalf("pair %d: attempts %v, want %d with the newest %v; log:\n%s", pairID, got, n, states, w.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// documents returns the ids of the documents the pair holds.
func (w *world) documents(pairID int64) []string {
	w.t.Helper()
	rows, err := w.raw.Query(`SELECT id FROM documents WHERE cc_pair_id = $1 ORDER BY id`, pairID)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			w.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// errors returns the errors of the pair's attempts, resolved ones too.
func (w *world) errors(pairID int64) []*quarry.IndexAttemptError {
	w.t.Helper()
	es, _, err := w.db.AttemptErrors(context.Background(), w.caller, pairID, true, 0, 100)
	if err != nil {
		w.t.Fatal(err)
	}
	return es
}

// guardedRunner is the connectors' egress guard, with loopback opened as
// QUARRY_TOOL_EGRESS_ALLOW=127.0.0.1 would.
func guardedRunner(t testing.TB) *toolrun.Runner {
	nets, hosts, err := toolrun.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return toolrun.NewRunner(toolrun.Policy{Allow: nets, AllowHosts: hosts})
}

// runningWorker is a worker running in the background.
type runningWorker struct {
	stop func()        // Shuts it down (its attempts end as interrupted).
	done chan struct{} // Closed when Run returned,
	err  error         // with this.
}

// startWorker runs a worker with token through client at base until the
// test ends or stop is called.
func (w *world) startWorker(client *http.Client, base, token string) *runningWorker {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	egress := guardedRunner(w.t)
	wk := outbound.NewWorker(outbound.WorkerConfig{
		API:                outbound.NewWorkerAPI(client, base, token),
		Connectors:         w.connectors,
		ConnectorHTTP:      egress.Client(),
		ConnectorDial:      egress.Dial,
		ConnectorEndpoints: w.endpoints,
		PDF:                testPDF,
		PollInterval:       20 * time.Millisecond,
		HeartbeatInterval:  50 * time.Millisecond,
		Log:                slog.New(slog.NewJSONHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	r := &runningWorker{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = wk.Run(ctx)
	}()
	w.t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			w.t.Error("the worker did not stop")
		}
	})
	return r
}

// registeredWorker registers a worker over HTTP with a registration token
// the admin makes, and runs it against the server's URL with its base
// path.
func (w *world) registeredWorker() *runningWorker {
	w.t.Helper()
	var reg struct {
		Token string `json:"token"`
	}
	w.do("POST", "/admin/worker/registration-token", map[string]any{"name": "test workers"}, &reg)
	token, _, err := outbound.RegisterWorker(context.Background(), w.srv.Client(), w.srv.URL+"/api", reg.Token, "worker of "+w.t.Name())
	if err != nil {
		w.t.Fatal(err)
	}
	return w.startWorker(w.srv.Client(), w.srv.URL+"/api", token)
}

// inProcessWorker runs a worker as quarry serve does: through
// InProcessTransport, with the token of StartInProcessWorker.
func (w *world) inProcessWorker() *runningWorker {
	w.t.Helper()
	token, _, err := w.db.StartInProcessWorker(context.Background(), "in-process test")
	if err != nil {
		w.t.Fatal(err)
	}
	return w.startWorker(&http.Client{Transport: &outbound.InProcessTransport{Handler: w.handler}}, "http://in-process/api", token)
}

// testDocument is Onyx's create_test_document.
func testDocument(id string) map[string]any {
	return map[string]any{"id": id, "sections": []map[string]any{{"text": "Test content", "link": "http://example.com"}},
		"source": "mock_connector", "semantic_identifier": id, "doc_updated_at": time.Now().UTC().Format(time.RFC3339Nano),
		"metadata": map[string]any{}}
}

// testFailure is Onyx's create_test_document_failure.
func testFailure(id string) map[string]any {
	return map[string]any{"failed_document": map[string]any{"document_id": id, "document_link": nil}, "failure_message": "Simulated failure"}
}

// checkpoint is a MockConnectorCheckpoint; last is nil or a document id.
func checkpoint(hasMore bool, last any) map[string]any {
	return map[string]any{"has_more": hasMore, "last_document_id": last}
}

// test_mock_connector_basic_flow, with the worker of quarry serve.
func TestMockConnectorBasicFlow(t *testing.T) {
	w := newWorld(t)
	w.inProcessWorker()
	w.mockCall("POST", "/set-behavior", []any{map[string]any{
		"documents": []any{testDocument("test-doc-1")}, "checkpoint": checkpoint(false, nil), "failures": []any{}}}, nil)
	_, _, pair := w.pair("mock_connector", nil)
	if res := w.schedule(); res.Created != 1 {
		t.Fatalf("the scheduler made %d attempts, want 1", res.Created)
	}
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 1 || a.TotalDocsIndexed != 1 {
		t.Errorf("attempt %s with %d new and %d documents (error %v), want success with 1", a.Status, a.NewDocsIndexed, a.TotalDocsIndexed, a.ErrorMsg)
	}
	if got := w.documents(pair); !slices.Equal(got, []string{"test-doc-1"}) {
		t.Errorf("documents %q, want test-doc-1", got)
	}
	if es := w.errors(pair); len(es) != 0 {
		t.Errorf("errors %+v, want none", es)
	}
	var cps []map[string]any
	w.mockCall("GET", "/get-checkpoints", nil, &cps)
	if fmt.Sprint(cps) != fmt.Sprint([]any{checkpoint(true, nil)}) {
		t.Errorf("checkpoints sent %v, want the first only", cps)
	}
}

// test_mock_connector_with_failures, with a worker on another machine.
func TestMockConnectorWithFailures(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	w.mockCall("POST", "/set-behavior", []any{map[string]any{
		"documents": []any{testDocument("doc-1")}, "checkpoint": checkpoint(false, nil), "failures": []any{testFailure("doc-2")}}}, nil)
	_, _, pair := w.pair("mock_connector", nil)
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors {
		t.Errorf("attempt %s (error %v), want completed_with_errors", a.Status, a.ErrorMsg)
	}
	if got := w.documents(pair); !slices.Equal(got, []string{"doc-1"}) {
		t.Errorf("documents %q, want doc-1", got)
	}
	es := w.errors(pair)
	if len(es) != 1 || es[0].DocumentID == nil || *es[0].DocumentID != "doc-2" || es[0].FailureMessage != "Simulated failure" {
		t.Errorf("errors %+v, want doc-2's Simulated failure", es)
	}
}

// test_mock_connector_checkpoint_recovery: an unhandled exception fails
// the attempt; the next one resumes from the last checkpoint reached.
func TestMockConnectorCheckpointRecovery(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	var batch1 []any
	for i := range 100 {
		batch1 = append(batch1, testDocument(fmt.Sprintf("batch-1-%03d", i)))
	}
	last1, doc2, doc3 := "batch-1-099", "doc-2", "doc-3"
	w.mockCall("POST", "/set-behavior", []any{
		map[string]any{"documents": batch1, "checkpoint": checkpoint(true, last1), "failures": []any{}},
		map[string]any{"documents": []any{testDocument(doc2)}, "checkpoint": checkpoint(true, doc2), "failures": []any{}},
		map[string]any{"documents": []any{}, "checkpoint": checkpoint(false, doc2), "failures": []any{},
			// The text quotes the credential: the attempt's error must not.
			"unhandled_exception": "Simulated unhandled error with " + secretValue},
	}, nil)
	hour := int64(3600)
	connectorID, credentialID, pair := w.pair("mock_connector", &hour)
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != "Simulated unhandled error with "+quarry.MaskedSecret {
		t.Errorf("attempt %s with error %v, want failed with the masked exception", a.Status, a.ErrorMsg)
	}
	if a.FullExceptionTrace == nil || strings.Contains(*a.FullExceptionTrace, secretValue) || !strings.Contains(*a.FullExceptionTrace, "step 3") {
		t.Errorf("trace %v, want the step and no secret", a.FullExceptionTrace)
	}
	var cps []map[string]any
	w.mockCall("GET", "/get-checkpoints", nil, &cps)
	want := []any{checkpoint(true, nil), checkpoint(true, last1), checkpoint(true, doc2)}
	if fmt.Sprint(cps) != fmt.Sprint(want) {
		t.Errorf("checkpoints sent %v, want %v", cps, want)
	}
	if n := len(w.documents(pair)); n != 101 {
		t.Errorf("%d documents after the failure, want 101", n)
	}

	// Onyx's test pauses the pair, resets the mock server, asks for a run
	// and resumes the pair.
	w.do("PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pair), map[string]string{"status": "PAUSED"}, nil)
	w.mockCall("POST", "/reset", nil, nil)
	w.mockCall("POST", "/set-behavior", []any{map[string]any{
		"documents": []any{testDocument(doc3)}, "checkpoint": checkpoint(false, doc3), "failures": []any{}}}, nil)
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.do("PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pair), map[string]string{"status": "ACTIVE"}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess {
		t.Errorf("recovery attempt %s (error %v), want success", a.Status, a.ErrorMsg)
	}
	cps = nil
	w.mockCall("GET", "/get-checkpoints", nil, &cps)
	if want := []any{checkpoint(true, doc2)}; fmt.Sprint(cps) != fmt.Sprint(want) {
		t.Errorf("the recovery run started from %v, want %v", cps, want)
	}
	if got := w.documents(pair); len(got) != 102 || !slices.Contains(got, doc3) || !slices.Contains(got, doc2) {
		t.Errorf("%d documents after the recovery, want 102 with doc-2 and doc-3", len(got))
	}
}

// A source without a connector (issue 39): its attempt ends once,
// canceled, saying so plainly; the pair is INVALID (not in the repeated
// error state: that one attempt was not the source's failure) and the
// scheduler makes no attempt for it, pass after pass, until something
// changes: a run asked for, an edit of its credential or connector, a
// server that learns a connector for the source. Each time, one attempt
// says so again.
func TestWorkerSourceWithoutConnector(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	hour := int64(3600)
	connectorID, credentialID, pair := w.pair("notion", &hour)
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	if want := quarry.NoConnectorMessage("notion"); a.Status != quarry.IndexCanceled || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %v, want canceled: %s", a.Status, a.ErrorMsg, want)
	}
	page := func() map[string]any {
		var m map[string]any
		w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", pair), nil, &m)
		return m
	}
	if m := page(); m["status"] != "INVALID" || m["in_repeated_error_state"] != false || m["last_index_attempt_status"] != "canceled" {
		t.Errorf("the pair after its attempt: %v, want INVALID, not in the repeated error state", m)
	}
	for range 3 {
		if res := w.schedule(); res.Created != 0 {
			t.Fatalf("the scheduler made %d attempts of an INVALID pair", res.Created)
		}
	}
	again := func(n int, why string) {
		t.Helper()
		if res := w.schedule(); res.Created != 1 {
			t.Fatalf("after %s the scheduler made %d attempts, want 1", why, res.Created)
		}
		a := w.waitAttempt(pair, n, quarry.IndexSuccess, quarry.IndexFailed, quarry.IndexCanceled)
		if a.Status != quarry.IndexCanceled || page()["status"] != "INVALID" {
			t.Errorf("after %s: attempt %s, pair %v", why, a.Status, page()["status"])
		}
		if res := w.schedule(); res.Created != 0 {
			t.Fatalf("after %s the scheduler made %d more attempts", why, res.Created)
		}
	}
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID, "credential_ids": []int64{credentialID}}, nil)
	again(2, "a run asked for")
	w.do("PATCH", fmt.Sprintf("/manage/credential/%d", credentialID), map[string]any{"credential_json": map[string]string{"api_key": "another"}}, nil)
	again(3, "an edit of the credential")
	w.do("PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pair), map[string]string{"status": "ACTIVE"}, nil)
	again(4, "a resume")
	if n, err := w.db.KnowConnectors(context.Background(), []quarry.DocumentSource{"web", "imap"}); err != nil || n != 0 {
		t.Fatalf("KnowConnectors of other sources: %d, %v", n, err)
	}
	if n, err := w.db.KnowConnectors(context.Background(), []quarry.DocumentSource{"notion"}); err != nil || n != 1 {
		t.Fatalf("KnowConnectors(notion): %d, %v; want the pair", n, err)
	}
	if m := page(); m["status"] != "ACTIVE" {
		t.Errorf("a pair whose source has a connector now: %v", m["status"])
	}
	again(5, "a server that learns a connector for notion")
}

// A paused pair's attempt is canceled at the next heartbeat; a worker that
// shuts down ends its attempt as interrupted.
func TestWorkerStops(t *testing.T) {
	t.Run("paused", func(t *testing.T) {
		w := newWorld(t)
		w.registeredWorker()
		release := w.mock.setHold()
		defer release()
		w.mockCall("POST", "/set-behavior", []any{map[string]any{
			"documents": []any{testDocument("d")}, "checkpoint": checkpoint(false, nil), "failures": []any{}}}, nil)
		_, _, pair := w.pair("mock_connector", nil)
		w.schedule()
		w.waitAttempt(pair, 1, quarry.IndexInProgress)
		w.do("PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pair), map[string]string{"status": "PAUSED"}, nil)
		a := w.waitAttempt(pair, 1, quarry.IndexCanceled, quarry.IndexFailed, quarry.IndexSuccess, quarry.IndexInterrupted)
		if a.Status != quarry.IndexCanceled {
			t.Errorf("attempt of a paused pair %s (error %v), want canceled", a.Status, a.ErrorMsg)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		w := newWorld(t)
		wk := w.inProcessWorker()
		release := w.mock.setHold()
		defer release()
		w.mockCall("POST", "/set-behavior", []any{map[string]any{
			"documents": []any{testDocument("d")}, "checkpoint": checkpoint(false, nil), "failures": []any{}}}, nil)
		_, _, pair := w.pair("mock_connector", nil)
		w.schedule()
		w.waitAttempt(pair, 1, quarry.IndexInProgress)
		wk.stop()
		if <-wk.done; wk.err != nil {
			t.Errorf("Run after shutdown: %v, want nil", wk.err)
		}
		if a := w.attempts(pair)[0]; a.Status != quarry.IndexInterrupted {
			t.Errorf("attempt after shutdown %s (error %v), want interrupted", a.Status, a.ErrorMsg)
		}
	})
}

// A revoked worker stops with ErrWorkerRevoked.
func TestWorkerRevoked(t *testing.T) {
	w := newWorld(t)
	token, id, err := w.db.StartInProcessWorker(context.Background(), "to revoke")
	if err != nil {
		t.Fatal(err)
	}
	wk := w.startWorker(w.srv.Client(), w.srv.URL, token)
	w.do("DELETE", fmt.Sprintf("/admin/worker/%d", id), nil, nil)
	select {
	case <-wk.done:
		if !errors.Is(wk.err, outbound.ErrWorkerRevoked) {
			t.Errorf("Run of a revoked worker: %v, want ErrWorkerRevoked", wk.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the revoked worker did not stop")
	}
}
