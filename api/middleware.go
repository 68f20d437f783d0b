package api

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
)

// middleware wraps the routes with what every request goes through: a
// request id, the base path, the body limit, panic recovery, the request
// metrics and the request log line.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r.Header.Get("X-Request-ID"))
		h := w.Header()
		h.Set("X-Request-ID", id)
		// No answer is to be read as another type than it says, nor kept by
		// a cache (one holds a new API key): a handler that may be cached
		// (the console's files) says so itself.
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		ctx := quarry.NewContextWithClientIP(quarry.NewContextWithRequestID(r.Context(), id), s.clientIP(r))
		if bp := s.cfg.BasePath; bp != "" && (r.URL.Path == bp || strings.HasPrefix(r.URL.Path, bp+"/")) {
			r.URL.Path = "/" + strings.TrimLeft(strings.TrimPrefix(r.URL.Path, bp), "/")
			// An escaped path (a document id's %2F) keeps its escapes,
			// so that its segments stay as sent.
			if raw := r.URL.RawPath; raw != "" && strings.HasPrefix(raw, bp+"/") {
				r.URL.RawPath = "/" + strings.TrimLeft(strings.TrimPrefix(raw, bp), "/")
			} else {
				r.URL.RawPath = ""
			}
			ctx = context.WithValue(ctx, basePathKey{}, true)
		}
		r = r.WithContext(ctx)
		limit := s.cfg.MaxBodyBytes
		switch {
		case uploadsFiles(r.URL.Path):
			limit = s.cfg.FileLimits.WithDefaults().MaxUploadBytes
		case r.URL.Path == avatarUploadPath:
			limit = max(limit, avatarBodyBytes)
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.LogAttrs(r.Context(), slog.LevelError, "panic",
					slog.String("request_id", id), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if !rec.wrote {
					writeJSON(rec, http.StatusInternalServerError, errorBody{"Internal server error"})
				}
			}
			elapsed, route := time.Since(start), routeOf(r)
			s.metrics.observe(r.Method, route, rec.status, elapsed)
			s.log.LogAttrs(r.Context(), requestLevel(route, rec.status), "request",
				slog.String("method", r.Method),
				slog.String("route", route),
				slog.Int("status", rec.status),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.Int64("bytes", rec.bytes),
				slog.String("request_id", id))
		}()
		next.ServeHTTP(rec, r)
	})
}

type basePathKey struct{}

// viaBasePath reports whether r came through the base path.
func viaBasePath(r *http.Request) bool {
	b, _ := r.Context().Value(basePathKey{}).(bool)
	return b
}

// constantTimeEqual reports whether a and b are equal, in time that does
// not depend on where they differ.
func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// routeOf returns the pattern of the route that served r, or "unmatched".
func routeOf(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	return r.Pattern
}

// requestID returns the caller's request id if it is sane, or a new one.
func requestID(given string) string {
	if n := len(given); n > 0 && n <= 128 && strings.Trim(given, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return given
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recorder remembers the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// requestLevel is the level of a request's log line: INFO, but DEBUG for
// the answered polls of idle workers (a lease with nothing to lease, a
// heartbeat), which every worker sends every few seconds.
func requestLevel(route string, status int) slog.Level {
	if status == http.StatusOK && (route == "POST /worker/lease" || route == "POST /worker/heartbeat") {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
