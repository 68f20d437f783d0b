// Package quality holds scripts/quality/run, the search quality measure on
// the Cranfield, CISI and Medline collections (Python and Java;
// docs/benchmarks.md, "Search quality"). Its only Go is this test, which runs the scorer's tests in go
// test: the measure itself needs Java and a server, and is run by hand.
package quality

import (
	"os"
	"os/exec"
	"testing"
)

// TestScorer runs test_quality.py: nDCG@10 and recall@100 on hand-made
// judgements and runs, and the parser on the collections' quirks.
func TestScorer(t *testing.T) {
	python := os.Getenv("QUARRY_PYTHON")
	if python == "" {
		python = "python3"
	}
	if _, err := exec.LookPath(python); err != nil {
		t.Skipf("%s not found: the scorer's tests need Python 3", python)
	}
	cmd := exec.Command(python, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s -m unittest: %v\n%s", python, err, out)
	}
}
