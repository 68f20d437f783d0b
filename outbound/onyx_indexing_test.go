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

// leaseSlack is how long before the attempt was made its window may end:
// the window ends when the worker's lease transaction began, and on
// PostgreSQL (read committed: each statement sees what was committed when
// it ran) that transaction may have begun before the scheduler committed
// the attempt it then finds; a CI run saw 4.5 ms. A window that ends that
// little early overlaps the next one; it leaves no gap.
const leaseSlack = time.Second

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

	before := time.Now().Add(-leaseSlack)
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
	before = time.Now().Add(-leaseSlack)
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
		// The pair's state first: the attempts read after it are at least
		// those it had seen end.
		inErrorState := pairState()["in_repeated_error_state"] != false
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
		if inErrorState && ended < quarry.RepeatedErrorsBeforeErrorState {
			t.Fatalf("in the repeated error state after %d failures", ended)
		}
		if ended >= quarry.RepeatedErrorsBeforeErrorState {
			break
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
	pair := w.emptyFilePair() // CCPairManager.create_from_scratch's file pair of no file.
	w.schedule()
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

// Onyx's connector/test_last_indexed_time.py: a pair's "last indexed" is
// the start of its latest successful attempt (completed_with_errors
// counts), on its page (CCPairFullInfo.last_indexed) and in the status of
// indexing (last_success) alike, however many attempts came after it.
// Onyx's create_from_scratch makes a file pair of no file, whose first run
// succeeds with nothing; the attempts its IndexAttemptManager writes
// straight into Onyx's database are written into Quarry's.

// emptyFilePair is CCPairManager.create_from_scratch with its defaults: a
// public file connector of no file, a credential and their pair.
func (w *world) emptyFilePair() int64 {
	w.t.Helper()
	return w.filePair(map[string]any{"file_locations": []string{}, "file_names": []string{}, "zip_metadata_file_id": nil})
}

// waitForRealSuccess is _wait_for_real_success: the pair's first attempt,
// run by the scheduler and a worker, succeeds.
func (w *world) waitForRealSuccess(pair int64) {
	w.t.Helper()
	w.schedule()
	if a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed); a.Status != quarry.IndexSuccess {
		w.t.Fatalf("pair %d: the first attempt %s (error %v), want success", pair, a.Status, deref(a.ErrorMsg))
	}
}

// deref returns *s, or "".
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// createTestIndexAttempts is IndexAttemptManager.create_test_index_attempts:
// n attempts of status written into the database, created, started and
// updated an hour apart back from base, with 10 documents each.
func (w *world) createTestIndexAttempts(n int, pair int64, status quarry.IndexingStatus, errorMsg *string, base time.Time) {
	w.t.Helper()
	for i := range n {
		at := base.Add(-time.Duration(i) * time.Hour).UnixMicro()
		if _, err := w.raw.Exec(`INSERT INTO index_attempts (cc_pair_id, status, from_beginning, new_docs_indexed, total_docs_indexed,
			docs_removed_from_index, error_msg, time_created, time_started, time_updated) VALUES ($1, $2, FALSE, 10, 10, 0, $3, $4, $4, $4)`,
			pair, status, errorMsg, at); err != nil {
			w.t.Fatal(err)
		}
	}
}

// lastIndexed returns the pair's last_indexed on its page (_get_detail)
// and its last_success in the status of indexing (_get_listing).
func (w *world) lastIndexed(pair int64) (detail, listing *time.Time) {
	w.t.Helper()
	var info struct {
		LastIndexed *time.Time `json:"last_indexed"`
	}
	w.do("GET", fmt.Sprintf("/manage/admin/cc-pair/%d", pair), nil, &info)
	var out []struct {
		Statuses []struct {
			CCPairID    int64      `json:"cc_pair_id"`
			LastSuccess *time.Time `json:"last_success"`
		} `json:"indexing_statuses"`
	}
	w.do("POST", "/manage/admin/connector/indexing-status", map[string]any{}, &out)
	for _, o := range out {
		for _, s := range o.Statuses {
			if s.CCPairID == pair {
				return info.LastIndexed, s.LastSuccess
			}
		}
	}
	w.t.Fatalf("pair %d is not in the status of indexing", pair)
	return nil, nil
}

// checkLastIndexed asserts the test's last lines: both are set and agree.
func (w *world) checkLastIndexed(pair int64) {
	w.t.Helper()
	detail, listing := w.lastIndexed(pair)
	switch {
	case detail == nil:
		w.t.Errorf("Detail page last_indexed is None even though a successful attempt exists")
	case listing == nil:
		w.t.Errorf("Listing page last_success is None even though a successful attempt exists")
	case !detail.Equal(*listing):
		w.t.Errorf("Detail last_indexed=%s != listing last_success=%s", detail, listing)
	}
}

// test_last_indexed_first_page_all_errors
func TestLastIndexedFirstPageAllErrors(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	pair := w.emptyFilePair()
	w.waitForRealSuccess(pair)
	if _, listing := w.lastIndexed(pair); listing == nil {
		t.Fatal("last_success is None after the first success")
	}
	msg := "simulated failure"
	w.createTestIndexAttempts(10, pair, quarry.IndexFailed, &msg, time.Now().UTC())
	w.checkLastIndexed(pair)
}

// test_last_indexed_credential_swap_scenario: a second credential paired
// with the same connector; the second pair's last indexed is its own.
func TestLastIndexedCredentialSwapScenario(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	pair1 := w.emptyFilePair()
	w.waitForRealSuccess(pair1)
	var connectorID int64
	if err := w.raw.QueryRow(`SELECT connector_id FROM cc_pairs WHERE id = $1`, pair1).Scan(&connectorID); err != nil {
		t.Fatal(err)
	}
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	w.do("POST", "/manage/credential", map[string]any{"credential_json": map[string]string{}, "admin_public": true,
		"source": "file", "name": "swapped-cred"}, &id)
	credentialID := id.ID
	id.ID = 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "swapped", "access_type": "public", "groups": []int64{}}, &id)
	pair2 := id.Data
	w.waitForRealSuccess(pair2)
	if _, listing := w.lastIndexed(pair2); listing == nil {
		t.Fatal("last_success is None after the swap")
	}
	msg := "credential expired"
	w.createTestIndexAttempts(10, pair2, quarry.IndexFailed, &msg, time.Now().UTC())
	w.checkLastIndexed(pair2)
	detail1, _ := w.lastIndexed(pair1)
	detail2, _ := w.lastIndexed(pair2)
	if detail1 == nil || detail2 == nil || !detail2.After(*detail1) {
		t.Errorf("last_indexed of the second pair %v, of the first %v: want the second pair's own, later", detail2, detail1)
	}
}

// test_last_indexed_mixed_statuses
func TestLastIndexedMixedStatuses(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	pair := w.emptyFilePair()
	w.waitForRealSuccess(pair)
	now := time.Now().UTC()
	w.createTestIndexAttempts(1, pair, quarry.IndexSuccess, nil, now.Add(-5*time.Hour))
	msg := "transient failure"
	w.createTestIndexAttempts(3, pair, quarry.IndexFailed, &msg, now.Add(-3*time.Hour))
	w.createTestIndexAttempts(1, pair, quarry.IndexInProgress, nil, now.Add(-time.Hour))
	w.checkLastIndexed(pair)
}

// test_last_indexed_completed_with_errors
func TestLastIndexedCompletedWithErrors(t *testing.T) {
	w := newWorld(t)
	w.registeredWorker()
	pair := w.emptyFilePair()
	w.waitForRealSuccess(pair)
	now := time.Now().UTC()
	w.createTestIndexAttempts(1, pair, quarry.IndexCompletedWithErrors, nil, now.Add(-2*time.Hour))
	msg := "post-partial failure"
	w.createTestIndexAttempts(10, pair, quarry.IndexFailed, &msg, now)
	w.checkLastIndexed(pair)
}
