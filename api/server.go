// Package api serves Quarry's HTTP/JSON API: the connector status listing,
// the credential and custom tool updates, and the supporting endpoints of
// contract section 6. It speaks HTTP only: requests are decoded and
// validated by package decode, the work is done by package store, and every
// error is turned into a status and a body in one place (writeError).
package api

import (
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/outbound"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/toolrun"
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
	// FileLimits bounds uploads of files for the file connector (its
	// MaxUploadBytes replaces MaxBodyBytes on that route); zero fields
	// are quarry.DefaultFileLimits'.
	FileLimits quarry.FileLimits
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
	// SignIn says how people sign in.
	SignIn SignInConfig
	// ToolEgress says where runs of custom tools (and the token requests
	// of their OAuth configurations) may connect, and their time-outs and
	// size cap; the zero Policy refuses internal addresses (see package
	// toolrun).
	ToolEgress toolrun.Policy
	// Chat says how the chat answers (api/chat.go).
	Chat ChatConfig
}

// SignInConfig says how people sign in: with a local account (email and
// password), with single sign-on at an OpenID provider, or both. Either way
// they get a session, carried by a cookie. API keys work whatever it says.
type SignInConfig struct {
	// LocalAccounts turns on POST /auth/register and POST /auth/login.
	LocalAccounts bool
	// Registration says who may register once the first person has.
	Registration quarry.RegistrationPolicy
	// PasswordMinLength is the shortest password accepted; zero means 12.
	PasswordMinLength int
	// Argon2 are the password hashing parameters; zero means
	// auth.DefaultArgon2Params.
	Argon2 auth.Argon2Params
	// Sessions say how long sessions last; zeros mean 12 hours idle and 7
	// days in all.
	Sessions quarry.SessionPolicy
	// Limits bound the attempts to sign in and to register; zero means
	// quarry.DefaultSignInLimits.
	Limits quarry.SignInLimits
	// InvitationTTL is how long an invitation's link works; zero means 7
	// days.
	InvitationTTL time.Duration
	// OIDC is the OpenID provider people sign in with, or nil.
	OIDC *auth.Provider
	// OIDCName is the provider's name on the sign-in button.
	OIDCName string
	// PublicURL is the URL browsers reach Quarry at (with its base path, if
	// any); it makes the session cookie Secure when it is https, and gives
	// the cookie its path. Required with OIDC.
	PublicURL *url.URL
	// ClientIPHeader, if set, names the header that holds the client's
	// address (X-Forwarded-For: its last entry), for a Quarry behind a
	// proxy; otherwise the connection's address counts.
	ClientIPHeader string
}

// Server is the HTTP handler of the API.
type Server struct {
	cfg       Config
	db        *store.DB
	log       *slog.Logger
	mux       *http.ServeMux
	handler   http.Handler
	status    *statusCache
	metrics   *metrics
	out       *outbound.Service // The work that leaves the process.
	passwords *auth.Hasher
	policy    *quarry.PasswordPolicy
	csrf      *http.CrossOriginProtection
	mcp       *mcpEndpoint            // Quarry's own MCP endpoint (api/mcpendpoint.go).
	indexes   []quarry.DocumentSource // The sources Quarry has a connector for.
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
	si := &cfg.SignIn
	if si.PasswordMinLength <= 0 {
		si.PasswordMinLength = 12
	}
	if si.Argon2 == (auth.Argon2Params{}) {
		si.Argon2 = auth.DefaultArgon2Params()
	}
	if si.Sessions.Idle <= 0 {
		si.Sessions.Idle = 12 * time.Hour
	}
	if si.Sessions.Absolute <= 0 {
		si.Sessions.Absolute = 7 * 24 * time.Hour
	}
	if si.InvitationTTL <= 0 {
		si.InvitationTTL = 7 * 24 * time.Hour
	}
	if si.Limits == (quarry.SignInLimits{}) {
		si.Limits = quarry.DefaultSignInLimits()
	}
	status := newStatusCache(db, cfg.MaskCredentials)
	s := &Server{cfg: cfg, db: db, log: log, mux: http.NewServeMux(), status: status,
		metrics:   newMetrics(cfg, db, status),
		out:       outbound.New(outbound.Config{Egress: cfg.ToolEgress, DBTimeout: cfg.DBTimeout, OIDC: si.OIDC}, db, log),
		passwords: auth.NewHasher(si.Argon2, runtime.GOMAXPROCS(0)),
		policy:    quarry.NewPasswordPolicy(si.PasswordMinLength),
		csrf:      http.NewCrossOriginProtection(),
		indexes:   connector.NewRegistry().Sources()}
	if u := si.PublicURL; u != nil {
		// Behind a proxy that rewrites Host, the page's own origin is
		// still same-origin.
		s.csrf.AddTrustedOrigin(u.Scheme + "://" + u.Host)
	}
	s.mcp = s.newMCPEndpoint()
	s.routes()
	s.handler = s.middleware(s.mux)
	return s
}

// runTimeout is the longest a request that calls a tool's server may take
// (outbound.Service.Timeout).
func (s *Server) runTimeout() time.Duration {
	return s.out.Timeout()
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
