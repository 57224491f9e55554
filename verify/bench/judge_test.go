package bench

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	"github.com/patchproof/patchproof/verify/verdict/verdicttest"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// result is a Result of the given measures and servers' crashes.
func result(ms []*benchrun.MeasureStats, crashes ...*benchrun.ServerCrashes) *Result {
	return &Result{Result: benchrun.Result{Measures: ms, ServerCrashes: crashes}}
}

func TestJudge(t *testing.T) {
	crashed := func(base, head int) []*benchrun.ServerCrashes {
		return []*benchrun.ServerCrashes{{Build: side.Base, Servers: 18, Crashed: base}, {Build: side.Head, Servers: 18, Crashed: head}}
	}
	for _, tt := range []struct {
		name string
		r    *Result
		want string // the CheckError's message; "" for none
	}{
		{"not run", nil, ""},
		{"improved", known(t, "known"), ""},
		{"base only", known(t, "known-base"), ""},
		{"an exact measure regressed", result([]*benchrun.MeasureStats{
			{Name: "locks", Verdict: verdict.Regressed},
			{Name: "stats_mutex_locks", Verdict: verdict.NoChange},
			{Name: "instructions", Verdict: verdict.Regressed},
		}), "the benchmark regressed: locks, instructions"},
		// CPU time and throughput are noisy: they never gate.
		{"a noisy measure regressed", result([]*benchrun.MeasureStats{
			{Name: "cpu", Noisy: true, Verdict: verdict.Regressed},
			{Name: "throughput", Noisy: true, Verdict: verdict.Regressed},
		}), ""},
		// One crash where base had none is p = 0.5: chance, not gated.
		{"head crashed once where base did not", result(nil, crashed(0, 1)...), ""},
		{"head crashed often where base did not", result(nil, crashed(0, 6)...), "the benchmark regressed: server crashes"},
		// Where and by how much.
		{"a regression with statistics off", result([]*benchrun.MeasureStats{{
			Name: "instructions", Unit: "instr/req", Verdict: verdict.Regressed,
			HeadVsBaseArms: []benchrun.ArmComparison{
				{Statistics: "off", Comparison: benchrun.Comparison{Effect: 0.02, Verdict: verdict.Regressed, Exact: instr(424000, 432480)}},
				{Statistics: "on", Comparison: benchrun.Comparison{Effect: 0.02, Verdict: verdict.Regressed, Exact: instr(424000, 432480)}},
			},
		}}), "the benchmark regressed: instructions (statistics off +2%, statistics on +2%)"},
		// A part of a judged measure is not judged.
		{"shared locks", result([]*benchrun.MeasureStats{{Name: "shared_locks", Verdict: verdict.NotJudged}}), ""},
		{"both crashed alike", result(nil, crashed(18, 18)...), ""},
		{"a regression and a crash", result([]*benchrun.MeasureStats{{Name: "instructions", Verdict: verdict.Regressed}}, crashed(1, 18)...),
			"the benchmark regressed: instructions, server crashes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := judge(tt.r)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Judge = %v, want nil", err)
				}
				return
			}
			var ce *verdict.CheckError
			if !errors.As(err, &ce) || !errors.Is(err, verdict.ErrCheckFailed) {
				t.Fatalf("Judge = %v, want a check failure", err)
			}
			if ce.Message != tt.want {
				t.Errorf("Judge says %q, want %q", ce.Message, tt.want)
			}
		})
	}
	// Every exact measure that regresses gates, in the table's order.
	r := known(t, "known")
	for _, m := range r.Measures {
		m.Verdict = verdict.Regressed
	}
	want := []string{"locks", "stats_mutex_locks", "shared_locks", "per_thread_locks", "instructions"}
	if d := cmp.Diff(want, r.regressions()); d != "" {
		t.Errorf("regressions (-want +got):\n%s", d)
	}
}

// Judge's one message tells of every target that regressed, each named,
// and a target whose benchmark did not finish makes the check an error
// (exit 2) rather than a failure.
func TestJudgeTargets(t *testing.T) {
	regressed := func() *Result {
		return result([]*benchrun.MeasureStats{{Name: "locks", Verdict: verdict.Regressed}})
	}
	for _, tt := range []struct {
		name    string
		targets []Target
		want    string // "" for a pass
		failed  bool
	}{
		{"passed", []Target{{"master", known(t, "known"), nil}, {"PHP-8.4", nil, nil}}, "", false},
		{"two regressed", []Target{{"master", regressed(), nil}, {"PHP-8.4", regressed(), nil}},
			"master: the benchmark regressed: locks; PHP-8.4: the benchmark regressed: locks", true},
		{"an error beats a failure", []Target{{"master", regressed(), nil}, {"PHP-8.4", regressed(), errors.New("wrk: no such file")}},
			"PHP-8.4: wrk: no such file", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Judge(tt.targets)
			verdicttest.Judged(t, err, tt.want, tt.failed)
		})
	}
}

// A crash of head's PHP in a server gates the run where base's, run as
// often, never crashed, or crashed in a share of its servers Fisher's
// exact test finds smaller: a crash both have alike is not the change's.
func TestCrashRegression(t *testing.T) {
	for _, c := range []struct {
		base, head int
		want       bool
	}{
		{0, 0, false}, {18, 18, false}, {3, 0, false},
		// One rule whether or not base crashed: a crash or five where
		// base had none could be chance (p = 0.5 to 0.023), six are not
		// (p = 0.0095).
		{0, 1, false}, {0, 5, false}, {0, 6, true},
		// Now and then in base does not hide always in head; a crash
		// more or less is chance.
		{1, 18, true}, {17, 18, false}, {6, 12, false},
	} {
		r := result(nil, &benchrun.ServerCrashes{Build: side.Base, Servers: 18, Crashed: c.base}, &benchrun.ServerCrashes{Build: side.Head, Servers: 18, Crashed: c.head})
		if got := r.headCrashes(); got != c.want {
			t.Errorf("base %d, head %d of 18 servers crashed: a regression %v, want %v", c.base, c.head, got, c.want)
		}
	}
	// Fisher's exact test, one-sided: 3 of 3 against 0 of 3 is 1 of the
	// C(6,3) = 20 ways three crashes fall on six servers.
	if p := crashesP(&benchrun.ServerCrashes{Servers: 3}, &benchrun.ServerCrashes{Servers: 3, Crashed: 3}); math.Abs(p-0.05) > 1e-12 {
		t.Errorf("crashesP(0 of 3, 3 of 3) = %v, want 1/20", p)
	}
	if p := crashesP(&benchrun.ServerCrashes{Servers: 18, Crashed: 18}, &benchrun.ServerCrashes{Servers: 18, Crashed: 18}); math.Abs(p-1) > 1e-12 {
		t.Errorf("crashesP(18 of 18, 18 of 18) = %v, want 1", p)
	}
	headOnly := result(nil, &benchrun.ServerCrashes{Build: side.Head, Servers: 4, Crashed: 4})
	if err := judge(headOnly); err != nil {
		t.Errorf("head's crashes gate a run that had no base servers to compare with: %v", err)
	}
}

// instr is the exact judgment of instructions a request, base's mean
// against head's.
func instr(base, head float64) *benchrun.ExactStats {
	return &benchrun.ExactStats{Old: benchrun.Range{N: 1, Min: base, Median: base, Mean: base, Max: base},
		New: benchrun.Range{N: 1, Min: head, Median: head, Mean: head, Max: head}, Floor: 0.005 * base}
}
