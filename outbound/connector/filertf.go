package connector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/transform"
)

// The RTF reader: no Go library of RTF is kept up (the few there are have
// no users and read a subset), so these lines read RTF 1.9.1 to its text
// (docs/decisions.md).

// rtfMaxDepth bounds how deep an RTF file's groups may nest.
const rtfMaxDepth = 1000

// rtfSkipped are the destinations whose groups hold no text of the
// document: tables, metadata, pictures, objects' data, field
// instructions, headers and footers. A group of any destination marked
// \* is skipped too (the spec's rule for destinations a reader does not
// know).
var rtfSkipped = map[string]bool{
	"fonttbl": true, "colortbl": true, "stylesheet": true, "info": true, "pict": true,
	"objdata": true, "themedata": true, "colorschememapping": true, "datastore": true, "latentstyles": true,
	"listtable": true, "listoverridetable": true, "rsidtbl": true, "generator": true, "xmlnstbl": true,
	"fldinst": true, "filetbl": true, "revtbl": true, "pgdsctbl": true, "header": true, "footer": true,
	"headerl": true, "headerr": true, "headerf": true, "footerl": true, "footerr": true, "footerf": true,
	"ftnsep": true, "ftnsepc": true, "aftnsep": true, "aftnsepc": true, "xe": true, "tc": true, "txe": true,
	"bkmkstart": true, "bkmkend": true, "userprops": true, "mmathPr": true, "docvar": true, "private": true,
}

// rtfWords are the control words that stand for text.
var rtfWords = map[string]string{
	"par": "\n", "line": "\n", "sect": "\n", "page": "\n", "row": "\n", "tab": "\t", "cell": "\t", "nestcell": "\t",
	"emdash": "\u2014", "endash": "\u2013", "bullet": "\u2022", "lquote": "\u2018", "rquote": "\u2019",
	"ldblquote": "\u201c", "rdblquote": "\u201d", "emspace": " ", "enspace": " ", "qmspace": " ",
}

// rtfCharsets are the code pages of RTF's \fcharset values.
var rtfCharsets = map[int]int{
	0: 1252, 77: 10000, 128: 932, 129: 949, 134: 936, 136: 950, 161: 1253, 162: 1254, 163: 1258, 177: 1255,
	178: 1256, 186: 1257, 204: 1251, 222: 874, 238: 1250,
}

// rtfState is what a group holds and passes to the groups in it.
type rtfState struct {
	skip     bool // Its text is not the document's.
	fontTbl  bool // It is the font table.
	uc       int  // How many characters stand in for a \uN (\ucN).
	codePage int  // Of its \'hh bytes and 8-bit text: its font's, else the document's.
}

// rtfReader reads an RTF file's tokens to its text.
type rtfReader struct {
	in        []byte
	at        int
	out       *textBuffer
	text      []byte // Text read, not yet written to out.
	pending   []byte // Bytes of the code page, not yet decoded.
	pendingCP int
	highSurr  rune // A \uN high surrogate waiting for its low one.
	docCP     int
	fontCP    map[int]int // Code pages of the font table's fonts.
	curFont   int         // The font the font table describes.
	stack     []rtfState
	st        rtfState
	skipChars int // Characters still to skip after a \uN.
}

// rtfText writes the text of the RTF file r: its paragraphs and rows as
// lines, cells and tabs as tabs, \'hh bytes decoded in their font's code
// page (\fcharset) or the document's (\ansicpg), \uN as the character it
// names with its \ucN stand-ins skipped; the groups of rtfSkipped and of
// \* destinations are not read.
func rtfText(out *textBuffer, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(`{\rtf`)) {
		return errors.New("it is not an RTF file (it does not start with {\\rtf)")
	}
	p := &rtfReader{in: b, out: out, docCP: 1252, fontCP: map[int]int{}, st: rtfState{uc: 1, codePage: -1}}
	if err := p.read(); err != nil {
		return err
	}
	return p.flush()
}

// read reads the tokens to the end of the file or of its first group.
func (p *rtfReader) read() error {
	for p.at < len(p.in) {
		c := p.in[p.at]
		p.at++
		switch c {
		case '{':
			if len(p.stack) >= rtfMaxDepth {
				return fmt.Errorf("its groups are nested more than %d deep", rtfMaxDepth)
			}
			if err := p.decode(); err != nil {
				return err
			}
			p.stack = append(p.stack, p.st)
			p.skipChars = 0
		case '}':
			if err := p.decode(); err != nil {
				return err
			}
			if len(p.stack) == 0 {
				return nil
			}
			p.st = p.stack[len(p.stack)-1]
			p.stack = p.stack[:len(p.stack)-1]
			p.skipChars = 0
			if len(p.stack) == 0 {
				return nil // The end of the document's group.
			}
		case '\\':
			if err := p.control(); err != nil {
				return err
			}
		case '\r', '\n':
		default:
			if p.skipChars > 0 {
				p.skipChars--
				continue
			}
			if !p.st.skip {
				if err := p.addByte(c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// control reads what follows a backslash: a control symbol, \'hh, or a
// control word with its parameter.
func (p *rtfReader) control() error {
	if p.at >= len(p.in) {
		return nil
	}
	c := p.in[p.at]
	p.at++
	if !isASCIILetter(c) {
		if c == '\'' {
			if p.at+2 > len(p.in) {
				p.at = len(p.in)
				return nil
			}
			v, err := strconv.ParseUint(string(p.in[p.at:p.at+2]), 16, 8)
			p.at += 2
			if err != nil {
				return nil // Not hex: left out.
			}
			if p.skipChars > 0 {
				p.skipChars--
				return nil
			}
			if !p.st.skip {
				return p.addByte(byte(v))
			}
			return nil
		}
		if c == '*' {
			p.st.skip = true
			return nil
		}
		if p.skipChars > 0 {
			p.skipChars--
			return nil
		}
		var s string
		switch c {
		case '\\', '{', '}':
			s = string(c)
		case '~':
			s = "\u00a0"
		case '_':
			s = "\u2011"
		case '\r', '\n':
			s = "\n"
		}
		return p.write(s)
	}
	start := p.at - 1
	for p.at < len(p.in) && isASCIILetter(p.in[p.at]) && p.at-start < 32 {
		p.at++
	}
	word := string(p.in[start:p.at])
	param, hasParam := 0, false
	if p.at < len(p.in) && (p.in[p.at] == '-' || isASCIIDigit(p.in[p.at])) {
		ps := p.at
		p.at++
		for p.at < len(p.in) && isASCIIDigit(p.in[p.at]) && p.at-ps < 11 {
			p.at++
		}
		if n, err := strconv.Atoi(string(p.in[ps:p.at])); err == nil {
			param, hasParam = n, true
		}
	}
	if p.at < len(p.in) && p.in[p.at] == ' ' {
		p.at++ // The delimiter is part of the control word.
	}
	if word == "bin" {
		p.at += min(max(param, 0), len(p.in)-p.at) // Binary data, never text.
		return nil
	}
	if p.skipChars > 0 && word != "u" {
		p.skipChars--
		return nil
	}
	switch {
	case rtfSkipped[word]:
		p.st.skip = true
		p.st.fontTbl = word == "fonttbl"
	case word == "ansicpg" && hasParam:
		if err := p.decode(); err != nil {
			return err
		}
		p.docCP = param
	case word == "f" && hasParam:
		if p.st.fontTbl {
			p.curFont = param
			return nil
		}
		if err := p.decode(); err != nil {
			return err
		}
		if cp, ok := p.fontCP[param]; ok {
			p.st.codePage = cp
		} else {
			p.st.codePage = -1
		}
	case word == "fcharset" && hasParam && p.st.fontTbl:
		if cp, ok := rtfCharsets[param]; ok {
			p.fontCP[p.curFont] = cp
		}
	case word == "cpg" && hasParam && p.st.fontTbl:
		p.fontCP[p.curFont] = param
	case word == "uc" && hasParam:
		p.st.uc = min(max(param, 0), 10)
	case word == "u" && hasParam:
		if err := p.decode(); err != nil {
			return err
		}
		if !p.st.skip {
			if err := p.unicode(rune(int16(param))); err != nil {
				return err
			}
		}
		p.skipChars = p.st.uc
	default:
		if s, ok := rtfWords[word]; ok && !p.st.skip {
			return p.write(s)
		}
	}
	return nil
}

// unicode writes the character of a \uN (negative N are 16-bit values
// above 32767), joining a surrogate pair.
func (p *rtfReader) unicode(r rune) error {
	if r < 0 {
		r += 65536
	}
	if utf16.IsSurrogate(r) {
		if p.highSurr != 0 {
			if j := utf16.DecodeRune(p.highSurr, r); j != utf8.RuneError {
				p.highSurr = 0
				return p.write(string(j))
			}
		}
		if r < 0xDC00 {
			p.highSurr = r
			return nil
		}
		p.highSurr = 0
		return p.write("\uFFFD")
	}
	p.highSurr = 0
	return p.write(string(r))
}

// addByte adds a byte of the current code page, to decode with the
// others next to it (a character of a multi-byte code page is several
// \'hh); at most 4096 wait to be decoded.
func (p *rtfReader) addByte(c byte) error {
	cp := p.st.codePage
	if cp < 0 {
		cp = p.docCP
	}
	switch {
	case len(p.pending) > 0 && cp != p.pendingCP:
		if err := p.decode(); err != nil {
			return err
		}
	case len(p.pending) >= 4096:
		if err := p.decodeWhole(); err != nil {
			return err
		}
	}
	if c < 0x80 && len(p.pending) == 0 {
		p.text = append(p.text, c) // ASCII is ASCII in every code page read.
		if len(p.text) >= 4096 {
			return p.flush()
		}
		return nil
	}
	p.pendingCP = cp
	p.pending = append(p.pending, c)
	return nil
}

// decode writes the pending bytes decoded from their code page.
func (p *rtfReader) decode() error {
	if len(p.pending) == 0 {
		return nil
	}
	b, err := codePage(p.pendingCP).NewDecoder().Bytes(p.pending)
	p.pending = p.pending[:0]
	if err != nil {
		b = []byte("\uFFFD")
	}
	return p.writeBytes(b)
}

// decodeWhole writes the pending bytes decoded but for a character they
// end in the middle of, which stays pending.
func (p *rtfReader) decodeWhole() error {
	dst := make([]byte, 4*len(p.pending))
	nDst, nSrc, err := codePage(p.pendingCP).NewDecoder().Transform(dst, p.pending, false)
	if err != nil && !errors.Is(err, transform.ErrShortSrc) {
		return p.decode()
	}
	tail := append([]byte(nil), p.pending[nSrc:]...)
	p.pending = p.pending[:0]
	if err := p.writeBytes(dst[:nDst]); err != nil {
		return err
	}
	p.pending = append(p.pending, tail...)
	return nil
}

// write writes s, after the pending bytes.
func (p *rtfReader) write(s string) error {
	if err := p.decode(); err != nil {
		return err
	}
	if s == "" || p.st.skip {
		return nil
	}
	return p.writeBytes([]byte(s))
}

func (p *rtfReader) writeBytes(b []byte) error {
	p.text = append(p.text, b...)
	if len(p.text) >= 4096 {
		return p.flush()
	}
	return nil
}

// flush writes the text read to out.
func (p *rtfReader) flush() error {
	if err := p.decode(); err != nil {
		return err
	}
	s := strings.ToValidUTF8(string(p.text), "\uFFFD")
	p.text = p.text[:0]
	return p.out.WriteString(s)
}

// codePage returns the encoding of a Windows code page number; one
// Quarry does not know is read as Windows-1252.
func codePage(n int) encoding.Encoding {
	name := map[int]string{874: "windows-874", 932: "shift_jis", 936: "gbk", 949: "euc-kr", 950: "big5",
		10000: "macintosh", 20866: "koi8-r", 21866: "koi8-u", 65001: "utf-8"}[n]
	if n >= 1250 && n <= 1258 {
		name = "windows-" + strconv.Itoa(n)
	}
	switch n {
	case 437:
		return charmap.CodePage437
	case 850:
		return charmap.CodePage850
	case 866:
		return charmap.CodePage866
	}
	if e, err := htmlindex.Get(name); err == nil && name != "" {
		return e
	}
	return charmap.Windows1252
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }
