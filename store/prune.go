package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quarryhq/quarry"
)

// Pruning (quarry.PruneFacts): a prune is an index attempt of kind prune,
// made by the scheduler (schedulePrunes) or asked for (RequestPrune),
// leased and renewed as any attempt; its worker reports the ids its source
// listed (ReportProgress, into prune_listed) and its success deletes the
// pair's documents not listed (endPrune). Every deletion of documents goes
// through deleteDocuments.

// pruneFacts reads the facts of pair id that decide when it is next
// pruned.
func (tx *Tx) pruneFacts(ctx context.Context, id int64) (*quarry.PruneFacts, error) {
	var (
		f                  quarry.PruneFacts
		lastIndex, lastEnd sql.NullInt64
		connectorCreated   int64
	)
	err := tx.QueryRowContext(ctx, `SELECT c.source, p.status, p.prune_requested, c.prune_freq, p.last_successful_index_time,
		(SELECT MAX(a.time_updated) FROM index_attempts a WHERE a.cc_pair_id = p.id AND a.kind = 'prune'
			AND a.status NOT IN ('not_started', 'in_progress')), c.created_at
		FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id WHERE p.id = $1`, id).
		Scan(&f.Source, &f.Status, &f.Requested, &f.PruneFreq, &lastIndex, &lastEnd, &connectorCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ccPairNotFound(id)
	}
	f.LastSuccessfulIndex, f.LastPruneEnded = timeOrNil(lastIndex), timeOrNil(lastEnd)
	f.ConnectorCreated = quarry.TimeFromMicros(connectorCreated)
	return &f, err
}

// nextPruneAt works out when pair id is next due for a prune
// (quarry.PruneFacts.NextPruneAt): nil while it has a live attempt of
// either kind, whose end reschedules it.
func (tx *Tx) nextPruneAt(ctx context.Context, id int64) (*quarry.Time, error) {
	f, err := tx.pruneFacts(ctx, id)
	if err != nil {
		return nil, err
	}
	var live bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM index_attempts WHERE cc_pair_id = $1
		AND status IN ('not_started', 'in_progress'))`, id).Scan(&live); err != nil || live {
		return nil, err
	}
	return f.NextPruneAt(), nil
}

// schedulePrunes makes a prune for each pair whose next_prune_at has
// come (up to scheduleBatch), in a fixed number of statements: a pair
// with a live attempt gets none, and is rescheduled when that one ends. A
// prune asked for is forgotten once its attempt is made.
func (tx *Tx) schedulePrunes(ctx context.Context) (int, error) {
	now := tx.now.Micros()
	due, err := queryInts(ctx, tx, `SELECT id FROM cc_pairs WHERE next_prune_at IS NOT NULL AND next_prune_at <= $1
		ORDER BY next_prune_at, id LIMIT `+fmt.Sprint(scheduleBatch)+tx.db.skipLocked(), now)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	args := []any{now}
	r, err := tx.ExecContext(ctx, `INSERT INTO index_attempts (cc_pair_id, kind, status, from_beginning, time_created, time_updated)
		SELECT id, 'prune', 'not_started', FALSE, $1, $1 FROM cc_pairs
		WHERE status IN ('SCHEDULED', 'INITIAL_INDEXING', 'ACTIVE') AND `+sqlIn("id", anys(due), &args)+` ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, err
	}
	args = []any{}
	if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET next_prune_at = NULL WHERE `+sqlIn("id", anys(due), &args), args...); err != nil {
		return 0, err
	}
	args = []any{}
	_, err = tx.ExecContext(ctx, `UPDATE cc_pairs SET prune_requested = FALSE WHERE `+sqlIn("id", anys(due), &args)+`
		AND EXISTS (SELECT 1 FROM index_attempts a WHERE a.cc_pair_id = cc_pairs.id AND a.kind = 'prune'
		AND a.status IN ('not_started', 'in_progress'))`, args...)
	return int(n), err
}

// leaseListing gives attempt id of pair pairID, a prune or a sync of
// kind, to worker workerID: it has no poll window nor checkpoint, and does
// not move its pair's status.
func (tx *Tx) leaseListing(ctx context.Context, workerID, id, pairID int64, kind quarry.AttemptKind) (*quarry.Lease, error) {
	now := tx.now.Micros()
	expires := tx.now.Add(quarry.LeaseTTL).UnixMicro()
	if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET status = 'in_progress', worker_id = $1, lease_expires_at = $2,
		time_started = $3, time_updated = $3 WHERE id = $4`, workerID, expires, now, id); err != nil {
		return nil, err
	}
	l := &quarry.Lease{AttemptID: id, CCPairID: pairID, Kind: kind, PollRangeStart: tx.now, PollRangeEnd: tx.now,
		LeaseExpiresAt: quarry.TimeFromMicros(expires)}
	return l, tx.leasedConnector(ctx, pairID, &l.Connector)
}

// recordListed keeps the ids that prune id's source listed.
func (tx *Tx) recordListed(ctx context.Context, id int64, ids []string) error {
	for _, d := range dedupe(ids) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO prune_listed (attempt_id, document_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			id, d); err != nil {
			return err
		}
	}
	return nil
}

// endPrune moves pair a.CCPairID on after its prune a ended in status: a
// success deletes the documents of the pair that its source did not list,
// except those pushed through the ingestion API and those written since
// the prune started (an attempt that ran before it may have brought them
// after the source listed its ids), counts them in the attempt's
// docs_removed_from_index and sets the pair's last_pruned. The ids listed
// are dropped whatever the outcome, and the pair rescheduled; a prune to
// run again (an interrupted one: quarry.TriggerAfter) is asked for again.
func (tx *Tx) endPrune(ctx context.Context, a *quarry.IndexAttempt, status quarry.IndexingStatus, again bool) error {
	if status == quarry.IndexSuccess && a.TimeStarted != nil {
		removed, err := tx.deleteDocuments(ctx, a.CCPairID, `NOT documents.from_ingestion_api AND documents.indexed_at < $2
			AND NOT EXISTS (SELECT 1 FROM prune_listed l WHERE l.attempt_id = $3 AND l.document_id = documents.id)`,
			a.TimeStarted.Micros(), a.ID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET docs_removed_from_index = $1 WHERE id = $2`, len(removed), a.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET last_pruned = $1 WHERE id = $2`, tx.now.Micros(), a.CCPairID); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM prune_listed WHERE attempt_id = $1`, a.ID); err != nil {
		return err
	}
	// An interrupted prune (its worker stopped, was revoked or was lost)
	// runs again at once, as an interrupted indexing run does.
	if again {
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET prune_requested = TRUE WHERE id = $1`, a.CCPairID); err != nil {
			return err
		}
	}
	return tx.reschedule(ctx, a.CCPairID)
}

// deleteDocuments deletes the documents of pair pairID that meet cond (on
// documents, with $1 the pair and $2… args; "TRUE" for all of them),
// keeps the pair's count of documents, and returns the ids deleted. It is
// the one way documents are deleted: whatever must follow a deletion (an
// index of their text) follows it here.
func (tx *Tx) deleteDocuments(ctx context.Context, pairID int64, cond string, args ...any) ([]string, error) {
	ids, err := queryAll(ctx, tx, func(r interface{ Scan(...any) error }) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `DELETE FROM documents WHERE cc_pair_id = $1 AND (`+cond+`) RETURNING id`, append([]any{pairID}, args...)...)
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE cc_pairs SET total_docs_indexed = CASE WHEN total_docs_indexed > $1
		THEN total_docs_indexed - $1 ELSE 0 END WHERE id = $2`, len(ids), pairID)
	return ids, err
}

// RequestPrune asks for a prune of pair id, as Onyx's POST
// /manage/admin/cc-pair/{id}/prune: c must see the pair
// (quarry.ErrPruneNotFound), whose documents must not be pushed to it
// (quarry.ErrNotPrunable), and no prune of it may be waiting or running
// (quarry.ErrPruneInProgress). The pair is then due for a prune at once,
// or as soon as its live attempt ends, or it is resumed.
func (db *DB) RequestPrune(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.pair(ctx, id)
		if quarry.ErrorCode(err) == quarry.ENOTFOUND || (err == nil && !c.CanSeePair(p)) {
			return quarry.ErrPruneNotFound
		}
		if err != nil {
			return err
		}
		f, err := tx.pruneFacts(ctx, id)
		if err != nil {
			return err
		}
		if !quarry.Indexable(f.Source) {
			return quarry.ErrNotPrunable
		}
		var live bool
		if err := tx.QueryRowContext(ctx, `SELECT prune_requested OR EXISTS (SELECT 1 FROM index_attempts WHERE cc_pair_id = $1
			AND kind = 'prune' AND status IN ('not_started', 'in_progress')) FROM cc_pairs WHERE id = $1`, id).Scan(&live); err != nil {
			return err
		}
		if live {
			return quarry.ErrPruneInProgress
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET prune_requested = TRUE WHERE id = $1`, id); err != nil {
			return err
		}
		if err := tx.reschedule(ctx, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "cc_pair.prune", "cc_pair", id, []string{"prune_requested"})
	})
}

// LastPruned returns when pair id was last pruned successfully (nil:
// never), if c sees it (quarry.ErrLastPrunedNotFound otherwise).
func (db *DB) LastPruned(ctx context.Context, c *quarry.Caller, id int64) (*quarry.Time, error) {
	var out *quarry.Time
	err := db.snapshot(ctx, func(q querier) error {
		args := []any{id}
		var last sql.NullInt64
		err := q.QueryRowContext(ctx, `SELECT p.last_pruned FROM cc_pairs p WHERE p.id = $1 AND `+pairsVisibleTo(c, "p", &args), args...).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.ErrLastPrunedNotFound
		}
		out = timeOrNil(last)
		return err
	})
	return out, err
}
