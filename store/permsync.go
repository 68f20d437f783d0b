package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quarryhq/quarry"
)

// Permission syncing (quarry.SyncFacts): a permission sync and a group
// sync are index attempts of their kinds, made by the scheduler
// (scheduleSyncs) or asked for (RequestSync), leased and renewed as any
// attempt; their worker reports what its source lists (ReportProgress,
// into perm_sync_listed and perm_sync_access, or group_sync_listed), and
// their success applies it in the transaction that ends them (endSync):
// a search, which reads in one snapshot, sees the access of before the
// sync or of after it, never half of it.

// syncColumns are the columns of cc_pairs that keep a kind of sync.
type syncColumns struct {
	next      string // When the scheduler next makes one.
	requested string // One was asked for and is not made yet.
	last      string // When its latest success ended.
}

// syncCols returns the columns of sync kind k.
func syncCols(k quarry.AttemptKind) syncColumns {
	if k == quarry.AttemptGroupSync {
		return syncColumns{"next_group_sync_at", "group_sync_requested", "last_time_external_group_sync"}
	}
	return syncColumns{"next_perm_sync_at", "perm_sync_requested", "last_time_perm_sync"}
}

// syncKinds are the kinds of syncs, in the order the scheduler makes them.
var syncKinds = []quarry.AttemptKind{quarry.AttemptGroupSync, quarry.AttemptPermissionSync}

// syncFacts reads the facts of pair id that decide when it is next synced
// as kind k says.
func (tx *Tx) syncFacts(ctx context.Context, id int64, k quarry.AttemptKind) (*quarry.SyncFacts, error) {
	f := quarry.SyncFacts{Kind: k}
	var lastIndex, lastEnd sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT c.source, p.status, p.access_type, p.`+syncCols(k).requested+`, p.last_successful_index_time,
		(SELECT MAX(a.time_updated) FROM index_attempts a WHERE a.cc_pair_id = p.id AND a.kind = $2
			AND a.status NOT IN ('not_started', 'in_progress'))
		FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id WHERE p.id = $1`, id, k).
		Scan(&f.Source, &f.Status, &f.AccessType, &f.Requested, &lastIndex, &lastEnd)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ccPairNotFound(id)
	}
	f.LastSuccessfulIndex, f.LastSyncEnded = timeOrNil(lastIndex), timeOrNil(lastEnd)
	return &f, err
}

// rescheduleSyncs writes when pair id is next due for each kind of sync
// (quarry.SyncFacts.NextSyncAt): never while it has a live attempt of any
// kind, whose end reschedules it; a time past is written as now.
func (tx *Tx) rescheduleSyncs(ctx context.Context, id int64) error {
	var live bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM index_attempts WHERE cc_pair_id = $1
		AND status IN ('not_started', 'in_progress'))`, id).Scan(&live); err != nil {
		return err
	}
	for _, k := range syncKinds {
		var next *quarry.Time
		if !live {
			f, err := tx.syncFacts(ctx, id, k)
			if err != nil {
				return err
			}
			if next = f.NextSyncAt(); next != nil && next.Before(tx.now.Time) {
				next = &tx.now
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+syncCols(k).next+` = $1 WHERE id = $2`, microsOrNil(next), id); err != nil {
			return err
		}
	}
	return nil
}

// scheduleSyncs makes a sync of each kind for each pair due for one (up to
// scheduleBatch each), as schedulePrunes makes prunes: a pair with a live
// attempt gets none, and is rescheduled when that one ends. It returns how
// many it made of each kind.
func (tx *Tx) scheduleSyncs(ctx context.Context) (map[quarry.AttemptKind]int, error) {
	made := map[quarry.AttemptKind]int{}
	now := tx.now.Micros()
	for _, k := range syncKinds {
		cols := syncCols(k)
		due, err := queryInts(ctx, tx, `SELECT id FROM cc_pairs WHERE `+cols.next+` IS NOT NULL AND `+cols.next+` <= $1
			ORDER BY `+cols.next+`, id LIMIT `+fmt.Sprint(scheduleBatch)+tx.db.skipLocked(), now)
		if err != nil {
			return nil, err
		}
		if len(due) == 0 {
			continue
		}
		args := []any{now, k}
		r, err := tx.ExecContext(ctx, `INSERT INTO index_attempts (cc_pair_id, kind, status, from_beginning, time_created, time_updated)
			SELECT id, $2, 'not_started', FALSE, $1, $1 FROM cc_pairs
			WHERE status IN ('SCHEDULED', 'INITIAL_INDEXING', 'ACTIVE') AND `+sqlIn("id", anys(due), &args)+` ON CONFLICT DO NOTHING`, args...)
		if err != nil {
			return nil, err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return nil, err
		}
		made[k] = int(n)
		args = []any{}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+cols.next+` = NULL WHERE `+sqlIn("id", anys(due), &args), args...); err != nil {
			return nil, err
		}
		// A sync asked for is forgotten once its attempt is made; one
		// that met another live attempt is due again when that one ends.
		args = []any{k}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+cols.requested+` = FALSE WHERE `+sqlIn("id", anys(due), &args)+`
			AND EXISTS (SELECT 1 FROM index_attempts a WHERE a.cc_pair_id = cc_pairs.id AND a.kind = $1
			AND a.status IN ('not_started', 'in_progress'))`, args...); err != nil {
			return nil, err
		}
	}
	return made, nil
}

// recordSync keeps what sync id's source listed: the access of its
// documents (each principal once) or its groups' members, in multi-row
// INSERTs of at most syncRowsPerInsert rows.
func (tx *Tx) recordSync(ctx context.Context, id int64, access []quarry.DocumentAccess, groups []quarry.ExternalGroup) error {
	var listed, principals, members [][]any
	for _, a := range access {
		listed = append(listed, []any{id, a.DocumentID})
		for _, p := range a.ExternalAccess.Principals() {
			principals = append(principals, []any{id, a.DocumentID, p})
		}
	}
	for _, g := range groups {
		for _, e := range g.Members() {
			members = append(members, []any{id, g.ID, e})
		}
	}
	for _, t := range []struct {
		table, columns string
		rows           [][]any
	}{
		{"perm_sync_listed", "attempt_id, document_id", listed},
		{"perm_sync_access", "attempt_id, document_id, principal", principals},
		{"group_sync_listed", "attempt_id, group_id, user_email", members},
	} {
		for rows := t.rows; len(rows) > 0; {
			n := min(len(rows), syncRowsPerInsert)
			if err := tx.insertRowsThen(ctx, t.table, t.columns, rows[:n], ` ON CONFLICT DO NOTHING`); err != nil {
				return err
			}
			rows = rows[n:]
		}
	}
	return nil
}

// syncRowsPerInsert bounds the rows of one INSERT of recordSync: at most
// 3,000 parameters, within SQLite's and PostgreSQL's limits.
const syncRowsPerInsert = 1000

// endSync moves pair a.CCPairID on after its sync a of kind k ended in
// status. A success applies what the source listed, in this transaction:
// a permission sync replaces the access of each of the pair's documents
// it listed (a document it did not list keeps its access; an id the pair
// does not hold is ignored; no content changes), a group sync the pair's
// external groups and their members; and the pair's last time of the
// kind is set; not if the sync was asked to stop (forgetSyncs). What was
// listed is dropped whatever the outcome, and the
// pair rescheduled; a sync to run again (an interrupted one:
// quarry.TriggerAfter) is asked for again.
func (tx *Tx) endSync(ctx context.Context, a *quarry.IndexAttempt, k quarry.AttemptKind, status quarry.IndexingStatus, again bool) error {
	cols := syncCols(k)
	// A sync asked to stop (its pair's source changed while it ran:
	// forgetSyncs) read the old source; what it listed is not applied.
	if status == quarry.IndexSuccess && !a.CancellationRequested {
		if k == quarry.AttemptPermissionSync {
			if _, err := tx.ExecContext(ctx, `DELETE FROM search_document_access WHERE cc_pair_id = $1
				AND document_id IN (SELECT document_id FROM perm_sync_listed WHERE attempt_id = $2)`, a.CCPairID, a.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO search_document_access (cc_pair_id, document_id, principal)
				SELECT $1, s.document_id, s.principal FROM perm_sync_access s
				WHERE s.attempt_id = $2 AND EXISTS (SELECT 1 FROM documents d WHERE d.cc_pair_id = $1 AND d.id = s.document_id)`,
				a.CCPairID, a.ID); err != nil {
				return err
			}
		} else {
			if _, err := tx.ExecContext(ctx, `DELETE FROM external_group_members WHERE cc_pair_id = $1`, a.CCPairID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO external_group_members (cc_pair_id, group_id, user_email)
				SELECT $1, group_id, user_email FROM group_sync_listed WHERE attempt_id = $2`, a.CCPairID, a.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+cols.last+` = $1 WHERE id = $2`, tx.now.Micros(), a.CCPairID); err != nil {
			return err
		}
	}
	for _, table := range []string{"perm_sync_listed", "perm_sync_access", "group_sync_listed"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE attempt_id = $1`, a.ID); err != nil {
			return err
		}
	}
	if again {
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+cols.requested+` = TRUE WHERE id = $1`, a.CCPairID); err != nil {
			return err
		}
	}
	return tx.reschedule(ctx, a.CCPairID)
}

// forgetSyncs forgets what pairs synced from their source, whose
// connector or credential just changed where they read from
// (quarry.SourceChangedFields): for each sync pair, its external groups
// and its documents' access are dropped (its documents open to no one
// until a permission sync or an indexing says again who may read them),
// its last sync times cleared, its syncs waiting canceled and those
// running asked to stop (their lists are not applied: endSync), and the
// syncs it is due for (quarry.ResyncAfterSourceChange) asked for at
// once, or as soon as its live attempt ends.
func (tx *Tx) forgetSyncs(ctx context.Context, pairs []int64) error {
	now := tx.now.Micros()
	for _, id := range pairs {
		var source quarry.DocumentSource
		var access quarry.AccessType
		if err := tx.QueryRowContext(ctx, `SELECT c.source, p.access_type FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id
			WHERE p.id = $1`, id).Scan(&source, &access); err != nil {
			return err
		}
		if access != quarry.AccessSync {
			continue
		}
		for _, q := range []string{
			`DELETE FROM external_group_members WHERE cc_pair_id = $1`,
			`DELETE FROM search_document_access WHERE cc_pair_id = $1`,
			`UPDATE cc_pairs SET last_time_perm_sync = NULL, last_time_external_group_sync = NULL WHERE id = $1`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		for _, k := range syncKinds {
			if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET status = 'canceled', time_updated = $1
				WHERE cc_pair_id = $2 AND kind = $3 AND status = 'not_started'`, now, id, k); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE index_attempts SET cancellation_requested = TRUE, time_updated = $1
				WHERE cc_pair_id = $2 AND kind = $3 AND status = 'in_progress'`, now, id, k); err != nil {
				return err
			}
			if quarry.ResyncAfterSourceChange(source, access, k) {
				if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+syncCols(k).requested+` = TRUE WHERE id = $1`, id); err != nil {
					return err
				}
			}
		}
		if err := tx.reschedule(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// RequestSync asks for a sync of kind k of pair id, as Onyx's POST
// /manage/admin/cc-pair/{id}/sync-permissions and …/sync-groups: c must
// see the pair (quarry.ErrPruneNotFound, Onyx's words for both), whose
// documents must not be pushed to it (quarry.ErrNotSyncable), and no sync
// of the kind may be waiting or running (quarry.ErrPermissionSyncInProgress,
// quarry.ErrGroupSyncInProgress). Like Onyx, it does not require the pair
// to be of access type sync: a sync of another pair changes nothing search
// reads.
// The pair is then due for the sync at once, or as soon as its live
// attempt ends, or it is resumed.
func (db *DB) RequestSync(ctx context.Context, c *quarry.Caller, id int64, k quarry.AttemptKind) error {
	cols := syncCols(k)
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.pair(ctx, id)
		if quarry.ErrorCode(err) == quarry.ENOTFOUND || (err == nil && !c.CanSeePair(p)) {
			return quarry.ErrPruneNotFound
		}
		if err != nil {
			return err
		}
		f, err := tx.syncFacts(ctx, id, k)
		if err != nil {
			return err
		}
		if !quarry.Indexable(f.Source) {
			return quarry.ErrNotSyncable
		}
		var live bool
		if err := tx.QueryRowContext(ctx, `SELECT `+cols.requested+` OR EXISTS (SELECT 1 FROM index_attempts WHERE cc_pair_id = $1
			AND kind = $2 AND status IN ('not_started', 'in_progress')) FROM cc_pairs WHERE id = $1`, id, k).Scan(&live); err != nil {
			return err
		}
		if live && k == quarry.AttemptGroupSync {
			return quarry.ErrGroupSyncInProgress
		}
		if live {
			return quarry.ErrPermissionSyncInProgress
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET `+cols.requested+` = TRUE WHERE id = $1`, id); err != nil {
			return err
		}
		if err := tx.reschedule(ctx, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "cc_pair."+string(k), "cc_pair", id, []string{cols.requested})
	})
}

// LastSynced returns when pair id's latest sync of kind k succeeded (nil:
// never), if c sees it (quarry.ErrLastPrunedNotFound, Onyx's words for
// it, otherwise).
func (db *DB) LastSynced(ctx context.Context, c *quarry.Caller, id int64, k quarry.AttemptKind) (*quarry.Time, error) {
	var out *quarry.Time
	err := db.snapshot(ctx, func(q querier) error {
		args := []any{id}
		var last sql.NullInt64
		err := q.QueryRowContext(ctx, `SELECT p.`+syncCols(k).last+` FROM cc_pairs p WHERE p.id = $1 AND `+pairsVisibleTo(c, "p", &args), args...).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.ErrLastPrunedNotFound
		}
		out = timeOrNil(last)
		return err
	})
	return out, err
}
