package connector

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
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
		{"onyx_metadata.json", quarry.FileKindText, []string{`"filename": "sample1.txt",`, `"file_display_name": "Basically Google",`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open("testdata/file/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text, err := ExtractText(tc.kind, f, 1<<20)
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractText(tc.kind, strings.NewReader(tc.in), 1<<20)
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
		{"text over the limit", quarry.FileKindText, strings.Repeat("x", 100), errTooMuchText.Error()},
		{"docx text over the limit", quarry.FileKindDOCX, big.String(), errTooMuchText.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ExtractText(tc.kind, strings.NewReader(tc.in), 64)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
			if tc.want == errTooMuchText.Error() && !errors.Is(err, errTooMuchText) {
				t.Fatalf("not errTooMuchText: %v", err)
			}
		})
	}
}

// FuzzFileText reads any bytes as each kind of file but PDF
// (FuzzPDFText, apart: PDFium's instance per file makes it slow): no
// panic, an answer within the limit of text, valid UTF-8.
func FuzzFileText(f *testing.F) {
	for _, name := range []string{"report.pdf", "deck.pdf", "handbook.docx", "deck.pptx", "letter.odt", "sizes.ods", "deck.odp", "sizes.xlsx"} {
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
			quarry.FileKindXLSX, quarry.FileKindODT, quarry.FileKindODS, quarry.FileKindODP} {
			text, err := ExtractText(kind, bytes.NewReader(in), 4096)
			if err != nil {
				continue
			}
			if len(text) > 4096 {
				t.Fatalf("%s: %d bytes of text, over the limit", kind, len(text))
			}
			if !utf8.ValidString(text) {
				t.Fatalf("%s: text %q is not UTF-8", kind, text)
			}
		}
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
	_, err = ExtractText(quarry.FileKindPDF, f, 1<<20)
	if want := "it is a PDF encrypted with a password, which the file connector does not read"; err == nil || err.Error() != want {
		t.Fatalf("got error %v, want %q", err, want)
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
		text, err := ExtractText(quarry.FileKindPDF, bytes.NewReader(in), 4096)
		if err != nil {
			return
		}
		if len(text) > 4096 {
			t.Fatalf("%d bytes of text, over the limit", len(text))
		}
		if !utf8.ValidString(text) {
			t.Fatalf("text %q is not UTF-8", text)
		}
	})
}
