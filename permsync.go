package quarry

import (
	"time"
)

// Permission syncing, as Onyx v4.6.1's Enterprise document and group syncs
// do it (backend/ee/onyx/background/celery/tasks/doc_permission_syncing,
// …/external_group_syncing): the documents of a pair of access type sync
// are open to whom their source says. A permission sync is an index
// attempt of kind AttemptPermissionSync: its worker lists every document
// of the source with its access (connector.PermissionSyncer), and its
// success replaces the access of each of the pair's documents it listed
// (the others keep theirs; no content changes). A group sync is one of
// kind AttemptGroupSync: its worker lists the source's groups with their
// members' emails (connector.GroupSyncer), and its success replaces the
// pair's external groups. A document's access that names a group
// ("group:<id>", ExternalAccess.Principals) opens it to the people whose
// email is among that group's members as the same pair last synced them.
// Each is made by the scheduler when the pair is due (SyncFacts.NextSyncAt)
// or at once when a person asks (POST /manage/admin/cc-pair/{id}/
// sync-permissions, …/sync-groups); like a prune, it waits while the pair
// has another live attempt.

// The kinds of attempts that sync permissions.
const (
	AttemptPermissionSync AttemptKind = "permission_sync" // Lists each document's access at the source: Onyx's doc sync.
	AttemptGroupSync      AttemptKind = "group_sync"      // Lists the source's groups and their members: Onyx's external group sync.
)

// Syncs reports whether k is a kind of attempt that syncs permissions.
func (k AttemptKind) Syncs() bool { return k == AttemptPermissionSync || k == AttemptGroupSync }

// SyncInterval returns how long after its last sync of kind k a sync pair
// of source is due for the next one, and whether Onyx v4.6.1 syncs that
// source that way at all: its default frequencies
// (backend/ee/onyx/configs/app_configs.py, the sources of
// external_permissions/sync_params.py). Sources Onyx does not sync are
// never synced by the scheduler; a person may still ask for a sync.
func SyncInterval(source DocumentSource, k AttemptKind) (time.Duration, bool) {
	const five, thirty = 5 * time.Minute, 30 * time.Minute
	doc := map[DocumentSource]time.Duration{
		"google_drive": five, "confluence": thirty, "jira": thirty, "canvas": thirty, "box": thirty, "slack": five,
		"gmail": five, "github": five, "mock_connector": five, "teams": five, "sharepoint": thirty,
	}
	group := map[DocumentSource]time.Duration{
		"google_drive": five, "confluence": thirty, "jira": thirty, "canvas": thirty, "box": five, "github": five, "sharepoint": five,
	}
	m := doc
	if k == AttemptGroupSync {
		m = group
	}
	d, ok := m[source]
	return d, ok
}

// SyncFacts are what decides when a pair is next due for a sync of Kind.
type SyncFacts struct {
	Kind       AttemptKind
	Source     DocumentSource
	Status     CCPairStatus
	AccessType AccessType
	Requested  bool // A person asked for a sync of Kind.
	// LastSuccessfulIndex is when the pair's last successful indexing
	// ended; nil if it never had one.
	LastSuccessfulIndex *Time
	// LastSyncEnded is when its latest sync of Kind ended, whether it
	// succeeded or not; nil if it never had one.
	LastSyncEnded *Time
}

// NextSyncAt returns when the pair is next due for a sync of f.Kind, or
// nil if it is not until something changes; a time in the past means now.
// It is Onyx's _is_external_doc_permissions_sync_due and
// _is_external_group_sync_due turned into a time: never a pair of a source
// that is not indexed (the ingestion API's documents are pushed with their
// access), nor one paused, deleting or invalid; a sync asked for is due at
// once, whatever the pair's access type (Onyx's routes do not ask); else
// only an ACTIVE pair of access type sync whose source Onyx syncs that way
// (SyncInterval), a permission sync once the pair was indexed
// successfully, at once if it never synced, else SyncInterval after its
// latest sync ended. Unlike Onyx, which counts from the latest success, a
// failed sync waits its interval too, as a failed prune does, so that a
// source that cannot be listed is not listed again every pass of the
// scheduler. That a sync waits while the pair has a live attempt is the
// store's to hold.
func (f *SyncFacts) NextSyncAt() *Time {
	epoch := TimeFromMicros(0)
	switch {
	case !Indexable(f.Source) || !f.Status.Active():
		return nil
	case f.Requested:
		return &epoch
	case f.Status != CCPairActive || f.AccessType != AccessSync:
		return nil
	case f.Kind == AttemptPermissionSync && f.LastSuccessfulIndex == nil:
		return nil
	}
	every, ok := SyncInterval(f.Source, f.Kind)
	if !ok {
		return nil
	}
	if f.LastSyncEnded == nil {
		return &epoch
	}
	t := Time{f.LastSyncEnded.Add(every)}
	return &t
}

// SourceChangedFields reports whether a change of a connector or a
// credential, whose fields changed names (ConnectorInput.ChangedFields,
// CredentialUpdate.Apply), changes where its pairs' syncs read from: the
// connector's source or connector_specific_config, or the credential's
// credential_json. What those pairs synced before was read from the old
// source: their external groups are dropped and their documents' access
// cleared, so that a sync pair's documents open to no one until its next
// permission sync (or indexing) says again who may read them, and the
// syncs the pair is due for after such a change are asked for at once
// (ResyncAfterSourceChange). Onyx v4.6.1 keeps them until the next sync.
func SourceChangedFields(fields []string) bool {
	for _, f := range fields {
		if f == "source" || f == "connector_specific_config" || f == "credential_json" {
			return true
		}
	}
	return false
}

// ResyncAfterSourceChange reports whether a pair of source and access
// type access is asked for a sync of kind k at once when where it reads
// from changed (SourceChangedFields): a sync pair, of a kind Onyx syncs
// its source by (SyncInterval).
func ResyncAfterSourceChange(source DocumentSource, access AccessType, k AttemptKind) bool {
	_, ok := SyncInterval(source, k)
	return ok && access == AccessSync && Indexable(source)
}

// ErrPermissionSyncInProgress is Onyx's answer (409) to a permission sync
// asked for while one of the pair is already waiting or running.
var ErrPermissionSyncInProgress = Errorf(ECONFLICT, "Permissions sync task already in progress.")

// ErrGroupSyncInProgress is Onyx's answer (409) to a group sync asked for
// while one of the pair is already waiting or running.
var ErrGroupSyncInProgress = Errorf(ECONFLICT, "External group sync task already in progress.")

// ErrNotSyncable answers a sync asked for a pair whose documents are
// pushed to it (the ingestion API): there is no source to sync from.
var ErrNotSyncable = Errorf(EINVALID, "This cc-pair's documents are pushed through the ingestion API; there is no source to sync their permissions from.")

// ErrNoSyncer is the error of a sync of kind k of a source whose connector
// cannot list what it needs: its documents' permissions, or its groups.
func ErrNoSyncer(source DocumentSource, k AttemptKind) error {
	if k == AttemptGroupSync {
		return Errorf(EINVALID, "The %s connector cannot list its source's groups, so its cc-pairs' groups cannot be synced", source)
	}
	return Errorf(EINVALID, "The %s connector cannot list its documents' permissions, so its cc-pairs' permissions cannot be synced", source)
}

// ErrSyncProgressKind answers a progress report of access or groups that
// does not fit its attempt's kind.
var ErrSyncProgressKind = Errorf(EINVALID, "A permission sync reports its documents' access and nothing else; a group sync reports groups and nothing else; other attempts report neither")

// Bounds of what a sync reports in one progress report.
const (
	MaxBatchAccess     = 1000 // Documents' access (or groups) in one report.
	MaxAccessEntries   = 1000 // Emails or group ids of one document (or emails of one group) in one report.
	MaxExternalIDBytes = 512  // A group's id.
	MaxEmailBytes      = 320  // An email address.
)

// DocumentAccess is one document's access as a permission sync reports it:
// Onyx's DocExternalAccess. A document may be reported several times in
// one sync (its emails split across reports): its access is their union.
type DocumentAccess struct {
	DocumentID     string         `json:"document_id"`
	ExternalAccess ExternalAccess `json:"external_access"`
}

// errTooManyEntries answers a document's access, or a group, that names
// more than MaxAccessEntries emails or groups in one report.
var errTooManyEntries = Errorf(EINVALID, "A document's access or a group in a progress report names at most %d emails or groups", MaxAccessEntries)

// CheckSyncBatch reports why a sync's access and groups cannot be kept:
// too many of them, or an id, a group or an email out of bounds.
func CheckSyncBatch(access []DocumentAccess, groups []ExternalGroup) error {
	if len(access) > MaxBatchAccess || len(groups) > MaxBatchAccess {
		return Errorf(EINVALID, "A progress report may hold the access of at most %d documents, or %d groups", MaxBatchAccess, MaxBatchAccess)
	}
	emails := func(es []string) error {
		if len(es) > MaxAccessEntries {
			return errTooManyEntries
		}
		for _, e := range es {
			if len(e) > MaxEmailBytes {
				return Errorf(EINVALID, "An email has at most %d bytes", MaxEmailBytes)
			}
		}
		return nil
	}
	for _, a := range access {
		if a.DocumentID == "" || len(a.DocumentID) > MaxDocumentIDBytes {
			return Errorf(EINVALID, "A listed document id has 1 to %d bytes", MaxDocumentIDBytes)
		}
		if err := emails(a.ExternalAccess.ExternalUserEmails); err != nil {
			return err
		}
		if len(a.ExternalAccess.ExternalUserGroupIDs) > MaxAccessEntries {
			return errTooManyEntries
		}
		for _, g := range a.ExternalAccess.ExternalUserGroupIDs {
			if len(g) > MaxExternalIDBytes {
				return Errorf(EINVALID, "A group's id has 1 to %d bytes", MaxExternalIDBytes)
			}
		}
	}
	for _, g := range groups {
		if g.ID == "" || len(g.ID) > MaxExternalIDBytes {
			return Errorf(EINVALID, "A group's id has 1 to %d bytes", MaxExternalIDBytes)
		}
		if err := emails(g.UserEmails); err != nil {
			return err
		}
	}
	return nil
}

// Members returns g's members as a group sync keeps them: each email
// as its key (EmailKey, as an account's email is kept), once, the empty
// ones left out.
func (g *ExternalGroup) Members() []string {
	seen := map[string]bool{}
	out := []string{}
	for _, e := range g.UserEmails {
		if e = EmailKey(e); e != "" && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// SyncReport is what a pair's page says of its permission syncing:
// Onyx's fields of CCPairFullInfo.
type SyncReport struct {
	Syncing      bool    // The newest permission sync runs (permission_syncing).
	LastStatus   *string // Its state as Onyx's PermissionSyncStatus; nil if none.
	LastFinished *Time   // When it ended; nil if it has not.
	LastError    *string // Why it ended without success; nil if it did not.
	// LastFull is when both syncs the source needs last succeeded, the
	// older of the two (Onyx's last_full_permission_sync); nil if one
	// never did.
	LastFull *Time
}

// ReportSync returns the SyncReport of a pair of source and access type
// whose newest permission sync is latest (nil if none) and whose syncs of
// each kind last succeeded at lastPerm and lastGroup (nil: never). Only a
// sync pair reports any (Onyx reads the attempts of sync pairs only, and
// counts a source that syncs nothing as synced now, which says nothing:
// Quarry answers null). An interrupted sync is reported failed, as Onyx
// reports a sync whose worker was lost; it runs again at once.
func ReportSync(source DocumentSource, access AccessType, latest *IndexAttempt, lastPerm, lastGroup *Time) SyncReport {
	var r SyncReport
	if access != AccessSync {
		return r
	}
	_, doc := SyncInterval(source, AttemptPermissionSync)
	_, group := SyncInterval(source, AttemptGroupSync)
	switch {
	case (doc && lastPerm == nil) || (group && lastGroup == nil) || (!doc && !group):
	case doc && group && lastGroup.Before(lastPerm.Time):
		r.LastFull = lastGroup
	case doc:
		r.LastFull = lastPerm
	default:
		r.LastFull = lastGroup
	}
	if latest == nil {
		return r
	}
	status := string(latest.Status)
	if latest.Status == IndexInterrupted {
		status = string(IndexFailed)
	}
	r.LastStatus = &status
	r.Syncing = latest.Status == IndexInProgress
	if !latest.Status.Live() {
		r.LastFinished = &latest.TimeUpdated
		if !latest.Status.Successful() {
			r.LastError = latest.ErrorMsg
		}
	}
	return r
}
