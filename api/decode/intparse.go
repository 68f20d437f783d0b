package decode

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// intMessages are pydantic's messages for the integer error types.
var intMessages = map[string]string{
	"int_type":         "Input should be a valid integer",
	"int_parsing":      "Input should be a valid integer, unable to parse string as an integer",
	"int_from_float":   "Input should be a valid integer, got a number with a fractional part",
	"int_parsing_size": "Unable to parse input string as an integer, exceeded maximum size",
}

// lookInt validates node i as a lax pydantic int. It returns the value,
// or the sign of a valid integer beyond int64, or an error type.
func (t *tape) lookInt(i int) (v int64, sign int, code string) {
	switch n := &t.nodes[i]; n.kind {
	case kindBool:
		if n.b {
			return 1, 0, ""
		}
		return 0, 0, ""
	case kindInt:
		return parseInt64(t.lit(i))
	case kindFloat:
		v, code := floatAsInt(t.float(i))
		return v, 0, code
	case kindString:
		return strAsInt(t.str(i))
	}
	return 0, 0, "int_type"
}

// parseInt64 parses a valid decimal integer, reporting the sign of values
// beyond int64.
func parseInt64(s string) (int64, int, string) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if strings.HasPrefix(s, "-") {
			return 0, -1, ""
		}
		return 0, 1, ""
	}
	return v, 0, ""
}

// floatAsInt is pydantic's float_as_int.
func floatAsInt(f float64) (int64, string) {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return 0, "finite_number"
	case f != math.Trunc(f):
		return 0, "int_from_float"
	case f > -(1<<63) && f < 1<<63:
		return int64(f), ""
	}
	return 0, "int_parsing_size"
}

// strAsInt is pydantic's str_as_int: a strict JSON integer, or else the
// string cleaned of whitespace, a sign, leading zeros, a ".0" tail and
// underscores.
func strAsInt(s string) (int64, int, string) {
	if tooLong(s) {
		return 0, 0, "int_parsing_size"
	}
	if isJSONInt(s) {
		return parseInt64(s)
	}
	if c, ok := cleanIntStr(s); ok && isJSONInt(c) && !tooLong(c) {
		return parseInt64(c)
	}
	return 0, 0, "int_parsing"
}

// tooLong reports whether s starts with an integer that jiter refuses as
// longer than Python's 4300 digit limit.
func tooLong(s string) bool {
	i := 0
	if strings.HasPrefix(s, "-") {
		i = 1
	}
	if i >= len(s) || s[i] < '1' || s[i] > '9' {
		return false
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i > maxIntDigits
}

// isJSONInt reports whether s is exactly a JSON integer literal.
func isJSONInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// cleanIntStr is pydantic-core's clean_int_str.
func cleanIntStr(orig string) (string, bool) {
	s := strings.TrimFunc(orig, unicode.IsSpace)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		if strings.HasPrefix(rest, "-") {
			return "", false
		}
		s = rest
	}
	sign := ""
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return "", false
		}
		sign, s = "-", rest
	}
	s, ok := stripLeadingZeros(s)
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if dec := s[i+1:]; dec != "" && strings.Trim(dec, "0") == "" {
			s = s[:i]
		}
	}
	if !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && strings.Contains(s, "_") && !strings.Contains(s, "__") {
		return sign + strings.ReplaceAll(s, "_", ""), true
	}
	if len(orig) == len(s) {
		return "", false
	}
	return sign + s, true
}

// stripLeadingZeros is pydantic-core's strip_leading_zeros.
func stripLeadingZeros(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	switch c := s[0]; {
	case c == '0':
	case c >= '1' && c <= '9' || c == '-':
		return s, true
	default:
		return "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '0' || c == '_':
		case c >= '1' && c <= '9' || c == '-':
			return s[i:], true
		case c == '.':
			return s[i-1:], true
		default:
			return "", false
		}
	}
	return s[len(s)-1:], true
}
