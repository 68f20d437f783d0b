package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
)

// WorkerConfig is what a Worker runs with.
type WorkerConfig struct {
	// API is the client of the server's worker protocol, with the
	// worker's token.
	API *WorkerAPI
	// Connectors makes the connector of each attempt's source; nil means
	// connector.NewRegistry().
	Connectors *connector.Registry
	// ConnectorHTTP makes the calls of connectors: the egress guard's
	// client (toolrun.NewRunner(policy).Client()). Required.
	ConnectorHTTP *http.Client
	// ConnectorDial opens the connections of connectors that do not speak
	// HTTP (IMAP): the same guard's (toolrun.NewRunner(policy).Dial);
	// without it, those connectors' attempts fail.
	ConnectorDial func(ctx context.Context, network, address string) (net.Conn, error)
	// ConnectorEndpoints point sources whose API host is fixed elsewhere
	// (QUARRY_CONNECTOR_ENDPOINTS); the egress guard still applies.
	ConnectorEndpoints connector.Endpoints
	// PDF reads the PDFs connectors find, shared by every attempt; nil
	// means a reader of the worker's own (connector.NewPDFReader(""),
	// whose module is compiled on the first PDF and never closed).
	PDF *connector.PDFReader
	// Concurrency is how many attempts run at once; zero means 1.
	Concurrency int
	// PollInterval is how long an idle worker waits before it asks for an
	// attempt again; zero means DefaultPollInterval.
	PollInterval time.Duration
	// HeartbeatInterval is how often the leases held are renewed; zero
	// means quarry.LeaseTTL/4.
	HeartbeatInterval time.Duration
	// FinishTimeout bounds the report that ends an attempt once the
	// worker is shutting down; zero means DefaultFinishTimeout.
	FinishTimeout time.Duration
	// Log receives what the worker does; never a credential's value.
	Log *slog.Logger
	// Now is the clock of connectors; nil means time.Now.
	Now func() time.Time
}

// Defaults of a WorkerConfig.
const (
	DefaultPollInterval  = 2 * time.Second
	DefaultFinishTimeout = 10 * time.Second
)

// Worker runs index attempts: it leases them from the server (asking
// every PollInterval while it has room), runs up to Concurrency at once,
// renews their leases, and runs each one's connector step by step from
// the lease's checkpoint (or the connector's first), reporting each step's
// documents, failures and checkpoint, then ends the attempt: success;
// failed, with the error (credential values masked); canceled when the
// server asks it to stop; interrupted when the worker shuts down. It holds
// at most one progress report per attempt in memory. The same Worker runs
// inside `quarry serve` (through InProcessTransport) and in `quarry
// worker` on other machines.
type Worker struct {
	cfg WorkerConfig

	mu      sync.Mutex
	running map[int64]context.CancelCauseFunc // The attempts held, and how to stop each one.
}

// errStopAsked is why an attempt's run stops when the server asked for it
// (its context's cause, or a progress report's answer).
var errStopAsked = errors.New("the server asked to stop the attempt")

// NewWorker returns a Worker with cfg, its zero values set to the
// defaults.
func NewWorker(cfg WorkerConfig) *Worker {
	if cfg.Connectors == nil {
		cfg.Connectors = connector.NewRegistry()
	}
	if cfg.PDF == nil {
		cfg.PDF = connector.NewPDFReader("")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = quarry.LeaseTTL / 4
	}
	if cfg.FinishTimeout <= 0 {
		cfg.FinishTimeout = DefaultFinishTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Worker{cfg: cfg, running: map[int64]context.CancelCauseFunc{}}
}

// Run runs attempts until ctx ends, then ends those it holds as
// interrupted and returns nil. It returns ErrWorkerRevoked (wrapped) as
// soon as the server refuses the worker's token, after stopping every
// attempt.
func (w *Worker) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() { w.heartbeats(ctx, cancel) })
	slots := make(chan struct{}, w.cfg.Concurrency)
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return w.outcome(ctx)
		}
		lease, err := w.cfg.API.Lease(ctx)
		switch {
		case errors.Is(err, ErrWorkerRevoked):
			<-slots
			cancel(err)
			return w.outcome(ctx)
		case err != nil:
			<-slots
			if ctx.Err() == nil {
				w.cfg.Log.Warn("worker: leasing failed", "err", err)
			}
		case lease == nil:
			<-slots
		default:
			actx, stop := context.WithCancelCause(ctx)
			w.hold(lease.AttemptID, stop)
			wg.Go(func() {
				defer func() { <-slots }()
				defer w.release(lease.AttemptID)
				w.runAttempt(actx, cancel, lease)
			})
			continue // Lease again at once while there is room.
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.cfg.PollInterval):
		}
	}
}

// outcome is what Run returns once its context ended.
func (w *Worker) outcome(ctx context.Context) error {
	if err := context.Cause(ctx); errors.Is(err, ErrWorkerRevoked) {
		return fmt.Errorf("worker stopped: %w", err)
	}
	return nil
}

// hold records attempt id as running, stopped by stop.
func (w *Worker) hold(id int64, stop context.CancelCauseFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running[id] = stop
}

// release forgets attempt id.
func (w *Worker) release(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if stop, ok := w.running[id]; ok {
		stop(nil)
		delete(w.running, id)
	}
}

// held returns the attempts running.
func (w *Worker) held() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]int64, 0, len(w.running))
	for id := range w.running {
		ids = append(ids, id)
	}
	return ids
}

// heartbeats renews the leases of the attempts running every
// HeartbeatInterval until ctx ends, and stops those the server names; a
// revoked token stops the worker (revoke).
func (w *Worker) heartbeats(ctx context.Context, revoke context.CancelCauseFunc) {
	t := time.NewTicker(w.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held := w.held()
		if len(held) == 0 {
			continue
		}
		stop, err := w.cfg.API.Heartbeat(ctx, held)
		if errors.Is(err, ErrWorkerRevoked) {
			revoke(err)
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				w.cfg.Log.Warn("worker: heartbeat failed", "err", err, "attempts", held)
			}
			continue
		}
		w.mu.Lock()
		for _, id := range stop {
			if cancel, ok := w.running[id]; ok {
				w.cfg.Log.Info("worker: the server asked to stop an attempt", "attempt", id)
				cancel(errStopAsked)
			}
		}
		w.mu.Unlock()
	}
}

// runAttempt runs the attempt of lease until it ends, and reports how.
// ctx ends when the attempt is to stop (its cause says why); revoke stops
// the whole worker.
func (w *Worker) runAttempt(ctx context.Context, revoke context.CancelCauseFunc, lease *quarry.Lease) {
	log := w.cfg.Log.With("attempt", lease.AttemptID, "cc_pair", lease.CCPairID, "source", lease.Connector.Source)
	log.Info("worker: attempt started", "from_beginning", lease.FromBeginning, "resumes", !noCheckpoint(lease.Checkpoint),
		"poll_range_start", lease.PollRangeStart, "poll_range_end", lease.PollRangeEnd)
	mask := &credentialMask{}
	steps, err := w.steps(ctx, log, lease, mask)
	f, report := w.finish(ctx, lease, mask, steps, err)
	switch {
	case errors.Is(err, ErrWorkerRevoked):
		revoke(err)
		log.Error("worker: revoked while running an attempt; stopping")
		return
	case errors.Is(err, ErrAttemptNotHeld):
		log.Warn("worker: the attempt is no longer held by this worker; abandoned", "err", mask.apply(err.Error()))
		return
	case !report:
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.FinishTimeout)
	defer cancel()
	status, ferr := w.cfg.API.Finish(fctx, lease.AttemptID, f)
	switch {
	case errors.Is(ferr, ErrWorkerRevoked):
		revoke(ferr)
	case errors.Is(ferr, ErrAttemptNotHeld):
		log.Warn("worker: the attempt was no longer held when it ended; abandoned")
	case ferr != nil:
		log.Error("worker: ending the attempt failed; its lease will expire", "err", mask.apply(ferr.Error()), "status", f.Status)
	default:
		attrs := []any{"status", status, "steps", steps}
		if f.ErrorMsg != nil {
			attrs = append(attrs, "error", *f.ErrorMsg)
		}
		log.Info("worker: attempt ended", attrs...)
	}
}

// finish returns how attempt lease ends after its run stopped with err
// after steps steps, and whether to report it.
func (w *Worker) finish(ctx context.Context, lease *quarry.Lease, mask *credentialMask, steps int, err error) (quarry.Finish, bool) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(err, ErrWorkerRevoked) || errors.Is(cause, ErrWorkerRevoked) || errors.Is(err, ErrAttemptNotHeld):
		return quarry.Finish{}, false
	case err == nil:
		return quarry.Finish{Status: quarry.IndexSuccess}, true
	case ctx.Err() != nil && errors.Is(cause, errStopAsked), errors.Is(err, errStopAsked):
		return quarry.Finish{Status: quarry.IndexCanceled}, true
	case ctx.Err() != nil:
		return quarry.Finish{Status: quarry.IndexInterrupted}, true
	}
	msg := err.Error()
	if q, ok := err.(*quarry.Error); ok {
		msg = q.Message // Quarry's own refusal (a connector that cannot prune or sync), in its words.
	}
	msg = mask.apply(msg)
	trace := mask.apply(fmt.Sprintf("%s connector %q (id %d), attempt %d, step %d, poll window %s to %s:\n%s",
		lease.Connector.Source, lease.Connector.Name, lease.Connector.ID, lease.AttemptID, steps+1,
		lease.PollRangeStart, lease.PollRangeEnd, errorChain(err)))
	return quarry.Finish{Status: quarry.IndexFailed, ErrorMsg: &msg, FullExceptionTrace: &trace, Reason: stopReason(err)}, true
}

// stopReason says why a run that failed with err stopped, when it is not
// its source's failure: Quarry has no connector for the source, or the
// source refused the credential.
func stopReason(err error) quarry.StopReason {
	var none *connector.NoConnectorError
	var refused *connector.CredentialError
	switch {
	case errors.As(err, &none):
		return quarry.StopNoConnector
	case errors.As(err, &refused):
		return quarry.StopCredentialRefused
	}
	return ""
}

// noCheckpoint reports whether a lease's checkpoint says to start from the
// connector's first: it is absent or null.
func noCheckpoint(cp json.RawMessage) bool {
	return len(cp) == 0 || string(cp) == "null"
}

// errorChain renders err and each error it wraps, one per line: the Go
// stand-in for an exception's trace.
func errorChain(err error) string {
	s := err.Error()
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		s += fmt.Sprintf("\n  caused by (%T): %s", e, e.Error())
	}
	return s
}

// steps fetches the credential of lease's pair, opens its connector and
// runs it step by step, reporting each step, until a checkpoint says there
// is no more. It returns how many steps ended, and why it stopped (nil:
// the run is done). The credential's values are added to mask as soon as
// it is read, and again when the connector changes it.
func (w *Worker) steps(ctx context.Context, log *slog.Logger, lease *quarry.Lease, mask *credentialMask) (int, error) {
	if lease.Kind == quarry.AttemptPrune {
		return w.prune(ctx, log, lease, mask)
	}
	if lease.Kind.Syncs() {
		return w.sync(ctx, log, lease, mask)
	}
	conn, err := w.open(ctx, log, lease, mask)
	if err != nil {
		return 0, err
	}
	checkpoint := lease.Checkpoint
	if _, err := connector.HasMore(checkpoint); noCheckpoint(checkpoint) || err != nil {
		// None, or one the connector cannot read: start afresh, as Onyx
		// does when a checkpoint does not load.
		checkpoint = conn.FirstCheckpoint()
	}
	window := connector.Window{Start: lease.PollRangeStart.Time, End: lease.PollRangeEnd.Time}
	var stopAsked bool
	send := func(ctx context.Context, b *progressBatch) error {
		res, err := w.cfg.API.Progress(ctx, lease.AttemptID, b.body())
		if err != nil {
			return err
		}
		if res.Stop {
			stopAsked = true
			return errStopAsked
		}
		return nil
	}
	for step := 0; ; step++ {
		more, err := connector.HasMore(checkpoint)
		if err != nil {
			return step, err
		}
		if !more {
			return step, nil
		}
		out := newStepOutput(defaultProgressLimits(), send)
		out.mask = mask.apply
		next, err := conn.Step(ctx, window, checkpoint, out)
		if err == nil {
			err = out.end(ctx, next)
		} else if !stopAsked && ctx.Err() == nil && !errors.Is(err, ErrAttemptNotHeld) && !errors.Is(err, ErrWorkerRevoked) {
			// Keep what the step found before it failed; the checkpoint
			// stays where it was.
			if ferr := out.flush(ctx); ferr != nil {
				log.Warn("worker: reporting what a failed step found failed", "err", mask.apply(ferr.Error()))
			}
		}
		if err != nil {
			return step, err
		}
		log.Debug("worker: step reported", "step", step+1, "documents", out.docs, "failures", out.failures)
		checkpoint = next
	}
}

// open fetches the credential of lease's pair and opens its connector. The
// credential's values are added to mask as soon as it is read, and again
// when the connector changes it.
func (w *Worker) open(ctx context.Context, log *slog.Logger, lease *quarry.Lease, mask *credentialMask) (connector.Connector, error) {
	credential, version, err := w.cfg.API.Credential(ctx, lease.AttemptID)
	if err != nil {
		return nil, err
	}
	mask.add(credential)
	env := &connector.Env{
		HTTP:      w.cfg.ConnectorHTTP,
		Dial:      w.cfg.ConnectorDial,
		Endpoints: w.cfg.ConnectorEndpoints,
		PDF:       w.cfg.PDF,
		Now:       w.cfg.Now,
		Log:       slog.New(&maskingHandler{inner: log.Handler(), mask: mask}), // A connector's words may quote its credential.
		OpenFile: func(ctx context.Context, id string) (*connector.File, error) {
			return w.cfg.API.File(ctx, lease.AttemptID, id)
		},
		SaveCredential: func(ctx context.Context, c json.RawMessage) error {
			v, err := w.cfg.API.PutCredential(ctx, lease.AttemptID, c, version)
			if err != nil {
				return err
			}
			version = v
			mask.add(c)
			return nil
		},
	}
	return w.cfg.Connectors.Open(lease.Connector.Source, lease.Connector.Config, credential, env)
}

// prune runs the prune of lease: its connector lists the ids its source
// still has (connector.Slim), reported in batches of at most
// quarry.MaxBatchDocuments; the server deletes the pair's other documents
// when the prune ends in success. It returns 1 step once the listing is
// done, and why it stopped (nil: done).
func (w *Worker) prune(ctx context.Context, log *slog.Logger, lease *quarry.Lease, mask *credentialMask) (int, error) {
	conn, err := w.open(ctx, log, lease, mask)
	if err != nil {
		return 0, err
	}
	slim, ok := connector.As[connector.Slim](conn)
	if !ok {
		return 0, quarry.ErrNoSlimListing(lease.Connector.Source)
	}
	listed := 0
	send := func(ctx context.Context, ids []string) error {
		body, err := json.Marshal(map[string][]string{"document_ids": ids})
		if err != nil {
			return err
		}
		res, err := w.cfg.API.Progress(ctx, lease.AttemptID, body)
		if err != nil {
			return err
		}
		if res.Stop {
			return errStopAsked
		}
		listed += len(ids)
		return nil
	}
	err = slim.ListIDs(ctx, func(ctx context.Context, batch []string) error {
		for len(batch) > 0 {
			n := min(len(batch), quarry.MaxBatchDocuments)
			if err := send(ctx, batch[:n]); err != nil {
				return err
			}
			batch = batch[n:]
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	log.Debug("worker: prune listed its source", "ids", listed)
	return 1, nil
}
