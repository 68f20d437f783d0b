package toolrun

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

// serverDefinition is a definition whose server is base, with an echo
// operation (GET /echo/{word}) and a raw one (POST /raw?ct=) taking any
// JSON body.
func serverDefinition(base string) []byte {
	return []byte(`{"openapi":"3.0.3","info":{"title":"Echo","description":"Echoes","version":"1"},
	"servers":[{"url":"` + base + `"}],
	"paths":{"/echo/{word}":{"get":{"operationId":"echo","summary":"Echo","parameters":[
		{"name":"word","in":"path","required":true,"schema":{"type":"string"}},
		{"name":"n","in":"query","schema":{"type":"integer"}}],
		"responses":{"200":{"description":"OK"}}}},
	"/raw":{"post":{"operationId":"raw","summary":"Raw","parameters":[{"name":"ct","in":"query","schema":{"type":"string"}},
		{"name":"size","in":"query","schema":{"type":"integer"}}],
		"requestBody":{"content":{"application/json":{"schema":{}}}},
		"responses":{"200":{"description":"OK"}}}}}}`)
}

// policyAllowing opens the networks and names of allow.
func policyAllowing(t testing.TB, allow string) Policy {
	t.Helper()
	nets, hosts, err := ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	return Policy{Allow: nets, AllowHosts: hosts}
}

// call prepares and does one call of method with args.
func call(ctx context.Context, t *testing.T, r *Runner, base, method, args string, headers []quarry.Header, bearer string) (*quarry.ToolRunResult, error) {
	t.Helper()
	a, err := DecodeArgs([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Prepare(ctx, serverDefinition(base), method, a)
	if err != nil {
		return nil, err
	}
	return r.Do(ctx, c, headers, bearer)
}

func wantError(t *testing.T, err error, code, part string) {
	t.Helper()
	if err == nil || quarry.ErrorCode(err) != code || !strings.Contains(quarry.ErrorMessage(err), part) {
		t.Fatalf("got %v, want a %s error saying %q", err, code, part)
	}
}

// recorder is an upstream that records the last request it served.
type recorder struct {
	mu   sync.Mutex
	last *http.Request
	body []byte
}

func (rec *recorder) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.last, rec.body = r.Clone(context.Background()), b
}

func (rec *recorder) request() (*http.Request, []byte) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.last, rec.body
}

// echoServer answers /echo/{word} with JSON that echoes the request's
// secrets, and /raw with the body it got, as ?ct= says, padded to ?size=.
func echoServer(t *testing.T, rec *recorder) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo/{word}", func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-RateLimit-Remaining", "41")
		w.Header().Set("Set-Cookie", "session=abc")
		w.Header().Set("X-Echo-Key", r.Header.Get("X-Api-Key"))
		w.Header().Add("Retry-After", "7 "+r.Header.Get("X-Api-Key"))
		json.NewEncoder(w).Encode(map[string]any{"word": r.PathValue("word"), "n": r.URL.Query().Get("n"),
			"key": r.Header.Get("X-Api-Key"), "auth": r.Header.Get("Authorization"),
			"nested": []any{json.Number("1.50"), "k=" + r.Header.Get("X-Api-Key")}})
	})
	mux.HandleFunc("POST /raw", func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		_, b := rec.request()
		w.Header().Set("Content-Type", r.URL.Query().Get("ct"))
		w.WriteHeader(http.StatusTeapot)
		w.Write(b)
		switch r.URL.Query().Get("size") {
		case "1":
			w.Write([]byte(strings.Repeat("é", 1<<20)))
		case "2":
			w.Write([]byte{0xff, 0xfe, 0})
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestRunCalls(t *testing.T) {
	rec := &recorder{}
	up := echoServer(t, rec)
	r := NewRunner(policyAllowing(t, "127.0.0.1"))
	secret := quarry.Header{Key: "X-Api-Key", Value: "key-0123456789abcdef"}
	bearer := "bearer-token-0123456789"

	res, err := call(context.Background(), t, r, up.URL, "echo", `{"word":"hi there","n":3}`, []quarry.Header{secret}, bearer)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := rec.request()
	if req.URL.RequestURI() != "/echo/hi%20there?n=3" || req.Header.Get("X-Api-Key") != secret.Value ||
		req.Header.Get("Authorization") != "Bearer "+bearer || req.Header.Get("User-Agent") != UserAgent {
		t.Errorf("the upstream got %s with headers %v", req.URL.RequestURI(), req.Header)
	}
	if res.Status != 200 || res.ContentType != "application/json; charset=utf-8" || res.BodyEncoding != "json" || res.Truncated {
		t.Errorf("result %+v", res)
	}
	// The secrets the upstream echoed are masked, in the body (with the
	// numbers as written) and in the headers kept; other headers go.
	wantBody := `{"auth":"Bearer ••••••••••••","key":"••••••••••••","n":"3","nested":[1.50,"k=••••••••••••"],"word":"hi there"}`
	if string(res.Body) != wantBody {
		t.Errorf("body %s, want %s", res.Body, wantBody)
	}
	wantHeaders := map[string]string{"Content-Type": "application/json; charset=utf-8", "Content-Length": res.Headers["Content-Length"],
		"X-RateLimit-Remaining": "41", "Retry-After": "7 ••••••••••••"}
	if len(res.Headers) != len(wantHeaders) {
		t.Errorf("headers %v, want %v", res.Headers, wantHeaders)
	}
	for k, v := range wantHeaders {
		if res.Headers[k] != v {
			t.Errorf("header %s = %q, want %q", k, res.Headers[k], v)
		}
	}

	t.Run("a custom Authorization header gives way to the token", func(t *testing.T) {
		_, err := call(context.Background(), t, r, up.URL, "echo", `{"word":"x"}`,
			[]quarry.Header{{Key: "authorization", Value: "Basic c3R1ZmY="}}, bearer)
		if err != nil {
			t.Fatal(err)
		}
		if req, _ := rec.request(); req.Header.Get("Authorization") != "Bearer "+bearer {
			t.Errorf("Authorization %q", req.Header.Get("Authorization"))
		}
	})
	t.Run("without a token, the custom header is sent", func(t *testing.T) {
		_, err := call(context.Background(), t, r, up.URL, "echo", `{"word":"x"}`,
			[]quarry.Header{{Key: "Authorization", Value: "Basic c3R1ZmY="}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if req, _ := rec.request(); req.Header.Get("Authorization") != "Basic c3R1ZmY=" {
			t.Errorf("Authorization %q", req.Header.Get("Authorization"))
		}
	})
	for _, tt := range []struct {
		name, args, encoding, body string
		status                     int
		truncated                  bool
	}{
		{"JSON body, JSON answer", `{"ct":"application/problem+json","requestBody":{"a":[1,2]}}`, "json", `{"a":[1,2]}`, 418, false},
		{"text answer", `{"ct":"text/plain","requestBody":"hello"}`, "text", `"\"hello\""`, 418, false},
		{"JSON type, not JSON", `{"ct":"application/json","requestBody":"x"}`, "json", `"x"`, 418, false},
		{"no content type", `{"requestBody":{"a":1}}`, "text", `"{\"a\":1}"`, 418, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(context.Background(), t, r, up.URL, "raw", tt.args, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || res.BodyEncoding != tt.encoding || string(res.Body) != tt.body || res.Truncated != tt.truncated {
				t.Errorf("got %d %s %s truncated %t, want %d %s %s", res.Status, res.BodyEncoding, res.Body, res.Truncated,
					tt.status, tt.encoding, tt.body)
			}
		})
	}
	t.Run("the answer is capped", func(t *testing.T) {
		p := policyAllowing(t, "127.0.0.1")
		p.MaxBytes = 1002 // cuts a two-byte é in half
		small := NewRunner(p)
		res, err := call(context.Background(), t, small, up.URL, "raw", `{"ct":"text/plain","size":1,"requestBody":"x"}`, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		var text string
		if err := json.Unmarshal(res.Body, &text); err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.BodyEncoding != "text" || len(text) != 1001 || !strings.HasPrefix(text, `"x"é`) {
			t.Errorf("truncated %t, %s of %d bytes: %.20q", res.Truncated, res.BodyEncoding, len(text), text)
		}
	})
	t.Run("binary answers are base64", func(t *testing.T) {
		res, err := call(context.Background(), t, r, up.URL, "raw", `{"ct":"application/octet-stream","size":2,"requestBody":1}`, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.BodyEncoding != "base64" || string(res.Body) != `"Mf/+AA=="` {
			t.Errorf("%s %s", res.BodyEncoding, res.Body)
		}
	})
}

func TestRunRefusals(t *testing.T) {
	rec := &recorder{}
	up := echoServer(t, rec)
	t.Run("loopback refused by default", func(t *testing.T) {
		_, err := call(context.Background(), t, NewRunner(Policy{}), up.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EFORBIDDEN, "Quarry does not call 127.0.0.1: it is a loopback address. To call internal APIs, add the host or its network to QUARRY_TOOL_EGRESS_ALLOW")
	})
	redirector := func(to string, n int) *httptest.Server {
		var count int
		var mu sync.Mutex
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			count++
			c := count
			mu.Unlock()
			if c <= n {
				http.Redirect(w, r, to, http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"redirected":` + r.Header.Get("X-Hops") + `}`))
		}))
		t.Cleanup(s.Close)
		return s
	}
	t.Run("a redirect to a private address", func(t *testing.T) {
		s := redirector("http://10.255.255.1/steal", 1)
		_, err := call(context.Background(), t, NewRunner(policyAllowing(t, "127.0.0.1")), s.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EFORBIDDEN, "Quarry does not call 10.255.255.1: it is a private (RFC 1918) address")
	})
	t.Run("a redirect to the metadata service", func(t *testing.T) {
		s := redirector("http://169.254.169.254/latest/meta-data/", 1)
		_, err := call(context.Background(), t, NewRunner(policyAllowing(t, "127.0.0.1")), s.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EFORBIDDEN, "link-local")
	})
	t.Run("a redirect to a name that resolves to loopback", func(t *testing.T) {
		s := redirector(strings.Replace(up.URL, "127.0.0.1", "localhost", 1)+"/echo/x", 1)
		_, err := call(context.Background(), t, NewRunner(policyAllowing(t, "127.0.0.1")), s.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EFORBIDDEN, "Quarry does not call localhost: it resolves to ::1, a loopback address")
	})
	t.Run("a rebinding name is checked where it is dialed", func(t *testing.T) {
		p := Policy{Lookup: lookupTable(map[string][]string{"rebind.test": {"127.0.0.1"}})}
		s := redirector("http://rebind.test:1/", 1)
		r := NewRunner(p)
		// The first hop is opened by the test through the dialer's own
		// policy: a name resolving to loopback is refused all the same.
		_, err := call(context.Background(), t, r, strings.Replace(s.URL, "127.0.0.1", "rebind.test", 1), "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EFORBIDDEN, "Quarry does not call rebind.test: it resolves to 127.0.0.1, a loopback address")
	})
	t.Run("three redirects are followed, not four", func(t *testing.T) {
		s3 := redirector("/echo/again", 3)
		res, err := call(context.Background(), t, NewRunner(policyAllowing(t, "127.0.0.1")), s3.URL, "echo", `{"word":"x"}`, nil, "")
		if err != nil || res.Status != 200 {
			t.Fatalf("three redirects: %v %+v", err, res)
		}
		s4 := redirector("/echo/again", 4)
		_, err = call(context.Background(), t, NewRunner(policyAllowing(t, "127.0.0.1")), s4.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EBADGATEWAY, "The tool's server 127.0.0.1 redirected more than 3 times")
	})
	t.Run("https does not redirect to http", func(t *testing.T) {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, up.URL+"/echo/x", http.StatusFound)
		}))
		defer s.Close()
		r := NewRunner(policyAllowing(t, "127.0.0.1"))
		r.client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
		_, err := call(context.Background(), t, r, s.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EFORBIDDEN, "its server redirected from https to http")
	})
	t.Run("secrets stay with their host on a redirect", func(t *testing.T) {
		s := redirector(strings.Replace(up.URL, "127.0.0.1", "localhost", 1)+"/echo/x", 1)
		r := NewRunner(policyAllowing(t, "127.0.0.1, ::1"))
		res, err := call(context.Background(), t, r, s.URL, "echo", `{"word":"x"}`,
			[]quarry.Header{{Key: "X-Api-Key", Value: "key-0123456789abcdef"}}, "bearer-token-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := rec.request()
		if req.Header.Get("X-Api-Key") != "" || req.Header.Get("Authorization") != "" || res.Status != 200 {
			t.Errorf("the redirect's target got %v", req.Header)
		}
	})
	t.Run("an unreachable server", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		_, err := call(context.Background(), t, NewRunner(policyAllowing(t, "127.0.0.1")), dead.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EBADGATEWAY, "The tool's server 127.0.0.1 could not be reached: the connection was refused")
	})
	t.Run("a slow server", func(t *testing.T) {
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		defer slow.Close()
		p := policyAllowing(t, "127.0.0.1")
		p.Timeout = 200 * time.Millisecond
		_, err := call(context.Background(), t, NewRunner(p), slow.URL, "echo", `{"word":"x"}`, nil, "")
		wantError(t, err, quarry.EGATEWAYTIMEOUT, "The tool's server 127.0.0.1 did not answer within 200ms")
	})
	t.Run("the caller goes away", func(t *testing.T) {
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		defer slow.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := call(ctx, t, NewRunner(policyAllowing(t, "127.0.0.1")), slow.URL, "echo", `{"word":"x"}`, nil, "")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the caller's context's error", err)
		}
	})
}

// TestRunCutKeepsNoPrefixOfASecret: an answer past the cap whose cut
// would split an echoed secret (a header value or the token, as it is or
// as the inside of a JSON string) keeps no prefix of it, whatever the
// padding before it, as text and as base64.
func TestRunCutKeepsNoPrefixOfASecret(t *testing.T) {
	const key, bearer = "key-0123456789abcdef", `tok"en/0123456789`
	const max = 64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /raw", func(w http.ResponseWriter, r *http.Request) {
		var pad int
		fmt.Sscan(r.URL.Query().Get("size"), &pad)
		w.Header().Set("Content-Type", r.URL.Query().Get("ct"))
		echo := r.Header.Get("X-Api-Key")
		if strings.HasPrefix(r.URL.Query().Get("ct"), "text/x-json") {
			b, _ := json.Marshal(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			echo = string(b[1 : len(b)-1])
		}
		w.Write([]byte(strings.Repeat("~", pad) + echo + strings.Repeat("~", 100)))
	})
	up := httptest.NewServer(mux)
	t.Cleanup(up.Close)
	p := policyAllowing(t, "127.0.0.1")
	p.MaxBytes = max
	r := NewRunner(p)
	escaped := `tok\"en/0123456789`
	for _, tt := range []struct{ ct, secret string }{
		{"text/plain", key}, {"application/octet-stream", key}, {"text/x-json", escaped},
	} {
		for pad := max - len(tt.secret); pad <= max; pad++ {
			res, err := call(context.Background(), t, r, up.URL, "raw",
				fmt.Sprintf(`{"ct":%q,"size":%d,"requestBody":1}`, tt.ct, pad), []quarry.Header{{Key: "X-Api-Key", Value: key}}, bearer)
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(res.Body, &s); err != nil {
				t.Fatal(err)
			}
			if res.BodyEncoding == "base64" {
				b, _ := base64.StdEncoding.DecodeString(s)
				s = string(b)
			}
			if !res.Truncated || len(strings.ReplaceAll(s, quarry.MaskedSecret, tt.secret)) > max {
				t.Errorf("%s, pad %d: truncated %t, %d bytes", tt.ct, pad, res.Truncated, len(s))
			}
			for k := 1; k <= len(tt.secret); k++ {
				if strings.HasSuffix(s, tt.secret[:k]) {
					t.Errorf("%s, pad %d: the answer %q ends with %q, a prefix of a secret", tt.ct, pad, s, tt.secret[:k])
				}
			}
		}
	}
}

// TestSlots: a caller's runs and a tool's runs in progress are capped
// each; a slot given back (once, however often release is called) opens
// the way again.
func TestSlots(t *testing.T) {
	s := newSlots(2, 3)
	take := func(caller string, tool int64, want string) func() {
		t.Helper()
		release, err := s.take(caller, tool)
		got := ""
		if err != nil {
			got = quarry.ErrorMessage(err)
			if quarry.ErrorCode(err) != quarry.ETOOMANY || err.(*quarry.Error).RetryAfter != SlotRetryAfter {
				t.Errorf("%s, tool %d: %v, want a 429 with Retry-After", caller, tool, err)
			}
		}
		if got != want {
			t.Errorf("%s, tool %d: %q, want %q", caller, tool, got, want)
		}
		return release
	}
	const callerFull = "You have 2 tool runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_CALLER): wait for one to end"
	a1 := take("ann", 1, "")
	take("ann", 2, "")
	take("ann", 3, callerFull)
	take("bob", 1, "")
	take("cy", 1, "")
	take("dee", 1, "Tool 1 has 3 runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_TOOL): try again shortly")
	take("dee", 2, "")
	a1()
	a1() // a second call gives nothing more back
	take("ann", 1, "")
	take("ann", 4, callerFull)
	take("eve", 1, "Tool 1 has 3 runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_TOOL): try again shortly")
}
