package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// statsMutexMeasure is the measure of the calls on mysqlnd's global
// statistics mutex: the contention the change removes.
const statsMutexMeasure = "stats_mutex_locks"

// Answer is the check's answer to the reviewer's question 3, is the
// contention gone, in one line of the report's verdict block: the calls a
// request makes on the statistics mutex, base → head; the CPU cost of
// statistics in each build with its interval; and head's cost against
// base's, its verdict with its size and what it could detect. The icon is
// the gate's: what Judge fails on (the exact measures, crashes), not the
// CPU time, which informs only.
func (r *Result) Answer() string {
	if r == nil {
		return "not run"
	}
	if len(r.Builds) < 2 {
		return "base only: no head to compare"
	}
	if len(r.Measures) == 0 {
		return verdict.Error.Icon() + " no statistics: the run ended early"
	}
	icon := verdict.Passed.Icon()
	if len(r.regressions()) > 0 {
		icon = verdict.Failed.Icon()
	}
	var parts []string
	if m := r.named(statsMutexMeasure); m != nil {
		if b, h, ok := onArms(m); ok {
			parts = append(parts, fmt.Sprintf("statistics-mutex calls a request %s → %s", value(b), value(h)))
		}
	} else if b, h, ok := r.lockCalls(); ok {
		parts = append(parts, fmt.Sprintf("lock calls a request, statistics on, %s → %s", value(b), value(h)))
	}
	if m := r.cpu(); m != nil {
		parts = append(parts, cpuAnswer(m))
	}
	for _, m := range r.Measures {
		if m.Noisy || m.Name == statsMutexMeasure || m.Verdict != verdict.Regressed {
			continue
		}
		parts = append(parts, measureLine(m, ""))
	}
	if r.headCrashes() {
		parts = append(parts, verdict.Regressed.Icon()+" "+crashesRegressed)
	}
	return icon + " " + strings.Join(parts, "; ")
}

// named is the measure called name, nil where the run did not take it.
func (r *Result) named(name string) *benchrun.MeasureStats {
	for _, m := range r.Measures {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// onArms are base's and head's medians of m with statistics on.
func onArms(m *benchrun.MeasureStats) (base, head float64, ok bool) {
	b, okb := m.Arm(benchrun.Arm{Side: side.Base, Statistics: true})
	h, okh := m.Arm(benchrun.Arm{Side: side.Head, Statistics: true})
	return b.Median, h.Median, okb && okh && b.N > 0 && h.N > 0
}

// cpuAnswer is CPU time's part of the answer: "CPU cost of statistics
// +5.6% [+3.1%, +8.0%] → +1.2% [-0.9%, +3.3%]; head's vs base's: improved,
// -4.2% [-6.1%, -2.2%] (p=0.003, not gated)", then head against base in an
// arm where that decided something: "; head vs base, statistics on: ✅
// improved, -4.4% [-6.0%, -2.9%] (p<0.001, not gated)". Each verdict is
// said beside its own estimate: the measure's, over all of them, could
// come from an arm whose numbers the cost's would seem to contradict.
func cpuAnswer(m *benchrun.MeasureStats) string {
	var costs []string
	for _, sd := range []side.Side{side.Base, side.Head} {
		for _, c := range m.Costs {
			if c.Build == sd {
				costs = append(costs, hlInterval(c.HodgesLehmann, c.Of))
			}
		}
	}
	s := "CPU cost of statistics " + strings.Join(costs, " → ")
	c := m.HeadVsBase
	if c == nil {
		return s
	}
	s += "; head's vs base's: " + comparisonText(c)
	for _, a := range m.HeadVsBaseArms {
		if a.Verdict == verdict.Improved || a.Verdict == verdict.Regressed {
			s += fmt.Sprintf("; head vs base, statistics %s: %s", a.Statistics, comparisonText(&a.Comparison))
		}
	}
	return s
}

// comparisonText is one comparison's verdict with its estimate, interval
// and p or what it could detect, not gated.
func comparisonText(c *benchrun.Comparison) string {
	est := fmt.Sprintf("%s [%s, %s]", ratio(c.Ratio.Median), ratio(c.Ratio.Lo), ratio(c.Ratio.Hi))
	if c.Of != "ratio" {
		est = fmt.Sprintf("%s [%s, %s]", signed(c.Diff.Median), signed(c.Diff.Lo), signed(c.Diff.Hi))
	}
	switch v := c.Verdict; v {
	case verdict.NoChange:
		return fmt.Sprintf("~ %s (%s, not gated)", est, detectable(c))
	case verdict.NotDecided, "":
		return fmt.Sprintf("not decided, %s (%s, not gated)", est, detectable(c))
	default:
		return fmt.Sprintf("%s %s, %s (%s, not gated)", v.Icon(), v, est, pValue(c.WilcoxonP))
	}
}

// pValue shows a p-value as a reader compares it with alpha.
func pValue(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

func hlInterval(hl benchrun.Interval, of string) string {
	if of == "ratio" {
		return fmt.Sprintf("%s [%s, %s]", ratio(hl.Median), ratio(hl.Lo), ratio(hl.Hi))
	}
	return fmt.Sprintf("%s [%s, %s]", signed(hl.Median), signed(hl.Lo), signed(hl.Hi))
}

// Caveats are what a reviewer of the benchmark must know though the check
// does not gate on it, each a short clause: PHP crashing in the servers
// (as the demo's does at every shutdown), CPU steal, a single counted
// pass, an A/A run.
func (r *Result) Caveats() []string {
	if r == nil {
		return nil
	}
	var cs []string
	base, head := r.CrashesOf(side.Base), r.CrashesOf(side.Head)
	if (base != nil && base.Crashed > 0) || (head != nil && head.Crashed > 0) {
		var counts, signals []string
		all := true
		for _, c := range r.ServerCrashes {
			counts = append(counts, fmt.Sprintf("%s %d of %d", c.Build, c.Crashed, c.Servers))
			all = all && c.Crashed == c.Servers
			for _, s := range c.Signals {
				if !strings.Contains(strings.Join(signals, "\x00"), s) {
					signals = append(signals, s)
				}
			}
		}
		what := "PHP crashed in benchmark servers"
		if all {
			what = "PHP crashed in every benchmark server"
		}
		c := fmt.Sprintf("%s (%s", what, strings.Join(counts, ", "))
		if len(signals) > 0 {
			c += ": " + markdown.Text(strings.Join(signals, ", "))
		}
		cs = append(cs, c+")")
	}
	heavy, windows := 0, 0
	for _, a := range r.Arms {
		for _, s := range a.Samples {
			if s.CPU != nil {
				windows++
				if s.CPU.HeavySteal {
					heavy++
				}
			}
		}
	}
	if heavy > 0 {
		cs = append(cs, fmt.Sprintf("CPU steal above 5%% in %d of %d CPU windows", heavy, windows))
	}
	if r.Settings.CountedPasses == 1 && len(r.Measures) > 0 {
		cs = append(cs, "one counted pass: the exact measures' noise is assumed, not measured")
	}
	if r.Settings.AA {
		cs = append(cs, "an A/A run: head is base, so any verdict of head against base is a false one")
	}
	return cs
}

// WriteCompactSection is WriteSection without the settings and the raw
// samples (pass orders, every sample, the latency table) nor the shared
// and per-thread table, for a pull request comment within its size
// budget: results.json (the target's "bench") and bench.txt have them.
func (r *Result) WriteCompactSection(w io.Writer) error {
	var b strings.Builder
	b.WriteString(sectionTitle)
	r.writeBody(&b, true)
	_, err := io.WriteString(w, b.String())
	return err
}

var _ verdict.Check = (*Result)(nil)
