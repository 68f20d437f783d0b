package decode

import (
	"strings"
	"unicode/utf8"
)

// parseQuery splits a raw query string into name/value pairs as Starlette
// does: the bytes decoded as Latin-1, then Python's
// urllib.parse.parse_qsl(keep_blank_values=True).
func parseQuery(raw string) [][2]string {
	var pairs [][2]string
	for _, field := range strings.Split(raw, "&") {
		if field == "" {
			continue
		}
		name, value, _ := strings.Cut(field, "=")
		pairs = append(pairs, [2]string{unquote(name), unquote(value)})
	}
	return pairs
}

// parseForm splits a form-encoded body into name/value pairs as Starlette
// does with python-multipart's query-string parser (not strict): fields
// are separated by "&", or by ";" where no "&" follows; separators before
// a field are skipped; a field without "=" has an empty value; names and
// values are decoded as parseQuery decodes them.
func parseForm(raw string) [][2]string {
	var pairs [][2]string
	i := 0
	for i < len(raw) {
		if raw[i] == '&' || raw[i] == ';' {
			i++
			continue
		}
		sep := strings.IndexByte(raw[i:], '&')
		if sep < 0 {
			sep = strings.IndexByte(raw[i:], ';')
		}
		end := len(raw)
		if sep >= 0 {
			end = i + sep
		}
		name, value, _ := strings.Cut(raw[i:end], "=")
		pairs = append(pairs, [2]string{unquote(name), unquote(value)})
		i = end + 1
	}
	return pairs
}

// unquote is Python's unquote(s.replace("+", " ")) on text decoded from
// Latin-1: runs of ASCII have their %XX escapes decoded as UTF-8 (errors
// replaced); other bytes stand for themselves as Latin-1 characters.
func unquote(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.Contains(s, "%") && isASCII(s) {
		return s
	}
	var sb strings.Builder
	for len(s) > 0 {
		n := 0
		for n < len(s) && s[n] < utf8.RuneSelf {
			n++
		}
		sb.WriteString(decodeReplace(unquoteBytes(s[:n])))
		for n < len(s) && s[n] >= utf8.RuneSelf {
			sb.WriteRune(rune(s[n])) // Latin-1
			n++
		}
		s = s[n:]
	}
	return sb.String()
}

// unquoteBytes decodes %XX escapes, leaving malformed ones as they are.
func unquoteBytes(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
