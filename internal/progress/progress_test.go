package progress_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/progress"
)

func TestTick(t *testing.T) {
	var n atomic.Int64
	stop := progress.Tick(time.Millisecond, func() { n.Add(1) })
	for n.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	stop()
	after := n.Load()
	time.Sleep(20 * time.Millisecond)
	if n.Load() != after {
		t.Errorf("fn was called after stop returned: %d, then %d", after, n.Load())
	}
}

func TestWriter(t *testing.T) {
	// Off a terminal: plain lines.
	var b bytes.Buffer
	p := progress.NewWriter(&b)
	if p.Terminal {
		t.Fatal("a bytes.Buffer is a terminal")
	}
	p.Show("1/3")
	p.Println("note")
	p.Show("3/3")
	p.End()
	if got, want := b.String(), "1/3\nnote\n3/3\n"; got != want {
		t.Errorf("off a terminal: %q, want %q", got, want)
	}

	// On a terminal: one line rewritten in place, padded over a longer
	// one, and ended before a line of its own and at the end.
	b.Reset()
	p = progress.NewWriter(&b)
	p.Terminal = true
	p.Show("seeding: 10%")
	p.Show("seeding: 100%")
	p.Show("done")
	p.Println("note")
	p.End()
	p.Show("x")
	p.End()
	p.End()
	if got, want := b.String(), "\rseeding: 10%\rseeding: 100%\rdone         \nnote\n\rx\n"; got != want {
		t.Errorf("on a terminal: %q, want %q", got, want)
	}
}
