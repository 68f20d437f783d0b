package decode

import (
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/google/uuid"
)

// uuidType is the Go type of a UUID field (Python's uuid.UUID).
var uuidType = reflect.TypeFor[uuid.UUID]()

// validateUUID accepts a string that the Rust uuid crate parses, as
// pydantic-core does: 32 hex digits, the hyphenated form, either in
// braces or after "urn:uuid:". Anything else that is a string fails with
// uuid_parsing and the crate's reason; what is not a string with
// uuid_type.
func (st *state) validateUUID(t *tape, i int, dst reflect.Value) {
	if t.nodes[i].kind != kindString {
		st.add(t, i, "uuid_type", "UUID input should be a string, bytes or UUID object", nil)
		return
	}
	u, reason := parseUUID(t.str(i))
	if reason != "" {
		st.add(t, i, "uuid_parsing", "Input should be a valid UUID, "+reason, map[string]any{"error": reason})
		return
	}
	dst.Set(reflect.ValueOf(u))
}

// parseUUID parses s as the Rust uuid crate's Uuid::try_parse does, and
// returns the crate's reason (its Error's text) when it fails.
func parseUUID(s string) (uuid.UUID, string) {
	var body string
	switch n := len(s); {
	case n == 32:
		if u, ok := hexUUID(s, false); ok {
			return u, ""
		}
	case n == 36:
		body = s
	case n == 38 && s[0] == '{' && s[37] == '}':
		body = s[1:37]
	case n == 45 && s[:9] == "urn:uuid:":
		body = s[9:]
	}
	if body != "" {
		if u, ok := hexUUID(body, true); ok {
			return u, ""
		}
	}
	return uuid.UUID{}, uuidReason(s)
}

// hexUUID parses 32 hex digits, or the hyphenated form (8-4-4-4-12).
func hexUUID(s string, hyphens bool) (uuid.UUID, bool) {
	var u uuid.UUID
	k := 0
	for i := 0; i < len(s); {
		if hyphens && (i == 8 || i == 13 || i == 18 || i == 23) {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := hexDigit(s[i])
		if i+1 >= len(s) {
			return u, false
		}
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 || k >= 16 {
			return u, false
		}
		u[k] = hi<<4 | lo
		k++
		i += 2
	}
	return u, k == 16
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// uuidReason returns why the crate refuses s (InvalidUuid::into_err): the
// first character that is neither a hex digit nor "-" (its position
// counted in bytes, from 1, braces and "urn:uuid:" included), else a
// simple form of the wrong length, a wrong count of groups, or the first
// group of the wrong length.
func uuidReason(s string) string {
	body, offset, simple := s, 0, true
	switch {
	case len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}':
		body, offset, simple = s[1:len(s)-1], 1, false
	case len(s) >= 9 && s[:9] == "urn:uuid:":
		body, offset, simple = s[9:], 9, false
	}
	hyphens := 0
	var bounds [4]int
	for i, r := range body {
		switch {
		case r >= utf8.RuneSelf:
			return fmt.Sprintf("invalid character: found `%c` at %d", r, i+offset+1)
		case r == '-':
			if hyphens < 4 {
				bounds[hyphens] = i
			}
			hyphens++
		default:
			if _, ok := hexDigit(byte(r)); !ok {
				return fmt.Sprintf("invalid character: found `%c` at %d", r, i+offset+1)
			}
		}
	}
	if hyphens == 0 && simple {
		return fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(s))
	}
	if hyphens != 4 {
		return fmt.Sprintf("invalid group count: expected 5, found %d", hyphens+1)
	}
	starts := [5]int{0, 9, 14, 19, 24}
	expected := [5]int{8, 4, 4, 4, 12}
	for g := range 4 {
		if bounds[g] != starts[g+1]-1 {
			return fmt.Sprintf("invalid group length in group %d: expected %d, found %d", g, expected[g], bounds[g]-starts[g])
		}
	}
	return fmt.Sprintf("invalid group length in group 4: expected 12, found %d", len(s)-starts[4])
}
