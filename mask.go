package quarry

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"unicode/utf8"
)

// MaskedSecret is the rendering of a secret that shows none of its
// characters: every string shorter than MaskMinShown code points, and a
// secret found in a log line, an error or an answer (12 × U+2022, as Onyx
// renders short strings).
const MaskedSecret = "••••••••••••"

// MaskMinShown is the length, in code points, from which a masked string
// shows its first and last maskEnds characters: 8 characters, at most
// 4/15 of the string, and 22 or more stay hidden. Onyx shows them from 14
// characters, which is half of a 16-character password (see
// docs/decisions.md, "Masking").
const MaskMinShown = 30

// maskEnds is how many characters a long masked string shows at each end.
const maskEnds = 4

// maskedNumber is the rendering of every number.
const maskedNumber = "*****"

// unmaskedKeys are the keys whose values masking passes through unchanged,
// at any depth: they name how to authenticate, not secrets.
var unmaskedKeys = map[string]bool{
	"authentication_method": true,
	"wiki_base":             true,
	"cloud_name":            true,
	"cloud_id":              true,
	"scopes":                true,
}

// MaskString renders a secret string in Onyx's shapes, so that Onyx's
// clients recognise it: strings shorter than MaskMinShown code points
// become MaskedSecret, longer ones keep their first and last four
// characters ("my-very-long-secret-token-here" → "my-v...here"). It is the
// one rendering of a shortened secret: credentials, tool and MCP headers
// and tokens; logs replace a secret with MaskedSecret whole.
func MaskString(s string) string {
	return maskRunes(s, utf8.RuneCountInString(s), MaskMinShown)
}

// maskRunes renders s, of n code points, showing its ends from min code
// points on.
func maskRunes(s string, n, min int) string {
	if n < min {
		return MaskedSecret
	}
	r := []rune(s)
	return string(r[:maskEnds]) + "..." + string(r[len(r)-maskEnds:])
}

// onyxMinShown is the length from which Onyx's mask_string, and Quarry's
// before it showed fewer characters, shows a string's ends.
const onyxMinShown = 14

// IsMaskOf reports whether v is what a client that read secret masked
// would send back: its MaskString, or its rendering under Onyx's rule,
// which Quarry showed before (a client may hold a value read then).
func IsMaskOf(v, secret string) bool {
	n := utf8.RuneCountInString(secret)
	return v == maskRunes(secret, n, MaskMinShown) || v == maskRunes(secret, n, onyxMinShown)
}

// MaskJSON returns the masked rendering of a credential object given as
// JSON text (contract section 4.4): strings through MaskString, numbers as
// "*****", booleans and nulls unchanged, objects and arrays recursively,
// and the values of a few descriptive keys (such as
// "authentication_method") unchanged, at any depth.
func MaskJSON(obj []byte) ([]byte, error) {
	return AppendMaskedJSON(make([]byte, 0, len(obj)), obj)
}

// AppendMaskedJSON appends the masked rendering of the JSON object obj to
// dst (see MaskJSON). It works on the text, without decoding it into maps,
// so that long listings mask quickly; obj must be valid JSON (what it does
// with invalid JSON is unspecified, short of panicking).
func AppendMaskedJSON(dst, obj []byte) ([]byte, error) {
	m := masker{src: obj, dst: dst}
	m.space()
	if m.peek() != '{' {
		return dst, errMalformed
	}
	if err := m.value(); err != nil {
		return dst, err
	}
	if m.space(); m.pos != len(m.src) {
		return dst, errMalformed
	}
	return m.dst, nil
}

var errMalformed = errors.New("quarry: malformed credential JSON")

// masker masks JSON text from src onto dst.
type masker struct {
	src []byte
	pos int
	dst []byte
}

func (m *masker) peek() byte {
	if m.pos < len(m.src) {
		return m.src[m.pos]
	}
	return 0
}

func (m *masker) space() {
	for m.pos < len(m.src) {
		switch m.src[m.pos] {
		case ' ', '\t', '\n', '\r':
			m.pos++
		default:
			return
		}
	}
}

// value masks the value at pos.
func (m *masker) value() error {
	switch c := m.peek(); {
	case c == '{':
		return m.object()
	case c == '[':
		return m.array()
	case c == '"':
		raw, err := m.str()
		if err != nil {
			return err
		}
		m.dst = appendMaskedString(m.dst, raw)
		return nil
	case c == 't', c == 'f', c == 'n':
		start := m.pos
		for m.pos < len(m.src) && m.src[m.pos] >= 'a' && m.src[m.pos] <= 'z' {
			m.pos++
		}
		switch string(m.src[start:m.pos]) {
		case "true", "false", "null":
			m.dst = append(m.dst, m.src[start:m.pos]...)
			return nil
		}
		return errMalformed
	case c == '-' || (c >= '0' && c <= '9'):
		for m.pos < len(m.src) && bytes.IndexByte([]byte("+-.0123456789eE"), m.src[m.pos]) >= 0 {
			m.pos++
		}
		m.dst = append(m.dst, `"`+maskedNumber+`"`...)
		return nil
	}
	return errMalformed
}

// object masks the object at pos.
func (m *masker) object() error { return m.list('{', '}', m.member) }

// array masks the array at pos.
func (m *masker) array() error { return m.list('[', ']', m.value) }

// list walks the object or array at pos, copying its brackets and commas,
// and calls each for every member or element.
func (m *masker) list(open, close byte, each func() error) error {
	m.pos++
	m.dst = append(m.dst, open)
	for first := true; ; first = false {
		m.space()
		if m.peek() == close {
			m.pos++
			m.dst = append(m.dst, close)
			return nil
		}
		if !first {
			if m.peek() != ',' {
				return errMalformed
			}
			m.pos++
			m.dst = append(m.dst, ',')
			m.space()
		}
		if err := each(); err != nil {
			return err
		}
	}
}

// member masks the member of an object at pos: its key as it is, and its
// value masked unless the key is one of unmaskedKeys.
func (m *masker) member() error {
	key, err := m.str()
	if err != nil {
		return err
	}
	m.dst = append(m.dst, key...)
	if m.space(); m.peek() != ':' {
		return errMalformed
	}
	m.pos++
	m.dst = append(m.dst, ':')
	m.space()
	if !unmaskedKeys[unquote(key)] {
		return m.value()
	}
	start := m.pos
	if err := m.skip(); err != nil {
		return err
	}
	m.dst = appendCompact(m.dst, m.src[start:m.pos])
	return nil
}

// str consumes a string and returns its text, quotes included.
func (m *masker) str() ([]byte, error) {
	if m.peek() != '"' {
		return nil, errMalformed
	}
	start := m.pos
	for m.pos++; m.pos < len(m.src); m.pos++ {
		switch m.src[m.pos] {
		case '\\':
			m.pos++
		case '"':
			m.pos++
			return m.src[start:m.pos], nil
		}
	}
	return nil, errMalformed
}

// skip consumes a value without writing it (it is masked, and the mask
// thrown away: the walk is the same).
func (m *masker) skip() error {
	saved := m.dst
	err := m.value()
	m.dst = saved
	return err
}

// unquote returns the text of a JSON string literal.
func unquote(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

// appendMaskedString appends the masked rendering of the JSON string
// literal lit.
func appendMaskedString(dst, lit []byte) []byte {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return AppendJSONString(dst, MaskString(unquote(lit)))
	}
	if utf8.RuneCount(inner) < MaskMinShown {
		return append(dst, `"`+MaskedSecret+`"`...)
	}
	head := 0
	for range maskEnds {
		_, n := utf8.DecodeRune(inner[head:])
		head += n
	}
	tail := len(inner)
	for range maskEnds {
		_, n := utf8.DecodeLastRune(inner[:tail])
		tail -= n
	}
	dst = append(dst, '"')
	dst = append(dst, inner[:head]...)
	dst = append(dst, "..."...)
	dst = append(dst, inner[tail:]...)
	return append(dst, '"')
}

// appendCompact appends the JSON text v without insignificant space.
func appendCompact(dst, v []byte) []byte {
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString && c == '\\' && i+1 < len(v):
			dst = append(dst, c, v[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// KeepMaskedEchoes returns the object to store when a client sends incoming
// to replace stored. Wherever incoming holds, at the same key path (nested
// objects and list positions included), exactly the masked rendering of the
// stored value, the stored value is kept; everything else comes from
// incoming, and keys absent from incoming are dropped. A client that reads a
// masked credential and sends it back with one field changed therefore never
// overwrites a secret with its mask.
func KeepMaskedEchoes(stored, incoming map[string]any) map[string]any {
	out := make(map[string]any, len(incoming))
	for k, v := range incoming {
		old, ok := stored[k]
		if !ok || unmaskedKeys[k] {
			out[k] = v
			continue
		}
		out[k] = keepEcho(old, v)
	}
	return out
}

func keepEcho(old, v any) any {
	switch v := v.(type) {
	case string:
		switch o := old.(type) {
		case string:
			if IsMaskOf(v, o) {
				return o
			}
		case json.Number, float64:
			if v == maskedNumber {
				return o
			}
		}
	case map[string]any:
		if o, ok := old.(map[string]any); ok {
			return KeepMaskedEchoes(o, v)
		}
	case []any:
		if o, ok := old.([]any); ok {
			out := make([]any, len(v))
			for i, e := range v {
				if i < len(o) {
					out[i] = keepEcho(o[i], e)
				} else {
					out[i] = e
				}
			}
			return out
		}
	}
	return v
}

// DecodeObject decodes the JSON text of an object, keeping numbers as
// json.Number so that they survive a round trip unchanged.
func DecodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// EncodeObject returns the compact JSON text of an object decoded by
// DecodeObject, with its keys sorted.
func EncodeObject(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("quarry: encoding a decoded JSON object: " + err.Error()) // Decoded JSON always encodes.
	}
	return b
}

// SameJSON reports whether two JSON texts encode the same value.
func SameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}
