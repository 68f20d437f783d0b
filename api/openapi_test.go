package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// The tests of this file hold api/openapi.json, the routes and the handlers
// to each other:
//
//   - TestOpenAPIDescribesEveryRoute fails when a route is registered that
//     the document does not describe, or the document describes one that
//     is not registered;
//   - every request that env.do sends goes through conform, which validates
//     the request and the response against the document;
//   - TestOpenAPIDocumentIsValid and TestOpenAPIPythonValidator check the
//     document itself, with kin-openapi and with openapi-spec-validator.

// documentFile is the document, beside the code.
const documentFile = "openapi.json"

// loadDocument loads and validates the document.
func loadDocument() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(documentFile)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", documentFile, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", documentFile, err)
	}
	return doc, nil
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := loadDocument()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	text, err := os.ReadFile(documentFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(text, []byte(`"version": "Development"`)); n != 1 {
		t.Errorf(`%s holds "version": "Development" %d times, want once (info.version, which the server replaces)`, documentFile, n)
	}
	if s := doc.Components.SecuritySchemes["bearer"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("components.securitySchemes.bearer is not an http bearer scheme")
	}
	if s := doc.Components.SecuritySchemes["session"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "cookie" || s.Value.Name != "fastapiusersauth" {
		t.Errorf("components.securitySchemes.session is not the fastapiusersauth cookie")
	}
	if len(doc.Security) != 2 || doc.Security[0]["bearer"] == nil || doc.Security[1]["session"] == nil {
		t.Errorf("security = %v, want the bearer scheme or the session cookie on every route", doc.Security)
	}
	interfaceIDs := map[string]string{
		"GET /manage/admin/connector/status":       "get_connector_status",
		"PUT /admin/tool/custom/{tool_id}":         "update_custom_tool",
		"PATCH /manage/credential/{credential_id}": "update_credential",
	}
	public := map[string]bool{"GET /openapi.json": true, "GET /docs": true, "GET /health": true, "GET /ready": true,
		"POST /auth/register": true, "POST /auth/login": true, "GET /auth/type": true, "GET /auth/oidc/login": true,
		"GET /auth/oidc/callback": true, "GET /oauth-config/callback": true,
		"GET /metrics": true, "GET /version": true, "GET /": true, "GET /assets/{path}": true,
		"GET /mcp/oauth/callback": true, "GET /.well-known/oauth-protected-resource": true,
		"GET /.well-known/oauth-protected-resource/{path}": true, "GET /scim/v2/ServiceProviderConfig": true,
		"GET /scim/v2/ResourceTypes": true, "GET /scim/v2/ResourceTypes/{name}": true,
		"GET /scim/v2/Schemas": true, "GET /scim/v2/Schemas/{id}": true}
	// Quarry's MCP endpoint takes bearer tokens only, never the cookie.
	bearerOnly := map[string]bool{"POST /mcp": true, "GET /mcp": true, "DELETE /mcp": true}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for route, op := range documentOperations(doc) {
		if want, ok := interfaceIDs[route]; ok && op.OperationID != want {
			t.Errorf("%s: operationId = %q, want %q (interface.md)", route, op.OperationID, want)
		}
		if !snake.MatchString(op.OperationID) {
			t.Errorf("%s: operationId %q is not snake_case", route, op.OperationID)
		}
		if len(op.Tags) != 1 {
			t.Errorf("%s: tags = %v, want one", route, op.Tags)
		}
		if public[route] {
			if op.Security == nil || len(*op.Security) != 0 {
				t.Errorf("%s: public route without security: []", route)
			}
			continue
		}
		// The SCIM routes take the SCIM token, and only it; their ids are
		// strings, as SCIM's are.
		scimRoute := isSCIMRoute(route)
		switch {
		case scimRoute && (op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["scim"] == nil):
			t.Errorf("%s: a SCIM route whose security is not the SCIM token alone", route)
		case isWorkerRoute(route):
			scheme := "workerToken"
			if route == "POST /worker/register" {
				scheme = "registrationToken"
			}
			if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0][scheme] == nil || len((*op.Security)[0]) != 1 {
				t.Errorf("%s: a worker route whose security is not the %s alone", route, scheme)
			}
		case bearerOnly[route]:
			if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["bearer"] == nil || len((*op.Security)[0]) != 1 {
				t.Errorf("%s: security is not the bearer scheme alone", route)
			}
		case !scimRoute && !isWorkerRoute(route) && op.Security != nil:
			t.Errorf("%s: overrides the document's security", route)
		}
		for _, status := range []int{401, 500, 503} {
			if op.Responses.Status(status) == nil {
				t.Errorf("%s: no %d response", route, status)
			}
		}
		for _, p := range op.Parameters {
			// Ids are integers, but SCIM's, documents' (a connector's
			// own, as Onyx keeps them), files' and chat sessions' (Onyx's
			// are UUIDs), and an assistant's change (listed, featured,
			// undelete).
			uuidID := strings.HasPrefix(route, "/chat/") || strings.Contains(route, " /chat/")
			if p.Value.In == openapi3.ParameterInPath && !scimRoute && p.Value.Name != "document_id" && p.Value.Name != "file_id" && p.Value.Name != "change" && !uuidID &&
				!p.Value.Schema.Value.Type.Is("integer") {
				t.Errorf("%s: path parameter %s is not an integer", route, p.Value.Name)
			}
		}
	}
	for name, want := range map[string][]string{
		"DocumentSource": quarry.DocumentSource("").EnumValues(),
		"AccessType":     quarry.AccessType("").EnumValues(),
		"InputType":      quarry.InputType("").EnumValues(),
		"Role":           quarry.Role("").EnumValues(),
		"CCPairStatus":   quarry.CCPairStatus("").EnumValues(),
	} {
		var got []string
		for _, v := range doc.Components.Schemas[name].Value.Enum {
			got = append(got, fmt.Sprint(v))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("enum %s differs from package quarry's (-quarry +document):\n%s", name, diff)
		}
	}
}

// isSCIMRoute reports whether route ("METHOD /path") is one of SCIM's, which
// answer application/scim+json.
func isSCIMRoute(route string) bool {
	_, path, _ := strings.Cut(route, " ")
	return strings.HasPrefix(path, "/scim/v2/")
}

// documentOperations returns the document's operations by route, "METHOD /path".
func documentOperations(doc *openapi3.T) map[string]*openapi3.Operation {
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op
		}
	}
	return ops
}

// TestOpenAPIDescribesEveryRoute fails when the routes registered on the
// server and the routes the document describes differ. The registered
// routes are read from the source of package api (every Handle and
// HandleFunc call), then confirmed at run time: a request to each is served
// by the handler registered under that very pattern, as the request log
// line of the server says.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	doc, err := loadDocument()
	if err != nil {
		t.Fatal(err)
	}
	registered := registeredRoutes(t)
	var described []string
	for _, route := range registered {
		described = append(described, documentedRoute(route))
	}
	documented := slices.Sorted(maps.Keys(documentOperations(doc)))
	for i, route := range registered {
		if !slices.Contains(documented, described[i]) {
			t.Errorf("route %q is registered but %s does not describe it", route, documentFile)
		}
	}
	for _, route := range documented {
		if !slices.Contains(described, route) {
			t.Errorf("%s describes route %q, which is not registered", documentFile, route)
		}
	}

	e := newEnv(t)
	for i, route := range registered {
		method, path, _ := strings.Cut(described[i], " ")
		id := "route-probe-" + strconv.Itoa(i)
		e.do(user{}, method, samplePath(path), nil, "X-Request-ID", id)
		if got := loggedRoute(t, e, id); got != route {
			t.Errorf("%s %s was served by route %q, want %q", method, samplePath(path), got, route)
		}
	}
}

// registeredRoutes returns the patterns of the Handle and HandleFunc calls
// in the non-test Go files of package api, but the catch-all "/". A call on
// the server's mux (s.mux, or m in routes.go) whose pattern is not a string
// literal fails the test, since its route could not be checked.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
				return true
			}
			if pattern, ok := stringLiteral(call.Args[0]); ok && isPattern(pattern) {
				if pattern != "/" {
					routes = append(routes, pattern)
				}
			} else if recv := types.ExprString(sel.X); recv == "m" || strings.HasSuffix(recv, "mux") {
				t.Errorf("%s: %s.%s registers a route whose pattern is not a string literal: the drift test cannot check it",
					fset.Position(call.Pos()), recv, sel.Sel.Name)
			}
			return true
		})
	}
	if len(routes) == 0 {
		t.Fatal("found no registered route")
	}
	slices.Sort(routes)
	return routes
}

// documentedRoute returns the route as the document writes it: a pattern
// that matches its path exactly ("GET /{$}") without the marker, and one
// that matches a subtree ("GET /assets/") with a {path} parameter.
func documentedRoute(pattern string) string {
	if p, ok := strings.CutSuffix(pattern, "{$}"); ok {
		return p
	}
	if strings.HasSuffix(pattern, "/") && !strings.HasSuffix(pattern, " /") {
		return pattern + "{path}"
	}
	return pattern
}

// stringLiteral returns the value of a string literal expression.
func stringLiteral(x ast.Expr) (string, bool) {
	lit, ok := x.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// isPattern reports whether s looks like a ServeMux pattern: "/path" or
// "METHOD /path".
func isPattern(s string) bool {
	return regexp.MustCompile(`^([A-Z]+ )?/`).MatchString(s)
}

// samplePath fills the wildcards of a path pattern with 1.
func samplePath(path string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "1")
}

// loggedRoute returns the route of the server's log line for request id.
// The server logs a request once its handler has returned, which may be
// after the client has read a large response: it waits for the line a
// little.
func loggedRoute(t *testing.T, e *env, id string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for line := range strings.Lines(e.log.String()) {
			var entry struct {
				Msg       string `json:"msg"`
				Route     string `json:"route"`
				RequestID string `json:"request_id"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "request" && entry.RequestID == id {
				return entry.Route
			}
		}
	}
	t.Errorf("no request log line for request id %s", id)
	return ""
}

// conformance is the document, prepared for validating exchanges.
type conformance struct {
	doc    *openapi3.T
	router routers.Router
}

var (
	conformOnce sync.Once
	conformDoc  *conformance
	conformErr  error
)

// conformer returns the shared conformance, loading it once.
func conformer() (*conformance, error) {
	conformOnce.Do(func() {
		doc, err := loadDocument()
		if err != nil {
			conformErr = err
			return
		}
		closeResponseSchemas(doc)
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
		// Assistants' avatars.
		for _, t := range []string{"image/png", "image/jpeg", "image/gif", "image/webp"} {
			openapi3filter.RegisterBodyDecoder(t, openapi3filter.FileBodyDecoder)
		}
		// SCIM's bodies are JSON (RFC 7644 section 3.1).
		openapi3filter.RegisterBodyDecoder("application/scim+json", openapi3filter.JSONBodyDecoder)
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			conformErr = fmt.Errorf("routing %s: %w", documentFile, err)
			return
		}
		conformDoc = &conformance{doc: doc, router: router}
	})
	return conformDoc, conformErr
}

// closeResponseSchemas forbids, in the schemas that only responses use,
// properties the document does not list, so that a response with a field
// the document does not describe fails its validation. The document itself
// leaves them open, as clients should ignore fields they do not know;
// request schemas stay open because the server ignores unknown fields.
func closeResponseSchemas(doc *openapi3.T) {
	inRequests := map[*openapi3.Schema]bool{}
	inResponses := map[*openapi3.Schema]bool{}
	for _, op := range documentOperations(doc) {
		if op.RequestBody != nil {
			for _, media := range op.RequestBody.Value.Content {
				collectSchemas(media.Schema, inRequests)
			}
		}
		for _, res := range op.Responses.Map() {
			for _, media := range res.Value.Content {
				collectSchemas(media.Schema, inResponses)
			}
		}
	}
	no := false
	for s := range inResponses {
		if !inRequests[s] && len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties.Has = &no
		}
	}
}

// collectSchemas adds ref and the schemas it is made of to seen.
func collectSchemas(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	for _, p := range s.Properties {
		collectSchemas(p, seen)
	}
	collectSchemas(s.Items, seen)
	collectSchemas(s.AdditionalProperties.Schema, seen)
	for _, list := range []openapi3.SchemaRefs{s.AnyOf, s.OneOf, s.AllOf} {
		for _, r := range list {
			collectSchemas(r, seen)
		}
	}
}

// unvalidatedRequests are the statuses of requests that the server turned
// down before or while validating them: the tests that get them send
// invalid requests on purpose, so only their responses are validated.
var unvalidatedRequests = map[int]bool{
	http.StatusBadRequest:            true, // undecodable body, or a business rule
	http.StatusUnauthorized:          true, // checked before anything else
	http.StatusForbidden:             true, // the role gate, checked before validation
	http.StatusRequestEntityTooLarge: true,
	http.StatusUnprocessableEntity:   true,
}

// conform validates an exchange of the API tests against the document: the
// request (unless the server turned it down as invalid, see
// unvalidatedRequests) and, always, the response. A request body is valid
// if it is, or if it becomes so once the values that pydantic's lax mode
// accepts are converted (see validateRequest): the document gives the types, and
// says that requests are read in lax mode. body is what env.do sent: nil, a
// string sent as is, or a value sent as JSON. Any mismatch fails the test.
func (e *env) conform(req *http.Request, body any, res *http.Response, resBody []byte) {
	e.t.Helper()
	c, err := conformer()
	if err != nil {
		e.t.Errorf("openapi: %v", err)
		return
	}
	reqBody, err := requestBytes(body)
	if err != nil {
		e.t.Errorf("openapi: %v", err)
		return
	}
	checkRequest := !unvalidatedRequests[res.StatusCode]
	if err := c.check(req, reqBody, e.cfg.BasePath, checkRequest, res.StatusCode, res.Header, resBody); err != nil {
		e.t.Errorf("openapi: %s %s → %d does not conform to %s:\n%v\nrequest body: %s\nresponse body: %s",
			req.Method, req.URL.RequestURI(), res.StatusCode, documentFile, err, clipBody(reqBody), clipBody(resBody))
	}
}

// requestBytes returns the body env.do sent for body.
func requestBytes(body any) ([]byte, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(b), nil
	default:
		return json.Marshal(b)
	}
}

// clipBody shortens a body for a failure message.
func clipBody(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// check validates one exchange. A request that matches no route of the
// document must have been answered 404 or 405 with an ErrorDetail body.
func (c *conformance) check(req *http.Request, reqBody []byte, basePath string, checkRequest bool, status int, header http.Header, resBody []byte) error {
	ctx := context.Background()
	r := req.Clone(ctx)
	setBody(r, reqBody)
	if basePath != "" {
		if rest, ok := strings.CutPrefix(r.URL.Path, basePath); ok && (rest == "" || rest[0] == '/') {
			r.URL.Path, r.URL.RawPath = "/"+strings.TrimPrefix(rest, "/"), ""
		}
	}
	route, params, err := c.router.FindRoute(r)
	if err != nil {
		return c.checkUnrouted(r.URL.Path, err, status, header, resBody)
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			AuthenticationFunc:    bearerPresent,
		},
	}
	if checkRequest {
		if err := validateRequest(ctx, in, reqBody); err != nil {
			return fmt.Errorf("request: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 header,
		Options:                in.Options,
	}
	out.SetBodyBytes(resBody)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("response: %w", err)
	}
	return nil
}

// setBody makes body the body of r.
func setBody(r *http.Request, body []byte) {
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.Body, _ = r.GetBody()
	r.ContentLength = int64(len(body))
}

// validateRequest validates a request whose body is reqBody, and if that
// fails, the same request with its lax-mode values converted (see laxValue
// and laxQuery).
func validateRequest(ctx context.Context, in *openapi3filter.RequestValidationInput, reqBody []byte) error {
	err := openapi3filter.ValidateRequest(ctx, in)
	if err == nil {
		return err
	}
	r := in.Request
	query := r.URL.RawQuery
	r.URL.RawQuery = laxQuery(in.Route.Operation, r.URL.Query()).Encode()
	body := reqBody
	if media := jsonBody(in.Route.Operation); media != nil {
		var v any
		if json.Unmarshal(reqBody, &v) == nil {
			if b, err := json.Marshal(laxValue(media.Schema.Value, v)); err == nil {
				body = b
			}
		}
	}
	setBody(r, body)
	if r.URL.RawQuery == query && bytes.Equal(body, reqBody) {
		return err // Nothing to convert.
	}
	if openapi3filter.ValidateRequest(ctx, in) != nil {
		return err
	}
	return nil
}

// jsonBody returns the JSON request body of op, if it has one.
func jsonBody(op *openapi3.Operation) *openapi3.MediaType {
	if op.RequestBody == nil {
		return nil
	}
	media := op.RequestBody.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return nil
	}
	return media
}

// laxQuery returns q with the lax-mode values of the query parameters of op
// converted, and only the last value of a parameter that takes one, as
// FastAPI reads them.
func laxQuery(op *openapi3.Operation, q url.Values) url.Values {
	for _, p := range op.Parameters {
		p := p.Value
		values, ok := q[p.Name]
		if p.In != openapi3.ParameterInQuery || !ok || p.Schema == nil {
			continue
		}
		s := p.Schema.Value
		if !s.Type.Includes("array") {
			values = values[len(values)-1:]
		} else if s.Items != nil {
			s = s.Items.Value
		}
		out := make([]string, len(values))
		for i, v := range values {
			out[i] = fmt.Sprint(laxValue(s, v))
		}
		q[p.Name] = out
	}
	return q
}

var (
	laxInteger  = regexp.MustCompile(`^[+-]?[0-9]+(_[0-9]+)*(\.0*)?$`)
	laxTrue     = []string{"1", "on", "t", "true", "y", "yes"}
	laxFalse    = []string{"0", "off", "f", "false", "n", "no"}
	laxDateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}.*)?$|^[0-9]+(\.[0-9]+)?$`)
)

// laxValue returns v, a decoded JSON value of the type schema s describes,
// with the values that pydantic's lax mode converts to that type converted:
// for an integer, a boolean or a string of digits ("12", " 1_000 ", "1.0");
// for a boolean, 0, 1 or a word ("yes", "off", "t", ...); for a date-time,
// a Unix time or a date-time without zone or T.
func laxValue(s *openapi3.Schema, v any) any {
	if s == nil || v == nil {
		return v
	}
	for _, alt := range s.AnyOf {
		if alt.Value != nil && !alt.Value.Type.Is("null") {
			return laxValue(alt.Value, v)
		}
	}
	switch {
	case s.Type.Includes("object"):
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				if p := s.Properties[k]; p != nil {
					m[k] = laxValue(p.Value, x)
				}
			}
		}
	case s.Type.Includes("array"):
		if a, ok := v.([]any); ok && s.Items != nil {
			for i, x := range a {
				a[i] = laxValue(s.Items.Value, x)
			}
		}
	case s.Type.Includes("integer"):
		switch x := v.(type) {
		case bool:
			return map[bool]int{false: 0, true: 1}[x]
		case string:
			if t := strings.TrimSpace(x); laxInteger.MatchString(t) {
				n, _ := strconv.ParseInt(strings.ReplaceAll(strings.Split(t, ".")[0], "_", ""), 10, 64)
				return n
			}
		}
	case s.Type.Includes("boolean"):
		switch x := v.(type) {
		case float64:
			if x == 0 || x == 1 {
				return x == 1
			}
		case string:
			if w := strings.ToLower(x); slices.Contains(laxTrue, w) || slices.Contains(laxFalse, w) {
				return slices.Contains(laxTrue, w)
			}
		}
	case s.Type.Includes("string") && s.Format == "date-time":
		if laxDateTime.MatchString(strings.TrimSpace(fmt.Sprint(v))) {
			return "2000-01-01T00:00:00Z"
		}
	}
	return v
}

// checkUnrouted checks the answer to a request for path that matches no
// route of the document: FastAPI's 404 or 405, or, under /scim/v2, SCIM's
// (application/scim+json, a ScimError).
func (c *conformance) checkUnrouted(path string, routeErr error, status int, header http.Header, resBody []byte) error {
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		return fmt.Errorf("the document has no route for the request (%v), but the server answered %d, not 404 or 405", routeErr, status)
	}
	var v any
	if err := json.Unmarshal(resBody, &v); err != nil {
		return fmt.Errorf("response: not JSON: %w", err)
	}
	name, contentType := "ErrorDetail", "application/json"
	if path == "/scim/v2" || strings.HasPrefix(path, "/scim/v2/") {
		name, contentType = "ScimError", "application/scim+json"
	}
	if got := header.Get("Content-Type"); got != contentType {
		return fmt.Errorf("response: Content-Type %q, want %q", got, contentType)
	}
	schema := c.doc.Components.Schemas[name].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("response: not an %s: %w", name, err)
	}
	return nil
}

// bearerPresent checks the bearer security scheme: the request carries
// a bearer token (the server decides whether it is a good one).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	// The bearer and scim schemes: the request carries a bearer token.
	if in.SecuritySchemeName == "session" {
		if c, err := in.RequestValidationInput.Request.Cookie("fastapiusersauth"); err != nil || c.Value == "" {
			return errors.New("no session cookie")
		}
		return nil
	}
	scheme, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no bearer token")
	}
	return nil
}

// TestConformCatchesMismatches shows that conform fails on what it should:
// a field the document does not list, a wrong type, an undocumented status,
// a missing ETag, and a request the document does not allow even in lax
// mode.
func TestConformCatchesMismatches(t *testing.T) {
	c, err := conformer()
	if err != nil {
		t.Fatal(err)
	}
	const tool = `{"id":1,"name":"t","description":"","definition":{},"display_name":"t","in_code_tool_id":null,
		"custom_headers":[],"passthrough_auth":false,"mcp_server_id":null,"user_id":"7f8e6c1a-0b1c-4d2e-9f3a-123456789abc",
		"oauth_config_id":null,"oauth_config_name":null,"enabled":true,"chat_selectable":true,
		"agent_creation_selectable":true,"default_enabled":false}`
	headers := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	put := func(body string) *http.Request {
		r, _ := http.NewRequest("PUT", "http://quarry.test/admin/tool/custom/1", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer qry_x")
		return r
	}
	for _, tt := range []struct {
		name    string
		reqBody string
		status  int
		header  http.Header
		resBody string
		wantErr string
	}{
		{"conforming", `{"name":"n"}`, 200, headers("ETag", `"2"`), tool, ""},
		{"extra response field", `{}`, 200, headers("ETag", `"2"`), strings.Replace(tool, `"id":1`, `"id":1,"secret":"x"`, 1), "secret"},
		{"wrong response type", `{}`, 200, headers("ETag", `"2"`), strings.Replace(tool, `"enabled":true`, `"enabled":"yes"`, 1), "enabled"},
		{"undocumented status", `{}`, 418, headers(), `{"detail":"teapot"}`, "status is not supported"},
		{"missing ETag", `{}`, 200, headers(), tool, "ETag"},
		{"error body", `{}`, 404, headers(), `{"message":"gone"}`, "detail"},
		{"wrong request type", `{"passthrough_auth":"maybe"}`, 200, headers("ETag", `"2"`), tool, "passthrough_auth"},
		{"lax request", `{"passthrough_auth":"yes","oauth_config_id":" 1_000 "}`, 200, headers("ETag", `"2"`), tool, ""},
		{"wrong lax request", `{"passthrough_auth":"yes","oauth_config_id":"1.5"}`, 200, headers("ETag", `"2"`), tool, "oauth_config_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := c.check(put(tt.reqBody), []byte(tt.reqBody), "", true, tt.status, tt.header, []byte(tt.resBody))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected mismatch: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("no mismatch reported, want one about %s", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("mismatch %q does not mention %s", err, tt.wantErr)
			}
		})
	}
}

// TestServedOpenAPI checks GET /openapi.json and GET /docs: public, the
// document's text with the server's version, also under the base path.
func TestServedOpenAPI(t *testing.T) {
	text, err := os.ReadFile(documentFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ version, want string }{
		{"", "Development"},
		{"dev", "Development"},
		{"v1.4.2", "v1.4.2"},
		{`1.0 "quoted"`, `1.0 "quoted"`},
	} {
		e := newEnv(t, func(c *api.Config) { c.Version = tt.version; c.BasePath = "/api" })
		for _, path := range []string{"/openapi.json", "/api/openapi.json"} {
			r := e.do(user{}, "GET", path, nil)
			if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("GET %s: %d %s", path, r.status, r.header.Get("Content-Type"))
			}
			var got, want map[string]any
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			json.Unmarshal(text, &want)
			want["info"].(map[string]any)["version"] = tt.want
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Version %q: GET %s differs from %s with info.version %q (-want +got):\n%s", tt.version, path, documentFile, tt.want, diff)
			}
		}
	}

	e := newEnv(t, func(c *api.Config) { c.BasePath = "/api" })
	for _, path := range []string{"/docs", "/api/docs"} {
		r := e.do(user{}, "GET", path, nil)
		if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET %s: %d %s", path, r.status, r.header.Get("Content-Type"))
		}
		page := string(r.body)
		if !strings.Contains(page, `fetch("openapi.json"`) {
			t.Errorf("GET %s: the page does not fetch openapi.json relative to itself", path)
		}
		if m := regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]+(src|href)=|@import|https?://`).FindString(page); m != "" {
			t.Errorf("GET %s: the page loads something from elsewhere: %q", path, m)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy = %q", path, csp)
		}
	}
}

// TestOpenAPIPythonValidator validates the served document with
// openapi-spec-validator, the Python reference validator, when installed
// (in the python3 named by QUARRY_PYTHON, or on the PATH); CI sets
// QUARRY_REQUIRE_SPEC_VALIDATOR=1 so that it cannot be skipped there.
func TestOpenAPIPythonValidator(t *testing.T) {
	python := os.Getenv("QUARRY_PYTHON")
	if python == "" {
		python = "python3"
	}
	if err := exec.Command(python, "-c", "import openapi_spec_validator").Run(); err != nil {
		if os.Getenv("QUARRY_REQUIRE_SPEC_VALIDATOR") != "" {
			t.Fatal("QUARRY_REQUIRE_SPEC_VALIDATOR is set but python3 cannot import openapi_spec_validator")
		}
		t.Skip("python3 -c 'import openapi_spec_validator' failed: install openapi-spec-validator (pip install openapi-spec-validator) to run this check")
	}
	e := newEnv(t, func(c *api.Config) { c.Version = "1.2.3" })
	r := e.do(user{}, "GET", "/openapi.json", nil)
	if r.status != 200 {
		t.Fatalf("GET /openapi.json: %d", r.status)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const script = `import json, sys
from openapi_spec_validator import validate
with open(sys.argv[1]) as f:
    validate(json.load(f))
`
	out, err := exec.CommandContext(ctx, python, "-c", script, file).CombinedOutput()
	if err != nil {
		t.Errorf("openapi-spec-validator rejects the served document: %v\n%s", err, out)
	}
}

// isWorkerRoute reports whether route (METHOD /path) is of the worker
// protocol, whose own tokens open it and nothing else.
func isWorkerRoute(route string) bool {
	_, path, _ := strings.Cut(route, " ")
	return strings.HasPrefix(path, "/worker/")
}
