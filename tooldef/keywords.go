package tooldef

// The keywords of a Schema Object whose values are schemas, as
// kin-openapi v0.152.0's openapi3.Schema has them. Its loader resolves the
// references in every one of them and its validator checks every one, so
// checkWork must count them all; its Schema.IsEmpty looks into all but
// $defs (a schema with $defs is not empty, whatever they hold), so
// checkHollowSchemas must follow only those. TestSchemaKeywords compares
// this table with openapi3.Schema's fields, so that a keyword kin-openapi
// adds cannot be missed.

// A keywordShape says how a keyword holds its subschemas.
type keywordShape uint8

const (
	oneSchema  keywordShape = iota + 1 // The value is a schema.
	schemaList                         // A list of schemas.
	schemaMap                          // An object whose values are schemas.
)

// A schemaKeyword describes a keyword whose value holds schemas.
type schemaKeyword struct {
	shape     keywordShape
	emptiness bool // Schema.IsEmpty looks into its subschemas.
}

// schemaKeywords is the table of the keywords whose values hold schemas.
// It is never changed.
var schemaKeywords = map[string]schemaKeyword{
	"not":                   {oneSchema, true},
	"items":                 {oneSchema, true},
	"additionalProperties":  {oneSchema, true},
	"contains":              {oneSchema, true},
	"propertyNames":         {oneSchema, true},
	"unevaluatedItems":      {oneSchema, true},
	"unevaluatedProperties": {oneSchema, true},
	"if":                    {oneSchema, true},
	"then":                  {oneSchema, true},
	"else":                  {oneSchema, true},
	"contentSchema":         {oneSchema, true},
	"prefixItems":           {schemaList, true},
	"oneOf":                 {schemaList, true},
	"anyOf":                 {schemaList, true},
	"allOf":                 {schemaList, true},
	"properties":            {schemaMap, true},
	"patternProperties":     {schemaMap, true},
	"dependentSchemas":      {schemaMap, true},
	"$defs":                 {schemaMap, false},
}

// appendSubschemas appends to dst the values that the member m of a
// schema holds as schemas, if its key is one of schemaKeywords (and one
// Schema.IsEmpty looks into, if emptiness), in document order, and returns
// the extended slice. Values that are not objects (such as
// "additionalProperties": false) are appended too: callers skip them.
func appendSubschemas(dst []*value, m member, emptiness bool) []*value {
	k, ok := schemaKeywords[m.key]
	if !ok || (emptiness && !k.emptiness) {
		return dst
	}
	switch k.shape {
	case oneSchema:
		dst = append(dst, m.value)
	case schemaList:
		dst = append(dst, m.value.array()...)
	case schemaMap:
		for _, p := range m.value.object() {
			dst = append(dst, p.value)
		}
	}
	return dst
}

// hasSubschemaKeyword reports whether the schema v has a keyword of
// schemaKeywords.
func hasSubschemaKeyword(v *value) bool {
	for _, m := range v.members {
		if _, ok := schemaKeywords[m.key]; ok {
			return true
		}
	}
	return false
}
