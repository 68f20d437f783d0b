package syncbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry/internal/syncbuf"
)

// TestConcurrentWrites writes from many goroutines while another reads
// (go test -race finds a missing lock), then checks that every line is
// there whole.
func TestConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = b.String()
				_ = b.Len()
			}
		}
	}()
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", i, j)
			}
		}()
	}
	wg.Wait()
	close(stop)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for i := range 8 {
		for j := range 100 {
			if l := fmt.Sprintf("writer %d line %d", i, j); !seen[l] {
				t.Errorf("line %q is missing or torn", l)
			}
		}
	}
	if b.Len() != len(b.String()) {
		t.Errorf("Len %d, String has %d bytes", b.Len(), len(b.String()))
	}
}
