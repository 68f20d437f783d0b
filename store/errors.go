package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/quarryhq/quarry"
)

// mapError turns driver errors into quarry errors in one place: constraint
// violations become conflicts or invalid input, a database that cannot be
// reached becomes EUNAVAILABLE. Other errors pass through and are internal.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var qe *quarry.Error
	if errors.As(err, &qe) || errors.Is(err, context.Canceled) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errConflict
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errReference
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
			return unavailable(err)
		}
		switch se.Code() & 0xff { // primary result codes
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR:
			return unavailable(err)
		}
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return errConflict
		case pe.Code == "23503":
			return errReference
		case pe.Code == "22021": // character_not_in_repertoire: a NUL in text.
			return quarry.ErrNUL
		// A deadlock or a serialization failure ended the transaction:
		// trying again may succeed (workers retry a 503).
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "53300",
			pe.Code == "40P01", pe.Code == "40001":
			return unavailable(err)
		}
		return err
	}
	if isConnectionError(err) {
		return unavailable(err)
	}
	return err
}

var (
	errConflict  = quarry.Errorf(quarry.ECONFLICT, "The change conflicts with an existing object")
	errReference = quarry.Errorf(quarry.EINVALID, "The change refers to an object that does not exist")
)

// unavailableError is EUNAVAILABLE with its cause kept for the log.
type unavailableError struct {
	err   *quarry.Error
	cause error
}

func (e *unavailableError) Unwrap() []error { return []error{e.err, e.cause} }

func (e *unavailableError) Error() string { return e.err.Error() + ": " + e.cause.Error() }

// unavailable wraps a connection failure as EUNAVAILABLE, keeping the cause
// for the log but not for the caller.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var ue *unavailableError
	if errors.As(err, &ue) || errors.Is(err, context.Canceled) {
		return err
	}
	return &unavailableError{quarry.Errorf(quarry.EUNAVAILABLE, "The database is unavailable; try again shortly"), err}
}

// isConnectionError reports whether err says that the database could not be
// reached or dropped the connection.
func isConnectionError(err error) bool {
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, context.DeadlineExceeded)
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// OutageReason says in a few words why the database is unavailable, for
// the readiness check: it names the kind of failure, never a host, user or
// database name, which stay in the log.
func OutageReason(err error) string {
	var pe *pgconn.PgError
	var se *sqlite.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return "it did not answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed"
	case errors.As(err, &pe):
		switch {
		case pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03":
			return "the server is starting up or shutting down"
		case pe.Code == "3D000":
			return "the database does not exist"
		case strings.HasPrefix(pe.Code, "28"):
			return "the server refused the credentials"
		case pe.Code == "53300":
			return "the server has too many connections"
		}
		return "the server answered with error " + pe.Code
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return "the database file is locked"
		case sqlite3.SQLITE_CANTOPEN:
			return "the database file cannot be opened"
		case sqlite3.SQLITE_FULL:
			return "the disk is full"
		case sqlite3.SQLITE_IOERR:
			return "the database file cannot be read or written"
		}
		return "SQLite answered with error " + strconv.Itoa(se.Code())
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) {
		return "it cannot be reached"
	}
	return "it did not answer the check"
}

// jsonText returns the JSON text of v, which must be encodable.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("store: encoding " + err.Error())
	}
	return string(b)
}
