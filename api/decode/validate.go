package decode

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// pydantic's messages.
const (
	msgMissing   = "Field required"
	msgString    = "Input should be a valid string"
	msgBool      = "Input should be a valid boolean"
	msgBoolParse = "Input should be a valid boolean, unable to interpret input"
	msgDict      = "Input should be a valid dictionary"
	msgList      = "Input should be a valid list"
	msgSet       = "Input should be a valid set"
	msgModel     = "Input should be a valid dictionary or object to extract fields from"
)

// ModelChecker is a request model with a check of the whole model, once
// its fields are valid: pydantic's model_validator(mode="after") that
// raises ValueError. CheckModel returns the error's message, or "".
type ModelChecker interface {
	CheckModel() string
}

// state collects errors while a request is validated; loc is the location
// of the value being validated.
type state struct {
	errs Errors
	loc  []any
}

// add records an error about node i of t.
func (st *state) add(t *tape, i int, typ, msg string, ctx map[string]any) {
	var input any
	if t != nil {
		input = t.input(i)
	}
	st.addInput(input, typ, msg, ctx)
}

// addInput records an error about a value already rendered as input.
func (st *state) addInput(input any, typ, msg string, ctx map[string]any) {
	loc := make([]any, len(st.loc))
	copy(loc, st.loc)
	st.errs = append(st.errs, Error{Type: typ, Loc: loc, Msg: msg, Input: input, Ctx: ctx})
}

func (st *state) push(l any) { st.loc = append(st.loc, l) }
func (st *state) pop()       { st.loc = st.loc[:len(st.loc)-1] }

// decodePath validates the path parameters.
func (p *plan) decodePath(st *state, r *http.Request, v reflect.Value) {
	for k := range p.path {
		fp := &p.path[k]
		st.loc = append(st.loc[:0], "path")
		st.validateField(fp, stringTape(replaceInvalid(r.PathValue(fp.name))), 0, v.Field(fp.index))
	}
}

// decodeQuery validates the query parameters as FastAPI does: a list
// collects every value, anything else takes the last. A required
// parameter that is absent is missing, with the query model's parameters
// that were sent as input.
func (p *plan) decodeQuery(st *state, r *http.Request, v reflect.Value) {
	if len(p.query) == 0 {
		return
	}
	params := parseQuery(r.URL.RawQuery)
	var input any // the query model's input, rendered once for all missing parameters
	for k := range p.query {
		fp := &p.query[k]
		st.loc = append(st.loc[:0], "query")
		var vals []string
		for _, kv := range params {
			if kv[0] == fp.name {
				vals = append(vals, kv[1])
			}
		}
		dst := v.Field(fp.index)
		switch {
		case len(vals) == 0 && fp.required:
			if input == nil {
				input = p.queryInput(params)
			}
			st.push(fp.loc)
			st.addInput(input, "missing", msgMissing, nil)
			st.pop()
		case len(vals) == 0:
			setAbsent(fp, dst)
		case fp.typ.kind == typeList:
			st.validateField(fp, listTape(vals), 0, dst)
		default:
			st.validateField(fp, stringTape(vals[len(vals)-1]), 0, dst)
		}
	}
}

// queryInput renders the parameters of the query model that params holds,
// as pydantic receives them: an object of their values in the model's
// order, a list collecting every value and anything else the last one.
func (p *plan) queryInput(params [][2]string) json.RawMessage {
	b := []byte{'{'}
	for k := range p.query {
		fp := &p.query[k]
		var vals []string
		for _, kv := range params {
			if kv[0] == fp.name {
				vals = append(vals, kv[1])
			}
		}
		if len(vals) == 0 {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(quarry.AppendJSONString(b, fp.name), ':')
		if fp.typ.kind != typeList {
			b = quarry.AppendJSONString(b, vals[len(vals)-1])
			continue
		}
		b = append(b, '[')
		for i, val := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = quarry.AppendJSONString(b, val)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// listTape returns a tape holding an array of the strings vals.
func listTape(vals []string) *tape {
	t := &tape{nodes: make([]node, len(vals)+1), strs: vals}
	t.nodes[0] = node{kind: kindArray, esc: -1, n: int32(len(vals)), next: int32(len(vals) + 1)}
	for i := range vals {
		t.nodes[i+1] = node{kind: kindString, esc: int32(i), next: int32(i + 2)}
	}
	return t
}

// decodeForm validates the form fields, each on its own as FastAPI does:
// the last value of a field counts, and an absent or empty one is missing
// (or takes its default).
func (p *plan) decodeForm(st *state, pairs [][2]string, v reflect.Value) {
	for k := range p.form {
		fp := &p.form[k]
		st.loc = append(st.loc[:0], "body")
		val, found := "", false
		for _, kv := range pairs {
			if kv[0] == fp.name {
				val, found = kv[1], true
			}
		}
		dst := v.Field(fp.index)
		switch {
		case (!found || val == "") && fp.required:
			st.push(fp.loc)
			st.addInput(nil, "missing", msgMissing, nil)
			st.pop()
		case !found || val == "":
			setAbsent(fp, dst)
		default:
			st.validateField(fp, stringTape(val), 0, dst)
		}
	}
}

// decodeBody validates the body, if the plan has one: absent (or null) is
// missing.
func (p *plan) decodeBody(st *state, t *tape, v reflect.Value) {
	if p.body == nil {
		return
	}
	st.loc = append(st.loc[:0], "body")
	if t == nil {
		st.add(nil, 0, "missing", msgMissing, nil)
		return
	}
	st.validate(p.body.typ, t, 0, v.Field(p.body.index))
}

// setAbsent stores the value of a field that was not sent.
func setAbsent(fp *fieldPlan, dst reflect.Value) {
	switch {
	case fp.def.IsValid() && fp.def.Kind() == reflect.Slice:
		s := reflect.MakeSlice(fp.def.Type(), fp.def.Len(), fp.def.Len())
		reflect.Copy(s, fp.def)
		dst.Set(s)
	case fp.def.IsValid():
		dst.Set(fp.def)
	default:
		dst.SetZero()
	}
}

// validateField validates node i as the value of field fp.
func (st *state) validateField(fp *fieldPlan, t *tape, i int, dst reflect.Value) {
	st.push(fp.loc)
	defer st.pop()
	if !fp.optional {
		st.validate(fp.typ, t, i, dst)
		return
	}
	dst.SetZero()
	dst.Field(0).SetBool(true)
	if t.nodes[i].kind == kindNull {
		dst.Field(1).SetBool(true)
		return
	}
	st.validate(fp.typ, t, i, dst.Field(2))
}

// validate validates node i against tp, storing the result in dst.
func (st *state) validate(tp *typePlan, t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	switch tp.kind {
	case typeString:
		if n.kind != kindString {
			st.add(t, i, "string_type", msgString, nil)
			return
		}
		s := t.str(i)
		if n := utf8.RuneCountInString(s); tp.minLen >= 0 && n < tp.minLen {
			st.add(t, i, "string_too_short", "String should have at least "+plural(tp.minLen, "character"), map[string]any{"min_length": tp.minLen})
			return
		} else if tp.maxLen >= 0 && n > tp.maxLen {
			st.add(t, i, "string_too_long", "String should have at most "+plural(tp.maxLen, "character"), map[string]any{"max_length": tp.maxLen})
			return
		}
		if tp.pattern != nil && !tp.pattern.MatchString(s) {
			pat := tp.pattern.String()
			st.add(t, i, "string_pattern_mismatch", "String should match pattern '"+pat+"'", map[string]any{"pattern": pat})
			return
		}
		dst.SetString(s)
	case typeBool:
		st.validateBool(t, i, dst)
	case typeInt:
		st.validateInt(tp, t, i, dst)
	case typeFloat:
		st.validateFloat(t, i, dst)
	case typeEnum:
		st.validateEnum(tp, t, i, dst)
	case typeRaw:
		if n.kind != kindObject {
			st.add(t, i, "dict_type", msgDict, nil)
			return
		}
		dst.SetBytes([]byte(t.lit(i)))
	case typeTime:
		st.validateTime(t, i, dst)
	case typeUUID:
		st.validateUUID(t, i, dst)
	case typeList:
		st.validateList(tp, t, i, dst)
	case typeMap:
		st.validateMap(tp, t, i, dst)
	default:
		st.validateModel(tp.model, t, i, dst)
	}
}

// plural renders n things as pydantic does: "1 character", "2 characters".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// validateEnum accepts exactly one of the enumeration's values.
func (st *state) validateEnum(tp *typePlan, t *tape, i int, dst reflect.Value) {
	if t.nodes[i].kind == kindString {
		if s := t.str(i); tp.values[s] {
			dst.SetString(s)
			return
		}
	}
	st.add(t, i, "enum", "Input should be "+tp.expected, map[string]any{"expected": tp.expected})
}

// validateBool is pydantic's lax bool: bools, the ints 0 and 1 (also as
// integral floats) and the words of strAsBool.
func (st *state) validateBool(t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	var b, ok, parsing bool
	switch n.kind {
	case kindBool:
		b, ok = n.b, true
	case kindInt:
		if v, err := strconv.ParseInt(t.lit(i), 10, 64); err == nil {
			b, ok, parsing = v == 1, v == 0 || v == 1, true
		}
	case kindFloat:
		if v, code := floatAsInt(t.float(i)); code == "" {
			b, ok, parsing = v == 1, v == 0 || v == 1, true
		}
	case kindString:
		b, ok = strAsBool(t.str(i))
		parsing = true
	}
	switch {
	case ok:
		dst.SetBool(b)
	case parsing:
		st.add(t, i, "bool_parsing", msgBoolParse, nil)
	default:
		st.add(t, i, "bool_type", msgBool, nil)
	}
}

// validateFloat is pydantic's lax float: numbers, bools, and strings
// Python's float() reads (spaces around, underscores between digits,
// inf and nan).
func (st *state) validateFloat(t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	switch n.kind {
	case kindBool:
		if n.b {
			dst.SetFloat(1)
		} else {
			dst.SetFloat(0)
		}
	case kindInt, kindFloat:
		dst.SetFloat(t.float(i))
	case kindString:
		v, ok := pythonFloat(t.str(i))
		if !ok {
			st.add(t, i, "float_parsing", "Input should be a valid number, unable to parse string as a number", nil)
			return
		}
		dst.SetFloat(v)
	default:
		st.add(t, i, "float_type", "Input should be a valid number", nil)
	}
}

// pythonFloat reads s as Python's float() does.
func pythonFloat(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' && (i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1])) {
			return 0, false
		}
		if c == 'x' || c == 'X' || c == 'p' || c == 'P' {
			return 0, false // Go's hexadecimal floats are not Python's.
		}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// strAsBool is pydantic's str_as_bool: exact words, ASCII case folded.
func strAsBool(s string) (bool, bool) {
	if s == "0" || s == "1" {
		return s == "1", true
	}
	if len(s) > 5 {
		return false, false
	}
	switch asciiLower(s) {
	case "f", "n", "no", "off", "false":
		return false, true
	case "t", "y", "on", "yes", "true":
		return true, true
	}
	return false, false
}

// validateInt is pydantic's lax int, then the plan's ge and le bounds.
func (st *state) validateInt(tp *typePlan, t *tape, i int, dst reflect.Value) {
	v, sign, code := t.lookInt(i)
	if code != "" {
		st.add(t, i, code, intMessages[code], nil)
		return
	}
	switch {
	case sign < 0 || sign == 0 && v < tp.ge:
		st.add(t, i, "greater_than_equal", "Input should be greater than or equal to "+strconv.FormatInt(tp.ge, 10),
			map[string]any{"ge": tp.ge})
	case sign > 0 || v > tp.le:
		st.add(t, i, "less_than_equal", "Input should be less than or equal to "+strconv.FormatInt(tp.le, 10),
			map[string]any{"le": tp.le})
	default:
		dst.SetInt(v)
	}
}

// validateList validates a list and each of its items.
func (st *state) validateList(tp *typePlan, t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	if n.kind != kindArray {
		if tp.set {
			st.add(t, i, "set_type", msgSet, nil)
			return
		}
		st.add(t, i, "list_type", msgList, nil)
		return
	}
	if tp.set && tp.maxLen >= 0 {
		st.validateBoundedSet(tp, t, i, dst)
		return
	}
	if tp.maxLen >= 0 && int(n.n) > tp.maxLen {
		// pydantic counts a list's items before it validates them: one
		// error, whatever the items.
		st.add(t, i, "too_long", "List should have at most "+plural(tp.maxLen, "item")+" after validation, not "+strconv.Itoa(int(n.n)),
			map[string]any{"field_type": "List", "max_length": tp.maxLen, "actual_length": int(n.n)})
		return
	}
	s := reflect.MakeSlice(tp.rtype, int(n.n), int(n.n))
	for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j) {
		st.push(k)
		st.validate(tp.elem, t, j, s.Index(k))
		st.pop()
	}
	if tp.set && s.Type().Elem().Comparable() {
		// A set keeps each item once: the first, in the order sent.
		seen := make(map[any]bool, s.Len())
		u := reflect.MakeSlice(tp.rtype, 0, s.Len())
		for k := 0; k < s.Len(); k++ {
			if v := s.Index(k).Interface(); !seen[v] {
				seen[v] = true
				u = reflect.Append(u, s.Index(k))
			}
		}
		s = u
	}
	dst.Set(s)
}

// validateBoundedSet validates a set with a max_length (node i, an
// array) as pydantic does: its items in order, each valid one kept once,
// until one more than the bound is kept; then the set is too long, which
// is its one error (the items' errors found so far are dropped), and
// pydantic does not say how long it is.
func (st *state) validateBoundedSet(tp *typePlan, t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	errs := len(st.errs)
	s := reflect.MakeSlice(tp.rtype, 0, min(int(n.n), tp.maxLen))
	seen := make(map[any]bool, min(int(n.n), tp.maxLen))
	v := reflect.New(tp.rtype.Elem()).Elem()
	for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j) {
		before := len(st.errs)
		v.SetZero()
		st.push(k)
		st.validate(tp.elem, t, j, v)
		st.pop()
		if len(st.errs) > before || seen[v.Interface()] {
			continue
		}
		if len(seen) == tp.maxLen {
			st.errs = st.errs[:errs]
			st.add(t, i, "too_long", "Set should have at most "+plural(tp.maxLen, "item")+" after validation, not more",
				map[string]any{"field_type": "Set", "max_length": tp.maxLen, "actual_length": nil})
			return
		}
		seen[v.Interface()] = true
		s = reflect.Append(s, v)
	}
	dst.Set(s)
}

// validateMap validates an object as a dict[K, V]: each key (its errors
// located at the key, then "[key]") and then its value (located at the
// key), in the order the keys first appear, the last of duplicate keys
// winning, as in a Python dict.
func (st *state) validateMap(tp *typePlan, t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	if n.kind != kindObject {
		st.add(t, i, "dict_type", msgDict, nil)
		return
	}
	last := make(map[string]int, n.n)
	var order []int // the key node of each key's first member
	for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j+1) {
		key := t.str(j)
		if _, seen := last[key]; !seen {
			order = append(order, j)
		}
		last[key] = j + 1
	}
	m := reflect.MakeMapWithSize(tp.rtype, len(order))
	for _, j := range order {
		key := t.str(j)
		errs := len(st.errs)
		kv, vv := reflect.New(tp.rtype.Key()).Elem(), reflect.New(tp.rtype.Elem()).Elem()
		st.push(key)
		st.push("[key]")
		st.validate(tp.key, t, j, kv)
		st.pop()
		st.validate(tp.elem, t, last[key], vv)
		st.pop()
		if len(st.errs) == errs {
			m.SetMapIndex(kv, vv)
		}
	}
	dst.Set(m)
}

// validateModel validates an object against a model: each field in
// declaration order, the last of duplicate keys winning, unknown keys
// ignored.
func (st *state) validateModel(mp *modelPlan, t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	if n.kind != kindObject {
		if mp.dataclass != "" {
			st.add(t, i, "dataclass_type", "Input should be a dictionary or an instance of "+mp.dataclass,
				map[string]any{"class_name": mp.dataclass})
			return
		}
		st.add(t, i, "model_attributes_type", msgModel, nil)
		return
	}
	var small [16]int
	vals := small[:0]
	if len(mp.fields) > len(small) {
		vals = make([]int, 0, len(mp.fields))
	}
	for range mp.fields {
		vals = append(vals, -1)
	}
	for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j+1) {
		key := t.str(j)
		for f := range mp.fields {
			if mp.fields[f].name == key {
				vals[f] = j + 1 // the last occurrence wins, as in a dict
				break
			}
		}
	}
	before := len(st.errs)
	defer func() {
		// pydantic's model_validator(mode="after") runs once every field
		// validated: its ValueError is a value_error of the model.
		if !dst.CanAddr() || len(st.errs) != before {
			return
		}
		if c, ok := dst.Addr().Interface().(ModelChecker); ok {
			if msg := c.CheckModel(); msg != "" {
				st.add(t, i, "value_error", "Value error, "+msg, map[string]any{"error": map[string]any{}})
			}
		}
	}()
	var input any // the object, rendered once for all missing fields
	for f := range mp.fields {
		fp := &mp.fields[f]
		fv := dst.Field(fp.index)
		switch {
		case vals[f] >= 0:
			st.validateField(fp, t, vals[f], fv)
		case fp.required:
			if input == nil {
				input = t.input(i)
			}
			st.push(fp.loc)
			st.addInput(input, "missing", msgMissing, nil)
			st.pop()
		default:
			setAbsent(fp, fv)
		}
	}
}
