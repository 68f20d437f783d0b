// Package api serves Quarry's HTTP/JSON API: the connector status listing,
// the credential and custom tool updates, and the supporting endpoints of
// contract section 6. It speaks HTTP only: requests are decoded and
// validated by package decode, the work is done by package store, and every
// error is turned into a status and a body in one place (writeError).
package api

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/tooldef"
)

// Config configures a Server.
type Config struct {
	// BasePath, if set (e.g. "/api"), mounts every route under that prefix
	// as well as at the root.
	BasePath string
	// MaskCredentials masks credential values and tool header values in
	// responses (contract section 4.4). Turn it off only for trusted
	// single-admin set-ups.
	MaskCredentials bool
	// MaxBodyBytes caps request bodies; larger ones get 413. Zero means 1 MiB.
	MaxBodyBytes int64
	// DBTimeout bounds the time a request may spend on the database; past
	// it the request answers 503. Zero means 10 seconds.
	DBTimeout time.Duration
	// Version is the build's version label, reported by /openapi.json,
	// /version and the metrics.
	Version string
	// Revision is the VCS commit the build was made from, RevisionTime its
	// time, and Modified whether the tree had uncommitted changes; reported
	// by /version and the metrics. Empty (zero) when unknown.
	Revision     string
	RevisionTime time.Time
	Modified     bool
}

// Server is the HTTP handler of the API.
type Server struct {
	cfg     Config
	db      *store.DB
	log     *slog.Logger
	mux     *http.ServeMux
	handler http.Handler
	status  *statusCache
	metrics *metrics
	defs    *tooldef.Cache // Outcomes of custom tool definition validation.
}

// NewServer returns a Server that keeps its data in db and logs to log.
func NewServer(cfg Config, db *store.DB, log *slog.Logger) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.DBTimeout <= 0 {
		cfg.DBTimeout = 10 * time.Second
	}
	cfg.BasePath = strings.TrimRight(cfg.BasePath, "/")
	s := &Server{cfg: cfg, db: db, log: log, mux: http.NewServeMux(), status: newStatusCache(),
		metrics: newMetrics(cfg, db), defs: tooldef.NewCache(16 << 20)}
	s.routes()
	s.handler = s.middleware(s.mux)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
