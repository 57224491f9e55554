package race

import (
	"slices"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// Result is the concurrency check of a target, its part of results.json:
// whether mysqlnd's counters stayed exact with 16 threads serving requests
// at once, on base and head, and which ThreadSanitizer reports head has
// that base has not.
type Result struct {
	Threads int `json:"threads"`
	// OPcache is how the servers ran PHP's OPcache: "on: SETTINGS", or
	// "off: WHY"; empty in results written before it was recorded.
	OPcache string `json:"opcache,omitempty"`
	// Counters are the counter runs: base, head, then base and head again
	// with memory statistics on.
	Counters []*Counters `json:"counters,omitempty"`
	// TSan is the ThreadSanitizer comparison; nil when it could not run
	// (Errors says why).
	TSan *TSan `json:"tsan,omitempty"`
	// Errors are what kept the check from judging head: what could not be
	// measured, then what Judge found wrong with the check itself.
	Errors []string `json:"errors,omitempty"`
}

// Counters is one side's counter run and its verdict.
type Counters struct {
	Side  side.Side `json:"side"`
	Build string    `json:"build"`
	// Memory says mysqlnd.collect_memory_statistics was on: a phase of its
	// own, in which the mem_* counters, updated on every allocation
	// mysqlnd makes, move too.
	Memory bool                `json:"memory_statistics,omitempty"`
	Check  CounterCheck        `json:"check"`
	Run    *concurrency.Result `json:"run"`
}

// Name is what the check's messages call the run: "head counters", "head
// counters (memory statistics on)".
func (c *Counters) Name() string {
	if c.Memory {
		return string(c.Side) + " counters (memory statistics on)"
	}
	return string(c.Side) + " counters"
}

// TSan is the ThreadSanitizer part: both sides' TSan builds under the same
// concurrent load, and head's reports against base's.
type TSan struct {
	Requests int         `json:"requests"`
	Sides    []*TSanSide `json:"sides"`
	Diff     RaceDiff    `json:"diff"`
	// Touched are the files the change touches: a new race there (or in
	// ext/mysqlnd) fails the check.
	Touched []string `json:"touched,omitempty"`
}

// TSanSide is one side's TSan run.
type TSanSide struct {
	Side       side.Side `json:"side"`
	Build      string    `json:"build"`
	Reports    []Report  `json:"reports"`
	Log        string    `json:"log"` // the runtime's own output, relative to the run dir
	DurationMS int64     `json:"duration_ms"`
}

// CountersOf returns the counter run of a side with memory statistics off
// (as mysqlnd's default has them), or nil.
func (r *Result) CountersOf(s side.Side) *Counters { return r.counters(s, false) }

// MemoryOf returns the counter run of a side with memory statistics on, or
// nil.
func (r *Result) MemoryOf(s side.Side) *Counters { return r.counters(s, true) }

func (r *Result) counters(s side.Side, memory bool) *Counters {
	for _, c := range r.Counters {
		if c.Side == s && c.Memory == memory {
			return c
		}
	}
	return nil
}

// Unmoved are the counters that no run of head moved, not even within a
// request: the check says nothing of their updates.
func (r *Result) Unmoved() []string {
	var out []string
	runs := 0
	for _, c := range r.Counters {
		if c.Side != side.Head {
			continue
		}
		if runs == 0 {
			out = slices.Clone(c.Check.Unmoved)
		} else {
			out = slices.DeleteFunc(out, func(n string) bool { return !slices.Contains(c.Check.Unmoved, n) })
		}
		runs++
	}
	return out
}

// ChildSignals are the signals that ended the Apache children of side s's
// counters' servers (of every phase), and whether every one's log was read
// for them: without that, no crash is known of either way.
func (r *Result) ChildSignals(s side.Side) (signals []string, read bool) {
	runs := 0
	read = true
	for _, c := range r.Counters {
		if c.Side != s || c.Run == nil {
			continue
		}
		runs++
		for _, sig := range c.Run.ChildSignals {
			if !slices.Contains(signals, sig) {
				signals = append(signals, sig)
			}
		}
		read = read && c.Run.ChildSignalsRead
	}
	return signals, runs > 0 && read
}

// HeadCrashed says whether head's PHP crashed in the counters' server where
// base's, run the same and its log read, did not: a finding against head.
// A crash both have is base's own.
func (r *Result) HeadCrashed() bool {
	head, _ := r.ChildSignals(side.Head)
	base, read := r.ChildSignals(side.Base)
	return len(head) > 0 && read && len(base) == 0
}
