package tooldef

import (
	"strconv"

	"github.com/quarryhq/quarry/internal/pyrepr"
)

// kin-openapi v0.152.0 decides whether a schema is empty (Schema.IsEmpty)
// by looking into its subschemas, one path at a time, without noticing when
// it comes back to a schema it is already looking into. It does so when it
// loads an OpenAPI 3.1 document with keywords next to a $ref. A schema that
// contains itself through subschemas none of which has a keyword like
// "type" makes it recurse until the stack overflows, which kills the
// process (a recover cannot stop that); a few dozen such schemas that each
// refer twice to the next make it take time exponential in their number.
// checkHollowSchemas rejects such documents before kin-openapi sees them.
//
// The check errs on the side of rejecting: it takes every object of the
// document for a schema, and looks through every $ref, whatever the
// OpenAPI version. A schema is solid, and stops the search, only if it has
// one of the keywords that make IsEmpty answer without looking into
// subschemas; the others are hollow. A plain reference (a $ref with no
// subschema next to it) stands for its target; a cycle of plain references
// alone is left to kin-openapi, which reports it as an unresolved
// reference.

// maxEmptinessWork bounds how many schemas Schema.IsEmpty may have to look
// at, from any one schema.
const maxEmptinessWork = 100000

// checkHollowSchemas returns an error if a schema of doc refers back to
// itself through hollow subschemas, or has more than maxEmptinessWork
// paths through them.
func checkHollowSchemas(doc *value) error {
	work := make(map[*value]int) // per hollow schema, the schemas IsEmpty looks at
	var err error
	walk(doc, func(v *value) bool {
		err = weigh(doc, v, work)
		return err == nil
	})
	return err
}

// walk calls f on each object in v, v included, in document order, until f
// returns false. It reports whether f always returned true.
func walk(v *value, f func(*value) bool) bool {
	if v.isObject() && !f(v) {
		return false
	}
	for _, m := range v.members {
		if !walk(m.value, f) {
			return false
		}
	}
	for _, e := range v.elems {
		if !walk(e, f) {
			return false
		}
	}
	return true
}

// weigh records in work how many schemas Schema.IsEmpty looks at, at most,
// when it starts from the schema start and from each hollow schema that
// start reaches. It explores them depth first, and returns an error for a
// schema that refers back to one on the current path, or that costs more
// than maxEmptinessWork.
func weigh(doc, start *value, work map[*value]int) error {
	if _, done := work[start]; done || isSolid(start) || isPlainRef(start) {
		return nil
	}
	type frame struct {
		schema *value
		next   []*value // subschemas left to explore
		work   int      // the work of schema so far
	}
	open := map[*value]bool{start: true}
	stack := []frame{{start, subschemas(doc, start), 1}}
	for {
		top := &stack[len(stack)-1]
		if len(top.next) == 0 {
			if top.work > maxEmptinessWork {
				return invalid(fmtSchemaTooHollow, pyrepr.Quote(top.schema.pointer()), maxEmptinessWork)
			}
			work[top.schema] = top.work
			delete(open, top.schema)
			done := top.work
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return nil
			}
			top = &stack[len(stack)-1]
			top.work = min(top.work+done, maxEmptinessWork+1)
			continue
		}
		s := top.next[0]
		top.next = top.next[1:]
		if open[s] {
			return invalid(fmtSchemaCycle, pyrepr.Quote(s.pointer()))
		}
		if isSolid(s) {
			top.work = min(top.work+1, maxEmptinessWork+1)
			continue
		}
		if w, done := work[s]; done {
			top.work = min(top.work+w, maxEmptinessWork+1)
			continue
		}
		open[s] = true
		stack = append(stack, frame{s, subschemas(doc, s), 1})
	}
}

// subschemas returns the object subschemas of the schema v that
// Schema.IsEmpty looks into, and the target of v's $ref, in document order,
// each plain reference replaced with what it stands for.
func subschemas(doc, v *value) []*value {
	var subs []*value
	add := func(s *value) {
		if s = unalias(doc, s); s.isObject() {
			subs = append(subs, s)
		}
	}
	for _, m := range v.members {
		if m.key == "$ref" {
			budget := maxRefHops
			add(target(doc, v, &budget))
			continue
		}
		for _, s := range appendSubschemas(nil, m, true) {
			add(s)
		}
	}
	return subs
}

// unalias follows plain references from v and returns the first value that
// is not one, or nil if they lead nowhere or round in a cycle.
func unalias(doc, v *value) *value {
	budget := maxRefHops
	for v != nil && isPlainRef(v) {
		v = target(doc, v, &budget)
	}
	return v
}

// isPlainRef reports whether v is a Reference Object without subschemas
// next to its $ref.
func isPlainRef(v *value) bool {
	if r := v.get("$ref"); r == nil || r.kind != kindString {
		return false
	}
	return !hasSubschemaKeyword(v)
}

// isSolid reports whether the schema v has a keyword that makes
// Schema.IsEmpty answer before it looks into any subschema. A $ref with
// subschemas next to it counts as hollow, whatever else is there.
func isSolid(v *value) bool {
	if v.has("$ref") {
		return false
	}
	for _, m := range v.members {
		if solidKeyword(m.key, m.value) {
			return true
		}
	}
	return false
}

// solidKeyword reports whether the keyword key with value v surely makes
// kin-openapi's Schema.IsEmpty false.
func solidKeyword(key string, v *value) bool {
	switch key {
	case "type":
		_, ok := v.text()
		return ok || len(v.array()) > 0
	case "format", "pattern":
		_, ok := v.text()
		return ok
	case "enum", "required":
		return len(v.array()) > 0
	case "uniqueItems", "nullable", "readOnly", "writeOnly", "allowEmptyValue":
		return v.kind == kindTrue
	case "minimum", "maximum", "multipleOf", "maxLength", "maxItems", "maxProperties":
		return v.kind == kindNumber
	case "exclusiveMinimum", "exclusiveMaximum":
		return v.kind == kindNumber || v.kind == kindTrue
	case "minLength", "minItems", "minProperties":
		f, err := strconv.ParseFloat(string(v.raw), 64)
		return v.kind == kindNumber && err == nil && f != 0
	case "const":
		return v.kind != kindNull
	}
	return false
}
