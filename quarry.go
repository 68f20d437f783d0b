// Package quarry holds the domain of Quarry, the control plane of an AI
// enterprise search service: connectors (external content systems), the
// credentials that open them, the connector/credential pairs (cc-pairs)
// shared with user groups, and the custom tools the assistant may call.
//
// The package defines the types, enumerations, errors and rules that every
// other package shares. It knows nothing of SQL or HTTP: package store keeps
// the types in a database, package api serves them over HTTP, and
// cmd/quarry wires the two together.
package quarry

import (
	"context"
	"slices"
	"strconv"
	"time"
)

// Time is an instant that renders in JSON the way pydantic renders a UTC
// datetime: RFC 3339 with a "Z" suffix, and microseconds only when they are
// not zero (for example "2026-11-21T10:15:30.123456Z").
type Time struct{ time.Time }

// TimeFromMicros returns the Time that is us microseconds after the Unix epoch.
func TimeFromMicros(us int64) Time { return Time{time.UnixMicro(us).UTC()} }

// Micros returns t as microseconds since the Unix epoch, the unit in which
// the store keeps every timestamp.
func (t Time) Micros() int64 { return t.UnixMicro() }

// AppendJSON appends the JSON rendering of t (quotes included) to b.
func (t Time) AppendJSON(b []byte) []byte {
	u := t.UTC()
	b = append(b, '"')
	b = u.AppendFormat(b, "2006-01-02T15:04:05")
	if us := u.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		s := strconv.Itoa(us)
		for i := len(s); i < 6; i++ {
			b = append(b, '0')
		}
		b = append(b, s...)
	}
	return append(b, 'Z', '"')
}

// String returns the rendering of t without quotes.
func (t Time) String() string {
	b := t.AppendJSON(nil)
	return string(b[1 : len(b)-1])
}

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil), nil }

type requestIDKey struct{}

// NewContextWithRequestID returns a copy of ctx that carries a request id,
// which audit entries and log lines record.
func NewContextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id carried by ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type clientIPKey struct{}

// NewContextWithClientIP returns a copy of ctx that carries the address of
// the client a request came from, which audit entries record.
func NewContextWithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIPFrom returns the client address carried by ctx, or "".
func ClientIPFrom(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}

// sortedSet returns s with each value once, ascending, never nil.
func sortedSet[T int64 | string](s []T) []T {
	s = slices.Clone(s)
	slices.Sort(s)
	return append([]T{}, slices.Compact(s)...)
}
