package tooldef_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/tooldef"
)

// api returns a definition of n operations in the usual shape: each has a
// path parameter, a request body and responses that refer to schemas of
// their own and to schemas, parameters and responses all share.
func api(n int) []byte {
	var paths, schemas []string
	for i := range n {
		paths = append(paths, fmt.Sprintf(`"/items%[1]d/{id}": {"parameters": [{"$ref": "#/components/parameters/Id"}],
			"put": {"operationId": "putItem%[1]d", "summary": "Replace item %[1]d",
				"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item%[1]d"}}}},
				"responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item%[1]d"}}}},
					"404": {"$ref": "#/components/responses/NotFound"}}}}`, i))
		schemas = append(schemas, fmt.Sprintf(`"Item%[1]d": {"type": "object", "required": ["id"], "properties": {
			"id": {"type": "integer"}, "name": {"type": "string", "maxLength": 100},
			"tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
			"owner": {"$ref": "#/components/schemas/User"}, "parent": {"$ref": "#/components/schemas/Item%[2]d"}}}`, i, i/2))
	}
	return []byte(`{"openapi": "3.0.3", "info": {"title": "T", "description": "D", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {` + strings.Join(paths, ",\n") + `},
		"components": {
			"parameters": {"Id": {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}},
			"responses": {"NotFound": {"description": "Not found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
			"schemas": {` + strings.Join(schemas, ",\n") + `,
				"Tag": {"type": "object", "properties": {"name": {"type": "string"}}},
				"User": {"type": "object", "properties": {"id": {"type": "string"}, "email": {"type": "string", "format": "email"}}},
				"Error": {"type": "object", "properties": {"detail": {"type": "string"}}}}}}`)
}

// BenchmarkValidate shows the time Validate takes on definitions of
// growing size: usual ones, which are valid, chains of references, which
// are not, and large schemas referred to by many through $defs, valid up
// to where kin-openapi would take too long.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{100, 200, 400, 800} {
		def := api(n)
		if _, err := tooldef.Validate(context.Background(), def); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("operations=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(def)))
			for b.Loop() {
				tooldef.Validate(context.Background(), def)
			}
		})
	}
	for _, n := range []int{1000, 2000, 4000, 8000} {
		def := RefChain(n, `{"type": "string"}`)
		b.Run(fmt.Sprintf("ref-chain=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(def)))
			for b.Loop() {
				tooldef.Validate(context.Background(), def)
			}
		})
	}
	for _, n := range []int{100, 200, 500, 2000} {
		def := DefsFanOut(n, 4*n)
		b.Run(fmt.Sprintf("defs-fan-out=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(def)))
			for b.Loop() {
				tooldef.Validate(context.Background(), def)
			}
		})
	}
}
