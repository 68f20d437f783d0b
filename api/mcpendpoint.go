package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound"
)

// Quarry's own MCP endpoint (/mcp): the official Go SDK's Streamable HTTP
// handler in stateless mode, so that any replica answers any request (no
// session lives in a process: each request is whole), with JSON answers.
// The SDK speaks the protocol; Quarry answers tools/list, tools/call,
// resources/list and resources/read itself, for the caller of each
// request: the tools are every operation of every enabled custom tool
// ("<tool>__<method>") and every enabled tool of an MCP server
// ("<server>__<tool>"), and tools/call goes through run, the path of POST
// /tool/{tool_id}/run. Callers authenticate with a bearer token (an API
// key, a personal access token, or the OpenID provider's access token),
// never the session cookie; without one, the answer is a 401 that names
// the protected resource metadata (RFC 9728), served at
// /.well-known/oauth-protected-resource.

// mcpCallerKey is the context key of the caller of an MCP request.
type mcpCallerKey struct{}

// mcpCall is the caller of an MCP request and its Authorization header.
type mcpCall struct {
	c     *quarry.Caller
	authz string
}

// mcpEndpoint holds the MCP server and the catalog of tools it offers.
type mcpEndpoint struct {
	server  *mcp.Server
	handler http.Handler

	mu      sync.Mutex // Held while the catalog is rebuilt, so that one request rebuilds it.
	catalog *mcpCatalog
}

// mcpCatalog is the tools the endpoint offers, at one version of the
// tools and servers: the same for every caller who may use tools.
type mcpCatalog struct {
	version string
	tools   []*mcp.Tool       // By name.
	byName  map[string]mcpRef // What each name runs.
	// ops are the tool operations the catalog was made of, which the chat
	// offers its model too.
	ops []outbound.ToolOperation
}

// mcpRef is what a tool name of the endpoint runs: a tool and its method
// (for an MCP server's tool, its name there).
type mcpRef struct {
	toolID  int64
	method  string
	fromMCP bool // The tool is an MCP server's: its run answers a tools/call result.
}

// mcpPageSize is the number of tools a page of tools/list holds.
const mcpPageSize = 1000

// newMCPEndpoint makes the MCP server of s.
func (s *Server) newMCPEndpoint() *mcpEndpoint {
	version := s.cfg.Version
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "quarry", Title: "Quarry", Version: version}, &mcp.ServerOptions{
		Instructions: "Quarry's search of the company's indexed documents, with your rights: search_indexed_documents (Onyx's tool; " +
			"the indexed_sources resource lists the sources to filter by), and search and fetch (results by id, then a document's text). " +
			"Quarry's tools: each operation of each custom tool an admin enabled (<tool>__<method>), and each enabled tool of " +
			"each MCP server registered in Quarry (<server>__<tool>). Calls run with the caller's own rights and connections; " +
			"a tool that needs a connection the caller has not made answers an error that says how to make it.",
		Logger: slog.New(slog.DiscardHandler),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
			Logging:   &mcp.LoggingCapabilities{},
		},
	})
	e := &mcpEndpoint{server: srv}
	srv.AddReceivingMiddleware(s.mcpMiddleware(e))
	e.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// Requests must carry a bearer token (never a cookie), which a page
		// of another site cannot send: DNS rebinding gains nothing, and a
		// check of Host would refuse Quarry behind a proxy on loopback.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        s.cfg.MaxBodyBytes,
		Logger:                     slog.New(slog.DiscardHandler),
	})
	return e
}

// handleMCP serves /mcp (POST; GET and DELETE answer 405, as a stateless
// server without sessions or a stream of its own does): it authenticates
// the bearer token, then hands the request to the SDK's handler.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.runTimeout())
	defer cancel()
	r = r.WithContext(ctx)
	authz := r.Header.Get("Authorization")
	if authz == "" {
		s.mcpUnauthorized(w, r, errNotAuthenticated)
		return
	}
	c, err := s.authenticate(r)
	if err != nil {
		if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
			s.mcpUnauthorized(w, r, err)
			return
		}
		s.writeError(w, r, err)
		return
	}
	if r.Method == http.MethodPost && refuseBatch(w, r) {
		return
	}
	r = r.WithContext(context.WithValue(ctx, mcpCallerKey{}, &mcpCall{c: c, authz: authz}))
	s.mcp.handler.ServeHTTP(w, r)
}

// mcpBatchRefused is the answer to a JSON-RPC batch: an Invalid Request
// error (-32600) without an id, as JSON-RPC 2.0 answers a request it
// cannot read the id of.
const mcpBatchRefused = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported: send one request per HTTP request"}}`

// refuseBatch answers 400 to a body that is a JSON-RPC batch (a JSON
// array), whatever protocol version the request names, and reports
// whether it did. Only 2025-03-26 had batches, and the SDK runs a batch's
// calls all at once with no bound: one request could hold thousands of
// tool runs. The body is read up to its first character that is not
// white space, and handed on whole otherwise.
func refuseBatch(w http.ResponseWriter, r *http.Request) bool {
	br := bufio.NewReader(r.Body)
	for {
		b, err := br.ReadByte()
		if err != nil {
			break
		}
		if b == ' ' || b == '\t' || b == '\n' || b == '\r' {
			continue
		}
		if b == '[' {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, mcpBatchRefused)
			return true
		}
		br.UnreadByte()
		break
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return false
}

// resourceMetadataPath is where the protected resource metadata of /mcp
// is (RFC 9728 section 3.1: the well-known prefix, then the resource's
// path); the well-known URL without the path serves it too.
const resourceMetadataPath = "/.well-known/oauth-protected-resource"

// mcpOrigin returns the scheme and host Quarry is reached at (the public
// URL's, else the request's) and the path of its root (no trailing
// slash).
func (s *Server) mcpOrigin(r *http.Request) (origin, root string) {
	if u := s.cfg.SignIn.PublicURL; u != nil {
		return u.Scheme + "://" + u.Host, strings.TrimRight(u.Path, "/")
	}
	scheme := "http"
	if r.TLS != nil || forwardedHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host, s.cookiePath(r)
}

// mcpResource returns the URL of the /mcp resource and of its protected
// resource metadata (RFC 9728 section 3.1: the well-known prefix, then
// the resource's path).
func (s *Server) mcpResource(r *http.Request) (resource, metadata string) {
	origin, root := s.mcpOrigin(r)
	return origin + root + "/mcp", origin + resourceMetadataPath + root + "/mcp"
}

// mcpUnauthorized answers a request to /mcp without usable credentials:
// 401 with the API's body, and a WWW-Authenticate challenge that names
// the resource's metadata, as the MCP authorization specification asks.
func (s *Server) mcpUnauthorized(w http.ResponseWriter, r *http.Request, err error) {
	_, metadata := s.mcpResource(r)
	challenge := `Bearer resource_metadata="` + metadata + `"`
	if err == errInvalidToken {
		challenge += `, error="invalid_token"`
	}
	if scopes := s.mcpScopes(); len(scopes) > 0 {
		challenge += `, scope="` + strings.Join(scopes, " ") + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"detail": "Not authenticated"})
}

// mcpScopes returns the scopes an MCP client asks the provider for: the
// single sign-on's, without offline_access (a client decides that).
func (s *Server) mcpScopes() []string {
	if s.cfg.SignIn.OIDC == nil {
		return nil
	}
	var out []string
	for _, sc := range s.cfg.SignIn.OIDC.Scopes() {
		if sc != "offline_access" {
			out = append(out, sc)
		}
	}
	return out
}

// handleResourceMetadata serves /.well-known/oauth-protected-resource and
// /.well-known/oauth-protected-resource/mcp: the protected resource
// metadata of /mcp (RFC 9728), naming the configured OpenID provider as
// its authorization server, so that an OAuth-capable MCP client signs the
// person in there. Without a provider, no authorization server is named:
// clients use API keys or personal access tokens.
func (s *Server) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == resourceMetadataPath+"/" {
		s.handleNoRoute(w, r)
		return
	}
	resource, _ := s.mcpResource(r)
	if p := strings.TrimPrefix(r.URL.Path, resourceMetadataPath+"/"); p != r.URL.Path && p != "" && s.cfg.SignIn.PublicURL == nil {
		// The resource's path follows the well-known prefix (behind a base
		// path, /.well-known/oauth-protected-resource/api/mcp).
		origin, _ := s.mcpOrigin(r)
		resource = origin + "/" + strings.TrimLeft(p, "/")
	}
	md := oauthex.ProtectedResourceMetadata{Resource: resource, BearerMethodsSupported: []string{"header"},
		ResourceName: "Quarry", ScopesSupported: s.mcpScopes()}
	if p := s.cfg.SignIn.OIDC; p != nil {
		md.AuthorizationServers = []string{p.Issuer()}
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, md)
}

// mcpMiddleware answers the methods whose answers depend on the caller.
func (s *Server) mcpMiddleware(e *mcpEndpoint) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, _ := ctx.Value(mcpCallerKey{}).(*mcpCall)
			if call == nil {
				switch method {
				case "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list":
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no caller"}
				}
				return next(ctx, method, req)
			}
			switch method {
			case "tools/list":
				return s.mcpListTools(ctx, e, call, req.(*mcp.ListToolsRequest))
			case "tools/call":
				return s.mcpCallTool(ctx, e, call, req.(*mcp.CallToolRequest))
			case "resources/list":
				return s.mcpListResources(call), nil
			case "resources/templates/list":
				return &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}}, nil
			case "resources/read":
				return s.mcpReadResource(ctx, call, req.(*mcp.ReadResourceRequest))
			}
			return next(ctx, method, req)
		}
	}
}

// internalError is the JSON-RPC error of a failure Quarry does not
// explain (its cause is logged).
func (s *Server) internalError(ctx context.Context, err error) error {
	s.log.LogAttrs(ctx, slog.LevelError, "MCP request failed", slog.String("request_id", quarry.RequestIDFrom(ctx)),
		slog.String("error", err.Error()))
	msg := "Internal server error"
	if quarry.ErrorCode(err) == quarry.EUNAVAILABLE {
		msg = quarry.ErrorMessage(err)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// catalogFor returns the catalog at the tools' current version,
// rebuilding it when they changed.
func (s *Server) catalogFor(ctx context.Context, e *mcpEndpoint) (*mcpCatalog, error) {
	dctx, cancel := context.WithTimeout(ctx, s.cfg.DBTimeout)
	defer cancel()
	version, err := s.db.ToolCatalogVersion(dctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.catalog != nil && e.catalog.version == version {
		return e.catalog, nil
	}
	cat, err := s.buildCatalog(dctx, version)
	if err != nil {
		return nil, err
	}
	e.catalog = cat
	return cat, nil
}

// buildCatalog makes the catalog of the tool operations
// (outbound.Service.ToolOperations): one entry per operation of each
// custom tool whose definition compiles, and one per tool of each MCP
// server that is configured and not disconnected, named
// "<prefix>__<name>" (quarry.MCPToolName). Names that two entries would
// share get the tool's id after its prefix ("<tool>_<id>__<method>").
func (s *Server) buildCatalog(ctx context.Context, version string) (*mcpCatalog, error) {
	ops, err := s.out.ToolOperations(ctx)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, op := range ops {
		count[quarry.MCPToolName(op.Prefix, op.Method)]++
	}
	cat := &mcpCatalog{version: version, byName: map[string]mcpRef{}, ops: ops}
	for _, op := range ops {
		name := quarry.MCPToolName(op.Prefix, op.Method)
		if count[name] > 1 {
			name = quarry.MCPToolName(op.Prefix+"_"+strconv.FormatInt(op.ToolID, 10), op.Method)
		}
		if _, taken := cat.byName[name]; taken {
			continue
		}
		tool := &mcp.Tool{Name: name, Title: op.Title, Description: op.Description, InputSchema: op.InputSchema}
		if op.ReadOnly {
			tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
		}
		cat.byName[name] = mcpRef{toolID: op.ToolID, method: op.Method, fromMCP: op.FromMCP}
		cat.tools = append(cat.tools, tool)
	}
	slices.SortFunc(cat.tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return cat, nil
}

// mcpListTools answers tools/list: the catalog, for a caller who may use
// tools, a page of mcpPageSize at a time (the cursor is the last name of
// the previous page).
func (s *Server) mcpListTools(ctx context.Context, e *mcpEndpoint, call *mcpCall, req *mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	var tools []*mcp.Tool
	if call.c.CanUseToolsOverMCP() {
		cat, err := s.catalogFor(ctx, e)
		if err != nil {
			return nil, s.internalError(ctx, err)
		}
		tools = cat.tools
	}
	if mcpCanSearch(call.c) {
		// The search tools' names have no "__": none is a catalog's.
		tools = append(mcpSearchTools(), tools...)
		slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	if req.Params != nil && req.Params.Cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(req.Params.Cursor)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		i, _ := slices.BinarySearchFunc(tools, string(after), func(t *mcp.Tool, name string) int {
			return strings.Compare(t.Name, name)
		})
		for i < len(tools) && tools[i].Name <= string(after) {
			i++
		}
		tools = tools[i:]
	}
	if len(tools) > mcpPageSize {
		tools = tools[:mcpPageSize]
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(tools[len(tools)-1].Name))
	}
	if len(tools) > 0 {
		res.Tools = tools
	}
	return res, nil
}

// mcpCallTool answers tools/call by running the named tool through run.
// A refusal or failure of the run (a missing connection, arguments that do
// not fit, a server that cannot be reached) is a result marked isError
// whose text says why, as the MCP specification asks for errors of tool
// execution; an unknown name is a JSON-RPC error.
func (s *Server) mcpCallTool(ctx context.Context, e *mcpEndpoint, call *mcpCall, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	if res, ok, err := s.mcpCallSearch(ctx, call, req); ok {
		return res, err
	}
	if !call.c.CanUseToolsOverMCP() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + strconv.Quote(name)}
	}
	cat, err := s.catalogFor(ctx, e)
	if err != nil {
		return nil, s.internalError(ctx, err)
	}
	ref, ok := cat.byName[name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + strconv.Quote(name)}
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return toolError("arguments must be a JSON object"), nil
	}
	res, _, err := s.run(ctx, call.c, ref.toolID, outbound.RunRequest{Method: ref.method, Args: args, Authorization: call.authz})
	switch quarry.ErrorCode(err) {
	case "":
	case quarry.EINTERNAL, quarry.EUNAVAILABLE:
		return nil, s.internalError(ctx, err)
	case quarry.ENOTFOUND:
		if strings.HasPrefix(quarry.ErrorMessage(err), "Tool by specified id") {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + strconv.Quote(name)}
		}
		return toolError(quarry.ErrorMessage(err)), nil
	default:
		return toolError(quarry.ErrorMessage(err)), nil
	}
	if ref.fromMCP {
		var out mcp.CallToolResult
		if err := json.Unmarshal(res.Body, &out); err == nil {
			if out.Content == nil {
				out.Content = []mcp.Content{}
			}
			return &out, nil
		}
		return toolError("The MCP server's result cannot be read"), nil
	}
	return httpResult(res), nil
}

// toolError is a tools/call result marked as an error, with msg.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// httpResult turns what a custom tool's server answered into a tools/call
// result: the body as text (JSON as its text; an image as an image), a
// JSON object also as structured content, and a status of 400 or more
// marked as an error, with the status before the body.
func httpResult(res *quarry.ToolRunResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.Status >= 400}
	var text string
	switch res.BodyEncoding {
	case "json":
		text = string(res.Body)
		if len(res.Body) > 0 && res.Body[0] == '{' {
			out.StructuredContent = json.RawMessage(res.Body)
		}
	default:
		var s string
		json.Unmarshal(res.Body, &s)
		text = s
		if res.BodyEncoding == "base64" {
			if mt := strings.TrimSpace(strings.Split(res.ContentType, ";")[0]); strings.HasPrefix(mt, "image/") {
				if data, err := base64.StdEncoding.DecodeString(s); err == nil {
					out.Content = []mcp.Content{&mcp.ImageContent{Data: data, MIMEType: mt}}
					return out
				}
			}
			text = "(binary, base64) " + s
		}
	}
	if res.Truncated {
		text += "\n[The answer was cut at Quarry's size cap]"
	}
	if out.IsError {
		text = "HTTP " + strconv.Itoa(res.Status) + " " + http.StatusText(res.Status) + ": " + text
	}
	out.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return out
}

// mcpListResources answers resources/list: the indexed sources and the
// document sets for those who may search, and the connector status
// listing for those who may read it (curators, and those who manage
// connectors).
func (s *Server) mcpListResources(call *mcpCall) *mcp.ListResourcesResult {
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	if mcpCanSearch(call.c) {
		out.Resources = append(out.Resources, mcpIndexedSourcesResource(), mcpDocumentSetsResource())
	}
	if call.c.CanReachConnectors() {
		out.Resources = append(out.Resources, &mcp.Resource{URI: quarry.ConnectorStatusURI, Name: "connector-status",
			Title: "Connector status", MIMEType: "application/json",
			Description: "The status of every connector/credential pair you can see: GET /manage/admin/connector/status."})
	}
	return out
}

// mcpReadResource answers resources/read of the connector status listing
// (the caller's own visible pairs, as GET /manage/admin/connector/status
// answers them).
func (s *Server) mcpReadResource(ctx context.Context, call *mcpCall, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if req.Params.URI == indexedSourcesURI && mcpCanSearch(call.c) {
		return s.mcpReadIndexedSources(ctx, call.c)
	}
	if req.Params.URI == documentSetsURI && mcpCanSearch(call.c) {
		return s.mcpReadDocumentSets(ctx, call.c)
	}
	if req.Params.URI != quarry.ConnectorStatusURI || !call.c.CanReachConnectors() {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	dctx, cancel := context.WithTimeout(ctx, s.cfg.DBTimeout)
	defer cancel()
	version, err := s.db.DataVersion(dctx)
	if err != nil {
		return nil, s.internalError(ctx, err)
	}
	v, err := s.status.at(dctx, version)
	if err != nil {
		return nil, s.internalError(ctx, err)
	}
	var buf bufferWriter
	v.write(&buf, call.c, quarry.StatusFilter{})
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: quarry.ConnectorStatusURI,
		MIMEType: "application/json", Text: buf.body.String()}}}, nil
}

// bufferWriter is an http.ResponseWriter that keeps the body.
type bufferWriter struct {
	header http.Header
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header {
	if b.header == nil {
		b.header = http.Header{}
	}
	return b.header
}
func (b *bufferWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferWriter) WriteHeader(int)             {}
