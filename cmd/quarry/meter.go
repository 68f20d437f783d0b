package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
)

// longRun holds the flags of the commands that run long (backup, restore,
// check, rotate-encryption-key): how often they print progress off a
// terminal, and, for those that read in batches, the rows per batch.
type longRun struct {
	every time.Duration
	batch int
}

// loadLongRun parses the flags of the long run name: -db, -progress-every,
// -batch if batchUsage is not empty (which must be positive), and those
// define adds (if not nil).
func loadLongRun(name string, args []string, env *environment, batchUsage string, define func(*flag.FlagSet)) (*Config, *longRun, error) {
	r := &longRun{}
	cfg, _, err := loadConfig(name, args, env, func(fs *flag.FlagSet) {
		if define != nil {
			define(fs)
		}
		if batchUsage != "" {
			fs.IntVar(&r.batch, "batch", store.DefaultRotateBatch, batchUsage)
		}
		fs.DurationVar(&r.every, "progress-every", 2*time.Second, "how often to print a progress line when the output is not a terminal")
	}, "db")
	if err == nil && batchUsage != "" && r.batch <= 0 {
		err = fmt.Errorf("-batch: %d: must be positive", r.batch)
	}
	return cfg, r, err
}

// meter returns a meter that prints to w as often as -progress-every says.
func (r *longRun) meter(w io.Writer) *meter { return newMeter(w, r.every) }

// meter prints how far a long run (a rotation, a check, a backup) has
// come, with its rate and the time left: a line rewritten in place on a
// terminal (every 100 ms), plain lines every so often otherwise.
type meter struct {
	out       *progress.Writer
	every     time.Duration
	first     time.Time // When the first batch was done,
	firstDone int64     // and how many it did.
	last      time.Time // When a line was last printed.
	lastLine  string    // A line not printed yet, on a terminal.
	bytes     bool      // It counts bytes, not secrets.
}

func newMeter(w io.Writer, every time.Duration) *meter {
	p := &meter{out: progress.NewWriter(w), every: every, last: time.Now()}
	if p.out.Terminal {
		p.every = 100 * time.Millisecond
	}
	return p
}

// update receives the progress of each batch.
func (p *meter) update(c progress.Count) {
	now := time.Now()
	if now.Sub(p.last) < p.every && c.Done < c.Total {
		p.lastLine = p.line(c, now)
		return
	}
	p.last = now
	p.print(p.line(c, now))
}

func (p *meter) line(c progress.Count, now time.Time) string {
	if p.firstDone == 0 {
		// The rate is measured from the first batch on: the checks before
		// it take their own time.
		p.first, p.firstDone = now, c.Done
	}
	elapsed := now.Sub(p.first).Seconds()
	done, total := c.Done, max(c.Total, c.Done)
	s := fmt.Sprintf("%d/%d secrets (%d%%)", done, total, done*100/max(total, 1))
	if p.bytes {
		s = fmt.Sprintf("%s/%s (%d%%)", mib(done), mib(total), done*100/max(total, 1))
	}
	if elapsed > 0 && done > p.firstDone {
		rate := float64(done-p.firstDone) / elapsed
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		if p.bytes {
			s += fmt.Sprintf(", %s/s, about %s left", mib(int64(rate)), left.Round(time.Second))
		} else {
			s += fmt.Sprintf(", %.0f/s, about %s left", rate, left.Round(time.Second))
		}
	}
	return s
}

// mib renders a number of bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func (p *meter) print(s string) {
	p.lastLine = ""
	p.out.Show(s)
}

// finish ends the progress output: on a terminal, the line in place is
// completed.
func (p *meter) finish() {
	if p.lastLine != "" && p.out.Terminal {
		p.print(p.lastLine)
	}
	p.out.End()
}
