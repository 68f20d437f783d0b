// Package outbound holds Quarry's work that leaves the process: running
// custom tools and the tools of MCP servers, the connections and
// per-person credentials of MCP servers, the listing and syncing of their
// tools, and the OAuth flows of tools and of MCP servers (discovery,
// dynamic client registration, code exchange, tokens kept and refreshed).
//
// Its Service is what the HTTP handlers of package api and Quarry's own
// MCP endpoint call alike: it decides and calls, the store keeps, and the
// callers only translate (decode, call, encode, map errors to statuses,
// count). It calls other servers only through the egress guard of package
// toolrun, its low-level runner; it never imports package api.
package outbound

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/tooldef"
	"github.com/quarryhq/quarry/toolrun"
)

// Config configures a Service.
type Config struct {
	// Egress says where calls may connect, and their time-outs and size
	// cap (see package toolrun).
	Egress toolrun.Policy
	// DBTimeout bounds each read and write of the database a use case makes
	// around its calls; zero means 10 seconds.
	DBTimeout time.Duration
	// OIDC is the provider people sign in with, or nil: its tokens are
	// refreshed for the tools and MCP servers that pass the person's own
	// token through.
	OIDC *auth.Provider
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service does the work that leaves the process, for the handlers of the
// API and for Quarry's MCP endpoint.
type Service struct {
	db        *store.DB
	runner    *toolrun.Runner
	defs      *tooldef.Cache
	oidc      *auth.Provider
	log       *slog.Logger
	dbTimeout time.Duration
	now       func() time.Time
}

// New returns a Service that keeps its data in db and logs to log.
func New(cfg Config, db *store.DB, log *slog.Logger) *Service {
	if cfg.DBTimeout <= 0 {
		cfg.DBTimeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: db, runner: toolrun.NewRunner(cfg.Egress), defs: tooldef.NewCache(16<<20, runtime.GOMAXPROCS(0)/2), oidc: cfg.OIDC,
		log: log, dbTimeout: cfg.DBTimeout, now: cfg.Now}
}

// Timeout is the longest a use case that calls another server may take:
// the call's time-out, with the database's on top for what comes before
// and after.
func (s *Service) Timeout() time.Duration {
	return s.runner.Policy().Timeout + s.dbTimeout
}

// Definition returns the compiled definition of a custom tool (cached by
// the runner), for those that list its operations.
func (s *Service) Definition(ctx context.Context, def []byte) (*toolrun.Definition, error) {
	return s.runner.Definition(ctx, def)
}

// ValidateDefinition validates a custom tool's definition as Onyx does,
// through the cache, and returns its methods.
func (s *Service) ValidateDefinition(ctx context.Context, def []byte) ([]tooldef.Method, error) {
	return s.defs.Validate(ctx, def)
}

// dbContext returns ctx bounded by the database's time-out.
func (s *Service) dbContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.dbTimeout)
}

// callContext returns ctx bounded by a call's time-out.
func (s *Service) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.runner.Policy().Timeout)
}
