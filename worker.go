package quarry

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Workers run index attempts: `quarry serve` runs one in process, and
// `quarry worker --server URL` more on other machines. A worker registers
// with a registration token that an admin makes, and gets a token of its
// own, which opens the worker routes and nothing else.

// Token prefixes of workers.
const (
	WorkerRegistrationPrefix = "qrr_" // A registration token, which makes workers.
	WorkerTokenPrefix        = "qrw_" // A worker's own token.
)

// NewWorkerToken returns a fresh worker token and its hash.
func NewWorkerToken() (token, hash string) { return newToken(WorkerTokenPrefix) }

// NewWorkerRegistration returns a fresh registration token and its hash.
func NewWorkerRegistration() (token, hash string) { return newToken(WorkerRegistrationPrefix) }

// ValidWorkerTokenFormat reports whether token has the shape of a worker
// token.
func ValidWorkerTokenFormat(token string) bool { return validTokenFormat(token, WorkerTokenPrefix) }

// ValidWorkerRegistrationFormat reports whether token has the shape of a
// registration token.
func ValidWorkerRegistrationFormat(token string) bool {
	return validTokenFormat(token, WorkerRegistrationPrefix)
}

// DisplayWorkerRegistration returns the form of a registration token that
// may be shown after creation: its prefix, its first and last 4
// characters.
func DisplayWorkerRegistration(token string) string {
	k := strings.TrimPrefix(token, WorkerRegistrationPrefix)
	return WorkerRegistrationPrefix + k[:4] + "********" + k[len(k)-4:]
}

// Worker is a process that runs index attempts.
type Worker struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	InProcess  bool    `json:"in_process"` // The worker `quarry serve` runs.
	CreatedAt  Time    `json:"time_created"`
	LastSeenAt *Time   `json:"last_seen"`
	RevokedAt  *Time   `json:"revoked_at"`
	CreatedBy  *string `json:"created_by"`  // The admin whose registration token made it.
	Attempts   []int64 `json:"attempt_ids"` // The attempts it holds.
}

// WorkerRegistration is a registration token's record: it makes workers
// until it expires or is revoked.
type WorkerRegistration struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	Display   string  `json:"display"`
	CreatedBy *string `json:"created_by"`
	CreatedAt Time    `json:"time_created"`
	ExpiresAt Time    `json:"expires_at"`
	RevokedAt *Time   `json:"revoked_at"`
	Workers   int64   `json:"workers"` // How many it made.
}

// Limits of registration tokens.
const (
	DefaultRegistrationTTL = 24 * time.Hour
	MaxRegistrationTTL     = 30 * 24 * time.Hour
	MaxWorkerNameBytes     = 200
)

// RegistrationExpiry returns when a registration token made at now for
// hours hours expires: DefaultRegistrationTTL when hours is nil.
func RegistrationExpiry(now time.Time, hours *int64) (Time, error) {
	ttl := DefaultRegistrationTTL
	if hours != nil {
		ttl = time.Duration(*hours) * time.Hour
		if ttl <= 0 || ttl > MaxRegistrationTTL {
			return Time{}, Errorf(EINVALID, "A registration token lasts from 1 to %d hours", int(MaxRegistrationTTL/time.Hour))
		}
	}
	return Time{now.Add(ttl).UTC()}, nil
}

// CheckWorkerName reports why name cannot name a worker or a registration
// token.
func CheckWorkerName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > MaxWorkerNameBytes {
		return Errorf(EINVALID, "A worker's name has 1 to %d bytes", MaxWorkerNameBytes)
	}
	return nil
}

// Usable reports whether registration r can make a worker at now: it was
// not revoked and has not expired. A token that cannot is answered as an
// unknown one (401).
func (r *WorkerRegistration) Usable(now time.Time) bool {
	return r.RevokedAt == nil && now.Before(r.ExpiresAt.Time)
}

// LeaseTTL is how long a worker holds an attempt without a heartbeat; a
// lease not renewed in time interrupts the attempt (ExpiredLease), and a
// new one resumes from its checkpoint. Workers beat every LeaseTTL/4.
const LeaseTTL = 60 * time.Second

// Lease is an attempt a worker took (POST /worker/lease), with what it
// needs to run it; its credential is fetched apart, while the lease lives.
type Lease struct {
	AttemptID      int64           `json:"attempt_id"`
	CCPairID       int64           `json:"cc_pair_id"`
	Kind           AttemptKind     `json:"kind"` // A prune lists the source's ids instead of fetching documents.
	Connector      LeasedConnector `json:"connector"`
	FromBeginning  bool            `json:"from_beginning"`
	PollRangeStart Time            `json:"poll_range_start"`
	PollRangeEnd   Time            `json:"poll_range_end"`
	// Checkpoint is where the connector resumes: null for its first.
	Checkpoint     json.RawMessage `json:"checkpoint"`
	LeaseExpiresAt Time            `json:"lease_expires_at"`
}

// LeasedConnector is the connector of a leased attempt.
type LeasedConnector struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	Source    DocumentSource  `json:"source"`
	InputType InputType       `json:"input_type"`
	Config    json.RawMessage `json:"connector_specific_config"`
}

// Progress is a batch of an attempt a worker reports: the documents its
// connector fetched, the ones it could not, and the checkpoint it reached
// after them (nil: unchanged); for a prune, the ids its source listed;
// for a permission sync, its documents' access; for a group sync, the
// source's groups.
type Progress struct {
	Documents  []Document
	Failures   []ConnectorFailure
	Checkpoint json.RawMessage
	ListedIDs  []string
	Access     []DocumentAccess
	Groups     []ExternalGroup
}

// Check reports why p cannot be recorded: too many documents or failures,
// a checkpoint too large or without Onyx's has_more (the next attempt
// could not resume from it), a document or a failure that cannot be kept.
func (p *Progress) Check() error {
	if len(p.Documents) > MaxBatchDocuments || len(p.Failures) > MaxBatchFailures || len(p.ListedIDs) > MaxBatchDocuments {
		return ErrBatchTooLarge
	}
	if err := CheckSyncBatch(p.Access, p.Groups); err != nil {
		return err
	}
	for _, id := range p.ListedIDs {
		if id == "" || len(id) > MaxDocumentIDBytes {
			return Errorf(EINVALID, "A listed document id has 1 to %d bytes", MaxDocumentIDBytes)
		}
	}
	if p.Checkpoint != nil {
		if len(p.Checkpoint) > MaxCheckpointBytes {
			return ErrCheckpointTooLarge
		}
		var cp struct {
			HasMore *bool `json:"has_more"`
		}
		if json.Unmarshal(p.Checkpoint, &cp) != nil || cp.HasMore == nil {
			return ErrCheckpointHasMore
		}
	}
	for i := range p.Documents {
		if err := p.Documents[i].Check(); err != nil {
			return err
		}
	}
	for i := range p.Failures {
		if err := p.Failures[i].Check(); err != nil {
			return err
		}
	}
	return nil
}

// ProgressResult is the answer to a progress report.
type ProgressResult struct {
	NewDocs int64 `json:"new_docs_indexed"`   // Documents of the batch the pair did not have.
	Written int64 `json:"total_docs_indexed"` // Documents of the batch written: new or changed.
	Stop    bool  `json:"stop"`               // The attempt is to stop: its pair was paused.
}

// RunOncePairs returns the pairs of a connector (those the caller can see)
// that a run-once for credentialIDs names, with Onyx's refusals: every
// named credential must be one of the pairs' (400), and there must be at
// least one pair (400). An empty credentialIDs names them all.
func RunOncePairs(pairs []*CCPair, credentialIDs []int64) ([]*CCPair, error) {
	if len(credentialIDs) == 0 {
		if len(pairs) == 0 {
			return nil, Errorf(EINVALID, "Connector has no valid credentials, cannot create index attempts.")
		}
		return pairs, nil
	}
	var out []*CCPair
	for _, id := range credentialIDs {
		i := slices.IndexFunc(pairs, func(p *CCPair) bool { return p.CredentialID == id })
		if i < 0 {
			return nil, Errorf(EINVALID, "Not all specified credentials are associated with connector")
		}
		if !slices.Contains(out, pairs[i]) {
			out = append(out, pairs[i])
		}
	}
	return out, nil
}

// ErrProgressKind answers a progress report that does not fit its
// attempt's kind: a prune reports the ids its source listed, and nothing
// else; an indexing run never does.
var ErrProgressKind = Errorf(EINVALID, "A prune reports the document ids its source listed and nothing else; an indexing attempt reports no listed ids")

// CheckProgress reports why p does not fit an attempt of kind k: an
// indexing run reports documents, failures and checkpoints; a prune the
// ids its source listed; a permission sync its documents' access; a group
// sync its groups; each nothing else.
func (k AttemptKind) CheckProgress(p *Progress) error {
	fetched := len(p.Documents) > 0 || len(p.Failures) > 0 || p.Checkpoint != nil
	switch {
	case k == AttemptPermissionSync && (fetched || len(p.ListedIDs) > 0 || len(p.Groups) > 0),
		k == AttemptGroupSync && (fetched || len(p.ListedIDs) > 0 || len(p.Access) > 0),
		!k.Syncs() && (len(p.Access) > 0 || len(p.Groups) > 0):
		return ErrSyncProgressKind
	case k == AttemptPrune && fetched, k == AttemptIndex && len(p.ListedIDs) > 0:
		return ErrProgressKind
	}
	return nil
}

// MaxWorkerConcurrency is the most attempts one worker runs at once
// (QUARRY_WORKER_CONCURRENCY).
const MaxWorkerConcurrency = 64

// MaxHeartbeatAttempts is how many attempts one heartbeat may name: twice
// as many as a worker runs at once, so that a worker's list never grows
// the server's work (a row written per attempt, in the write lock) beyond
// what a heartbeat needs.
const MaxHeartbeatAttempts = 2 * MaxWorkerConcurrency

// ErrHeartbeatTooLarge answers a heartbeat naming more than
// MaxHeartbeatAttempts attempts (the API answers 422 before).
var ErrHeartbeatTooLarge = Errorf(EINVALID, "A heartbeat names at most %d attempts", MaxHeartbeatAttempts)
