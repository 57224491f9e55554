package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/bench"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// A target's benchmark is the bench check's cell in the overview and its
// section in the target's, as verify/bench renders them.
func TestBenchInSummary(t *testing.T) {
	res := resultstest.Demo()
	b := &bench.Result{Result: benchrun.Result{Workload: "select20", Server: "apache-event", Measures: []*benchrun.MeasureStats{{
		Name: "locks",
		Arms: []benchrun.ArmSummary{
			{Arm: benchrun.Arm{Side: side.Base, Statistics: true}, N: 1, Median: 748.4},
			{Arm: benchrun.Arm{Side: side.Head, Statistics: true}, N: 1, Median: 6.36},
		},
		Verdict: verdict.Improved,
	}}}}
	res.Targets[0].Bench = b
	var out bytes.Buffer
	if err := RenderSummary(&out, []*results.Result{res}); err != nil {
		t.Fatal(err)
	}
	var section bytes.Buffer
	if err := b.WriteSection(&section); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" cost of statistics, head vs base |", " " + b.Cell() + " |", section.String()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
}
