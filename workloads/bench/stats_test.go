package bench

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/workloads/httpd/httpdtest"
)

func TestByServer(t *testing.T) {
	on := benchstat.NewSample(1, 4, 2, 8, 3)
	off := benchstat.NewSample(1, 1, 2, 2, 3)
	// Passes 1-2 on one round of servers, 3-4 on the next, 5 alone:
	// geometric means, so that a round's log ratio is its passes' mean.
	got := byServer([]benchstat.Sample{on, off}, []int{1, 2, 3, 4, 5}, 2)
	want := []benchstat.Sample{benchstat.NewSample(2, 4, 3), benchstat.NewSample(1, 2, 3)}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("byServer (-want +got):\n%s", d)
	}
	// Passes missing from a round (not paired) leave the rest of it.
	got = byServer([]benchstat.Sample{benchstat.NewSample(1, 9)}, []int{2, 3}, 2)
	if d := cmp.Diff([]benchstat.Sample{benchstat.NewSample(1, 9)}, got, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("byServer of passes 2 and 3 (-want +got):\n%s", d)
	}
	// A value that is not positive: arithmetic means, for differences.
	got = byServer([]benchstat.Sample{benchstat.NewSample(0, 2, -1, 3)}, []int{1, 2, 3, 4}, 2)
	if d := cmp.Diff([]benchstat.Sample{benchstat.NewSample(1, 1)}, got); d != "" {
		t.Errorf("byServer with a zero (-want +got):\n%s", d)
	}
}

// The server is the unit: with half the variance a server's own offset,
// the passes of one server counted as independent pairs double the false
// rate of the paired test; averaged, it is the test's alpha. 1,000
// simulated A/A blocks of 40 passes, 2 a server.
func TestServerIsTheUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 7))
	const passes, perServer, sigma = 40, 2, 0.01
	var falseByServer, falseByPass int
	nums := make([]int, passes)
	for i := range nums {
		nums[i] = i + 1
	}
	for range 1000 {
		on, off := make([]float64, passes), make([]float64, passes)
		var offOn, offOff float64
		for p := range passes {
			if p%perServer == 0 { // a fresh server for each arm
				offOn, offOff = sigma*r.NormFloat64(), sigma*r.NormFloat64()
			}
			on[p] = math.Exp(offOn + sigma*r.NormFloat64())
			off[p] = math.Exp(offOff + sigma*r.NormFloat64())
		}
		s := []benchstat.Sample{benchstat.NewSample(on...), benchstat.NewSample(off...)}
		for _, tc := range []struct {
			samples []benchstat.Sample
			count   *int
		}{{byServer(s, nums, perServer), &falseByServer}, {s, &falseByPass}} {
			c, err := benchstat.PairedCost(tc.samples[0], tc.samples[1], benchstat.LowerIsBetter, benchstat.Thresholds{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict == benchstat.Regressed || c.Verdict == benchstat.Improved {
				*tc.count++
			}
		}
	}
	t.Logf("A/A, half the variance the server's: a verdict in %.1f%% of 1,000 runs with the server as the unit, %.1f%% with the pass", float64(falseByServer)/10, float64(falseByPass)/10)
	// Alpha, and the simulation's own error.
	if falseByServer > 70 {
		t.Errorf("a false verdict in %d of 1,000 A/A runs with the server as the unit, want about 50", falseByServer)
	}
	if falseByPass <= falseByServer {
		t.Errorf("passes as the unit: %d false verdicts, not more than the servers' %d: the simulation shows nothing", falseByPass, falseByServer)
	}
}

// The sweep decides or is not run.
func TestSweepDecides(t *testing.T) {
	mod := filepath.Join(t.TempDir(), "libphp.so")
	os.WriteFile(mod, nil, 0o644)
	for _, tc := range []struct {
		name    string
		in      Options
		passes  int
		decides bool
	}{
		{"quick default", Options{Quick: true, Sweep: []int{1}}, 12, true},
		{"report default", Options{Sweep: []int{1}}, 12, true},
		{"a server a pass", Options{Sweep: []int{1}, PassesPerServer: 1}, 6, true},
		{"three passes", Options{Quick: true, Sweep: []int{1}, SweepPasses: 3}, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Base, tc.in.Dir = BuildRef{Module: mod}, t.TempDir()
			o, err := tc.in.resolved()
			if err != nil {
				t.Fatal(err)
			}
			if o.SweepPasses != tc.passes || o.sweepDecides() != tc.decides {
				t.Errorf("%d sweep passes, decides %v; want %d, %v", o.SweepPasses, o.sweepDecides(), tc.passes, tc.decides)
			}
			warned := false
			for _, w := range newResult(o).Warnings {
				warned = warned || strings.HasPrefix(w, "the thread sweep was not run")
			}
			if warned == tc.decides {
				t.Errorf("warned the sweep was not run: %v, with it deciding %v", warned, tc.decides)
			}
		})
	}
}

// The settings say whether PHP ran with OPcache: on where the builds have
// it (modules/opcache.so beside libs/), off and why where not, and a
// warning where one build has it and the other not.
func TestOPcacheSetting(t *testing.T) {
	with, without := httpdtest.Build(t, true), httpdtest.Build(t, false)
	for _, tc := range []struct {
		name       string
		base, head string
		want       string
		warn       bool
	}{
		{"both", with, with, "on: opcache.enable=1,", false},
		{"neither", without, without, "off: the builds have no OPcache", false},
		{"base only", with, without, "on for base only: head's build has none", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warning := opcacheSetting(Options{Base: BuildRef{Module: tc.base}, Head: BuildRef{Module: tc.head}})
			if !strings.HasPrefix(got, tc.want) || (warning != "") != tc.warn {
				t.Errorf("OPcache %q, warning %q; want %q…, a warning %v", got, warning, tc.want, tc.warn)
			}
		})
	}
	if got, _ := opcacheSetting(Options{Base: BuildRef{Module: with}}); !strings.Contains(got, "opcache.validate_timestamps=0") {
		t.Errorf("OPcache %q: the settings not stated", got)
	}
}

// CPU time, head against base, is three comparisons (each arm, and the
// cost of statistics), each a signed-rank test at 0.05: its overall
// verdict, the worst of them, is wrong more often than one test is, which
// the report states and is why CPU time does not gate. 1,000 simulated
// A/A runs of the demo's 40 passes, 2 a server: each server with an offset
// of its own, each pass with a shock every arm shares (the machine got
// slower) and noise of its own.
func TestCPUHeadVsBaseFalseRate(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 11))
	const passes, perServer, sigma = 40, 2, 0.01
	o := Options{Base: BuildRef{Module: "/b/libs/libphp.so"}, Head: BuildRef{Module: "/h/libs/libphp.so"}, Passes: passes, PassesPerServer: perServer}
	arms := o.arms()
	ps := make([]Pass, passes)
	for p := range ps {
		ps[p].Pass = p + 1
	}
	res := newResult(o)
	th := benchstat.Thresholds{}
	wrong := func(v benchstat.Change) bool { return v == benchstat.Regressed || v == benchstat.Improved }
	var cost, off, on, overall int
	for range 1000 {
		samples := make([]*ArmSamples, len(arms))
		offsets := make([]float64, len(arms))
		for i, a := range arms {
			samples[i] = &ArmSamples{Name: a.Arm, Build: a.Side, Statistics: onOff(a.Statistics)}
		}
		for p := range passes {
			shock := 3 * sigma * r.NormFloat64()
			for i, a := range arms {
				if p%perServer == 0 {
					offsets[i] = sigma * r.NormFloat64()
				}
				v := 0.15 * math.Exp(shock+offsets[i]+sigma*r.NormFloat64())
				if a.Statistics {
					v *= 1.08 // base's and head's cost alike
				}
				samples[i].Samples = append(samples[i].Samples, &Sample{Pass: p + 1, CPU: &CPUSample{CPUMsPerRequest: v}})
			}
		}
		ms := res.measureStats(defOf(CPUMeasure), samples, ps, th)
		if wrong(ms.HeadVsBase.Verdict) {
			cost++
		}
		for _, a := range ms.HeadVsBaseArms {
			switch {
			case !wrong(a.Verdict):
			case a.Statistics == "off":
				off++
			default:
				on++
			}
		}
		if wrong(ms.Verdict) {
			overall++
		}
	}
	t.Logf("A/A, CPU head vs base in 1,000 runs: the cost %.1f%%, statistics off %.1f%%, on %.1f%%; overall %.1f%%",
		float64(cost)/10, float64(off)/10, float64(on)/10, float64(overall)/10)
	// Each test at its alpha, within the simulation's own error (±1.4%).
	for name, n := range map[string]int{"the cost": cost, "statistics off": off, "statistics on": on} {
		if n > 70 {
			t.Errorf("%s: a false verdict in %d of 1,000 A/A runs, want about 50 or fewer", name, n)
		}
	}
	// The overall verdict: above any one test's rate, at most the sum of
	// the three; the report's figure (CPUFalseRate) must be this one.
	if overall <= max(cost, off, on) || overall > cost+off+on {
		t.Errorf("overall: %d false of 1,000, want above each test's (%d, %d, %d) and at most their sum", overall, cost, off, on)
	}
	if got := float64(overall) / 1000; math.Abs(got-CPUFalseRate) > 0.03 {
		t.Errorf("overall false rate %.3f; the report states %.2f", got, CPUFalseRate)
	}
}
