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
			{Name: "shared_locks", Verdict: verdict.NotJudged},
			{Name: "top_mutex_locks", Verdict: verdict.NoChange},
			{Name: "instructions", Verdict: verdict.Regressed},
			{Name: "cpu", Noisy: true, Verdict: verdict.Regressed},
			{Name: "throughput", Noisy: true, Verdict: verdict.NotJudged},
		}), "lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>➖ top mutex locks no significant change<br>❌ instructions regressed<br>❌ CPU time regressed (not gated)"},
		// Which arm, and by how much.
		{"a regression with statistics off", result([]*benchrun.MeasureStats{{
			Name: "instructions", Unit: "instr/req", Verdict: verdict.Regressed,
			HeadVsBaseArms: []benchrun.ArmComparison{
				{Statistics: "off", Comparison: benchrun.Comparison{Effect: 0.02, Verdict: verdict.Regressed, Exact: instr(424000, 432480)}},
				{Statistics: "on", Comparison: benchrun.Comparison{Effect: 0.001, Verdict: verdict.NoChange, Exact: instr(430500, 430930)}},
			},
		}}), "❌ instructions regressed: statistics off +2%"},
		{"head crashed, not gated", result([]*benchrun.MeasureStats{{Name: "locks", Arms: arms(748.4, 6.36), Verdict: verdict.Improved}},
			&benchrun.ServerCrashes{Build: side.Base, Servers: 18}, &benchrun.ServerCrashes{Build: side.Head, Servers: 18, Crashed: 1}),
			"lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>⚠️ head's PHP crashed in 1 of 18 servers, base's in 0 of 18 (Fisher's exact test p=0.5 > 0.01, not gated)"},
		{"head crashed", result([]*benchrun.MeasureStats{{Name: "locks", Arms: arms(748.4, 6.36), Verdict: verdict.Improved}},
			&benchrun.ServerCrashes{Build: side.Base, Servers: 18}, &benchrun.ServerCrashes{Build: side.Head, Servers: 18, Crashed: 6}),
			"lock calls/req, statistics on: 748.4 → 6.36<br>✅ locks improved<br>❌ head's PHP crashed in more of its servers than base's"},
		{"known", known(t, "known"), "lock calls/req, statistics on: 748.4 → 6.355" +
			"<br>✅ locks improved: statistics on -742 locks/req, cost of statistics +742 → +0.0183 locks/req" +
			"<br>✅ stats mutex locks improved: statistics on -381 stats-mutex-locks/req, cost of statistics +381 → +0 stats-mutex-locks/req" +
			"<br>✅ instructions improved: statistics on -10.9%, cost of statistics +13.9% → +1.7%" +
			"<br>✅ CPU time improved: statistics on -4.3%, cost of statistics +5.3% → +1.0%; could detect ±2.3% (not gated)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.res.Cell(); got != tt.want {
				t.Errorf("Cell = %q, want %q", got, tt.want)
			}
		})
	}
}
