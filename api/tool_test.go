package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
)

// pingDefinition is a minimal valid custom tool definition.
const pingDefinition = `{"openapi": "3.0.0", "info": {"title": "Ping", "description": "Pings", "version": "1"},
	"servers": [{"url": "https://ping.example.com"}],
	"paths": {"/ping": {"get": {"summary": "ping", "operationId": "ping", "responses": {"200": {"description": "ok"}}}}}}`

// pongDefinition is another valid definition, in OpenAPI 3.1 with a
// path-level parameter.
const pongDefinition = `{"openapi": "3.1.0", "info": {"title": "Pong", "description": "Pongs", "version": "2"},
	"servers": [{"url": "https://pong.example.com"}],
	"paths": {"/pong/{id}": {"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": ["string", "null"]}}],
		"post": {"description": "pong one", "operationId": "pong.one", "responses": {"200": {"description": "ok"}}}}}}`

// createTool creates a custom tool as u and returns its id.
func (e *env) createTool(u user, body string) int64 {
	e.t.Helper()
	var out struct {
		ID int64 `json:"id"`
	}
	e.do(u, "POST", "/admin/tool/custom", body).decode(e.t, &out)
	return out.ID
}

// createOAuthConfig creates an OAuth configuration and returns its id.
func (e *env) createOAuthConfig(name string) int64 {
	e.t.Helper()
	var out struct {
		ID int64 `json:"id"`
	}
	e.do(e.admin, "POST", "/admin/oauth-config", map[string]any{"name": name, "authorization_url": "https://auth.example.com/authorize",
		"token_url": "https://auth.example.com/token", "client_id": "client-" + name, "client_secret": "client-secret-of-" + name,
		"scopes": []string{"read"}}).decode(e.t, &out)
	return out.ID
}

// storedHeaders returns the headers kept for tool id, in clear.
func (e *env) storedHeaders(id int64) []quarry.Header {
	e.t.Helper()
	t, err := e.db.Tool(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return t.Headers
}

// toolJSON renders an expected tool record.
func toolJSON(id int64, name, description, definition, headers string, passthrough bool, owner user, oauthID int64, oauthName string) string {
	oid, oname := "null", "null"
	if oauthID != 0 {
		oid, oname = itoa(oauthID), fmt.Sprintf("%q", oauthName)
	}
	return fmt.Sprintf(`{"id": %d, "name": %q, "description": %q, "definition": %s, "display_name": %q,
		"in_code_tool_id": null, "custom_headers": %s, "passthrough_auth": %t, "mcp_server_id": null,
		"user_id": %q, "oauth_config_id": %s, "oauth_config_name": %s, "enabled": true, "chat_selectable": true,
		"agent_creation_selectable": true, "default_enabled": false}`,
		id, name, description, definition, name, headers, passthrough, owner.id, oid, oname)
}

func TestUpdateTool(t *testing.T) {
	e := newEnv(t)
	oauth := e.createOAuthConfig("okta")
	oauth2 := e.createOAuthConfig("github")
	const headers = `[{"key": "X-Api-Key", "value": "a-very-long-api-key-value-of-thirty"}, {"key": "X-Team", "value": "blue"}]`
	const maskedHeaders = `[{"key": "X-Api-Key", "value": "a-ve...irty"}, {"key": "X-Team", "value": "••••••••••••"}]`
	newTool := func() int64 {
		return e.createTool(e.admin, fmt.Sprintf(`{"name": "ping", "description": "Pings things", "definition": %s,
			"custom_headers": %s, "passthrough_auth": false, "oauth_config_id": %d}`, pingDefinition, headers, oauth))
	}
	for _, tt := range []struct {
		name    string
		body    string
		want    func(id int64) string
		headers []quarry.Header
	}{
		{"empty body changes nothing", `{}`,
			func(id int64) string {
				return toolJSON(id, "ping", "Pings things", pingDefinition, maskedHeaders, false, e.admin, oauth, "okta")
			}, nil},
		{"nulls leave name, definition, headers and passthrough unchanged", `{"name": null, "definition": null, "custom_headers": null, "passthrough_auth": null}`,
			func(id int64) string {
				return toolJSON(id, "ping", "Pings things", pingDefinition, maskedHeaders, false, e.admin, oauth, "okta")
			}, nil},
		{"null clears description and OAuth config", `{"description": null, "oauth_config_id": null}`,
			func(id int64) string {
				return toolJSON(id, "ping", "", pingDefinition, maskedHeaders, false, e.admin, 0, "")
			}, nil},
		{"every field", fmt.Sprintf(`{"name": "pong", "description": "", "definition": %s, "custom_headers": [], "passthrough_auth": true, "oauth_config_id": %d}`, pongDefinition, oauth2),
			func(id int64) string {
				return toolJSON(id, "pong", "", pongDefinition, `[]`, true, e.admin, oauth2, "github")
			}, []quarry.Header{}},
		{"masked header echoes keep the stored values", `{"custom_headers": [{"key": "x-api-key", "value": "a-ve...irty"}, {"key": "X-TEAM", "value": "••••••••••••"}, {"key": "X-New", "value": "new-header-value-long-enough-for-ends"}]}`,
			func(id int64) string {
				return toolJSON(id, "ping", "Pings things", pingDefinition,
					`[{"key": "x-api-key", "value": "a-ve...irty"}, {"key": "X-TEAM", "value": "••••••••••••"}, {"key": "X-New", "value": "new-...ends"}]`,
					false, e.admin, oauth, "okta")
			}, []quarry.Header{{Key: "x-api-key", Value: "a-very-long-api-key-value-of-thirty"}, {Key: "X-TEAM", Value: "blue"}, {Key: "X-New", Value: "new-header-value-long-enough-for-ends"}}},
		{"new header values are stored", `{"custom_headers": [{"key": "X-Api-Key", "value": "a-ve...irty-but-another-value-22"}]}`,
			func(id int64) string {
				return toolJSON(id, "ping", "Pings things", pingDefinition, `[{"key": "X-Api-Key", "value": "a-ve...e-22"}]`, false, e.admin, oauth, "okta")
			}, []quarry.Header{{Key: "X-Api-Key", Value: "a-ve...irty-but-another-value-22"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := newTool()
			r := e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), tt.body)
			r.want(t, 200, tt.want(id))
			if got := r.header.Get("ETag"); got != `"2"` {
				t.Errorf("ETag = %q, want \"2\"", got)
			}
			e.do(e.admin, "GET", "/tool/"+itoa(id), nil).want(t, 200, tt.want(id))
			want := tt.headers
			if want == nil {
				want = []quarry.Header{{Key: "X-Api-Key", Value: "a-very-long-api-key-value-of-thirty"}, {Key: "X-Team", Value: "blue"}}
			}
			if diff := cmp.Diff(want, e.storedHeaders(id)); diff != "" {
				t.Errorf("stored headers mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("masking off shows header values", func(t *testing.T) {
		e := newEnv(t, func(c *api.Config) { c.MaskCredentials = false })
		id := e.createTool(e.admin, fmt.Sprintf(`{"name": "ping", "definition": %s, "custom_headers": %s, "passthrough_auth": false}`, pingDefinition, headers))
		e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"custom_headers": [{"key": "X-Team", "value": "••••••••••••"}]}`).want(t, 200,
			toolJSON(id, "ping", "", pingDefinition, `[{"key": "X-Team", "value": "••••••••••••"}]`, false, e.admin, 0, ""))
	})
}

func TestUpdateToolErrors(t *testing.T) {
	e := newEnv(t)
	curator := e.user(quarry.RoleCurator, "curator")
	other := e.user(quarry.RoleGlobalCurator, "other")
	adminTool := e.createTool(e.admin, `{"name": "a", "definition": `+pingDefinition+`, "passthrough_auth": false}`)
	curatorTool := e.createTool(curator, `{"name": "c", "definition": `+pingDefinition+`, "passthrough_auth": false}`)
	authTool := e.createTool(e.admin, `{"name": "h", "definition": `+pingDefinition+`, "passthrough_auth": false,
		"custom_headers": [{"key": "authorization", "value": "Bearer a-long-token-value"}]}`)
	passTool := e.createTool(e.admin, `{"name": "p", "definition": `+pingDefinition+`, "passthrough_auth": true}`)
	var builtins []struct {
		ID     int64   `json:"id"`
		InCode *string `json:"in_code_tool_id"`
	}
	e.do(e.admin, "GET", "/tool", nil).decode(t, &builtins)
	searchTool := builtins[0].ID
	if builtins[0].InCode == nil || *builtins[0].InCode != "SearchTool" {
		t.Fatalf("first tool is %+v, want the built-in SearchTool", builtins[0])
	}

	const (
		notFound  = `{"detail":"Tool by specified id does not exist"}`
		builtIn   = `{"detail":"Built-in tools cannot be modified through this endpoint."}`
		notOwner  = `{"detail":"You can only modify actions that you created."}`
		noInfo    = "{\"detail\":\"`info` section is required in OpenAPI schema\"}"
		authClash = `{"detail":"Cannot use passthrough auth with custom authorization headers"}`
		stale     = `{"detail":"The object has changed since you read it; fetch it again and retry"}`
	)
	for _, tt := range []struct {
		name   string
		u      user
		id     int64
		body   string
		header []string
		status int
		want   string
	}{
		{"1. no such tool", e.admin, 999999, `{"definition": {}}`, nil, 404, notFound},
		{"2. built-in tool, even for an admin", e.admin, searchTool, `{"name": "x"}`, nil, 400, builtIn},
		{"2. built-in before ownership", curator, searchTool, `{"definition": {}}`, nil, 400, builtIn},
		{"3. another user's tool", curator, adminTool, `{"definition": {}}`, nil, 403, notOwner},
		{"3. a global curator is no owner either", other, curatorTool, `{}`, nil, 403, notOwner},
		{"4. definition {} is validated", e.admin, adminTool, `{"definition": {}, "passthrough_auth": true, "custom_headers": [{"key": "Authorization", "value": "x"}]}`, nil, 400, noInfo},
		{"4. a bad definition", curator, curatorTool, `{"definition": {"info": {"title": "t", "description": "d"}, "openapi": "2.0", "paths": {}}}`, nil, 400,
			`{"detail":"OpenAPI version '2.0' is not supported"}`},
		{"5. passthrough with an Authorization header in the body", e.admin, adminTool,
			`{"passthrough_auth": true, "custom_headers": [{"key": "AUTHORIZATION", "value": "x"}], "oauth_config_id": 999}`, nil, 400, authClash},
		{"5. passthrough turned on over a stored Authorization header", e.admin, authTool, `{"passthrough_auth": true}`, nil, 400, authClash},
		{"5. an Authorization header added to a passthrough tool", e.admin, passTool, `{"custom_headers": [{"key": "Authorization", "value": "x"}]}`, nil, 400, authClash},
		{"6. unknown OAuth config", e.admin, adminTool, `{"oauth_config_id": 999}`, []string{"If-Match", `"99"`}, 404, `{"detail":"OAuth config with id 999 not found"}`},
		{"7. stale If-Match", curator, curatorTool, `{"name": "x"}`, []string{"If-Match", `"99"`}, 412, stale},
		{"the owner curator may edit", curator, curatorTool, `{"name": "mine"}`, []string{"If-Match", `"1"`}, 200, ""},
		{"an admin may edit a curator's tool", e.admin, curatorTool, `{"description": "by admin"}`, nil, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.u, "PUT", "/admin/tool/custom/"+itoa(tt.id), tt.body, tt.header...)
			if tt.want == "" {
				if r.status != tt.status {
					t.Errorf("status = %d, want %d: %s", r.status, tt.status, r.body)
				}
				return
			}
			r.want(t, tt.status, tt.want)
		})
	}
	t.Run("failures change nothing", func(t *testing.T) {
		var got struct {
			Name            string          `json:"name"`
			PassthroughAuth bool            `json:"passthrough_auth"`
			CustomHeaders   []quarry.Header `json:"custom_headers"`
		}
		e.do(e.admin, "GET", "/tool/"+itoa(adminTool), nil).decode(t, &got)
		if got.Name != "a" || got.PassthroughAuth || len(got.CustomHeaders) != 0 {
			t.Errorf("tool after failed updates: %+v", got)
		}
	})
	t.Run("ownership never changes", func(t *testing.T) {
		var got struct {
			UserID string `json:"user_id"`
		}
		e.do(e.admin, "GET", "/tool/"+itoa(curatorTool), nil).decode(t, &got)
		if got.UserID != curator.id {
			t.Errorf("user_id = %s after an admin's edit, want the owner %s", got.UserID, curator.id)
		}
	})
	t.Run("audit names the changed fields", func(t *testing.T) {
		var events []struct {
			Action string   `json:"action"`
			Fields []string `json:"fields"`
		}
		e.do(e.admin, "GET", "/admin/audit-log?resource_type=tool&resource_id="+itoa(curatorTool), nil).decode(t, &events)
		want := []struct {
			Action string   `json:"action"`
			Fields []string `json:"fields"`
		}{{"tool.update", []string{"description"}}, {"tool.update", []string{"name"}},
			{"tool.create", []string{"name", "description", "definition", "custom_headers", "passthrough_auth", "oauth_config_id"}}}
		if diff := cmp.Diff(want, events); diff != "" {
			t.Errorf("audit mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestUpdateToolValidation(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name, path, body, want string
	}{
		{"path not an integer", "/admin/tool/custom/abc", `{}`,
			`{"detail":[{"type":"int_parsing","loc":["path","tool_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]}`},
		{"every body field wrong", "/admin/tool/custom/x1", `{"name": 1, "description": false, "definition": [], "custom_headers": [{"key": "k"}, "h", {"key": 2, "value": "v"}], "passthrough_auth": "sometimes", "oauth_config_id": 1.5}`,
			`{"detail":[
				{"type":"int_parsing","loc":["path","tool_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x1"},
				{"type":"string_type","loc":["body","name"],"msg":"Input should be a valid string","input":1},
				{"type":"string_type","loc":["body","description"],"msg":"Input should be a valid string","input":false},
				{"type":"dict_type","loc":["body","definition"],"msg":"Input should be a valid dictionary","input":[]},
				{"type":"missing","loc":["body","custom_headers",0,"value"],"msg":"Field required","input":{"key":"k"}},
				{"type":"model_attributes_type","loc":["body","custom_headers",1],"msg":"Input should be a valid dictionary or object to extract fields from","input":"h"},
				{"type":"string_type","loc":["body","custom_headers",2,"key"],"msg":"Input should be a valid string","input":2},
				{"type":"bool_parsing","loc":["body","passthrough_auth"],"msg":"Input should be a valid boolean, unable to interpret input","input":"sometimes"},
				{"type":"int_from_float","loc":["body","oauth_config_id"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}]}`},
		{"custom_headers not a list", "/admin/tool/custom/1", `{"custom_headers": {"key": "k", "value": "v"}}`,
			`{"detail":[{"type":"list_type","loc":["body","custom_headers"],"msg":"Input should be a valid list","input":{"key":"k","value":"v"}}]}`},
		{"invalid JSON", "/admin/tool/custom/1", `{"name": "x" "description": "y"}`,
			`{"detail":[{"type":"json_invalid","loc":["body",13],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting ',' delimiter"}}]}`},
		{"no body", "/admin/tool/custom/1", ``,
			`{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			e.do(e.admin, "PUT", tt.path, body).want(t, 422, tt.want)
		})
	}
}

// TestToolHeadersNotLogged checks that header values never reach the log.
func TestToolHeadersNotLogged(t *testing.T) {
	e := newEnv(t)
	id := e.createTool(e.admin, `{"name": "a", "definition": `+pingDefinition+`, "passthrough_auth": false,
		"custom_headers": [{"key": "X-Api-Key", "value": "header-secret-value-1"}]}`)
	e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"custom_headers": [{"key": "X-Api-Key", "value": "header-secret-value-2"}]}`)
	e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"custom_headers": [{"key": "Authorization", "value": "header-secret-value-3"}], "passthrough_auth": true}`)
	for _, s := range []string{"header-secret-value-1", "header-secret-value-2", "header-secret-value-3"} {
		if strings.Contains(e.log.String(), s) {
			t.Errorf("the log contains %q", s)
		}
	}
}

// refChainDefinition returns a definition whose operation returns a schema
// S0 that is a chain of links references, S0 → S1 → … → S<links>.
func refChainDefinition(links int) string {
	var b strings.Builder
	b.WriteString(`{"openapi": "3.0.3", "info": {"title": "T", "description": "D", "version": "1"}, "servers": [{"url": "https://a"}],
		"paths": {"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"description": "OK",
			"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}}}, "components": {"schemas": {`)
	for i := range links {
		fmt.Fprintf(&b, `"S%d": {"$ref": "#/components/schemas/S%d"}, `, i, i+1)
	}
	fmt.Fprintf(&b, `"S%d": {"type": "string"}}}}`, links)
	return b.String()
}

// TestToolDefinitionRefChain checks that a chain of 8,000 references (which
// kept kin-openapi busy for 40 s) is refused at once, on every route that
// validates a definition.
func TestToolDefinitionRefChain(t *testing.T) {
	e := newEnv(t)
	curator := e.user(quarry.RoleCurator, "curator")
	id := e.createTool(curator, `{"name": "c", "definition": `+pingDefinition+`, "passthrough_auth": false}`)
	def := refChainDefinition(8000)
	const want = `{"detail":"Invalid OpenAPI document: the reference at '#/paths/~1a/get/responses/200/content/application~1json/schema' leads through more than 64 references"}`
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/admin/tool/custom/validate", `{"definition": ` + def + `}`},
		{"POST", "/admin/tool/custom", `{"name": "chain", "definition": ` + def + `, "passthrough_auth": false}`},
		{"PUT", "/admin/tool/custom/" + itoa(id), `{"definition": ` + def + `}`},
	} {
		r, took := e.timed(curator, tt.method, tt.path, tt.body)
		r.want(t, 400, want)
		t.Logf("%s %s with %d bytes: %v", tt.method, tt.path, len(tt.body), took)
	}
	e.do(e.admin, "GET", "/tool/"+itoa(id), nil).want(t, 200,
		toolJSON(id, "c", "", pingDefinition, `[]`, false, curator, 0, ""))
}

// defsFanOutDefinition returns an OpenAPI 3.1 definition whose schema H
// holds, in its $defs, a reference to a schema of m properties, and k
// schemas that are references to H.
func defsFanOutDefinition(k, m int) string {
	var b strings.Builder
	b.WriteString(`{"openapi": "3.1.0", "info": {"title": "T", "description": "D", "version": "1"}, "servers": [{"url": "https://a"}],
		"paths": {"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"description": "OK"}}}}},
		"components": {"schemas": {"H": {"type": "object", "$defs": {"x": {"$ref": "#/components/schemas/Big"}}},
			"Big": {"type": "object", "properties": {`)
	for i := range m {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"p%d": {"type": "string"}`, i)
	}
	b.WriteString(`}}`)
	for i := range k {
		fmt.Fprintf(&b, `, "C%d": {"$ref": "#/components/schemas/H"}`, i)
	}
	b.WriteString(`}}}`)
	return b.String()
}

// TestToolDefinitionDefsFanOut checks that 2,000 references to a schema
// whose $defs lead to 8,000 properties (296 KB, which kept kin-openapi
// busy for 22.7 s) are refused at once, on every route that validates a
// definition.
func TestToolDefinitionDefsFanOut(t *testing.T) {
	e := newEnv(t)
	curator := e.user(quarry.RoleCurator, "curator")
	id := e.createTool(curator, `{"name": "c", "definition": `+pingDefinition+`, "passthrough_auth": false}`)
	def := defsFanOutDefinition(2000, 8000)
	const want = `{"detail":"Invalid OpenAPI document: checking it would take more than 2000000 steps, because its parts refer to one another too often"}`
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/admin/tool/custom/validate", `{"definition": ` + def + `}`},
		{"POST", "/admin/tool/custom", `{"name": "defs", "definition": ` + def + `, "passthrough_auth": false}`},
		{"PUT", "/admin/tool/custom/" + itoa(id), `{"definition": ` + def + `}`},
	} {
		r, took := e.timed(curator, tt.method, tt.path, tt.body)
		r.want(t, 400, want)
		t.Logf("%s %s with %d bytes: %v", tt.method, tt.path, len(tt.body), took)
	}
	e.do(e.admin, "GET", "/tool/"+itoa(id), nil).want(t, 200,
		toolJSON(id, "c", "", pingDefinition, `[]`, false, curator, 0, ""))
	// Smaller, it is valid.
	var out struct {
		Methods []struct {
			Name string `json:"name"`
		} `json:"methods"`
	}
	e.do(curator, "POST", "/admin/tool/custom/validate", `{"definition": `+defsFanOutDefinition(100, 1000)+`}`).decode(t, &out)
	if len(out.Methods) != 1 || out.Methods[0].Name != "a" {
		t.Errorf("methods %+v, want one named a", out.Methods)
	}
}

// TestToolHeaderCharacters checks that header keys and values that could
// not be sent as they are (RFC 9110), CR and LF above all, and the headers
// the HTTP client sets itself (hop-by-hop and framing headers), are refused
// on creation and on update, and that the message never shows a value.
func TestToolHeaderCharacters(t *testing.T) {
	e := newEnv(t)
	id := e.createTool(e.admin, `{"name": "ping", "definition": `+pingDefinition+`, "passthrough_auth": false,
		"custom_headers": [{"key": "X-Api-Key", "value": "a-very-long-api-key-value-of-thirty"}]}`)
	const valueMsg = `The value of custom header %s is not a valid HTTP header value: it must not contain control characters such as CR or LF`
	const keyMsg = "Custom header key %s is not a valid HTTP header name: use letters, digits and !#$%%&'*+-.^_`|~ only"
	const clientMsg = "Custom header %s cannot be set: the HTTP client sets it for each call, as it describes the connection or how the message is framed"
	for _, tt := range []struct {
		name, headers, want string
	}{
		{"LF in a key", `[{"key": "X-Api\n", "value": "v"}]`, fmt.Sprintf(keyMsg, `\"X-Api\\n\"`)},
		{"CR LF in a value", `[{"key": "X-Ok", "value": "ok"}, {"key": "X-Api", "value": "v\r\nX-Injected: y"}]`, fmt.Sprintf(valueMsg, `\"X-Api\"`)},
		{"an empty key", `[{"key": "", "value": "v"}]`, fmt.Sprintf(keyMsg, `\"\"`)},
		{"a space in a key", `[{"key": "X Api", "value": "v"}]`, fmt.Sprintf(keyMsg, `\"X Api\"`)},
		{"a colon in a key", `[{"key": "X-Api:", "value": "v"}]`, fmt.Sprintf(keyMsg, `\"X-Api:\"`)},
		{"a non-ASCII key", `[{"key": "X-Clé", "value": "v"}]`, fmt.Sprintf(keyMsg, `\"X-Clé\"`)},
		{"NUL in a value", `[{"key": "X-Api", "value": "a\u0000b"}]`, fmt.Sprintf(valueMsg, `\"X-Api\"`)},
		{"DEL in a value", `[{"key": "X-Api", "value": "a\u007fb"}]`, fmt.Sprintf(valueMsg, `\"X-Api\"`)},
		{"a lone LF value", `[{"key": "X-Api", "value": "\n"}]`, fmt.Sprintf(valueMsg, `\"X-Api\"`)},
		{"Host", `[{"key": "X-Ok", "value": "ok"}, {"key": "Host", "value": "other.example.com"}]`, fmt.Sprintf(clientMsg, `\"Host\"`)},
		{"Content-Length, in lower case", `[{"key": "content-length", "value": "0"}]`, fmt.Sprintf(clientMsg, `\"content-length\"`)},
		{"Transfer-Encoding", `[{"key": "Transfer-Encoding", "value": "chunked"}]`, fmt.Sprintf(clientMsg, `\"Transfer-Encoding\"`)},
		{"Connection", `[{"key": "CONNECTION", "value": "close"}]`, fmt.Sprintf(clientMsg, `\"CONNECTION\"`)},
		{"Upgrade", `[{"key": "Upgrade", "value": "websocket"}]`, fmt.Sprintf(clientMsg, `\"Upgrade\"`)},
		{"TE", `[{"key": "TE", "value": "trailers"}]`, fmt.Sprintf(clientMsg, `\"TE\"`)},
		{"Trailer", `[{"key": "Trailer", "value": "X"}]`, fmt.Sprintf(clientMsg, `\"Trailer\"`)},
		{"Keep-Alive", `[{"key": "Keep-Alive", "value": "timeout=5"}]`, fmt.Sprintf(clientMsg, `\"Keep-Alive\"`)},
		{"Proxy-Connection", `[{"key": "Proxy-Connection", "value": "keep-alive"}]`, fmt.Sprintf(clientMsg, `\"Proxy-Connection\"`)},
		{"a client header with a bad value", `[{"key": "Host", "value": "a\r\nb"}]`, fmt.Sprintf(clientMsg, `\"Host\"`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := `{"detail":"` + tt.want + `"}`
			e.do(e.admin, "POST", "/admin/tool/custom", `{"name": "bad", "definition": `+pingDefinition+`,
				"passthrough_auth": false, "custom_headers": `+tt.headers+`}`).want(t, 400, want)
			e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"custom_headers": `+tt.headers+`}`).want(t, 400, want)
		})
	}
	// The definition is checked first, then the headers, then passthrough.
	e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"definition": {}, "custom_headers": [{"key": "X\n", "value": "v"}]}`).
		want(t, 400, "{\"detail\":\"`info` section is required in OpenAPI schema\"}")
	e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"passthrough_auth": true, "custom_headers": [{"key": "Authorization\n", "value": "v"}]}`).
		want(t, 400, `{"detail":"`+fmt.Sprintf(keyMsg, `\"Authorization\\n\"`)+`"}`)
	if diff := cmp.Diff([]quarry.Header{{Key: "X-Api-Key", Value: "a-very-long-api-key-value-of-thirty"}}, e.storedHeaders(id)); diff != "" {
		t.Errorf("stored headers changed by refused updates (-want +got):\n%s", diff)
	}
	var tools []struct{ Name string }
	e.do(e.admin, "GET", "/tool", nil).decode(t, &tools)
	for _, tl := range tools {
		if tl.Name == "bad" {
			t.Error("a refused creation made a tool")
		}
	}
	// Every token character, and tabs, spaces and UTF-8 in values, are fine.
	ok := "[{\"key\": \"!#$%&'*+-.^_`|~09azAZ\", \"value\": \"a\\tb c é ••\"}]"
	e.do(e.admin, "PUT", "/admin/tool/custom/"+itoa(id), `{"custom_headers": `+ok+`}`).want(t, 200,
		toolJSON(id, "ping", "", pingDefinition, "[{\"key\": \"!#$%&'*+-.^_`|~09azAZ\", \"value\": \"••••••••••••\"}]", false, e.admin, 0, ""))
	if got := e.storedHeaders(id); len(got) != 1 || got[0].Value != "a\tb c é ••" {
		t.Errorf("stored headers = %q", got)
	}
}
