package quarry

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// Indexing, as Onyx v4.6.1 keeps it: a pair is indexed by index attempts,
// each one run of its connector, which the scheduler makes when the pair is
// due and a worker leases, runs and reports on. The rules of when a pair is
// due, which poll window and checkpoint an attempt starts from, how an
// attempt may change and when a pair is in a repeated error state are
// here; store/indexing.go keeps the rows and asks them.

// IndexingStatus is the state of an index attempt: Onyx's IndexingStatus.
type IndexingStatus string

// The states of an index attempt.
const (
	IndexNotStarted          IndexingStatus = "not_started"           // Made by the scheduler, waiting for a worker.
	IndexInProgress          IndexingStatus = "in_progress"           // Leased by a worker.
	IndexSuccess             IndexingStatus = "success"               // Finished, every document taken.
	IndexCompletedWithErrors IndexingStatus = "completed_with_errors" // Finished, with per-document errors.
	IndexFailed              IndexingStatus = "failed"                // Stopped by an error, or by a lease not renewed.
	IndexCanceled            IndexingStatus = "canceled"              // Stopped because its pair was paused or deleted.
	IndexInterrupted         IndexingStatus = "interrupted"           // Stopped by its worker's shutdown: not a failure.
)

// EnumValues returns every IndexingStatus, in Onyx's order.
func (IndexingStatus) EnumValues() []string {
	return []string{"not_started", "in_progress", "success", "canceled", "interrupted", "failed", "completed_with_errors"}
}

// Live reports whether an attempt in state s has yet to end.
func (s IndexingStatus) Live() bool { return s == IndexNotStarted || s == IndexInProgress }

// Successful reports whether an attempt that ended in state s took its
// documents: success, or completed with errors.
func (s IndexingStatus) Successful() bool { return s == IndexSuccess || s == IndexCompletedWithErrors }

// ReusesCheckpoint reports whether the attempt after one that ended in state
// s goes on from its checkpoint and poll window, as Onyx's
// should_reuse_checkpoint: it stopped before finishing (failed, canceled or
// interrupted).
func (s IndexingStatus) ReusesCheckpoint() bool {
	return s == IndexFailed || s == IndexCanceled || s == IndexInterrupted
}

// IndexingMode is a run that a person asked for (run-once): Onyx's
// IndexingMode, kept on the pair as its indexing_trigger until the
// scheduler makes the attempt.
type IndexingMode string

// The indexing modes.
const (
	IndexUpdate  IndexingMode = "update"  // From where the last run left off.
	IndexReindex IndexingMode = "reindex" // From the beginning.
)

// IndexAttempt is one run of a pair's connector: Onyx's IndexAttempt.
type IndexAttempt struct {
	ID                    int64
	CCPairID              int64
	Status                IndexingStatus
	FromBeginning         bool
	NewDocsIndexed        int64 // Documents the pair did not have.
	TotalDocsIndexed      int64 // Documents written: new or changed.
	DocsRemovedFromIndex  int64
	CompletedBatches      int64
	PollRangeStart        *Time
	PollRangeEnd          *Time
	Checkpoint            json.RawMessage // The connector's last checkpoint, nil before the first.
	CheckpointAt          *Time
	ErrorMsg              *string
	FullExceptionTrace    *string
	CancellationRequested bool
	WorkerID              *int64
	LeaseExpiresAt        *Time
	HeartbeatCounter      int64
	LastHeartbeatTime     *Time
	ErrorCount            int64      // Its per-document errors.
	StopReason            StopReason // Why it stopped, when it was not its source's failure.
	TimeCreated           Time
	TimeStarted           *Time
	TimeUpdated           Time
}

// IndexAttemptError is a document or an entity that an attempt could not
// take: Onyx's IndexAttemptError. A later successful attempt of the pair
// resolves it.
type IndexAttemptError struct {
	ID                   int64   `json:"id"`
	CCPairID             int64   `json:"connector_credential_pair_id"`
	DocumentID           *string `json:"document_id"`
	DocumentLink         *string `json:"document_link"`
	EntityID             *string `json:"entity_id"`
	FailedTimeRangeStart *Time   `json:"failed_time_range_start"`
	FailedTimeRangeEnd   *Time   `json:"failed_time_range_end"`
	FailureMessage       string  `json:"failure_message"`
	IsResolved           bool    `json:"is_resolved"`
	TimeCreated          Time    `json:"time_created"`
	IndexAttemptID       int64   `json:"index_attempt_id"`
	ErrorType            *string `json:"error_type"`
}

// Limits on what a worker reports, so that a connector gone wrong cannot
// fill the database: a longer text is clipped (ClipText), a larger
// checkpoint refused.
const (
	MaxCheckpointBytes   = 64 << 10 // A checkpoint, as JSON.
	MaxErrorMessageBytes = 4 << 10  // An attempt's error_msg, and a per-document failure's message.
	MaxTraceBytes        = 16 << 10 // An attempt's full_exception_trace.
	MaxBatchDocuments    = 1000     // Documents in one progress report.
	MaxBatchFailures     = 1000     // Per-document failures in one progress report.
)

// Errors of the indexing rules.
var (
	ErrCheckpointTooLarge = Errorf(EINVALID, "A checkpoint may hold at most %d bytes of JSON", MaxCheckpointBytes)
	ErrBatchTooLarge      = Errorf(EINVALID, "A progress report may hold at most %d documents and %d failures", MaxBatchDocuments, MaxBatchFailures)
	ErrCheckpointHasMore  = Errorf(EINVALID, "A checkpoint is an object with a boolean has_more, as Onyx's ConnectorCheckpoint")
)

// ErrDocumentTooLarge answers a document over MaxDocumentBytes: a worker
// reports it as a per-document failure instead.
func ErrDocumentTooLarge(id string) error {
	return Errorf(EINVALID, "Document %s holds more than %d bytes of JSON", ClipText(id, 80), MaxDocumentBytes)
}

// PollConnectorOffset is how far back a poll window reaches before the end
// of the last successful one: Onyx's POLL_CONNECTOR_OFFSET (30 minutes), so
// that documents changed while that attempt ran are seen.
const PollConnectorOffset = 30 * time.Minute

// RepeatedErrorsBeforeErrorState is how many failed attempts in a row put
// a pair with a refresh frequency into the repeated error state: Onyx's
// NUM_REPEAT_ERRORS_BEFORE_REPEATED_ERROR_STATE. A pair without one needs a
// single failure.
const RepeatedErrorsBeforeErrorState = 5

// ErrorStateRun returns how many failed attempts in a row put a pair into
// the repeated error state, given its connector's refresh frequency.
func ErrorStateRun(refreshFreq *int64) int {
	if refreshFreq == nil {
		return 1
	}
	return RepeatedErrorsBeforeErrorState
}

// InRepeatedErrorState reports whether a pair is in the repeated error
// state: its latest attempts that ended (newest first) are at least
// ErrorStateRun(refreshFreq) failures in a row. Onyx's
// is_in_repeated_error_state.
func InRepeatedErrorState(refreshFreq *int64, latest []IndexingStatus) bool {
	n := ErrorStateRun(refreshFreq)
	if len(latest) < n {
		return false
	}
	for _, s := range latest[:n] {
		if s != IndexFailed {
			return false
		}
	}
	return true
}

// Indexable reports whether pairs of connectors reading source are ever
// indexed by the scheduler: not the ingestion API (documents are pushed to
// it) nor not_applicable.
func Indexable(source DocumentSource) bool {
	return source != "ingestion_api" && source != "not_applicable"
}

// IndexFacts are what decides when a pair is next due for indexing.
type IndexFacts struct {
	Source      DocumentSource
	Status      CCPairStatus
	Trigger     *IndexingMode // A run a person asked for.
	RefreshFreq *int64        // The connector's refresh frequency, in seconds.
	// LastAttemptUpdated is when the pair's latest attempt last changed;
	// nil if it never had one.
	LastAttemptUpdated *Time
	// RepeatedErrors is whether its latest attempts failed in a row
	// (InRepeatedErrorState).
	RepeatedErrors bool
	// Refusals is how many of its latest attempts in a row the source
	// refused the credential of (CredentialRefusals).
	Refusals int
}

// NextIndexAt returns when the pair is next due for an attempt, or nil if
// it is not due until something changes (a run asked for, a resume, a new
// refresh frequency). A time in the past means now. It is Onyx's
// should_index turned into a time: a pair is never indexed while paused,
// deleting or invalid, nor from the ingestion API; a run asked for is due at
// once, and so is a pair never indexed; then, without a refresh frequency,
// never; a pair whose credential its source refused waits
// CredentialBackoff after its latest attempt; a pair still in its initial
// indexing is due at once unless its attempts keep failing; else
// refresh_freq seconds after its latest attempt changed. That no two
// attempts of a pair are live at once is the store's to hold.
func (f *IndexFacts) NextIndexAt() *Time {
	epoch := TimeFromMicros(0)
	switch {
	case !Indexable(f.Source) || !f.Status.Active():
		return nil
	case f.Trigger != nil, f.LastAttemptUpdated == nil:
		return &epoch
	case f.RefreshFreq == nil:
		return nil
	case f.Refusals > 0:
		t := Time{f.LastAttemptUpdated.Add(CredentialBackoff(*f.RefreshFreq, f.Refusals))}
		return &t
	case f.Status == CCPairInitialIndexing && !f.RepeatedErrors:
		return &epoch
	}
	t := Time{f.LastAttemptUpdated.Add(time.Duration(*f.RefreshFreq) * time.Second)}
	return &t
}

// PollFacts are what decides the poll window and the checkpoint an attempt
// starts from, read when a worker leases it.
type PollFacts struct {
	FromBeginning  bool
	IndexingStart  *Time // The connector's indexing_start.
	LastSuccessEnd *Time // The poll_range_end of the pair's latest successful (status success) attempt.
	// Recent are the pair's attempts that ended, newest first (at most
	// RecentAttemptsConsidered), with their checkpoints.
	Recent []*IndexAttempt
}

// RecentAttemptsConsidered is how many ended attempts the choice of a
// checkpoint looks at: Onyx's _NUM_RECENT_ATTEMPTS_TO_CONSIDER.
const RecentAttemptsConsidered = 50

// PollPlan is where an attempt starts: its poll window and the checkpoint
// it resumes from (nil: the connector's first).
type PollPlan struct {
	Start, End Time
	Checkpoint json.RawMessage
}

// Plan returns the poll window and checkpoint of an attempt leased at now,
// as Onyx's docfetching task works them out. The window starts
// PollConnectorOffset before the end of the latest successful attempt's
// (or at the connector's indexing_start, or the epoch), or at those alone
// when from the beginning; it ends now, unless the latest ended attempt
// stopped before finishing (ReusesCheckpoint), whose window it keeps. The
// checkpoint is the connector's first when from the beginning or after a
// success; else that of the newest ended attempt with the same window that
// stopped before finishing, unless the latest RecentAttemptsConsidered
// attempts all failed without taking a document.
func (f *PollFacts) Plan(now time.Time) PollPlan {
	last := time.Unix(0, 0) // The epoch, as Onyx's 0.
	switch {
	case !f.FromBeginning && f.LastSuccessEnd != nil:
		last = f.LastSuccessEnd.Time // Even before indexing_start, as Onyx.
	case f.IndexingStart != nil:
		last = f.IndexingStart.Time
	}
	var p PollPlan
	p.Start = TimeFromMicros(0)
	// Onyx compares the seconds of the end with the offset's minutes (30):
	// any real time passes.
	if last.Unix() > int64(PollConnectorOffset/time.Minute) {
		p.Start = Time{last.Add(-PollConnectorOffset).UTC()}
	}
	p.End = Time{now.UTC()}
	var latest *IndexAttempt
	if len(f.Recent) > 0 {
		latest = f.Recent[0]
	}
	if latest != nil && latest.PollRangeEnd != nil && latest.Status.ReusesCheckpoint() {
		p.End = *latest.PollRangeEnd
	}
	if f.FromBeginning || (latest != nil && latest.Status.Successful()) {
		return p
	}
	if len(f.Recent) >= RecentAttemptsConsidered {
		progress := false
		for _, a := range f.Recent {
			if a.TotalDocsIndexed > 0 || a.Status.Successful() {
				progress = true
				break
			}
		}
		if !progress {
			return p
		}
	}
	for _, a := range f.Recent {
		if a.PollRangeStart != nil && a.PollRangeEnd != nil && a.PollRangeStart.Equal(p.Start.Time) &&
			a.PollRangeEnd.Equal(p.End.Time) && a.Status.ReusesCheckpoint() && a.Checkpoint != nil {
			p.Checkpoint = a.Checkpoint
			break
		}
	}
	return p
}

// Finish is how a worker ends the attempt it holds.
type Finish struct {
	Status             IndexingStatus // success, failed, canceled or interrupted.
	ErrorMsg           *string
	FullExceptionTrace *string
	// Reason says why the attempt stopped when it is not its source's
	// failure (a worker reports it with failed).
	Reason StopReason
}

// CheckFinish reports why a worker may not end an attempt with f.
func (f *Finish) CheckFinish() error {
	switch {
	case f.Reason != "" && (f.Status != IndexFailed || (f.Reason != StopNoConnector && f.Reason != StopCredentialRefused)):
		return Errorf(EINVALID, "An attempt that stops for %s ends as failed, not %s", f.Reason, f.Status)
	case f.Status == IndexSuccess, f.Status == IndexFailed, f.Status == IndexCanceled, f.Status == IndexInterrupted:
		return nil
	}
	return Errorf(EINVALID, "An attempt ends as success, failed, canceled or interrupted, not %s", f.Status)
}

// Outcome returns the state an attempt that recorded errors per-document
// errors ends in when its worker finishes it with f: a success with errors
// completed with errors; an attempt that failed for want of a connector
// canceled, as Onyx ends one on its ConnectorValidationError: no fault of
// the source or its credential, so that it counts toward no repeated error
// state. An attempt whose source refused its credential stays failed (its
// credential is at fault; issue 43), its later attempts backing off
// (StopCredentialRefused).
func (f *Finish) Outcome(errors int64) IndexingStatus {
	switch {
	case f.Status == IndexSuccess && errors > 0:
		return IndexCompletedWithErrors
	case f.Status == IndexFailed && f.Reason == StopNoConnector:
		return IndexCanceled
	}
	return f.Status
}

// ExpiredLease returns how an attempt whose lease expired ends: canceled
// if a pause had asked it to stop, else interrupted (StopLeaseExpired):
// a lost worker is not the source's failure, and a new attempt resumes
// from the checkpoint (TriggerAfter).
func ExpiredLease(a *IndexAttempt) Finish {
	if a.CancellationRequested {
		return Finish{Status: IndexCanceled}
	}
	msg := ErrNoHeartbeat
	return Finish{Status: IndexInterrupted, ErrorMsg: &msg, Reason: StopLeaseExpired}
}

// RevokedWorker returns how an attempt whose worker was revoked ends:
// interrupted (the next attempt resumes from its checkpoint, at once:
// TriggerAfter).
func RevokedWorker(*IndexAttempt) Finish {
	msg := "The worker running this attempt was revoked."
	return Finish{Status: IndexInterrupted, ErrorMsg: &msg}
}

// ErrorStateAfter returns whether a pair is in the repeated error state
// after one of its attempts ended in status, given whether it was before
// and its latest ended attempts (newest first, InRepeatedErrorState): a
// success takes it out, a run of failures puts it in, anything else
// (canceled, interrupted) leaves it as it was. Onyx clears it only on
// success.
func ErrorStateAfter(was bool, status IndexingStatus, refreshFreq *int64, latest []IndexingStatus) bool {
	switch {
	case status.Successful():
		return false
	case InRepeatedErrorState(refreshFreq, latest):
		return true
	}
	return was
}

// TriggerAfter returns the indexing trigger a pair gets when one of its
// attempts ends in status for reason, lost being how many of its latest
// attempts in a row, this one included, lost their worker
// (LostLeasesInARow): an interrupted attempt (its worker stopped, was
// revoked or was lost) is resumed at once from its checkpoint, whatever
// the pair's refresh frequency, unless MaxLostLeasesInARow attempts in a
// row lost their worker; nil leaves the trigger as it is.
func TriggerAfter(status IndexingStatus, reason StopReason, lost int) *IndexingMode {
	if status == IndexInterrupted && (reason != StopLeaseExpired || lost < MaxLostLeasesInARow) {
		m := IndexUpdate
		return &m
	}
	return nil
}

// ErrPairNotFoundForUser is Onyx's answer when a person asks for the
// attempts (or errors, or documents) of a pair they cannot see.
var ErrPairNotFoundForUser = Errorf(EINVALID, "CC Pair not found for current user permissions")

// ErrConnectorNotFoundForRun is Onyx's run-once answer for a connector
// that does not exist (or that the caller cannot see).
func ErrConnectorNotFoundForRun(id int64) error {
	return Errorf(ENOTFOUND, "Connector by id %d does not exist.", id)
}

// ClipTrace keeps the end of a long exception trace, where its cause is,
// within MaxTraceBytes, cut between characters.
func ClipTrace(s string) string {
	if len(s) <= MaxTraceBytes {
		return s
	}
	i := len(s) - MaxTraceBytes
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

// ErrAttemptNotHeld is the answer to a worker's report on an attempt it
// does not hold, or that has ended: nothing is changed.
func ErrAttemptNotHeld(id int64) error {
	return Errorf(ECONFLICT, "Index attempt %d is not held by this worker", id)
}

// PairStatusAfter returns the status a pair in status s takes when one of
// its attempts changes to a: the first attempt to start moves a scheduled
// pair to INITIAL_INDEXING, the first success makes it ACTIVE; any other
// status stays.
func PairStatusAfter(s CCPairStatus, a IndexingStatus) CCPairStatus {
	switch {
	case s == CCPairScheduled && a == IndexInProgress:
		return CCPairInitialIndexing
	case (s == CCPairScheduled || s == CCPairInitialIndexing) && a.Successful():
		return CCPairActive
	}
	return s
}

// WithholdFigures zeroes a's figures of documents (new, written,
// removed): what counts the whole pair's documents, shown only to those
// who see the whole pair (Caller.SeesWholePair).
func (a *IndexAttempt) WithholdFigures() {
	a.NewDocsIndexed, a.TotalDocsIndexed, a.DocsRemovedFromIndex = 0, 0, 0
}

// CheckpointDescription says where attempt a's connector has got to, for
// a pair's page (Onyx's latest_checkpoint_description, which Onyx always
// leaves null): when it last reported a checkpoint, or nil if it has not.
func (a *IndexAttempt) CheckpointDescription() *string {
	if a == nil || a.CheckpointAt == nil {
		return nil
	}
	d := "Attempt " + strconv.FormatInt(a.ID, 10) + " saved its checkpoint at " + a.CheckpointAt.String()
	return &d
}

// ModelName returns the Python class name pydantic prints for the type.
func (IndexingStatus) ModelName() string { return "IndexingStatus" }
