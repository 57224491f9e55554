package race

import (
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/concurrency"
)

// Result is the concurrency check of a target, its part of results.json:
// whether mysqlnd's counters stayed exact with 16 threads serving requests
// at once, on base and head, and which ThreadSanitizer reports head has
// that base has not.
type Result struct {
	Threads int `json:"threads"`
	// Counters are the counter runs, base first.
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
	Side  side.Side           `json:"side"`
	Build string              `json:"build"`
	Check CounterCheck        `json:"check"`
	Run   *concurrency.Result `json:"run"`
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

// CountersOf returns the counter run of a side, or nil.
func (r *Result) CountersOf(s side.Side) *Counters {
	for _, c := range r.Counters {
		if c.Side == s {
			return c
		}
	}
	return nil
}

// ChildSignals are the signals that ended the Apache children of side s's
// counters' server, and whether its log was read for them: without that,
// no crash is known of either way.
func (r *Result) ChildSignals(s side.Side) (signals []string, read bool) {
	c := r.CountersOf(s)
	if c == nil || c.Run == nil {
		return nil, false
	}
	return c.Run.ChildSignals, c.Run.ChildSignalsRead
}

// HeadCrashed says whether head's PHP crashed in the counters' server where
// base's, run the same and its log read, did not: a finding against head.
// A crash both have is base's own.
func (r *Result) HeadCrashed() bool {
	head, _ := r.ChildSignals(side.Head)
	base, read := r.ChildSignals(side.Base)
	return len(head) > 0 && read && len(base) == 0
}
