package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/store"
)

// The worker protocol (docs/decisions.md, "Indexing"): workers register
// with a registration token an admin makes, then lease index attempts,
// beat, report and finish them with a token of their own, which opens
// these routes and nothing else (and nothing else opens them). The routes
// only translate; the rows and their rules are the store's and the root
// package's.

// workerFunc is a handler of a worker route, given the worker.
type workerFunc func(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error

// workerAuthed adapts a worker route: the request must carry the bearer
// token of a worker that is not revoked (401 otherwise, as any route's).
func (s *Server) workerAuthed(h workerFunc) http.Handler {
	return s.public(func(w http.ResponseWriter, r *http.Request) error {
		token, err := bearerOf(r)
		if err != nil {
			return err
		}
		wk, err := s.db.WorkerByToken(r.Context(), token)
		if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
			return errInvalidToken
		}
		if err != nil {
			return err
		}
		return h(w, r, wk)
	})
}

// bearerOf returns the bearer token of a request to a worker route: none
// is errNotAuthenticated, but a session cookie, which opens nothing here,
// is errInvalidToken (as a SCIM route answers).
func bearerOf(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if _, err := r.Cookie(sessionCookie); err == nil {
			return "", errInvalidToken
		}
		return "", errNotAuthenticated
	}
	token, ok := bearerToken(h)
	if !ok {
		return "", errInvalidToken
	}
	return token, nil
}

// handleRegisterWorker serves POST /worker/register: the registration
// token is the bearer; the answer holds the worker's own token, once.
func (s *Server) handleRegisterWorker(w http.ResponseWriter, r *http.Request) error {
	token, err := bearerOf(r)
	if err != nil {
		return err
	}
	if err := s.db.CheckWorkerRegistration(r.Context(), token); err != nil {
		if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
			return errInvalidToken
		}
		return err
	}
	var in registerWorkerRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	secret, wk, err := s.db.RegisterWorker(r.Context(), token, in.Body.Name)
	if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
		return errInvalidToken
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, registeredWorker{WorkerID: wk.ID, Name: wk.Name, Token: secret})
}

// handleLease serves POST /worker/lease: the oldest attempt waiting, or
// null.
func (s *Server) handleLease(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	l, err := s.db.LeaseAttempt(r.Context(), wk.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, leaseAnswer{Attempt: l})
}

// handleHeartbeat serves POST /worker/heartbeat.
func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	var in heartbeatRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	stop, expires, err := s.db.Heartbeat(r.Context(), wk.ID, in.Body.AttemptIDs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, heartbeatAnswer{Stop: stop, LeaseExpiresAt: expires})
}

// handleAttemptCredential serves GET
// /worker/attempts/{attempt_id}/credential: the pair's credential in
// clear, to the worker holding the attempt's live lease only, never kept
// by a cache on the way.
func (s *Server) handleAttemptCredential(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	var in attemptPath
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	cred, version, err := s.db.AttemptCredential(r.Context(), wk.ID, in.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, attemptCredential{CredentialJSON: cred, Version: version})
}

// handleUpdateAttemptCredential serves PUT
// /worker/attempts/{attempt_id}/credential: a connector that refreshed an
// OAuth token writes it back, if the credential is still at the version
// it read (412 otherwise).
func (s *Server) handleUpdateAttemptCredential(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	var in updateAttemptCredentialRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	obj, err := credentialObject(in.Body.CredentialJSON)
	if err != nil {
		return err
	}
	v, err := s.db.UpdateAttemptCredential(r.Context(), wk.ID, in.ID, obj, in.Body.Version)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		Version int64 `json:"version"`
	}{v})
}

// handleProgress serves POST /worker/attempts/{attempt_id}/progress.
func (s *Server) handleProgress(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	var in progressRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	p, err := in.Body.progress()
	if err != nil {
		return err
	}
	res, err := s.db.ReportProgress(r.Context(), wk.ID, in.ID, p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// handleFinish serves POST /worker/attempts/{attempt_id}/finish.
func (s *Server) handleFinish(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	var in finishAttemptRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f := quarry.Finish{Status: in.Body.Status, ErrorMsg: value(in.Body.ErrorMsg), FullExceptionTrace: value(in.Body.FullExceptionTrace)}
	if r := value(in.Body.Reason); r != nil {
		f.Reason = quarry.StopReason(*r)
	}
	status, err := s.db.FinishAttempt(r.Context(), wk.ID, in.ID, f)
	if err != nil {
		return err
	}
	s.metrics.attempts.WithLabelValues(string(status)).Inc()
	return writeJSON(w, http.StatusOK, struct {
		Status quarry.IndexingStatus `json:"status"`
	}{status})
}

// Schedule runs one pass of the scheduler (store.DB.Schedule) and counts
// the attempts it ended (expired leases) in the metrics. `quarry serve`
// calls it every few seconds; every replica may.
func (s *Server) Schedule(ctx context.Context) (store.ScheduleResult, error) {
	res, err := s.db.Schedule(ctx)
	for _, st := range res.Ended {
		s.metrics.attempts.WithLabelValues(string(st)).Inc()
	}
	return res, err
}

// Admins' routes: registration tokens and workers.

// handleCreateWorkerRegistration serves POST
// /admin/worker/registration-token: the token is shown once.
func (s *Server) handleCreateWorkerRegistration(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createWorkerRegistrationRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	token, reg, err := s.db.CreateWorkerRegistration(r.Context(), c, in.Body.Name, value(in.Body.Hours))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		*quarry.WorkerRegistration
		Token string `json:"token"`
	}{reg, token})
}

// handleListWorkerRegistrations serves GET
// /admin/worker/registration-tokens, newest first.
func (s *Server) handleListWorkerRegistrations(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	rs, err := s.db.WorkerRegistrations(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rs)
}

// handleRevokeWorkerRegistration serves DELETE
// /admin/worker/registration-token/{registration_id}.
func (s *Server) handleRevokeWorkerRegistration(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in revokeWorkerRegistrationRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RevokeWorkerRegistration(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleListWorkers serves GET /admin/workers, newest first.
func (s *Server) handleListWorkers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ws, err := s.db.Workers(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ws)
}

// handleRevokeWorker serves DELETE /admin/worker/{worker_id}.
func (s *Server) handleRevokeWorker(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in revokeWorkerRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RevokeWorker(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// The worker protocol's models.

// workerRegistration is the body of POST /worker/register.
type workerRegistration struct {
	Name string `json:"name"`
}

// registeredWorker is the answer to POST /worker/register.
type registeredWorker struct {
	WorkerID int64  `json:"worker_id"`
	Name     string `json:"name"`
	Token    string `json:"token"`
}

// workerRegistrationCreate is the body of POST
// /admin/worker/registration-token.
type workerRegistrationCreate struct {
	Name  string                 `json:"name"`
	Hours decode.Optional[int64] `json:"hours" ge:"1" le:"720"`
}

// leaseAnswer is the answer to POST /worker/lease.
type leaseAnswer struct {
	Attempt *quarry.Lease `json:"attempt"`
}

// heartbeat is the body of POST /worker/heartbeat.
type heartbeat struct {
	AttemptIDs []int64 `json:"attempt_ids" default:"[]" max_length:"128"`
}

// heartbeatAnswer is the answer to POST /worker/heartbeat.
type heartbeatAnswer struct {
	Stop           []int64     `json:"stop"`
	LeaseExpiresAt quarry.Time `json:"lease_expires_at"`
}

// attemptPath is the path of a route about one attempt.
type attemptPath struct {
	ID int64 `path:"attempt_id"`
}

// attemptCredential is the answer to GET
// /worker/attempts/{attempt_id}/credential.
type attemptCredential struct {
	CredentialJSON json.RawMessage `json:"credential_json"`
	Version        int64           `json:"version"`
}

// attemptCredentialUpdate is the body of PUT
// /worker/attempts/{attempt_id}/credential.
type attemptCredentialUpdate struct {
	CredentialJSON json.RawMessage `json:"credential_json"`
	Version        int64           `json:"version"`
}

// attemptFinish is the body of POST /worker/attempts/{attempt_id}/finish.
// reason says why an attempt failed when it was not its source's failure
// (quarry.StopReason): no_connector ends it canceled, credential_refused failed.
type attemptFinish struct {
	Status             quarry.IndexingStatus                    `json:"status"`
	ErrorMsg           decode.Optional[string]                  `json:"error_msg"`
	FullExceptionTrace decode.Optional[string]                  `json:"full_exception_trace"`
	Reason             decode.Optional[quarry.WorkerStopReason] `json:"reason"`
}

// progressReport is the body of POST
// /worker/attempts/{attempt_id}/progress. Documents and failures are
// kept as the JSON sent and read as Onyx's models (quarry.Document,
// quarry.ConnectorFailure).
// A prune reports the ids its source listed (document_ids), and nothing
// else; a permission sync its documents' access (access, each
// quarry.DocumentAccess), a group sync its source's groups (groups, each
// quarry.ExternalGroup).
type progressReport struct {
	Documents   []json.RawMessage                `json:"documents" default:"[]" max_length:"1000"`
	Failures    []json.RawMessage                `json:"failures" default:"[]" max_length:"1000"`
	Checkpoint  decode.Optional[json.RawMessage] `json:"checkpoint"`
	DocumentIDs []string                         `json:"document_ids" default:"[]" max_length:"1000"`
	Access      []json.RawMessage                `json:"access" default:"[]" max_length:"1000"`
	Groups      []json.RawMessage                `json:"groups" default:"[]" max_length:"1000"`
}

// progress returns the report as the store takes it: a document or a
// failure that does not read as Onyx's model is a 400 naming it.
func (p *progressReport) progress() (*quarry.Progress, error) {
	out := &quarry.Progress{Documents: make([]quarry.Document, len(p.Documents)), Failures: make([]quarry.ConnectorFailure, len(p.Failures)),
		ListedIDs: p.DocumentIDs}
	for i, d := range p.Documents {
		if err := json.Unmarshal(d, &out.Documents[i]); err != nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Document %d of the batch is not Onyx's Document: %s", i, jsonFault(err))
		}
	}
	for i, f := range p.Failures {
		if err := json.Unmarshal(f, &out.Failures[i]); err != nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Failure %d of the batch is not Onyx's ConnectorFailure: %s", i, jsonFault(err))
		}
	}
	if cp := value(p.Checkpoint); cp != nil {
		out.Checkpoint = *cp
	}
	out.Access, out.Groups = make([]quarry.DocumentAccess, len(p.Access)), make([]quarry.ExternalGroup, len(p.Groups))
	for i, a := range p.Access {
		if err := json.Unmarshal(a, &out.Access[i]); err != nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Access %d of the batch is not a document's access: %s", i, jsonFault(err))
		}
	}
	for i, g := range p.Groups {
		if err := json.Unmarshal(g, &out.Groups[i]); err != nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Group %d of the batch is not an external group: %s", i, jsonFault(err))
		}
	}
	return out, nil
}

// jsonFault says what is wrong in a JSON value that does not read as a
// model, naming the field and the kind of value it should hold, never Go's
// types.
func jsonFault(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s should not be a JSON %s", te.Field, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "it is not JSON"
	}
	return "a field holds a value of the wrong kind"
}
