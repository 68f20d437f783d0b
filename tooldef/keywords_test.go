package tooldef

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// notSchemaKeywords are the fields of openapi3.Schema that hold schemas
// somewhere inside but are not keywords of schemaKeywords, and why.
var notSchemaKeywords = map[string]string{
	// Its mapping's references are strings, which the loader resolves only
	// in external documents (which are refused) and the validator never
	// follows.
	"discriminator": "mapping references are not followed",
}

// TestSchemaKeywords holds schemaKeywords to kin-openapi's Schema: every
// field that holds schemas is a keyword of the table (or explained in
// notSchemaKeywords), with the shape of its Go type, and Schema.IsEmpty
// looks into it exactly when the table says so.
func TestSchemaKeywords(t *testing.T) {
	schemaType := reflect.TypeFor[openapi3.Schema]()
	fields := map[string]bool{}
	for f := range schemaType.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !holdsSchemas(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		fields[name] = true
		if _, ok := notSchemaKeywords[name]; ok {
			continue
		}
		k, ok := schemaKeywords[name]
		if !ok {
			t.Errorf("openapi3.Schema.%s (%q, %v) holds schemas, but is not in schemaKeywords", f.Name, name, f.Type)
			continue
		}
		if want := shapeOf(f.Type); k.shape != want {
			t.Errorf("schemaKeywords[%q].shape = %d, want %d (%v)", name, k.shape, want, f.Type)
		}
		if got := isEmptyWithEmpty(t, name, k.shape); got != k.emptiness {
			t.Errorf("Schema.IsEmpty of {%q: <empty schemas>} = %t, but schemaKeywords[%q].emptiness = %t", name, got, name, k.emptiness)
		}
	}
	for name := range schemaKeywords {
		if !fields[name] {
			t.Errorf("schemaKeywords has %q, which no field of openapi3.Schema that holds schemas has", name)
		}
	}
	for name := range notSchemaKeywords {
		if !fields[name] {
			t.Errorf("notSchemaKeywords has %q, which no field of openapi3.Schema that holds schemas has", name)
		}
	}
}

// holdsSchemas reports whether a value of type t may hold a Schema.
func holdsSchemas(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == reflect.TypeFor[openapi3.Schema]() || t == reflect.TypeFor[openapi3.SchemaRef]() {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsSchemas(t.Elem(), seen)
	case reflect.Map:
		return holdsSchemas(t.Key(), seen) || holdsSchemas(t.Elem(), seen)
	case reflect.Struct:
		for f := range t.Fields() {
			if holdsSchemas(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// shapeOf returns the shape of a field of type t.
func shapeOf(t reflect.Type) keywordShape {
	switch t {
	case reflect.TypeFor[*openapi3.SchemaRef](), reflect.TypeFor[openapi3.BoolSchema]():
		return oneSchema
	case reflect.TypeFor[openapi3.SchemaRefs]():
		return schemaList
	case reflect.TypeFor[openapi3.Schemas]():
		return schemaMap
	}
	return 0
}

// isEmptyWithEmpty returns what Schema.IsEmpty says of a schema with only
// the keyword name, holding empty schemas in the given shape: true if
// IsEmpty looks into them, false if the keyword alone makes it non-empty.
func isEmptyWithEmpty(t *testing.T, name string, shape keywordShape) bool {
	t.Helper()
	inner := map[keywordShape]string{oneSchema: `{}`, schemaList: `[{}]`, schemaMap: `{"x": {}}`}[shape]
	var s, solid openapi3.Schema
	if err := json.Unmarshal([]byte(`{"`+name+`": `+inner+`}`), &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// The same with a subschema that is not empty: IsEmpty must see it, or
	// the keyword does not hold what the test thinks.
	inner = strings.ReplaceAll(inner, `{}`, `{"type": "string"}`)
	if err := json.Unmarshal([]byte(`{"`+name+`": `+inner+`}`), &solid); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if solid.IsEmpty() {
		t.Errorf("Schema.IsEmpty of {%q: %s} = true", name, inner)
	}
	return s.IsEmpty()
}
