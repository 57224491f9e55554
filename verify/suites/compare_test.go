package suites

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchproof/patchproof/workloads/phptests"
)

// run builds a one-suite RunResult from "name=outcome" pairs.
func run(build string, tests ...TestResult) *RunResult {
	r := &RunResult{Build: build}
	r.Add(phptests.NewSuiteRun("ext/mysqli/tests", tests, 0))
	return r
}

func tr(name string, o Outcome) TestResult { return TestResult{Name: name, Outcome: o} }

func TestClassify(t *testing.T) {
	tests := []struct {
		base, head Outcome
		want       Kind
	}{
		{Pass, Pass, ""},
		{Skip, Skip, ""},
		{XFail, XFail, ""},
		{Fail, Fail, UnchangedFailure},
		{Bork, Bork, UnchangedFailure},
		{Leak, Leak, UnchangedFailure},
		{Pass, Fail, Regression},
		{Pass, Bork, Regression},
		{Pass, Leak, Regression},
		{Pass, Warn, Regression},
		{Pass, Skip, Regression},
		{Pass, XFail, Regression},
		{XFail, Fail, Regression},
		{Skip, Fail, Regression},
		{Fail, Bork, Regression},
		{Fail, Pass, Fix},
		{Bork, Pass, Fix},
		{Leak, XFail, Fix},
		{Warn, Pass, Fix},
		{Skip, Pass, ChangedSkip},
		{Fail, Skip, ChangedSkip},
		{XFail, Skip, ChangedSkip},
		{Skip, XFail, ChangedSkip},
		{XFail, Pass, Fix},
	}
	for _, tt := range tests {
		t.Run(string(tt.base)+"->"+string(tt.head), func(t *testing.T) {
			if got := classify(tt.base, tt.head); got != tt.want {
				t.Errorf("classify(%s, %s) = %q, want %q", tt.base, tt.head, got, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name       string
		base, head *RunResult
		want       Comparison
	}{
		{
			name: "identical",
			base: run("b", tr("a.phpt", Pass), tr("b.phpt", Skip)),
			head: run("h", tr("a.phpt", Pass), tr("b.phpt", Skip)),
			want: Comparison{Base: "b", Head: "h", Same: 2},
		},
		{
			name: "every kind, sorted by test",
			base: run("b",
				tr("z-regress.phpt", Pass),
				TestResult{Name: "fixed.phpt", Outcome: Fail, Diff: "base diff"},
				tr("a-regress.phpt", Pass),
				TestResult{Name: "env.phpt", Outcome: Fail, Reason: "base reason"},
				tr("skip-now.phpt", Fail),
				tr("gone.phpt", Pass),
				tr("same.phpt", Pass),
			),
			head: run("h",
				TestResult{Name: "z-regress.phpt", Outcome: Fail, Diff: "head diff"},
				tr("fixed.phpt", Pass),
				TestResult{Name: "a-regress.phpt", Outcome: Skip, Reason: "no server"},
				TestResult{Name: "env.phpt", Outcome: Fail, Reason: "head reason"},
				tr("skip-now.phpt", Skip),
				tr("new.phpt", Fail),
				tr("same.phpt", Pass),
			),
			want: Comparison{
				Base: "b", Head: "h", Same: 1,
				Regressions: []Change{
					{Test: "a-regress.phpt", Kind: Regression, Base: Pass, Head: Skip, Reason: "no server"},
					{Test: "z-regress.phpt", Kind: Regression, Base: Pass, Head: Fail, Diff: "head diff"},
				},
				Fixes:             []Change{{Test: "fixed.phpt", Kind: Fix, Base: Fail, Head: Pass, Diff: "base diff"}},
				ChangedSkips:      []Change{{Test: "skip-now.phpt", Kind: ChangedSkip, Base: Fail, Head: Skip}},
				UnchangedFailures: []Change{{Test: "env.phpt", Kind: UnchangedFailure, Base: Fail, Head: Fail, Reason: "head reason"}},
				OnlyBase:          []Change{{Test: "gone.phpt", Kind: OnlyBase, Base: Pass}},
				OnlyHead:          []Change{{Test: "new.phpt", Kind: OnlyHead, Head: Fail}},
			},
		},
		{
			name: "unnamed builds",
			base: run("", tr("a.phpt", Pass)),
			head: run("", tr("a.phpt", Pass)),
			want: Comparison{Base: "base", Head: "head", Same: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.base, tt.head)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compare mismatch (-want +got):\n%s", diff)
			}
			// Deterministic: the same input gives the same output.
			if diff := cmp.Diff(got, Compare(tt.base, tt.head)); diff != "" {
				t.Errorf("Compare is not deterministic:\n%s", diff)
			}
		})
	}
}

func TestCountsAcrossSuites(t *testing.T) {
	r := &RunResult{Build: "b"}
	r.Add(phptests.NewSuiteRun("ext/mysqli/tests", []TestResult{tr("b.phpt", Pass), tr("a.phpt", Fail), tr("c.phpt", XFail)}, 2e9))
	r.Add(phptests.NewSuiteRun("ext/pdo_mysql/tests", []TestResult{tr("d.phpt", Skip), tr("e.phpt", Leak), tr("f.phpt", Bork)}, 1e9))
	want := Counts{Total: 6, Pass: 1, Fail: 1, Skip: 1, XFail: 1, Bork: 1, Leak: 1}
	if diff := cmp.Diff(want, r.Counts); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
	if r.DurationSeconds != 3 {
		t.Errorf("DurationSeconds = %v, want 3", r.DurationSeconds)
	}
	if got := r.Suites[0].Tests[0].Name; got != "a.phpt" {
		t.Errorf("tests not sorted: first is %s", got)
	}
}
