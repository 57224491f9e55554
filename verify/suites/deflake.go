package suites

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// Rerunner runs the named tests again on one build, named as in
// RunResult.Build, and returns their results by test name. An error means
// the tests could not be run, not that they failed.
type Rerunner func(ctx context.Context, build string, tests []string) (map[string]TestResult, error)

// Deflake re-runs every test that differs between base and head (the
// regressions, fixes and changed skips) n times on each build, alternating
// builds, and sorts each test into one of two verdicts:
//   - it consistently differs: every run on base gave one outcome and every
//     run on head another; it keeps its Kind and gains BaseRuns/HeadRuns;
//   - it is a flake: some build gave different outcomes across runs; it
//     moves to Flakes with its runs.
//
// Tests that ran on one build only, and unchanged failures, are not re-run.
func Deflake(ctx context.Context, c Comparison, n int, rerun Rerunner) (Comparison, error) {
	if n < 1 {
		return c, fmt.Errorf("deflake: %d re-runs: want at least 1", n)
	}
	if c.Base == c.Head {
		return c, fmt.Errorf("deflake: base and head are both named %q", c.Base)
	}
	// Copies: the caller's Comparison stays as it was.
	var differing []Change
	for _, list := range [][]Change{c.Regressions, c.Fixes, c.ChangedSkips} {
		differing = append(differing, list...)
	}
	if len(differing) == 0 {
		c.Reruns = n
		return c, nil
	}
	names := make([]string, len(differing))
	for i := range differing {
		ch := &differing[i]
		names[i] = ch.Test
		ch.BaseRuns = []Outcome{ch.Base}
		ch.HeadRuns = []Outcome{ch.Head}
	}
	sort.Strings(names)

	for round := 0; round < n; round++ {
		for _, side := range []string{c.Base, c.Head} {
			got, err := rerun(ctx, side, names)
			if err != nil {
				return c, fmt.Errorf("deflake: re-run %d on %s: %w", round+1, side, err)
			}
			var missing []string
			for i := range differing {
				ch := &differing[i]
				r, ok := got[ch.Test]
				if !ok {
					missing = append(missing, ch.Test)
					continue
				}
				if side == c.Base {
					ch.BaseRuns = append(ch.BaseRuns, r.Outcome)
				} else {
					ch.HeadRuns = append(ch.HeadRuns, r.Outcome)
				}
			}
			if len(missing) > 0 {
				return c, fmt.Errorf("deflake: re-run %d on %s: %w: %v", round+1, side, ErrNoResult, missing)
			}
		}
	}

	out := c
	out.Reruns = n
	out.Regressions, out.Fixes, out.ChangedSkips, out.Flakes = nil, nil, nil, append([]Change(nil), c.Flakes...)
	for _, ch := range differing {
		if uniform(ch.BaseRuns) && uniform(ch.HeadRuns) {
			out.add(ch)
		} else {
			out.Flakes = append(out.Flakes, ch)
		}
	}
	sort.SliceStable(out.Flakes, func(i, j int) bool { return out.Flakes[i].Test < out.Flakes[j].Test })
	return out, nil
}

// ErrNoResult: a re-run gave no result for a test it was asked to run.
var ErrNoResult = errors.New("no result for test")

func uniform(runs []Outcome) bool {
	for _, o := range runs[1:] {
		if o != runs[0] {
			return false
		}
	}
	return true
}
