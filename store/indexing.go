package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quarryhq/quarry"
)

// Index attempts: the scheduler's pass (Schedule), a worker's lease, its
// reports and its end (store/worker.go has the workers themselves), and
// what people read of them. The rules are the root package's (indexing.go);
// here are the rows.

// attemptColumns are the columns of an IndexAttempt, from index_attempts a,
// with its number of errors.
const attemptColumns = `a.id, a.cc_pair_id, a.status, a.from_beginning, a.new_docs_indexed, a.total_docs_indexed,
	a.docs_removed_from_index, a.completed_batches, a.poll_range_start, a.poll_range_end, a.checkpoint, a.checkpoint_at,
	a.error_msg, a.full_exception_trace, a.cancellation_requested, a.worker_id, a.lease_expires_at, a.heartbeat_counter,
	a.last_heartbeat_time, a.time_created, a.time_started, a.time_updated,
	(SELECT COUNT(*) FROM index_attempt_errors e WHERE e.index_attempt_id = a.id), COALESCE(a.stop_reason, '')`

// scanAttempt reads the attemptColumns of one row.
func scanAttempt(row interface{ Scan(...any) error }) (*quarry.IndexAttempt, error) {
	var (
		a                                      quarry.IndexAttempt
		start, end, cpAt, lease, beat, started sql.NullInt64
		created, updated                       int64
		checkpoint                             sql.NullString
	)
	err := row.Scan(&a.ID, &a.CCPairID, &a.Status, &a.FromBeginning, &a.NewDocsIndexed, &a.TotalDocsIndexed,
		&a.DocsRemovedFromIndex, &a.CompletedBatches, &start, &end, &checkpoint, &cpAt,
		&a.ErrorMsg, &a.FullExceptionTrace, &a.CancellationRequested, &a.WorkerID, &lease, &a.HeartbeatCounter,
		&beat, &created, &started, &updated, &a.ErrorCount, &a.StopReason)
	if err != nil {
		return nil, err
	}
	a.PollRangeStart, a.PollRangeEnd, a.CheckpointAt = timeOrNil(start), timeOrNil(end), timeOrNil(cpAt)
	a.LeaseExpiresAt, a.LastHeartbeatTime, a.TimeStarted = timeOrNil(lease), timeOrNil(beat), timeOrNil(started)
	a.TimeCreated, a.TimeUpdated = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	if checkpoint.Valid {
		a.Checkpoint = json.RawMessage(checkpoint.String)
	}
	return &a, nil
}

// timeOrNil returns the time of microseconds us, or nil for NULL.
func timeOrNil(us sql.NullInt64) *quarry.Time {
	if !us.Valid {
		return nil
	}
	t := quarry.TimeFromMicros(us.Int64)
	return &t
}

// microsOrNil returns the microseconds of t, or nil.
func microsOrNil(t *quarry.Time) any {
	if t == nil {
		return nil
	}
	return t.Micros()
}

// ScheduleResult says what a pass of the scheduler did.
type ScheduleResult struct {
	Created int                     // Attempts made for pairs that were due.
	Prunes  int                     // Prunes made for pairs that were due (attempts of kind prune).
	Expired int                     // Attempts whose lease was not renewed in time, ended.
	Ended   []quarry.IndexingStatus // How those ended: failed, or canceled when their cancellation was asked for.
	// PermissionSyncs and GroupSyncs are the syncs made for pairs that
	// were due (attempts of kinds permission_sync and group_sync).
	PermissionSyncs, GroupSyncs int
}

// scheduleBatch bounds the pairs one pass makes attempts for, so that a
// pass stays short when many pairs are due at once (the next pass takes
// the rest).
const scheduleBatch = 500

// Schedule runs one pass of the scheduler: it ends the attempts whose lease
// expired (quarry.ExpiredLease), then makes an attempt for each pair that
// is due (its next_index_at has come: quarry.IndexFacts.NextIndexAt), at
// most one live attempt per pair, in a fixed number of statements however
// many are due (up to scheduleBatch a pass). Every replica may run it: the
// rows decide, and on PostgreSQL replicas skip the pairs another is
// scheduling.
func (db *DB) Schedule(ctx context.Context) (ScheduleResult, error) {
	var res ScheduleResult
	err := db.update(ctx, func(tx *Tx) error {
		now := tx.now.Micros()
		expired, err := queryAll(ctx, tx, func(r interface{ Scan(...any) error }) ([2]int64, error) {
			var v [2]int64
			return v, r.Scan(&v[0], &v[1])
		}, `SELECT id, cc_pair_id FROM index_attempts WHERE status = 'in_progress' AND lease_expires_at < $1
			ORDER BY lease_expires_at, id LIMIT `+fmt.Sprint(scheduleBatch), now)
		if err != nil {
			return err
		}
		for _, e := range expired {
			// Locked pair first, then the attempt, as every writer does;
			// another replica may have ended it meanwhile.
			if ok, err := tx.lockAttempt(ctx, e[1], e[0], `status = 'in_progress' AND lease_expires_at < $3`, now); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			st, err := tx.endAttempt(ctx, e[0], e[1], quarry.ExpiredLease)
			if err != nil {
				return err
			}
			res.Ended = append(res.Ended, st)
			res.Expired++
		}
		due, err := queryInts(ctx, tx, `SELECT id FROM cc_pairs WHERE next_index_at IS NOT NULL AND next_index_at <= $1
			ORDER BY next_index_at, id LIMIT `+fmt.Sprint(scheduleBatch)+db.skipLocked(), now)
		if err != nil || len(due) == 0 {
			return err
		}
		// next_index_at is kept by the rules at every change
		// (reschedule); pairs that came in otherwise (imported, migrated)
		// and may not run are cleared here: paused or deleting, or of a
		// source that is never indexed.
		args := []any{}
		in := sqlIn("id", anys(due), &args)
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET next_index_at = NULL WHERE `+in+`
			AND (status NOT IN ('SCHEDULED', 'INITIAL_INDEXING', 'ACTIVE')
			OR connector_id IN (SELECT id FROM connectors WHERE source IN ('ingestion_api', 'not_applicable')))`, args...); err != nil {
			return err
		}
		// One attempt per pair: a pair with a live one gets none (the
		// unique index), and is due again when that one ends.
		args = []any{now}
		r, err := tx.ExecContext(ctx, `INSERT INTO index_attempts (cc_pair_id, status, from_beginning, time_created, time_updated)
			SELECT id, 'not_started', COALESCE(indexing_trigger = 'reindex', FALSE), $1, $1 FROM cc_pairs
			WHERE next_index_at IS NOT NULL AND `+sqlIn("id", anys(due), &args)+` ON CONFLICT DO NOTHING`, args...)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		res.Created = int(n)
		args = []any{}
		_, err = tx.ExecContext(ctx, `UPDATE cc_pairs SET next_index_at = NULL, indexing_trigger = NULL WHERE `+sqlIn("id", anys(due), &args), args...)
		return err
	})
	if err != nil {
		return res, err
	}
	err = db.update(ctx, func(tx *Tx) error {
		n, err := tx.schedulePrunes(ctx)
		res.Prunes = n
		return err
	})
	if err != nil {
		return res, err
	}
	err = db.update(ctx, func(tx *Tx) error {
		made, err := tx.scheduleSyncs(ctx)
		res.PermissionSyncs, res.GroupSyncs = made[quarry.AttemptPermissionSync], made[quarry.AttemptGroupSync]
		return err
	})
	return res, err
}

// skipLocked returns the clause that makes a PostgreSQL reader of rows to
// change skip those another transaction holds: replicas then share the
// work rather than wait for each other. SQLite has one writer at a time.
func (db *DB) skipLocked() string {
	if db.dialect == Postgres {
		return ` FOR UPDATE SKIP LOCKED`
	}
	return ``
}

// pairIndexFacts are a pair's facts that indexing rules need, read in a
// write transaction.
type pairIndexFacts struct {
	status            quarry.CCPairStatus
	source            quarry.DocumentSource
	refreshFreq       *int64
	trigger           *quarry.IndexingMode
	indexingStart     *quarry.Time
	repeatedErrors    bool
	credentialUpdated quarry.Time // When its credential last changed.
}

// indexFacts reads the indexing facts of pair id.
func (tx *Tx) indexFacts(ctx context.Context, id int64) (*pairIndexFacts, error) {
	var (
		f                 pairIndexFacts
		start             sql.NullInt64
		credentialUpdated int64
	)
	err := tx.QueryRowContext(ctx, `SELECT p.status, c.source, c.refresh_freq, p.indexing_trigger, c.indexing_start, p.in_repeated_error_state,
		k.updated_at
		FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id JOIN credentials k ON k.id = p.credential_id WHERE p.id = $1`, id).
		Scan(&f.status, &f.source, &f.refreshFreq, &f.trigger, &start, &f.repeatedErrors, &credentialUpdated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ccPairNotFound(id)
	}
	f.indexingStart, f.credentialUpdated = timeOrNil(start), quarry.TimeFromMicros(credentialUpdated)
	return &f, err
}

// nextIndexAt works out when pair id is next due (quarry.IndexFacts): nil
// while it has a live attempt, whose end reschedules it.
func (tx *Tx) nextIndexAt(ctx context.Context, id int64) (*quarry.Time, error) {
	f, err := tx.indexFacts(ctx, id)
	if err != nil {
		return nil, err
	}
	var (
		live    bool
		updated sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM index_attempts WHERE cc_pair_id = $1 AND status IN ('not_started', 'in_progress')),
		(SELECT time_updated FROM index_attempts WHERE cc_pair_id = $1 AND kind = 'index' ORDER BY id DESC LIMIT 1)`, id).Scan(&live, &updated)
	if err != nil || live {
		return nil, err
	}
	// The refusals that count: the backoff is at its cap long before.
	ended, err := tx.endedAttempts(ctx, id, quarry.AttemptIndex, 32)
	if err != nil {
		return nil, err
	}
	facts := quarry.IndexFacts{Source: f.source, Status: f.status, Trigger: f.trigger, RefreshFreq: f.refreshFreq,
		LastAttemptUpdated: timeOrNil(updated), RepeatedErrors: f.repeatedErrors,
		Refusals: quarry.CredentialRefusals(ended, f.credentialUpdated)}
	return facts.NextIndexAt(), nil
}

// reschedule writes when pair id is next due (nextIndexAt). A pair due
// already is written as due now, so that due pairs are served in the order
// they became due, and the metrics can tell how long one has waited.
func (tx *Tx) reschedule(ctx context.Context, id int64) error {
	next, err := tx.nextIndexAt(ctx, id)
	if err != nil {
		return err
	}
	if next != nil && next.Before(tx.now.Time) {
		next = &tx.now
	}
	prune, err := tx.nextPruneAt(ctx, id)
	if err != nil {
		return err
	}
	if prune != nil && prune.Before(tx.now.Time) {
		prune = &tx.now
	}
	if _, err = tx.ExecContext(ctx, `UPDATE cc_pairs SET next_index_at = $1, next_prune_at = $2 WHERE id = $3`, microsOrNil(next), microsOrNil(prune), id); err != nil {
		return err
	}
	return tx.rescheduleSyncs(ctx, id)
}

// lockConnectorPairs locks the pairs of connector id, in id order, before
// a write of the connector that reschedules them (rescheduleConnector):
// pairs before their connector, as every writer takes them. On PostgreSQL
// a write that changes a pair's row twice in one transaction (a worker's
// report, the scheduler) checks the pair's foreign keys again, which
// takes the connector's row in KEY SHARE mode, and renaming a connector
// (name is in a unique key) locks its row against that: a rename that
// held the connector while waiting for a pair deadlocked with a report
// on that pair. SQLite has one writer, and takes no row locks.
func (tx *Tx) lockConnectorPairs(ctx context.Context, id int64) error {
	if tx.db.dialect != Postgres {
		return nil
	}
	_, err := queryInts(ctx, tx, `SELECT id FROM cc_pairs WHERE connector_id = $1 ORDER BY id FOR UPDATE`, id)
	return err
}

// rescheduleConnector reschedules every pair of connector id: its refresh
// frequency or its indexing_start changed.
func (tx *Tx) rescheduleConnector(ctx context.Context, id int64) error {
	ids, err := queryInts(ctx, tx, `SELECT id FROM cc_pairs WHERE connector_id = $1 ORDER BY id`, id)
	if err != nil {
		return err
	}
	for _, p := range ids {
		if err := tx.reschedule(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// stopAttempts stops the live attempts of pair id, which was paused or is
// being deleted: one not started yet is canceled at once, one in progress
// is asked to stop (its worker learns it at its next heartbeat, and ends it
// canceled; if it never does, its lease's expiry does).
func (tx *Tx) stopAttempts(ctx context.Context, id int64) error {
	now := tx.now.Micros()
	if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET status = 'canceled', time_updated = $1
		WHERE cc_pair_id = $2 AND status = 'not_started'`, now, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE index_attempts SET cancellation_requested = TRUE, time_updated = $1
		WHERE cc_pair_id = $2 AND status = 'in_progress'`, now, id)
	return err
}

// LeaseAttempt gives worker workerID the oldest attempt waiting for one, if
// any (nil otherwise): it is then in progress, held by the worker until its
// lease expires unless renewed, with its poll window and the checkpoint it
// resumes from worked out (quarry.PollFacts.Plan). Attempts of pairs paused
// since they were made are canceled on the way.
func (db *DB) LeaseAttempt(ctx context.Context, workerID int64) (*quarry.Lease, error) {
	var lease *quarry.Lease
	err := db.update(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE workers SET last_seen_at = $1 WHERE id = $2 AND revoked_at IS NULL
			AND (last_seen_at IS NULL OR last_seen_at < $3)`, tx.now.Micros(), workerID, tx.now.Add(-time.Minute).UnixMicro()); err != nil {
			return err
		}
		// On PostgreSQL the pair is locked first (as every writer of both
		// does), skipping pairs another replica is leasing or pausing.
		lock := ""
		if db.dialect == Postgres {
			lock = ` FOR UPDATE OF p SKIP LOCKED`
		}
		for {
			var id, pairID int64
			err := tx.QueryRowContext(ctx, `SELECT a.id, a.cc_pair_id FROM index_attempts a JOIN cc_pairs p ON p.id = a.cc_pair_id
				WHERE a.status = 'not_started' AND EXISTS (SELECT 1 FROM workers w WHERE w.id = $1 AND w.revoked_at IS NULL)
				ORDER BY a.id LIMIT 1`+lock, workerID).Scan(&id, &pairID)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			if ok, err := tx.lockAttempt(ctx, pairID, id, `status = 'not_started'`); err != nil || !ok {
				return err // Not ok: taken meanwhile; the worker asks again.
			}
			f, err := tx.indexFacts(ctx, pairID)
			if err != nil {
				return err
			}
			if !f.status.Active() {
				if _, err := tx.endAttempt(ctx, id, pairID, func(*quarry.IndexAttempt) quarry.Finish {
					return quarry.Finish{Status: quarry.IndexCanceled}
				}); err != nil {
					return err
				}
				continue
			}
			lease, err = tx.lease(ctx, workerID, id, pairID, f)
			return err
		}
	})
	return lease, err
}

// lease gives attempt id of pair pairID to worker workerID.
func (tx *Tx) lease(ctx context.Context, workerID, id, pairID int64, f *pairIndexFacts) (*quarry.Lease, error) {
	var (
		fromBeginning bool
		kind          quarry.AttemptKind
	)
	if err := tx.QueryRowContext(ctx, `SELECT from_beginning, kind FROM index_attempts WHERE id = $1`, id).Scan(&fromBeginning, &kind); err != nil {
		return nil, err
	}
	if kind == quarry.AttemptPrune || kind.Syncs() {
		return tx.leaseListing(ctx, workerID, id, pairID, kind)
	}
	var lastSuccess sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(poll_range_end) FROM index_attempts WHERE cc_pair_id = $1 AND kind = 'index' AND status = 'success'`,
		pairID).Scan(&lastSuccess); err != nil {
		return nil, err
	}
	recent, err := tx.endedAttempts(ctx, pairID, quarry.AttemptIndex, quarry.RecentAttemptsConsidered)
	if err != nil {
		return nil, err
	}
	facts := quarry.PollFacts{FromBeginning: fromBeginning, IndexingStart: f.indexingStart, LastSuccessEnd: timeOrNil(lastSuccess), Recent: recent}
	plan := facts.Plan(tx.now.Time)
	now := tx.now.Micros()
	expires := tx.now.Add(quarry.LeaseTTL).UnixMicro()
	var checkpoint, checkpointAt any
	if plan.Checkpoint != nil {
		checkpoint, checkpointAt = string(plan.Checkpoint), now
	}
	if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET status = 'in_progress', worker_id = $1, lease_expires_at = $2,
		time_started = $3, time_updated = $3, poll_range_start = $4, poll_range_end = $5, checkpoint = $6, checkpoint_at = $7
		WHERE id = $8`, workerID, expires, now, plan.Start.Micros(), plan.End.Micros(), checkpoint, checkpointAt, id); err != nil {
		return nil, err
	}
	if err := tx.setPairStatusAfter(ctx, pairID, f.status, quarry.IndexInProgress); err != nil {
		return nil, err
	}
	l := &quarry.Lease{AttemptID: id, CCPairID: pairID, Kind: quarry.AttemptIndex, FromBeginning: fromBeginning, PollRangeStart: plan.Start, PollRangeEnd: plan.End,
		Checkpoint: plan.Checkpoint, LeaseExpiresAt: quarry.TimeFromMicros(expires)}
	return l, tx.leasedConnector(ctx, pairID, &l.Connector)
}

// leasedConnector reads the connector of pair pairID into c.
func (tx *Tx) leasedConnector(ctx context.Context, pairID int64, c *quarry.LeasedConnector) error {
	var config string
	err := tx.QueryRowContext(ctx, `SELECT c.id, c.name, c.source, c.input_type, c.config FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id
		WHERE p.id = $1`, pairID).Scan(&c.ID, &c.Name, &c.Source, &c.InputType, &config)
	c.Config = json.RawMessage(config)
	return err
}

// endedAttempts returns the attempts of kind of pair id that ended after
// they started, newest first, at most n: the history the choice of a poll
// window and a checkpoint reads, and the repeated error state, the
// refusals of a credential and the lost workers. An attempt canceled
// before a worker took it did nothing, and says nothing of where to go on
// from.
func (tx *Tx) endedAttempts(ctx context.Context, id int64, kind quarry.AttemptKind, n int) ([]*quarry.IndexAttempt, error) {
	return queryAll(ctx, tx, func(r interface{ Scan(...any) error }) (*quarry.IndexAttempt, error) {
		var (
			a                   quarry.IndexAttempt
			start, end, started sql.NullInt64
			checkpoint          sql.NullString
		)
		err := r.Scan(&a.ID, &a.Status, &a.TotalDocsIndexed, &start, &end, &checkpoint, &a.StopReason, &started)
		a.PollRangeStart, a.PollRangeEnd, a.TimeStarted = timeOrNil(start), timeOrNil(end), timeOrNil(started)
		if checkpoint.Valid {
			a.Checkpoint = json.RawMessage(checkpoint.String)
		}
		return &a, err
	}, `SELECT id, status, total_docs_indexed, poll_range_start, poll_range_end, checkpoint, COALESCE(stop_reason, ''), time_started
		FROM index_attempts
		WHERE cc_pair_id = $1 AND kind = $2 AND status NOT IN ('not_started', 'in_progress') AND time_started IS NOT NULL
		ORDER BY id DESC LIMIT `+fmt.Sprint(n), id, kind)
}

// setPairStatusAfter moves pair id, in status s, to the status its attempt
// changing to a implies (quarry.PairStatusAfter).
func (tx *Tx) setPairStatusAfter(ctx context.Context, id int64, s quarry.CCPairStatus, a quarry.IndexingStatus) error {
	next := quarry.PairStatusAfter(s, a)
	if next == s {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET status = $1, version = version + 1 WHERE id = $2 AND status = $3`, next, id, s)
	return err
}

// lockAttempt locks pair pairID, then its attempt id if the attempt still
// meets cond (on index_attempts, with $1 the attempt, $2 the pair and $3…
// args), and reports whether it does. Every write that changes
// both an attempt and its pair takes the pair first (a pause, a deletion,
// the scheduler, a worker's report), so that two never wait on each other
// on PostgreSQL. SQLite has one writer, and takes no row locks.
func (tx *Tx) lockAttempt(ctx context.Context, pairID, id int64, cond string, args ...any) (bool, error) {
	if tx.db.dialect == Postgres {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM cc_pairs WHERE id = $1 FOR UPDATE`, pairID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	lock := ""
	if tx.db.dialect == Postgres {
		lock = ` FOR UPDATE`
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM index_attempts WHERE id = $1 AND cc_pair_id = $2 AND `+cond+lock,
		append([]any{id, pairID}, args...)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// heldAttempt returns the pair of attempt id, if worker workerID holds it:
// it is in progress under the worker's live lease, and the worker is not
// revoked. Otherwise it fails with quarry.ErrAttemptNotHeld (409), and
// nothing is changed. The pair and the attempt are locked (lockAttempt).
func (tx *Tx) heldAttempt(ctx context.Context, workerID, id int64) (pairID int64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT cc_pair_id FROM index_attempts WHERE id = $1`, id).Scan(&pairID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, quarry.ErrAttemptNotHeld(id)
	}
	if err != nil {
		return 0, err
	}
	ok, err := tx.lockAttempt(ctx, pairID, id, `worker_id = $3 AND status = 'in_progress' AND lease_expires_at >= $4
		AND EXISTS (SELECT 1 FROM workers w WHERE w.id = $3 AND w.revoked_at IS NULL)`, workerID, tx.now.Micros())
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, quarry.ErrAttemptNotHeld(id)
	}
	return pairID, nil
}

// Heartbeat renews the leases of every attempt worker workerID holds, and
// returns those of held (the attempts the worker says it runs) that it
// should stop: asked to be canceled, or no longer held (ended by an
// expiry, or their pair deleted). held has at most
// quarry.MaxHeartbeatAttempts ids (the API answers 422 beyond), read a
// few hundred at a time, so that no statement grows with it.
func (db *DB) Heartbeat(ctx context.Context, workerID int64, held []int64) (stop []int64, expires quarry.Time, err error) {
	held = dedupe(held)
	if len(held) > quarry.MaxHeartbeatAttempts {
		return nil, quarry.Time{}, quarry.ErrHeartbeatTooLarge
	}
	err = db.update(ctx, func(tx *Tx) error {
		now := tx.now.Micros()
		expires = quarry.Time{Time: tx.now.Add(quarry.LeaseTTL)}
		if _, err := tx.ExecContext(ctx, `UPDATE workers SET last_seen_at = $1 WHERE id = $2`, now, workerID); err != nil {
			return err
		}
		stop = []int64{}
		running := map[int64]bool{}
		// Only the attempts the worker says it runs: one it lost track of
		// (a lease whose answer was lost, a restart with the same token)
		// is not kept alive by its other work, and expires.
		for chunk := range slices.Chunk(held, inChunk) {
			args := []any{expires.Micros(), now, workerID}
			if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET lease_expires_at = $1, heartbeat_counter = heartbeat_counter + 1,
				last_heartbeat_time = $2 WHERE worker_id = $3 AND status = 'in_progress' AND lease_expires_at >= $2 AND `+
				sqlIn("id", anys(chunk), &args), args...); err != nil {
				return err
			}
			args = []any{workerID}
			if err := eachInts(ctx, tx, `SELECT id, CASE WHEN cancellation_requested THEN 1 ELSE 0 END FROM index_attempts
				WHERE worker_id = $1 AND status = 'in_progress' AND `+sqlIn("id", anys(chunk), &args), args,
				func(id, cancel int64) { running[id] = cancel == 0 }); err != nil {
				return err
			}
		}
		for _, id := range held {
			if !running[id] {
				stop = append(stop, id)
			}
		}
		return nil
	})
	return stop, expires, err
}

// ReportProgress records a batch of worker workerID's attempt id: its
// documents (new ones and changed ones written, unchanged ones left; the
// errors of earlier attempts about them resolved), its per-document
// failures (as the attempt's errors), and the checkpoint the connector
// reached after them, all in one transaction, so that a checkpoint never
// runs ahead of the documents it covers. It renews the lease, and says
// whether the attempt is to stop.
func (db *DB) ReportProgress(ctx context.Context, workerID, id int64, p *quarry.Progress) (*quarry.ProgressResult, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	for i := range p.Documents {
		b, err := json.Marshal(&p.Documents[i])
		if err != nil {
			return nil, err
		}
		if len(b) > quarry.MaxDocumentBytes {
			return nil, quarry.ErrDocumentTooLarge(p.Documents[i].ID)
		}
	}
	// The attempt's pair, whose unchanged documents need no analysis (the
	// transaction checks that the worker holds the attempt; were there no
	// attempt, nothing would be written).
	var an []analysed
	if len(p.Documents) > 0 {
		var attemptPair int64
		if err := db.read.QueryRowContext(ctx, `SELECT cc_pair_id FROM index_attempts WHERE id = $1`, id).Scan(&attemptPair); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, mapError(err)
		}
		var err error
		if an, err = db.analyseDocuments(ctx, attemptPair, p.Documents); err != nil {
			return nil, err
		}
	}
	var res quarry.ProgressResult
	err := db.update(ctx, func(tx *Tx) error {
		pairID, err := tx.heldAttempt(ctx, workerID, id)
		if err != nil {
			return err
		}
		var kind quarry.AttemptKind
		if err := tx.QueryRowContext(ctx, `SELECT kind FROM index_attempts WHERE id = $1`, id).Scan(&kind); err != nil {
			return err
		}
		if err := kind.CheckProgress(p); err != nil {
			return err
		}
		if err := tx.recordListed(ctx, id, p.ListedIDs); err != nil {
			return err
		}
		if err := tx.recordSync(ctx, id, p.Access, p.Groups); err != nil {
			return err
		}
		now := tx.now.Micros()
		newDocs, written, err := tx.putDocuments(ctx, pairID, id, p.Documents, an, false)
		if err != nil {
			return err
		}
		for i := range p.Failures {
			e := p.Failures[i].AttemptError()
			if _, err := tx.ExecContext(ctx, `INSERT INTO index_attempt_errors (index_attempt_id, cc_pair_id, document_id, document_link,
				entity_id, failed_time_range_start, failed_time_range_end, failure_message, time_created)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, id, pairID, e.DocumentID, e.DocumentLink, e.EntityID,
				microsOrNil(e.FailedTimeRangeStart), microsOrNil(e.FailedTimeRangeEnd), e.FailureMessage, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET new_docs_indexed = new_docs_indexed + $1,
			total_docs_indexed = total_docs_indexed + $2, completed_batches = completed_batches + 1,
			lease_expires_at = $3, time_updated = $4 WHERE id = $5`,
			newDocs, written, tx.now.Add(quarry.LeaseTTL).UnixMicro(), now, id); err != nil {
			return err
		}
		if p.Checkpoint != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET checkpoint = $1, checkpoint_at = $2 WHERE id = $3`,
				string(p.Checkpoint), now, id); err != nil {
				return err
			}
		}
		if newDocs > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET total_docs_indexed = total_docs_indexed + $1 WHERE id = $2`,
				newDocs, pairID); err != nil {
				return err
			}
		}
		res.NewDocs, res.Written = newDocs, written
		return tx.QueryRowContext(ctx, `SELECT cancellation_requested FROM index_attempts WHERE id = $1`, id).Scan(&res.Stop)
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// putDocuments writes the documents of a batch of attempt attemptID (0 for
// documents pushed through the ingestion API, ingested) to pair pairID
// (an is what analyseDocuments made of them): a
// document the pair does not have is new, one whose content changed is
// written again, an unchanged one is left as it is. Either way the pair's
// unresolved errors about it, from earlier attempts, are resolved: it has
// now been taken. It returns how many were new and how many written.
func (tx *Tx) putDocuments(ctx context.Context, pairID, attemptID int64, docs []quarry.Document, an []analysed, ingested bool) (newDocs, written int64, err error) {
	if len(docs) == 0 {
		return 0, 0, nil
	}
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = docs[i].ID
	}
	hashes, err := contentHashes(ctx, tx, pairID, ids)
	if err != nil {
		return 0, 0, err
	}
	now := tx.now.Micros()
	for i := range docs {
		d, a := &docs[i], &an[i]
		old, had := hashes[d.ID]
		if had && old == a.hash {
			continue
		}
		if a.chunks == nil {
			// Written since analyseDocuments looked, or twice in the batch.
			if err := tx.db.analyse(d, a); err != nil {
				return 0, 0, err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO documents (cc_pair_id, id, semantic_identifier, link, body, texts, content_hash,
			doc_updated_at, indexed_at, from_ingestion_api)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (cc_pair_id, id) DO UPDATE SET semantic_identifier = excluded.semantic_identifier, link = excluded.link,
			body = excluded.body, texts = excluded.texts, content_hash = excluded.content_hash, doc_updated_at = excluded.doc_updated_at,
			indexed_at = excluded.indexed_at, from_ingestion_api = excluded.from_ingestion_api`,
			pairID, d.ID, d.SemanticIdentifier, d.Link(), a.body, a.texts, a.hash, microsOrNil(d.DocUpdatedAt), now, ingested); err != nil {
			return 0, 0, err
		}
		if err := tx.indexDocument(ctx, pairID, d, a.chunks, had); err != nil {
			return 0, 0, err
		}
		hashes[d.ID] = a.hash
		written++
		if !had {
			newDocs++
		}
	}
	for chunk := range slices.Chunk(ids, inChunk) {
		args := []any{pairID, attemptID}
		if _, err := tx.ExecContext(ctx, `UPDATE index_attempt_errors SET is_resolved = TRUE WHERE cc_pair_id = $1 AND index_attempt_id <> $2
			AND is_resolved = FALSE AND `+sqlIn("document_id", anys(chunk), &args), args...); err != nil {
			return 0, 0, err
		}
	}
	return newDocs, written, nil
}

// contentHash returns the SHA-256 of d's JSON without its update time: a
// document whose content has not changed is not written again, even when
// its source (or the ingestion API, which stamps pushes with the time they
// arrive) says it was updated.
func contentHash(d *quarry.Document) (string, error) {
	c := *d
	c.DocUpdatedAt = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// FinishAttempt ends attempt id, which worker workerID holds, as f says
// (success with errors recorded is completed with errors), and moves its
// pair on: see endAttempt.
func (db *DB) FinishAttempt(ctx context.Context, workerID, id int64, f quarry.Finish) (quarry.IndexingStatus, error) {
	if err := f.CheckFinish(); err != nil {
		return "", err
	}
	var status quarry.IndexingStatus
	err := db.update(ctx, func(tx *Tx) error {
		pairID, err := tx.heldAttempt(ctx, workerID, id)
		if err != nil {
			return err
		}
		status, err = tx.endAttempt(ctx, id, pairID, func(*quarry.IndexAttempt) quarry.Finish { return f })
		return err
	})
	return status, err
}

// endAttempt ends live attempt id of pair pairID as finish decides from
// the attempt, and moves the pair on: its status (quarry.PairStatusAfter;
// INVALID when the attempt stopped for want of a connector), the time of
// its last success, its repeated error state, the errors a success from
// the beginning resolves (every entity's: it went through them all), a
// run asked for again when it was interrupted (quarry.TriggerAfter), and
// when it is next due.
func (tx *Tx) endAttempt(ctx context.Context, id, pairID int64, finish func(*quarry.IndexAttempt) quarry.Finish) (quarry.IndexingStatus, error) {
	a, err := scanAttempt(tx.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM index_attempts a WHERE a.id = $1`, id))
	if err != nil {
		return "", err
	}
	f := finish(a)
	status := f.Outcome(a.ErrorCount)
	var kind quarry.AttemptKind
	if err := tx.QueryRowContext(ctx, `SELECT kind FROM index_attempts WHERE id = $1`, id).Scan(&kind); err != nil {
		return "", err
	}
	var msg, trace, reason any
	if f.ErrorMsg != nil {
		msg = quarry.ClipText(*f.ErrorMsg, quarry.MaxErrorMessageBytes)
	}
	if f.FullExceptionTrace != nil {
		trace = quarry.ClipTrace(*f.FullExceptionTrace)
	}
	if f.Reason != "" {
		reason = f.Reason
	}
	now := tx.now.Micros()
	if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET status = $1, error_msg = $2, full_exception_trace = $3,
		stop_reason = $4, lease_expires_at = NULL, time_updated = $5 WHERE id = $6`, status, msg, trace, reason, now, id); err != nil {
		return "", err
	}
	facts, err := tx.indexFacts(ctx, pairID)
	if err != nil {
		return "", err
	}
	if f.Reason.Invalidates() {
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET status = $1, version = version + 1 WHERE id = $2 AND status = $3`,
			quarry.CCPairInvalid, pairID, facts.status); err != nil {
			return "", err
		}
		facts.status = quarry.CCPairInvalid
	}
	ended, err := tx.endedAttempts(ctx, pairID, kind, max(quarry.ErrorStateRun(facts.refreshFreq), quarry.MaxLostLeasesInARow))
	if err != nil {
		return "", err
	}
	trigger := quarry.TriggerAfter(status, f.Reason, quarry.LostLeasesInARow(ended))
	if kind == quarry.AttemptPrune {
		return status, tx.endPrune(ctx, a, status, trigger != nil)
	}
	if kind.Syncs() {
		return status, tx.endSync(ctx, a, kind, status, trigger != nil)
	}
	if status.Successful() {
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET last_successful_index_time = $1 WHERE id = $2`, now, pairID); err != nil {
			return "", err
		}
	}
	if status == quarry.IndexSuccess && a.FromBeginning {
		if _, err := tx.ExecContext(ctx, `UPDATE index_attempt_errors SET is_resolved = TRUE
			WHERE cc_pair_id = $1 AND index_attempt_id <> $2 AND is_resolved = FALSE`, pairID, id); err != nil {
			return "", err
		}
	}
	statuses := make([]quarry.IndexingStatus, 0, len(ended))
	for _, e := range ended[:min(len(ended), quarry.ErrorStateRun(facts.refreshFreq))] {
		statuses = append(statuses, e.Status)
	}
	repeated := quarry.ErrorStateAfter(facts.repeatedErrors, status, facts.refreshFreq, statuses)
	if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET in_repeated_error_state = $1 WHERE id = $2`, repeated, pairID); err != nil {
		return "", err
	}
	if trigger != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET indexing_trigger = COALESCE(indexing_trigger, $1) WHERE id = $2`, *trigger, pairID); err != nil {
			return "", err
		}
	}
	if err := tx.setPairStatusAfter(ctx, pairID, facts.status, status); err != nil {
		return "", err
	}
	return status, tx.reschedule(ctx, pairID)
}

// RunOnce asks for a run of the pairs of connector connectorID with the
// credentials credentialIDs (all its pairs when empty), as Onyx's run-once:
// each pair without a live attempt gets an indexing trigger (from the
// beginning when fromBeginning) and is due at once. The connector and the
// pairs are those c can see. It returns how many pairs it triggered.
func (db *DB) RunOnce(ctx context.Context, c *quarry.Caller, connectorID int64, credentialIDs []int64, fromBeginning bool) (int, error) {
	var n int
	err := db.update(ctx, func(tx *Tx) error {
		_, sharing, err := connectorSharing(ctx, tx, connectorID)
		if quarry.ErrorCode(err) == quarry.ENOTFOUND {
			return quarry.ErrConnectorNotFoundForRun(connectorID)
		}
		if err != nil {
			return err
		}
		pairs, err := connectorPairs(ctx, tx, connectorID)
		if err != nil {
			return err
		}
		seen := slices.DeleteFunc(slices.Clone(pairs), func(p *quarry.CCPair) bool { return !c.CanSeePair(p) })
		if !c.CanSeeConnector(sharing, len(seen) > 0) {
			return quarry.ErrConnectorNotFoundForRun(connectorID)
		}
		// A run is a change of the pair: those c may change (as a pause).
		pairs = slices.DeleteFunc(seen, func(p *quarry.CCPair) bool { return !c.CanChangePair(p) })
		chosen, err := quarry.RunOncePairs(pairs, credentialIDs)
		if err != nil {
			return err
		}
		mode := quarry.IndexUpdate
		if fromBeginning {
			mode = quarry.IndexReindex
		}
		for _, p := range chosen {
			var live bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM index_attempts WHERE cc_pair_id = $1 AND kind = 'index'
				AND status IN ('not_started', 'in_progress'))`, p.ID).Scan(&live); err != nil {
				return err
			}
			if live {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET indexing_trigger = $1 WHERE id = $2`, mode, p.ID); err != nil {
				return err
			}
			// A run asked for is a change that may let an INVALID pair run.
			if err := tx.revalidate(ctx, []int64{p.ID}); err != nil {
				return err
			}
			if err := tx.reschedule(ctx, p.ID); err != nil {
				return err
			}
			if err := tx.audit(ctx, c, "cc_pair.run_once", "cc_pair", p.ID, []string{"indexing_trigger"}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// IndexAttempts returns page page (of size) of the attempts of pair id,
// newest first, and how many it has, if c may see it; unless c sees the
// whole pair (quarry.Caller.SeesWholePair), their figures of documents are
// withheld (zero) and their errors counted as AttemptErrors shows them.
func (db *DB) IndexAttempts(ctx context.Context, c *quarry.Caller, id int64, page, size int64) ([]*quarry.IndexAttempt, int64, error) {
	var (
		out   []*quarry.IndexAttempt
		total int64
	)
	err := db.snapshot(ctx, func(q querier) error {
		whole, err := db.seesWholePair(ctx, q, c, id)
		if err != nil {
			return err
		}
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM index_attempts WHERE cc_pair_id = $1 AND kind = 'index'`, id).Scan(&total); err != nil {
			return err
		}
		out, err = queryAll(ctx, q, scanAttempt, `SELECT `+attemptColumns+` FROM index_attempts a WHERE a.cc_pair_id = $1 AND a.kind = 'index'
			ORDER BY a.id DESC LIMIT $2 OFFSET $3`, id, size, page*size)
		if err != nil || whole || len(out) == 0 {
			return err
		}
		// Their errors, as AttemptErrors shows them to c.
		counts, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) ([2]int64, error) {
			var n [2]int64
			return n, r.Scan(&n[0], &n[1])
		}, `SELECT e.index_attempt_id, COUNT(*) FROM index_attempt_errors e WHERE e.cc_pair_id = $1 AND `+errorsShown("e", false)+`
			GROUP BY e.index_attempt_id`, id)
		if err != nil {
			return err
		}
		shown := map[int64]int64{}
		for _, n := range counts {
			shown[n[0]] = n[1]
		}
		for _, a := range out {
			a.WithholdFigures()
			a.ErrorCount = shown[a.ID]
		}
		return nil
	})
	return out, total, mapError(err)
}

// AttemptErrors returns page page (of size) of the errors of pair id's
// attempts, newest first (resolved ones too when includeResolved), and how
// many there are, if c may see the pair: those naming a document only if c
// sees the whole pair (quarry.Caller.SeesWholePair).
func (db *DB) AttemptErrors(ctx context.Context, c *quarry.Caller, id int64, includeResolved bool, page, size int64) ([]*quarry.IndexAttemptError, int64, error) {
	var (
		out   []*quarry.IndexAttemptError
		total int64
	)
	cond := `cc_pair_id = $1`
	if !includeResolved {
		cond += ` AND is_resolved = FALSE`
	}
	err := db.snapshot(ctx, func(q querier) error {
		whole, err := db.seesWholePair(ctx, q, c, id)
		if err != nil {
			return err
		}
		where := cond + ` AND ` + errorsShown("index_attempt_errors", whole)
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM index_attempt_errors WHERE `+where, id).Scan(&total); err != nil {
			return err
		}
		out, err = queryAll(ctx, q, func(r interface{ Scan(...any) error }) (*quarry.IndexAttemptError, error) {
			var (
				e          quarry.IndexAttemptError
				start, end sql.NullInt64
				created    int64
			)
			err := r.Scan(&e.ID, &e.CCPairID, &e.DocumentID, &e.DocumentLink, &e.EntityID, &start, &end, &e.FailureMessage,
				&e.IsResolved, &created, &e.IndexAttemptID, &e.ErrorType)
			e.FailedTimeRangeStart, e.FailedTimeRangeEnd, e.TimeCreated = timeOrNil(start), timeOrNil(end), quarry.TimeFromMicros(created)
			return &e, err
		}, `SELECT id, cc_pair_id, document_id, document_link, entity_id, failed_time_range_start, failed_time_range_end,
			failure_message, is_resolved, time_created, index_attempt_id, error_type
			FROM index_attempt_errors WHERE `+where+` ORDER BY id DESC LIMIT $2 OFFSET $3`, id, size, page*size)
		return err
	})
	return out, total, mapError(err)
}

// errorsShown returns the SQL condition under which the error of alias e
// of a pair's attempts is shown to a caller who sees the whole pair, or
// not (quarry.Caller.SeesWholePair): an error naming a document (a failed
// document, whose access nobody reported) only to those who see the whole
// pair.
func errorsShown(e string, whole bool) string {
	if whole {
		return "TRUE"
	}
	return e + ".document_id IS NULL AND " + e + ".document_link IS NULL"
}

// seesWholePair fails with Onyx's 400 unless c may see pair id, and
// reports whether c sees the whole pair (quarry.Caller.SeesWholePair).
func (db *DB) seesWholePair(ctx context.Context, q querier, c *quarry.Caller, id int64) (bool, error) {
	if err := db.checkSeesPair(ctx, q, c, id); err != nil {
		return false, err
	}
	var p quarry.CCPair
	if err := q.QueryRowContext(ctx, `SELECT access_type FROM cc_pairs WHERE id = $1`, id).Scan(&p.AccessType); err != nil {
		return false, err
	}
	return c.SeesWholePair(&p), nil
}

// checkSeesPair fails with Onyx's 400 unless c may see pair id.
func (db *DB) checkSeesPair(ctx context.Context, q querier, c *quarry.Caller, id int64) error {
	args := []any{id}
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM cc_pairs p WHERE p.id = $1 AND `+pairsVisibleTo(c, "p", &args), args...).Scan(&n)
	if err != nil {
		return err
	}
	if n == 0 {
		return quarry.ErrPairNotFoundForUser
	}
	return nil
}

// attemptBriefColumns are the columns of an attempt that the status of
// indexing and a pair's page show (scanAttemptBrief): not its checkpoint,
// trace or errors.
const attemptBriefColumns = `a.id, a.cc_pair_id, a.status, a.total_docs_indexed, a.checkpoint_at`

func scanAttemptBrief(r interface{ Scan(...any) error }) (*quarry.IndexAttempt, error) {
	var (
		a  quarry.IndexAttempt
		at sql.NullInt64
	)
	err := r.Scan(&a.ID, &a.CCPairID, &a.Status, &a.TotalDocsIndexed, &at)
	a.CheckpointAt = timeOrNil(at)
	return &a, err
}

// PairIndexing is what a pair's page and the status of indexing show of its
// indexing to a caller.
type PairIndexing struct {
	CCPairID             int64
	InRepeatedErrorState bool
	LastSuccessfulIndex  *quarry.Time // When its latest successful attempt ended.
	LastPruned           *quarry.Time
	// Whole says whether the caller sees the whole pair
	// (quarry.Caller.SeesWholePair): if not, DocsIndexed counts the
	// documents open to it, and the attempts' figures of documents are
	// withheld (zero).
	Whole                bool
	DocsIndexed          int64 // Documents it holds (its total_docs_indexed, kept as documents come and go), or those open to the caller.
	Attempts             int64
	Latest               *quarry.IndexAttempt // Its newest attempt, nil if none.
	LatestFinished       *quarry.IndexAttempt // Its newest attempt that ended.
	LatestSuccessStarted *quarry.Time         // When its newest successful attempt started (Onyx's last_indexed).
	PruneRequested       bool                 // A prune was asked for and is not made yet.
	// LatestPrune is its newest prune (its status, error_msg and
	// time_updated), nil if none.
	LatestPrune *quarry.IndexAttempt
	// LastPermissionSync and LastGroupSync are when its latest sync of
	// each kind succeeded (Onyx's last_time_perm_sync and
	// last_time_external_group_sync); nil if none did.
	LastPermissionSync, LastGroupSync *quarry.Time
	// LatestPermissionSync is its newest permission sync (its status,
	// error_msg and time_updated), nil if none.
	LatestPermissionSync *quarry.IndexAttempt
}

// PairsIndexing returns the indexing of pairs ids, which c may see, as c
// sees it (PairIndexing.Whole), by id, in a fixed number of statements.
func (db *DB) PairsIndexing(ctx context.Context, c *quarry.Caller, ids []int64) (map[int64]*PairIndexing, error) {
	out := map[int64]*PairIndexing{}
	if len(ids) == 0 {
		return out, nil
	}
	err := db.snapshot(ctx, func(q querier) error {
		return inChunks(ids, "p.id", func(cond string, args []any) error {
			rows, err := q.QueryContext(ctx, `SELECT p.id, p.access_type, p.in_repeated_error_state, p.last_successful_index_time, p.last_pruned,
				p.total_docs_indexed, p.prune_requested, p.last_time_perm_sync, p.last_time_external_group_sync,
				(SELECT COUNT(*) FROM index_attempts a WHERE a.cc_pair_id = p.id AND a.kind = 'index'),
				(SELECT MAX(a.time_started) FROM index_attempts a WHERE a.cc_pair_id = p.id AND a.kind = 'index' AND a.status IN ('success', 'completed_with_errors'))
				FROM cc_pairs p WHERE `+cond, args...)
			if err != nil {
				return err
			}
			var partial []any // The pairs c does not see whole.
			for rows.Next() {
				var (
					x                     PairIndexing
					p                     quarry.CCPair
					last, pruned, started sql.NullInt64
					perm, group           sql.NullInt64
				)
				if err := rows.Scan(&x.CCPairID, &p.AccessType, &x.InRepeatedErrorState, &last, &pruned, &x.DocsIndexed, &x.PruneRequested,
					&perm, &group, &x.Attempts, &started); err != nil {
					rows.Close()
					return err
				}
				x.LastSuccessfulIndex, x.LastPruned, x.LatestSuccessStarted = timeOrNil(last), timeOrNil(pruned), timeOrNil(started)
				x.LastPermissionSync, x.LastGroupSync = timeOrNil(perm), timeOrNil(group)
				if x.Whole = c.SeesWholePair(&p); !x.Whole {
					x.DocsIndexed = 0
					partial = append(partial, x.CCPairID)
				}
				out[x.CCPairID] = &x
			}
			if err := closeRows(rows); err != nil {
				return err
			}
			if len(partial) > 0 {
				var cargs []any
				in := sqlIn("d.cc_pair_id", partial, &cargs)
				counts, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) ([2]int64, error) {
					var n [2]int64
					return n, r.Scan(&n[0], &n[1])
				}, `SELECT d.cc_pair_id, COUNT(*) FROM documents d WHERE `+in+` AND `+documentsReadable(c, "d", &cargs)+` GROUP BY d.cc_pair_id`, cargs...)
				if err != nil {
					return err
				}
				for _, n := range counts {
					out[n[0]].DocsIndexed = n[1]
				}
			}
			latest, err := queryAll(ctx, q, scanAttemptBrief, `SELECT `+attemptBriefColumns+` FROM index_attempts a WHERE a.id IN
				(SELECT MAX(a2.id) FROM index_attempts a2 JOIN cc_pairs p ON p.id = a2.cc_pair_id WHERE a2.kind = 'index' AND `+cond+` GROUP BY a2.cc_pair_id)`, args...)
			if err != nil {
				return err
			}
			finished, err := queryAll(ctx, q, scanAttemptBrief, `SELECT `+attemptBriefColumns+` FROM index_attempts a WHERE a.id IN
				(SELECT MAX(a2.id) FROM index_attempts a2 JOIN cc_pairs p ON p.id = a2.cc_pair_id WHERE a2.kind = 'index' AND `+cond+`
				AND a2.status NOT IN ('not_started', 'in_progress') GROUP BY a2.cc_pair_id)`, args...)
			if err != nil {
				return err
			}
			newest := func(kind quarry.AttemptKind) ([]*quarry.IndexAttempt, error) {
				return queryAll(ctx, q, func(r interface{ Scan(...any) error }) (*quarry.IndexAttempt, error) {
					var (
						a       quarry.IndexAttempt
						updated int64
					)
					err := r.Scan(&a.ID, &a.CCPairID, &a.Status, &a.ErrorMsg, &updated)
					a.TimeUpdated = quarry.TimeFromMicros(updated)
					return &a, err
				}, `SELECT a.id, a.cc_pair_id, a.status, a.error_msg, a.time_updated FROM index_attempts a WHERE a.id IN
					(SELECT MAX(a2.id) FROM index_attempts a2 JOIN cc_pairs p ON p.id = a2.cc_pair_id WHERE a2.kind = '`+string(kind)+`' AND `+cond+`
					GROUP BY a2.cc_pair_id)`, args...)
			}
			prunes, err := newest(quarry.AttemptPrune)
			if err != nil {
				return err
			}
			for _, a := range prunes {
				if x := out[a.CCPairID]; x != nil {
					x.LatestPrune = a
				}
			}
			syncs, err := newest(quarry.AttemptPermissionSync)
			if err != nil {
				return err
			}
			for _, a := range syncs {
				if x := out[a.CCPairID]; x != nil {
					x.LatestPermissionSync = a
				}
			}
			for _, a := range latest {
				if x := out[a.CCPairID]; x != nil {
					x.Latest = x.shown(a)
				}
			}
			for _, a := range finished {
				if x := out[a.CCPairID]; x != nil {
					x.LatestFinished = x.shown(a)
				}
			}
			return nil
		})
	})
	return out, mapError(err)
}

// shown returns attempt a of x's pair as x's caller sees it: with its
// figures of documents withheld (zero) unless it sees the whole pair.
func (x *PairIndexing) shown(a *quarry.IndexAttempt) *quarry.IndexAttempt {
	if !x.Whole {
		a.WithholdFigures()
	}
	return a
}

// IndexingStats are the figures of indexing the metrics show, read at
// once from the database (every replica's work).
type IndexingStats struct {
	Waiting        int64         // Attempts waiting for a worker: the queue's depth.
	Running        int64         // Attempts in progress.
	LeasesExpired  int64         // Attempts in progress whose lease expired, not yet ended by a pass of the scheduler.
	HeartbeatsLate int64         // Attempts in progress not renewed for more than half a lease.
	OldestDue      time.Duration // How long the pair longest due has waited for its attempt; 0 if none is due.
}

// IndexingStats reads the figures of indexing, with the indexes of the
// queue and the leases (no scan of every attempt).
func (db *DB) IndexingStats(ctx context.Context) (IndexingStats, error) {
	var (
		s      IndexingStats
		oldest sql.NullInt64
	)
	now := db.now()
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM index_attempts WHERE status = 'not_started'),
		(SELECT COUNT(*) FROM index_attempts WHERE status = 'in_progress'),
		(SELECT COUNT(*) FROM index_attempts WHERE status = 'in_progress' AND lease_expires_at < $1),
		(SELECT COUNT(*) FROM index_attempts WHERE status = 'in_progress' AND lease_expires_at < $2),
		(SELECT MIN(next_index_at) FROM cc_pairs WHERE next_index_at IS NOT NULL AND next_index_at <= $1)`,
		now.Micros(), now.Add(quarry.LeaseTTL/2).UnixMicro()).Scan(&s.Waiting, &s.Running, &s.LeasesExpired, &s.HeartbeatsLate, &oldest)
	if oldest.Valid {
		s.OldestDue = now.Sub(time.UnixMicro(oldest.Int64))
	}
	return s, mapError(err)
}

// revalidate makes the INVALID pairs among ids quarry.Revalidated, with a
// run asked for, and reschedules them: something changed that may let
// them run (an edit of their connector or credential, a run asked for, a
// connector learned for their source). The pairs are locked first, as
// every writer of pairs and their attempts takes them.
func (tx *Tx) revalidate(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		if ok, err := tx.lockPair(ctx, id); err != nil || !ok {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET status = $1, indexing_trigger = COALESCE(indexing_trigger, $2), version = version + 1
			WHERE id = $3 AND status = $4`, quarry.Revalidated, quarry.IndexUpdate, id, quarry.CCPairInvalid)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			continue
		}
		if err := tx.reschedule(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// lockPair locks pair id on PostgreSQL (SQLite has one writer), and
// reports whether it exists.
func (tx *Tx) lockPair(ctx context.Context, id int64) (bool, error) {
	if tx.db.dialect != Postgres {
		return true, nil
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM cc_pairs WHERE id = $1 FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// credentialPairs returns the pairs of credential id, in id order, locked
// on PostgreSQL before the credential's row is written (pairs before what
// they refer to, as lockConnectorPairs).
func (tx *Tx) credentialPairs(ctx context.Context, id int64) ([]int64, error) {
	lock := ""
	if tx.db.dialect == Postgres {
		lock = ` FOR UPDATE`
	}
	return queryInts(ctx, tx, `SELECT id FROM cc_pairs WHERE credential_id = $1 ORDER BY id`+lock, id)
}

// credentialEdited moves on pairs, those of a credential whose secret was
// just edited: the INVALID ones are revalidated, and those whose source
// refused the credential get a run at once (quarry.RetryOnCredentialEdit);
// the refusals no longer count (quarry.CredentialRefusals), so that their
// backoff starts again.
func (tx *Tx) credentialEdited(ctx context.Context, pairs []int64) error {
	if err := tx.revalidate(ctx, pairs); err != nil {
		return err
	}
	for _, id := range pairs {
		latest, err := tx.endedAttempts(ctx, id, quarry.AttemptIndex, 1)
		if err != nil {
			return err
		}
		var a *quarry.IndexAttempt
		if len(latest) > 0 {
			a = latest[0]
		}
		if !quarry.RetryOnCredentialEdit(a) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET indexing_trigger = COALESCE(indexing_trigger, $1) WHERE id = $2`,
			quarry.IndexUpdate, id); err != nil {
			return err
		}
		if err := tx.reschedule(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// KnowConnectors tells the store the sources this server's workers have a
// connector for (connector.Registry.Sources), as `quarry serve` does when it
// starts: the pairs left INVALID because their source had none (their
// latest attempt stopped for quarry.StopNoConnector) are revalidated. It
// returns how many.
func (db *DB) KnowConnectors(ctx context.Context, sources []quarry.DocumentSource) (int, error) {
	if len(sources) == 0 {
		return 0, nil
	}
	var n int
	err := db.update(ctx, func(tx *Tx) error {
		args := []any{quarry.CCPairInvalid, quarry.StopNoConnector}
		ids, err := queryInts(ctx, tx, `SELECT p.id FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id
			WHERE p.status = $1 AND `+sqlIn("c.source", anys(sources), &args)+`
			AND (SELECT a.stop_reason FROM index_attempts a WHERE a.cc_pair_id = p.id ORDER BY a.id DESC LIMIT 1) = $2
			ORDER BY p.id`, args...)
		if err != nil {
			return err
		}
		n = len(ids)
		return tx.revalidate(ctx, ids)
	})
	return n, err
}
