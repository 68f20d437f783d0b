package quarry

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Error codes. Each kind of failure a caller can act on has one; package api
// maps them to HTTP statuses in a single table.
const (
	EINVALID      = "invalid"      // The request breaks a business rule (400).
	EUNAUTHORIZED = "unauthorized" // The caller is not authenticated (401).
	EFORBIDDEN    = "forbidden"    // The caller may not do this (403).
	ENOTFOUND     = "not_found"    // The object does not exist or is hidden (404).
	ECONFLICT     = "conflict"     // The change clashes with existing data (409).
	EPRECONDITION = "precondition" // If-Match named a version that is no longer current (412).
	ETOOLARGE     = "too_large"    // The request body is over the size limit (413).
	ETOOMANY      = "too_many"     // Too many attempts; try again later (429).
	EUNAVAILABLE  = "unavailable"  // A dependency such as the database is down (503).
	EINTERNAL     = "internal"     // Anything else; its details are never shown (500).

	ENOTIMPLEMENTED = "not_implemented" // Quarry does not do this, such as indexing (501).
	EBADGATEWAY     = "bad_gateway"     // A server Quarry called for the caller could not be reached (502).
	EGATEWAYTIMEOUT = "gateway_timeout" // A server Quarry called for the caller did not answer in time (504).
)

// Error is a failure with a code and a message fit for the caller. Errors of
// any other type are internal: their text is logged, never shown.
type Error struct {
	Code    string
	Message string
	// RetryAfter, for ETOOMANY, says when trying again may succeed.
	RetryAfter time.Duration
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("quarry: %s: %s", e.Code, e.Message) }

// ClipText returns another server's words fit for a message: control
// characters (line breaks) as spaces, cut to n bytes between characters,
// with "…" when cut.
func ClipText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ErrNUL refuses text that holds the NUL character, which PostgreSQL
// cannot store (400): the domain refuses it where a rule reads the text,
// and the store maps PostgreSQL's refusal of it to this error elsewhere.
var ErrNUL = Errorf(EINVALID, "Text may not contain the NUL character (\\u0000)")

// hasNUL reports whether s holds the NUL character.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// CheckNoNUL returns ErrNUL when one of texts holds the NUL character.
func CheckNoNUL(texts ...string) error {
	for _, t := range texts {
		if hasNUL(t) {
			return ErrNUL
		}
	}
	return nil
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, the empty
// string for a nil err, and EINTERNAL for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or
// "Internal server error" for any other error, so that driver or library
// text never reaches a client.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal server error"
}
