package bench

import (
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

func TestCell(t *testing.T) {
	arms := func(baseOn, headOn float64) []benchrun.ArmSummary {
		return []benchrun.ArmSummary{
			{Arm: benchrun.Arm{Side: side.Base, Statistics: true}, N: 4, Median: baseOn},
			{Arm: benchrun.Arm{Side: side.Head, Statistics: true}, N: 4, Median: headOn},
		}
	}
	for _, tt := range []struct {
		name string
		res  *Result
		want string
	}{
		{"not run", nil, "not run"},
		{"base only", result([]*benchrun.MeasureStats{{Name: "locks"}}), "base only"},
		{"verdicts", result([]*benchrun.MeasureStats{
			{Name: "locks", Arms: arms(748.4, 6.36), Verdict: verdict.Improved},
			{Name: "top_mutex_locks", Verdict: verdict.NoChange},
			{Name: "instructions", Verdict: verdict.Regressed},
			{Name: "cpu", Noisy: true, Verdict: verdict.Regressed},
		}), "lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>➖ top mutex locks no significant change<br>❌ instructions regressed"},
		{"head crashed", result([]*benchrun.MeasureStats{{Name: "locks", Arms: arms(748.4, 6.36), Verdict: verdict.Improved}},
			&benchrun.ServerCrashes{Build: side.Base, Servers: 18}, &benchrun.ServerCrashes{Build: side.Head, Servers: 18, Crashed: 1}),
			"lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>❌ head's PHP crashed in more of its servers than base's"},
		{"known", known(t, "known"), "lock calls/req, statistics on: 748.4 → 6.355<br>✅ locks improved<br>✅ stats mutex locks improved<br>✅ shared locks improved<br>✅ per thread locks improved<br>✅ instructions improved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.res.Cell(); got != tt.want {
				t.Errorf("Cell = %q, want %q", got, tt.want)
			}
		})
	}
}
