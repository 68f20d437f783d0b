package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// fxWorker registers a worker with a fresh registration token made by the
// admin, and returns it as a caller.
func (c *fxCast) worker(t *testing.T, name string) user {
	t.Helper()
	var reg struct {
		Token string `json:"token"`
	}
	c.do(c.admin, "POST", "/admin/worker/registration-token", map[string]any{"name": name + " fleet"}).decode(t, &reg)
	var w struct {
		Token string `json:"token"`
	}
	c.do(user{token: reg.Token}, "POST", "/worker/register", map[string]any{"name": name}).decode(t, &w)
	return user{token: w.Token}
}

// schedule runs one pass of the scheduler, and checks what it made.
func (c *fxCast) schedule(t *testing.T, created, expired int) {
	t.Helper()
	res, err := c.srv.Config.Handler.(*api.Server).Schedule(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != created || res.Expired != expired {
		t.Fatalf("schedule: %+v, want %d made and %d expired", res, created, expired)
	}
}

// fxAttemptJSON is the expected IndexAttemptSnapshot of an attempt at the
// test clock.
func fxAttemptJSON(id int64, status string, fromBeginning bool, newDocs, total, errors int, started bool, pollStart string, extra string) string {
	st, start, end := "null", "null", "null"
	if started {
		st, start, end = `"`+testNowJSON+`"`, `"`+pollStart+`"`, `"`+testNowJSON+`"`
	}
	return fmt.Sprintf(`{"id":%d,"status":%q,"from_beginning":%t,"new_docs_indexed":%d,"total_docs_indexed":%d,
		"docs_removed_from_index":0,%s"error_count":%d,"time_started":%s,"time_updated":%q,"poll_range_start":%s,"poll_range_end":%s}`,
		id, status, fromBeginning, newDocs, total, extra, errors, st, testNowJSON, start, end)
}

const fxEpoch = "1970-01-01T00:00:00Z"

// TestIndexing follows a pair through its index attempts, as an admin,
// the scheduler and workers see it, through the real server and database:
// registration, leases, credentials, progress, errors and their
// resolution, run-once, pause, an expired lease, revocation.
func TestIndexing(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "wiki", "web")
	cred := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "wiki", quarry.AccessPrivate, c.gA)
	attempts := fmt.Sprintf("/manage/admin/cc-pair/%d/index-attempts", p)
	errs := fmt.Sprintf("/manage/admin/cc-pair/%d/errors", p)
	pairInfo := func(t *testing.T) map[string]any {
		t.Helper()
		var m map[string]any
		c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", p), nil).decode(t, &m)
		return m
	}

	var w user
	t.Run("registration", func(t *testing.T) {
		var reg struct {
			ID    int64  `json:"id"`
			Token string `json:"token"`
		}
		r := c.do(c.admin, "POST", "/admin/worker/registration-token", `{"name":"fleet","hours":2}`)
		r.decode(t, &reg)
		r.want(t, 200, fmt.Sprintf(`{"id":%d,"name":"fleet","display":%q,"created_by":%q,"time_created":%q,"expires_at":"2026-11-21T12:15:30.123456Z",
			"revoked_at":null,"workers":0,"token":%q}`, reg.ID, quarry.DisplayWorkerRegistration(reg.Token), c.admin.id, testNowJSON, reg.Token))
		c.do(c.admin, "POST", "/admin/worker/registration-token", `{"name":"fleet","hours":1000}`).want(t, 422,
			`{"detail":[{"type":"less_than_equal","loc":["body","hours"],"msg":"Input should be less than or equal to 720","input":1000,"ctx":{"le":720}}]}`)
		c.do(c.admin, "POST", "/admin/worker/registration-token", `{"name":" "}`).want(t, 400, `{"detail":"A worker's name has 1 to 200 bytes"}`)
		c.do(c.curator, "POST", "/admin/worker/registration-token", `{"name":"mine"}`).want(t, 403, fxNotAdmin)
		c.do(user{}, "POST", "/admin/worker/registration-token", `{"name":"mine"}`).want(t, 401, fxNotAuthed)
		c.do(c.admin, "POST", "/admin/worker/registration-token", nil).want(t, 422, fxMissingBody)

		regUser := user{token: reg.Token}
		// Validation comes after the token: a stranger learns nothing.
		c.do(user{token: "qrr_" + strings.Repeat("A", 43)}, "POST", "/worker/register", `{`).want(t, 401, fxNotAuthed)
		c.do(regUser, "POST", "/worker/register", `{}`).
			want(t, 422, `{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}}]}`)
		var out struct {
			WorkerID int64  `json:"worker_id"`
			Token    string `json:"token"`
		}
		r = c.do(regUser, "POST", "/worker/register", `{"name":"indexer-1"}`)
		r.decode(t, &out)
		r.want(t, 200, fmt.Sprintf(`{"worker_id":%d,"name":"indexer-1","token":%q}`, out.WorkerID, out.Token))
		w = user{token: out.Token}
		// A worker's token opens the worker routes, and nothing else.
		c.do(w, "GET", "/manage/admin/connector/status", nil).want(t, 401, fxNotAuthed)
		c.do(c.admin, "POST", "/worker/lease", `{}`).want(t, 401, fxNotAuthed)
		// A revoked registration token makes no more workers.
		c.do(c.admin, "DELETE", fmt.Sprintf("/admin/worker/registration-token/%d", reg.ID), nil).want(t, 200, `null`)
		c.do(regUser, "POST", "/worker/register", `{"name":"indexer-2"}`).want(t, 401, fxNotAuthed)
	})

	t.Run("nothing to lease before the scheduler", func(t *testing.T) {
		c.do(w, "POST", "/worker/lease", `{}`).want(t, 200, `{"attempt":null}`)
		c.do(c.admin, "GET", attempts, nil).want(t, 200, `{"items":[],"total_items":0}`)
		if st := pairInfo(t)["status"]; st != "SCHEDULED" {
			t.Fatalf("a new pair is %v", st)
		}
	})

	var first int64
	t.Run("lease, credential, progress, finish", func(t *testing.T) {
		c.schedule(t, 1, 0)
		c.schedule(t, 0, 0) // One live attempt per pair.
		var l struct {
			Attempt struct {
				ID int64 `json:"attempt_id"`
			} `json:"attempt"`
		}
		r := c.do(w, "POST", "/worker/lease", `{}`)
		r.decode(t, &l)
		first = l.Attempt.ID
		r.want(t, 200, fmt.Sprintf(`{"attempt":{"attempt_id":%d,"cc_pair_id":%d,"kind":"index","connector":{"id":%d,"name":"wiki","source":"web",
			"input_type":"poll","connector_specific_config":%s},"from_beginning":false,"poll_range_start":%q,"poll_range_end":%q,
			"checkpoint":null,"lease_expires_at":"2026-11-21T10:16:30.123456Z"}}`, first, p, conn, fxWeb, fxEpoch, testNowJSON))
		c.do(w, "POST", "/worker/lease", `{}`).want(t, 200, `{"attempt":null}`)
		if m := pairInfo(t); m["status"] != "INITIAL_INDEXING" || m["indexing"] != true || m["last_index_attempt_status"] != "in_progress" ||
			m["latest_checkpoint_description"] != nil {
			t.Fatalf("the pair while its first attempt runs: %v", m)
		}

		// The credential, in clear, to the worker holding the lease only.
		cr := c.do(w, "GET", fmt.Sprintf("/worker/attempts/%d/credential", first), nil)
		cr.want(t, 200, `{"credential_json":`+fxSecret+`,"version":1}`)
		if got := cr.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control %q", got)
		}
		if n := fxCount(c.audit("resource_type=credential"), "credential.lease"); n != 1 {
			t.Errorf("%d credential.lease entries", n)
		}
		// A connector that refreshed its token writes it back, if nobody
		// changed the credential since it read it.
		credPath := fmt.Sprintf("/worker/attempts/%d/credential", first)
		c.do(w, "PUT", credPath, `{"credential_json":{"api_key":"sk-live-refreshed-0123456789"},"version":1}`).want(t, 200, `{"version":2}`)
		c.do(w, "PUT", credPath, `{"credential_json":{"api_key":"sk-live-stale-0123456789"},"version":1}`).
			want(t, 412, `{"detail":"The object has changed since you read it; fetch it again and retry"}`)
		c.do(w, "GET", credPath, nil).want(t, 200, `{"credential_json":{"api_key":"sk-live-refreshed-0123456789"},"version":2}`)
		c.do(c.admin, "GET", fmt.Sprintf("/manage/credential/%d", cred), nil).decode(t, new(any))
		other := c.worker(t, "indexer-other")
		notHeld := fmt.Sprintf(`{"detail":"Index attempt %d is not held by this worker"}`, first)
		c.do(other, "GET", fmt.Sprintf("/worker/attempts/%d/credential", first), nil).want(t, 409, notHeld)
		c.do(other, "POST", fmt.Sprintf("/worker/attempts/%d/finish", first), `{"status":"success"}`).want(t, 409, notHeld)

		progress := fmt.Sprintf("/worker/attempts/%d/progress", first)
		docs := `[{"id":"doc-1","sections":[{"text":"Plan","link":"https://wiki/1"}],"source":"web","semantic_identifier":"Plan","metadata":{}},
			{"id":"doc-2","sections":[{"text":"Notes"}],"source":"web","semantic_identifier":"Notes","metadata":{}}]`
		c.do(w, "POST", progress, `{"documents":`+docs+`,"failures":[{"failed_document":{"document_id":"doc-3","document_link":"https://wiki/3"},
			"failed_entity":null,"failure_message":"Too large"}],"checkpoint":{"has_more":true,"page":2}}`).
			want(t, 200, `{"new_docs_indexed":2,"total_docs_indexed":2,"stop":false}`)
		// The same documents again write nothing; a changed one is written.
		c.do(w, "POST", progress, `{"documents":`+docs+`}`).want(t, 200, `{"new_docs_indexed":0,"total_docs_indexed":0,"stop":false}`)
		c.do(w, "POST", progress, `{"documents":[{"id":"doc-2","sections":[{"text":"Notes, edited"}],"source":"web",
			"semantic_identifier":"Notes","metadata":{}}]}`).want(t, 200, `{"new_docs_indexed":0,"total_docs_indexed":1,"stop":false}`)
		c.do(w, "POST", progress, `{"documents":[{"id":"","sections":[],"source":"web","semantic_identifier":"x","metadata":{}}]}`).
			want(t, 400, `{"detail":"A document needs an id"}`)
		c.do(w, "POST", progress, `{"checkpoint":{"x":"`+strings.Repeat("a", quarry.MaxCheckpointBytes)+`"}}`).
			want(t, 400, fmt.Sprintf(`{"detail":"A checkpoint may hold at most %d bytes of JSON"}`, quarry.MaxCheckpointBytes))
		c.do(w, "POST", progress, `{"checkpoint":{"page":3}}`).
			want(t, 400, `{"detail":"A checkpoint is an object with a boolean has_more, as Onyx's ConnectorCheckpoint"}`)
		c.do(w, "POST", progress, `{"failures":[{"failed_document":null,"failed_entity":null,"failure_message":"?"}]}`).
			want(t, 400, `{"detail":"A connector failure names a failed_document or a failed_entity, and only one"}`)
		c.do(w, "POST", progress, `{"failures":[{"failed_entity":{"entity_id":"e","missed_time_range":["2026-11-01T00:00:00Z"]},"failure_message":"?"}]}`).
			want(t, 400, `{"detail":"A connector failure misses a time range of a start and an end, or none"}`)
		c.do(w, "POST", progress, `{"documents":[{"id":"big","sections":[{"text":"`+strings.Repeat("x", quarry.MaxDocumentBytes)+`"}],
			"source":"web","semantic_identifier":"Big","metadata":{}}]}`).want(t, 400, `{"detail":"Document big holds more than 524288 bytes of JSON"}`)
		c.do(w, "POST", progress, `{"documents":{}}`).want(t, 422,
			`{"detail":[{"type":"list_type","loc":["body","documents"],"msg":"Input should be a valid list","input":{}}]}`)

		if m := pairInfo(t); m["latest_checkpoint_description"] != fmt.Sprintf("Attempt %d saved its checkpoint at %s", first, testNowJSON) {
			t.Errorf("the checkpoint's description: %v", m["latest_checkpoint_description"])
		}
		c.do(c.admin, "GET", attempts, nil).want(t, 200, `{"items":[`+
			fxAttemptJSON(first, "in_progress", false, 2, 3, 1, true, fxEpoch, `"error_msg":null,"full_exception_trace":null,`)+`],"total_items":1}`)
		c.do(c.admin, "GET", errs, nil).want(t, 200, fmt.Sprintf(`{"items":[{"id":1,"connector_credential_pair_id":%d,"document_id":"doc-3",
			"document_link":"https://wiki/3","entity_id":null,"failed_time_range_start":null,"failed_time_range_end":null,
			"failure_message":"Too large","is_resolved":false,"time_created":%q,"index_attempt_id":%d,"error_type":null}],"total_items":1}`,
			p, testNowJSON, first))

		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", first), `{"status":"done"}`).want(t, 422,
			`{"detail":[{"type":"enum","loc":["body","status"],"msg":"Input should be 'not_started', 'in_progress', 'success', 'canceled', 'interrupted', 'failed' or 'completed_with_errors'","input":"done","ctx":{"expected":"'not_started', 'in_progress', 'success', 'canceled', 'interrupted', 'failed' or 'completed_with_errors'"}}]}`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", first), `{"status":"in_progress"}`).
			want(t, 400, `{"detail":"An attempt ends as success, failed, canceled or interrupted, not in_progress"}`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", first), `{"status":"success"}`).
			want(t, 200, `{"status":"completed_with_errors"}`)
		// Ended: every report is refused, and changes nothing.
		c.do(w, "POST", progress, `{"documents":`+docs+`}`).want(t, 409, notHeld)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", first), `{"status":"failed"}`).want(t, 409, notHeld)
		m := pairInfo(t)
		if m["status"] != "ACTIVE" || m["num_docs_indexed"] != float64(2) || m["last_indexed"] != testNowJSON || m["indexing"] != false ||
			m["last_index_attempt_status"] != "completed_with_errors" || m["number_of_index_attempts"] != float64(1) {
			t.Fatalf("the pair after its first success: %v", m)
		}
		// Without a refresh frequency, it is not due again by itself.
		c.schedule(t, 0, 0)
	})

	var second int64
	t.Run("run once from the beginning resolves the errors", func(t *testing.T) {
		c.do(c.admin, "POST", "/manage/admin/connector/run-once", fmt.Sprintf(`{"connector_id":%d,"from_beginning":true}`, conn)).
			want(t, 200, `{"success":true,"message":"Marked 1 index attempts with indexing triggers.","data":1}`)
		c.schedule(t, 1, 0)
		var l struct {
			Attempt struct {
				ID            int64           `json:"attempt_id"`
				FromBeginning bool            `json:"from_beginning"`
				Checkpoint    json.RawMessage `json:"checkpoint"`
			} `json:"attempt"`
		}
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &l)
		second = l.Attempt.ID
		if !l.Attempt.FromBeginning || string(l.Attempt.Checkpoint) != "null" {
			t.Fatalf("a run from the beginning: %+v", l.Attempt)
		}
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", second), `{"documents":[{"id":"doc-3","sections":[{"text":"Big"}],
			"source":"web","semantic_identifier":"Big","metadata":{}}]}`).want(t, 200, `{"new_docs_indexed":1,"total_docs_indexed":1,"stop":false}`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", second), `{"status":"success"}`).want(t, 200, `{"status":"success"}`)
		c.do(c.admin, "GET", errs, nil).want(t, 200, `{"items":[],"total_items":0}`)
		var page struct {
			Items []struct {
				Resolved bool `json:"is_resolved"`
			} `json:"items"`
		}
		c.do(c.admin, "GET", errs+"?include_resolved=true", nil).decode(t, &page)
		if len(page.Items) != 1 || !page.Items[0].Resolved {
			t.Fatalf("errors with the resolved ones: %+v", page)
		}
	})

	t.Run("a pause stops the running attempt", func(t *testing.T) {
		c.do(c.admin, "POST", "/manage/admin/connector/run-once", fmt.Sprintf(`{"connector_id":%d,"credential_ids":[%d]}`, conn, cred)).
			want(t, 200, `{"success":true,"message":"Marked 1 index attempts with indexing triggers.","data":1}`)
		c.schedule(t, 1, 0)
		// A second run-once while one is waiting triggers nothing.
		c.do(c.admin, "POST", "/manage/admin/connector/run-once", fmt.Sprintf(`{"connector_id":%d}`, conn)).
			want(t, 200, `{"success":true,"message":"Marked 0 index attempts with indexing triggers.","data":0}`)
		var l struct {
			Attempt struct {
				ID int64 `json:"attempt_id"`
			} `json:"attempt"`
		}
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &l)
		id := l.Attempt.ID
		c.do(w, "POST", "/worker/heartbeat", fmt.Sprintf(`{"attempt_ids":[%d]}`, id)).
			want(t, 200, `{"stop":[],"lease_expires_at":"2026-11-21T10:16:30.123456Z"}`)
		c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", p), `{"status":"PAUSED"}`).want(t, 200, `{"message":"200"}`)
		c.do(w, "POST", "/worker/heartbeat", fmt.Sprintf(`{"attempt_ids":[%d, 999]}`, id)).
			want(t, 200, fmt.Sprintf(`{"stop":[%d,999],"lease_expires_at":"2026-11-21T10:16:30.123456Z"}`, id))
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", id), `{}`).
			want(t, 200, `{"new_docs_indexed":0,"total_docs_indexed":0,"stop":true}`)
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", id), `{"status":"canceled"}`).want(t, 200, `{"status":"canceled"}`)
		// Paused: never due, even when asked for.
		c.do(c.admin, "POST", "/manage/admin/connector/run-once", fmt.Sprintf(`{"connector_id":%d}`, conn)).
			want(t, 200, `{"success":true,"message":"Marked 1 index attempts with indexing triggers.","data":1}`)
		c.schedule(t, 0, 0)
		c.do(c.admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", p), `{"status":"ACTIVE"}`).want(t, 200, `{"message":"200"}`)
	})

	// Issue 39: a worker killed mid-attempt (its lease expires; the clock
	// moves, no test sleeps) is not the source's failure. The pair has no
	// refresh frequency, so that one failure would have put it in the
	// repeated error state and left it there until someone asked.
	t.Run("an expired lease interrupts the attempt; a new one resumes from its checkpoint at once", func(t *testing.T) {
		c.schedule(t, 1, 0) // The trigger asked for while paused.
		var l struct {
			Attempt struct {
				ID             int64  `json:"attempt_id"`
				PollRangeStart string `json:"poll_range_start"`
				PollRangeEnd   string `json:"poll_range_end"`
			} `json:"attempt"`
		}
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, &l)
		id := l.Attempt.ID
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/progress", id), `{"documents":[{"id":"doc-4","sections":[{"text":"Kept"}],
			"source":"web","semantic_identifier":"Kept","metadata":{}}],"checkpoint":{"has_more":true,"page":7}}`).
			want(t, 200, `{"new_docs_indexed":1,"total_docs_indexed":1,"stop":false}`)
		later := testNow.Add(2 * quarry.LeaseTTL)
		c.db.Now = func() time.Time { return later }
		defer func() { c.db.Now = func() time.Time { return testNow } }()
		res, err := c.srv.Config.Handler.(*api.Server).Schedule(context.Background())
		if err != nil || res.Expired != 1 || res.Created != 1 || len(res.Ended) != 1 || res.Ended[0] != quarry.IndexInterrupted {
			t.Fatalf("the pass after the expiry: %+v, %v; want the attempt interrupted and a new one made at once", res, err)
		}
		c.do(w, "POST", fmt.Sprintf("/worker/attempts/%d/finish", id), `{"status":"success"}`).
			want(t, 409, fmt.Sprintf(`{"detail":"Index attempt %d is not held by this worker"}`, id))
		var page struct {
			Items []struct {
				ID       int64   `json:"id"`
				Status   string  `json:"status"`
				ErrorMsg *string `json:"error_msg"`
			} `json:"items"`
			Total int `json:"total_items"`
		}
		c.do(c.admin, "GET", attempts+"?page_size=2", nil).decode(t, &page)
		if page.Total != 5 || len(page.Items) != 2 || page.Items[0].Status != "not_started" || page.Items[1].ID != id ||
			page.Items[1].Status != "interrupted" || page.Items[1].ErrorMsg == nil || *page.Items[1].ErrorMsg != quarry.ErrNoHeartbeat {
			t.Fatalf("attempts after the expiry: %+v", page)
		}
		if m := pairInfo(t); m["in_repeated_error_state"] != false || m["status"] != "ACTIVE" || m["num_docs_indexed"] != float64(4) {
			t.Fatalf("the pair after a lost worker: %v", m)
		}
		r := c.do(w, "POST", "/worker/lease", `{}`)
		var next struct {
			Attempt struct {
				ID             int64           `json:"attempt_id"`
				PollRangeStart string          `json:"poll_range_start"`
				PollRangeEnd   string          `json:"poll_range_end"`
				Checkpoint     json.RawMessage `json:"checkpoint"`
			} `json:"attempt"`
		}
		r.decode(t, &next)
		if next.Attempt.ID != page.Items[0].ID || string(next.Attempt.Checkpoint) != `{"has_more":true,"page":7}` ||
			next.Attempt.PollRangeStart != l.Attempt.PollRangeStart || next.Attempt.PollRangeEnd != l.Attempt.PollRangeEnd {
			t.Fatalf("the attempt after the lost one does not resume from its checkpoint and window: %s", r.body)
		}
	})

	t.Run("a revoked worker is refused, its attempts interrupted", func(t *testing.T) {
		var ws []struct {
			ID       int64   `json:"id"`
			Name     string  `json:"name"`
			Attempts []int64 `json:"attempt_ids"`
		}
		c.do(c.admin, "GET", "/admin/workers", nil).decode(t, &ws)
		i := len(ws) - 1 // The oldest: indexer-1.
		if ws[i].Name != "indexer-1" || len(ws[i].Attempts) != 1 {
			t.Fatalf("workers: %+v", ws)
		}
		c.do(c.admin, "DELETE", fmt.Sprintf("/admin/worker/%d", ws[i].ID), nil).want(t, 200, `null`)
		c.do(w, "POST", "/worker/lease", `{}`).want(t, 401, fxNotAuthed)
		var page struct {
			Items []struct {
				Status string `json:"status"`
			} `json:"items"`
		}
		c.do(c.admin, "GET", attempts, nil).decode(t, &page)
		if page.Items[0].Status != "interrupted" {
			t.Fatalf("the revoked worker's attempt: %+v", page.Items[0])
		}
		c.do(c.admin, "DELETE", "/admin/worker/999", nil).want(t, 404, `{"detail":"Worker 999 does not exist"}`)
	})

	t.Run("metrics", func(t *testing.T) {
		r := c.do(user{}, "GET", "/metrics", nil)
		for _, want := range []string{`quarry_index_attempts_ended_total{status="completed_with_errors"} 1`,
			`quarry_index_attempts_ended_total{status="success"} 1`, `quarry_index_attempts_ended_total{status="canceled"} 1`,
			`quarry_index_attempts_ended_total{status="failed"} 0`, `quarry_index_attempts_ended_total{status="interrupted"} 1`,
			"quarry_index_attempts_waiting 0", "quarry_index_attempts_running 0", "quarry_index_leases_expired 0",
			"quarry_index_heartbeats_late 0", "quarry_index_oldest_due_seconds 0"} {
			if !strings.Contains(string(r.body), "\n"+want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})

	t.Run("golden 422 bodies", func(t *testing.T) {
		for model, method := range map[string]string{"runConnectorRequest": "POST", "indexAttemptsQuery": "GET",
			"attemptErrorsQuery": "GET", "workerRegistrationCreate": "POST"} {
			for _, g := range fxGoldens(t, model) {
				t.Run(model+" "+g.Name, func(t *testing.T) { c.replay(t, c.admin, method, "", g) })
			}
		}
		worker := c.worker(t, "indexer-goldens")
		for model, method := range map[string]string{"heartbeat": "POST", "attemptFinish": "POST", "progressReport": "POST",
			"attemptCredentialUpdate": "PUT"} {
			for _, g := range fxGoldens(t, model) {
				t.Run(model+" "+g.Name, func(t *testing.T) { c.replay(t, worker, method, "", g) })
			}
		}
	})

	t.Run("who may see and ask", func(t *testing.T) {
		// The curator of gA sees the pair; another curator does not.
		if r := c.do(c.curator, "GET", attempts, nil); r.status != 200 {
			t.Fatalf("curator: %d %s", r.status, r.body)
		}
		c.do(c.other, "GET", attempts, nil).want(t, 400, `{"detail":"CC Pair not found for current user permissions"}`)
		c.do(c.other, "GET", errs, nil).want(t, 400, `{"detail":"CC Pair not found for current user permissions"}`)
		c.do(c.basic, "GET", attempts, nil).want(t, 403, fxNotCurator)
		c.do(c.admin, "GET", attempts+"?page_size=0", nil).want(t, 422, `{"detail":[{"type":"greater_than_equal","loc":["query","page_size"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`)
		c.do(c.admin, "GET", errs+"?page_size=101", nil).want(t, 422, `{"detail":[{"type":"less_than_equal","loc":["query","page_size"],"msg":"Input should be less than or equal to 100","input":"101","ctx":{"le":100}}]}`)
		run := "/manage/admin/connector/run-once"
		c.do(c.admin, "POST", run, `{"connector_id":999}`).want(t, 404, `{"detail":"Connector by id 999 does not exist."}`)
		c.do(c.admin, "POST", run, fmt.Sprintf(`{"connector_id":%d,"credential_ids":[999]}`, conn)).
			want(t, 400, `{"detail":"Not all specified credentials are associated with connector"}`)
		bare := c.connector(c.admin, "bare", "web")
		c.do(c.admin, "POST", run, fmt.Sprintf(`{"connector_id":%d}`, bare)).
			want(t, 400, `{"detail":"Connector has no valid credentials, cannot create index attempts."}`)
		// The pair is in gA only: the other curator cannot see it, nor so
		// its connector.
		c.do(c.other, "POST", run, fmt.Sprintf(`{"connector_id":%d}`, conn)).
			want(t, 404, fmt.Sprintf(`{"detail":"Connector by id %d does not exist."}`, conn))
		c.do(c.basic, "POST", run, fmt.Sprintf(`{"connector_id":%d}`, conn)).want(t, 403, fxNotCurator)
		c.do(c.admin, "POST", run, nil).want(t, 422, fxMissingBody)
	})
}

// TestWorkerListBounds holds every list the worker protocol carries to
// its maximum, on the real server and database: a heartbeat of
// quarry.MaxHeartbeatAttempts ids and progress reports of
// quarry.MaxBatchDocuments documents and failures are taken; one more item
// is FastAPI's 422, and changes nothing.
func TestWorkerListBounds(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "wiki", "web")
	cred := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "wiki", quarry.AccessPublic)
	w := c.worker(t, "bounded")
	c.schedule(t, 1, 0)
	var l struct {
		Attempt struct {
			ID int64 `json:"attempt_id"`
		} `json:"attempt"`
	}
	c.do(w, "POST", "/worker/lease", `{}`).decode(t, &l)
	id := l.Attempt.ID

	ids, others := []int64{id}, []int64{}
	for i := int64(1); len(ids) < quarry.MaxHeartbeatAttempts; i++ {
		if i != id {
			ids, others = append(ids, i+1000), append(others, i+1000)
		}
	}
	body, _ := json.Marshal(map[string]any{"attempt_ids": ids})
	stop, _ := json.Marshal(others)
	c.do(w, "POST", "/worker/heartbeat", string(body)).
		want(t, 200, fmt.Sprintf(`{"stop":%s,"lease_expires_at":"2026-11-21T10:16:30.123456Z"}`, stop))
	long, _ := json.Marshal(map[string]any{"attempt_ids": append(ids, 1)})
	c.do(w, "POST", "/worker/heartbeat", string(long)).want(t, 422, fmt.Sprintf(`{"detail":[{"type":"too_long","loc":["body","attempt_ids"],
		"msg":"List should have at most %[1]d items after validation, not %[2]d","input":%[3]s,
		"ctx":{"field_type":"List","max_length":%[1]d,"actual_length":%[2]d}}]}`, quarry.MaxHeartbeatAttempts, len(ids)+1, long[len(`{"attempt_ids":`):len(long)-1]))

	progress := fmt.Sprintf("/worker/attempts/%d/progress", id)
	docs := func(n int, prefix string) []map[string]any {
		var out []map[string]any
		for i := range n {
			out = append(out, map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "sections": []map[string]any{{"text": "Text"}},
				"source": "web", "semantic_identifier": "Doc", "metadata": map[string]any{}})
		}
		return out
	}
	failures := func(n int) []map[string]any {
		var out []map[string]any
		for i := range n {
			out = append(out, map[string]any{"failed_document": map[string]any{"document_id": fmt.Sprintf("bad-%d", i)}, "failure_message": "No"})
		}
		return out
	}
	report := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	c.do(w, "POST", progress, report(map[string]any{"documents": docs(quarry.MaxBatchDocuments, "a"), "failures": failures(quarry.MaxBatchFailures)})).
		want(t, 200, fmt.Sprintf(`{"new_docs_indexed":%d,"total_docs_indexed":%[1]d,"stop":false}`, quarry.MaxBatchDocuments))
	for _, past := range []map[string]any{{"documents": docs(quarry.MaxBatchDocuments+1, "b")}, {"failures": failures(quarry.MaxBatchFailures + 1)}} {
		r := c.do(w, "POST", progress, report(past))
		var detail struct {
			Detail []struct {
				Type string `json:"type"`
				Loc  []any  `json:"loc"`
				Ctx  struct {
					Max    int `json:"max_length"`
					Actual int `json:"actual_length"`
				} `json:"ctx"`
			} `json:"detail"`
		}
		if err := json.Unmarshal(r.body, &detail); err != nil || r.status != 422 || len(detail.Detail) != 1 || detail.Detail[0].Type != "too_long" ||
			detail.Detail[0].Ctx.Max != 1000 || detail.Detail[0].Ctx.Actual != 1001 {
			t.Errorf("a report past the maximum: %d %.300s", r.status, r.body)
		}
	}
	var page struct {
		Total int `json:"total_items"`
	}
	c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d/documents", p), nil).decode(t, &page)
	if page.Total != quarry.MaxBatchDocuments {
		t.Errorf("%d documents, want the %d of the report at the maximum", page.Total, quarry.MaxBatchDocuments)
	}
}

// TestLostWorkersInARow: an attempt whose worker is lost is resumed at
// once, as often as that happens, unless it happened to
// quarry.MaxLostLeasesInARow attempts in a row (a document that kills
// every worker reading it would loop): the last is then left to a person
// to ask for, the pair never in the repeated error state.
func TestLostWorkersInARow(t *testing.T) {
	c := newFxCast(t)
	conn := c.connector(c.admin, "wiki", "web")
	cred := c.credential(c.admin, "web", fxSecret, "admin_public", true)
	p := c.pair(c.admin, conn, cred, "wiki", quarry.AccessPublic)
	w := c.worker(t, "lost")
	now := testNow
	defer func() { c.db.Now = func() time.Time { return testNow } }()
	c.schedule(t, 1, 0)
	for i := 1; i <= quarry.MaxLostLeasesInARow; i++ {
		c.do(w, "POST", "/worker/lease", `{}`).decode(t, new(any))
		now = now.Add(2 * quarry.LeaseTTL)
		at := now
		c.db.Now = func() time.Time { return at }
		made := 1
		if i == quarry.MaxLostLeasesInARow {
			made = 0
		}
		c.schedule(t, made, 1)
	}
	var m map[string]any
	c.do(c.admin, "GET", fmt.Sprintf("/manage/admin/cc-pair/%d", p), nil).decode(t, &m)
	if m["in_repeated_error_state"] != false || m["last_index_attempt_status"] != "interrupted" || m["number_of_index_attempts"] != float64(quarry.MaxLostLeasesInARow) {
		t.Fatalf("the pair after %d lost workers: %v", quarry.MaxLostLeasesInARow, m)
	}
	c.do(c.admin, "POST", "/manage/admin/connector/run-once", fmt.Sprintf(`{"connector_id":%d}`, conn)).
		want(t, 200, `{"success":true,"message":"Marked 1 index attempts with indexing triggers.","data":1}`)
	c.schedule(t, 1, 0)
}
