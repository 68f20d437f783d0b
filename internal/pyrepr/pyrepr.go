// Package pyrepr renders values as Python's repr() shows them, for
// messages and bodies that must match those of Onyx, which is written in
// Python: api/decode echoes the inputs of 422s as FastAPI does, tooldef
// words its refusals as Onyx's validator does, and the domain names
// document sets in Onyx's refusals.
package pyrepr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// AppendFloat appends f as Python's repr() shows a float: the shortest
// digits that read back as f, in positional notation with at least one
// decimal ("100.0") when the decimal exponent is in [-4, 16), and in
// scientific notation with a signed exponent of at least two digits
// ("1e+16", "1.5e-05") otherwise; "inf", "-inf" and "nan" for the values
// that are not finite.
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// 'e' with the shortest digits: "-d.ddde±xx".
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	mant, exp := e, 0
	for k := range e {
		if e[k] == 'e' {
			mant = e[:k]
			exp, _ = strconv.Atoi(string(e[k+1:]))
			break
		}
	}
	if mant[0] == '-' {
		mant = mant[1:]
		b = append(b, '-')
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if exp < -4 || exp >= 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	if exp < 0 {
		b = append(b, "0."...)
		for k := -1; k > exp; k-- {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	for len(digits) <= exp {
		digits = append(digits, '0')
	}
	b = append(b, digits[:exp+1]...)
	b = append(b, '.')
	if len(digits) == exp+1 {
		return append(b, '0')
	}
	return append(b, digits[exp+1:]...)
}

// Float returns f as Python's repr() shows a float (see AppendFloat).
func Float(f float64) string { return string(AppendFloat(nil, f)) }

// Quote returns s as Python's repr() shows a string: in single quotes, or
// in double quotes when s holds a single quote and no double quote, with
// backslash escapes for the quote, the backslash and characters that are
// not printable. Go's unicode.IsPrint stands in for Python's
// str.isprintable; the two differ only where their Unicode versions do.
func Quote(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// StringList returns list as Python's repr() shows a list of strings:
// ['https://a', 'https://b'].
func StringList(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = Quote(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
