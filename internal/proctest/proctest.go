// Package proctest starts the child processes that tests run beside
// Quarry (an OpenID Provider in Node.js, the Lucene peer, the container
// image's binary) and reads from their output what the test needs to
// reach them. It runs on Linux, as the tests that use it do.
package proctest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/syncbuf"
)

// Process is a child process that Start started.
type Process struct {
	cmd    *exec.Cmd
	out    *os.File // The read end of its standard output.
	stderr syncbuf.Buffer
	done   chan struct{} // Closed once cmd's Wait returned, err set.
	err    error
	stop   sync.Once
}

// Start starts cmd and returns what it announces: the first match of want
// in a line of its standard output (want's first group when it has one),
// within timeout. The test fails, with cmd's standard error, when cmd
// cannot start, exits or says nothing that matches. cmd and the
// processes it started are killed at the end of the test, or earlier by
// Stop; its standard output is read until then, so that it never blocks
// on a full pipe. cmd's Stdout and Stderr must be unset.
func Start(t testing.TB, cmd *exec.Cmd, want *regexp.Regexp, timeout time.Duration) (found string, p *Process) {
	t.Helper()
	p = &Process{cmd: cmd, done: make(chan struct{})}
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = out
	cmd.Stdout, cmd.Stderr = w, &p.stderr
	// cmd leads a process group of its own, which Stop kills whole: a
	// process it started would otherwise outlive it, holding its
	// standard error open, and Wait would wait for it (WaitDelay bounds
	// that wait if it left the group).
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	err = cmd.Start()
	w.Close() // The child has its own.
	if err != nil {
		out.Close()
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	matches, read := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewScanner(out)
		for sent := false; s.Scan(); {
			if m := want.FindStringSubmatch(s.Text()); m != nil && !sent {
				matches <- m[len(m)-1]
				sent = true
			}
		}
		io.Copy(io.Discard, out) // Past a line too long to scan, until Stop closes out.
	}()
	select {
	case found = <-matches:
		return found, p
	case <-p.done:
		// What it said before it ended may still be in the pipe.
		select {
		case found = <-matches:
			return found, p
		case <-read:
			select {
			case found = <-matches:
				return found, p
			default:
			}
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("%s exited (%v) without saying %s; its standard error:\n%s", cmd.Path, p.err, want, p.Stderr())
	case <-time.After(timeout):
		p.Stop()
		t.Fatalf("%s said nothing that matches %s within %s; its standard error:\n%s", cmd.Path, want, timeout, p.Stderr())
	}
	return "", p
}

// Stop kills the process and those it started (its process group, even
// when the process itself has ended), waits for it to end and stops
// reading its output. Only its first call does anything.
func (p *Process) Stop() {
	p.stop.Do(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // ESRCH when none is left.
		<-p.done
		p.out.Close()
	})
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process ended (exec.Cmd.Wait's error), once Done is
// closed.
func (p *Process) Err() error { return p.err }

// Stderr returns what the process wrote to its standard error so far.
func (p *Process) Stderr() string { return p.stderr.String() }
