// Package progress is how Quarry's long operations say how far they have
// come: a backup, a key rotation, a check of every secret, seeding a bench
// database and loading it. Each reports a Count; Tick samples one that
// cannot report by itself; a Writer shows progress on a terminal (one line
// rewritten in place) or in a log (plain lines).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Count is how far an operation has come: Done units (secrets, bytes,
// rows) of Total. Total may be an estimate that grows, but is never below
// Done; the last Count of an operation that finished has Done == Total.
type Count struct {
	Done, Total int64
}

// Tick calls fn every d (a second if d is not positive) from a goroutine
// of its own, until stop is called; stop returns once fn has returned for
// the last time.
func Tick(d time.Duration, fn func()) (stop func()) {
	if d <= 0 {
		d = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn()
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// Writer writes progress to a terminal, as one line rewritten in place,
// or elsewhere (a file, a pipe) as plain lines. Its methods may be called
// from several goroutines.
type Writer struct {
	w io.Writer
	// Terminal reports whether w is a terminal.
	Terminal bool
	mu       sync.Mutex
	width    int // Of the line in place; 0 when there is none.
}

// NewWriter returns a Writer to w, which is a terminal if it is an
// *os.File on a character device.
func NewWriter(w io.Writer) *Writer {
	p := &Writer{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.Terminal = true
		}
	}
	return p
}

// Println writes s as a line of its own, after the line in place if there
// is one.
func (p *Writer) Println(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
	fmt.Fprintln(p.w, s)
}

// Show writes s: on a terminal in place of the line in place, elsewhere
// as a line of its own.
func (p *Writer) Show(s string) {
	if !p.Terminal {
		p.Println(s)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pad := ""
	if n := p.width - len(s); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(s)
	fmt.Fprint(p.w, "\r"+s+pad)
}

// End ends the line in place, if there is one, so that what follows is
// written below it.
func (p *Writer) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
}

func (p *Writer) endLocked() {
	if p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}
