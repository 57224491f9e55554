// Package race is the concurrency check's one home: whether mysqlnd's
// process-wide counters grew by exactly what the requests did when 16
// threads served them at once (no lost update), and which ThreadSanitizer
// reports a head build has that its base has not. It owns the check's part
// of results.json (Result), Judge (every rule that fails the check, or
// says it could not judge), and the check's line in the verdict block and report
// section. The measurements come from workloads/concurrency; the pipeline's
// race stage gathers them into a Result.
package race

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CounterRun is what the check needs of a counter measurement.
type CounterRun struct {
	Requests      int              // served concurrently
	PerRequest    map[string]int64 // one request's delta of every counter, from serial runs
	Grew          map[string]int64 // every counter's growth under concurrency
	DBConnections int64            // what the database server counted in that time
	ConnsPerReq   int64            // database connections one request opens
	CPUs          int              // the server process's CPUs in the concurrent phase, 0 unknown
}

// A Counter is one counter that did not grow as the requests said.
type Counter struct {
	Name       string `json:"name"`
	PerRequest int64  `json:"per_request"`
	Expected   int64  `json:"expected"`
	Got        int64  `json:"got"`
	// Lost is Expected - Got: updates lost (negative: counted twice); of
	// a gauge, how far off it is, which is no count of updates.
	Lost int64 `json:"lost"`
}

// Gauge says whether the counter is a gauge, a level such as the
// connections open now that requests move up and back down, not a count
// of events: a gauge that is not what it should be is off by an amount,
// not short of lost updates. mysqlnd names its gauges active_*.
func (c Counter) Gauge() bool { return strings.HasPrefix(c.Name, "active_") }

// CounterCheck is the verdict on a counter run.
type CounterCheck struct {
	Requests int `json:"requests"`
	// Counters is how many counters one request moves: each must have grown
	// by exactly Requests times its delta.
	Counters int `json:"counters"`
	// Still is how many counters a request leaves as they were (gauges that
	// go up and back down, counters of other features); each must not have
	// moved either.
	Still int `json:"still"`
	// Unmoved names those of Still that nothing moved, not even within a
	// request: the check says nothing of their updates.
	Unmoved []string `json:"unmoved,omitempty"`
	// CPUs is how many CPUs the server could run on (0: unknown).
	CPUs int `json:"cpus,omitempty"`
	// Updates is how many counter updates the concurrent requests made, at
	// least: every request updates each of Counters once or more.
	Updates int64 `json:"updates"`
	// Off lists every counter that is not what it should be, by name.
	Off []Counter `json:"off,omitempty"`
	// Lost is the sum of the updates lost: of the counters off, not of
	// the gauges.
	Lost int64 `json:"lost"`
	// WorkError says the database server's own count of what was done does
	// not match the requests: the load, not mysqlnd, lost something.
	WorkError string `json:"work_error,omitempty"`
}

// Total is how many counters mysqlnd has (of this build).
func (c CounterCheck) Total() int { return c.Counters + c.Still }

// OneCPU says the concurrent phase ran on a single CPU: its threads took
// turns, and an increment of one instruction cannot lose an update there.
func (c CounterCheck) OneCPU() bool { return c.CPUs == 1 }

// oneCPUText is why a run on one CPU cannot pass.
const oneCPUText = "the server had 1 CPU, which cannot catch lost updates of single-instruction increments: the counter check needs 2 or more"

// Exact reports whether every counter is what the requests made it.
func (c CounterCheck) Exact() bool { return len(c.Off) == 0 && c.WorkError == "" }

// JudgeCounters compares every counter's growth under concurrency with
// Requests times its serial per-request delta. Connection counters need no
// special case: the workload opens its own connections in every request, so
// they too move by a fixed amount per request, whichever thread serves it;
// the database server's count of connections confirms how many requests
// really ran.
func JudgeCounters(run CounterRun) CounterCheck {
	c := CounterCheck{Requests: run.Requests, CPUs: run.CPUs}
	n := int64(run.Requests)
	if want := n * run.ConnsPerReq; run.DBConnections != want {
		c.WorkError = fmt.Sprintf("the database server counted %d connections, %d requests open %d", run.DBConnections, run.Requests, want)
	}
	names := slices.Sorted(maps.Keys(run.PerRequest))
	for name := range run.Grew {
		if _, ok := run.PerRequest[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		per := run.PerRequest[name]
		want, got := n*per, run.Grew[name]
		if per != 0 {
			c.Counters++
			c.Updates += n
		} else {
			c.Still++
			if got == 0 && !(Counter{Name: name}).Gauge() {
				c.Unmoved = append(c.Unmoved, name)
			}
		}
		if got != want {
			off := Counter{Name: name, PerRequest: per, Expected: want, Got: got, Lost: want - got}
			c.Off = append(c.Off, off)
			if !off.Gauge() {
				c.Lost += want - got
			}
		}
	}
	return c
}
