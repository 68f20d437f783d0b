// Package decode turns HTTP requests into request models, answering bad
// input exactly as FastAPI and pydantic 2 (lax mode) would.
//
// A request model is a Go struct whose fields carry `json` tags; Request
// validates a request against it the way pydantic validates the equivalent
// Python model (see scripts/pydantic_goldens.py) when FastAPI hands it the
// parsed body with from_attributes=True. The Go types map to Python types as
// follows:
//
//	string             str
//	bool               bool
//	int64              int, bounded to the int64 range (ge/le)
//	json.RawMessage    dict[str, Any], kept as the exact text sent
//	time.Time          datetime (naive datetimes are taken as UTC)
//	uuid.UUID          uuid.UUID (the Rust uuid crate's parsing, as pydantic-core's)
//	[]T                list[T]
//	a struct           a nested model
//	a string type with an EnumValues() []string method   a str Enum
//	Optional[T]        T | None = None
//
// A slice field with a `set` tag is a set[T] (an array in JSON; pydantic's
// set_type otherwise), each item kept once, in the order sent. A
// nested struct with a DataclassName() string method is a Python
// dataclass: one that is not an object fails with dataclass_type.
//
// A model with a CheckModel method (ModelChecker) is checked as a whole
// once its fields are valid, as by pydantic's model_validator(mode="after"):
// its message is a value_error of the model.
//
// A `default` tag (JSON text) makes a plain field optional with that default;
// `ge` and `le` tags bound an integer. Because FastAPI validates with
// from_attributes=True, a nested model that is not an object fails with
// model_attributes_type, as the body itself does (never model_type).
//
// The body is read and parsed first, as FastAPI does: a body that is not
// JSON gives only the json_invalid entry, with the message and position (in
// code points) of Python's json.loads. Otherwise the errors are those of the
// path parameters, then the query parameters, then the body, each in
// pydantic's order.
//
// Where pydantic's behaviour cannot be mirrored, Request deviates
// deliberately:
//   - A body that is valid JSON for Python but holds NaN, Infinity,
//     -Infinity or a number too large for a float64 (which Python turns into
//     inf) is rejected as json_invalid "Expecting value" at the first such
//     literal, because FastAPI would fail with a 500 when echoing it.
//   - JSON nested deeper than 512 levels is answered like any body Python
//     cannot decode (400), since Python's limit depends on its stack depth.
//   - Lone surrogates cannot live in Go strings: a \uD800-style escape
//     decodes to U+FFFD, and a body whose bytes encode a surrogate is treated
//     as undecodable (400), as is a non-JSON body that is not UTF-8 (FastAPI
//     would fail with a 500 when echoing it).
//   - Integers are bounded to int64: the Python mirror models declare their
//     int fields with ge=-2**63 and le=2**63-1, so out-of-range values get
//     pydantic's own greater_than_equal/less_than_equal errors.
package decode

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/quarryhq/quarry"
)

// Error is one FastAPI validation error entry. Input holds nil, a bool, a
// string, or a json.RawMessage (numbers, arrays and objects) rendered the
// way FastAPI renders the value Python parsed.
type Error struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// Errors is a 422: FastAPI's HTTPValidationError detail list.
type Errors []Error

// Error implements the error interface.
func (e Errors) Error() string {
	if len(e) == 0 {
		return "decode: no validation errors"
	}
	loc := make([]string, len(e[0].Loc))
	for i, l := range e[0].Loc {
		loc[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("decode: %d validation error(s); first: %s: %s", len(e), strings.Join(loc, "."), e[0].Msg)
}

// parseBodyMsg is the message FastAPI sends with its 400 for undecodable bodies.
const parseBodyMsg = "There was an error parsing the body"

// Request decodes r into dst, a pointer to a struct whose fields are tagged
//
//	path:"name"   a path parameter, from r.PathValue(name); int64 or string
//	query:"name"  a query parameter; a slice collects repeated values, and
//	              a plain field without a default is required
//	form:"name"   a field of a form-encoded body (string or Optional[string])
//	body:""       the JSON body, a request model struct
//
// A string field may also carry a `pattern` tag, a regular expression its
// value must match (pydantic's pattern constraint, for patterns that mean
// the same in Go's syntax).
//
// It returns nil, an Errors (a 422), or a *quarry.Error: EINVALID when the
// body is not decodable text, ETOOLARGE when reading it hits an
// *http.MaxBytesError. A dst of the wrong shape is a programming error and
// gives a plain error.
func Request(r *http.Request, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("decode: destination must be a non-nil pointer to a struct, not %T", dst)
	}
	p, err := planFor(rv.Elem().Type())
	if err != nil {
		return err
	}
	var (
		body *tape
		form [][2]string
	)
	if p.body != nil {
		if body, err = readBody(r); err != nil {
			return err
		}
	}
	if p.form != nil {
		if form, err = readForm(r); err != nil {
			return err
		}
	}
	st := &state{loc: make([]any, 0, 8)}
	p.decodePath(st, r, rv.Elem())
	p.decodeQuery(st, r, rv.Elem())
	p.decodeForm(st, form, rv.Elem())
	p.decodeBody(st, body, rv.Elem())
	if len(st.errs) > 0 {
		return st.errs
	}
	return nil
}

// readBody reads and parses the body as FastAPI does. It returns the parsed
// tape (nil for an empty body or JSON null), or the json_invalid Errors, or
// a *quarry.Error.
func readBody(r *http.Request) (*tape, error) {
	var raw []byte
	if r.Body != nil {
		var err error
		if raw, err = readAll(r); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, quarry.Errorf(quarry.ETOOLARGE, "Request body is larger than %d bytes", mbe.Limit)
			}
			return nil, quarry.Errorf(quarry.EINVALID, parseBodyMsg)
		}
	}
	if len(raw) == 0 {
		return nil, nil
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		text, ok := decodeUTF8(raw)
		if !ok {
			return nil, quarry.Errorf(quarry.EINVALID, parseBodyMsg)
		}
		return stringTape(text), nil
	}
	text, ok := decodeJSONBytes(raw)
	if !ok {
		return nil, quarry.Errorf(quarry.EINVALID, parseBodyMsg)
	}
	t, serr := parseJSON(text)
	switch {
	case serr != nil && serr.fatal:
		return nil, quarry.Errorf(quarry.EINVALID, parseBodyMsg)
	case serr != nil:
		return nil, Errors{jsonInvalid(text, serr)}
	case t.nodes[0].kind == kindNull:
		return nil, nil
	}
	return t, nil
}

// readForm reads a form-encoded body as Starlette does: a body of another
// content type reads as an empty form (multipart bodies are not read: no
// Quarry form takes a file). It returns the fields in order, or a
// *quarry.Error as readBody does.
func readForm(r *http.Request) ([][2]string, error) {
	raw, err := readAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, quarry.Errorf(quarry.ETOOLARGE, "Request body is larger than %d bytes", mbe.Limit)
		}
		return nil, quarry.Errorf(quarry.EINVALID, parseBodyMsg)
	}
	if !isFormContentType(r.Header.Get("Content-Type")) {
		return nil, nil
	}
	return parseForm(string(raw)), nil
}

// readAll reads the body like io.ReadAll, sized by its Content-Length.
func readAll(r *http.Request) ([]byte, error) {
	size := 512
	if r.ContentLength > 0 && r.ContentLength < 1<<20 {
		size = int(r.ContentLength) + 1
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// jsonInvalid is FastAPI's entry for a body that json.loads rejects.
func jsonInvalid(text string, e *syntaxError) Error {
	return Error{
		Type:  "json_invalid",
		Loc:   []any{"body", e.pos(text)},
		Msg:   "JSON decode error",
		Input: map[string]any{},
		Ctx:   map[string]any{"error": e.msg},
	}
}
