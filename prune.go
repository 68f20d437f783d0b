package quarry

import "time"

// Pruning, as Onyx v4.6.1 does it: a pair's documents that its source no
// longer has are deleted. A prune is an index attempt of kind AttemptPrune:
// the scheduler makes it when the pair is due (PruneFacts.NextPruneAt), or
// at once when a person asks (POST /manage/admin/cc-pair/{id}/prune); a
// worker leases it as any attempt, lists the ids its connector's source
// still has (connector.Slim), and its success deletes the pair's documents
// the listing did not name, except those pushed through the ingestion API
// and those written since the prune started (an attempt that ran before
// may have brought them after the source listed its ids), then sets the
// pair's last_pruned. At most one attempt of a pair, of either kind, is live at a
// time, so that a prune never races an indexing run of the same pair.

// AttemptKind is what an index attempt does.
type AttemptKind string

// The kinds of attempts.
const (
	AttemptIndex AttemptKind = "index" // Fetches documents: Onyx's index attempt.
	AttemptPrune AttemptKind = "prune" // Lists the source's ids and deletes the documents it no longer has.
)

// EnumValues returns every AttemptKind.
func (AttemptKind) EnumValues() []string {
	return []string{"index", "prune", "permission_sync", "group_sync"}
}

// PruneFacts are what decides when a pair is next due for a prune.
type PruneFacts struct {
	Source    DocumentSource
	Status    CCPairStatus
	Requested bool   // A person asked for a prune.
	PruneFreq *int64 // The connector's prune frequency, in seconds.
	// LastSuccessfulIndex is when the pair's last successful indexing
	// ended; nil if it never had one.
	LastSuccessfulIndex *Time
	// LastPruneEnded is when its latest prune ended, whether it succeeded
	// or not; nil if it never had one.
	LastPruneEnded   *Time
	ConnectorCreated Time // When its connector was made.
}

// NextPruneAt returns when the pair is next due for a prune, or nil if it
// is not until something changes; a time in the past means now. It is
// Onyx's _is_pruning_due turned into a time: never a pair of a source that
// is not indexed (the ingestion API's documents are pushed, and only their
// sender removes them), nor one paused, deleting or invalid; a prune asked
// for is due at once; otherwise only an ACTIVE pair with a prune frequency
// that was indexed successfully at least once is, prune_freq seconds after
// its last prune ended, or after its connector was made if it was never
// pruned. Unlike Onyx, which retries a failed prune at once, a failed
// prune waits prune_freq like a successful one, so that a source that
// cannot be listed is not listed again every pass of the scheduler.
// That a prune waits while the pair has a live attempt is the store's to
// hold.
func (f *PruneFacts) NextPruneAt() *Time {
	epoch := TimeFromMicros(0)
	switch {
	case !Indexable(f.Source) || !f.Status.Active():
		return nil
	case f.Requested:
		return &epoch
	case f.PruneFreq == nil || *f.PruneFreq <= 0 || f.Status != CCPairActive || f.LastSuccessfulIndex == nil:
		return nil
	}
	base := f.ConnectorCreated
	if f.LastPruneEnded != nil {
		base = *f.LastPruneEnded
	}
	t := Time{base.Add(time.Duration(*f.PruneFreq) * time.Second)}
	return &t
}

// ErrPruneInProgress is Onyx's answer (409) to a prune asked for while one
// of the pair is already waiting or running.
var ErrPruneInProgress = Errorf(ECONFLICT, "Pruning task already in progress.")

// ErrNotPrunable answers a prune asked for a pair whose documents are
// pushed to it (the ingestion API): there is no source to list.
var ErrNotPrunable = Errorf(EINVALID, "This cc-pair's documents are pushed through the ingestion API; there is no source to prune them against.")

// ErrNoSlimListing is the error of a prune of a source whose connector
// cannot list its documents' ids.
func ErrNoSlimListing(source DocumentSource) error {
	return Errorf(EINVALID, "The %s connector cannot list the ids of its documents, so its cc-pairs cannot be pruned", source)
}

// ErrPruneNotFound is Onyx's answer (400) to a prune asked for a pair the
// caller cannot see.
var ErrPruneNotFound = Errorf(EINVALID, "Connection not found for current user's permissions")

// ErrLastPrunedNotFound is Onyx's answer (400) to last_pruned of a pair
// the caller cannot see.
var ErrLastPrunedNotFound = Errorf(EINVALID, "cc_pair not found for current user's permissions")

// PruneReport is what a pair's page says of its pruning: Quarry's
// extension of Onyx's CCPairFullInfo, named after its fields of
// permission syncing, so that a prune that cannot run says why on the
// page rather than in a server's log.
type PruneReport struct {
	Pruning      bool            // A prune is asked for, waits or runs.
	LastStatus   *IndexingStatus // The newest prune's state; nil if none.
	LastFinished *Time           // When the newest prune ended; nil if it has not.
	LastError    *string         // Why the newest prune ended without success, in its own words; nil if it did not.
}

// ReportPrune returns the PruneReport of a pair for which a prune is
// requested (asked for, not yet made) or not, whose newest prune is
// latest (nil if none): its status, error_msg and time_updated.
func ReportPrune(requested bool, latest *IndexAttempt) PruneReport {
	r := PruneReport{Pruning: requested}
	if latest == nil {
		return r
	}
	r.LastStatus = &latest.Status
	if latest.Status.Live() {
		r.Pruning = true
		return r
	}
	r.LastFinished = &latest.TimeUpdated
	if !latest.Status.Successful() {
		r.LastError = latest.ErrorMsg
	}
	return r
}
