package connector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/fidelity"
)

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
	if n := len(fidelity.Words(string(source))); n < 100 {
		t.Fatalf("testdata/pdf/source.txt holds %d words: every reader would recover them", n)
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
			if got := fidelity.Of(string(source), text); got < tc.min {
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
