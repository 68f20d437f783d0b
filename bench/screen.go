package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/quarryhq/quarry/internal/progress"
)

// screen shows how far seeding, preparing and loading have come: one line
// rewritten in place on a terminal, plain lines otherwise.
type screen struct {
	out   *progress.Writer
	mu    sync.Mutex
	last  time.Time // When the line in place was last drawn.
	step  int       // Last tenth printed by fraction, off a terminal.
	label string
}

func newScreen(w io.Writer) *screen {
	return &screen{out: progress.NewWriter(w)}
}

// line prints a line of its own.
func (p *screen) line(s string) { p.out.Println(s) }

// end finishes the line in place, if any.
func (p *screen) end() { p.out.End() }

// inPlace draws s as the line in place, at most every 100 ms unless force.
func (p *screen) inPlace(s string, force bool) {
	p.mu.Lock()
	now := time.Now()
	draw := force || now.Sub(p.last) >= 100*time.Millisecond
	if draw {
		p.last = now
	}
	p.mu.Unlock()
	if draw {
		p.out.Show(s)
	}
}

// count reports c for label (see fraction).
func (p *screen) count(label string, c progress.Count) {
	p.fraction(label, int(c.Done), int(c.Total))
}

// fraction reports done of total for label: in place on a terminal, at
// each tenth otherwise.
func (p *screen) fraction(label string, done, total int) {
	pct := done * 100 / max(total, 1)
	if p.out.Terminal {
		p.inPlace(fmt.Sprintf("%s: %3d%% (%d/%d)", label, pct, done, total), done >= total)
		if done >= total {
			p.end()
		}
		return
	}
	p.mu.Lock()
	if label != p.label {
		p.label, p.step = label, 0
	}
	tenth := pct / 10
	print := tenth > p.step
	if print {
		p.step = tenth
	}
	p.mu.Unlock()
	if print {
		p.line(fmt.Sprintf("%s: %d%% (%d/%d)", label, pct, done, total))
	}
}

// loading shows a phase's progress until the returned function is called.
func (p *screen) loading(name string, start time.Time, d time.Duration, ph *phase) (stop func()) {
	every := max(time.Second, d/10)
	if p.out.Terminal {
		every = 200 * time.Millisecond
	}
	show := func(final bool) {
		el := time.Since(start)
		n := ph.done.Load()
		s := fmt.Sprintf("loading the %s: %s/%s, %d requests, %.0f req/s, %d errors",
			name, min(el, d).Round(100*time.Millisecond), d, n, float64(n)/el.Seconds(), ph.errs.total.Load())
		if p.out.Terminal {
			p.inPlace(s, true)
			if final {
				p.end()
			}
		} else {
			p.line(s)
		}
	}
	if !p.out.Terminal {
		p.line(fmt.Sprintf("loading the %s for %s", name, d))
	}
	stopTicking := progress.Tick(every, func() {
		if time.Since(start) < d { // The last line is stop's.
			show(false)
		}
	})
	return func() {
		stopTicking()
		show(true)
	}
}
