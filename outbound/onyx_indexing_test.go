package outbound_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

// Replays of Onyx v4.6.1's integration tests of indexing
// (backend/tests/integration/tests/indexing/ and index_attempt/), with
// Onyx's mock connector, against the real server, store and worker. The
// Celery beat that Onyx's tests wait for is the scheduler's pass, run here
// by the test.

// test_mock_connector_failure_recovery: a document's failure and an
// entity's are recorded, unresolved; a run from the beginning that takes
// both documents succeeds and resolves both.
func TestMockConnectorFailureRecovery(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	now := time.Now().UTC()
	entity := map[string]any{"failed_document": nil, "failure_message": "Simulated unhandled error",
		"failed_entity": map[string]any{"entity_id": "test-entity-id",
			"missed_time_range": []string{now.Add(-24 * time.Hour).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano)}}}
	w.mockCall("POST", "/set-behavior", []any{map[string]any{"documents": []any{testDocument("doc-1")},
		"checkpoint": checkpoint(false, nil), "failures": []any{testFailure("doc-2"), entity}}}, nil)
	connectorID, credentialID, pair := w.pair("mock_connector", nil)
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors {
		t.Fatalf("first attempt %s (error %v), want completed_with_errors", a.Status, a.ErrorMsg)
	}
	es := w.errors(pair)
	if len(es) != 2 {
		t.Fatalf("errors %+v, want 2", es)
	}
	for _, e := range es {
		switch {
		case e.IsResolved:
			t.Errorf("error %+v is resolved before the recovery", e)
		case e.EntityID != nil && (*e.EntityID != "test-entity-id" || e.FailureMessage != "Simulated unhandled error" ||
			e.FailedTimeRangeStart == nil || e.FailedTimeRangeEnd == nil):
			t.Errorf("the entity's error %+v", e)
		case e.EntityID == nil && (e.DocumentID == nil || *e.DocumentID != "doc-2"):
			t.Errorf("the document's error %+v", e)
		}
	}

	w.mockCall("POST", "/set-behavior", []any{map[string]any{"documents": []any{testDocument("doc-1"), testDocument("doc-2")},
		"checkpoint": checkpoint(false, nil), "failures": []any{}}}, nil)
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": true}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess {
		t.Fatalf("recovery attempt %s (error %v), want success", a.Status, a.ErrorMsg)
	}
	if got := w.documents(pair); !slices.Equal(got, []string{"doc-1", "doc-2"}) {
		t.Errorf("documents %q, want doc-1 and doc-2", got)
	}
	es = w.errors(pair)
	if len(es) != 2 || !es[0].IsResolved || !es[1].IsResolved {
		t.Errorf("errors after the recovery %+v, want both resolved", es)
	}
}

// test_poll_connector_time_ranges: the first attempt polls from the epoch
// to about when it ran; the next from 30 minutes (POLL_CONNECTOR_OFFSET)
// before the end of the first's window to about when it ran.
func TestPollConnectorTimeRanges(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	success := map[string]any{"documents": []any{testDocument("doc-1")}, "checkpoint": checkpoint(false, nil), "failures": []any{}}
	w.mockCall("POST", "/set-behavior", []any{success, success}, nil)
	three := int64(3)
	connectorID, credentialID, pair := w.pair("mock_connector", &three)

	before := time.Now().Add(-time.Millisecond)
	w.schedule()
	first := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	after := time.Now().Add(time.Millisecond)
	if first.Status != quarry.IndexSuccess || first.PollRangeStart == nil || first.PollRangeEnd == nil {
		t.Fatalf("first attempt %+v", first)
	}
	if !first.PollRangeStart.Equal(time.Unix(0, 0)) {
		t.Errorf("first window starts at %s, want the epoch", first.PollRangeStart)
	}
	if first.PollRangeEnd.Before(before) || first.PollRangeEnd.After(after) {
		t.Errorf("first window ends at %s, want between %s and %s", first.PollRangeEnd, before, after)
	}

	w.mockCall("POST", "/set-behavior", []any{success, success}, nil)
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	before = time.Now().Add(-time.Millisecond)
	w.schedule()
	second := w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	after = time.Now().Add(time.Millisecond)
	if second.Status != quarry.IndexSuccess || second.PollRangeStart == nil || second.PollRangeEnd == nil {
		t.Fatalf("second attempt %+v", second)
	}
	if want := first.PollRangeEnd.Add(-quarry.PollConnectorOffset); !second.PollRangeStart.Equal(want) {
		t.Errorf("second window starts at %s, want %s", second.PollRangeStart, want)
	}
	if second.PollRangeEnd.Before(before) || second.PollRangeEnd.After(after) {
		t.Errorf("second window ends at %s, want between %s and %s", second.PollRangeEnd, before, after)
	}
}

// test_repeated_error_state_detection_and_recovery: with a refresh
// frequency of an hour, a pair in its first indexing is tried again at
// once after each failure, until five failures in a row put it into the
// repeated error state (and it waits for the hour); a run from the
// beginning that succeeds takes it out.
func TestRepeatedErrorStateDetectionAndRecovery(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	failing := map[string]any{"documents": []any{}, "checkpoint": checkpoint(false, nil), "failures": []any{},
		"unhandled_exception": "Simulated unhandled error for testing repeated errors"}
	var script []any
	for range 5 * quarry.RepeatedErrorsBeforeErrorState {
		script = append(script, failing)
	}
	w.mockCall("POST", "/set-behavior", script, nil)
	hour := int64(3600)
	connectorID, credentialID, pair := w.pair("mock_connector", &hour)
	pairState := func() map[string]any {
		var m map[string]any
		w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", pair), nil, &m)
		return m
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		as := w.attempts(pair)
		ended := 0
		for _, a := range as {
			if !a.Status.Live() {
				if a.Status != quarry.IndexFailed {
					t.Fatalf("attempt %d ended %s, want failed", a.ID, a.Status)
				}
				ended++
			}
		}
		if ended >= quarry.RepeatedErrorsBeforeErrorState {
			break
		}
		if pairState()["in_repeated_error_state"] != false {
			t.Fatalf("in the repeated error state after %d failures", ended)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d failed attempts in 60 s, want %d", ended, quarry.RepeatedErrorsBeforeErrorState)
		}
		w.schedule()
		time.Sleep(50 * time.Millisecond)
	}
	if m := pairState(); m["in_repeated_error_state"] != true || m["status"] != "INITIAL_INDEXING" {
		t.Fatalf("after 5 failures: %v", m)
	}
	// In the repeated error state, the pair waits for its refresh.
	if res := w.schedule(); res.Created != 0 {
		t.Errorf("the scheduler made %d attempts for a pair in the repeated error state", res.Created)
	}
	if n := len(w.attempts(pair)); n != quarry.RepeatedErrorsBeforeErrorState {
		t.Fatalf("%d attempts, want %d", n, quarry.RepeatedErrorsBeforeErrorState)
	}

	w.mockCall("POST", "/reset", nil, nil)
	w.mockCall("POST", "/set-behavior", []any{map[string]any{"documents": []any{testDocument("doc-1")},
		"checkpoint": checkpoint(false, nil), "failures": []any{}}}, nil)
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": true}, nil)
	w.do("PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/status", pair), map[string]string{"status": "ACTIVE"}, nil)
	w.schedule()
	a := w.waitAttempt(pair, quarry.RepeatedErrorsBeforeErrorState+1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess {
		t.Fatalf("recovery attempt %s (error %v), want success", a.Status, a.ErrorMsg)
	}
	if got := w.documents(pair); !slices.Equal(got, []string{"doc-1"}) {
		t.Errorf("documents %q, want doc-1", got)
	}
	if m := pairState(); m["in_repeated_error_state"] != false {
		t.Errorf("still in the repeated error state after a success: %v", m)
	}
}

// test_index_attempt_pagination: the first attempt and 299 more written
// straight into the database (as Onyx's create_test_index_attempts does),
// read in pages of 5 and of 100: every page full but the last, the total
// every time, newest first, each attempt once.
func TestIndexAttemptPagination(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	_, _, pair := w.pair("mock_connector", nil)
	w.schedule()
	// The mock server has nothing to give: the first attempt runs, and fails.
	first := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	ids := []int64{first.ID}
	base := time.Now().UTC()
	for i := range 299 {
		at := base.Add(time.Duration(i+1) * time.Second).UnixMicro()
		var id int64
		if err := w.raw.QueryRow(`INSERT INTO index_attempts (cc_pair_id, status, from_beginning, time_created, time_started, time_updated)
			VALUES ($1, 'success', FALSE, $2, $2, $2) RETURNING id`, pair, at).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, size := range []int{5, 100} {
		var (
			seen []int64
			last *time.Time
		)
		for page := 0; page*size < len(ids); page++ {
			var got struct {
				Items []struct {
					ID          int64      `json:"id"`
					TimeStarted *time.Time `json:"time_started"`
				} `json:"items"`
				Total int `json:"total_items"`
			}
			w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/index-attempts?page_num=%d&page_size=%d", pair, page, size), nil, &got)
			if got.Total != len(ids) || len(got.Items) != min(size, len(ids)-page*size) {
				t.Fatalf("page %d of %d: %d items of %d", page, size, len(got.Items), got.Total)
			}
			for _, a := range got.Items {
				if last != nil && (a.TimeStarted == nil || a.TimeStarted.After(*last)) {
					t.Fatalf("page %d of %d: attempt %d is not in descending time order", page, size, a.ID)
				}
				last = a.TimeStarted
				seen = append(seen, a.ID)
			}
		}
		slices.Sort(seen)
		want := slices.Clone(ids)
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Fatalf("pages of %d hold %d attempts, want the %d made", size, len(seen), len(want))
		}
	}
}
