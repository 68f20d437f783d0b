package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Start returns the group of the first line that matches and keeps
// reading what follows (4 MiB, more than a pipe holds: the child gets
// past it and says so in a file); Stop ends the child.
func TestStart(t *testing.T) {
	done := filepath.Join(t.TempDir(), "done")
	cmd := exec.Command("sh", "-c", `echo starting; echo "listening on http://127.0.0.1:1"; echo "listening on http://127.0.0.1:2"; head -c 4194304 /dev/zero; echo; touch "$0"; sleep 60`, done)
	found, p := Start(t, cmd, regexp.MustCompile(`^listening on (\S+)$`), time.Minute)
	if found != "http://127.0.0.1:1" {
		t.Errorf("found %q", found)
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the child is still writing its output: nobody reads it")
		}
	}
	p.Stop()
	if cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Errorf("the child was not killed: %v", cmd.ProcessState)
	}
	p.Stop() // Again: nothing more.
	if _, ok := <-p.Done(); ok {
		t.Error("Done is not closed")
	}
}
