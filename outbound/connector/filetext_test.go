package connector

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
)

// The test files in testdata/file were made by real tools: report.pdf by
// reportlab's canvas, handbook.docx by python-docx, deck.pptx and deck.pdf
// by LibreOffice Impress (from a flat ODP); with_meta.zip and
// without_meta.zip are Onyx v4.6.1's
// (backend/tests/integration/tests/indexing/file_connector/test_files).
// testdata/file/README.md says how to make them again.

func TestExtractText(t *testing.T) {
	for _, tc := range []struct {
		file, kind string
		want       []string // Lines the text must hold, in order.
	}{
		{"report.pdf", quarry.FileKindPDF, []string{"Quarterly report for the quarry", "Granite output rose by 12% (net), café closed.", "Second page: limestone"}},
		{"deck.pdf", quarry.FileKindPDF, []string{"Quarry roadmap", "Open the north face in spring", "Budget: crushers and trucks"}},
		{"handbook.docx", quarry.FileKindDOCX, []string{"Safety handbook", "Wear a helmet in the pit at all times.", "Blasting happens at noon on weekdays."}},
		{"deck.pptx", quarry.FileKindPPTX, []string{"Quarry roadmap", "Open the north face in spring", "Budget: crushers and trucks"}},
		{"letter.odt", quarry.FileKindODT, []string{"Safety letter", "Wear a helmet in the pit at all times.", "Blasting happens at noon on weekdays."}},
		{"sizes.ods", quarry.FileKindODS, []string{"stone", "size", "quarry", "granite", "12", "north face", "basalt"}},
		{"deck.odp", quarry.FileKindODP, []string{"Quarry roadmap", "Open the north face in spring", "Budget: crushers and trucks"}},
		{"sizes.xlsx", quarry.FileKindXLSX, []string{"sizes", "stone, size, quarry", "granite, 12, north face", "basalt, 7, east bench"}},
		{"guide.rtf", quarry.FileKindRTF, []string{"Field guide", "The crusher runs at dawn near the marble ledge.", "Café staff serve tea; камень means stone."}},
		{"tunnels.rtf", quarry.FileKindRTF, []string{"Tunnel notes", "Drilling", "The tunnel under the ridge opens in autumn; surveyors mark the basalt seam.", "Fans keep the gallery’s air fresh for the miners."}},
		{"guide.epub", quarry.FileKindEPUB, []string{"Field guide", "The crusher runs at dawn near the marble ledge.", "Café staff serve tea; камень means stone."}},
		{"tunnels.epub", quarry.FileKindEPUB, []string{"Tunnel notes", "Drilling", "The tunnel under the ridge opens in autumn; surveyors mark the basalt seam.", "Ventilation", "Fans keep the gallery’s air fresh for the miners."}},
		{"schedule.eml", quarry.FileKindEML, []string{"Blasting schedule for the east bench", "Hello crew,", "the detonators arrive on Thursday; keep clear of the east bench.", "report.pdf", "Quarterly report for the quarry", "Second page: limestone"}},
		{"onyx_metadata.json", quarry.FileKindText, []string{`"filename": "sample1.txt",`, `"file_display_name": "Basically Google",`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open("testdata/file/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text, err := ExtractText(testPDF, tc.kind, f, 1<<20)
			if err != nil {
				t.Fatalf("ExtractText: %v", err)
			}
			lines := strings.Split(text, "\n")
			at := 0
			for _, w := range tc.want {
				for at < len(lines) && strings.TrimSpace(lines[at]) != w {
					at++
				}
				if at == len(lines) {
					t.Fatalf("the text has no line %q (in order); it is:\n%s", w, text)
				}
			}
		})
	}
}

func TestExtractTextKinds(t *testing.T) {
	for _, tc := range []struct {
		name, kind, in, want string
	}{
		{"plain", quarry.FileKindText, "\xef\xbb\xbfhello\nworld", "hello\nworld"},
		{"invalid utf-8", quarry.FileKindText, "a\xffb", "a\uFFFDb"},
		{"html", quarry.FileKindHTML, "<html><head><title>T</title><script>x()</script></head><body><h1>Head</h1><p>Para <b>bold</b></p></body></html>", "Head\nPara bold"},
		{"csv", quarry.FileKindCSV, "name,size\n\"granite, grey\",12\n", "name, size\ngranite, grey, 12\n"},
		{"rtf destinations skipped", quarry.FileKindRTF, `{\rtf1\ansi{\fonttbl{\f0 Arial;}}{\colortbl;\red0;}{\stylesheet{\s0 Normal;}}{\info{\title T}{\author A}}` +
			`{\*\generator W;}{\header page head\par}{\pict\pngblip 89504e}{\field{\*\fldinst HYPERLINK "x"}{\fldrslt link}}\pard one {\b two}\par three\tab four\line five\~six\par}trailing`,
			"linkone two\nthree\tfour\nfive\u00a0six"},
		{"rtf code pages", quarry.FileKindRTF, `{\rtf1\ansi\ansicpg1251{\fonttbl{\f0\fcharset0 A;}{\f1\fcharset238 B;}{\f2\fcharset128 C;}}` +
			`\'ea\'e0\'ec\'e5\'ed\'fc {\f0 caf\'e9} {\f1 \'9ala} {\f2 \'82\'a0}\par}`, "камень café šla あ"},
		{"rtf unicode", quarry.FileKindRTF, `{\rtf1\ansi\u8220?quoted\u8221? {\uc2\u8212\'97\'97}{\uc0\u233 }\u-10179?\u-8704?\u-4064 ? x\u8217\'92s \\ \{ \}\bin3 {}x\par}`,
			"\u201cquoted\u201d \u2014\u00e9\U0001F600\uF020 x\u2019s \\ { }"},
		{"rtf 8-bit text", quarry.FileKindRTF, `{\rtf1\ansi ` + strings.Repeat("\xe9", 10000) + `}`, strings.Repeat("é", 10000)},
		// Shift JIS: a one-byte katakana first, so that the two-byte
		// characters after it straddle every 4,096th byte.
		{"rtf 8-bit multi-byte text", quarry.FileKindRTF, `{\rtf1\ansi\ansicpg932 ` + "\xb1" + strings.Repeat("\x93\xfa", 5000) + `}`, "ｱ" + strings.Repeat("日", 5000)},
		{"epub 2 spine order", quarry.FileKindEPUB, string(epub(map[string]string{
			"META-INF/container.xml": `<container><rootfiles><rootfile full-path="OPS/book.opf"/></rootfiles></container>`,
			"OPS/book.opf": `<package><manifest><item id="b" href="b%20two.html" media-type="application/xhtml+xml"/><item id="a" href="text/a.xhtml" media-type="application/xhtml+xml"/>` +
				`<item id="img" href="c.png" media-type="image/png"/></manifest><spine><itemref idref="a"/><itemref idref="img"/><itemref idref="b"/></spine></package>`,
			"OPS/text/a.xhtml": "<html><body><p>First chapter</p></body></html>", "OPS/b two.html": "<html><body><p>Second chapter</p></body></html>",
			"OPS/c.png": "PNG"})), "First chapter\n\nSecond chapter"},
		{"eml", quarry.FileKindEML, "Subject: Hello\r\nContent-Type: text/html\r\n\r\n<p>Body <b>text</b></p>\r\n", "Hello\n\nBody text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractText(testPDF, tc.kind, strings.NewReader(tc.in), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(got) != strings.TrimSpace(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExtractTextRefuses(t *testing.T) {
	var big bytes.Buffer
	zw := zip.NewWriter(&big)
	w, _ := zw.Create("word/document.xml")
	w.Write([]byte("<w:document><w:body><w:p><w:t>" + strings.Repeat("x", 5000) + "</w:t></w:p></w:body></w:document>"))
	zw.Close()
	for _, tc := range []struct {
		name, kind, in, want string
	}{
		{"not a pdf", quarry.FileKindPDF, "hello", "it is not a PDF file"},
		{"damaged pdf", quarry.FileKindPDF, "%PDF-1.4\ntrailer << /Encrypt 5 0 R >>", "it is not a PDF file that can be read (incorrect format)"},
		{"not a docx", quarry.FileKindDOCX, "hello", "it is not a docx file (not a zip archive)"},
		{"docx without its document", quarry.FileKindPPTX, big.String(), "it is not a pptx file (it has no slides)"},
		{"docx as odt", quarry.FileKindODT, big.String(), "it is not a odt file (it has no content.xml)"},
		{"not an xlsx", quarry.FileKindXLSX, "hello", "it is not an xlsx file that can be read (zip: not a valid zip file)"},
		{"not an rtf", quarry.FileKindRTF, "hello", `it is not an RTF file (it does not start with {\rtf)`},
		{"rtf too deep", quarry.FileKindRTF, `{\rtf1` + strings.Repeat("{", 1001), "its groups are nested more than 1000 deep"},
		{"rtf text over the limit", quarry.FileKindRTF, `{\rtf1 ` + strings.Repeat("x", 100) + `}`, errTooMuchText.Error()},
		{"not an epub", quarry.FileKindEPUB, "hello", "it is not an EPUB file (not a zip archive)"},
		{"docx as epub", quarry.FileKindEPUB, big.String(), "it is not an EPUB file (it has no META-INF/container.xml)"},
		{"epub without a package", quarry.FileKindEPUB, string(epub(map[string]string{"META-INF/container.xml": "<container/>"})),
			"it is not an EPUB file (its META-INF/container.xml names no package document)"},
		{"epub with a missing chapter", quarry.FileKindEPUB, string(epub(map[string]string{"META-INF/container.xml": `<container><rootfiles><rootfile full-path="p.opf"/></rootfiles></container>`,
			"p.opf": `<package><manifest><item id="a" href="../a.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="a"/></spine></package>`})),
			"its spine names ../a.xhtml, which it does not hold"},
		{"not a message", quarry.FileKindEML, "hello", "the message cannot be read: its header: malformed header line: hello"},
		{"text over the limit", quarry.FileKindText, strings.Repeat("x", 100), errTooMuchText.Error()},
		{"docx text over the limit", quarry.FileKindDOCX, big.String(), errTooMuchText.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ExtractText(testPDF, tc.kind, strings.NewReader(tc.in), 64)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
			if tc.want == errTooMuchText.Error() && !errors.Is(err, errTooMuchText) {
				t.Fatalf("not errTooMuchText: %v", err)
			}
		})
	}
}

// epub returns a zip of files, as an EPUB is.
func epub(files map[string]string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, _ := zw.Create(n)
		w.Write([]byte(files[n]))
	}
	zw.Close()
	return b.Bytes()
}

// FuzzFileText reads any bytes as each kind of file but PDF
// (FuzzPDFText, apart: PDFium's instance per file makes it slow): no
// panic, an answer within the limit of text, valid UTF-8.
func FuzzFileText(f *testing.F) {
	for _, name := range []string{"report.pdf", "deck.pdf", "handbook.docx", "deck.pptx", "letter.odt", "sizes.ods", "deck.odp", "sizes.xlsx",
		"guide.rtf", "guide.epub", "tunnels.epub", "schedule.eml"} {
		b, err := os.ReadFile("testdata/file/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Length 20 >>\nstream\nBT (a\\(b\\)) Tj [(c) -300 (d)] TJ ET\nendstream"))
	f.Add([]byte("name,size\n\"a\"\"b\",1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, kind := range []string{quarry.FileKindText, quarry.FileKindHTML, quarry.FileKindCSV, quarry.FileKindDOCX, quarry.FileKindPPTX,
			quarry.FileKindXLSX, quarry.FileKindODT, quarry.FileKindODS, quarry.FileKindODP, quarry.FileKindRTF, quarry.FileKindEPUB, quarry.FileKindEML} {
			checkExtracted(t, kind, in)
		}
	})
}

// FuzzRTFText reads any bytes as an RTF file, seeded with the RTF files
// of LibreOffice and pandoc: no panic, an answer within the limit of
// text, valid UTF-8.
func FuzzRTFText(f *testing.F) {
	for _, name := range []string{"guide.rtf", "tunnels.rtf"} {
		b, err := os.ReadFile("testdata/file/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{\rtf1\ansicpg932{\fonttbl{\f1\fcharset134 x;}}\f1\'b0\'a1\uc3\u-3{\bin2 }}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkExtracted(t, quarry.FileKindRTF, in)
	})
}

// A PDF encrypted with a password (not the empty one) is an error that
// says so.
func TestPDFPassword(t *testing.T) {
	f, err := os.Open("testdata/file/password.pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = ExtractText(testPDF, quarry.FileKindPDF, f, 1<<20)
	if want := "it is a PDF encrypted with a password, which the file connector does not read"; err == nil || err.Error() != want {
		t.Fatalf("got error %v, want %q", err, want)
	}
}

// A PDF needs a reader: with none, or with one closed, it is an error
// that says so, and the other kinds are still read.
func TestPDFReaderMissingOrClosed(t *testing.T) {
	b, err := os.ReadFile("testdata/file/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractText(nil, quarry.FileKindPDF, bytes.NewReader(b), 1<<20); err == nil || err.Error() != "no PDF reader is configured" {
		t.Errorf("no reader: %v", err)
	}
	if text, err := ExtractText(nil, quarry.FileKindText, strings.NewReader("plain"), 1<<20); err != nil || text != "plain" {
		t.Errorf("no reader, a text file: %q, %v", text, err)
	}
	closed := NewPDFReader("")
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractText(closed, quarry.FileKindPDF, bytes.NewReader(b), 1<<20); err == nil || err.Error() != "the PDF reader is closed" {
		t.Errorf("closed before its first PDF: %v", err)
	}
	// Closed after a read, while another reads, and twice.
	used := NewPDFReader(filepath.Join(os.TempDir(), "quarry-test-pdfium-cache"))
	if text, err := ExtractText(used, quarry.FileKindPDF, bytes.NewReader(b), 1<<20); err != nil || !strings.Contains(text, "limestone") {
		t.Fatalf("a reader's first PDF: %q, %v", text, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ExtractText(used, quarry.FileKindPDF, bytes.NewReader(b), 1<<20)
		done <- err
	}()
	if err := used.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := <-done; err != nil && err.Error() != "the PDF reader is closed" {
		t.Errorf("a read beside Close: %v", err) // Before it, read whole; after it, refused.
	}
	if _, err := ExtractText(used, quarry.FileKindPDF, bytes.NewReader(b), 1<<20); err == nil || err.Error() != "the PDF reader is closed" {
		t.Errorf("closed after its first PDF: %v", err)
	}
	if err := used.Close(); err != nil {
		t.Errorf("closed twice: %v", err)
	}
	if err := (*PDFReader)(nil).Close(); err != nil {
		t.Errorf("nil: %v", err)
	}
}

// FuzzPDFText reads any bytes as a PDF with PDFium, seeded with the PDFs
// of real producers: no panic, an answer within the limit of text, valid
// UTF-8.
func FuzzPDFText(f *testing.F) {
	for _, name := range []string{"file/report.pdf", "file/deck.pdf", "pdf/pdftex.pdf", "pdf/lo-writer.pdf", "pdf/groff-ps2pdf.pdf", "pdf/lo-encrypted-aes256.pdf"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkExtracted(t, quarry.FileKindPDF, in)
	})
}

// checkExtracted reads in as a file of kind, as the fuzz targets do: an
// error is an answer; text is within the limit (4,096 bytes) and UTF-8.
func checkExtracted(t *testing.T, kind string, in []byte) {
	t.Helper()
	text, err := ExtractText(testPDF, kind, bytes.NewReader(in), 4096)
	if err != nil {
		return
	}
	if len(text) > 4096 {
		t.Fatalf("%s: %d bytes of text, over the limit", kind, len(text))
	}
	if !utf8.ValidString(text) {
		t.Fatalf("%s: text %q is not UTF-8", kind, text)
	}
}

// TestEPUBBounds: an EPUB whose spine names one highly compressed part
// again and again stops at epubMaxInflated inflated, parts within it are
// read (each part's bytes count once against the whole: the bound was
// 64 MiB in all before), and a part larger than maxFileInput stops at
// that part, each with an error that says so.
func TestEPUBBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 256 MiB")
	}
	book := func(part string, times int) string {
		spine := strings.Repeat(`<itemref idref="a"/>`, times)
		return string(epub(map[string]string{
			"META-INF/container.xml": `<container><rootfiles><rootfile full-path="p.opf"/></rootfiles></container>`,
			"p.opf":                  `<package><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/></manifest><spine>` + spine + `</spine></package>`,
			"a.xhtml":                part,
		}))
	}
	comment := func(n int) string { return "<html><body><!--" + strings.Repeat("a", n) + "--><p>x</p></body></html>" }
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a part named again and again", book(comment(60<<20), 5), "what its documents inflate to is larger than 256 MiB, the most the connector reads"},
		{"parts within the bounds", book(comment(40<<20), 2), ""},
		{"one part too large", book(comment(maxFileInput), 1), "its part a.xhtml is larger than 64 MiB, the most the connector reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := ExtractText(testPDF, quarry.FileKindEPUB, strings.NewReader(tc.in), 1<<20)
			if tc.want == "" {
				if err != nil || text != "x\n\nx" {
					t.Fatalf("got %q, %v; want the text of both parts", text, err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
		})
	}
}
