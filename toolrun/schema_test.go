package toolrun

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInputSchema checks an operation's input schema, whole: one property
// per parameter and requestBody, the definition's references inlined, a
// schema that refers to itself accepting any value where it recurs,
// OpenAPI 3.0's nullable and exclusive bounds in JSON Schema's words, and
// what JSON Schema does not know left out.
func TestInputSchema(t *testing.T) {
	const def = `{"openapi":"3.0.3","info":{"title":"S","description":"Schemas","version":"1"},
	 "servers":[{"url":"https://s.example.com"}],
	 "components":{"schemas":{
	   "Node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/components/schemas/Node"}}},
	     "x-internal":true,"discriminator":{"propertyName":"name"}},
	   "Price":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":100,"exclusiveMaximum":false,"nullable":true}}},
	 "paths":{"/nodes/{id}":{"put":{"operationId":"putNode","summary":"Put a node",
	   "parameters":[{"name":"id","in":"path","required":true,"description":"The node's id","schema":{"type":"integer"}},
	     {"name":"price","in":"query","schema":{"$ref":"#/components/schemas/Price"}}],
	   "requestBody":{"required":true,"description":"The node","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Node"}}}},
	   "responses":{"200":{"description":"OK"}}}}}}`
	op, err := compileTest(t, def).Operation("putNode")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","required":["id","requestBody"],"properties":{
	  "id":{"type":"integer","description":"The node's id"},
	  "price":{"type":["number","null"],"exclusiveMinimum":0,"maximum":100},
	  "requestBody":{"type":"object","description":"The node","properties":{
	    "name":{"type":"string"},
	    "children":{"type":"array","items":{}}}}}}`
	var got, w any
	if err := json.Unmarshal(op.InputSchema(), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w, got); d != "" {
		t.Errorf("input schema (-want +got):\n%s\n%s", d, op.InputSchema())
	}
}

// TestInputSchemaBudget: schemas that refer to one another many times
// over are inlined up to maxSchemaNodes, then accept any value.
func TestInputSchemaBudget(t *testing.T) {
	// S0 has two properties of S1, which has two of S2…: 2^n paths.
	var schemas []string
	const n = 16
	for i := range n {
		next := `{"type":"string"}`
		if i < n-1 {
			next = fmt.Sprintf(`{"$ref":"#/components/schemas/S%d"}`, i+1)
		}
		schemas = append(schemas, fmt.Sprintf(`"S%d":{"type":"object","properties":{"a":%s,"b":%s}}`, i, next, next))
	}
	def := `{"openapi":"3.0.3","info":{"title":"B","description":"Budget","version":"1"},"servers":[{"url":"https://b.example.com"}],
	 "components":{"schemas":{` + strings.Join(schemas, ",") + `}},
	 "paths":{"/b":{"post":{"operationId":"b","summary":"B","requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}},
	   "responses":{"200":{"description":"OK"}}}}}}`
	op, err := compileTest(t, def).Operation("b")
	if err != nil {
		t.Fatal(err)
	}
	s := string(op.InputSchema())
	if objects := strings.Count(s, `"type":"object"`); objects > maxSchemaNodes+1 || objects < maxSchemaNodes/2 {
		t.Errorf("%d object schemas inlined, want about %d (and the rest {})", objects, maxSchemaNodes)
	}
	if !strings.Contains(s, `{}`) {
		t.Errorf("no schema past the budget accepts any value")
	}
}
