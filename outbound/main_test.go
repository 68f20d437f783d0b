package outbound_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quarryhq/quarry/outbound/connector"
)

// testPDF is the tests' PDF reader, shared by their workers and
// connectors. It keeps its compiled module between runs of the tests, as
// the connector's tests do.
var testPDF = connector.NewPDFReader(filepath.Join(os.TempDir(), "quarry-test-pdfium-cache"))

// TestMain closes the tests' PDF reader once they ran.
func TestMain(m *testing.M) {
	code := m.Run()
	testPDF.Close()
	os.Exit(code)
}
