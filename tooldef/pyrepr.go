package tooldef

import (
	"math"
	"strconv"
	"strings"

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
			parts[i] = pyrepr.Quote(m.key) + ": " + pyRepr(m.value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case kindArray:
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case kindString:
		return pyrepr.Quote(v.str)
	case kindTrue:
		return "True"
	case kindFalse:
		return "False"
	case kindNull:
		return "None"
	}
	return pyNumber(string(v.raw))
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
