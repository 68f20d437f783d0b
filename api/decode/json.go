package decode

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the type of a parsed JSON value.
type kind uint8

// The kinds of JSON values.
const (
	kindNull kind = iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindArray
	kindObject
)

// node is one value of a tape. Arrays are followed by their elements and
// objects by their members, each a string key node then the value. Nodes
// hold no pointers, so that a tape is cheap to build.
type node struct {
	kind  kind
	b     bool  // the value of a bool
	esc   int32 // a string's index in tape.strs when not a slice of text, else -1
	start int32 // byte offsets of the value's text
	end   int32
	next  int32 // index of the node after this value's subtree
	n     int32 // number of elements or members
}

// tape is a parsed JSON text: a flat, pre-order list of nodes.
type tape struct {
	text  string
	nodes []node
	strs  []string // decoded strings that are not slices of text
}

// str returns the value of string node i.
func (t *tape) str(i int) string {
	n := &t.nodes[i]
	if n.esc >= 0 {
		return t.strs[n.esc]
	}
	return t.text[n.start+1 : n.end-1]
}

// next returns the index of the node after node i's subtree.
func (t *tape) next(i int) int { return int(t.nodes[i].next) }

// lit returns the literal text of node i.
func (t *tape) lit(i int) string {
	n := &t.nodes[i]
	return t.text[n.start:n.end]
}

// float returns the value of float node i.
func (t *tape) float(i int) float64 {
	f, _ := strconv.ParseFloat(t.lit(i), 64)
	return f
}

// stringTape returns a tape holding the single string s.
func stringTape(s string) *tape {
	return &tape{nodes: []node{{kind: kindString, next: 1}}, strs: []string{s}}
}

// stringStop marks the bytes that end a run of plain string characters:
// the quote, the backslash and the control characters.
var stringStop = [256]bool{
	0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true,
	10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true, 18: true, 19: true,
	20: true, 21: true, 22: true, 23: true, 24: true, 25: true, 26: true, 27: true, 28: true, 29: true,
	30: true, 31: true, '"': true, '\\': true,
}

// maxDepth is how deeply arrays and objects may nest.
const maxDepth = 512

// maxIntDigits is Python's int_max_str_digits: json.loads fails with a
// ValueError (not a JSONDecodeError) on longer integer literals.
const maxIntDigits = 4300

// syntaxError is what Python's json.loads reports: a message and the byte
// offset it refers to. fatal marks failures that are not JSONDecodeErrors.
type syntaxError struct {
	msg   string
	off   int
	fatal bool
}

// pos returns the error offset in code points, as Python counts.
func (e *syntaxError) pos(text string) int {
	return utf8.RuneCountInString(text[:e.off])
}

// parser mirrors CPython's C JSON scanner (Modules/_json.c, 3.11).
type parser struct {
	s         string
	nodes     []node
	depth     int
	err       *syntaxError
	nonFinite int      // offset of the first NaN or infinite number, or -1
	strs      []string // decoded strings with escapes
}

// parseJSON parses s as json.loads does, returning a tape or the error.
func parseJSON(s string) (*tape, *syntaxError) {
	if len(s) > math.MaxInt32 {
		return nil, &syntaxError{fatal: true}
	}
	p := &parser{s: s, nodes: make([]node, 0, 16+len(s)/10), nonFinite: -1}
	end, ok := p.value(p.skipWS(0))
	if !ok {
		return nil, p.err
	}
	if end = p.skipWS(end); end != len(s) {
		return nil, &syntaxError{msg: "Extra data", off: end}
	}
	if p.nonFinite >= 0 {
		// Python accepts NaN, Infinity and floats beyond float64 (as inf),
		// but FastAPI cannot echo them: a deliberate deviation.
		return nil, &syntaxError{msg: "Expecting value", off: p.nonFinite}
	}
	return &tape{text: s, nodes: p.nodes, strs: p.strs}, nil
}

func (p *parser) fail(msg string, off int) (int, bool) {
	p.err = &syntaxError{msg: msg, off: off}
	return 0, false
}

func (p *parser) fatal() (int, bool) {
	p.err = &syntaxError{fatal: true}
	return 0, false
}

func (p *parser) skipWS(i int) int {
	for i < len(p.s) {
		switch p.s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value scans one value at i (scan_once_unicode) and returns its end.
func (p *parser) value(i int) (int, bool) {
	s := p.s
	if i >= len(s) {
		return p.fail("Expecting value", i)
	}
	switch s[i] {
	case '"':
		return p.string(i)
	case '{':
		return p.object(i)
	case '[':
		return p.array(i)
	case 'n':
		if i+3 < len(s) && s[i+1:i+4] == "ull" {
			return p.literal(kindNull, false, i, 4), true
		}
	case 't':
		if i+3 < len(s) && s[i+1:i+4] == "rue" {
			return p.literal(kindBool, true, i, 4), true
		}
	case 'f':
		if i+4 < len(s) && s[i+1:i+5] == "alse" {
			return p.literal(kindBool, false, i, 5), true
		}
	case 'N':
		if i+2 < len(s) && s[i+1:i+3] == "aN" {
			return p.constant(i, 3), true
		}
	case 'I':
		if i+7 < len(s) && s[i+1:i+8] == "nfinity" {
			return p.constant(i, 8), true
		}
	case '-':
		if i+8 < len(s) && s[i+1:i+9] == "Infinity" {
			return p.constant(i, 9), true
		}
	}
	return p.number(i)
}

// constant scans NaN, Infinity or -Infinity, noting where it was.
func (p *parser) constant(i, n int) int {
	if p.nonFinite < 0 {
		p.nonFinite = i
	}
	p.nodes = append(p.nodes, node{kind: kindFloat, esc: -1, start: int32(i), end: int32(i + n), next: int32(len(p.nodes) + 1)})
	return i + n
}

func (p *parser) literal(k kind, b bool, i, n int) int {
	p.nodes = append(p.nodes, node{kind: k, b: b, esc: -1, start: int32(i), end: int32(i + n), next: int32(len(p.nodes) + 1)})
	return i + n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number is _match_number_unicode.
func (p *parser) number(start int) (int, bool) {
	s, i := p.s, start
	if s[i] == '-' {
		i++
		if i >= len(s) {
			return p.fail("Expecting value", start)
		}
	}
	switch c := s[i]; {
	case c >= '1' && c <= '9':
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	case c == '0':
		i++
	default:
		return p.fail("Expecting value", start)
	}
	intEnd, isFloat := i, false
	if i < len(s)-1 && s[i] == '.' && isDigit(s[i+1]) {
		isFloat = true
		i += 2
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s)-1 && (s[i] == 'e' || s[i] == 'E') {
		e := i
		i++
		if i < len(s)-1 && (s[i] == '-' || s[i] == '+') {
			i++
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if isDigit(s[i-1]) {
			isFloat = true
		} else {
			i = e
		}
	}
	n := node{kind: kindInt, esc: -1, start: int32(start), end: int32(i), next: int32(len(p.nodes) + 1)}
	if isFloat {
		f, _ := strconv.ParseFloat(s[start:i], 64)
		if math.IsInf(f, 0) && p.nonFinite < 0 {
			p.nonFinite = start // Python's inf
		}
		n.kind = kindFloat
	} else if digits := intEnd - start - strings.Count(s[start:start+1], "-"); digits > maxIntDigits {
		return p.fatal() // Python's int_max_str_digits ValueError
	}
	p.nodes = append(p.nodes, n)
	return i, true
}

// string scans the string whose opening quote is at q (scanstring_unicode).
func (p *parser) string(q int) (int, bool) {
	str, escaped, end, ok := p.scanString(q)
	if !ok {
		return 0, false
	}
	n := node{kind: kindString, esc: -1, start: int32(q), end: int32(end), next: int32(len(p.nodes) + 1)}
	if escaped {
		n.esc = int32(len(p.strs))
		p.strs = append(p.strs, str)
	}
	p.nodes = append(p.nodes, n)
	return end, true
}

// scanString decodes the string whose opening quote is at q and returns
// it, whether it had escapes, and the offset after its closing quote.
func (p *parser) scanString(q int) (string, bool, int, bool) {
	s := p.s
	end := q + 1
	var buf []byte
	for {
		next := end
		for next < len(s) && !stringStop[s[next]] {
			next++
		}
		if next < len(s) && s[next] <= 0x1f {
			p.fail("Invalid control character at", next)
			return "", false, 0, false
		}
		if next >= len(s) {
			p.fail("Unterminated string starting at", q)
			return "", false, 0, false
		}
		if s[next] == '"' {
			if buf == nil {
				return s[end:next], false, next + 1, true
			}
			return string(append(buf, s[end:next]...)), true, next + 1, true
		}
		buf = append(buf, s[end:next]...)
		next++
		if next == len(s) {
			p.fail("Unterminated string starting at", q)
			return "", false, 0, false
		}
		var ok bool
		if buf, end, ok = p.escape(buf, next); !ok {
			return "", false, 0, false
		}
	}
}

// escape decodes the escape whose letter is at i, appending it to buf, and
// returns the offset after it.
func (p *parser) escape(buf []byte, i int) ([]byte, int, bool) {
	s := p.s
	if c := s[i]; c != 'u' {
		var r byte
		switch c {
		case '"', '\\', '/':
			r = c
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		default:
			p.fail(`Invalid \escape`, i-1)
			return nil, 0, false
		}
		return append(buf, r), i + 1, true
	}
	next := i + 1
	end := next + 4
	if end >= len(s) {
		p.fail(`Invalid \uXXXX escape`, next-1)
		return nil, 0, false
	}
	r, ok := hex4(s[next:end])
	if !ok {
		p.fail(`Invalid \uXXXX escape`, end-5)
		return nil, 0, false
	}
	if utf16.IsSurrogate(r) && r < 0xdc00 && end+6 < len(s) && s[end] == '\\' && s[end+1] == 'u' {
		r2, ok := hex4(s[end+2 : end+6])
		if !ok {
			p.fail(`Invalid \uXXXX escape`, end+1)
			return nil, 0, false
		}
		if r2 >= 0xdc00 && r2 < 0xe000 {
			r = utf16.DecodeRune(r, r2)
			end += 6
		}
	}
	// A lone surrogate becomes U+FFFD: Go strings cannot hold it.
	return utf8.AppendRune(buf, r), end, true
}

func hex4(s string) (rune, bool) {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// object scans the object whose brace is at b (_parse_object_unicode).
func (p *parser) object(b int) (int, bool) {
	if p.depth++; p.depth > maxDepth {
		return p.fatal()
	}
	self := len(p.nodes)
	p.nodes = append(p.nodes, node{kind: kindObject, esc: -1, start: int32(b)})
	s, i, n := p.s, p.skipWS(b+1), 0
	if i >= len(s) || s[i] != '}' {
		for {
			if i >= len(s) || s[i] != '"' {
				return p.fail("Expecting property name enclosed in double quotes", i)
			}
			end, ok := p.string(i)
			if !ok {
				return 0, false
			}
			if i = p.skipWS(end); i >= len(s) || s[i] != ':' {
				return p.fail("Expecting ':' delimiter", i)
			}
			if i, ok = p.value(p.skipWS(i + 1)); !ok {
				return 0, false
			}
			n++
			if i = p.skipWS(i); i < len(s) && s[i] == '}' {
				break
			}
			if i >= len(s) || s[i] != ',' {
				return p.fail("Expecting ',' delimiter", i)
			}
			i = p.skipWS(i + 1)
		}
	}
	p.depth--
	p.close(self, n, i+1)
	return i + 1, true
}

// array scans the array whose bracket is at b (_parse_array_unicode).
func (p *parser) array(b int) (int, bool) {
	if p.depth++; p.depth > maxDepth {
		return p.fatal()
	}
	self := len(p.nodes)
	p.nodes = append(p.nodes, node{kind: kindArray, esc: -1, start: int32(b)})
	s, i, n := p.s, p.skipWS(b+1), 0
	if i >= len(s) || s[i] != ']' {
		for {
			var ok bool
			if i, ok = p.value(i); !ok {
				return 0, false
			}
			n++
			if i = p.skipWS(i); i < len(s) && s[i] == ']' {
				break
			}
			if i >= len(s) || s[i] != ',' {
				return p.fail("Expecting ',' delimiter", i)
			}
			i = p.skipWS(i + 1)
		}
	}
	p.depth--
	p.close(self, n, i+1)
	return i + 1, true
}

func (p *parser) close(self, n, end int) {
	nd := &p.nodes[self]
	nd.n, nd.end, nd.next = int32(n), int32(end), int32(len(p.nodes))
}
