package tooldef

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
)

const (
	// maxDepth is the deepest nesting of objects and arrays that parse
	// accepts, the same as encoding/json's.
	maxDepth = 10000
	// maxRefHops bounds how many references are followed to resolve one,
	// so that a cycle of references ends.
	maxRefHops = 64
)

// The kinds of JSON value.
const (
	kindObject = '{'
	kindArray  = '['
	kindString = '"'
	kindNumber = '0'
	kindTrue   = 't'
	kindFalse  = 'f'
	kindNull   = 'n'
)

// A value is a JSON value of a definition, parsed once, with its text.
//
// An object keeps its keys in document order. A key written twice appears
// once, at its first position, with its last value: the way Python's json
// module, and so Onyx, reads such an object.
//
// The methods of value accept a nil *value, which stands for an absent one.
type value struct {
	raw     json.RawMessage // the value as written
	kind    byte            // one of the kind constants
	str     string          // the value of a string
	members []member        // the members of an object
	index   map[string]int  // the position of each key in members
	elems   []*value        // the elements of an array
	parent  *value          // the object or array that holds the value
	name    string          // the key or index of the value in parent
	weight  int             // the work of walking v (see checkWork)
}

// A member is one key of a JSON object and its value.
type member struct {
	key   string
	value *value
}

// parse parses the JSON text data.
func parse(data []byte) (*value, error) {
	p := parser{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	p.dec.UseNumber()
	v, err := p.value(nil, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return v, nil
}

// A parser builds values from the tokens of a JSON text.
type parser struct {
	dec  *json.Decoder
	data []byte
}

// value parses the next value, which parent holds under name.
func (p *parser) value(parent *value, name string, depth int) (*value, error) {
	start := p.start()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	v := &value{parent: parent, name: name, weight: 1}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, errors.New("invalid JSON: nested too deeply")
		}
		if t == '{' {
			err = p.object(v, depth+1)
		} else {
			err = p.array(v, depth+1)
		}
		if err != nil {
			return nil, err
		}
	case string:
		v.kind, v.str = kindString, t
	case json.Number:
		v.kind = kindNumber
	case bool:
		v.kind = kindFalse
		if t {
			v.kind = kindTrue
		}
	case nil:
		v.kind = kindNull
	}
	v.raw = p.data[start:p.dec.InputOffset()]
	return v, nil
}

// start returns the offset of the next value: the decoder stands after the
// previous token, before any separator and space.
func (p *parser) start() int {
	i := int(p.dec.InputOffset())
	for i < len(p.data) && strings.IndexByte(" \t\r\n:,", p.data[i]) >= 0 {
		i++
	}
	return i
}

// object parses the members of an object into v, up to its closing brace.
func (p *parser) object(v *value, depth int) error {
	v.kind = kindObject
	v.weight = objectWeight
	v.index = make(map[string]int)
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		m, err := p.value(v, key, depth)
		if err != nil {
			return err
		}
		v.weight += m.weight
		if i, dup := v.index[key]; dup {
			v.weight -= v.members[i].value.weight
			v.members[i].value = m
			continue
		}
		v.index[key] = len(v.members)
		v.members = append(v.members, member{key, m})
	}
	_, err := p.dec.Token()
	return err
}

// array parses the elements of an array into v, up to its closing bracket.
func (p *parser) array(v *value, depth int) error {
	v.kind = kindArray
	for p.dec.More() {
		e, err := p.value(v, strconv.Itoa(len(v.elems)), depth)
		if err != nil {
			return err
		}
		v.weight += e.weight
		v.elems = append(v.elems, e)
	}
	_, err := p.dec.Token()
	return err
}

// isObject reports whether v is an object.
func (v *value) isObject() bool { return v != nil && v.kind == kindObject }

// has reports whether v is an object with the given key.
func (v *value) has(key string) bool { return v.get(key) != nil }

// get returns the value of key in the object v, or nil.
func (v *value) get(key string) *value {
	if !v.isObject() {
		return nil
	}
	i, ok := v.index[key]
	if !ok {
		return nil
	}
	return v.members[i].value
}

// array returns the elements of v if v is an array, or nil.
func (v *value) array() []*value {
	if v == nil || v.kind != kindArray {
		return nil
	}
	return v.elems
}

// object returns the members of v if v is an object, or nil.
func (v *value) object() []member {
	if !v.isObject() {
		return nil
	}
	return v.members
}

// text returns v if it is a non-empty string.
func (v *value) text() (string, bool) {
	if v == nil || v.kind != kindString || v.str == "" {
		return "", false
	}
	return v.str, true
}

// pointer returns the JSON pointer of v in its document, as a URI fragment
// such as "#/components/schemas/Pet".
func (v *value) pointer() string {
	var tokens []string
	for ; v.parent != nil; v = v.parent {
		tokens = append(tokens, strings.NewReplacer("~", "~0", "/", "~1").Replace(v.name))
	}
	var b strings.Builder
	b.WriteByte('#')
	for i := len(tokens) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(tokens[i])
	}
	return b.String()
}

// target returns what v refers to if v is a Reference Object (an object
// with a string "$ref"), and v itself otherwise. It returns nil for a
// reference outside root or to nothing, and once budget references have
// been followed, which ends any cycle of references.
func target(root, v *value, budget *int) *value {
	r := v.get("$ref")
	if r == nil || r.kind != kindString {
		return v
	}
	if *budget <= 0 {
		return nil
	}
	*budget--
	return resolve(root, r.str, budget)
}

// deref follows the references from v and returns the value they end at, or
// nil if they lead outside root, to nothing, or round in a cycle.
func deref(root, v *value) *value {
	budget := maxRefHops
	for v != nil {
		next := target(root, v, &budget)
		if next == v {
			return v
		}
		v = next
	}
	return nil
}

// resolve returns the value that the internal reference ref (such as
// "#/components/parameters/id") names in root, or nil. Like kin-openapi, it
// looks through a reference met on the way for a key its object lacks; each
// reference followed uses up one of budget.
func resolve(root *value, ref string, budget *int) *value {
	fragment, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	fragment, err := url.PathUnescape(fragment)
	if err != nil {
		return nil
	}
	if fragment == "" {
		return root
	}
	tokens, ok := strings.CutPrefix(fragment, "/")
	if !ok {
		return nil
	}
	v := root
	for _, tok := range strings.Split(tokens, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		next := step(v, tok)
		for next == nil && v.has("$ref") {
			if v = target(root, v, budget); v == nil {
				return nil
			}
			next = step(v, tok)
		}
		if next == nil {
			return nil
		}
		v = next
	}
	return v
}

// step returns the member named tok of the object v, or the element at
// index tok of the array v, or nil.
func step(v *value, tok string) *value {
	if v == nil {
		return nil
	}
	switch v.kind {
	case kindObject:
		if m := v.get(tok); m != nil {
			return m
		}
		// kin-openapi decodes its fixed fields with encoding/json, which
		// takes a key that differs only in case ("Components") for the
		// field: such a key is looked through too, so that what kin-openapi
		// resolves is what the checks here see.
		for _, m := range v.members {
			if strings.EqualFold(m.key, tok) {
				return m.value
			}
		}
		return nil
	case kindArray:
		if tok == "" || strings.Trim(tok, "0123456789") != "" || (len(tok) > 1 && tok[0] == '0') {
			return nil
		}
		i, err := strconv.Atoi(tok)
		if err != nil || i >= len(v.elems) {
			return nil
		}
		return v.elems[i]
	}
	return nil
}
