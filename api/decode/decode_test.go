package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quarryhq/quarry"
)

// goldens is where scripts/pydantic_goldens.py writes its tables.
var goldens = filepath.Join("..", "testdata", "goldens")

func readGolden(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldens, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// plain round-trips v through JSON, so that numbers compare as float64.
func plain(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// loneSurrogate matches a surrogate escape, which Python may keep alone.
var loneSurrogate = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// TestJSONErrors checks the scanner against what Python's json.loads said
// about each text: the message and code-point position of its error, that
// it could not decode it at all, or how json.dumps renders what it made.
func TestJSONErrors(t *testing.T) {
	var rows []struct {
		Text            string  `json:"text"`
		Msg             string  `json:"msg"`
		Pos             *int    `json:"pos"`
		Fatal           bool    `json:"fatal"`
		Dumps           *string `json:"dumps"`
		Unrepresentable bool    `json:"unrepresentable"`
	}
	readGolden(t, "json_errors.json", &rows)
	if len(rows) < 40 {
		t.Fatalf("only %d JSON texts", len(rows))
	}
	for _, r := range rows {
		text, ok := decodeJSONBytes([]byte(r.Text))
		if !ok {
			t.Errorf("%q: not decodable", r.Text)
			continue
		}
		tp, serr := parseJSON(text)
		switch {
		case r.Fatal:
			if serr == nil || !serr.fatal {
				t.Errorf("%q: got %+v, want a fatal error", r.Text, serr)
			}
		case r.Pos != nil:
			if serr == nil || serr.fatal || serr.msg != r.Msg || serr.pos(text) != *r.Pos {
				t.Errorf("%q: got %+v, want %q at %d", r.Text, serr, r.Msg, *r.Pos)
			}
		case r.Unrepresentable:
			// NaN, Infinity and overflowing floats are rejected on purpose;
			// a lone surrogate escape decodes to U+FFFD.
			lone := loneSurrogate.MatchString(r.Text)
			if lone && serr != nil || !lone && (serr == nil || serr.msg != "Expecting value") {
				t.Errorf("%q: got %+v", r.Text, serr)
			}
		default:
			if serr != nil {
				t.Errorf("%q: unexpected error %+v", r.Text, serr)
				continue
			}
			if got := string(tp.appendPy(nil, 0)); got != *r.Dumps {
				t.Errorf("%q: rendered %s, want %s", r.Text, got, *r.Dumps)
			}
		}
	}
}

// TestDeviations pins the documented departures from Python.
func TestDeviations(t *testing.T) {
	for _, tc := range []struct {
		text string
		pos  int
	}{
		{"NaN", 0}, {"[1, Infinity]", 4}, {`{"é": -Infinity}`, 6}, {"[1e400]", 1}, {"-1e999", 0},
	} {
		_, serr := parseJSON(tc.text)
		if serr == nil || serr.msg != "Expecting value" || serr.pos(tc.text) != tc.pos {
			t.Errorf("%q: got %+v, want Expecting value at %d", tc.text, serr, tc.pos)
		}
	}
	tp, serr := parseJSON(`"a\ud800b"`)
	if serr != nil || tp.str(0) != "a\uFFFDb" {
		t.Errorf("lone surrogate: %+v %+v", tp, serr)
	}
	if _, serr := parseJSON(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)); serr == nil || !serr.fatal {
		t.Errorf("too deep: %+v", serr)
	}
	if _, serr := parseJSON(strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)); serr != nil {
		t.Errorf("deep but allowed: %+v", serr)
	}
	if _, ok := decodeJSONBytes([]byte("\"\xed\xa0\x80\"")); ok {
		t.Error("encoded surrogate accepted")
	}
}

// TestScalars checks lax validation of single values against pydantic.
func TestScalars(t *testing.T) {
	var rows []struct {
		Type   string           `json:"type"`
		JSON   string           `json:"json"`
		Value  any              `json:"value"`
		Errors []map[string]any `json:"errors"`
	}
	readGolden(t, "scalars.json", &rows)
	for _, r := range rows {
		body := `{"V": ` + r.JSON + `}`
		got, errs := decodeScalar(t, r.Type, body)
		if r.Errors == nil {
			if errs != nil {
				t.Errorf("%s %s: unexpected errors %v", r.Type, r.JSON, errs)
			} else if diff := cmp.Diff(plain(t, r.Value), plain(t, got)); diff != "" {
				t.Errorf("%s %s: value (-want +got):\n%s", r.Type, r.JSON, diff)
			}
			continue
		}
		for _, e := range r.Errors {
			e["loc"] = append([]any{"body", "V"}, e["loc"].([]any)...)
		}
		if diff := cmp.Diff(plain(t, r.Errors), plain(t, errs)); diff != "" {
			t.Errorf("%s %s: errors (-want +got):\n%s", r.Type, r.JSON, diff)
		}
	}
}

// decodeScalar decodes body into the model of type typ and returns the
// value (rendered as the golden script dumps it) or the errors.
func decodeScalar(t *testing.T, typ, body string) (any, Errors) {
	t.Helper()
	req := httptest.NewRequest("POST", "/", strings.NewReader(body))
	var err error
	var v any
	switch typ {
	case "int":
		var d struct {
			B struct{ V int64 } `body:""`
		}
		err, v = Request(req, &d), d.B.V
	case "bool":
		var d struct {
			B struct{ V bool } `body:""`
		}
		err, v = Request(req, &d), d.B.V
	case "str":
		var d struct {
			B struct{ V string } `body:""`
		}
		err, v = Request(req, &d), d.B.V
	case "datetime":
		var d struct {
			B struct{ V time.Time } `body:""`
		}
		err, v = Request(req, &d), d.B.V.UTC().Format("2006-01-02T15:04:05.000000Z")
	case "dict":
		var d struct {
			B struct{ V json.RawMessage } `body:""`
		}
		err = Request(req, &d)
		if err == nil {
			v = plain(t, d.B.V)
		}
	default:
		t.Fatalf("unknown type %s", typ)
	}
	if err == nil {
		return v, nil
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("%s: %v", body, err)
	}
	return nil, errs
}

func TestBodyTooLarge(t *testing.T) {
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"V": "`+strings.Repeat("x", 100)+`"}`))
	req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, 64)
	var d struct {
		B struct{ V string } `body:""`
	}
	err := Request(req, &d)
	var qe *quarry.Error
	if !errors.As(err, &qe) || qe.Code != quarry.ETOOLARGE || qe.Message != "Request body is larger than 64 bytes" {
		t.Fatalf("got %v", err)
	}
}

func TestBadDestination(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	for _, dst := range []any{nil, 3, new(int), (*struct{})(nil), &struct {
		C chan int `body:""`
	}{}, &struct {
		B struct{ C chan int } `body:""`
	}{}} {
		if err := Request(req, dst); err == nil {
			t.Errorf("%T: no error", dst)
		}
	}
}

func TestQueryParsing(t *testing.T) {
	got := parseQuery("a=1&&b&c=%41%zz+x&d=%C3%A9%C3&e=\xe9&=v;w")
	want := [][2]string{{"a", "1"}, {"b", ""}, {"c", "A%zz x"}, {"d", "é\uFFFD"}, {"e", "é"}, {"", "v;w"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestDecodeReplace(t *testing.T) {
	for in, want := range map[string]string{
		"ok":               "ok",
		"\xe2\x82":         "\uFFFD",
		"\xe2\x82x\xff":    "\uFFFDx\uFFFD",
		"\xf0\x9f\x98":     "\uFFFD",
		"\xed\xa0\x80":     "\uFFFD\uFFFD\uFFFD",
		"\xc3\xa9\xc0\xaf": "é\uFFFD\uFFFD",
	} {
		if got := decodeReplace([]byte(in)); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestJSONContentTypes(t *testing.T) {
	for ct, want := range map[string]bool{
		"": true, "application/json": true, "Application/JSON; charset=utf-8": true, " application/ld+json ": true,
		"application/json-seq": false, "text/json": false, "application": false, "application/json/x": false,
		"application /json": false, "\xa0application/json": true, ";application/json": false,
		"application/+json": true, "application/json\x85": true, "\x1capplication/json": true, "application/ json": false,
	} {
		if got := isJSONContentType(ct); got != want {
			t.Errorf("%q: got %v", ct, got)
		}
	}
}

// fuzzTargets are destinations shaped like the service's request models.
func fuzzTargets() []func() any {
	type header struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	type model struct {
		Name    string                    `json:"name"`
		Opt     Optional[string]          `json:"opt"`
		Flag    bool                      `json:"flag" default:"false"`
		ID      Optional[int64]           `json:"id"`
		Raw     json.RawMessage           `json:"raw"`
		Headers Optional[[]header]        `json:"headers"`
		Groups  []int64                   `json:"groups" default:"[]"`
		When    Optional[time.Time]       `json:"when"`
		Role    Optional[quarry.Role]     `json:"role"`
		Access  quarry.AccessType         `json:"access" default:"\"public\""`
		Ids     Optional[[]string]        `json:"ids"`
		Nested  Optional[json.RawMessage] `json:"nested"`
	}
	return []func() any{
		func() any {
			return &struct {
				ID   int64 `path:"id"`
				Body model `body:""`
			}{}
		},
		func() any {
			return &struct {
				Body struct {
					Definition json.RawMessage `json:"definition"`
				} `body:""`
			}{}
		},
		func() any {
			return &struct {
				Source []quarry.DocumentSource `query:"source"`
				Limit  int64                   `query:"limit" default:"100" ge:"1" le:"1000"`
				Kind   Optional[string]        `query:"kind"`
			}{}
		},
	}
}

// FuzzRequest feeds arbitrary bodies, query strings and path values to every
// target: Request must not panic and must answer nil, well-formed Errors, or
// a *quarry.Error.
func FuzzRequest(f *testing.F) {
	var rows []struct {
		Text string `json:"text"`
	}
	readGolden(f, "json_errors.json", &rows)
	for _, r := range rows {
		f.Add([]byte(r.Text), "limit=5", "7", "")
	}
	f.Add([]byte(`{"name":"n","raw":{},"when":"2024-01-02T03:04:05Z","headers":[{"key":"k"}]}`), "source=web", "x", "text/plain")
	f.Add([]byte("\xff\xfe{\x00}\x00"), "limit=%FF", "-1", "application/x+json")
	f.Fuzz(func(t *testing.T, body []byte, query, pathValue, contentType string) {
		for _, target := range fuzzTargets() {
			req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			req.URL.RawQuery = query
			req.SetPathValue("id", pathValue)
			req.Header.Set("Content-Type", contentType)
			checkOutcome(t, Request(req, target()))
		}
	})
}

func checkOutcome(t *testing.T, err error) {
	var errs Errors
	var qe *quarry.Error
	switch {
	case err == nil:
	case errors.As(err, &errs):
		if len(errs) == 0 {
			t.Fatal("empty Errors")
		}
		for _, e := range errs {
			if e.Type == "" || e.Msg == "" || len(e.Loc) == 0 {
				t.Fatalf("malformed %+v", e)
			}
			if l, _ := e.Loc[0].(string); l != "body" && l != "path" && l != "query" {
				t.Fatalf("bad loc %+v", e)
			}
		}
		if _, err := json.Marshal(map[string]any{"detail": errs}); err != nil {
			t.Fatalf("cannot render %+v: %v", errs, err)
		}
	case errors.As(err, &qe):
		if qe.Code != quarry.EINVALID && qe.Code != quarry.ETOOLARGE {
			t.Fatalf("code %s", qe.Code)
		}
	default:
		t.Fatalf("unexpected error %T %v", err, err)
	}
}

// BenchmarkRequest decodes a typical 1 KB PATCH body.
func BenchmarkRequest(b *testing.B) {
	body := []byte(`{"name":"Weather lookup","description":"Looks up the weather forecast for a city using the public forecast API, with caching.",` +
		`"definition":{"openapi":"3.0.0","info":{"title":"Weather","version":"1.0.0"},"paths":{"/forecast":{"get":{"operationId":"forecast",` +
		`"parameters":[{"name":"city","in":"query","required":true,"schema":{"type":"string"}},{"name":"days","in":"query","schema":{"type":"integer","default":3}}],` +
		`"responses":{"200":{"description":"OK","content":{"application/json":{"schema":{"type":"object","properties":{"temp":{"type":"number"},"summary":{"type":"string"}}}}}}}}}},` +
		`"servers":[{"url":"https://api.example.com/v1"}]},"custom_headers":[{"key":"X-Api-Key","value":"0123456789abcdef0123456789abcdef"},` +
		`{"key":"X-Client","value":"quarry"},{"key":"Accept-Language","value":"en-US"}],"passthrough_auth":false,"oauth_config_id":42}`)
	type header struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	type toolUpdate struct {
		Name            Optional[string]          `json:"name"`
		Description     Optional[string]          `json:"description"`
		Definition      Optional[json.RawMessage] `json:"definition"`
		CustomHeaders   Optional[[]header]        `json:"custom_headers"`
		PassthroughAuth Optional[bool]            `json:"passthrough_auth"`
		OAuthConfigID   Optional[int64]           `json:"oauth_config_id"`
	}
	req := httptest.NewRequest("PATCH", "/admin/tool/custom/7", nil)
	req.Header.Set("Content-Type", "application/json")
	req.SetPathValue("tool_id", "7")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		var dst struct {
			ID   int64      `path:"tool_id"`
			Body toolUpdate `body:""`
		}
		if err := Request(req, &dst); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLargeObject makes sure echoing a huge object with a missing field is
// not quadratic.
func TestLargeObject(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"x0": 0`)
	for i := 1; i < 200000; i++ {
		sb.WriteString(`, "x` + strings.Repeat("y", i%7) + string(rune('a'+i%26)) + `": [1]`)
	}
	sb.WriteString("}")
	req := httptest.NewRequest("POST", "/", strings.NewReader(sb.String()))
	var d struct {
		B struct {
			Name string `json:"name"`
			ID   int64  `json:"id"`
		} `body:""`
	}
	start := time.Now()
	var errs Errors
	if err := Request(req, &d); !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
