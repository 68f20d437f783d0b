package decode

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// isJSONContentType reports whether FastAPI parses a body sent with this
// Content-Type as JSON: when it is absent or empty, or when Python's
// email.message finds the main type "application" and a subtype "json" or
// ending in "+json".
func isJSONContentType(ct string) bool {
	return isContentType(ct, true, func(main, sub string) bool {
		return main == "application" && (sub == "json" || strings.HasSuffix(sub, "+json"))
	})
}

// isFormContentType reports whether a Content-Type is
// application/x-www-form-urlencoded, as Starlette's parse_options_header
// reads it: parameters dropped, case and surrounding space ignored.
func isFormContentType(ct string) bool {
	return isContentType(ct, false, func(main, sub string) bool {
		return main == "application" && sub == "x-www-form-urlencoded"
	})
}

// isContentType splits a Content-Type into its type and subtype and asks
// match about them; an empty one is empty as it says.
func isContentType(ct string, empty bool, match func(main, sub string) bool) bool {
	if ct == "" {
		return empty
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = asciiLower(pyStripLatin1(ct))
	if strings.Count(ct, "/") != 1 {
		return false // email.message falls back to text/plain
	}
	main, sub, _ := strings.Cut(ct, "/")
	return match(main, sub)
}

// pyStripLatin1 is Python's str.strip() on a header value decoded as
// Latin-1, one rune per byte.
func pyStripLatin1(s string) string {
	isSpace := func(c byte) bool {
		return c >= 0x09 && c <= 0x0d || c >= 0x1c && c <= 0x20 || c == 0x85 || c == 0xa0
	}
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// asciiLower lower-cases ASCII letters only, as Python's str.lower() does
// for text decoded from Latin-1 as far as ASCII results are concerned.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// decodeUTF8 returns raw as a string when it is valid UTF-8. The string
// shares raw's memory: raw must not change afterwards.
func decodeUTF8(raw []byte) (string, bool) {
	if !utf8.Valid(raw) {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(raw), len(raw)), true
}

// decodeJSONBytes decodes a JSON body to UTF-8 text the way Python's
// json.loads does with bytes: it detects UTF-8 (with or without BOM),
// UTF-16 and UTF-32 by the BOM or the pattern of zero bytes. It reports
// false where Python would fail, and where Python would produce a lone
// surrogate (a deliberate deviation).
func decodeJSONBytes(b []byte) (string, bool) {
	switch enc := detectEncoding(b); enc {
	case "utf-8":
		return decodeUTF8(b)
	case "utf-8-sig":
		return decodeUTF8(b[3:])
	case "utf-16":
		if b[0] == 0xff {
			return decodeUTF16(b[2:], binary.LittleEndian)
		}
		return decodeUTF16(b[2:], binary.BigEndian)
	case "utf-16-le":
		return decodeUTF16(b, binary.LittleEndian)
	case "utf-16-be":
		return decodeUTF16(b, binary.BigEndian)
	case "utf-32":
		if b[0] == 0xff {
			return decodeUTF32(b[4:], binary.LittleEndian)
		}
		return decodeUTF32(b[4:], binary.BigEndian)
	case "utf-32-le":
		return decodeUTF32(b, binary.LittleEndian)
	default:
		return decodeUTF32(b, binary.BigEndian)
	}
}

// detectEncoding is Python's json.detect_encoding.
func detectEncoding(b []byte) string {
	switch {
	case hasPrefix(b, 0x00, 0x00, 0xfe, 0xff), hasPrefix(b, 0xff, 0xfe, 0x00, 0x00):
		return "utf-32"
	case hasPrefix(b, 0xfe, 0xff), hasPrefix(b, 0xff, 0xfe):
		return "utf-16"
	case hasPrefix(b, 0xef, 0xbb, 0xbf):
		return "utf-8-sig"
	}
	if len(b) >= 4 {
		if b[0] == 0 {
			if b[1] != 0 {
				return "utf-16-be"
			}
			return "utf-32-be"
		}
		if b[1] == 0 {
			if b[2] != 0 || b[3] != 0 {
				return "utf-16-le"
			}
			return "utf-32-le"
		}
	} else if len(b) == 2 {
		if b[0] == 0 {
			return "utf-16-be"
		}
		if b[1] == 0 {
			return "utf-16-le"
		}
	}
	return "utf-8"
}

func hasPrefix(b []byte, p ...byte) bool {
	if len(b) < len(p) {
		return false
	}
	for i, c := range p {
		if b[i] != c {
			return false
		}
	}
	return true
}

// decodeUTF16 decodes UTF-16 text; odd lengths and lone surrogates fail.
func decodeUTF16(b []byte, order binary.ByteOrder) (string, bool) {
	if len(b)%2 != 0 {
		return "", false
	}
	var sb strings.Builder
	for i := 0; i < len(b); i += 2 {
		r := rune(order.Uint16(b[i:]))
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 || i+4 > len(b) {
				return "", false
			}
			r2 := rune(order.Uint16(b[i+2:]))
			r = utf16.DecodeRune(r, r2)
			if r == utf8.RuneError {
				return "", false
			}
			i += 2
		}
		sb.WriteRune(r)
	}
	return sb.String(), true
}

// decodeUTF32 decodes UTF-32 text; bad lengths, surrogates and values
// beyond U+10FFFF fail.
func decodeUTF32(b []byte, order binary.ByteOrder) (string, bool) {
	if len(b)%4 != 0 {
		return "", false
	}
	var sb strings.Builder
	for i := 0; i < len(b); i += 4 {
		r := order.Uint32(b[i:])
		if r > utf8.MaxRune || r >= 0xd800 && r < 0xe000 {
			return "", false
		}
		sb.WriteRune(rune(r))
	}
	return sb.String(), true
}

// replaceInvalid returns s with invalid UTF-8 replaced as Python's
// decoder does with errors="replace" (uvicorn's treatment of the path).
func replaceInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return decodeReplace([]byte(s))
}

// decodeReplace decodes b as UTF-8 the way Python does with
// errors="replace": each maximal invalid subpart becomes one U+FFFD.
func decodeReplace(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n != 1 {
			sb.WriteRune(r)
			b = b[n:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[invalidPrefix(b):]
	}
	return sb.String()
}

// invalidPrefix returns the length of the maximal subpart of an ill-formed
// UTF-8 sequence at the start of b (at least 1).
func invalidPrefix(b []byte) int {
	lo, hi, need := byte(0x80), byte(0xbf), 0
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		lo, need = 0xa0, 2
	case c == 0xed:
		hi, need = 0x9f, 2
	case c >= 0xe1 && c <= 0xef:
		need = 2
	case c == 0xf0:
		lo, need = 0x90, 3
	case c == 0xf4:
		hi, need = 0x8f, 3
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xbf
	}
	return n
}
