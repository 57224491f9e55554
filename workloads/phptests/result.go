package phptests

import (
	"sort"
	"time"
)

// The types below are what a run of the suites measured: each test's
// outcome as run-tests.php gave it. verify/suites judges them.

// Outcome is a test's result, run-tests.php's name for it in lower case.
type Outcome string

const (
	Pass  Outcome = "pass"
	Fail  Outcome = "fail"
	Skip  Outcome = "skip"
	XFail Outcome = "xfail" // failed, and the test says it is expected to
	Bork  Outcome = "bork"  // the test file itself is broken
	Leak  Outcome = "leak"  // memory leak (only detected under valgrind)
	XLeak Outcome = "xleak" // leaked, and the test says it is expected to
	Warn  Outcome = "warn"  // passed, but not as it should (e.g. on retry, or an XFAIL passing)
)

// Outcomes lists every outcome this version writes, in the order of the
// results schema's enum.
var Outcomes = []Outcome{Pass, Fail, Skip, XFail, Bork, Leak, XLeak, Warn}

// Good reports whether the test ran and did what it should.
func (o Outcome) Good() bool { return o == Pass || o == XFail || o == XLeak }

// Bad reports whether the outcome needs a human.
func (o Outcome) Bad() bool { return o == Fail || o == Bork || o == Leak || o == Warn }

// TestResult is one test's result in one run.
type TestResult struct {
	// Name is the test's path from the source tree root, e.g.
	// "ext/mysqli/tests/mysqli_connect.phpt". It identifies the test across
	// builds.
	Name string `json:"name"`
	// Title is the test's --TEST-- line.
	Title string `json:"title,omitempty"`
	// Via names the test that redirected to this one, e.g.
	// "ext/pdo_mysql/tests/common.phpt" for the ext/pdo tests.
	Via     string  `json:"via,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Reason is run-tests' word on the outcome: the skip reason, the XFAIL
	// reason, the failure's info.
	Reason string `json:"reason,omitempty"`
	// Diff is an excerpt of the expected-vs-actual diff of a failed test.
	Diff            string  `json:"diff,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// Counts are the number of tests per outcome.
type Counts struct {
	Total int `json:"total"`
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Skip  int `json:"skip"`
	XFail int `json:"xfail"`
	Bork  int `json:"bork"`
	Leak  int `json:"leak"`
	XLeak int `json:"xleak"`
	Warn  int `json:"warn"`
}

// Add counts one more test with outcome o.
func (c *Counts) Add(o Outcome) {
	c.Total++
	switch o {
	case Pass:
		c.Pass++
	case Fail:
		c.Fail++
	case Skip:
		c.Skip++
	case XFail:
		c.XFail++
	case Bork:
		c.Bork++
	case Leak:
		c.Leak++
	case XLeak:
		c.XLeak++
	case Warn:
		c.Warn++
	}
}

// Plus returns the sum of two counts.
func (c Counts) Plus(d Counts) Counts {
	return Counts{
		Total: c.Total + d.Total, Pass: c.Pass + d.Pass, Fail: c.Fail + d.Fail,
		Skip: c.Skip + d.Skip, XFail: c.XFail + d.XFail, Bork: c.Bork + d.Bork,
		Leak: c.Leak + d.Leak, XLeak: c.XLeak + d.XLeak, Warn: c.Warn + d.Warn,
	}
}

// SuiteRun is one run-tests.php invocation over one test directory.
type SuiteRun struct {
	// Suite is the directory run, from the tree root: "ext/mysqli/tests".
	Suite  string       `json:"suite"`
	Counts Counts       `json:"counts"`
	Tests  []TestResult `json:"tests"` // sorted by Name
	// DurationSeconds is the wall time of the run-tests process.
	DurationSeconds float64 `json:"duration_seconds"`
}

// RunResult is every suite run on one build.
type RunResult struct {
	// Build names the build, e.g. "master-base-nts"; Compare calls the
	// re-runner with it.
	Build           string     `json:"build"`
	Suites          []SuiteRun `json:"suites"`
	Counts          Counts     `json:"counts"`
	DurationSeconds float64    `json:"duration_seconds"`
	// Warnings are what the run noticed but did not fail on.
	Warnings []string `json:"warnings,omitempty"`
}

// NewSuiteRun builds a SuiteRun from per-test results: sorted, counted.
func NewSuiteRun(suite string, tests []TestResult, d time.Duration) SuiteRun {
	s := SuiteRun{Suite: suite, Tests: tests, DurationSeconds: seconds(d)}
	sort.Slice(s.Tests, func(i, j int) bool { return s.Tests[i].Name < s.Tests[j].Name })
	for _, t := range s.Tests {
		s.Counts.Add(t.Outcome)
	}
	return s
}

// Add appends a suite run and updates the totals.
func (r *RunResult) Add(s SuiteRun) {
	r.Suites = append(r.Suites, s)
	r.Counts = r.Counts.Plus(s.Counts)
	r.DurationSeconds += s.DurationSeconds
}

// ByName indexes every test of the run by its Name.
func (r *RunResult) ByName() map[string]TestResult {
	m := make(map[string]TestResult)
	for _, s := range r.Suites {
		for _, t := range s.Tests {
			m[t.Name] = t
		}
	}
	return m
}

func seconds(d time.Duration) float64 {
	// Milliseconds are plenty, and keep results.json free of float noise.
	return float64(d.Milliseconds()) / 1000
}
