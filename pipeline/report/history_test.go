package report_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/bench"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// The entry of a run names its head, its verdict and, per target, the CPU
// cost of statistics in each build with its interval.
func TestHistoryEntry(t *testing.T) {
	res := resultstest.PassingPR()
	res.Targets[0].Bench = &bench.Result{Result: benchrun.Result{Measures: []*benchrun.MeasureStats{
		{Name: benchrun.LockCalls},
		{Name: benchrun.CPUMeasure, Costs: []benchrun.CostStats{
			{Build: side.Head, Of: "ratio", HodgesLehmann: benchrun.Interval{N: 12, Median: 1.017, Lo: 1.009, Hi: 1.024}},
			// Taken on differences: the median ratio is shown.
			{Build: side.Base, Of: "diff", HodgesLehmann: benchrun.Interval{N: 12, Median: 3, Lo: 2, Hi: 4},
				Ratio: benchrun.Interval{N: 12, Median: 1.139, Lo: 1.121, Hi: 1.15}},
		}},
	}}}
	got := report.HistoryEntry([]*results.Result{res}, nil)
	want := &github.HistoryEntry{Head: resultstest.PRHead, Verdict: "passed",
		Cost: "master: base +13.9% [+12.1%, +15.0%], head +1.7% [+0.9%, +2.4%]"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entry (-want +got):\n%s", d)
	}
	// A target the jobs were to cover and did not: incomplete.
	if got := report.HistoryEntry([]*results.Result{res}, []string{"master", "PHP-8.4"}); got.Verdict != "incomplete" {
		t.Errorf("verdict %q, want incomplete", got.Verdict)
	}
	if got := report.HistoryEntry(nil, nil); got != nil {
		t.Errorf("no results: %+v, want nil", got)
	}
}
