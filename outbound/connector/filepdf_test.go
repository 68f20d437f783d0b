package connector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/quarryhq/quarry"
)

// pdfWords returns the words of s: runs of letters and digits,
// lower-cased.
func pdfWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// pdfFidelity returns the share of source's words that got holds, each
// word counted as often as source has it and at most as often as got
// has it: 1 when every word of the source was recovered.
func pdfFidelity(source, got string) float64 {
	have := map[string]int{}
	for _, w := range pdfWords(got) {
		have[w]++
	}
	src := pdfWords(source)
	found := 0
	for _, w := range src {
		if have[w] > 0 {
			have[w]--
			found++
		}
	}
	return float64(found) / float64(len(src))
}

// The PDFs of real producers in testdata/pdf (testdata/pdf/README.md)
// read with at least the fidelity measured when PDFium was chosen
// (docs/decisions.md): pdfTeX's ligatures ("fi", "fl", "ffi") and object
// streams, LibreOffice's subset fonts, Ghostscript's fonts, and PDFs
// encrypted with an empty password (RC4 and AES-256).
func TestPDFFidelity(t *testing.T) {
	source, err := os.ReadFile("testdata/pdf/source.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		min  float64
	}{
		{"pdftex.pdf", 0.99},
		{"pandoc-latex.pdf", 1},
		{"lo-writer.pdf", 1},
		{"groff-ps2pdf.pdf", 0.95},
		{"pdftex-encrypted-rc4.pdf", 0.99},
		{"lo-encrypted-aes256.pdf", 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata/pdf", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text, err := ExtractText(testPDF, quarry.FileKindPDF, f, 1<<20)
			if err != nil {
				t.Fatalf("ExtractText: %v", err)
			}
			if got := pdfFidelity(string(source), text); got < tc.min {
				t.Errorf("fidelity %.3f, want at least %.3f; the text is:\n%s", got, tc.min, text)
			}
			for _, w := range []string{"office", "finds", "flagstone", "affluent", "efficient", "waffles", "fluffy"} {
				if !strings.Contains(strings.ToLower(text), w) {
					t.Errorf("the text has no %q (a ligature lost?):\n%s", w, text)
				}
			}
		})
	}
}
