package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/outbound"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/toolrun"
)

func runServe(ctx context.Context, env *environment, args []string) error {
	cfg, _, err := loadConfig("serve", args, env, nil)
	if err != nil {
		return err
	}
	log := newLogger(cfg, env.stderr)
	signIn, err := cfg.signIn(ctx, log)
	if err != nil {
		return err
	}
	db, err := openDB(ctx, cfg, env)
	if err != nil {
		return err
	}
	defer db.Close()
	if files, err := db.OpenToOthers(); err != nil {
		return err
	} else if len(files) > 0 {
		log.Warn("the database files can be read by other local users: they hold API key hashes, emails and the audit log; run chmod 600 on them",
			"files", files)
	}
	token, err := db.Bootstrap(ctx)
	if err != nil {
		return fmt.Errorf("bootstrapping: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this is for a return before serving.
	if cfg.PublicURL == "" && !isLoopback(ln.Addr()) {
		log.Warn("QUARRY_PUBLIC_URL is not set and Quarry listens beyond this machine: behind an https proxy, set it to the https URL people use, "+
			"so that session cookies are always Secure (without it they are Secure only when the proxy sends X-Forwarded-Proto: https)",
			"addr", ln.Addr().String())
	}
	base := "http://" + ln.Addr().String() + cfg.BasePath
	build := currentBuild()
	if token != "" {
		fmt.Fprintf(env.stdout, `
This is a new database. An admin API key was created; it is shown only now:

    %s

Try it:

    curl -H "Authorization: Bearer %s" %s/manage/admin/connector/status
`, token, token, base)
		if cfg.LocalAccounts {
			fmt.Fprintf(env.stdout, `
Or open %s/ in a browser and register: the first account becomes an admin.
`, base)
		}
		fmt.Fprintln(env.stdout)
	}
	handler := api.NewServer(build.into(api.Config{
		BasePath:        cfg.BasePath,
		MaskCredentials: cfg.MaskCredentials,
		MaxBodyBytes:    cfg.MaxBodyBytes,
		FileLimits:      cfg.FileLimits,
		DBTimeout:       cfg.DBTimeout,
		SignIn:          signIn,
		ToolEgress:      cfg.ToolEgress,
		Chat:            api.ChatConfig{TestMode: cfg.ChatTestMode},
	}), db, log)
	if cfg.ChatTestMode {
		log.Warn("QUARRY_CHAT_TEST_MODE is on: POST /chat/send-chat-message answers mock_llm_response's text instead of the model's; this is for test deployments only")
	}
	if cfg.WriteTimeout > 0 && cfg.ToolEgress.Timeout+cfg.DBTimeout > cfg.WriteTimeout {
		log.Warn("QUARRY_TOOL_TIMEOUT and QUARRY_DB_TIMEOUT add up to more than QUARRY_WRITE_TIMEOUT: a slow tool run is cut before it can answer",
			"tool_timeout", cfg.ToolEgress.Timeout, "db_timeout", cfg.DBTimeout, "write_timeout", cfg.WriteTimeout)
	}
	go func() {
		// Read the status listing now rather than at its first request.
		start := time.Now()
		if err := handler.LoadStatus(ctx); err != nil {
			log.Warn("the status listing was not read at start; its first request will read it", "err", err)
			return
		}
		log.Info("status listing read", "duration", time.Since(start).Round(time.Millisecond))
	}()
	indexing, stopIndexing := context.WithCancel(ctx)
	var background sync.WaitGroup
	// stopIndexingNow stops the scheduler and the worker and waits for
	// them, at most the shutdown grace: a connector that ignores its
	// context holds neither the drain nor the exit.
	stopIndexingNow := sync.OnceFunc(func() {
		stopIndexing()
		stopped := make(chan struct{})
		go func() { background.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(cfg.ShutdownGrace):
			log.Warn("shutting down: the worker of this process did not stop in time; its attempts' leases will expire", "grace", cfg.ShutdownGrace)
		}
	})
	defer stopIndexingNow() // Before the database closes.
	// The search index's upkeep runs on every replica, whether it indexes
	// or not: documents pushed through the ingestion API need it too.
	background.Go(func() {
		db.RunIndexUpkeep(indexing, mergeInterval, func(err error) { log.Error("search index: the upkeep failed", "err", err) })
	})
	if cfg.Indexing {
		if err := startIndexing(indexing, &background, cfg, db, handler, log); err != nil {
			if ctx.Err() != nil {
				return nil // Asked to stop while starting: a stop, not a failure.
			}
			return err
		}
	}
	srv := cfg.httpServer(handler, log)
	log.Info("serving", "url", base, "database", db.Dialect(), "version", build.version, "revision", build.revision)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: the scheduler stops, the attempts of the worker in this process end as interrupted")
	stopIndexingNow()
	log.Info("shutting down: draining requests in flight", "grace", cfg.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close() // Cut the requests that outlasted the grace period.
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// startIndexing starts, in wg, the scheduler's loop (a pass every
// QUARRY_SCHEDULE_INTERVAL) and, unless QUARRY_INPROCESS_WORKER is false,
// the worker of this process, which reaches the server's handler in
// process, with no network. Both stop when ctx ends, the worker after
// ending its attempts as interrupted. First it tells the store the
// sources this build has connectors for (store.DB.KnowConnectors).
func startIndexing(ctx context.Context, wg *sync.WaitGroup, cfg *Config, db *store.DB, handler *api.Server, log *slog.Logger) error {
	// Pairs left INVALID because their source had no connector are
	// indexed again when this build has one.
	if n, err := db.KnowConnectors(ctx, connector.NewRegistry().Sources()); err != nil {
		return fmt.Errorf("revalidating the pairs whose source had no connector: %w", err)
	} else if n > 0 {
		log.Info("cc-pairs whose source had no connector are indexed again: this build has one", "cc_pairs", n)
	}
	wg.Go(func() { schedule(ctx, handler, cfg.ScheduleInterval, log) })
	if !cfg.InProcessWorker {
		return nil // Only quarry worker processes run attempts.
	}
	host, _ := os.Hostname()
	token, id, err := db.StartInProcessWorker(ctx, fmt.Sprintf("in-process %s %d", host, os.Getpid()))
	if err != nil {
		return fmt.Errorf("starting the worker of this process: %w", err)
	}
	pdf := pdfReader(cfg.PDFCacheDir, log)
	client := &http.Client{Transport: &outbound.InProcessTransport{Handler: handler}}
	egress := toolrun.NewRunner(cfg.ToolEgress)
	w := outbound.NewWorker(outbound.WorkerConfig{
		API:                outbound.NewWorkerAPI(client, "http://in-process"+strings.TrimRight(cfg.BasePath, "/"), token),
		ConnectorHTTP:      egress.Client(),
		ConnectorDial:      egress.Dial,
		ConnectorEndpoints: cfg.ConnectorEndpoints,
		PDF:                pdf,
		Concurrency:        cfg.WorkerConcurrency,
		PollInterval:       cfg.WorkerPollInterval,
		Log:                log.With("worker", id),
	})
	wg.Go(func() {
		defer pdf.Close()
		if err := w.Run(ctx); err != nil {
			log.Error("the worker of this process stopped; indexing goes on only on other workers", "err", err)
		}
	})
	return nil
}

// schedule runs a pass of the scheduler (api.Server.Schedule, which counts
// what it ends in the metrics) every interval until ctx ends. A pass that
// fails is logged, and the next one tries again.
func schedule(ctx context.Context, srv *api.Server, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		res, err := srv.Schedule(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("scheduler: the pass failed", "err", err)
		case err == nil && (res.Created > 0 || res.Expired > 0):
			log.Info("scheduler: pass", "attempts_created", res.Created, "leases_expired", res.Expired)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// mergeInterval is how often the search index's upkeep runs when this
// server has not written many chunks meanwhile: how long a chunk stays
// pending (searched from its pending row) at most, give or take the
// upkeep's own time.
const mergeInterval = time.Second

// httpServer returns the http.Server that serves h with the configured
// time-outs, logging its own errors to log as warnings. quarry bench builds
// its in-process server and its floor with it too.
func (c *Config) httpServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// newLogger returns the structured logger the configuration asks for.
func newLogger(cfg *Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// openDB opens the configured database and brings its schema up to date.
func openDB(ctx context.Context, cfg *Config, env *environment) (*store.DB, error) {
	keys, err := cfg.keyring(func(msg string) { fmt.Fprintln(env.stderr, msg) })
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL, keys, store.Options{SearchCache: storeCache(cfg.SearchCacheBytes)})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// isLoopback reports whether a is a loopback address, that only this
// machine reaches.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// storeCache is store.Options.SearchCache for the setting n (0 keeps none).
func storeCache(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}
