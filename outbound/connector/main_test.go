package connector

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the PDF reader's compiled module between runs of the
// tests and the fuzzing's workers (CachePDFReader), so that each does not
// compile it again.
func TestMain(m *testing.M) {
	CachePDFReader(filepath.Join(os.TempDir(), "quarry-test-pdfium-cache"))
	os.Exit(m.Run())
}
