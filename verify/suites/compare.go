package suites

import "sort"

// Kind is how a test's outcome changed from base to head.
type Kind string

const (
	// Regression: head is worse. A good or skipped test now fails, borks,
	// leaks or warns; a passing test now skips (it stopped running, which can
	// hide a failure); a failing test fails differently (fail -> bork); a
	// passing test now fails as expected (pass -> xfail).
	Regression Kind = "regression"
	// Fix: a test that failed on base passes (or fails as expected) on head.
	Fix Kind = "fix"
	// ChangedSkip: a skip on one side only, in a way that is neither a
	// regression nor a fix: skip -> pass, fail -> skip, xfail <-> skip.
	ChangedSkip Kind = "changed_skip"
	// UnchangedFailure: the same failure on both builds. It is about the
	// environment (the server, the missing extensions), not the change.
	UnchangedFailure Kind = "unchanged_failure"
	OnlyBase         Kind = "only_base" // the test ran on base only
	OnlyHead         Kind = "only_head" // the test ran on head only
)

// Change is one test whose result is worth a line in the report.
type Change struct {
	Test string `json:"test"`
	Kind Kind   `json:"kind"`
	// Base and Head are the outcomes of the compared runs; empty where the
	// test did not run on that side.
	Base Outcome `json:"base,omitempty"`
	Head Outcome `json:"head,omitempty"`
	// BaseRuns and HeadRuns are the outcomes of the compared run followed by
	// those of the re-runs (see Deflake); empty when not re-run.
	BaseRuns []Outcome `json:"base_runs,omitempty"`
	HeadRuns []Outcome `json:"head_runs,omitempty"`
	// Reason and Diff come from the side that explains the change: head for
	// a regression, base for a fix.
	Reason string `json:"reason,omitempty"`
	Diff   string `json:"diff,omitempty"`
	// Cause is why an unchanged failure fails, where that is known
	// (knownCauses): the environment's doing, not the change's.
	Cause string `json:"cause,omitempty"`
}

// Comparison is base vs head, test by test. Every list is sorted by test
// name.
type Comparison struct {
	Base string `json:"base"` // build names, from the RunResults
	Head string `json:"head"`

	Regressions       []Change `json:"regressions"`
	Fixes             []Change `json:"fixes"`
	ChangedSkips      []Change `json:"changed_skips"`
	UnchangedFailures []Change `json:"unchanged_failures"`
	OnlyBase          []Change `json:"only_base"`
	OnlyHead          []Change `json:"only_head"`
	// Flakes are tests that differed but whose re-runs did not agree with
	// themselves (see Deflake). Each keeps the Kind it was first given.
	Flakes []Change `json:"flakes"`

	// Same counts the tests with the same good or skipped outcome on both.
	Same int `json:"same"`
	// Reruns is how many times each differing test was re-run per build;
	// 0 when Deflake was not called.
	Reruns int `json:"reruns"`
}

// Regressed reports whether head has a regression that re-runs did not
// explain away as a flake.
func (c Comparison) Regressed() bool { return len(c.Regressions) > 0 }

// Compare compares two runs test by test.
func Compare(base, head *RunResult) Comparison {
	c := Comparison{Base: base.Build, Head: head.Build}
	if c.Base == "" {
		c.Base = "base"
	}
	if c.Head == "" {
		c.Head = "head"
	}
	b, h := base.ByName(), head.ByName()
	for _, name := range unionNames(b, h) {
		bt, inBase := b[name]
		ht, inHead := h[name]
		ch := Change{Test: name, Base: bt.Outcome, Head: ht.Outcome}
		switch {
		case !inHead:
			ch.Kind = OnlyBase
		case !inBase:
			ch.Kind = OnlyHead
		default:
			ch.Kind = classify(bt.Outcome, ht.Outcome)
		}
		switch ch.Kind {
		case "":
			c.Same++
			continue
		case Fix, OnlyBase:
			ch.Reason, ch.Diff = bt.Reason, bt.Diff
		default:
			ch.Reason, ch.Diff = ht.Reason, ht.Diff
		}
		if ch.Kind == UnchangedFailure {
			ch.Cause = knownCauses[name]
		}
		c.add(ch)
	}
	return c
}

// classify says how an outcome changed; "" when it did not in a way that
// matters.
func classify(b, h Outcome) Kind {
	switch {
	case b == h && b.Bad():
		return UnchangedFailure
	case b == h:
		return ""
	case h.Bad():
		return Regression
	case b.Bad() && h.Good():
		return Fix
	case b == Pass && h == Skip:
		return Regression
	case b == Skip || h == Skip:
		return ChangedSkip
	case b == Pass: // pass -> xfail, xleak
		return Regression
	default: // xfail <-> xleak, xfail -> pass (run-tests says warn instead)
		return Fix
	}
}

func (c *Comparison) add(ch Change) {
	switch ch.Kind {
	case Regression:
		c.Regressions = append(c.Regressions, ch)
	case Fix:
		c.Fixes = append(c.Fixes, ch)
	case ChangedSkip:
		c.ChangedSkips = append(c.ChangedSkips, ch)
	case UnchangedFailure:
		c.UnchangedFailures = append(c.UnchangedFailures, ch)
	case OnlyBase:
		c.OnlyBase = append(c.OnlyBase, ch)
	case OnlyHead:
		c.OnlyHead = append(c.OnlyHead, ch)
	}
}

func unionNames(a, b map[string]TestResult) []string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
