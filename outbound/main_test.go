package outbound_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quarryhq/quarry/outbound/connector"
)

// TestMain keeps the PDF reader's compiled module between runs of the
// tests (connector.CachePDFReader), as the connector's tests do.
func TestMain(m *testing.M) {
	connector.CachePDFReader(filepath.Join(os.TempDir(), "quarry-test-pdfium-cache"))
	os.Exit(m.Run())
}
