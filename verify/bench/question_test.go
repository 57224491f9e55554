package bench

import (
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// The answer to question 3 names the statistics mutex's calls base →
// head, each build's CPU cost of statistics with its interval, and head's
// cost against base's with its verdict and size.
func TestAnswer(t *testing.T) {
	r := known(t, "known")
	got := r.Answer()
	for _, want := range []string{
		"✅ statistics-mutex calls a request 381 → 0",
		"CPU cost of statistics +",
		"] → +",
		"; head's vs base's: ",
		"not gated",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("answer %q lacks %q", got, want)
		}
	}
	if base := known(t, "known-base"); !strings.HasPrefix(base.Answer(), "base only") {
		t.Errorf("base alone answers %q", base.Answer())
	}
}

func TestCaveats(t *testing.T) {
	r := known(t, "known")
	if cs := r.Caveats(); len(cs) != 0 {
		t.Errorf("a clean run has caveats %q", cs)
	}
	r.ServerCrashes = []*benchrun.ServerCrashes{
		{Build: side.Base, Servers: 62, Crashed: 62, Signals: []string{"Segmentation fault (11)"}},
		{Build: side.Head, Servers: 62, Crashed: 62, Signals: []string{"Segmentation fault (11)"}},
	}
	r.Arms[0].Samples[2].CPU.HeavySteal = true
	r.Settings.CountedPasses = 1
	want := []string{
		"PHP crashed in every benchmark server (base 62 of 62, head 62 of 62: Segmentation fault (11))",
		"CPU steal above 5% in 1 of 24 CPU windows",
		"one counted pass: the exact measures' noise is assumed, not measured",
	}
	got := r.Caveats()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("caveats\n%q\nwant\n%q", got, want)
	}
	// A crash in every server is no regression (base's crash as often),
	// so the answer passes; the caveat is what says it.
	if a := r.Answer(); !strings.HasPrefix(a, "✅") {
		t.Errorf("answer %q", a)
	}
}

// The compact section leaves the samples and pass orders to the
// artifacts, and says where they are.
func TestCompactSection(t *testing.T) {
	r := known(t, "known")
	var full, compact strings.Builder
	if err := r.WriteSection(&full); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCompactSection(&compact); err != nil {
		t.Fatal(err)
	}
	c := compact.String()
	for _, gone := range []string{"pass 1 order", "samples, pass by pass", "<details>", "**Shared or per-thread:**"} {
		if strings.Contains(c, gone) {
			t.Errorf("the compact section has %q", gone)
		}
	}
	if !strings.Contains(c, "`results.json`") || !strings.Contains(c, "| measure | base off |") {
		t.Errorf("the compact section lacks its table or where the samples are:\n%s", c)
	}
	if len(c) >= len(full.String()) {
		t.Errorf("compact %d bytes, full %d", len(c), len(full.String()))
	}
}

// Each verdict of the CPU line stands beside its own numbers: head's cost
// against base's not decided, while head against base with statistics on
// improved (the measure's verdict), says both, each with its estimate.
func TestAnswerSaysEachVerdictWithItsNumbers(t *testing.T) {
	r := known(t, "known")
	var m *benchrun.MeasureStats
	for _, x := range r.Measures {
		if x.Name == benchrun.CPUMeasure {
			m = x
		}
	}
	if m == nil || m.HeadVsBase == nil {
		t.Fatal("the fixture has no CPU comparison")
	}
	m.HeadVsBase.Verdict = verdict.NotDecided
	m.HeadVsBase.Of = "ratio"
	m.HeadVsBase.Ratio = benchrun.Interval{Median: 0.951, Lo: 0.917, Hi: 1.034}
	m.HeadVsBaseArms = []benchrun.ArmComparison{
		{Statistics: "off", Comparison: benchrun.Comparison{Of: "ratio", Verdict: verdict.NotDecided, Ratio: benchrun.Interval{Median: 1.001, Lo: 0.99, Hi: 1.01}}},
		{Statistics: "on", Comparison: benchrun.Comparison{Of: "ratio", Verdict: verdict.Improved, Ratio: benchrun.Interval{Median: 0.956, Lo: 0.94, Hi: 0.971}, WilcoxonP: 0.0004}},
	}
	m.Verdict = verdict.Improved
	got := cpuAnswer(m)
	for _, want := range []string{
		"; head's vs base's: not decided, -4.9% [-8.3%, +3.4%]",
		"; head vs base, statistics on: ✅ improved, -4.4% [-6.0%, -2.9%] (p<0.001, not gated)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("answer %q lacks %q", got, want)
		}
	}
	// An arm that decided nothing is not listed: the measure's table has it.
	if strings.Contains(got, "statistics off") {
		t.Errorf("answer %q lists an arm that decided nothing", got)
	}
}
