package connector

import (
	"os"
	"path/filepath"
	"testing"
)

// testPDF is the tests' PDF reader. It keeps its compiled module between
// runs of the tests and the fuzzing's workers, so that each does not
// compile it again.
var testPDF = NewPDFReader(filepath.Join(os.TempDir(), "quarry-test-pdfium-cache"))

// TestMain closes the tests' PDF reader once they ran.
func TestMain(m *testing.M) {
	code := m.Run()
	testPDF.Close()
	os.Exit(code)
}
