package bench

import (
	"math/rand/v2"
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// The rules on simulated runs: 1,000 of each, seeded, the exact measures
// (lock calls, instructions) only, as the counted passes take them.

// counts are one counted pass's exact measures of an arm.
type counts struct {
	locks, shared, statsMutex, instructions float64
}

// noise is what a simulated run's values vary by: lock calls a request,
// and the share of the instructions a request.
type noise struct{ locks, instructions float64 }

// armMeans are the true values of the arms of a head equal to base:
// base's statistics cost 742 lock calls a request (381 of them on the
// statistics mutex) and 14% of the instructions.
func armMeans(a benchrun.Arm) counts {
	if a.Statistics {
		return counts{locks: 748.4, shared: 382, statsMutex: 381, instructions: 483100}
	}
	return counts{locks: 6.33, shared: 3.33, statsMutex: 0, instructions: 423980}
}

// simulate is a judged Result of passes counted passes of the four arms,
// each value its arm's mean (as shift changes it) plus normal noise.
func simulate(r *rand.Rand, passes int, n noise, shift func(benchrun.Arm, counts) counts) *Result {
	res := benchrun.Result{
		Settings: benchrun.Settings{Measures: []string{"locks", "instructions"}, CountedPasses: passes, PassesPerServer: 2},
		Builds:   []benchrun.Build{{Name: side.Base}, {Name: side.Head}},
	}
	arms := []benchrun.Arm{{Side: side.Base, Statistics: true}, {Side: side.Base, Statistics: false}, {Side: side.Head, Statistics: true}, {Side: side.Head, Statistics: false}}
	for _, a := range arms {
		res.Arms = append(res.Arms, &benchrun.ArmSamples{Name: a, Build: a.Side, Statistics: onOff(a.Statistics)})
	}
	for p := 1; p <= passes; p++ {
		res.Passes = append(res.Passes, benchrun.Pass{Pass: p, Order: arms})
		for i, a := range arms {
			m := armMeans(a)
			if shift != nil {
				m = shift(a, m)
			}
			locks := m.locks + n.locks*r.NormFloat64()
			shared := m.shared + n.locks*r.NormFloat64()
			stats := m.statsMutex
			if stats > 0 {
				stats += n.locks * r.NormFloat64()
			}
			res.Arms[i].Samples = append(res.Arms[i].Samples, &benchrun.Sample{
				Pass: p, Position: i + 1,
				Locks: &benchrun.LockSample{Requests: 200, LocksPerRequest: locks, SharedLocksPerRequest: shared, PerThreadLocksPerRequest: locks - shared,
					StatsMutex: &benchrun.StatsMutexSample{Block: "0x1", LocksPerRequest: stats}},
				Instructions: &benchrun.InstructionSample{Requests: 200, InstructionsPerRequest: m.instructions * (1 + n.instructions*r.NormFloat64())},
			})
		}
	}
	res.Analyse()
	return &Result{Result: res}
}

// rate runs 1,000 simulated runs and returns the share of them for which
// hit is true.
func rate(seed uint64, passes int, n noise, shift func(benchrun.Arm, counts) counts, hit func(*Result) bool) float64 {
	r := rand.New(rand.NewPCG(26, seed))
	hits := 0
	for range 1000 {
		if hit(simulate(r, passes, n, shift)) {
			hits++
		}
	}
	return float64(hits) / 1000
}

func verdictOf(r *Result, name string) verdict.Change {
	for _, m := range r.Measures {
		if m.Name == name {
			return m.Verdict
		}
	}
	return ""
}

// instructionsBy is a head whose instructions a request are more by the
// factor up with statistics on and off: +2% in both, or in one alone.
func instructionsBy(on, off float64) func(benchrun.Arm, counts) counts {
	return func(a benchrun.Arm, c counts) counts {
		if a.Side == side.Head {
			if a.Statistics {
				c.instructions *= on
			} else {
				c.instructions *= off
			}
		}
		return c
	}
}

// A harmless head never fails: head = base, one counted pass (the quick
// default), 0.05 to 0.1 lock calls a request of noise in every arm.
func TestRuleAAOneCountedPass(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	gating, any := 0, 0
	for range 1000 {
		res := simulate(r, 1, noise{locks: 0.05 + 0.05*r.Float64(), instructions: 0.0002}, nil)
		if judge(res) != nil {
			gating++
		}
		for _, m := range res.Measures {
			if m.Verdict == verdict.Regressed || m.Verdict == verdict.Improved {
				any++
				break
			}
		}
	}
	t.Logf("head = base, 1 counted pass, 0.05-0.1 calls of noise: a gating verdict in %.1f%% of 1,000 runs, any verdict in %.1f%%", float64(gating)/10, float64(any)/10)
	if gating > 10 {
		t.Errorf("a gating verdict in %d of 1,000 A/A runs, want at most 10", gating)
	}
}

// A head 2% slower in both arms has base's cost of statistics: it is a
// regression all the same.
func TestRuleSlowerInBothArms(t *testing.T) {
	for _, passes := range []int{1, 2} {
		p := rate(2, passes, noise{locks: 0.1, instructions: 0.0005}, instructionsBy(1.02, 1.02), func(r *Result) bool {
			return verdictOf(r, "instructions") == verdict.Regressed && judge(r) != nil
		})
		t.Logf("+2%% instructions in both arms, %d counted passes: regressed in %.1f%% of 1,000 runs", passes, 100*p)
		if p < 0.99 {
			t.Errorf("%d counted passes: +2%% instructions in both arms regressed in %.3f of runs, want at least 0.99", passes, p)
		}
	}
}

// A head 2% slower with statistics off has a smaller cost of statistics,
// and is no improvement.
func TestRuleSlowerWithStatisticsOff(t *testing.T) {
	for _, passes := range []int{1, 2} {
		var improved, regressed, costImproved int
		r := rand.New(rand.NewPCG(26, 3))
		for range 1000 {
			res := simulate(r, passes, noise{locks: 0.1, instructions: 0.0005}, instructionsBy(1, 1.02))
			switch verdictOf(res, "instructions") {
			case verdict.Improved:
				improved++
			case verdict.Regressed:
				regressed++
			}
			for _, m := range res.Measures {
				if m.Name == "instructions" && m.HeadVsBase.Verdict == verdict.Improved {
					costImproved++
				}
			}
		}
		t.Logf("+2%% instructions with statistics off, %d counted passes: improved in %.1f%%, regressed in %.1f%% of 1,000 runs (the cost of statistics alone: improved in %.1f%%)",
			passes, float64(improved)/10, float64(regressed)/10, float64(costImproved)/10)
		if improved > 0 {
			t.Errorf("%d counted passes: +2%% instructions with statistics off improved in %d of 1,000 runs", passes, improved)
		}
	}
}

// The exact rule's power grows with passes: a 2% regression of the
// instructions in values of 1% noise, as the issue simulated.
func TestRuleExactPowerGrows(t *testing.T) {
	regressed := func(r *Result) bool { return verdictOf(r, "instructions") == verdict.Regressed }
	got := map[int]float64{}
	for _, passes := range []int{1, 2, 3, 6} {
		got[passes] = rate(4, passes, noise{locks: 0.1, instructions: 0.01}, instructionsBy(1.02, 1.02), regressed)
		aa := rate(5, passes, noise{locks: 0.1, instructions: 0.01}, nil, regressed)
		t.Logf("2%% instruction regression, 1%% noise, %d counted passes: caught in %.1f%%; head = base called regressed in %.1f%% of 1,000 runs", passes, 100*got[passes], 100*aa)
	}
	if got[6] < got[2] {
		t.Errorf("a 2%% regression caught in %.3f of runs with 6 passes, fewer than %.3f with 2", got[6], got[2])
	}
}
