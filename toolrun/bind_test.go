package toolrun

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/tooldef"
)

// bindDefinition exercises every location and style of parameter.
const bindDefinition = `{"openapi":"3.0.3","info":{"title":"Bind","description":"Binding","version":"1"},
 "servers":[{"url":"https://{region}.api.example.com/v1/","variables":{"region":{"default":"eu"}}}],
 "components":{"parameters":{"Trace":{"name":"X-Trace","in":"header","schema":{"type":"string"}}},
   "schemas":{"Item":{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":1},"qty":{"type":"integer","maximum":10}}}}},
 "paths":{
  "/items/{id}":{
   "parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
   "get":{"operationId":"getItem","summary":"Get an item","parameters":[
     {"name":"fields","in":"query","schema":{"type":"array","items":{"type":"string"}}},
     {"name":"csv","in":"query","explode":false,"schema":{"type":"array","items":{"type":"integer"}}},
     {"name":"pipes","in":"query","style":"pipeDelimited","explode":false,"schema":{"type":"array","items":{"type":"string"}}},
     {"name":"spaces","in":"query","style":"spaceDelimited","explode":false,"schema":{"type":"array","items":{"type":"string"}}},
     {"name":"filter","in":"query","style":"deepObject","schema":{"type":"object","additionalProperties":{"type":"string"}}},
     {"name":"flat","in":"query","schema":{"type":"object","additionalProperties":{"type":"string"}}},
     {"name":"limit","in":"query","schema":{"type":"integer","minimum":1,"maximum":100}},
     {"name":"active","in":"query","schema":{"type":"boolean"}},
     {"name":"where","in":"query","content":{"application/json":{"schema":{"type":"object"}}}},
     {"$ref":"#/components/parameters/Trace"},
     {"name":"session","in":"cookie","schema":{"type":"string"}},
     {"name":"Host","in":"header","schema":{"type":"string"}},
     {"name":"Authorization","in":"header","schema":{"type":"string"}}],
    "responses":{"200":{"description":"OK"}}},
   "put":{"operationId":"put.item","summary":"Replace an item",
    "requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Item"}}}},
    "responses":{"200":{"description":"OK"}}}},
  "/labels/{ids}":{"get":{"operationId":"labels","summary":"Labels","parameters":[
     {"name":"ids","in":"path","required":true,"style":"label","schema":{"type":"array","items":{"type":"integer"}}}],
    "responses":{"200":{"description":"OK"}}}},
  "/matrix/{point}":{"get":{"operationId":"matrix","summary":"Matrix","parameters":[
     {"name":"point","in":"path","required":true,"style":"matrix","explode":true,"schema":{"type":"object","additionalProperties":{"type":"integer"}}}],
    "responses":{"200":{"description":"OK"}}}},
  "/search":{"post":{"operationId":"search","summary":"Search",
    "requestBody":{"content":{"application/json":{"schema":{"type":"object"}}}},
    "responses":{"200":{"description":"OK"}}}}
 }}`

func compileTest(t testing.TB, def string) *Definition {
	t.Helper()
	if _, err := tooldef.Validate(context.Background(), []byte(def)); err != nil {
		t.Fatalf("the test definition is not valid: %v", err)
	}
	d, err := Compile(context.Background(), []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func args(t testing.TB, s string) map[string]any {
	t.Helper()
	a, err := DecodeArgs([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestBind(t *testing.T) {
	d := compileTest(t, bindDefinition)
	for _, tt := range []struct {
		name, method, args string
		url                string // the URL sent, or, with err, ""
		headers            map[string]string
		body               string
		err                string
	}{
		{name: "path only", method: "getItem", args: `{"id":"42"}`, url: "https://eu.api.example.com/v1/items/42"},
		{name: "path escaped", method: "getItem", args: `{"id":"a/b?c#d e"}`, url: "https://eu.api.example.com/v1/items/a%2Fb%3Fc%23d%20e"},
		{name: "path dot-dot", method: "getItem", args: `{"id":".."}`,
			err: `Argument "id" cannot be "..": a path parameter must be a non-empty segment other than . and ..`},
		{name: "path dot", method: "getItem", args: `{"id":"."}`, err: `Argument "id" cannot be "."`},
		{name: "path empty", method: "getItem", args: `{"id":""}`, err: `Argument "id" cannot be ""`},
		{name: "path encoded dot-dot is one segment", method: "getItem", args: `{"id":"../admin"}`,
			url: "https://eu.api.example.com/v1/items/..%2Fadmin"},
		{name: "form arrays explode", method: "getItem", args: `{"id":"1","fields":["a","b c"]}`,
			url: "https://eu.api.example.com/v1/items/1?fields=a&fields=b+c"},
		{name: "form arrays, no explode", method: "getItem", args: `{"id":"1","csv":[1,2,3]}`,
			url: "https://eu.api.example.com/v1/items/1?csv=1,2,3"},
		{name: "pipes and spaces", method: "getItem", args: `{"id":"1","pipes":["a","b"],"spaces":["c","d"]}`,
			url: "https://eu.api.example.com/v1/items/1?pipes=a|b&spaces=c%20d"},
		{name: "deep object", method: "getItem", args: `{"id":"1","filter":{"b":"2","a":"1&x=y"}}`,
			url: "https://eu.api.example.com/v1/items/1?filter%5Ba%5D=1%26x%3Dy&filter%5Bb%5D=2"},
		{name: "form object explode", method: "getItem", args: `{"id":"1","flat":{"k":"v"}}`,
			url: "https://eu.api.example.com/v1/items/1?k=v"},
		{name: "numbers and booleans as written", method: "getItem", args: `{"id":"1","limit":100,"active":false}`,
			url: "https://eu.api.example.com/v1/items/1?limit=100&active=false"},
		{name: "JSON query parameter", method: "getItem", args: `{"id":"1","where":{"a":[1,2]}}`,
			url: "https://eu.api.example.com/v1/items/1?where=%7B%22a%22%3A%5B1%2C2%5D%7D"},
		{name: "header and cookie", method: "getItem", args: `{"id":"1","X-Trace":"t-1","session":"s 1;x"}`,
			url: "https://eu.api.example.com/v1/items/1", headers: map[string]string{"X-Trace": "t-1", "Cookie": "session=s+1%3Bx"}},
		{name: "header injection", method: "getItem", args: `{"id":"1","X-Trace":"a\r\nX-Evil: 1"}`,
			err: `Argument "X-Trace" cannot be sent as a header: it holds control characters such as CR or LF`},
		{name: "ignored headers are not arguments", method: "getItem", args: `{"id":"1","Host":"evil.example.com"}`,
			err: `Unknown argument "Host": method getItem takes id (path), fields (query), csv (query), pipes (query), spaces (query), filter (query), flat (query), limit (query), active (query), where (query), X-Trace (header), session (cookie)`},
		{name: "missing path parameter", method: "getItem", args: `{}`, err: `Missing required argument "id" (path parameter of getItem)`},
		{name: "null path parameter", method: "getItem", args: `{"id":null}`, err: `Argument "id" does not fit its schema: Value is not nullable`},
		{name: "wrong type", method: "getItem", args: `{"id":"1","limit":"5"}`, err: `Argument "limit" does not fit its schema: value must be an integer`},
		{name: "out of range", method: "getItem", args: `{"id":"1","limit":500}`, err: `Argument "limit" does not fit its schema: number must be at most 100`},
		{name: "nested in a query array", method: "getItem", args: `{"id":"1","fields":[["a"]]}`,
			err: `Argument "fields" does not fit its schema: value must be a string (at /0)`},
		{name: "unknown argument", method: "labels", args: `{"ids":[1],"x":1}`, err: `Unknown argument "x": method labels takes ids (path)`},
		{name: "label style, no value", method: "labels", args: `{"ids":[]}`, err: `Argument "ids" cannot be "."`},
		{name: "label style", method: "labels", args: `{"ids":[3,4,5]}`, url: "https://eu.api.example.com/v1/labels/.3,4,5"},
		{name: "matrix style, exploded object", method: "matrix", args: `{"point":{"x":1,"y":2}}`,
			url: "https://eu.api.example.com/v1/matrix/;x=1;y=2"},
		{name: "body", method: "put_item", args: `{"id":"7","requestBody":{"name":"bolt","qty":3}}`,
			url: "https://eu.api.example.com/v1/items/7", body: `{"name":"bolt","qty":3}`,
			headers: map[string]string{"Content-Type": "application/json"}},
		{name: "body missing", method: "put_item", args: `{"id":"7"}`, err: `Missing required argument "requestBody" (the JSON body of put_item)`},
		{name: "body does not fit", method: "put_item", args: `{"id":"7","requestBody":{"qty":3}}`,
			err: `Argument "requestBody" does not fit its schema: property "name" is missing`},
		{name: "body nested error", method: "put_item", args: `{"id":"7","requestBody":{"name":"x","qty":30}}`,
			err: `Argument "requestBody" does not fit its schema: number must be at most 10 (at /qty)`},
		{name: "optional body absent", method: "search", args: `{}`, url: "https://eu.api.example.com/v1/search"},
		{name: "body to an operation without one", method: "labels", args: `{"ids":[1],"requestBody":{}}`,
			err: `Unknown argument "requestBody"`},
		{name: "numbers keep their text", method: "search", args: `{"requestBody":{"n":12345678901234567890,"f":1.50}}`,
			url: "https://eu.api.example.com/v1/search", body: `{"f":1.50,"n":12345678901234567890}`,
			headers: map[string]string{"Content-Type": "application/json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op, err := d.Operation(tt.method)
			if err != nil {
				t.Fatal(err)
			}
			b, err := op.Bind(args(t, tt.args))
			if tt.err != "" {
				if err == nil || !strings.Contains(quarry.ErrorMessage(err), tt.err) || quarry.ErrorCode(err) != quarry.EINVALID {
					t.Fatalf("Bind = %v, want a 400 saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := b.URL.String(); got != tt.url {
				t.Errorf("URL %s, want %s", got, tt.url)
			}
			for k, v := range tt.headers {
				if got := b.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if len(b.Header) != len(tt.headers) {
				t.Errorf("headers %v, want %v", b.Header, tt.headers)
			}
			if string(b.Body) != tt.body {
				t.Errorf("body %s, want %s", b.Body, tt.body)
			}
		})
	}
	t.Run("unknown method", func(t *testing.T) {
		_, err := d.Operation("getitem")
		if want := `Unknown method "getitem": this tool's methods are getItem, labels, matrix, put_item, search`; quarry.ErrorMessage(err) != want {
			t.Errorf("got %v, want %q", err, want)
		}
	})
}

// TestCompileServers checks the server URLs a run can call.
func TestCompileServers(t *testing.T) {
	def := func(server string) string {
		return `{"openapi":"3.0.3","info":{"title":"S","description":"S","version":"1"},"servers":[` + server + `],
		"paths":{"/p":{"get":{"operationId":"p","summary":"P","responses":{"200":{"description":"OK"}}}}}}`
	}
	for _, tt := range []struct {
		server, url, err string
	}{
		{server: `{"url":"https://api.example.com"}`, url: "https://api.example.com/p"},
		{server: `{"url":"https://api.example.com/base/"}`, url: "https://api.example.com/base/p"},
		{server: `{"url":"http://{host}:{port}/x","variables":{"host":{"default":"h.example.com"},"port":{"default":"8080"}}}`,
			url: "http://h.example.com:8080/x/p"},
		{server: `{"url":"/relative"}`, err: `The tool's server URL "/relative" is not an absolute http:// or https:// URL`},
		{server: `{"url":"ftp://files.example.com"}`, err: `is not an absolute http:// or https:// URL`},
	} {
		t.Run(tt.server, func(t *testing.T) {
			d, err := Compile(context.Background(), []byte(def(tt.server)))
			if err == nil {
				var op *Operation
				op, err = d.Operation("p")
				if err == nil {
					var b *Bound
					if b, err = op.Bind(nil); err == nil && b.URL.String() != tt.url {
						t.Errorf("URL %s, want %s", b.URL, tt.url)
					}
				}
			}
			if tt.err == "" && err != nil {
				t.Fatal(err)
			}
			if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
		})
	}
}

// FuzzBind binds arbitrary arguments to the operations of bindDefinition:
// binding never panics, and a request it makes always goes to the
// definition's server, under its base path, with the path's fixed
// segments in place, headers free of line breaks and a JSON body.
func FuzzBind(f *testing.F) {
	for _, s := range []string{
		`{"id":"42"}`, `{"id":"a/b","fields":["x"],"filter":{"a":"b"}}`, `{"id":"..","limit":1}`,
		`{"id":"1","X-Trace":"a\r\nb","session":"c"}`, `{"ids":[1,2],"point":{"x":1}}`,
		`{"id":"7","requestBody":{"name":"n","qty":1}}`, `{"requestBody":{"q":"x"}}`, `{"id":"%2e%2e"}`,
		`{"id":"x?y#z","csv":[1],"pipes":["|"],"spaces":[" "],"where":{"a":null}}`,
	} {
		for _, m := range []string{"getItem", "put_item", "labels", "matrix", "search"} {
			f.Add(m, s)
		}
	}
	d := compileTest(f, bindDefinition)
	f.Fuzz(func(t *testing.T, method, raw string) {
		op, err := d.Operation(method)
		if err != nil {
			return
		}
		a, err := DecodeArgs([]byte(raw))
		if err != nil {
			return
		}
		b, err := op.Bind(a)
		if err != nil {
			if quarry.ErrorCode(err) != quarry.EINVALID {
				t.Fatalf("Bind failed with %v, want a 400", err)
			}
			return
		}
		if b.URL.Scheme != "https" || b.URL.Host != "eu.api.example.com" || b.URL.User != nil || b.URL.Fragment != "" {
			t.Fatalf("request to %s, want one to https://eu.api.example.com", b.URL)
		}
		segs := strings.Split(b.URL.EscapedPath(), "/")
		want := strings.Split(strings.TrimPrefix(op.path, "/"), "/")
		if len(segs) != 2+len(want) || segs[0] != "" || segs[1] != "v1" {
			t.Fatalf("path %s, want /v1 then %d segments of %s", b.URL.EscapedPath(), len(want), op.path)
		}
		for i, w := range want {
			seg := segs[2+i]
			if !strings.Contains(w, "{") && seg != w {
				t.Fatalf("segment %q of %s, want %q", seg, b.URL.EscapedPath(), w)
			}
			if unescaped, err := url.PathUnescape(seg); err != nil || unescaped == "." || unescaped == ".." || seg == "" {
				t.Fatalf("segment %q of %s", seg, b.URL.EscapedPath())
			}
		}
		for k, vs := range b.Header {
			for _, v := range vs {
				if !validHeaderValue(k) || !validHeaderValue(v) {
					t.Fatalf("header %q: %q", k, v)
				}
			}
		}
		if b.Body != nil && !json.Valid(b.Body) {
			t.Fatalf("body %q is not JSON", b.Body)
		}
	})
}
