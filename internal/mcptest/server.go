// Package mcptest runs real MCP servers and clients for Quarry's tests: an
// MCP server made with the official Go SDK in process (optionally asking
// for a static header, or behind OAuth with an authorization server such
// as auth/authtest's), and npm's packages (npm/package.json):
// @modelcontextprotocol/server-everything, the TypeScript SDK's example
// server with its OAuth authorization server (dynamic client
// registration), the TypeScript SDK's client, the inspector's CLI and the
// conformance runner.
//
// Only tests import it. The npm packages need node and npm: without them,
// the tests that use them skip, unless QUARRY_E2E=1 makes that a failure.
package mcptest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Options says how a Server authenticates its callers.
type Options struct {
	// SSE serves the SSE transport of 2024-11-05 rather than Streamable
	// HTTP.
	SSE bool
	// Header and Values, when Header is set, require every request to
	// carry Header with one of Values (an API key, say); Values maps each
	// accepted value to the name whoami reports.
	Header string
	Values map[string]string
	// Issuer, when set, puts the server behind OAuth: it publishes its
	// protected resource metadata naming Issuer, answers 401 with its
	// resource_metadata without a token, and accepts JWT access tokens
	// Issuer signed for Audience.
	Issuer   string
	Audience string
	// Scopes are the scopes its metadata lists; nil means openid and
	// email.
	Scopes []string
	// Complain, when set, adds the tool complain, which answers a
	// JSON-RPC error quoting the value of the header Complain names,
	// without its "Bearer " (as a careless server quotes a key).
	Complain string
}

// Server is an MCP server on loopback, made with the Go SDK. Its tools:
// echo {message}, add {a, b} (with structured content), whoami (who the
// credentials say the caller is, and the SHA-256 of the headers it got,
// never their values), and fail (a result marked isError).
type Server struct {
	URL string // Its MCP endpoint, http://127.0.0.1:port/mcp.
	srv *httptest.Server

	mu    sync.Mutex
	calls []http.Header // The headers of each request, in order.
}

// Calls returns the headers of the requests the server got.
func (s *Server) Calls() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.calls...)
}

// Hash returns what whoami reports of a header value: the first 12 hex
// digits of its SHA-256.
func Hash(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:6])
}

// Start starts a Server as opts say; it stops with the test.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)
	type echoIn struct {
		Message string `json:"message" jsonschema:"what to echo"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes a message."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Message}}}, nil, nil
		})
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says who the credentials are for."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			h := req.Extra.Header
			out := map[string]string{}
			for _, name := range []string{"Authorization", "X-Api-Key", "X-User", "X-Tenant"} {
				if v := h.Get(name); v != "" {
					out[name] = Hash(v)
				}
			}
			if who := h.Get("X-Mcptest-Who"); who != "" {
				out["user"] = who
			}
			if ti := req.Extra.TokenInfo; ti != nil {
				out["user"] = ti.UserID
			}
			b, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed, as it always does"}}}, nil, nil
		})

	if opts.Complain != "" {
		srv.AddTool(&mcp.Tool{Name: "complain", Description: "Quotes a header in an error.", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, fmt.Errorf("bad key %s", strings.TrimPrefix(req.Extra.Header.Get(opts.Complain), "Bearer "))
			})
	}
	var h http.Handler
	if opts.SSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	mux := http.NewServeMux()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://" + ln.Addr().String() + "/mcp"
	switch {
	case opts.Header != "":
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			who, ok := opts.Values[r.Header.Get(opts.Header)]
			if !ok {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r.Header.Set("X-Mcptest-Who", who)
			inner.ServeHTTP(w, r)
		})
	case opts.Issuer != "":
		metadataURL := "http://" + ln.Addr().String() + "/.well-known/oauth-protected-resource/mcp"
		scopes := opts.Scopes
		if scopes == nil {
			scopes = []string{"openid", "email"}
		}
		mux.Handle("GET /.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(
			&oauthex.ProtectedResourceMetadata{Resource: s.URL, AuthorizationServers: []string{opts.Issuer},
				ScopesSupported: scopes}))
		var (
			once     sync.Once
			verifier *oidc.IDTokenVerifier
			verr     error
		)
		verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			once.Do(func() {
				p, err := oidc.NewProvider(context.Background(), opts.Issuer)
				if err != nil {
					verr = err
					return
				}
				verifier = p.Verifier(&oidc.Config{ClientID: opts.Audience})
			})
			if verr != nil {
				return nil, verr
			}
			tok, err := verifier.Verify(ctx, token)
			if err != nil {
				return nil, auth.ErrInvalidToken
			}
			var claims struct {
				Email string `json:"email"`
			}
			tok.Claims(&claims)
			who := claims.Email
			if who == "" {
				who = tok.Subject
			}
			return &auth.TokenInfo{UserID: who, Expiration: tok.Expiry}, nil
		}
		h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL})(h)
	}
	inner := h
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls = append(s.calls, r.Header.Clone())
		s.mu.Unlock()
		r.Header.Del("X-Mcptest-Who")
		inner.ServeHTTP(w, r)
	})
	mux.Handle("/mcp", record)
	mux.Handle("/mcp/", record)
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// Names returns the names of tools, for assertions.
func Names(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// Text returns the text of a result's text contents, joined.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
