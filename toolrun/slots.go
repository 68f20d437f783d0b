package toolrun

import (
	"sync"
	"time"

	"github.com/quarryhq/quarry"
)

// The default caps of runs in progress at once, in one server.
const (
	DefaultRunsPerCaller = 8
	DefaultRunsPerTool   = 64
)

// SlotRetryAfter is what a run refused by a cap says to wait: runs end at
// any moment, so a second is enough to find out.
const SlotRetryAfter = time.Second

// slots caps the runs in progress at once in this process, per caller and
// per tool, so that one person (or one script) cannot hold the server's
// connections and a tool's server with long runs: one basic person once
// held 120 runs of 30 s at once. Each server counts its own runs; behind
// a load balancer, the caps are per replica.
type slots struct {
	perCaller, perTool int

	mu      sync.Mutex
	callers map[string]int
	tools   map[int64]int
}

func newSlots(perCaller, perTool int) *slots {
	return &slots{perCaller: perCaller, perTool: perTool, callers: map[string]int{}, tools: map[int64]int{}}
}

// take takes a slot for a run of tool by caller and returns the function
// that gives it back (call it once, when the run ends), or, past either
// cap, a 429 (quarry.ETOOMANY) saying which, with SlotRetryAfter.
func (s *slots) take(caller string, tool int64) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.callers[caller] >= s.perCaller:
		e := quarry.Errorf(quarry.ETOOMANY, "You have %d tool runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_CALLER): wait for one to end", s.perCaller)
		e.RetryAfter = SlotRetryAfter
		return nil, e
	case s.tools[tool] >= s.perTool:
		e := quarry.Errorf(quarry.ETOOMANY, "Tool %d has %d runs in progress, the most at once (QUARRY_TOOL_MAX_RUNS_PER_TOOL): try again shortly", tool, s.perTool)
		e.RetryAfter = SlotRetryAfter
		return nil, e
	}
	s.callers[caller]++
	s.tools[tool]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.callers[caller]--; s.callers[caller] == 0 {
				delete(s.callers, caller)
			}
			if s.tools[tool]--; s.tools[tool] == 0 {
				delete(s.tools, tool)
			}
		})
	}, nil
}

// Admit takes a slot for a run of tool by caller (a user's id: a
// person's tokens and sessions share theirs), under the policy's
// MaxRunsPerCaller and MaxRunsPerTool, and returns the function that
// gives it back when the run ends; past a cap, a 429 with Retry-After.
func (r *Runner) Admit(caller string, tool int64) (release func(), err error) {
	return r.slots.take(caller, tool)
}
