package connector

import (
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// A small PDF text reader (docs/decisions.md, "The file connector"): it
// scans the file for objects and streams, without the cross-reference
// table, undoes FlateDecode, ASCII85Decode and ASCIIHexDecode, and reads
// the text-showing operators of content streams (Tj, TJ, ', "), a line
// per text line. A string shown in a font with a ToUnicode map (as
// LibreOffice and most office suites write subset fonts) is decoded by
// that map; others are read as WinAnsi (the standard 14 fonts'
// encoding). Fonts are told apart by the names resources give them in the
// whole file, not page by page; object streams (PDF 1.5) are not read, so
// fonts defined only there are read as WinAnsi. An encrypted PDF is
// refused.

// pdfText writes the text of the PDF file b.
func pdfText(out *textBuffer, b []byte) error {
	if !bytes.HasPrefix(bytes.TrimLeft(b, "\x00\t\r\n "), []byte("%PDF-")) {
		return errors.New("it is not a PDF file")
	}
	if bytes.Contains(b, []byte("/Encrypt")) {
		return errors.New("it is an encrypted PDF, which the file connector does not read")
	}
	objs := pdfObjects(b)
	type stream struct {
		obj     int
		dict    []byte
		content []byte
	}
	var streams []stream
	inflated := 0
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte("stream"))
		if i < 0 {
			break
		}
		i += off
		// "endstream" also holds "stream": skip it.
		if i >= 3 && string(b[i-3:i]) == "end" {
			off = i + 6
			continue
		}
		dict := b[max(0, i-2048):i]
		if j := bytes.LastIndex(dict, []byte("<<")); j >= 0 {
			dict = dict[j:]
		}
		body := b[i+6:]
		body = bytes.TrimPrefix(body, []byte("\r"))
		body = bytes.TrimPrefix(body, []byte("\n"))
		end := bytes.Index(body, []byte("endstream"))
		if end < 0 {
			break
		}
		data := body[:end]
		off = len(b) - len(body) + end + 9
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
		streams = append(streams, stream{obj: objs.at(i), dict: dict, content: content})
	}
	// Fonts with a ToUnicode map, by the names resources give them.
	cmapObjs := objs.toUnicode()
	cmaps := map[int]*pdfCMap{}
	for _, st := range streams {
		if _, ok := cmapObjs[st.obj]; ok && st.obj >= 0 {
			cmaps[st.obj] = parseCMap(st.content)
		}
	}
	fonts := map[string]*pdfCMap{}
	for name, obj := range objs.fontNames(cmapObjs) {
		if c := cmaps[obj]; c != nil {
			fonts[name] = c
		}
	}
	for _, st := range streams {
		if _, ok := cmaps[st.obj]; ok {
			continue
		}
		if err := pdfContentText(out, st.content, fonts); err != nil {
			return err
		}
	}
	return nil
}

// pdfObjectTable is where each object ("N G obj") of a PDF starts.
type pdfObjectTable struct {
	b    []byte
	nums []int
	offs []int
}

var (
	pdfObjRE       = regexp.MustCompile(`(\d+)\s+\d+\s+obj\b`)
	pdfToUnicodeRE = regexp.MustCompile(`/ToUnicode\s+(\d+)\s+\d+\s+R`)
	pdfRefRE       = regexp.MustCompile(`/([A-Za-z0-9_.+-]+)\s+(\d+)\s+\d+\s+R`)
)

// pdfObjects finds the objects of b by scanning (no cross-reference
// table).
func pdfObjects(b []byte) *pdfObjectTable {
	t := &pdfObjectTable{b: b}
	for _, m := range pdfObjRE.FindAllSubmatchIndex(b, 100000) {
		n, err := strconv.Atoi(string(b[m[2]:m[3]]))
		if err != nil {
			continue
		}
		t.nums = append(t.nums, n)
		t.offs = append(t.offs, m[0])
	}
	return t
}

// at returns the number of the object offset off is in, or -1.
func (t *pdfObjectTable) at(off int) int {
	i := sort.SearchInts(t.offs, off+1) - 1
	if i < 0 {
		return -1
	}
	return t.nums[i]
}

// body returns the text of object i of the table (up to the next one).
func (t *pdfObjectTable) body(i int) []byte {
	end := len(t.b)
	if i+1 < len(t.offs) {
		end = t.offs[i+1]
	}
	return t.b[t.offs[i]:end]
}

// toUnicode returns the fonts that have a ToUnicode map: the map's
// object by the font's.
func (t *pdfObjectTable) toUnicode() map[int]int {
	out := map[int]int{}
	for i := range t.offs {
		body := t.body(i)
		if m := pdfToUnicodeRE.FindSubmatch(body); m != nil {
			if n, err := strconv.Atoi(string(m[1])); err == nil {
				out[n] = t.nums[i]
				out[-t.nums[i]-1] = n // The font, for fontNames.
			}
		}
	}
	return out
}

// fontNames returns the ToUnicode map's object of each font name that
// resources give a font with one (cmapObjs, from toUnicode). Names are
// the whole file's: where two pages give one name to two fonts, the first
// counts.
func (t *pdfObjectTable) fontNames(cmapObjs map[int]int) map[string]int {
	out := map[string]int{}
	for i := range t.offs {
		for _, m := range pdfRefRE.FindAllSubmatch(t.body(i), 1000) {
			n, err := strconv.Atoi(string(m[2]))
			if err != nil {
				continue
			}
			if c, ok := cmapObjs[-n-1]; ok {
				if _, seen := out[string(m[1])]; !seen {
					out[string(m[1])] = c
				}
			}
		}
	}
	return out
}

// maxCMapCodes bounds the codes a ToUnicode map holds (ranges can name
// billions).
const maxCMapCodes = 1 << 17

// pdfCMap is a ToUnicode map: the text of each code, and the codes' length.
type pdfCMap struct {
	width int // Bytes per code.
	text  map[string]string
}

// parseCMap reads a ToUnicode CMap's codespace, bfchar and bfrange
// entries.
func parseCMap(b []byte) *pdfCMap {
	c := &pdfCMap{width: 1, text: map[string]string{}}
	l := &pdfLexer{s: b}
	var hexes []pdfToken
	section := ""
	for {
		t, ok := l.next()
		if !ok {
			return c
		}
		switch {
		case t.kind == pdfString && t.hex:
			hexes = append(hexes, t)
		case t.kind == pdfArray && section == "bfrange" && len(hexes) == 2:
			lo, hi := codeValue(hexes[0].text), codeValue(hexes[1].text)
			for k, part := range t.parts {
				if lo+k > hi || len(c.text) >= maxCMapCodes {
					break
				}
				c.text[codeString(lo+k, len(hexes[0].text))] = utf16Text(part.raw)
			}
			hexes = hexes[:0]
		case t.kind == pdfOperator:
			switch t.text {
			case "begincodespacerange":
				section = "codespace"
			case "endcodespacerange":
				if len(hexes) > 0 && len(hexes[0].text) > 0 {
					c.width = len(hexes[0].text)
				}
			case "beginbfchar":
				section = "bfchar"
			case "endbfchar":
				for k := 0; k+1 < len(hexes); k += 2 {
					c.text[hexes[k].text] = utf16Text(hexes[k+1].text)
				}
			case "beginbfrange":
				section = "bfrange"
			case "endbfrange":
				for k := 0; k+2 < len(hexes); k += 3 {
					lo, hi, dst := codeValue(hexes[k].text), codeValue(hexes[k+1].text), []rune(utf16Text(hexes[k+2].text))
					if len(dst) == 0 {
						continue
					}
					for v := lo; v <= hi && len(c.text) < maxCMapCodes; v++ {
						r := append([]rune{}, dst...)
						r[len(r)-1] += rune(v - lo)
						c.text[codeString(v, len(hexes[k].text))] = string(r)
					}
				}
			}
			hexes = hexes[:0]
		}
	}
}

// codeValue reads a code's bytes as a number.
func codeValue(s string) int {
	v := 0
	for i := 0; i < len(s) && i < 4; i++ {
		v = v<<8 | int(s[i])
	}
	return v
}

// codeString writes code v as n bytes.
func codeString(v, n int) string {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return string(b)
}

// utf16Text decodes UTF-16BE bytes.
func utf16Text(s string) string {
	u := make([]uint16, 0, len(s)/2)
	for i := 0; i+1 < len(s); i += 2 {
		u = append(u, uint16(s[i])<<8|uint16(s[i+1]))
	}
	return string(utf16.Decode(u))
}

// decode returns the text of a string shown in this map's font.
func (c *pdfCMap) decode(raw string) string {
	var sb strings.Builder
	for i := 0; i+c.width <= len(raw); i += c.width {
		sb.WriteString(c.text[raw[i:i+c.width]])
	}
	return sb.String()
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
func pdfContentText(out *textBuffer, s []byte, fonts map[string]*pdfCMap) error {
	var operands []pdfToken
	var font *pdfCMap // The current font's map; nil: WinAnsi.
	decode := func(raw string) string {
		if font != nil {
			return font.decode(raw)
		}
		return winAnsi([]byte(raw))
	}
	line := false // Whether the current line has text.
	newline := func() error {
		if line {
			line = false
			return out.WriteString("\n")
		}
		return nil
	}
	show := func(t string) error {
		if t == "" || (!line && strings.TrimSpace(t) == "") {
			return nil // No line starts with white space alone.
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
		case "Tf":
			if n := len(operands); n >= 2 && operands[n-2].kind == pdfName {
				font = fonts[operands[n-2].text]
			}
		case "Tj":
			if n := len(operands); n > 0 && operands[n-1].kind == pdfString {
				err = show(decode(operands[n-1].text))
			}
		case "'", "\"":
			if err = newline(); err == nil && len(operands) > 0 && operands[len(operands)-1].kind == pdfString {
				err = show(decode(operands[len(operands)-1].text))
			}
		case "TJ":
			if n := len(operands); n > 0 && operands[n-1].kind == pdfArray {
				var sb strings.Builder
				for _, p := range operands[n-1].parts {
					if p.space {
						sb.WriteByte(' ')
					} else {
						sb.WriteString(decode(p.raw))
					}
				}
				err = show(sb.String())
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
	pdfArray // An array: its strings, and a space where it moves far apart.
	pdfOperator
	pdfName
)

// pdfToken is a token of a content stream: a string's text is its bytes,
// as written (decoded by the font it is shown in).
type pdfToken struct {
	kind  int
	text  string
	hex   bool      // A string written <…>.
	parts []pdfPart // An array's.
}

// pdfPart is a string of an array, or a wide gap.
type pdfPart struct {
	raw   string
	space bool
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
			return pdfToken{kind: pdfString, text: l.literal()}, true
		case c == '<' && l.i+1 < len(l.s) && l.s[l.i+1] == '<':
			l.skipDict()
			return pdfToken{kind: pdfOther}, true
		case c == '<':
			return pdfToken{kind: pdfString, text: l.hexRaw(), hex: true}, true
		case c == '[':
			return pdfToken{kind: pdfArray, parts: l.array()}, true
		case c == '/':
			l.i++
			return pdfToken{kind: pdfName, text: l.word()}, true
		case c == ']' || c == '>' || c == ')' || c == '{' || c == '}':
			l.i++
		default:
			w := l.word()
			if w == "" {
				l.i++
				continue
			}
			if (w[0] >= '0' && w[0] <= '9') || w[0] == '-' || w[0] == '+' || w[0] == '.' {
				return pdfToken{kind: pdfOther, text: w}, true
			}
			if w == "BI" { // An inline image: skip to its end.
				if j := bytes.Index(l.s[l.i:], []byte("EI")); j >= 0 {
					l.i += j + 2
				} else {
					l.i = len(l.s)
				}
				continue
			}
			return pdfToken{kind: pdfOperator, text: w}, true
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
// parentheses, as its bytes.
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
				return string(b)
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
				return string(b)
			}
			b = append(b, c)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

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

// array reads an array, […], as TJ shows it: its strings, with a gap
// where a number moves the next one far apart.
func (l *pdfLexer) array() []pdfPart {
	l.i++ // [
	var parts []pdfPart
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == ']':
			l.i++
			return parts
		case isPDFSpace(c):
			l.i++
		case c == '(':
			parts = append(parts, pdfPart{raw: l.literal()})
		case c == '<':
			parts = append(parts, pdfPart{raw: l.hexRaw()})
		default:
			w := l.word()
			if w == "" {
				l.i++
				continue
			}
			if v, err := strconv.ParseFloat(w, 64); err == nil && v < -200 {
				parts = append(parts, pdfPart{space: true})
			}
		}
		if len(parts) > 1<<16 {
			parts = parts[:1<<16]
		}
	}
	return parts
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
