package api

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// statuses maps error codes to HTTP statuses; EINTERNAL and unknown codes
// are 500.
var statuses = map[string]int{
	quarry.EINVALID:      http.StatusBadRequest,
	quarry.EUNAUTHORIZED: http.StatusUnauthorized,
	quarry.EFORBIDDEN:    http.StatusForbidden,
	quarry.ENOTFOUND:     http.StatusNotFound,
	quarry.ECONFLICT:     http.StatusConflict,
	quarry.EPRECONDITION: http.StatusPreconditionFailed,
	quarry.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	quarry.ETOOMANY:      http.StatusTooManyRequests,
	quarry.EUNAVAILABLE:  http.StatusServiceUnavailable,

	quarry.ENOTIMPLEMENTED: http.StatusNotImplemented,
	quarry.EBADGATEWAY:     http.StatusBadGateway,
	quarry.EGATEWAYTIMEOUT: http.StatusGatewayTimeout,
}

// errorBody is the body of every error response but 422.
type errorBody struct {
	Detail string `json:"detail"`
}

// onyxErrorBody is errorBody with Onyx's error_code first, on the routes
// where Onyx v4.6.1 sends one (onyxCoded): OnyxError's body.
type onyxErrorBody struct {
	ErrorCode string `json:"error_code"`
	Detail    string `json:"detail"`
}

// onyxErrorCodes are Onyx's error_code (OnyxErrorCode, v4.6.1) of the
// errors of a route that sends them, by Quarry's code: what Onyx's
// clients and tests read beside the detail.
var onyxErrorCodes = map[string]string{
	quarry.EINVALID:   "INVALID_INPUT",
	quarry.EFORBIDDEN: "INSUFFICIENT_PERMISSIONS",
	quarry.ENOTFOUND:  "NOT_FOUND",
}

// onyxCodedError is an error whose body carries Onyx's error_code: code,
// or the one of the error's code (onyxErrorCodes).
type onyxCodedError struct {
	error
	code string
}

func (e onyxCodedError) Unwrap() error { return e.error }

// onyxCoded is h for a route where Onyx v4.6.1 answers its errors with an
// error_code (OnyxError: the personal access tokens' routes): h's errors,
// and those of the route's gate (onyxGate), are written with it.
func onyxCoded(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		if err := h(w, r, c); err != nil {
			return onyxCodedError{error: err}
		}
		return nil
	}
}

// onyxGate is g whose refusals carry Onyx's error_code (see onyxCoded).
func onyxGate(g gate) gate {
	return func(c *quarry.Caller) error {
		if err := g(c); err != nil {
			return onyxCodedError{error: err}
		}
		return nil
	}
}

// validationBody is the body of a 422: FastAPI's HTTPValidationError.
type validationBody struct {
	Detail decode.Errors `json:"detail"`
}

// statusClientClosed is the status of a request whose client went away
// before it was answered (nginx's 499): nobody sees it, but the request
// line and the metrics do, and tell it from a failure.
const statusClientClosed = 499

// writeError writes the response for err: validation errors as FastAPI's
// 422, quarry errors with their code's status and message, anything else
// as a 500 whose cause goes to the log only. A request cut short because
// its client went away is not a failure: it is logged as such and gets
// statusClientClosed.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if s.clientGone(w, r, err) {
		return
	}
	var verrs decode.Errors
	if errors.As(err, &verrs) {
		writeJSON(w, http.StatusUnprocessableEntity, validationBody{verrs})
		return
	}
	status := s.errorStatus(w, r, err)
	if oe := new(onyxCodedError); errors.As(err, oe) {
		code := oe.code
		if code == "" {
			code = onyxErrorCodes[quarry.ErrorCode(err)]
		}
		if code != "" {
			writeJSON(w, status, onyxErrorBody{code, quarry.ErrorMessage(err)})
			return
		}
	}
	writeJSON(w, status, errorBody{quarry.ErrorMessage(err)})
}

// clientGone reports whether err ended a request whose client went away,
// and then logs it and writes statusClientClosed (writeError and
// writeSCIMError).
func (s *Server) clientGone(w http.ResponseWriter, r *http.Request, err error) bool {
	if !errors.Is(err, context.Canceled) || r.Context().Err() == nil {
		return false
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "client went away",
		slog.String("request_id", quarry.RequestIDFrom(r.Context())))
	w.WriteHeader(statusClientClosed)
	return true
}

// errorStatus returns the status of err (its code's, in the statuses
// table; 500 for anything else), sets the headers that go with it (the
// bearer challenge of a 401, Retry-After), and logs a failure: the one
// mapping of errors to statuses, whichever body writeError or
// writeSCIMError then writes.
func (s *Server) errorStatus(w http.ResponseWriter, r *http.Request, err error) int {
	status, ok := statuses[quarry.ErrorCode(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	switch status {
	case http.StatusUnauthorized:
		if errors.Is(err, errInvalidToken) || errors.Is(err, errSCIMInvalidToken) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		} else {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	case http.StatusTooManyRequests:
		var qe *quarry.Error
		if errors.As(err, &qe) && qe.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(qe.RetryAfter.Seconds()))))
		}
	}
	// 501 is an answer, not a failure; 502 and 504 are failures of a server
	// Quarry called for the caller, which the handler logs.
	if status >= 500 && status != http.StatusNotImplemented && status != http.StatusBadGateway && status != http.StatusGatewayTimeout {
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("request_id", quarry.RequestIDFrom(r.Context())), slog.String("error", err.Error()))
	}
	return status
}
