package toolrun

import (
	"encoding/json"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quarryhq/quarry"
)

// The input schema of an operation, for MCP clients: the JSON Schema of
// the arguments a run takes (one property per parameter, by name, and
// quarry.RequestBodyArg for the JSON body), with the definition's schemas
// inlined (MCP input schemas cannot refer to the definition's components).

// maxSchemaNodes bounds the schemas an input schema inlines: a
// definition's schemas may refer to one another many times over, and past
// this many the deeper ones accept any value.
const maxSchemaNodes = 2000

// maxSchemaDepth bounds how deep schemas are inlined; a schema that refers
// to itself accepts any value where it recurs.
const maxSchemaDepth = 24

// InputSchema returns op's input schema, computed once.
func (o *Operation) InputSchema() json.RawMessage {
	o.inputOnce.Do(func() { o.inputSchema = o.buildInputSchema() })
	return o.inputSchema
}

func (o *Operation) buildInputSchema() json.RawMessage {
	budget := maxSchemaNodes
	props := map[string]any{}
	required := []string{}
	for _, p := range o.params {
		var s any = map[string]any{}
		if p.schema != nil {
			s = inlineSchema(p.schema, map[*openapi3.Schema]bool{}, 0, &budget)
		}
		if p.desc != "" {
			if m, ok := s.(*openapi3.Schema); ok && m.Description == "" {
				c := *m
				c.Description = p.desc
				s = &c
			}
		}
		props[p.name] = s
		if p.required && !slices.Contains(required, p.name) {
			required = append(required, p.name)
		}
	}
	if o.body != nil {
		b := inlineSchema(o.body, map[*openapi3.Schema]bool{}, 0, &budget)
		if b.Description == "" && o.bodyDesc != "" {
			b.Description = o.bodyDesc
		}
		props[quarry.RequestBodyArg] = b
		if o.bodyRequired {
			required = append(required, quarry.RequestBodyArg)
		}
	}
	out, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return out
}

// inlineSchema returns a copy of s with every reference replaced by the
// schema it names, OpenAPI 3.0's nullable turned into JSON Schema's
// "null" type, and what JSON Schema does not know (discriminators, XML,
// extensions) left out. A schema met again on its own path, or past the
// depth or the budget of nodes, becomes {} (any value).
func inlineSchema(s *openapi3.Schema, path map[*openapi3.Schema]bool, depth int, budget *int) *openapi3.Schema {
	if s == nil {
		return nil
	}
	if path[s] || depth > maxSchemaDepth || *budget <= 0 {
		return &openapi3.Schema{}
	}
	*budget--
	path[s] = true
	defer delete(path, s)
	c := *s
	c.Extensions, c.Origin, c.Discriminator, c.XML, c.ExternalDocs = nil, nil, nil, nil, nil
	ref := func(r *openapi3.SchemaRef) *openapi3.SchemaRef {
		if r == nil || r.Value == nil {
			return nil
		}
		return &openapi3.SchemaRef{Value: inlineSchema(r.Value, path, depth+1, budget)}
	}
	refs := func(rs openapi3.SchemaRefs) openapi3.SchemaRefs {
		if rs == nil {
			return nil
		}
		out := make(openapi3.SchemaRefs, 0, len(rs))
		for _, r := range rs {
			if x := ref(r); x != nil {
				out = append(out, x)
			}
		}
		return out
	}
	schemas := func(m openapi3.Schemas) openapi3.Schemas {
		if m == nil {
			return nil
		}
		out := make(openapi3.Schemas, len(m))
		for k, r := range m {
			if x := ref(r); x != nil {
				out[k] = x
			}
		}
		return out
	}
	c.OneOf, c.AnyOf, c.AllOf, c.PrefixItems = refs(s.OneOf), refs(s.AnyOf), refs(s.AllOf), refs(s.PrefixItems)
	c.Not, c.Items, c.Contains, c.PropertyNames = ref(s.Not), ref(s.Items), ref(s.Contains), ref(s.PropertyNames)
	c.If, c.Then, c.Else, c.ContentSchema = ref(s.If), ref(s.Then), ref(s.Else), ref(s.ContentSchema)
	c.Properties, c.PatternProperties = schemas(s.Properties), schemas(s.PatternProperties)
	c.DependentSchemas, c.Defs = schemas(s.DependentSchemas), nil
	c.AdditionalProperties.Schema = ref(s.AdditionalProperties.Schema)
	c.UnevaluatedItems.Schema, c.UnevaluatedProperties.Schema = ref(s.UnevaluatedItems.Schema), ref(s.UnevaluatedProperties.Schema)
	c.DynamicRef, c.DynamicAnchor, c.SchemaID, c.Anchor, c.SchemaDialect = "", "", "", "", ""
	// OpenAPI 3.0's boolean exclusive bounds are JSON Schema's numbers.
	if c.ExclusiveMin.Bool != nil {
		if *c.ExclusiveMin.Bool && c.Min != nil {
			c.ExclusiveMin, c.Min = openapi3.ExclusiveBound{Value: c.Min}, nil
		} else {
			c.ExclusiveMin = openapi3.ExclusiveBound{}
		}
	}
	if c.ExclusiveMax.Bool != nil {
		if *c.ExclusiveMax.Bool && c.Max != nil {
			c.ExclusiveMax, c.Max = openapi3.ExclusiveBound{Value: c.Max}, nil
		} else {
			c.ExclusiveMax = openapi3.ExclusiveBound{}
		}
	}
	if c.Nullable && c.Type != nil && len(*c.Type) == 1 {
		t := openapi3.Types{(*c.Type)[0], "null"}
		c.Type = &t
		c.Nullable = false
	}
	return &c
}
