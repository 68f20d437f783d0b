package connector

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// The readers of the file connector: the text of the kinds of files it
// reads, each bounded in what it reads and what it returns.

// Limits of the readers.
const (
	// maxFileInput bounds what is read of one file: a file over it is a
	// failure of its document.
	maxFileInput = 64 << 20
)

// errTooMuchText is the error of a file whose text is over the limit.
var errTooMuchText = errors.New("its text is over the size a document may have")

// errFileTooLarge is the error of a file over maxFileInput.
var errFileTooLarge = &limitError{what: "the file", limit: maxFileInput}

// ExtractText returns the text of r, a file of kind (see quarry.FileKind), of at
// most maxText bytes (errTooMuchText past it); pdf reads a PDF (nil: a
// PDF is an error). A file that is not what its kind says is an error
// saying so.
func ExtractText(pdf *PDFReader, kind string, r io.Reader, maxText int) (string, error) {
	lr := newBoundedReader(r, maxFileInput, errFileTooLarge)
	out := &textBuffer{max: maxText}
	var err error
	switch kind {
	case quarry.FileKindText:
		err = copyText(out, lr)
	case quarry.FileKindHTML:
		var p *webPage
		if p, err = readHTML(lr); err == nil {
			err = out.WriteString(p.Text)
		}
	case quarry.FileKindCSV:
		err = csvText(out, lr)
	case quarry.FileKindPDF:
		var b []byte
		if b, err = io.ReadAll(lr); err == nil {
			err = pdfText(pdf, out, b)
		}
	case quarry.FileKindDOCX, quarry.FileKindPPTX, quarry.FileKindODT, quarry.FileKindODS, quarry.FileKindODP:
		err = officeText(out, lr, kind)
	case quarry.FileKindXLSX:
		err = xlsxText(out, lr)
	case quarry.FileKindRTF:
		err = rtfText(out, lr)
	case quarry.FileKindEPUB:
		err = epubText(out, lr)
	case quarry.FileKindEML:
		var d *imapDoc
		if d, err = readMessage(pdf, lr); err == nil {
			err = out.WriteString(messageText(d))
		}
	default:
		return "", fmt.Errorf("files of kind %q are not read", kind)
	}
	if err != nil {
		return "", err
	}
	return out.String(), nil
}

// textBuffer collects text up to max bytes.
type textBuffer struct {
	b   strings.Builder
	max int
}

func (t *textBuffer) WriteString(s string) error {
	if t.b.Len()+len(s) > t.max {
		return errTooMuchText
	}
	t.b.WriteString(s)
	return nil
}

func (t *textBuffer) String() string { return t.b.String() }

// copyText copies r as UTF-8 text (invalid bytes become U+FFFD; a byte
// order mark is dropped).
func copyText(out *textBuffer, r io.Reader) error {
	buf := make([]byte, 32<<10)
	var carry []byte
	first := true
	for {
		n, err := r.Read(buf)
		chunk := append(carry, buf[:n]...)
		carry = nil
		if first && len(chunk) >= 3 {
			chunk = bytes.TrimPrefix(chunk, []byte("\xef\xbb\xbf"))
			first = false
		}
		// Keep an incomplete rune at the end for the next read.
		if err == nil {
			if cut := incompleteTail(chunk); cut > 0 {
				carry = append([]byte(nil), chunk[len(chunk)-cut:]...)
				chunk = chunk[:len(chunk)-cut]
			}
		}
		if werr := out.WriteString(strings.ToValidUTF8(string(chunk), "\uFFFD")); werr != nil {
			return werr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// incompleteTail returns how many bytes at the end of b start a rune
// that is not complete yet.
func incompleteTail(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// csvText writes each record of a CSV file as a line of its fields
// separated by commas and spaces; a file that does not parse as CSV is
// kept as text.
func csvText(out *textBuffer, r io.Reader) error {
	var raw textBuffer
	raw.max = out.max * 2
	if err := copyText(&raw, r); err != nil {
		return err
	}
	cr := csv.NewReader(strings.NewReader(raw.String()))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	var lines textBuffer
	lines.max = out.max
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out.WriteString(lines.String())
		}
		if err != nil {
			return out.WriteString(raw.String())
		}
		if err := lines.WriteString(strings.Join(rec, ", ") + "\n"); err != nil {
			return err
		}
	}
}

// spool copies r to a temporary file, which the caller closes (it is
// removed already), and returns it with its size: a zip is read from one.
func spool(r io.Reader) (*os.File, int64, error) {
	tmp, err := os.CreateTemp("", "quarry-office-*")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(tmp.Name())
	size, err := io.Copy(tmp, r)
	if err != nil {
		tmp.Close()
		return nil, 0, err
	}
	return tmp, size, nil
}

// openZip spools r to a temporary file (closing it removes it) and opens
// it as a zip archive of at most 10,000 parts, the archive of what (a kind
// of file with its article, as "an EPUB") in errors.
func openZip(r io.Reader, what string) (*zip.Reader, *os.File, error) {
	tmp, size, err := spool(r)
	if err != nil {
		return nil, nil, err
	}
	zr, err := zip.NewReader(tmp, size)
	switch {
	case err != nil:
		err = fmt.Errorf("it is not %s file (not a zip archive)", what)
	case len(zr.File) > 10000:
		err = fmt.Errorf("it has %d parts, more than %s file the connector reads", len(zr.File), what)
	}
	if err != nil {
		tmp.Close()
		return nil, nil, err
	}
	return zr, tmp, nil
}

// officeText writes the text of a .docx (word/document.xml), a .pptx
// (ppt/slides/slideN.xml, in order) or an OpenDocument file (.odt, .ods,
// .odp: content.xml): a zip of XML parts, spooled to a temporary file to
// be read. No Go library of OpenDocument is kept up, so these few lines
// of encoding/xml read it (docs/decisions.md).
func officeText(out *textBuffer, r io.Reader, kind string) error {
	zr, tmp, err := openZip(r, "a "+kind)
	if err != nil {
		return err
	}
	defer tmp.Close()
	var parts []*zip.File
	for _, f := range zr.File {
		switch {
		case kind == quarry.FileKindDOCX && f.Name == "word/document.xml":
			parts = append(parts, f)
		case kind == quarry.FileKindPPTX && slideNumber(f.Name) > 0:
			parts = append(parts, f)
		case (kind == quarry.FileKindODT || kind == quarry.FileKindODS || kind == quarry.FileKindODP) && f.Name == "content.xml":
			parts = append(parts, f)
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("it is not a %s file (it has no %s)", kind, map[string]string{quarry.FileKindDOCX: "word/document.xml",
			quarry.FileKindPPTX: "slides", quarry.FileKindODT: "content.xml", quarry.FileKindODS: "content.xml", quarry.FileKindODP: "content.xml"}[kind])
	}
	read := xmlText
	if kind == quarry.FileKindODT || kind == quarry.FileKindODS || kind == quarry.FileKindODP {
		read = odfText
	}
	sort.Slice(parts, func(i, j int) bool { return slideNumber(parts[i].Name) < slideNumber(parts[j].Name) })
	for i, f := range parts {
		if i > 0 {
			if err := out.WriteString("\n"); err != nil {
				return err
			}
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("its part %s cannot be read", f.Name)
		}
		err = read(out, newBoundedReader(rc, maxFileInput, &limitError{what: "its part " + f.Name, limit: maxFileInput}))
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// slideNumber returns N of ppt/slides/slideN.xml, or 0.
func slideNumber(name string) int {
	rest, ok := strings.CutPrefix(name, "ppt/slides/slide")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSuffix(rest, ".xml"))
	if err != nil || !strings.HasSuffix(rest, ".xml") || n < 1 {
		return 0
	}
	return n
}

// xmlText writes the text runs of an Office XML part (w:t of WordprocessingML,
// a:t of DrawingML), a line per paragraph (w:p, a:p), tabs and breaks as
// they are.
func xmlText(out *textBuffer, r io.Reader) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("its XML does not parse")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				if err := out.WriteString("\t"); err != nil {
					return err
				}
			case "br", "cr":
				if err := out.WriteString("\n"); err != nil {
					return err
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				if err := out.WriteString("\n"); err != nil {
					return err
				}
			}
		case xml.CharData:
			if inText {
				if err := out.WriteString(string(t)); err != nil {
					return err
				}
			}
		}
	}
}

// odfText writes the text of an OpenDocument content.xml: what its body
// holds, a line per paragraph or heading (text:p, text:h; a spreadsheet's
// cells and a slide's frames are paragraphs too), text:tab as a tab,
// text:line-break as a line break and text:s as its spaces.
func odfText(out *textBuffer, r io.Reader) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	inBody := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("its XML does not parse")
		}
		var s string
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "body":
				inBody = true
			case "tab":
				s = "\t"
			case "line-break":
				s = "\n"
			case "s":
				n := 1
				for _, a := range t.Attr {
					if a.Name.Local == "c" {
						if c, err := strconv.Atoi(a.Value); err == nil && c > 1 {
							n = min(c, 100)
						}
					}
				}
				s = strings.Repeat(" ", n)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "body":
				inBody = false
			case "p", "h":
				s = "\n"
			}
		case xml.CharData:
			s = string(t)
		}
		if inBody && s != "" {
			if err := out.WriteString(s); err != nil {
				return err
			}
		}
	}
}
