package api

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
)

// The operations routes (contract section 8) are public, for load
// balancers and monitoring: GET /health, GET /ready, GET /metrics and
// GET /version.

// readyTimeout bounds the database check of GET /ready (or DBTimeout, if
// shorter): a load balancer's probe wants a prompt answer.
const readyTimeout = 2 * time.Second

// handleHealth serves GET /health: the process is up and serving. It does
// not touch the database, so that a database outage does not get the
// process restarted.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{"ok"})
}

// handleReady serves GET /ready: 200 when the database answers a ping
// within readyTimeout, 503 saying why otherwise (the cause goes to the
// log).
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), min(readyTimeout, s.cfg.DBTimeout))
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "not ready",
			slog.String("request_id", quarry.RequestIDFrom(r.Context())), slog.String("error", err.Error()))
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, errorBody{"The database is unavailable: " + store.OutageReason(err) + "."})
		return
	}
	// The provider's outage is reported, not failed: API keys, sessions
	// and local accounts go on working, and every replica depends on the
	// same provider, so failing would take them all out of service.
	var sso string
	if p := s.cfg.SignIn.OIDC; p != nil {
		sso = p.Outage()
	}
	writeJSON(w, http.StatusOK, struct {
		Status       string `json:"status"`
		SingleSignOn string `json:"single_sign_on,omitempty"`
	}{"ready", sso})
}

// handleMetrics serves GET /metrics: the server's metrics in the Prometheus
// text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.handler.ServeHTTP(w, r)
}

// buildBody is the body of GET /version: what the build says of itself,
// nothing of the host it runs on.
type buildBody struct {
	Version      string  `json:"version"`
	Revision     *string `json:"revision"`
	RevisionTime *string `json:"revision_time"`
	Modified     bool    `json:"modified"`
	GoVersion    string  `json:"go_version"`
}

// buildOf describes the build of cfg.
func buildOf(cfg Config) buildBody {
	b := buildBody{Version: cfg.Version, Modified: cfg.Modified, GoVersion: runtime.Version()}
	if b.Version == "" {
		b.Version = "dev"
	}
	if cfg.Revision != "" {
		b.Revision = &cfg.Revision
	}
	if !cfg.RevisionTime.IsZero() {
		t := cfg.RevisionTime.UTC().Format(time.RFC3339)
		b.RevisionTime = &t
	}
	return b
}

// handleVersion serves GET /version: the build's version, VCS revision and
// time, whether its tree was modified, and its Go version.
func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, buildOf(s.cfg))
}

// deref returns *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
