package toolrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/quarryhq/quarry"
)

// MCP servers: the runtime is also an MCP client (the official Go SDK's),
// for servers registered as sources of tools. Every connection goes
// through the same guarded HTTP client as runs of OpenAPI tools (the
// egress guard on every address dialed, the same redirects, time-outs and
// size cap), and a server's headers go only to its own host.

// MCPTarget is an MCP server to call, and what to call it with.
type MCPTarget struct {
	URL string
	SSE bool // The SSE transport of 2024-11-05, rather than Streamable HTTP.
	// Headers are sent with every request to the server's host: the
	// rendered header template. Secrets.
	Headers map[string]string
	// Bearer, when not empty, is sent as "Authorization: Bearer", over an
	// Authorization header of Headers. A secret.
	Bearer string
	// Values are the secrets rendered into Headers (a token, a person's
	// key), which a server may echo without the rest of their header.
	Values []string
}

// secrets returns the values of t a server must never get back from
// Quarry's answers: results, and the words of its errors.
func (t *MCPTarget) secrets() []string {
	out := slices.Clone(t.Values)
	for _, v := range t.Headers {
		out = append(out, v)
	}
	if t.Bearer != "" {
		out = append(out, t.Bearer)
	}
	// The longest first, so that a value inside another is masked with it.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// MCPUnauthorizedError reports that an MCP server refused Quarry's
// credentials (HTTP 401 or 403), with its WWW-Authenticate challenges.
type MCPUnauthorizedError struct {
	Host       string
	Status     int
	Challenges []string
}

func (e *MCPUnauthorizedError) Error() string {
	return fmt.Sprintf("The MCP server %s refused the credentials (HTTP %d)", e.Host, e.Status)
}

// MCPError is a JSON-RPC error an MCP server answered a request with.
type MCPError struct {
	Host    string
	Code    int64
	Message string
}

func (e *MCPError) Error() string {
	return fmt.Sprintf("The MCP server %s answered an error: %s (JSON-RPC error %d)", e.Host, quarry.ClipText(e.Message, 300), e.Code)
}

// mcpTransport is the HTTP transport of one session with an MCP server:
// the guarded transport, with the server's headers added to requests to
// its host (never to another, after a redirect), each answer cut at the
// size cap, and the last refusal noted.
type mcpTransport struct {
	base    http.RoundTripper
	host    string
	headers http.Header
	max     int64

	mu         sync.Mutex
	status     int
	challenges []string
}

func (t *mcpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", UserAgent)
	if strings.EqualFold(req.URL.Host, t.host) {
		for k, vs := range t.headers {
			req.Header[k] = vs
		}
	}
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		t.mu.Lock()
		t.status, t.challenges = res.StatusCode, res.Header.Values("WWW-Authenticate")
		t.mu.Unlock()
	}
	res.Body = &cappedBody{r: res.Body, left: t.max}
	return res, nil
}

// refusal returns the last status of 400 or more the server answered.
func (t *mcpTransport) refusal() (int, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.challenges
}

// errTooLong fails the reading of an answer longer than the size cap.
var errTooLong = errors.New("the answer is longer than the size cap")

// cappedBody reads at most left bytes, then fails.
type cappedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLong
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.r.Close() }

// mcpSession opens a session with t's server, bounded by the runner's
// time-out (the returned context's), and calls fn with it.
func (r *Runner) mcpSession(ctx context.Context, t MCPTarget, fn func(context.Context, *mcp.ClientSession) error) error {
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return quarry.Errorf(quarry.EINVALID, "The MCP server's URL is not an absolute http or https URL")
	}
	if err := r.guard.checkURL(u); err != nil {
		return refused(err)
	}
	// The session must not see the values of ctx: when it is a request of
	// Quarry's own MCP endpoint, the SDK would take that request's
	// protocol version for this session's.
	cctx, cancel := context.WithTimeout(noValues{ctx}, r.policy.Timeout)
	defer cancel()
	h := http.Header{}
	for k, v := range t.Headers {
		h.Set(k, v)
	}
	if t.Bearer != "" {
		h.Set("Authorization", "Bearer "+t.Bearer)
	}
	tr := &mcpTransport{base: r.client.Transport, host: u.Host, headers: h, max: r.policy.MaxBytes}
	hc := &http.Client{Transport: tr, CheckRedirect: r.checkRedirect}
	var transport mcp.Transport
	if t.SSE {
		transport = &mcp.SSEClientTransport{Endpoint: t.URL, HTTPClient: hc}
	} else {
		transport = &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "quarry", Title: "Quarry", Version: "1"}, nil)
	cs, err := client.Connect(cctx, transport, nil)
	if err != nil {
		return r.mcpFailure(ctx, cctx, u.Hostname(), tr, t.secrets(), err)
	}
	err = fn(cctx, cs)
	cs.Close()
	if err != nil {
		return r.mcpFailure(ctx, cctx, u.Hostname(), tr, t.secrets(), err)
	}
	return nil
}

// noValues is a context with the deadline and cancellation of another,
// and none of its values.
type noValues struct{ context.Context }

func (noValues) Value(any) any { return nil }

// mcpFailure turns the error of a session with host into what the caller
// sees: an *MCPUnauthorizedError when the server refused the credentials,
// an *MCPError for a JSON-RPC error, and otherwise as runs of OpenAPI
// tools fail (403 for the guard, 504 past the time-out, 502). The
// server's own words are kept with every secret of secrets masked.
func (r *Runner) mcpFailure(ctx, cctx context.Context, host string, tr *mcpTransport, secrets []string, err error) error {
	var qe *quarry.Error
	if errors.As(err, &qe) {
		return err
	}
	if status, ch := tr.refusal(); status == http.StatusUnauthorized || status == http.StatusForbidden {
		for i := range ch {
			ch[i] = scrubText(ch[i], secrets)
		}
		return &MCPUnauthorizedError{Host: host, Status: status, Challenges: ch}
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && ctx.Err() == nil {
		return &MCPError{Host: host, Code: je.Code, Message: scrubText(je.Message, secrets)}
	}
	if errors.Is(err, errTooLong) {
		return quarry.Errorf(quarry.EBADGATEWAY, "The MCP server %s answered more than %d bytes", host, r.policy.MaxBytes)
	}
	if status, _ := tr.refusal(); status != 0 && ctx.Err() == nil && cctx.Err() == nil {
		return quarry.Errorf(quarry.EBADGATEWAY, "The MCP server %s answered HTTP %d %s", host, status, http.StatusText(status))
	}
	if f := r.failure(ctx, cctx, host, err); quarry.ErrorCode(f) != quarry.EBADGATEWAY || !isTransportFailure(err) {
		return f
	}
	return quarry.Errorf(quarry.EBADGATEWAY, "The MCP server %s did not speak MCP: %s", host, quarry.ClipText(scrubText(err.Error(), secrets), 200))
}

// isTransportFailure reports whether err is a protocol failure rather
// than a failure to connect (which failure describes).
func isTransportFailure(err error) bool {
	s := err.Error()
	return !strings.Contains(s, "dial") && !strings.Contains(s, "connection") && !strings.Contains(s, "EOF") &&
		!strings.Contains(s, "tls") && !strings.Contains(s, "lookup")
}

// MaxMCPTools bounds the tools Quarry lists from one server.
const MaxMCPTools = 5000

// MCPListTools lists the tools of t's server (every page), as the server
// describes them.
func (r *Runner) MCPListTools(ctx context.Context, t MCPTarget) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	err := r.mcpSession(ctx, t, func(ctx context.Context, cs *mcp.ClientSession) error {
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			if len(out) == MaxMCPTools {
				return quarry.Errorf(quarry.EBADGATEWAY, "The MCP server lists more than %d tools", MaxMCPTools)
			}
			out = append(out, tool)
		}
		return nil
	})
	return out, err
}

// MCPCallTool calls tool name of t's server with args (a JSON object, or
// nil) and returns its result: status 200, the result's JSON as the body
// (its content, structured content and isError), with any secret of t
// the server echoes masked.
func (r *Runner) MCPCallTool(ctx context.Context, t MCPTarget, name string, args json.RawMessage) (*quarry.ToolRunResult, error) {
	start := time.Now()
	var res *mcp.CallToolResult
	err := r.mcpSession(ctx, t, func(ctx context.Context, cs *mcp.ClientSession) error {
		p := &mcp.CallToolParams{Name: name}
		if len(args) > 0 {
			p.Arguments = args
		}
		var err error
		res, err = cs.CallTool(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(res)
	if err != nil {
		return nil, quarry.Errorf(quarry.EBADGATEWAY, "The MCP server's result cannot be read: %v", err)
	}
	secrets := t.secrets()
	if scrubbed, changed := scrubJSON(body, secrets); changed {
		body = scrubbed
	}
	return &quarry.ToolRunResult{Status: http.StatusOK, ContentType: "application/json", Headers: map[string]string{},
		Body: body, BodyEncoding: "json", Duration: time.Since(start)}, nil
}

// MCPAuthInfo is what an MCP server says of its authorization: its
// protected resource metadata (RFC 9728) and its authorization server's
// (RFC 8414, or OpenID Connect discovery).
type MCPAuthInfo struct {
	Resource              string
	Issuer                string
	AuthorizationEndpoint string
	TokenEndpoint         string
	RegistrationEndpoint  string
	Scopes                []string
	AuthMethods           []string // token_endpoint_auth_methods_supported
}

// MCPDiscover finds where t's server sends clients to be authorized: it
// calls the server without a token, reads the resource_metadata of its
// 401's WWW-Authenticate (or tries the well-known URLs of RFC 9728), reads
// that metadata, and the metadata of its first authorization server.
// Every request goes through the egress guard.
func (r *Runner) MCPDiscover(ctx context.Context, serverURL string) (*MCPAuthInfo, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return nil, quarry.Errorf(quarry.EINVALID, "The MCP server's URL is not an absolute URL")
	}
	if err := r.guard.checkURL(u); err != nil {
		return nil, refused(err)
	}
	cctx, cancel := context.WithTimeout(ctx, r.policy.Timeout)
	defer cancel()
	host := u.Hostname()
	fail := func(what string, err error) error {
		var qe *quarry.Error
		if errors.As(err, &qe) {
			return err
		}
		if f := r.failure(ctx, cctx, host, err); quarry.ErrorCode(f) != quarry.EBADGATEWAY || !isTransportFailure(err) {
			return f
		}
		return quarry.Errorf(quarry.EBADGATEWAY, "The OAuth discovery of the MCP server %s failed (%s): %s", host, what, quarry.ClipText(err.Error(), 200))
	}
	var metadataURLs []string
	var challengeScopes []string
	probe := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quarry","version":"1"}}}`)
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, serverURL, bytes.NewReader(probe))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("User-Agent", UserAgent)
	res, err := r.client.Do(req)
	if err != nil {
		return nil, fail("calling it", err)
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	res.Body.Close()
	if res.StatusCode == http.StatusUnauthorized {
		if cs, err := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate")); err == nil {
			for _, c := range cs {
				if !strings.EqualFold(c.Scheme, "bearer") {
					continue
				}
				if m := c.Params["resource_metadata"]; m != "" {
					metadataURLs = append(metadataURLs, m)
				}
				if s := c.Params["scope"]; s != "" {
					challengeScopes = strings.Fields(s)
				}
			}
		}
	}
	path := strings.TrimRight(u.Path, "/")
	root := &url.URL{Scheme: u.Scheme, Host: u.Host}
	if path != "" {
		metadataURLs = append(metadataURLs, root.String()+"/.well-known/oauth-protected-resource"+path)
	}
	metadataURLs = append(metadataURLs, root.String()+"/.well-known/oauth-protected-resource")
	var prm *oauthex.ProtectedResourceMetadata
	var prmErr error
	for _, m := range metadataURLs {
		mu, err := url.Parse(m)
		if err != nil {
			continue
		}
		if err := r.guard.checkURL(mu); err != nil {
			return nil, refused(err)
		}
		for _, resource := range []string{serverURL, strings.TrimRight(serverURL, "/"), root.String(), root.String() + "/"} {
			prm, prmErr = oauthex.GetProtectedResourceMetadata(cctx, m, resource, r.client)
			if prmErr == nil || !strings.Contains(prmErr.Error(), "want") {
				break
			}
		}
		if prm != nil {
			break
		}
	}
	if prm == nil {
		if prmErr == nil {
			prmErr = errors.New("no protected resource metadata")
		}
		return nil, fail("protected resource metadata", prmErr)
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, quarry.Errorf(quarry.EBADGATEWAY, "The MCP server %s names no authorization server in its protected resource metadata", host)
	}
	issuer := prm.AuthorizationServers[0]
	iu, err := url.Parse(issuer)
	if err != nil {
		return nil, quarry.Errorf(quarry.EBADGATEWAY, "The MCP server %s names an authorization server that is not a URL", host)
	}
	if err := r.guard.checkURL(iu); err != nil {
		return nil, refused(err)
	}
	asm, err := auth.GetAuthServerMetadata(cctx, issuer, r.client)
	if err != nil {
		return nil, fail("authorization server metadata", err)
	}
	if asm == nil {
		return nil, quarry.Errorf(quarry.EBADGATEWAY, "The authorization server %s of the MCP server %s publishes no metadata", iu.Hostname(), host)
	}
	info := &MCPAuthInfo{Resource: prm.Resource, Issuer: asm.Issuer, AuthorizationEndpoint: asm.AuthorizationEndpoint,
		TokenEndpoint: asm.TokenEndpoint, RegistrationEndpoint: asm.RegistrationEndpoint,
		AuthMethods: asm.TokenEndpointAuthMethodsSupported}
	switch {
	case len(challengeScopes) > 0:
		info.Scopes = challengeScopes
	case len(prm.ScopesSupported) > 0:
		info.Scopes = slices.Clone(prm.ScopesSupported)
	}
	return info, nil
}

// MCPRegister registers Quarry as a client at an authorization server's
// registration endpoint (RFC 7591), for redirectURI, and returns the
// client's id and secret ("" for a public client).
func (r *Runner) MCPRegister(ctx context.Context, endpoint, redirectURI string, authMethods []string) (id, secret string, err error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", "", quarry.Errorf(quarry.EBADGATEWAY, "The registration endpoint is not a URL")
	}
	if err := r.guard.checkURL(u); err != nil {
		return "", "", refused(err)
	}
	cctx, cancel := context.WithTimeout(ctx, r.policy.Timeout)
	defer cancel()
	method := "client_secret_post"
	switch {
	case len(authMethods) == 0, slices.Contains(authMethods, "client_secret_post"):
	case slices.Contains(authMethods, "client_secret_basic"):
		method = "client_secret_basic"
	case slices.Contains(authMethods, "none"):
		method = "none"
	}
	res, err := oauthex.RegisterClient(cctx, endpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{redirectURI}, TokenEndpointAuthMethod: method,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		ClientName: "Quarry"}, r.client)
	if err != nil {
		var re *oauthex.ClientRegistrationError
		if errors.As(err, &re) {
			return "", "", quarry.Errorf(quarry.EBADGATEWAY, "The authorization server %s refused to register Quarry: %s", u.Hostname(), quarry.ClipText(re.Error(), 200))
		}
		if f := r.failure(ctx, cctx, u.Hostname(), err); quarry.ErrorCode(f) != quarry.EBADGATEWAY || !isTransportFailure(err) {
			return "", "", f
		}
		return "", "", quarry.Errorf(quarry.EBADGATEWAY, "The authorization server %s could not register Quarry: %s", u.Hostname(), quarry.ClipText(err.Error(), 200))
	}
	return res.ClientID, res.ClientSecret, nil
}
