package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry"
)

// Workers and their registration tokens: an admin makes a registration
// token, a worker trades it for a token of its own (shown once, kept as a
// hash), which opens the worker routes and nothing else until the worker
// is revoked.

// errWorkerNotAuthenticated answers an unknown, malformed or revoked
// worker or registration token.
var errWorkerNotAuthenticated = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")

// CreateWorkerRegistration makes a registration token named name, for
// admin c, that lasts hours hours (quarry.RegistrationExpiry). It returns
// the token, shown once, and its record.
func (db *DB) CreateWorkerRegistration(ctx context.Context, c *quarry.Caller, name string, hours *int64) (string, *quarry.WorkerRegistration, error) {
	if err := quarry.CheckWorkerName(name); err != nil {
		return "", nil, err
	}
	token, hash := quarry.NewWorkerRegistration()
	var r *quarry.WorkerRegistration
	err := db.update(ctx, func(tx *Tx) error {
		expires, err := quarry.RegistrationExpiry(tx.now.Time, hours)
		if err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO worker_registrations (name, hashed_token, display, created_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, name, hash, quarry.DisplayWorkerRegistration(token), c.ID, tx.now.Micros(),
			expires.Micros()).Scan(&id); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "worker_registration.create", "worker_registration", id, []string{"name", "expires_at"}); err != nil {
			return err
		}
		r, err = registration(ctx, tx, id)
		return err
	})
	return token, r, err
}

const registrationColumns = `id, name, display, created_by, created_at, expires_at, revoked_at, workers`

func scanRegistration(row interface{ Scan(...any) error }) (*quarry.WorkerRegistration, error) {
	var (
		r                quarry.WorkerRegistration
		created, expires int64
		revoked          sql.NullInt64
	)
	if err := row.Scan(&r.ID, &r.Name, &r.Display, &r.CreatedBy, &created, &expires, &revoked, &r.Workers); err != nil {
		return nil, err
	}
	r.CreatedAt, r.ExpiresAt, r.RevokedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(expires), timeOrNil(revoked)
	return &r, nil
}

func registration(ctx context.Context, q querier, id int64) (*quarry.WorkerRegistration, error) {
	r, err := scanRegistration(q.QueryRowContext(ctx, `SELECT `+registrationColumns+` FROM worker_registrations WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.Errorf(quarry.ENOTFOUND, "Worker registration token %d does not exist", id)
	}
	return r, err
}

// WorkerRegistrations returns every registration token, newest first.
func (db *DB) WorkerRegistrations(ctx context.Context) ([]*quarry.WorkerRegistration, error) {
	return queryAll(ctx, db.read, scanRegistration, `SELECT `+registrationColumns+` FROM worker_registrations ORDER BY id DESC`)
}

// RevokeWorkerRegistration revokes registration token id: it makes no more
// workers (those it made keep working).
func (db *DB) RevokeWorkerRegistration(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := registration(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE worker_registrations SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`,
			tx.now.Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "worker_registration.revoke", "worker_registration", id, nil)
	})
}

// CheckWorkerRegistration fails with 401 unless regToken is a usable
// registration token: what a request to register shows before its body is
// read.
func (db *DB) CheckWorkerRegistration(ctx context.Context, regToken string) error {
	if !quarry.ValidWorkerRegistrationFormat(regToken) {
		return errWorkerNotAuthenticated
	}
	r, err := scanRegistration(db.read.QueryRowContext(ctx, `SELECT `+registrationColumns+` FROM worker_registrations WHERE hashed_token = $1`,
		quarry.HashToken(regToken)))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !r.Usable(db.now().Time)) {
		return errWorkerNotAuthenticated
	}
	return mapError(err)
}

// RegisterWorker makes a worker named name with registration token
// regToken, and returns the worker's own token (shown once) and record.
// An unknown, expired or revoked registration token is 401.
func (db *DB) RegisterWorker(ctx context.Context, regToken, name string) (string, *quarry.Worker, error) {
	if !quarry.ValidWorkerRegistrationFormat(regToken) {
		return "", nil, errWorkerNotAuthenticated
	}
	if err := quarry.CheckWorkerName(name); err != nil {
		return "", nil, err
	}
	token, hash := quarry.NewWorkerToken()
	var w *quarry.Worker
	err := db.update(ctx, func(tx *Tx) error {
		r, err := scanRegistration(tx.QueryRowContext(ctx, `SELECT `+registrationColumns+` FROM worker_registrations WHERE hashed_token = $1`,
			quarry.HashToken(regToken)))
		if errors.Is(err, sql.ErrNoRows) {
			return errWorkerNotAuthenticated
		}
		if err != nil {
			return err
		}
		if !r.Usable(tx.now.Time) {
			return errWorkerNotAuthenticated
		}
		id, err := tx.insertWorker(ctx, name, hash, false, r.CreatedBy)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE worker_registrations SET workers = workers + 1 WHERE id = $1`, r.ID); err != nil {
			return err
		}
		if err := tx.auditAs(ctx, "", "worker.register", "worker", id, []string{"name"}); err != nil {
			return err
		}
		w, err = worker(ctx, tx, id)
		return err
	})
	return token, w, err
}

func (tx *Tx) insertWorker(ctx context.Context, name, hash string, inProcess bool, createdBy *string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO workers (name, hashed_token, in_process, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, name, hash, inProcess, createdBy, tx.now.Micros()).Scan(&id)
	return id, err
}

// inProcessWorkerAge is how long the row of an in-process worker that is
// no longer seen (its process is gone) is kept.
const inProcessWorkerAge = 7 * 24 * time.Hour

// StartInProcessWorker makes the worker that `quarry serve` runs, named
// name (its host and process), and returns its token, which it keeps in
// memory. The rows of in-process workers not seen for a week and holding
// no attempt are deleted: their processes are gone. (No running worker is
// revoked: one that is idle but alive goes on.)
func (db *DB) StartInProcessWorker(ctx context.Context, name string) (string, int64, error) {
	token, hash := quarry.NewWorkerToken()
	var id int64
	err := db.update(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM workers WHERE in_process AND COALESCE(last_seen_at, created_at) < $1
			AND NOT EXISTS (SELECT 1 FROM index_attempts a WHERE a.worker_id = workers.id AND a.status = 'in_progress')`,
			tx.now.Add(-inProcessWorkerAge).UnixMicro()); err != nil {
			return err
		}
		var err error
		id, err = tx.insertWorker(ctx, name, hash, true, nil)
		return err
	})
	return token, id, err
}

const workerColumns = `w.id, w.name, w.in_process, w.created_at, w.last_seen_at, w.revoked_at, w.created_by`

func scanWorker(row interface{ Scan(...any) error }) (*quarry.Worker, error) {
	var (
		w             quarry.Worker
		created       int64
		seen, revoked sql.NullInt64
	)
	if err := row.Scan(&w.ID, &w.Name, &w.InProcess, &created, &seen, &revoked, &w.CreatedBy); err != nil {
		return nil, err
	}
	w.CreatedAt, w.LastSeenAt, w.RevokedAt = quarry.TimeFromMicros(created), timeOrNil(seen), timeOrNil(revoked)
	w.Attempts = []int64{}
	return &w, nil
}

func worker(ctx context.Context, q querier, id int64) (*quarry.Worker, error) {
	w, err := scanWorker(q.QueryRowContext(ctx, `SELECT `+workerColumns+` FROM workers w WHERE w.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.Errorf(quarry.ENOTFOUND, "Worker %d does not exist", id)
	}
	return w, err
}

// WorkerByToken returns the worker whose token is token. A malformed,
// unknown or revoked token is 401.
func (db *DB) WorkerByToken(ctx context.Context, token string) (*quarry.Worker, error) {
	if !quarry.ValidWorkerTokenFormat(token) {
		return nil, errWorkerNotAuthenticated
	}
	w, err := scanWorker(db.read.QueryRowContext(ctx, `SELECT `+workerColumns+` FROM workers w WHERE w.hashed_token = $1`,
		quarry.HashToken(token)))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && w.RevokedAt != nil) {
		return nil, errWorkerNotAuthenticated
	}
	return w, mapError(err)
}

// Workers returns every worker, newest first, each with the attempts it
// holds.
func (db *DB) Workers(ctx context.Context) ([]*quarry.Worker, error) {
	var ws []*quarry.Worker
	err := db.snapshot(ctx, func(q querier) error {
		var err error
		ws, err = queryAll(ctx, q, scanWorker, `SELECT `+workerColumns+` FROM workers w ORDER BY w.id DESC`)
		if err != nil {
			return err
		}
		byID := map[int64]*quarry.Worker{}
		for _, w := range ws {
			byID[w.ID] = w
		}
		return eachInts(ctx, q, `SELECT worker_id, id FROM index_attempts WHERE status = 'in_progress' AND worker_id IS NOT NULL ORDER BY id`,
			nil, func(w, a int64) {
				if x := byID[w]; x != nil {
					x.Attempts = append(x.Attempts, a)
				}
			})
	})
	return ws, mapError(err)
}

// RevokeWorker revokes worker id: its token stops working at its next
// request, and the attempts it holds end interrupted (the next attempt of
// each pair goes on from its checkpoint).
func (db *DB) RevokeWorker(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := worker(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workers SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, tx.now.Micros(), id); err != nil {
			return err
		}
		var held [][2]int64
		if err := eachInts(ctx, tx, `SELECT id, cc_pair_id FROM index_attempts WHERE worker_id = $1 AND status = 'in_progress' ORDER BY id`,
			[]any{id}, func(a, p int64) { held = append(held, [2]int64{a, p}) }); err != nil {
			return err
		}
		for _, h := range held {
			if ok, err := tx.lockAttempt(ctx, h[1], h[0], `worker_id = $3 AND status = 'in_progress'`, id); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if _, err := tx.endAttempt(ctx, h[0], h[1], quarry.RevokedWorker); err != nil {
				return err
			}
		}
		return tx.audit(ctx, c, "worker.revoke", "worker", id, nil)
	})
}

// AttemptCredential returns the credential of the pair of attempt id, in
// clear, with its version, to worker workerID, which must hold the
// attempt's live lease (409 otherwise). It leaves an audit entry naming
// the worker and the attempt, never the values.
func (db *DB) AttemptCredential(ctx context.Context, workerID, id int64) (json.RawMessage, int64, error) {
	var (
		out     json.RawMessage
		version int64
	)
	err := db.update(ctx, func(tx *Tx) error {
		pairID, credID, err := tx.attemptCredential(ctx, workerID, id)
		if err != nil {
			return err
		}
		k, err := db.credential(ctx, tx, credID)
		if err != nil {
			return err
		}
		cred, err := db.unseal(k)
		if err != nil {
			return err
		}
		out, version = cred.CredentialJSON, cred.Version
		return tx.auditWorker(ctx, "credential.lease", credID, nil, workerID, id, pairID)
	})
	return out, version, err
}

// UpdateAttemptCredential replaces the credential of the pair of attempt
// id with credential (a connector refreshed its OAuth token), for worker
// workerID, which must hold the attempt's live lease (409), if the
// credential is still at version (412 otherwise: someone changed it since
// the worker read it). It returns the new version.
func (db *DB) UpdateAttemptCredential(ctx context.Context, workerID, id int64, credential map[string]any, version int64) (int64, error) {
	var next int64
	err := db.update(ctx, func(tx *Tx) error {
		pairID, credID, err := tx.attemptCredential(ctx, workerID, id)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE credentials SET secret = $1, version = version + 1, updated_at = $2
			WHERE id = $3 AND version = $4`, db.sealCredentialJSON(credential), tx.now.Micros(), credID, version)
		if err := swapped(res, err, true); err != nil {
			return err
		}
		tx.changed(ChangeCredential, credID)
		next = version + 1
		return tx.auditWorker(ctx, "credential.update", credID, []string{"credential_json"}, workerID, id, pairID)
	})
	return next, err
}

// attemptCredential returns the pair and the credential of attempt id,
// which worker workerID must hold (quarry.ErrAttemptNotHeld otherwise).
func (tx *Tx) attemptCredential(ctx context.Context, workerID, id int64) (pairID, credID int64, err error) {
	if pairID, err = tx.heldAttempt(ctx, workerID, id); err != nil {
		return 0, 0, err
	}
	err = tx.QueryRowContext(ctx, `SELECT credential_id FROM cc_pairs WHERE id = $1`, pairID).Scan(&credID)
	return pairID, credID, err
}

// auditWorker appends the audit entry of what worker workerID did to
// credential credID for attempt attemptID of pair pairID: a worker is no
// user, so it is named in the entry's details (never a value).
func (tx *Tx) auditWorker(ctx context.Context, action string, credID int64, fields []string, workerID, attemptID, pairID int64) error {
	if fields == nil {
		fields = []string{}
	}
	details := jsonText(map[string]int64{"worker_id": workerID, "attempt_id": attemptID, "cc_pair_id": pairID})
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_events (at, action, resource_type, resource_id, fields, request_id, source_ip, details)
		VALUES ($1, $2, 'credential', $3, $4, $5, $6, $7)`,
		tx.now.Micros(), action, fmt.Sprint(credID), jsonText(fields), quarry.RequestIDFrom(ctx), quarry.ClientIPFrom(ctx), details)
	return err
}
