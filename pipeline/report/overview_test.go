package report

import (
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/bench"
)

func TestBenchCell(t *testing.T) {
	arms := func(baseOn, headOn float64) []bench.ArmSummary {
		return []bench.ArmSummary{
			{Arm: bench.Arm{Side: side.Base, Statistics: true}, N: 4, Median: baseOn},
			{Arm: bench.Arm{Side: side.Head, Statistics: true}, N: 4, Median: headOn},
		}
	}
	for _, tt := range []struct {
		name string
		res  *bench.Result
		want string
	}{
		{"not run", nil, "not run"},
		{"base only", &bench.Result{Measures: []*bench.MeasureStats{{Name: "locks"}}}, "base only"},
		{"verdicts", &bench.Result{Measures: []*bench.MeasureStats{
			{Name: "locks", Arms: arms(748.4, 6.36), Verdict: bench.Improved},
			{Name: "top_mutex_locks", Verdict: bench.NoChange},
			{Name: "instructions", Verdict: bench.Regressed},
			{Name: "cpu", Noisy: true, Verdict: bench.Regressed},
		}}, "lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>➖ top mutex locks no significant change<br>❌ instructions regressed"},
		{"head crashed", &bench.Result{Measures: []*bench.MeasureStats{{Name: "locks", Arms: arms(748.4, 6.36), Verdict: bench.Improved}},
			ServerCrashes: []*bench.ServerCrashes{{Build: side.Base, Servers: 18}, {Build: side.Head, Servers: 18, Crashed: 1}}},
			"lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>❌ head's PHP crashed in more of its servers than base's"},
	} {
		if got := benchCell(tt.res); got != tt.want {
			t.Errorf("%s: benchCell = %q, want %q", tt.name, got, tt.want)
		}
	}
}
