package quarry

import (
	"fmt"
	"time"
)

// Attempts that stop for something other than their source's failure
// (issue 39): a source without a connector in Quarry, a source that
// refuses the pair's credential, a worker lost mid-attempt. None of them
// counts toward the repeated error state, and each is retried its own
// way: a pair without a connector not until something changes, a refused
// credential later and later, a lost worker's attempt at once from its
// checkpoint. The state names are Onyx v4.6.1's (docs/decisions.md,
// "Attempts that are not the source's failure").

// StopReason says why an attempt stopped when it was not its source's
// failure; kept on the attempt (index_attempts.stop_reason), "" for every
// other ending.
type StopReason string

// The reasons an attempt stops that are not its source's failure.
const (
	// StopNoConnector: the worker has no connector for the pair's source.
	// The attempt ends canceled and the pair INVALID (Onyx's state of a
	// pair whose settings cannot be used), until something changes
	// (Revalidated).
	StopNoConnector StopReason = "no_connector"
	// StopCredentialRefused: the source refused the pair's credential (a
	// login, a 401, Slack's invalid_auth). The attempt ends failed, its
	// error naming the source's answer, and the next waits
	// (CredentialBackoff).
	StopCredentialRefused StopReason = "credential_refused"
	// StopLeaseExpired: the worker stopped renewing its lease (it was
	// killed, or cut off from the server). The attempt ends interrupted
	// (Onyx's state of a worker stopped by its infrastructure) and a new
	// one resumes from its checkpoint (TriggerAfter).
	StopLeaseExpired StopReason = "lease_expired"
)

// WorkerStopReason is a StopReason a worker reports when it ends an
// attempt (POST /worker/attempts/{id}/finish): only those it can tell.
type WorkerStopReason string

// EnumValues returns every WorkerStopReason.
func (WorkerStopReason) EnumValues() []string {
	return []string{"no_connector", "credential_refused"}
}

// NoConnectorMessage is the error_msg of an attempt whose worker has no
// connector for source: it says what happens to the pair.
func NoConnectorMessage(source DocumentSource) string {
	return fmt.Sprintf("Quarry has no connector for %s yet: this cc-pair is INVALID and is not indexed until a Quarry server "+
		"with one starts, or its connector or credential is edited, or it is resumed or run once.", source)
}

// CredentialRefusedMessage is the error_msg of an attempt whose source
// refused the pair's credential, reason saying how (never a secret).
func CredentialRefusedMessage(reason string) string {
	return "The source refused the credentials (" + reason + "). They are not tried again within this attempt; " +
		"the next attempts wait longer each time (from the refresh frequency, doubling, up to a day) until the credential is edited."
}

// ErrNoHeartbeat is the error_msg of an attempt whose lease expired.
const ErrNoHeartbeat = "The worker running this attempt stopped renewing its lease (no heartbeat): it was stopped or cut off. " +
	"This is not the source's failure: a new attempt resumes from its last checkpoint, at once unless the workers of the last 3 attempts in a row were lost."

// MaxLostLeasesInARow is how many attempts of a pair in a row that lost
// their worker stop the resumption at once: the last of them (its worker
// killed by a document it reads every time, say) is left to the pair's
// next refresh, or to a person asking, rather than loop.
const MaxLostLeasesInARow = 3

// MaxCredentialBackoff caps how long a pair whose credential was refused
// waits for its next attempt.
const MaxCredentialBackoff = 24 * time.Hour

// CredentialBackoff returns how long after its latest attempt a pair with
// refresh frequency refreshFreq (seconds) waits when the source refused
// its credential refusals times in a row: the refresh frequency, doubled
// at each refusal after the first, at most MaxCredentialBackoff.
func CredentialBackoff(refreshFreq int64, refusals int) time.Duration {
	d := time.Duration(max(refreshFreq, 1)) * time.Second
	for i := 1; i < refusals && d < MaxCredentialBackoff; i++ {
		d *= 2
	}
	return min(d, MaxCredentialBackoff)
}

// CredentialRefusals returns how many of ended (a pair's attempts that
// ended, newest first) in a row the source refused the credential of,
// counting only those that started after the credential last changed: a
// success, another ending, or an edit of the credential starts the count
// again.
func CredentialRefusals(ended []*IndexAttempt, credentialUpdated Time) int {
	n := 0
	for _, a := range ended {
		if a.StopReason != StopCredentialRefused || a.TimeStarted == nil || !a.TimeStarted.After(credentialUpdated.Time) {
			break
		}
		n++
	}
	return n
}

// LostLeasesInARow returns how many of ended (newest first) in a row lost
// their worker (StopLeaseExpired).
func LostLeasesInARow(ended []*IndexAttempt) int {
	n := 0
	for _, a := range ended {
		if a.StopReason != StopLeaseExpired {
			break
		}
		n++
	}
	return n
}

// Invalidates reports whether an attempt that stopped for r makes its
// pair INVALID: only a source without a connector, which no retry can
// help until something changes.
func (r StopReason) Invalidates() bool { return r == StopNoConnector }

// Revalidated is what a pair left INVALID becomes when something changes
// that may let it run (an edit of its connector or credential, a run
// asked for, a resume, a connector for its source learned): ACTIVE, as
// Onyx makes a pair whose credential is replaced, with a run asked for
// (IndexUpdate), so that it is tried at once, with or without a refresh
// frequency.
const Revalidated = CCPairActive

// RetryOnCredentialEdit reports whether an edit of a pair's credential asks
// for a run of the pair at once, its latest attempt being latest (nil if
// none): when the source refused the credential, so that a corrected one
// is tried now rather than after the backoff, with or without a refresh
// frequency.
func RetryOnCredentialEdit(latest *IndexAttempt) bool {
	return latest != nil && latest.StopReason == StopCredentialRefused
}

// RetryOnResume reports whether a pair whose status a person changes from
// old to next gets a run at once: a resume (ACTIVE) of an INVALID pair,
// which was left so because it could not run, is a request to try again.
func RetryOnResume(old, next CCPairStatus) bool {
	return old == CCPairInvalid && next == CCPairActive
}
