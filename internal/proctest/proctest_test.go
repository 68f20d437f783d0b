package proctest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Start returns the group of the first line that matches and keeps
// reading what follows (4 MiB in one line, more than a pipe holds and
// than a line may be: the child gets past it and says so in a file); Stop
// ends the child and the process it started.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `sleep 60 & echo $! > "$0/grandchild"
echo starting; echo "listening on http://127.0.0.1:1"; echo "listening on http://127.0.0.1:2"
head -c 4194304 /dev/zero; echo; touch "$0/done"; wait`, dir)
	found, p := Start(t, cmd, regexp.MustCompile(`^listening on (\S+)$`), time.Minute)
	if found != "http://127.0.0.1:1" {
		t.Errorf("found %q", found)
	}
	waitFor(t, "the child to get past its output (nobody reads it?)", func() bool {
		_, err := os.Stat(filepath.Join(dir, "done"))
		return err == nil
	})
	b, err := os.ReadFile(filepath.Join(dir, "grandchild"))
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Errorf("the child was not killed: %v", cmd.ProcessState)
	}
	waitFor(t, "the grandchild to be killed", func() bool { return gone(grandchild) })
	p.Stop() // Again: nothing more.
	if _, ok := <-p.Done(); ok {
		t.Error("Done is not closed")
	}
}

// A child that says what it has to say and exits at once is still heard.
func TestStartQuickExit(t *testing.T) {
	found, p := Start(t, exec.Command("sh", "-c", "echo 'listening on x'"), regexp.MustCompile(`^listening on (\S+)$`), time.Minute)
	if found != "x" {
		t.Errorf("found %q", found)
	}
	<-p.Done()
	if p.Err() != nil {
		t.Errorf("exit: %v", p.Err())
	}
}

// gone reports whether process pid has ended (a zombie has).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// waitFor waits up to 30 s for ok, and fails the test past it.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for start := time.Now(); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}
