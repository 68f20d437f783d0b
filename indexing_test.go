package quarry

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNextIndexAt(t *testing.T) {
	hour := int64(3600)
	at := Time{time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	update := IndexUpdate
	for _, tt := range []struct {
		name string
		f    IndexFacts
		want string // "" for never
	}{
		{"never indexed: now", IndexFacts{Source: "web", Status: CCPairScheduled}, "1970-01-01T00:00:00Z"},
		{"paused: never", IndexFacts{Source: "web", Status: CCPairPaused}, ""},
		{"paused, asked for: never", IndexFacts{Source: "web", Status: CCPairPaused, Trigger: &update}, ""},
		{"deleting: never", IndexFacts{Source: "web", Status: CCPairDeleting}, ""},
		{"ingestion API: never", IndexFacts{Source: "ingestion_api", Status: CCPairScheduled}, ""},
		{"not applicable: never", IndexFacts{Source: "not_applicable", Status: CCPairActive}, ""},
		{"asked for: now", IndexFacts{Source: "web", Status: CCPairActive, Trigger: &update, LastAttemptUpdated: &at}, "1970-01-01T00:00:00Z"},
		{"indexed, no refresh: never", IndexFacts{Source: "web", Status: CCPairActive, LastAttemptUpdated: &at}, ""},
		{"refresh: after it", IndexFacts{Source: "web", Status: CCPairActive, RefreshFreq: &hour, LastAttemptUpdated: &at}, "2026-11-21T11:00:00Z"},
		{"initial indexing: now", IndexFacts{Source: "web", Status: CCPairInitialIndexing, RefreshFreq: &hour, LastAttemptUpdated: &at}, "1970-01-01T00:00:00Z"},
		{"initial indexing failing: after the refresh", IndexFacts{Source: "web", Status: CCPairInitialIndexing, RefreshFreq: &hour,
			LastAttemptUpdated: &at, RepeatedErrors: true}, "2026-11-21T11:00:00Z"},
		{"invalid: never", IndexFacts{Source: "confluence", Status: CCPairInvalid, LastAttemptUpdated: &at}, ""},
		{"invalid, asked for: never", IndexFacts{Source: "confluence", Status: CCPairInvalid, Trigger: &update, LastAttemptUpdated: &at}, ""},
		{"credential refused once: after the refresh", IndexFacts{Source: "imap", Status: CCPairInitialIndexing, RefreshFreq: &hour,
			LastAttemptUpdated: &at, Refusals: 1}, "2026-11-21T11:00:00Z"},
		{"credential refused three times: four refreshes", IndexFacts{Source: "imap", Status: CCPairActive, RefreshFreq: &hour,
			LastAttemptUpdated: &at, Refusals: 3}, "2026-11-21T14:00:00Z"},
		{"credential refused, asked for: now", IndexFacts{Source: "imap", Status: CCPairActive, RefreshFreq: &hour,
			LastAttemptUpdated: &at, Refusals: 3, Trigger: &update}, "1970-01-01T00:00:00Z"},
		{"credential refused, no refresh: never", IndexFacts{Source: "imap", Status: CCPairInitialIndexing,
			LastAttemptUpdated: &at, Refusals: 1}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.f.NextIndexAt()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("due at %v, want never", got)
			case tt.want != "" && (got == nil || got.String() != tt.want):
				t.Errorf("due at %v, want %s", got, tt.want)
			}
		})
	}
}

func TestInRepeatedErrorState(t *testing.T) {
	hour := int64(3600)
	f, s := IndexFailed, IndexSuccess
	for _, tt := range []struct {
		refresh *int64
		latest  []IndexingStatus
		want    bool
	}{
		{nil, []IndexingStatus{f}, true},
		{nil, []IndexingStatus{s, f}, false},
		{nil, nil, false},
		{&hour, []IndexingStatus{f, f, f, f}, false},
		{&hour, []IndexingStatus{f, f, f, f, f}, true},
		{&hour, []IndexingStatus{f, f, IndexCanceled, f, f, f}, false},
	} {
		if got := InRepeatedErrorState(tt.refresh, tt.latest); got != tt.want {
			t.Errorf("InRepeatedErrorState(%v, %v) = %v", tt.refresh != nil, tt.latest, got)
		}
	}
}

func TestPairStatusAfter(t *testing.T) {
	for _, tt := range []struct {
		s    CCPairStatus
		a    IndexingStatus
		want CCPairStatus
	}{
		{CCPairScheduled, IndexInProgress, CCPairInitialIndexing},
		{CCPairInitialIndexing, IndexSuccess, CCPairActive},
		{CCPairInitialIndexing, IndexCompletedWithErrors, CCPairActive},
		{CCPairInitialIndexing, IndexFailed, CCPairInitialIndexing},
		{CCPairPaused, IndexSuccess, CCPairPaused},
		{CCPairActive, IndexInProgress, CCPairActive},
	} {
		if got := PairStatusAfter(tt.s, tt.a); got != tt.want {
			t.Errorf("PairStatusAfter(%s, %s) = %s, want %s", tt.s, tt.a, got, tt.want)
		}
	}
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ts := func(s string) *Time {
		v, _ := time.Parse(time.RFC3339, s)
		return &Time{v}
	}
	epoch := "1970-01-01T00:00:00Z"
	cp := json.RawMessage(`{"page":3}`)
	failed := &IndexAttempt{Status: IndexFailed, PollRangeStart: ts(epoch), PollRangeEnd: ts("2026-11-21T09:00:00Z"), Checkpoint: cp}
	for _, tt := range []struct {
		name             string
		f                PollFacts
		start, end, want string
	}{
		{"first run", PollFacts{}, epoch, "2026-11-21T10:00:00Z", ""},
		{"after a success: 30 minutes before its end", PollFacts{LastSuccessEnd: ts("2026-11-21T08:00:00Z"),
			Recent: []*IndexAttempt{{Status: IndexSuccess, PollRangeEnd: ts("2026-11-21T08:00:00Z")}}}, "2026-11-21T07:30:00Z", "2026-11-21T10:00:00Z", ""},
		{"indexing_start bounds the first window", PollFacts{IndexingStart: ts("2026-01-01T00:00:00Z")}, "2025-12-31T23:30:00Z", "2026-11-21T10:00:00Z", ""},
		{"after a failure: its window and checkpoint", PollFacts{Recent: []*IndexAttempt{failed}}, epoch, "2026-11-21T09:00:00Z", `{"page":3}`},
		{"from the beginning: no checkpoint", PollFacts{FromBeginning: true, LastSuccessEnd: ts("2026-11-21T08:00:00Z"),
			Recent: []*IndexAttempt{failed}}, epoch, "2026-11-21T09:00:00Z", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.f.Plan(now)
			if p.Start.String() != tt.start || p.End.String() != tt.end || string(p.Checkpoint) != tt.want {
				t.Errorf("plan %s – %s from %s, want %s – %s from %s", p.Start, p.End, p.Checkpoint, tt.start, tt.end, tt.want)
			}
		})
	}
	// Fifty failures in a row without a document: start afresh.
	var none []*IndexAttempt
	for range RecentAttemptsConsidered {
		none = append(none, failed)
	}
	if p := (&PollFacts{Recent: none}).Plan(now); p.Checkpoint != nil {
		t.Errorf("a checkpoint after %d attempts without progress: %s", RecentAttemptsConsidered, p.Checkpoint)
	}
}

func TestRunOncePairs(t *testing.T) {
	a, b := &CCPair{ID: 1, CredentialID: 10}, &CCPair{ID: 2, CredentialID: 20}
	if got, err := RunOncePairs([]*CCPair{a, b}, nil); err != nil || len(got) != 2 {
		t.Errorf("all: %v %v", got, err)
	}
	if got, err := RunOncePairs([]*CCPair{a, b}, []int64{20, 20}); err != nil || len(got) != 1 || got[0] != b {
		t.Errorf("one: %v %v", got, err)
	}
	if _, err := RunOncePairs([]*CCPair{a}, []int64{30}); ErrorMessage(err) != "Not all specified credentials are associated with connector" {
		t.Errorf("unknown credential: %v", err)
	}
	if _, err := RunOncePairs(nil, nil); ErrorMessage(err) != "Connector has no valid credentials, cannot create index attempts." {
		t.Errorf("no pair: %v", err)
	}
}

func TestFinishOutcome(t *testing.T) {
	for _, tt := range []struct {
		f      Finish
		errors int64
		want   IndexingStatus
	}{
		{Finish{Status: IndexSuccess}, 0, IndexSuccess},
		{Finish{Status: IndexSuccess}, 2, IndexCompletedWithErrors},
		{Finish{Status: IndexFailed}, 2, IndexFailed},
	} {
		if got := tt.f.Outcome(tt.errors); got != tt.want {
			t.Errorf("Outcome(%v, %d) = %s", tt.f.Status, tt.errors, got)
		}
	}
	if err := (&Finish{Status: IndexNotStarted}).CheckFinish(); ErrorCode(err) != EINVALID {
		t.Errorf("finishing as not_started: %v", err)
	}
}

func TestErrorStateAfter(t *testing.T) {
	hour := int64(3600)
	f := IndexFailed
	five := []IndexingStatus{f, f, f, f, f}
	for _, tt := range []struct {
		was    bool
		status IndexingStatus
		latest []IndexingStatus
		want   bool
	}{
		{false, IndexFailed, five, true},
		{true, IndexSuccess, nil, false},
		{true, IndexCompletedWithErrors, nil, false},
		{true, IndexInterrupted, []IndexingStatus{IndexInterrupted, f, f, f, f}, true}, // Only a success takes it out.
		{true, IndexCanceled, nil, true},
		{false, IndexFailed, five[:4], false},
	} {
		if got := ErrorStateAfter(tt.was, tt.status, &hour, tt.latest); got != tt.want {
			t.Errorf("ErrorStateAfter(%v, %s, %v) = %v", tt.was, tt.status, tt.latest, got)
		}
	}
	if m := TriggerAfter(IndexInterrupted, "", 0); m == nil || *m != IndexUpdate {
		t.Errorf("an interrupted attempt is not resumed: %v", m)
	}
	if m := TriggerAfter(IndexFailed, "", 0); m != nil {
		t.Errorf("a failed attempt asks for a run: %v", *m)
	}
	for lost, want := range map[int]bool{1: true, MaxLostLeasesInARow - 1: true, MaxLostLeasesInARow: false, MaxLostLeasesInARow + 4: false} {
		if m := TriggerAfter(IndexInterrupted, StopLeaseExpired, lost); (m != nil) != want {
			t.Errorf("the %d-th attempt in a row whose worker was lost: resumed at once %v, want %v", lost, m != nil, want)
		}
	}
	// A worker's revocation or shutdown is no lost lease, however many.
	if m := TriggerAfter(IndexInterrupted, "", 10); m == nil {
		t.Errorf("an interrupted attempt after lost ones is not resumed")
	}
}

func TestExpiredLease(t *testing.T) {
	if f := ExpiredLease(&IndexAttempt{}); f.Status != IndexInterrupted || f.Reason != StopLeaseExpired || f.ErrorMsg == nil {
		t.Errorf("an expired lease ends %+v, want interrupted: lease_expired, with its message", f)
	}
	if f := ExpiredLease(&IndexAttempt{CancellationRequested: true}); f.Status != IndexCanceled || f.Reason != "" {
		t.Errorf("an expired lease of an attempt asked to stop ends %+v, want canceled", f)
	}
	// Not the source's failure: no repeated error state, even without a
	// refresh frequency (one failure would do).
	if ErrorStateAfter(false, IndexInterrupted, nil, []IndexingStatus{IndexInterrupted}) {
		t.Errorf("a lost worker put the pair in the repeated error state")
	}
}

func TestCredentialBackoff(t *testing.T) {
	for _, tt := range []struct {
		refresh  int64
		refusals int
		want     time.Duration
	}{
		{600, 1, 10 * time.Minute},
		{600, 2, 20 * time.Minute},
		{600, 4, 80 * time.Minute},
		{600, 9, 24 * time.Hour}, // 2,560 minutes: capped.
		{86400 * 2, 1, 24 * time.Hour},
		{600, 1000, 24 * time.Hour},
	} {
		if got := CredentialBackoff(tt.refresh, tt.refusals); got != tt.want {
			t.Errorf("CredentialBackoff(%d, %d) = %s, want %s", tt.refresh, tt.refusals, got, tt.want)
		}
	}
	at := func(m int) *Time { return &Time{time.Date(2026, 11, 21, 10, m, 0, 0, time.UTC)} }
	refused := func(m int) *IndexAttempt { return &IndexAttempt{StopReason: StopCredentialRefused, TimeStarted: at(m)} }
	ended := []*IndexAttempt{refused(30), refused(20), {Status: IndexSuccess, TimeStarted: at(10)}, refused(5)}
	if n := CredentialRefusals(ended, *at(0)); n != 2 {
		t.Errorf("%d refusals in a row, want the 2 since the success", n)
	}
	if n := CredentialRefusals(ended, *at(25)); n != 1 {
		t.Errorf("%d refusals since the credential changed, want 1", n)
	}
	lost := &IndexAttempt{StopReason: StopLeaseExpired}
	if n := LostLeasesInARow([]*IndexAttempt{lost, lost, refused(1), lost}); n != 2 {
		t.Errorf("%d lost leases in a row, want 2", n)
	}
}

func TestFinishStopReasons(t *testing.T) {
	for _, tt := range []struct {
		f    Finish
		want IndexingStatus // "" for refused
	}{
		{Finish{Status: IndexFailed, Reason: StopNoConnector}, IndexCanceled},
		{Finish{Status: IndexFailed, Reason: StopCredentialRefused}, IndexFailed},
		{Finish{Status: IndexSuccess, Reason: StopNoConnector}, ""},
		{Finish{Status: IndexFailed, Reason: StopLeaseExpired}, ""}, // The server's to say.
		{Finish{Status: IndexFailed, Reason: "other"}, ""},
	} {
		err := tt.f.CheckFinish()
		switch {
		case tt.want == "" && ErrorCode(err) != EINVALID:
			t.Errorf("CheckFinish(%+v) = %v, want a refusal", tt.f, err)
		case tt.want != "" && err != nil:
			t.Errorf("CheckFinish(%+v) = %v", tt.f, err)
		case tt.want != "" && tt.f.Outcome(0) != tt.want:
			t.Errorf("Outcome(%+v) = %s, want %s", tt.f, tt.f.Outcome(0), tt.want)
		}
	}
	// The reasons a worker may give are the StopReasons it can tell.
	if got := (WorkerStopReason("")).EnumValues(); !slices.Equal(got, []string{string(StopNoConnector), string(StopCredentialRefused)}) {
		t.Errorf("WorkerStopReason's values %q", got)
	}
	if !RetryOnResume(CCPairInvalid, CCPairActive) || RetryOnResume(CCPairPaused, CCPairActive) || RetryOnResume(CCPairInvalid, CCPairPaused) {
		t.Errorf("only the resume of an INVALID pair asks for a run")
	}
	if RetryOnCredentialEdit(nil) || RetryOnCredentialEdit(&IndexAttempt{Status: IndexFailed}) ||
		!RetryOnCredentialEdit(&IndexAttempt{Status: IndexCanceled, StopReason: StopCredentialRefused}) {
		t.Errorf("only a pair whose credential was refused is run when it is edited")
	}
	if !StopNoConnector.Invalidates() || StopCredentialRefused.Invalidates() || StopLeaseExpired.Invalidates() {
		t.Errorf("only a source without a connector makes its pair INVALID")
	}
}

func TestConnectorFailureCheck(t *testing.T) {
	at := &Time{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	long := strings.Repeat("x", MaxDocumentIDBytes+1)
	link := strings.Repeat("l", 2049)
	for _, tt := range []struct {
		f  ConnectorFailure
		ok bool
	}{
		{ConnectorFailure{FailedDocument: &DocumentFailure{DocumentID: "d"}}, true},
		{ConnectorFailure{FailedEntity: &EntityFailure{EntityID: "e", MissedTimeRange: []*Time{at, at}}}, true},
		{ConnectorFailure{FailedEntity: &EntityFailure{EntityID: "e"}}, true},
		{ConnectorFailure{}, false},
		{ConnectorFailure{FailedDocument: &DocumentFailure{DocumentID: "d"}, FailedEntity: &EntityFailure{EntityID: "e"}}, false},
		{ConnectorFailure{FailedDocument: &DocumentFailure{DocumentID: " "}}, false},
		{ConnectorFailure{FailedDocument: &DocumentFailure{DocumentID: long}}, false},
		{ConnectorFailure{FailedDocument: &DocumentFailure{DocumentID: "d", DocumentLink: &link}}, false},
		{ConnectorFailure{FailedEntity: &EntityFailure{EntityID: "e", MissedTimeRange: []*Time{at}}}, false},
		{ConnectorFailure{FailedEntity: &EntityFailure{EntityID: "e", MissedTimeRange: []*Time{at, nil}}}, false},
	} {
		if err := tt.f.Check(); (err == nil) != tt.ok {
			t.Errorf("%+v: %v", tt.f, err)
		}
	}
}

func TestClipTrace(t *testing.T) {
	s := strings.Repeat("é", MaxTraceBytes) // Two bytes each.
	got := ClipTrace(s)
	if !strings.HasPrefix(got, "…") || len(got) > MaxTraceBytes+len("…") || !utf8.ValidString(got) {
		t.Errorf("ClipTrace: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if ClipTrace("short") != "short" {
		t.Error("a short trace is clipped")
	}
}
