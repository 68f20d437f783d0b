// Package toolrun calls the HTTP APIs that custom tools describe: it binds
// a run's arguments to one operation of a tool's OpenAPI definition
// (checking them against its schemas first), sends the request through an
// egress guard, and renders what came back.
//
// The guard exists because the URLs it calls were typed by curators: by
// default it refuses to connect to loopback, private, link-local,
// shared-NAT, multicast, reserved and documentation addresses, in every
// spelling (see Refusal), unless a Policy opens them. The check is made on
// the address actually dialed, for the first request and for every
// redirect, so a name that resolves to a public address when it is checked
// and to an internal one when it is dialed (DNS rebinding) cannot pass.
// Only http and https are called, at most MaxRedirects redirects are
// followed (to the same scheme, or from http to https), and every call is
// bounded in time and in the size of the answer it reads.
//
// The package knows nothing of SQL or of how a tool's secrets are kept:
// its caller hands it the tool's definition, its custom headers and the
// token to send, and writes the audit entry.
package toolrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// Runner runs operations of custom tools. It is safe for concurrent use.
type Runner struct {
	policy Policy
	guard  *guard
	client *http.Client
	slots  *slots // The caps of runs in progress (Admit).

	mu      sync.Mutex
	defs    map[[sha256.Size]byte]*Definition
	order   [][sha256.Size]byte
	defSize map[[sha256.Size]byte]int
	bytes   int
}

// maxDefBytes bounds the definitions a Runner keeps compiled.
const maxDefBytes = 16 << 20

// UserAgent is the User-Agent of calls, unless a tool's custom headers set
// one.
const UserAgent = "Quarry-Tool-Runtime/1"

// MaxResponseHeaderBytes bounds the headers of every answer the guarded
// client reads (a tool's, a connector's server's): net/http's own bound on
// the headers of the requests its server reads. Real answers' headers are
// a few kilobytes (large cookies and security policies, tens); a server
// that sends more fails the call with net/http's error, which names the
// limit.
const MaxResponseHeaderBytes = 1 << 20

// NewRunner returns a Runner that connects as p allows.
func NewRunner(p Policy) *Runner {
	p = p.withDefaults()
	g := newGuard(p)
	t := &http.Transport{
		Proxy:               nil, // Never through a proxy: the guard must see the address dialed.
		DialContext:         g.dialContext,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: p.ConnectTimeout,
		// A model's provider takes one streamed request per chat step,
		// hundreds at once on a busy deployment: past the idle
		// connections kept for a host, each request dials (and shakes
		// hands) anew.
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	r := &Runner{policy: p, guard: g, defs: map[[sha256.Size]byte]*Definition{}, defSize: map[[sha256.Size]byte]int{},
		slots: newSlots(p.MaxRunsPerCaller, p.MaxRunsPerTool)}
	r.client = &http.Client{Transport: t, CheckRedirect: r.checkRedirect}
	return r
}

// Policy returns the Runner's policy, with its defaults filled in.
func (r *Runner) Policy() Policy { return r.policy }

// Client returns the guarded HTTP client, for other calls to URLs that
// people typed (an OAuth configuration's token endpoint). It follows
// redirects as runs do; it sets no time-out of its own.
func (r *Runner) Client() *http.Client { return r.client }

// Dial connects to address ("host:port") over network through the egress
// guard, as the client's calls do: for connectors that speak other
// protocols than HTTP (IMAP). It sets no time-out beyond the policy's
// ConnectTimeout.
func (r *Runner) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	return r.guard.dialContext(ctx, network, address)
}

// errTooManyRedirects and errDowngrade fail a redirect.
var (
	errTooManyRedirects = errors.New("too many redirects")
	errDowngrade        = errors.New("redirect from https to http")
)

// checkRedirect follows at most MaxRedirects redirects, to the same scheme
// or from http to https, to a URL the guard does not refuse outright (its
// address is checked as it is dialed). A redirect to another host loses
// every header but a few harmless ones, so that the tool's secrets and
// token go only to the server they were meant for.
func (r *Runner) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return errTooManyRedirects
	}
	prev := via[len(via)-1]
	if prev.URL.Scheme == "https" && req.URL.Scheme != "https" {
		return errDowngrade
	}
	if err := r.guard.checkURL(req.URL); err != nil {
		return err
	}
	if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
		for k := range req.Header {
			switch http.CanonicalHeaderKey(k) {
			case "Accept", "Accept-Language", "User-Agent", "Content-Type":
			default:
				req.Header.Del(k)
			}
		}
	}
	return nil
}

// Definition returns the compiled form of def, compiling it once per
// content.
func (r *Runner) Definition(ctx context.Context, def []byte) (*Definition, error) {
	key := sha256.Sum256(def)
	r.mu.Lock()
	d, ok := r.defs[key]
	r.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := Compile(ctx, def)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.defs[key]; !ok && len(def) <= maxDefBytes {
		for r.bytes+len(def) > maxDefBytes && len(r.order) > 0 {
			old := r.order[0]
			r.bytes -= r.defSize[old]
			delete(r.defs, old)
			delete(r.defSize, old)
			r.order = r.order[1:]
		}
		r.defs[key], r.defSize[key] = d, len(def)
		r.order = append(r.order, key)
		r.bytes += len(def)
	}
	return d, nil
}

// Call is a request ready to send: an operation with its arguments bound.
type Call struct {
	bound *Bound
}

// Prepare binds args to the operation named method of def and checks what
// the guard can check before connecting (scheme, host spelling, literal
// addresses). Errors are 400s for the definition and the arguments, and
// 403s for the guard.
func (r *Runner) Prepare(ctx context.Context, def []byte, method string, args map[string]any) (*Call, error) {
	d, err := r.Definition(ctx, def)
	if err != nil {
		return nil, err
	}
	op, err := d.Operation(method)
	if err != nil {
		return nil, err
	}
	b, err := op.Bind(args)
	if err != nil {
		return nil, err
	}
	if err := r.guard.checkURL(b.URL); err != nil {
		return nil, refused(err)
	}
	return &Call{bound: b}, nil
}

// Host returns the host the call goes to, without its port.
func (c *Call) Host() string { return c.bound.URL.Hostname() }

// URL returns the URL the call goes to. It holds the run's arguments: show
// it only to the caller who sent them.
func (c *Call) URL() *url.URL { return c.bound.URL }

// Do sends c with the tool's custom headers (secrets, which override the
// headers the arguments set) and, if bearer is not empty, an
// "Authorization: Bearer" header (which overrides a custom Authorization
// header). It returns what the tool's server answered: any status is an
// answer. Failures are *quarry.Error: 403 when the guard refused an
// address, 502 when no answer came, 504 when it did not come in time. When
// ctx ends first, ctx's error is returned.
//
// Secrets never come back: a value of a custom header or the token (of 8
// characters or more) that the server echoes in its answer is replaced by
// a mask, and only the headers of AnswerHeaders are kept.
func (r *Runner) Do(ctx context.Context, c *Call, headers []quarry.Header, bearer string) (*quarry.ToolRunResult, error) {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, r.policy.Timeout)
	defer cancel()
	var body io.Reader
	if c.bound.Body != nil {
		body = bytes.NewReader(c.bound.Body)
	}
	req, err := http.NewRequestWithContext(cctx, c.bound.Method, c.bound.URL.String(), body)
	if err != nil {
		return nil, quarry.Errorf(quarry.EINVALID, "The request cannot be made: %v", err)
	}
	for k, vs := range c.bound.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json, */*;q=0.5")
	req.Header.Set("User-Agent", UserAgent)
	var secrets []string
	for _, h := range headers {
		req.Header.Set(h.Key, h.Value)
		secrets = append(secrets, h.Value)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
		secrets = append(secrets, bearer)
	}
	res, err := r.client.Do(req)
	if err != nil {
		return nil, r.failure(ctx, cctx, c.Host(), err)
	}
	defer res.Body.Close()
	// Read past the cap by the longest secret, so that a secret the cap
	// would split is seen whole, and cut before it (safeCut).
	data, err := io.ReadAll(io.LimitReader(res.Body, r.policy.MaxBytes+int64(longestSecret(secrets))+1))
	if err != nil {
		return nil, r.failure(ctx, cctx, c.Host(), err)
	}
	truncated := int64(len(data)) > r.policy.MaxBytes
	if truncated {
		data = data[:safeCut(data, int(r.policy.MaxBytes), secrets)]
	}
	out := &quarry.ToolRunResult{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type"),
		Headers: answerHeaders(res.Header, secrets), Truncated: truncated}
	out.Body, out.BodyEncoding = renderBody(out.ContentType, data, truncated, secrets)
	out.ContentType = scrubText(out.ContentType, secrets)
	out.Duration = time.Since(start)
	return out, nil
}

// AnswerHeaders are the headers of a tool's answer that a run passes on:
// what describes the body, and rate limits. Any other header (cookies,
// headers that echo the request) is dropped.
var AnswerHeaders = []string{
	"Content-Type", "Content-Length", "Retry-After",
	"RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used",
}

// answerHeaders returns the headers of h on the allow-list, each once
// (values of a repeated header joined with ", "), secrets masked.
func answerHeaders(h http.Header, secrets []string) map[string]string {
	out := map[string]string{}
	for _, k := range AnswerHeaders {
		if vs := h.Values(k); len(vs) > 0 {
			out[k] = scrubText(strings.Join(vs, ", "), secrets)
		}
	}
	return out
}

// minScrubbed is the shortest secret looked for in answers: shorter values
// cannot be told from ordinary text.
const minScrubbed = 8

// scrubText returns s with every secret of secrets replaced by the mask.
func scrubText(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= minScrubbed && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, quarry.MaskedSecret)
		}
	}
	return s
}

// secretForms returns the texts in which an answer may carry secret:
// the secret itself, and as the inside of a JSON string when that differs.
func secretForms(secret string) []string {
	if len(secret) < minScrubbed {
		return nil
	}
	if j := string(jsonText(secret)); j != secret {
		return []string{secret, j}
	}
	return []string{secret}
}

// longestSecret returns the length of the longest form of the secrets.
func longestSecret(secrets []string) int {
	n := 0
	for _, sec := range secrets {
		for _, f := range secretForms(sec) {
			n = max(n, len(f))
		}
	}
	return n
}

// safeCut returns where to cut data so that it keeps at most n bytes and
// no prefix of a secret: a secret (in any of its forms) that begins
// before n and does not end by n moves the cut back to where it begins,
// also when data ends before the secret does. Masking after a cut at n
// would otherwise leave all of a split secret but its tail for anyone
// who can pad the answer (an upstream echoing the caller's input before
// a header). data holds what was read past n, the longest secret's
// length at least.
func safeCut(data []byte, n int, secrets []string) int {
	for moved := true; moved; {
		moved = false
		for _, sec := range secrets {
			for _, f := range secretForms(sec) {
				for start := max(0, n-len(f)+1); start < n; start++ {
					k := min(len(f), len(data)-start)
					if string(data[start:start+k]) == f[:k] {
						n, moved = start, true
						break
					}
				}
			}
		}
	}
	return n
}

// renderBody renders an answer's body as JSON: the value itself when the
// content type says JSON and the whole body is valid JSON; otherwise a
// string, of the text when it is UTF-8 (a character cut by truncation is
// dropped), or of its base64. Secrets in it are masked: in JSON, inside
// every string and key.
func renderBody(contentType string, data []byte, truncated bool, secrets []string) ([]byte, string) {
	if jsonBody(contentType) && !truncated && json.Valid(data) {
		if scrubbed, ok := scrubJSON(data, secrets); ok {
			var buf bytes.Buffer
			if json.Compact(&buf, scrubbed) == nil {
				return buf.Bytes(), "json"
			}
		}
	}
	text := data
	if truncated {
		for len(text) > 0 && !utf8.Valid(text) && len(data)-len(text) < utf8.UTFMax {
			text = text[:len(text)-1]
		}
	}
	if utf8.Valid(text) {
		s, _ := json.Marshal(scrubText(string(text), forms(secrets)))
		return s, "text"
	}
	for _, sec := range forms(secrets) {
		data = bytes.ReplaceAll(data, []byte(sec), []byte(quarry.MaskedSecret))
	}
	s, _ := json.Marshal(base64.StdEncoding.EncodeToString(data))
	return s, "base64"
}

// forms returns every form of every secret (secretForms), the longest
// first, so that a secret inside another is masked with it.
func forms(secrets []string) []string {
	var out []string
	for _, sec := range secrets {
		out = append(out, secretForms(sec)...)
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// scrubJSON returns data with the secrets masked inside its strings; it
// re-encodes only when a secret is found (so numbers keep their text).
func scrubJSON(data []byte, secrets []string) ([]byte, bool) {
	found := false
	for _, sec := range secrets {
		if len(sec) >= minScrubbed && (bytes.Contains(data, []byte(sec)) || bytes.Contains(data, jsonText(sec))) {
			found = true
		}
	}
	if !found && !bytes.Contains(data, []byte(`\u`)) {
		return data, true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	changed := false
	v = scrubValue(v, secrets, &changed)
	if !changed {
		return data, true
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimSpace(buf.Bytes()), true
}

// jsonText is s as the inside of a JSON string.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

// scrubValue masks the secrets inside the strings and keys of v.
func scrubValue(v any, secrets []string, changed *bool) any {
	switch v := v.(type) {
	case string:
		if s := scrubText(v, secrets); s != v {
			*changed = true
			return s
		}
		return v
	case []any:
		for i := range v {
			v[i] = scrubValue(v[i], secrets, changed)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			nk := scrubText(k, secrets)
			if nk != k {
				*changed = true
			}
			out[nk] = scrubValue(e, secrets, changed)
		}
		return out
	}
	return v
}

// Explain turns the error of another call made with Client to host (a
// token endpoint) into what the caller sees, as Do does: ctx's error when
// the caller went away, 403 for the guard's refusals, 504 past the
// time-out, 502 for the rest. nil, *quarry.Error and errors that wrap
// quarry.ErrTokenRevoked are returned as they are.
func (r *Runner) Explain(ctx context.Context, host string, err error) error {
	var qe *quarry.Error
	if err == nil || errors.As(err, &qe) || errors.Is(err, quarry.ErrTokenRevoked) {
		return err
	}
	return r.failure(ctx, ctx, host, err)
}

// refused turns a RefusedError into the 403 the caller sees.
func refused(err error) error {
	var re *RefusedError
	if errors.As(err, &re) {
		return quarry.Errorf(quarry.EFORBIDDEN, "%s", re.Error())
	}
	return err
}

// failure turns the error of a call to host into what the caller sees:
// ctx's own error when the caller went away, 403 for the guard's
// refusals, 504 past the time-out, 502 for everything else.
func (r *Runner) failure(ctx, cctx context.Context, host string, err error) error {
	var re *RefusedError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &re):
		return refused(err)
	case errors.Is(err, errDowngrade):
		return quarry.Errorf(quarry.EFORBIDDEN, "Quarry does not call %s: its server redirected from https to http", host)
	case errors.Is(err, errTooManyRedirects):
		return quarry.Errorf(quarry.EBADGATEWAY, "The tool's server %s redirected more than %d times", host, MaxRedirects)
	case cctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return quarry.Errorf(quarry.EGATEWAYTIMEOUT, "The tool's server %s did not answer within %s", host, r.policy.Timeout)
	}
	return quarry.Errorf(quarry.EBADGATEWAY, "The tool's server %s could not be reached: %s", host, reason(err))
}

// reason says in a few words why a connection failed.
func reason(err error) string {
	var de *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &de):
		return "its name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection was closed before the answer was complete"
	case errors.As(err, &ne) && ne.Timeout():
		return "it did not accept a connection in time"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		return "the TLS handshake failed (" + tlsReason(err) + ")"
	}
	return "the connection failed"
}

// tlsReason returns the last part of a TLS or certificate error, which
// names the problem without addresses.
func tlsReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
