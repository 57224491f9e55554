package suites

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scripted re-runs: outcomes[build][test] lists the outcome of each re-run
// in turn.
type scripted struct {
	outcomes map[string]map[string][]Outcome
	calls    []string
	round    map[string]int
}

func (s *scripted) rerun(_ context.Context, build string, tests []string) (map[string]TestResult, error) {
	if s.round == nil {
		s.round = map[string]int{}
	}
	if !slices.IsSorted(tests) {
		return nil, errors.New("tests not sorted")
	}
	s.calls = append(s.calls, build)
	i := s.round[build]
	s.round[build]++
	out := map[string]TestResult{}
	for _, t := range tests {
		if runs, ok := s.outcomes[build][t]; ok {
			out[t] = TestResult{Name: t, Outcome: runs[i]}
		}
	}
	return out, nil
}

func TestDeflake(t *testing.T) {
	base := run("base",
		tr("regress.phpt", Pass),
		tr("flaky-head.phpt", Pass),
		tr("flaky-base.phpt", Fail),
		tr("fixed.phpt", Fail),
		tr("env.phpt", Fail),
		tr("skip.phpt", Skip),
	)
	head := run("head",
		tr("regress.phpt", Fail),
		tr("flaky-head.phpt", Fail),
		tr("flaky-base.phpt", Pass),
		tr("fixed.phpt", Pass),
		tr("env.phpt", Fail),
		tr("skip.phpt", Pass),
		tr("new.phpt", Pass),
	)
	s := &scripted{outcomes: map[string]map[string][]Outcome{
		"base": {
			"regress.phpt":    {Pass, Pass},
			"flaky-head.phpt": {Pass, Pass},
			"flaky-base.phpt": {Fail, Pass},
			"fixed.phpt":      {Fail, Fail},
			"skip.phpt":       {Skip, Skip},
		},
		"head": {
			"regress.phpt":    {Fail, Fail},
			"flaky-head.phpt": {Pass, Fail},
			"flaky-base.phpt": {Pass, Pass},
			"fixed.phpt":      {Pass, Pass},
			"skip.phpt":       {Pass, Pass},
		},
	}}
	c := Compare(base, head)
	before := Compare(base, head)
	got, err := Deflake(context.Background(), c, 2, s.rerun)
	if err != nil {
		t.Fatal(err)
	}
	want := Comparison{
		Base: "base", Head: "head", Reruns: 2,
		Regressions: []Change{
			{Test: "regress.phpt", Kind: Regression, Base: Pass, Head: Fail, BaseRuns: []Outcome{Pass, Pass, Pass}, HeadRuns: []Outcome{Fail, Fail, Fail}},
		},
		Fixes: []Change{
			{Test: "fixed.phpt", Kind: Fix, Base: Fail, Head: Pass, BaseRuns: []Outcome{Fail, Fail, Fail}, HeadRuns: []Outcome{Pass, Pass, Pass}},
		},
		ChangedSkips: []Change{
			{Test: "skip.phpt", Kind: ChangedSkip, Base: Skip, Head: Pass, BaseRuns: []Outcome{Skip, Skip, Skip}, HeadRuns: []Outcome{Pass, Pass, Pass}},
		},
		Flakes: []Change{
			{Test: "flaky-base.phpt", Kind: Fix, Base: Fail, Head: Pass, BaseRuns: []Outcome{Fail, Fail, Pass}, HeadRuns: []Outcome{Pass, Pass, Pass}},
			{Test: "flaky-head.phpt", Kind: Regression, Base: Pass, Head: Fail, BaseRuns: []Outcome{Pass, Pass, Pass}, HeadRuns: []Outcome{Fail, Pass, Fail}},
		},
		UnchangedFailures: []Change{{Test: "env.phpt", Kind: UnchangedFailure, Base: Fail, Head: Fail}},
		OnlyHead:          []Change{{Test: "new.phpt", Kind: OnlyHead, Head: Pass}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Deflake mismatch (-want +got):\n%s", diff)
	}
	if !got.Regressed() {
		t.Error("Regressed() = false with a confirmed regression")
	}
	if diff := cmp.Diff([]string{"base", "head", "base", "head"}, s.calls); diff != "" {
		t.Errorf("re-runs do not alternate builds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, c); diff != "" {
		t.Errorf("Deflake changed its input (-before +after):\n%s", diff)
	}
}

func TestDeflakeOnlyFlakesIsNoRegression(t *testing.T) {
	s := &scripted{outcomes: map[string]map[string][]Outcome{
		"base": {"a.phpt": {Pass}},
		"head": {"a.phpt": {Pass}},
	}}
	c := Compare(run("base", tr("a.phpt", Pass)), run("head", tr("a.phpt", Fail)))
	got, err := Deflake(context.Background(), c, 1, s.rerun)
	if err != nil {
		t.Fatal(err)
	}
	if got.Regressed() || len(got.Flakes) != 1 {
		t.Errorf("got %d regressions, %d flakes; want 0 and 1", len(got.Regressions), len(got.Flakes))
	}
}

func TestDeflakeErrors(t *testing.T) {
	c := Compare(run("base", tr("a.phpt", Pass)), run("head", tr("a.phpt", Fail)))
	broken := errors.New("php is gone")
	tests := []struct {
		name   string
		c      Comparison
		n      int
		rerun  Rerunner
		wantIs error
	}{
		{
			name:   "re-runner fails",
			c:      c,
			n:      1,
			rerun:  func(context.Context, string, []string) (map[string]TestResult, error) { return nil, broken },
			wantIs: broken,
		},
		{
			name:   "result missing",
			c:      c,
			n:      1,
			rerun:  func(context.Context, string, []string) (map[string]TestResult, error) { return nil, nil },
			wantIs: ErrNoResult,
		},
		{name: "no re-runs", c: c, n: 0},
		{name: "same build twice", c: Comparison{Base: "x", Head: "x"}, n: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Deflake(context.Background(), tt.c, tt.n, tt.rerun)
			if err == nil {
				t.Fatal("Deflake succeeded")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Deflake error %v, want %v", err, tt.wantIs)
			}
		})
	}
}
