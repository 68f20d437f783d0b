package tooldef_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/tooldef"
)

// RefChain returns a definition whose one operation returns a
// components.schemas S0, where S<i> is a $ref to S<i+1> for i < links and
// S<links> is last.
func RefChain(links int, last string) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi": "3.0.3", "info": {"title": "T", "description": "D", "version": "1"},
		"servers": [{"url": "https://a"}],
		"paths": {"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"description": "OK",
			"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}}},
		"components": {"schemas": {`)
	for i := range links {
		fmt.Fprintf(&b, `"S%d": {"$ref": "#/components/schemas/S%d"}, `, i, i+1)
	}
	fmt.Fprintf(&b, `"S%d": %s}}}`, links, last)
	return []byte(b.String())
}

// fanOut returns a definition with a schema of n properties, each a
// reference to a schema of n properties.
func fanOut(n int) []byte {
	var refs, props []string
	for i := range n {
		refs = append(refs, fmt.Sprintf(`"r%d": {"$ref": "#/components/schemas/X"}`, i))
		props = append(props, fmt.Sprintf(`"p%d": {}`, i))
	}
	return []byte(`{` + header + `, "paths": {"/a": {"get": {"operationId": "a", "summary": "S", "responses": {"200": {"description": "OK",
			"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S"}}}}}}}},
		"components": {"schemas": {"S": {"type": "object", "properties": {` + strings.Join(refs, ", ") + `}},
			"X": {"type": "object", "properties": {` + strings.Join(props, ", ") + `}}}}}`)
}

// sharedResponse returns a definition with n operations that each return
// the same response, whose schema has n properties.
func sharedResponse(n int) []byte {
	var paths, props []string
	for i := range n {
		paths = append(paths, fmt.Sprintf(`"/a%d": {"get": {"operationId": "a%d", "summary": "S", "responses": {"200": {"$ref": "#/components/responses/R"}}}}`, i, i))
		props = append(props, fmt.Sprintf(`"p%d": {"type": "string"}`, i))
	}
	return []byte(`{` + header + `, "paths": {` + strings.Join(paths, ", ") + `},
		"components": {"responses": {"R": {"description": "OK", "content": {"application/json": {"schema": {"type": "object", "properties": {` +
		strings.Join(props, ", ") + `}}}}}}}}`)
}

// DefsFanOut returns an OpenAPI 3.1 definition whose schema H holds, in
// its $defs, a reference to a schema Big of m properties, and k schemas
// C0…C<k-1> that are references to H: kin-openapi's validator checks Big
// again for each of them.
func DefsFanOut(k, m int) []byte {
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
	return []byte(b.String())
}

// nestedChain returns a definition with components S0 to S<n>, each S<i>
// an object whose one property is S<i+1>.
func nestedChain(n int) []byte {
	return []byte(schemaChain("3.0.3", n, `{"type": "object", "properties": {"a": {"$ref": "#/components/schemas/S%[2]d"}}}`))
}

// These definitions made kin-openapi work for seconds to minutes (time
// quadratic in their size); Validate rejects them at once.
func TestValidateBoundedWork(t *testing.T) {
	const atSchema = `'#/paths/~1a/get/responses/200/content/application~1json/schema'`
	tooMuch := "Invalid OpenAPI document: checking it would take more than 2000000 steps, because its parts refer to one another too often"
	for _, tt := range []struct {
		name string
		def  []byte
		want string
	}{
		{"chain of 8000 references", RefChain(8000, `{"type": "string"}`),
			"Invalid OpenAPI document: the reference at " + atSchema + " leads through more than 64 references"},
		{"chain of 8000 references ending in a cycle", RefChain(8000, `{"$ref": "#/components/schemas/S7990"}`),
			"Invalid OpenAPI document: the reference at " + atSchema + " leads through more than 64 references"},
		{"chain of 65 references", RefChain(64, `{"type": "string"}`),
			"Invalid OpenAPI document: the reference at " + atSchema + " leads through more than 64 references"},
		{"a schema referred to by many", fanOut(1000), tooMuch},
		{"a response referred to by many", sharedResponse(800), tooMuch},
		{"a chain of nested schemas", nestedChain(1500), tooMuch},
		// 296 KB; kin-openapi took 22.7 s when $defs was not counted.
		{"a large schema referred to by many through $defs", DefsFanOut(2000, 8000), tooMuch},
		{"the same, smaller", DefsFanOut(500, 2000), tooMuch},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tooldef.Validate(context.Background(), tt.def)
			if quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != tt.want {
				t.Errorf("Validate error = %v, want %q", err, tt.want)
			}
		})
	}
}

// The same shapes, smaller, are valid.
func TestValidateBoundedWorkValid(t *testing.T) {
	for _, tt := range []struct {
		name string
		def  []byte
	}{
		{"chain of 64 references", RefChain(63, `{"type": "string"}`)},
		{"a schema referred to by many", fanOut(500)},
		{"a response referred to by many", sharedResponse(300)},
		{"a chain of nested schemas", nestedChain(500)},
		{"a schema referred to by many through $defs", DefsFanOut(100, 1000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tooldef.Validate(context.Background(), tt.def); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
	// A short chain that ends in a cycle is left to kin-openapi.
	_, err := tooldef.Validate(context.Background(), RefChain(50, `{"$ref": "#/components/schemas/S40"}`))
	want := `Invalid OpenAPI document: invalid components: schema "S0": found unresolved ref: "#/components/schemas/S1"`
	if quarry.ErrorMessage(err) != want {
		t.Errorf("Validate error = %v, want %q", err, want)
	}
}

func TestValidateStopsWithContext(t *testing.T) {
	def, err := os.ReadFile("testdata/valid30.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tooldef.Validate(ctx, def); !errors.Is(err, context.Canceled) {
		t.Errorf("Validate with an ended context: error %v, want %v", err, context.Canceled)
	}
	c := tooldef.NewCache(1<<20, 1)
	if _, err := c.Validate(ctx, def); !errors.Is(err, context.Canceled) {
		t.Errorf("Cache.Validate with an ended context: error %v, want %v", err, context.Canceled)
	}
	if _, err := c.Validate(context.Background(), def); err != nil {
		t.Errorf("Cache.Validate remembered an outcome cut short: %v", err)
	}
}
