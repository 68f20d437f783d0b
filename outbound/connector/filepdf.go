package connector

import (
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A small PDF text reader (docs/decisions.md, "The file connector"): it
// scans the file for streams, without the cross-reference table, inflates
// those compressed with FlateDecode (or not compressed), and reads the
// text-showing operators of those that are content streams (Tj, TJ, ',
// "), a line per text line. Strings are read as single bytes in the
// standard encodings (WinAnsi, as the standard 14 fonts use); text in
// fonts with other encodings (CID fonts, subsets mapped by a ToUnicode
// CMap) is not decoded, and an encrypted PDF is refused.

// pdfText writes the text of the PDF file b.
func pdfText(out *textBuffer, b []byte) error {
	if !bytes.HasPrefix(bytes.TrimLeft(b, "\x00\t\r\n "), []byte("%PDF-")) {
		return errors.New("it is not a PDF file")
	}
	if bytes.Contains(b, []byte("/Encrypt")) {
		return errors.New("it is an encrypted PDF, which the file connector does not read")
	}
	inflated := 0
	for rest := b; ; {
		i := bytes.Index(rest, []byte("stream"))
		if i < 0 {
			return nil
		}
		// "endstream" also holds "stream": skip it.
		if i >= 3 && string(rest[i-3:i]) == "end" {
			rest = rest[i+6:]
			continue
		}
		dict := rest[max(0, i-2048):i]
		if j := bytes.LastIndex(dict, []byte("<<")); j >= 0 {
			dict = dict[j:]
		}
		body := rest[i+6:]
		body = bytes.TrimPrefix(body, []byte("\r"))
		body = bytes.TrimPrefix(body, []byte("\n"))
		end := bytes.Index(body, []byte("endstream"))
		if end < 0 {
			return nil
		}
		data := body[:end]
		rest = body[end+9:]
		filters, ok := pdfFilters(dict)
		if !ok {
			continue // Images and other encodings.
		}
		content, err := pdfDecode(data, filters)
		if err != nil {
			return err
		}
		if content == nil {
			continue
		}
		if inflated += len(content); inflated > maxFileInput {
			return fmt.Errorf("the PDF's streams inflate to more than %d bytes", maxFileInput)
		}
		if bytes.Contains(dict, []byte("/Subtype")) || bytes.Contains(dict, []byte("/Type /XRef")) || bytes.Contains(dict, []byte("/Type/XRef")) {
			continue // Images, fonts, cross-reference streams.
		}
		if err := pdfContentText(out, content); err != nil {
			return err
		}
	}
}

// pdfFilters returns the filters of a stream's dictionary, in order, and
// whether the reader can undo them all (FlateDecode without predictors,
// ASCII85Decode, ASCIIHexDecode).
func pdfFilters(dict []byte) ([]string, bool) {
	i := bytes.Index(dict, []byte("/Filter"))
	if i < 0 {
		return nil, true
	}
	if bytes.Contains(dict, []byte("/DecodeParms")) {
		return nil, false
	}
	rest := bytes.TrimLeft(dict[i+7:], " \t\r\n")
	var names []string
	if len(rest) > 0 && rest[0] == '[' {
		end := bytes.IndexByte(rest, ']')
		if end < 0 {
			return nil, false
		}
		rest = rest[1:end]
	} else if j := bytes.IndexAny(rest[min(1, len(rest)):], "/>"); j >= 0 {
		rest = rest[:j+1]
	}
	for _, f := range bytes.Split(rest, []byte("/")) {
		if n := string(bytes.TrimSpace(f)); n != "" {
			switch n {
			case "FlateDecode", "ASCII85Decode", "ASCIIHexDecode":
				names = append(names, n)
			default:
				return nil, false
			}
		}
	}
	return names, true
}

// pdfDecode undoes filters on data; nil when data does not decode (the
// stream is skipped), an error when it inflates beyond maxPDFStream.
func pdfDecode(data []byte, filters []string) ([]byte, error) {
	for _, f := range filters {
		switch f {
		case "ASCII85Decode":
			in := bytes.TrimSpace(data)
			in = bytes.TrimPrefix(in, []byte("<~"))
			if k := bytes.Index(in, []byte("~>")); k >= 0 {
				in = in[:k]
			}
			out := make([]byte, 4*len(in)/5+4)
			n, _, err := ascii85.Decode(out, in, true)
			if err != nil {
				return nil, nil
			}
			data = out[:n]
		case "ASCIIHexDecode":
			l := &pdfLexer{s: append(append([]byte("<"), bytes.TrimSuffix(bytes.TrimSpace(data), []byte(">"))...), '>')}
			data = []byte(l.hexRaw())
		case "FlateDecode":
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, nil
			}
			out, err := io.ReadAll(io.LimitReader(zr, maxPDFStream+1))
			if err != nil && len(out) == 0 {
				return nil, nil
			}
			if len(out) > maxPDFStream {
				return nil, fmt.Errorf("a stream of the PDF inflates to more than %d bytes", maxPDFStream)
			}
			data = out
		}
	}
	return data, nil
}

// pdfContentText writes the text a content stream shows.
func pdfContentText(out *textBuffer, s []byte) error {
	var operands []pdfToken
	line := false // Whether the current line has text.
	newline := func() error {
		if line {
			line = false
			return out.WriteString("\n")
		}
		return nil
	}
	show := func(t string) error {
		if t == "" {
			return nil
		}
		line = true
		return out.WriteString(t)
	}
	lx := &pdfLexer{s: s}
	for {
		t, ok := lx.next()
		if !ok {
			return newline()
		}
		if t.kind != pdfOperator {
			if len(operands) < 64 {
				operands = append(operands, t)
			}
			continue
		}
		var err error
		switch t.text {
		case "Tj":
			if n := len(operands); n > 0 {
				err = show(operands[n-1].text)
			}
		case "'", "\"":
			if err = newline(); err == nil && len(operands) > 0 {
				err = show(operands[len(operands)-1].text)
			}
		case "TJ":
			if n := len(operands); n > 0 && operands[n-1].kind == pdfArray {
				err = show(operands[n-1].text)
			}
		case "T*", "ET":
			err = newline()
		case "Td", "TD":
			if n := len(operands); n >= 2 && operands[n-1].text != "0" && operands[n-1].text != "0.0" {
				err = newline()
			}
		case "Tm":
			err = newline()
		}
		if err != nil {
			return err
		}
		operands = operands[:0]
	}
}

// Kinds of pdfToken.
const (
	pdfOther = iota
	pdfString
	pdfArray // An array: text is its strings, a space where it moves far apart.
	pdfOperator
)

// pdfToken is a token of a content stream.
type pdfToken struct {
	kind int
	text string
}

// pdfLexer reads the tokens of a content stream.
type pdfLexer struct {
	s []byte
	i int
}

// next returns the next token, or false at the end.
func (l *pdfLexer) next() (pdfToken, bool) {
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case isPDFSpace(c):
			l.i++
		case c == '%':
			for l.i < len(l.s) && l.s[l.i] != '\n' && l.s[l.i] != '\r' {
				l.i++
			}
		case c == '(':
			return pdfToken{pdfString, l.literal()}, true
		case c == '<' && l.i+1 < len(l.s) && l.s[l.i+1] == '<':
			l.skipDict()
			return pdfToken{kind: pdfOther}, true
		case c == '<':
			return pdfToken{pdfString, l.hex()}, true
		case c == '[':
			return pdfToken{pdfArray, l.array()}, true
		case c == '/':
			l.i++
			l.word()
			return pdfToken{kind: pdfOther}, true
		case c == ']' || c == '>' || c == ')' || c == '{' || c == '}':
			l.i++
		default:
			w := l.word()
			if w == "" {
				l.i++
				continue
			}
			if (w[0] >= '0' && w[0] <= '9') || w[0] == '-' || w[0] == '+' || w[0] == '.' {
				return pdfToken{pdfOther, w}, true
			}
			if w == "BI" { // An inline image: skip to its end.
				if j := bytes.Index(l.s[l.i:], []byte("EI")); j >= 0 {
					l.i += j + 2
				} else {
					l.i = len(l.s)
				}
				continue
			}
			return pdfToken{pdfOperator, w}, true
		}
	}
	return pdfToken{}, false
}

// isPDFSpace reports whether c is white space in PDF.
func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

// isPDFDelimiter reports whether c ends a word.
func isPDFDelimiter(c byte) bool {
	return isPDFSpace(c) || strings.IndexByte("()<>[]{}/%", c) >= 0
}

// word reads a run of regular characters.
func (l *pdfLexer) word() string {
	start := l.i
	for l.i < len(l.s) && !isPDFDelimiter(l.s[l.i]) {
		l.i++
	}
	return string(l.s[start:l.i])
}

// literal reads a literal string, (…), with its escapes and nested
// parentheses, as WinAnsi text.
func (l *pdfLexer) literal() string {
	l.i++ // (
	var b []byte
	depth := 1
	for l.i < len(l.s) {
		c := l.s[l.i]
		l.i++
		switch c {
		case '\\':
			if l.i >= len(l.s) {
				return winAnsi(b)
			}
			e := l.s[l.i]
			l.i++
			switch e {
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case '\r', '\n': // A line continued.
				if e == '\r' && l.i < len(l.s) && l.s[l.i] == '\n' {
					l.i++
				}
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && l.i < len(l.s) && l.s[l.i] >= '0' && l.s[l.i] <= '7'; k++ {
						v = v*8 + int(l.s[l.i]-'0')
						l.i++
					}
					b = append(b, byte(v))
				} else {
					b = append(b, e)
				}
			}
		case '(':
			depth++
			b = append(b, c)
		case ')':
			depth--
			if depth == 0 {
				return winAnsi(b)
			}
			b = append(b, c)
		default:
			b = append(b, c)
		}
	}
	return winAnsi(b)
}

// hex reads a hexadecimal string, <…>, as WinAnsi text.
func (l *pdfLexer) hex() string { return winAnsi([]byte(l.hexRaw())) }

// hexRaw reads a hexadecimal string, <…>, as its bytes.
func (l *pdfLexer) hexRaw() string {
	l.i++ // <
	var b []byte
	var hi, n int
	for l.i < len(l.s) && l.s[l.i] != '>' {
		c := l.s[l.i]
		l.i++
		var v int
		switch {
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'a' && c <= 'f':
			v = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = int(c-'A') + 10
		default:
			continue
		}
		if n%2 == 0 {
			hi = v
		} else {
			b = append(b, byte(hi<<4|v))
		}
		n++
	}
	if n%2 == 1 {
		b = append(b, byte(hi<<4))
	}
	l.i++ // >
	return string(b)
}

// array reads an array, […], as TJ shows it: its strings, with a space
// where a number moves the next one far apart.
func (l *pdfLexer) array() string {
	l.i++ // [
	var sb strings.Builder
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == ']':
			l.i++
			return sb.String()
		case isPDFSpace(c):
			l.i++
		case c == '(':
			sb.WriteString(l.literal())
		case c == '<':
			sb.WriteString(l.hex())
		default:
			w := l.word()
			if w == "" {
				l.i++
				continue
			}
			var v float64
			if _, err := fmt.Sscan(w, &v); err == nil && v < -200 {
				sb.WriteByte(' ')
			}
		}
	}
	return sb.String()
}

// winAnsiHigh maps the bytes 0x80 to 0x9F of WinAnsiEncoding; the others
// are Latin-1's.
var winAnsiHigh = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

// winAnsi decodes b in WinAnsiEncoding; control characters other than
// white space are dropped.
func winAnsi(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c >= 0x80 && c <= 0x9f:
			if r := winAnsiHigh[c-0x80]; r != 0 {
				sb.WriteRune(r)
			}
		case c < 0x20 && c != '\n' && c != '\t' && c != '\r':
		case c < 0x80:
			sb.WriteByte(c)
		default:
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

// skipDict skips a dictionary, <<…>>, nested ones included.
func (l *pdfLexer) skipDict() {
	depth := 0
	for l.i < len(l.s) {
		switch {
		case l.s[l.i] == '(':
			l.literal()
			continue
		case l.i+1 < len(l.s) && l.s[l.i] == '<' && l.s[l.i+1] == '<':
			depth++
			l.i += 2
			continue
		case l.i+1 < len(l.s) && l.s[l.i] == '>' && l.s[l.i+1] == '>':
			depth--
			l.i += 2
			if depth == 0 {
				return
			}
			continue
		}
		l.i++
	}
}
