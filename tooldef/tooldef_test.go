package tooldef_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/tooldef"
)

// header is the start of a definition that passes rules 1 to 7.
const header = `"openapi": "3.0.3",
	"info": {"title": "T", "description": "D", "version": "1"},
	"servers": [{"url": "https://api.example.com"}]`

// withPaths returns a definition that passes rules 1 to 7 and has paths.
func withPaths(paths string) string {
	return "{" + header + `, "paths": ` + paths + "}"
}

// op returns the JSON text of an operation that passes rules 8 and 11.
func op(id string) string {
	return `{"operationId": "` + id + `", "summary": "S", "responses": {"200": {"description": "OK"}}}`
}

// ruleCase is a definition that breaks one rule, and the message it gets.
type ruleCase struct {
	name string
	def  string
	want string
}

// ruleCases break each rule in turn, and only that rule.
var ruleCases = []ruleCase{
	// Rule 1.
	{"no info", `{"openapi": "3.0.3", "paths": {}}`,
		"`info` section is required in OpenAPI schema"},
	// Rule 2.
	{"no title", `{"openapi": "3.0.3", "info": {"description": "D"}, "paths": {}}`,
		"`title` is required in `info` section of OpenAPI schema"},
	{"info is a string", `{"openapi": "3.0.3", "info": "title and description", "paths": {}}`,
		"`title` is required in `info` section of OpenAPI schema"},
	{"info is a list", `{"openapi": "3.0.3", "info": ["title", "description"], "paths": {}}`,
		"`title` is required in `info` section of OpenAPI schema"},
	{"info is null", `{"openapi": "3.0.3", "info": null, "paths": {}}`,
		"`title` is required in `info` section of OpenAPI schema"},
	// Rule 3.
	{"no description", `{"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": {}}`,
		"`description` is required in `info` section of OpenAPI schema"},
	// Rule 4.
	{"no openapi", `{"info": {"title": "T", "description": "D"}, "paths": {}}`,
		"`openapi` field which specifies OpenAPI schema version is required"},
	// Rule 5.
	{"swagger 2", `{"openapi": "2.0", "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '2.0' is not supported"},
	{"empty version", `{"openapi": "", "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '' is not supported"},
	{"version 3", `{"openapi": "3", "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '3' is not supported"},
	{"float version", `{"openapi": 3.0, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '3.0' is not supported"},
	{"float version 3.10", `{"openapi": 3.10, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '3.1' is not supported"},
	{"int version", `{"openapi": 3, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '3' is not supported"},
	{"big float version", `{"openapi": 1e16, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '1e+16' is not supported"},
	{"tiny float version", `{"openapi": 0.00001, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '1e-05' is not supported"},
	{"huge float version", `{"openapi": 1E400, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version 'inf' is not supported"},
	{"negative zero version", `{"openapi": -0, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version '0' is not supported"},
	{"bool version", `{"openapi": true, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version 'True' is not supported"},
	{"null version", `{"openapi": null, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"OpenAPI version 'None' is not supported"},
	{"list version", `{"openapi": ["3.0", "it's"], "info": {"title": "T", "description": "D"}, "paths": {}}`,
		`OpenAPI version '['3.0', "it's"]' is not supported`},
	{"object version", `{"openapi": {"v": 3, "w": [1.5, false, "a\n\u0001\u00e9\u200b"]}, "info": {"title": "T", "description": "D"}, "paths": {}}`,
		`OpenAPI version '{'v': 3, 'w': [1.5, False, 'a\n\x01é\u200b']}' is not supported`},
	// Rule 6.
	{"no paths", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": [{"url": "https://a"}]}`,
		"`paths` section is required in OpenAPI schema"},
	// Rule 7.
	{"no servers", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "paths": {}}`,
		"Expected exactly one URL in OpenAPI schema, but found []"},
	{"empty servers", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": [], "paths": {}}`,
		"Expected exactly one URL in OpenAPI schema, but found []"},
	{"servers not a list", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": {"url": "https://a"}, "paths": {}}`,
		"Expected exactly one URL in OpenAPI schema, but found []"},
	{"servers without url", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": [{}, {"url": ""}, {"url": 5}, "https://x", null], "paths": {}}`,
		"Expected exactly one URL in OpenAPI schema, but found []"},
	{"two servers", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": [{"url": "https://a"}, {"description": "none"}, {"url": "https://b"}], "paths": {}}`,
		"Expected exactly one URL in OpenAPI schema, but found ['https://a', 'https://b']"},
	{"server urls with quotes", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": [{"url": "https://a/it's"}, {"url": "https://b/\"x\"'"}], "paths": {}}`,
		`Expected exactly one URL in OpenAPI schema, but found ["https://a/it's", 'https://b/"x"\'']`},
	// Rule 8.
	{"no operationId", withPaths(`{"/items": {"get": {"summary": "S"}}}`),
		"Operation ID is not specified for GET /items"},
	{"empty operationId", withPaths(`{"/items": {"post": {"operationId": "", "summary": "S"}}}`),
		"Operation ID is not specified for POST /items"},
	{"operationId not a string", withPaths(`{"/items": {"put": {"operationId": 7, "summary": "S"}}}`),
		"Operation ID is not specified for PUT /items"},
	{"operation not an object", withPaths(`{"/items": {"delete": "remove"}}`),
		"Operation ID is not specified for DELETE /items"},
	{"no operationId on unsupported method", withPaths(`{"/items": {"head": {"summary": "S"}}}`),
		"Operation ID is not specified for HEAD /items"},
	{"no summary", withPaths(`{"/items/{id}": {"patch": {"operationId": "patchItem"}}}`),
		"Summary is not specified for PATCH /items/{id}"},
	{"empty summary and description", withPaths(`{"/items": {"get": {"operationId": "a", "summary": "", "description": ""}}}`),
		"Summary is not specified for GET /items"},
	{"duplicate operationId", withPaths(`{"/a": {"get": ` + op("doThing") + `}, "/b": {"get": ` + op("doThing") + `}}`),
		"Duplicate operation ID 'doThing'. Each operation must have a unique operationId."},
	{"operationIds sanitize alike", withPaths(`{"/a": {"get": ` + op("foo.bar") + `, "post": ` + op("foo_bar") + `}}`),
		"Operation IDs 'foo.bar' and 'foo_bar' both sanitize to 'foo_bar'. Rename one so the LLM-facing names stay distinct."},
	{"rule 8 before rule 10 of an earlier operation", withPaths(`{"/a/{id}": {"get": ` + op("a") + `}, "/b": {"get": {"summary": "S"}}}`),
		"Operation ID is not specified for GET /b"},
	// Rule 9.
	{"empty paths", withPaths(`{}`), "No methods found in OpenAPI schema"},
	{"paths without operations", withPaths(`{"/a": {"summary": "S", "description": "D", "parameters": [], "servers": [], "x-a": 1}, "/b": null}`),
		"No methods found in OpenAPI schema"},
	{"paths not an object", withPaths(`["/a"]`), "No methods found in OpenAPI schema"},
	{"paths null", withPaths(`null`), "No methods found in OpenAPI schema"},
	// Rule 10.
	{"undeclared path parameter", withPaths(`{"/items/{id}": {"get": ` + op("getItem") + `}}`),
		"Missing path parameter: 'id'"},
	{"path parameter in query", withPaths(`{"/items/{id}": {"get": {"operationId": "a", "summary": "S", "parameters": [{"name": "id", "in": "query", "schema": {"type": "string"}}]}}}`),
		"Missing path parameter: 'id'"},
	{"path parameter declared on another path", withPaths(`{"/a/{id}": {"parameters": [{"name": "id", "in": "path"}], "get": ` + op("a") + `}, "/b/{id}": {"get": ` + op("b") + `}}`),
		"Missing path parameter: 'id'"},
	{"second of two path parameters", withPaths(`{"/a/{x}/{y}": {"parameters": [{"name": "x", "in": "path"}], "get": ` + op("a") + `}}`),
		"Missing path parameter: 'y'"},
	{"path parameter ref to nothing", withPaths(`{"/a/{id}": {"get": {"operationId": "a", "summary": "S", "parameters": [{"$ref": "#/components/parameters/Id"}]}}}`),
		"Missing path parameter: 'id'"},
	{"path parameter with a quote", withPaths(`{"/a/{it's}": {"get": ` + op("a") + `}}`),
		`Missing path parameter: "it's"`},
	{"unclosed brace", withPaths(`{"/items/{id": {"get": ` + op("a") + `}}`),
		"Invalid path template: '/items/{id'. Each '{' must be closed by a '}' with a parameter name between them."},
	{"unopened brace", withPaths(`{"/items/id}": {"get": ` + op("a") + `}}`),
		"Invalid path template: '/items/id}'. Each '{' must be closed by a '}' with a parameter name between them."},
	{"empty braces", withPaths(`{"/items/{}": {"get": ` + op("a") + `}}`),
		"Invalid path template: '/items/{}'. Each '{' must be closed by a '}' with a parameter name between them."},
	{"nested braces", withPaths(`{"/items/{a{b}}": {"get": ` + op("a") + `}}`),
		"Invalid path template: '/items/{a{b}}'. Each '{' must be closed by a '}' with a parameter name between them."},
	{"missing parameter before bad brace", withPaths(`{"/{a}/}": {"get": ` + op("a") + `}}`),
		"Missing path parameter: 'a'"},
	{"unsupported content type", withPaths(`{"/a": {"post": {"operationId": "a", "summary": "S", "requestBody": {"content": {"text/plain": {}, "application/xml": {}}}}}}`),
		"Unsupported content type: 'text/plain'. Only 'application/json' is supported."},
	{"unsupported content type by ref", `{` + header + `, "paths": {"/a": {"post": {"operationId": "a", "summary": "S", "requestBody": {"$ref": "#/components/requestBodies/B"}}}},
		"components": {"requestBodies": {"B": {"content": {"multipart/form-data": {}}}}}}`,
		"Unsupported content type: 'multipart/form-data'. Only 'application/json' is supported."},
	{"unsupported method", withPaths(`{"/a": {"head": ` + op("a") + `}}`),
		"HTTP method 'head' is not supported."},
	{"unknown method", withPaths(`{"/a": {"Fetch": ` + op("a") + `}}`),
		"HTTP method 'Fetch' is not supported."},
	{"additional operation", withPaths(`{"/a": {"additionalOperations": {"LINK": ` + op("a") + `}}}`),
		"HTTP method 'LINK' is not supported."},
	{"empty method", withPaths(`{"/a": {"": ` + op("a") + `}}`),
		"HTTP method is not specified."},
	{"path checked before content type and method", withPaths(`{"/a/{id}": {"trace": {"operationId": "a", "summary": "S", "requestBody": {"content": {"text/plain": {}}}}}}`),
		"Missing path parameter: 'id'"},
	{"content type checked before method", withPaths(`{"/a": {"trace": {"operationId": "a", "summary": "S", "requestBody": {"content": {"text/plain": {}}}}}}`),
		"Unsupported content type: 'text/plain'. Only 'application/json' is supported."},
	{"first operation first", withPaths(`{"/a": {"options": ` + op("a") + `}, "/b/{id}": {"get": ` + op("b") + `}}`),
		"HTTP method 'options' is not supported."},
	// Rule 11.
	{"no responses", withPaths(`{"/a": {"get": {"operationId": "a", "summary": "S"}}}`),
		"Invalid OpenAPI document: invalid paths: invalid path /a: invalid operation GET: value of responses must be an object"},
	{"type list in 3.0", withPaths(`{"/a": {"get": {"operationId": "a", "summary": "S", "parameters": [{"name": "q", "in": "query", "schema": {"type": ["string", "null"]}}], "responses": {"200": {"description": "OK"}}}}}`),
		`Invalid OpenAPI document: invalid paths: invalid path /a: invalid operation GET: parameter "q" schema is invalid: an array of types is for OpenAPI >=3.1; before that type MUST be a single string`},
	{"upper-case method key", withPaths(`{"/a": {"GET": ` + op("a") + `}}`),
		"Invalid OpenAPI document: invalid paths: invalid path /a: extra sibling fields: [GET]"},
	{"no version in info", `{"openapi": "3.0.3", "info": {"title": "T", "description": "D"}, "servers": [{"url": "https://a"}], "paths": {"/a": {"get": ` + op("a") + `}}}`,
		"Invalid OpenAPI document: invalid info: value of version must be a non-empty string"},
	{"ref to nothing", withPaths(`{"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"$ref": "#/components/responses/Nope"}}}}}`),
		`Invalid OpenAPI document: failed to resolve "components" in fragment in URI: "#/components/responses/Nope"`},
	{"external ref to a file", withPaths(`{"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"$ref": "/etc/passwd"}}}}}`),
		`Invalid OpenAPI document: external reference "/etc/passwd" is not allowed`},
	{"schema containing itself", `{` + header + `, "paths": {"/a": {"get": ` + op("a") + `}},
		"components": {"schemas": {"S": {"not": {"$ref": "#/components/schemas/S"}, "example": 1}}}}`,
		`Invalid OpenAPI document: schema '#/components/schemas/S' refers back to itself through schemas that have no type or other constraint`},
	{"schemas containing each other in 3.1", `{"openapi": "3.1.0", "info": {"title": "T", "description": "D", "version": "1"},
		"servers": [{"url": "https://a"}], "paths": {"/a": {"get": ` + op("a") + `}},
		"components": {"schemas": {"S": {"items": {"$ref": "#/components/schemas/T"}}, "T": {"$ref": "#/components/schemas/S", "items": {"$ref": "#/components/schemas/T"}}}}}`,
		`Invalid OpenAPI document: schema '#/components/schemas/S' refers back to itself through schemas that have no type or other constraint`},
	{"schema leading to too many hollow schemas", schemaChain("3.1.0", 24, `{"allOf": [{"$ref": "#/components/schemas/S%[2]d"}, {"$ref": "#/components/schemas/S%[2]d"}]}`),
		`Invalid OpenAPI document: schema '#/components/schemas/S8' leads to more than 100000 schemas that have no type or other constraint`},
	{"validator panic", `{"openapi": "3.1.0", "info": {"title": "T", "description": "D", "version": "1"},
		"servers": [{"url": "https://a"}], "paths": {"/a": {"get": ` + op("a") + `}},
		"components": {"requestBodies": {"S": {"content": {"application/json": {"encoding": {"a": {"headers": {"X": {"schema": {"prefixItems": [null]}}}}}}}}}}}`,
		"Invalid OpenAPI document: the validator failed on this document"},
}

// schemaChain returns a definition with components S0 to S<n>. Schema S<i>
// for i < n is the format node applied to i and i+1 (so %[2]d in node is
// the index of the next schema), S<n> is an object, and the one operation
// returns an S0, with an example.
func schemaChain(version string, n int, node string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"S%d": `+node+`, `, i, i+1)
	}
	fmt.Fprintf(&b, `"S%d": {"type": "object"}`, n)
	return `{"openapi": "` + version + `", "info": {"title": "T", "description": "D", "version": "1"},
		"servers": [{"url": "https://a"}],
		"paths": {"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"description": "OK",
			"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}, "example": {}}}}}}}},
		"components": {"schemas": {` + b.String() + `}}}`
}

func TestValidateRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			methods, err := tooldef.Validate(context.Background(), []byte(tc.def))
			if err == nil {
				t.Fatalf("Validate succeeded with %d methods, want error %q", len(methods), tc.want)
			}
			var e *quarry.Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate error %v (%T) is not a *quarry.Error", err, err)
			}
			if e.Code != quarry.EINVALID {
				t.Errorf("error code = %q, want %q", e.Code, quarry.EINVALID)
			}
			if e.Message != tc.want {
				t.Errorf("message:\n got %s\nwant %s", e.Message, tc.want)
			}
		})
	}
}

// specJSON compares json.RawMessage values by their compact form.
var specJSON = cmp.Transformer("compact", func(m json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		return "invalid JSON: " + string(m)
	}
	return b.String()
})

func TestValidateValid(t *testing.T) {
	tests := []struct {
		file string
		want []tooldef.Method
	}{
		{"valid30.json", []tooldef.Method{
			{
				Name: "listTickets", RawName: "listTickets", Summary: "List tickets",
				Path: "/tickets", Method: "get",
				Spec: json.RawMessage(`{"operationId":"listTickets","summary":"List tickets",
					"parameters":[{"name":"status","in":"query","schema":{"type":"string","enum":["open","closed"]}}],
					"responses":{"200":{"description":"The tickets","content":{"application/json":{"schema":{"type":"array","items":{"$ref":"#/components/schemas/Ticket"}}}}}}}`),
			},
			{
				Name: "createTicket", RawName: "createTicket", Summary: "Open a new ticket",
				Path: "/tickets", Method: "post",
				Spec: json.RawMessage(`{"operationId":"createTicket","description":"Open a new ticket",
					"requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/NewTicket"}}}},
					"responses":{"201":{"description":"Created"}}}`),
			},
			{
				Name: "ServiceNow_get_ticket", RawName: "ServiceNow.get ticket", Summary: "Get a ticket",
				Path: "/tickets/{ticket_id}", Method: "get",
				Spec: json.RawMessage(`{"operationId":"ServiceNow.get ticket","summary":"Get a ticket",
					"responses":{"200":{"description":"The ticket","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Ticket"}}}},
					"404":{"description":"No such ticket"}}}`),
			},
			{
				Name: "deleteTicket", RawName: "deleteTicket", Summary: "Delete a ticket",
				Path: "/tickets/{ticket_id}", Method: "delete",
				Spec: json.RawMessage(`{"operationId":"deleteTicket","summary":"Delete a ticket","responses":{"204":{"description":"Deleted"}}}`),
			},
			{
				Name: "editComment", RawName: "editComment", Summary: "Edit a comment",
				Path: "/tickets/{ticket_id}/comments/{comment_id}", Method: "patch",
				Spec: json.RawMessage(`{"operationId":"editComment","summary":"","description":"Edit a comment",
					"parameters":[{"name":"comment_id","in":"path","required":true,"schema":{"type":"integer"}}],
					"requestBody":{"$ref":"#/components/requestBodies/Comment"},
					"responses":{"200":{"description":"Edited"}}}`),
			},
		}},
		{"valid31.json", []tooldef.Method{
			{
				Name: "getItem", RawName: "getItem", Summary: "Get an item",
				Path: "/warehouses/{warehouse}/items/{sku}", Method: "get",
				Spec: json.RawMessage(`{"operationId":"getItem","summary":"Get an item",
					"responses":{"200":{"description":"The item","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Item"}}}}}}`),
			},
			{
				Name: "putItem", RawName: "putItem", Summary: "Replace an item",
				Path: "/warehouses/{warehouse}/items/{sku}", Method: "put",
				Spec: json.RawMessage(`{"operationId":"putItem","summary":"Replace an item",
					"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Item"}}}},
					"responses":{"200":{"description":"Replaced"}}}`),
			},
			{
				Name: "foo_search", RawName: "foo.search", Summary: "Search items",
				Path: "/items", Method: "get",
				Spec: json.RawMessage(`{"operationId":"foo.search","description":"Search items",
					"parameters":[{"name":"q","in":"query","schema":{"type":["string","null"]}}],
					"responses":{"200":{"description":"Found"}}}`),
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			def, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tooldef.Validate(context.Background(), def)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, specJSON); diff != "" {
				t.Errorf("Validate methods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateSpecAsWritten(t *testing.T) {
	spec := `{ "summary" : "S",  "operationId": "a", "responses": {"200": {"description": "OK"}} }`
	got, err := tooldef.Validate(context.Background(), []byte(withPaths(`{"/a": {"get": `+spec+`}}`)))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(got) != 1 || string(got[0].Spec) != spec {
		t.Errorf("Validate = %+v, want one method with spec %s", got, spec)
	}
}

func TestValidateDuplicateKeys(t *testing.T) {
	// As in Python, a key written twice keeps its first position and takes
	// its last value.
	def := withPaths(`{"/a": {"get": ` + op("first") + `}, "/b": {"get": ` + op("b") + `}, "/a": {"get": ` + op("last") + `}}`)
	got, err := tooldef.Validate(context.Background(), []byte(def))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var names []string
	for _, m := range got {
		names = append(names, m.Path+" "+m.RawName)
	}
	if want := []string{"/a last", "/b b"}; !cmp.Equal(names, want) {
		t.Errorf("Validate listed %q, want %q", names, want)
	}
}

func TestValidateExternalRefs(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"description": "OK"}`))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "response.json")
	if err := os.WriteFile(file, []byte(`{"description": "OK"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{srv.URL + "/response.json", file, "response.json", "file://" + file} {
		def := withPaths(`{"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"$ref": "` + ref + `"}}}}}`)
		_, err := tooldef.Validate(context.Background(), []byte(def))
		msg := quarry.ErrorMessage(err)
		if quarry.ErrorCode(err) != quarry.EINVALID || !strings.HasPrefix(msg, "Invalid OpenAPI document: ") || !strings.Contains(msg, "is not allowed") {
			t.Errorf("$ref %s: Validate error = %v, want an invalid document with a disallowed reference", ref, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}

func TestValidateRecursiveSchema(t *testing.T) {
	// A schema may contain itself when a schema on the way has a type.
	for _, version := range []string{"3.0.3", "3.1.0"} {
		def := `{"openapi": "` + version + `", "info": {"title": "T", "description": "D", "version": "1"},
			"servers": [{"url": "https://a"}],
			"paths": {"/tree": {"get": {"operationId": "getTree", "summary": "S", "responses": {"200": {"description": "OK",
				"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node", "description": "The root"}}}}}}}},
			"components": {"schemas": {"Node": {"type": "object", "example": {"children": [{"children": []}]},
				"properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}}}}`
		if _, err := tooldef.Validate(context.Background(), []byte(def)); err != nil {
			t.Errorf("OpenAPI %s: Validate: %v", version, err)
		}
	}
}

func TestValidateSharedSchemas(t *testing.T) {
	// Each schema refers twice to the next: the document is small, but
	// its schemas have 2^40 paths. Validate must not follow each of them,
	// whether the examples are checked or the 3.1 siblings of a $ref.
	nodes := []string{
		`{"type": "object", "example": {}, "allOf": [{"$ref": "#/components/schemas/S%[2]d"}, {"$ref": "#/components/schemas/S%[2]d"}]}`,
		`{"type": "object", "default": {}, "anyOf": [{"$ref": "#/components/schemas/S%[2]d"}, {"$ref": "#/components/schemas/S%[2]d", "minProperties": 0}]}`,
		`{"type": "object", "properties": {"a": {"$ref": "#/components/schemas/S%[2]d", "not": {"type": "string"}}, "b": {"$ref": "#/components/schemas/S%[2]d", "description": "B"}}}`,
	}
	for _, version := range []string{"3.0.3", "3.1.0"} {
		for _, node := range nodes {
			def := schemaChain(version, 40, node)
			if _, err := tooldef.Validate(context.Background(), []byte(def)); err != nil {
				t.Errorf("OpenAPI %s, schemas like %s: Validate: %v", version, node, err)
			}
		}
	}
}

func TestSanitizeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ServiceNow.list incidents", "ServiceNow_list_incidents"},
		{"foo.bar", "foo_bar"},
		{"foo_bar", "foo_bar"},
		{"get-item_2", "get-item_2"},
		{"héllo wörld", "h_llo_w_rld"},
		{"a/b:c", "a_b_c"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := tooldef.SanitizeName(tt.in); got != tt.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidateSanitizedName(t *testing.T) {
	def := withPaths(`{"/incidents": {"get": ` + op("ServiceNow.list incidents") + `}}`)
	got, err := tooldef.Validate(context.Background(), []byte(def))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(got) != 1 || got[0].Name != "ServiceNow_list_incidents" || got[0].RawName != "ServiceNow.list incidents" {
		t.Errorf("Validate = %+v, want name ServiceNow_list_incidents, raw name ServiceNow.list incidents", got)
	}
}
