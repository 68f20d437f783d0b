package decode

import (
	"encoding/json"
	"strconv"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/pyrepr"
)

// input returns the value of node i as an Error's Input: what FastAPI
// echoes for the value Python parsed.
func (t *tape) input(i int) any {
	switch n := &t.nodes[i]; n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.b
	case kindString:
		return t.str(i)
	default:
		return json.RawMessage(t.appendPy(nil, i))
	}
}

// appendPy appends node i rendered as Python's json.dumps renders the
// object json.loads made of it: ints canonical, floats as repr, and
// objects with one member per key (first position, last value).
func (t *tape) appendPy(b []byte, i int) []byte {
	n := &t.nodes[i]
	switch n.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		return strconv.AppendBool(b, n.b)
	case kindInt:
		if lit := t.lit(i); lit != "-0" {
			return append(b, lit...)
		}
		return append(b, '0')
	case kindFloat:
		return pyrepr.AppendFloat(b, t.float(i))
	case kindString:
		return quarry.AppendJSONString(b, t.str(i))
	case kindArray:
		b = append(b, '[')
		for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j) {
			if k > 0 {
				b = append(b, ',')
			}
			b = t.appendPy(b, j)
		}
		return append(b, ']')
	default:
		return t.appendPyObject(b, i)
	}
}

// appendPyObject renders an object, resolving duplicate keys as a Python
// dict does.
func (t *tape) appendPyObject(b []byte, i int) []byte {
	n := &t.nodes[i]
	if n.n > 16 {
		return t.appendPyBigObject(b, i)
	}
	b = append(b, '{')
	first := true
	for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j+1) {
		key := t.str(j)
		if t.seenBefore(i, j, key) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = quarry.AppendJSONString(b, key)
		b = append(b, ':')
		b = t.appendPy(b, t.lastMember(j, k, int(n.n), key))
	}
	return append(b, '}')
}

// appendPyBigObject is appendPyObject in linear time, for many members.
func (t *tape) appendPyBigObject(b []byte, i int) []byte {
	n := &t.nodes[i]
	last := make(map[string]int, n.n)
	var order []string
	for k, j := 0, i+1; k < int(n.n); k, j = k+1, t.next(j+1) {
		key := t.str(j)
		if _, seen := last[key]; !seen {
			order = append(order, key)
		}
		last[key] = j + 1
	}
	b = append(b, '{')
	for k, key := range order {
		if k > 0 {
			b = append(b, ',')
		}
		b = quarry.AppendJSONString(b, key)
		b = append(b, ':')
		b = t.appendPy(b, last[key])
	}
	return append(b, '}')
}

// seenBefore reports whether key occurs in object obj before member key
// node j.
func (t *tape) seenBefore(obj, j int, key string) bool {
	for m := obj + 1; m < j; m = t.next(m + 1) {
		if t.str(m) == key {
			return true
		}
	}
	return false
}

// lastMember returns the value node of the last member named key, starting
// from member k (key node j) of n.
func (t *tape) lastMember(j, k, n int, key string) int {
	v := j + 1
	for ; k < n; k, j = k+1, t.next(j+1) {
		if t.str(j) == key {
			v = j + 1
		}
	}
	return v
}
