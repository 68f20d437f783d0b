package tooldef

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/quarryhq/quarry/internal/pyrepr"
)

// Onyx is written in Python and puts values into its messages with str() or
// repr(). The functions in this file render a JSON value the way Python
// renders the value json.loads makes of it, so that Quarry's messages match.

// pyStr renders v as Python's str() shows it: a string as itself, anything
// else as pyRepr.
func pyStr(v *value) string {
	if v.kind == kindString {
		return v.str
	}
	return pyRepr(v)
}

// pyRepr renders v as Python's repr() shows it: {'a': [1, 2.0, True, None]}.
func pyRepr(v *value) string {
	switch v.kind {
	case kindObject:
		parts := make([]string, len(v.members))
		for i, m := range v.members {
			parts[i] = pyQuote(m.key) + ": " + pyRepr(m.value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case kindArray:
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case kindString:
		return pyQuote(v.str)
	case kindTrue:
		return "True"
	case kindFalse:
		return "False"
	case kindNull:
		return "None"
	}
	return pyNumber(string(v.raw))
}

// pyStringList renders a list of strings as Python's repr() shows it:
// ['https://a', 'https://b'].
func pyStringList(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = pyQuote(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pyNumber renders the JSON number literal n as Python's repr() shows the
// value json.loads makes of it: an int for a literal without fraction or
// exponent, a float otherwise.
func pyNumber(n string) string {
	if !strings.ContainsAny(n, ".eE") {
		digits := strings.TrimLeft(strings.TrimPrefix(n, "-"), "0")
		switch {
		case digits == "":
			return "0"
		case n[0] == '-':
			return "-" + digits
		}
		return digits
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil && !math.IsInf(f, 0) {
		return n
	}
	return pyrepr.Float(f)
}

// pyQuote renders s as Python's repr() does: in single quotes, or in double
// quotes when s holds a single quote and no double quote, with backslash
// escapes for the quote, the backslash and characters that are not
// printable. Go's unicode.IsPrint stands in for Python's str.isprintable;
// the two differ only where their Unicode versions do.
func pyQuote(s string) string {
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
