package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/chart"
	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
)

// Label names the check in the report's tables and its verdict block.
func (*Result) Label() string { return "contention" }

// Question is the reviewer's question the check answers: the third, is
// the contention gone.
func (*Result) Question() int { return 3 }

// Sections are the target's benchmark section, none where the check did
// not run.
func (r *Result) Sections() []verdict.Section { return verdict.OneSection(r) }

// Artifacts are the run's samples in the Go benchmark format, each
// target's results, chart and flame graphs, and the servers' logs.
func (r *Result) Artifacts() []verdict.Artifact {
	if r == nil {
		return nil
	}
	return []verdict.Artifact{
		{What: "`bench.txt`"},
		{What: "each target's `bench.json`, `sweep.svg` and flame graphs (`profile/ARM/flamegraph.svg`)"},
		verdict.ServerLogs,
	}
}

// sectionTitle heads the check's section of a target.
const sectionTitle = "#### Contention benchmark\n\n"

// WriteSection writes the target's "Contention benchmark" section for a
// pull request comment: one compact table (each arm's median with its
// interval, the cost of statistics in each build, head against base with
// statistics off, with them on, and of their costs) with the warnings
// under it, the servers' crashes, and the settings and raw samples folded
// away.
func (r *Result) WriteSection(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(sectionTitle)
	r.writeBody(bw, false)
	return bw.Flush()
}

// writeBody is the section under its title; compact leaves out the raw
// tables, which the artifacts have.
func (r *Result) writeBody(bw io.Writer, compact bool) {
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	head := len(r.Builds) > 1
	p("**Benchmark** `%s` on %s, %d PHP threads, %s: %d CPU passes of %gs on warm servers, fresh every %s, the exact measures from %d counted %s; medians with %s intervals; cost = statistics on/off, paired by pass.\n\n",
		r.Workload, r.Server, r.Settings.Threads, opcacheWords(r.Settings.OPcache), len(r.Passes), r.Settings.DurationS, plural(r.Settings.PassesPerServer, "pass", fmt.Sprintf("%d passes", r.Settings.PassesPerServer)), r.Settings.CountedPasses,
		plural(r.Settings.CountedPasses, "pass", "passes"), pct(r.Settings.Thresholds.Confidence))
	if r.Settings.Pinning != "" {
		p("Placement: %s.\n\n", markdown.Text(r.Settings.Pinning))
	}
	if len(r.Measures) == 0 {
		p("No statistics: the run ended early.\n\n")
	}
	if len(r.Measures) > 0 {
		if head {
			p("| measure | base off | base on | base cost | head off | head on | head cost | head vs base, off | head vs base, on | head's cost vs base's |\n")
			p("|---|---:|---:|---:|---:|---:|---:|---|---|---|\n")
		} else {
			p("| measure | base off | base on | base cost |\n")
			p("|---|---:|---:|---:|\n")
		}
	}
	notes := footnotes(r.Measures)
	for _, m := range r.Measures {
		label := m.Label()
		if m.Noisy {
			label += " ⁿ"
		}
		for _, w := range m.Warnings {
			if i := slices.Index(notes.own, w); i >= 0 {
				label += fmt.Sprintf(" [%d]", i+1)
			}
		}
		p("| %s", label)
		for _, b := range r.Builds {
			p(" | %s | %s | %s", armCell(m, benchrun.Arm{Side: b.Name, Statistics: false}), armCell(m, benchrun.Arm{Side: b.Name, Statistics: true}), costCell(m, b.Name))
		}
		if head {
			for _, pt := range parts(m) {
				p(" | %s", compareCell(m, pt))
			}
			for range 3 - len(parts(m)) {
				p(" | –")
			}
		}
		p(" |\n")
	}
	if len(r.Measures) > 0 {
		th := r.Settings.Thresholds
		if r.hasExact() {
			p("\nExact measures change where the difference of their means exceeds the smallest change worth finding, max(%s of the old mean, %g lock calls a request), by more than Student's t times its standard error (a test at %v): the noise pooled from the passes, never less than the noise one pass is assumed to have, which is all one pass has (%g lock calls a request, %s of the instructions); lock calls are judged on differences, and their shared and per-thread parts are shown, not judged.",
				pct(th.ExactFloor), benchrun.LockResolution, th.Alpha, benchrun.LockNoise, pct(benchrun.InstructionNoise))
		}
		if r.hasNoisy() {
			p(" ⁿ depends on the machine's load, and is not gated on: a change is the Hodges-Lehmann estimate of log(on/off), or of log(head/base), with its %s interval, the passes of one server averaged (n servers), decided by the Wilcoxon signed-rank test (p ≤ %v) with the sign test beside it; where it finds nothing it is `~` only if it could detect ±%s (the smallest change worth finding, at 80%% power), else not decided. Head vs base is judged on CPU time alone: what explains it (user, system, switches, req/s) is shown, not judged, as six such verdicts would give a false one in about a run of four. Even so its verdict is the worst of three tests (each arm, and the cost), so a head equal to base reads as changed in about %s of runs (simulated).",
				pct(r.Settings.Thresholds.Confidence), th.Alpha, pct(th.MinEffect), pct(benchrun.CPUFalseRate))
		}
		p(" `~` is no significant change.\n")
	}
	if len(notes.own) > 0 || len(notes.all) > 0 || len(r.Warnings) > 0 {
		p("\n")
		// The measures' notes are the statistics' own words, of numbers;
		// the run's warnings may quote the head's servers (an error of a
		// profile, of a lock table).
		for i, n := range notes.own {
			p("%d. %s\n", i+1, n)
		}
		for _, w := range r.Warnings {
			p("- ⚠ %s\n", markdown.Text(w))
		}
		for _, n := range notes.all {
			p("- ⚠ %s\n", n)
		}
	}
	r.markdownCrashes(bw)
	if !compact {
		r.markdownShared(bw)
	}
	r.markdownSweep(bw)
	r.markdownProfiles(bw)
	if compact {
		p("\nThe settings, every sample and the pass orders: the target's `bench` in `results.json`, and `bench.txt` (`benchstat -col '/stats@(off on)' bench.txt`), among the artifacts.\n")
		return
	}
	r.markdownDetails(bw)
}

// notes are the measures' warnings: those every measure has, shown once,
// and the others, numbered and marked on their rows.
type notes struct{ all, own []string }

func footnotes(ms []*benchrun.MeasureStats) notes {
	var n notes
	count := map[string]int{}
	var order []string
	for _, m := range ms {
		for _, w := range m.Warnings {
			if count[w] == 0 {
				order = append(order, w)
			}
			count[w]++
		}
	}
	for _, w := range order {
		if count[w] == len(ms) && len(ms) > 1 {
			n.all = append(n.all, w)
		} else {
			n.own = append(n.own, w)
		}
	}
	return n
}

func (r *Result) hasExact() bool {
	for _, m := range r.Measures {
		if !m.Noisy {
			return true
		}
	}
	return false
}

func (r *Result) hasNoisy() bool {
	for _, m := range r.Measures {
		if m.Noisy {
			return true
		}
	}
	return false
}

func armCell(m *benchrun.MeasureStats, name benchrun.Arm) string {
	a, ok := m.Arm(name)
	if !ok || a.N == 0 {
		return "–"
	}
	if a.N == 1 || a.Lo == a.Hi {
		return value(a.Median)
	}
	return fmt.Sprintf("%s [%s, %s]", value(a.Median), value(a.Lo), value(a.Hi))
}

// costCell shows the cost of statistics in a build: for a noisy measure
// the Hodges-Lehmann estimate with its interval, the signed-rank p and
// the sign test, and for CPU time what it could detect; for an exact one
// the change of the mean and the tolerance it is judged by.
func costCell(m *benchrun.MeasureStats, build side.Side) string {
	for _, c := range m.Costs {
		if c.Build != build {
			continue
		}
		tilde := ""
		switch c.Verdict {
		case verdict.NoChange:
			tilde = "~ "
		case verdict.NotDecided:
			tilde = "not decided: "
		}
		if e := c.Exact; e != nil {
			if e.Old == e.New {
				return "~ 0 (identical)"
			}
			tol := "±" + diffValue(e.Tolerance)[1:]
			cost := diffValue(e.New.Mean - e.Old.Mean)
			if e.Allowance == 0 && e.Old.Mean > 0 {
				tol = "±" + percent(e.Tolerance/e.Old.Mean)
				cost = ratio(e.New.Mean / e.Old.Mean)
			}
			if c.Verdict == verdict.NoChange {
				return tilde + cost + " (within " + tol + ")"
			}
			return tilde + cost + " (beyond " + tol + ")"
		}
		hl := c.HodgesLehmann
		var s string
		if c.Of == "ratio" {
			s = fmt.Sprintf("%s [%s, %s]", ratio(hl.Median), ratio(hl.Lo), ratio(hl.Hi))
		} else {
			s = fmt.Sprintf("%s [%s, %s]", signed(hl.Median), signed(hl.Lo), signed(hl.Hi))
		}
		units := c.Servers
		if units == 0 {
			units = c.Pairs
		}
		s = fmt.Sprintf("%s%s p=%.3f%s, sign %s p=%.3f", tilde, s, c.WilcoxonP, servers(c.Servers), signCount(c.Above, c.Below, units), c.SignP)
		if m.Name == benchrun.CPUMeasure {
			s += ", " + detectable(&benchrun.Comparison{Detectable: c.Detectable})
		}
		return s
	}
	return "–"
}

// signCount says how many of the pairs went the majority's way: "5/6 up".
func signCount(above, below, pairs int) string {
	if below > above {
		return fmt.Sprintf("%d/%d down", below, pairs)
	}
	return fmt.Sprintf("%d/%d up", above, pairs)
}

// headCell is head's cost against base's, as the sweep's table shows it.
func headCell(m *benchrun.MeasureStats) string {
	if m.HeadVsBase == nil {
		return "–"
	}
	return compareCell(m, part{"cost of statistics", m.HeadVsBase, true})
}

// opcacheWords is the settings' word on OPcache for the section's first
// line, "OPcache on" or "OPcache off": what Settings.OPcache says before
// its reasons, which the settings below the table give.
func opcacheWords(s string) string {
	if s == "" {
		return "OPcache not recorded"
	}
	short, _, _ := strings.Cut(s, ":")
	return "OPcache " + markdown.Text(short)
}

// ratio shows an on/off ratio as a percentage change, or as a factor when
// statistics more than double the measure.
func ratio(x float64) string {
	if x >= 2 {
		return fmt.Sprintf("×%.3g", x)
	}
	return fmt.Sprintf("%+.1f%%", 100*(x-1))
}

// value shows a measurement with four significant digits, thousands and
// millions as k and M.
func value(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1e7:
		return fmt.Sprintf("%.4gM", x/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.4gk", x/1e3)
	}
	return fmt.Sprintf("%.4g", x)
}

func signed(x float64) string {
	if x >= 0 {
		return "+" + value(x)
	}
	return value(x)
}

func pct(x float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", 100*x), "0"), ".0") + "%"
}

func (r *Result) markdownDetails(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	s := r.Settings
	p("\n<details><summary>Settings and samples</summary>\n\n")
	if s.OPcache != "" {
		p("- PHP: OPcache %s\n", markdown.Text(s.OPcache))
	}
	p("- load: wrk %d threads, %d connections, %gs windows after %gs of warm-up on each warm server, keep-alive %s, ASLR %s\n", s.LoadThreads, s.Connections, s.DurationS, s.WarmupS, onOff(s.KeepAlive), onOff(s.ASLR))
	p("- windows: %d requests for lock counts, %d under callgrind, %d in flight, after %d warm-up requests\n", s.LockRequests, s.CallgrindRequests, s.WindowConcurrency, s.WindowWarmup)
	if r.CPUSource != "" {
		p("- CPU time from: %s\n", r.CPUSource)
	}
	if s.ServerCPUs != "" || s.LoadCPUs != "" || s.DBCPUs != "" {
		p("- CPUs: server %s, load %s, database %s\n", orDash(s.ServerCPUs), orDash(s.LoadCPUs), orDash(s.DBCPUs))
	}
	for _, b := range r.Builds {
		p("- %s: `%s`\n", b.Name, b.Module)
	}
	p("- thresholds: alpha %v, minimum effect %s, confidence %s, exact floor %s\n", s.Thresholds.Alpha, pct(s.Thresholds.MinEffect), pct(s.Thresholds.Confidence), pct(s.Thresholds.ExactFloor))
	for _, ps := range r.Passes {
		p("- pass %d order: %s\n", ps.Pass, joinArms(ps.Order))
	}
	if len(r.Measures) > 0 {
		p("\n| measure | arm | samples, pass by pass |\n|---|---|---|\n")
		for _, m := range r.Measures {
			for _, a := range m.Arms {
				vs := make([]string, len(a.Values))
				for i, v := range a.Values {
					vs[i] = value(v)
				}
				p("| %s | %s | %s |\n", m.Unit, a.Arm, strings.Join(vs, " "))
			}
		}
	}
	var lat []string
	var sw []string
	for _, a := range r.Arms {
		for _, smp := range a.Samples {
			if c := smp.CPU; c != nil {
				flag := ""
				if c.HeavySteal {
					flag = " ⚠"
				}
				lat = append(lat, fmt.Sprintf("| %s | %d | %.0f | %.3g | %.3g | %.3g | %.1f%%%s | %.0f%% |", a.Name, smp.Pass, c.RequestsPerSec, c.LatencyAvgMs, c.LatencyP50Ms, c.LatencyP99Ms, 100*c.StealShare, flag, 100*c.PressureShare))
			}
			for _, w := range smp.Warnings {
				sw = append(sw, fmt.Sprintf("- %s pass %d: %s", a.Name, smp.Pass, markdown.Text(w)))
			}
		}
	}
	if len(lat) > 0 {
		p("\n| arm | pass | req/s | latency avg ms | p50 ms | p99 ms | steal | CPU pressure |\n|---|---:|---:|---:|---:|---:|---:|---:|\n%s\n", strings.Join(lat, "\n"))
	}
	if len(sw) > 0 {
		p("\n%s\n", strings.Join(sw, "\n"))
	}
	p("\n`bench.txt` holds every sample in the Go benchmark format: `benchstat -col '/stats@(off on)' bench.txt`.\n\n</details>\n")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func joinArms(as []benchrun.Arm) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// markdownShared says where the statistics' locks go: how many of a
// request's lock calls are on mutexes that several threads lock, and
// whether mysqlnd's statistics mutex, named by its owner, is one of them.
func (r *Result) markdownShared(w io.Writer) {
	type row struct {
		arm               benchrun.Arm
		shared, perThread float64
		mutexes           int
		stats             *benchrun.StatsMutexSample
	}
	var rows []row
	for _, a := range r.Arms {
		for _, s := range a.Samples {
			if s.Locks != nil {
				rows = append(rows, row{a.Name, s.Locks.SharedLocksPerRequest, s.Locks.PerThreadLocksPerRequest, s.Locks.SharedMutexes, s.Locks.StatsMutex})
				break // the first counted pass: the split repeats exactly
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Shared or per-thread:** lock calls a request on mutexes more than one thread locks (where threads contend) and on mutexes one thread only locks.\n\n| arm | shared | per-thread | shared mutexes | statistics mutex |\n|---|---:|---:|---:|---|\n")
	for _, x := range rows {
		sm := "not named"
		switch {
		case x.stats == nil:
		case x.stats.Mutex == "":
			sm = "no mutex locked"
		case x.stats.Shared:
			sm = fmt.Sprintf("shared, %s calls (%s)", value(x.stats.LocksPerRequest), markdown.Code(x.stats.Mutex))
		default:
			sm = fmt.Sprintf("one thread, %s calls (%s)", value(x.stats.LocksPerRequest), markdown.Code(x.stats.Mutex))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s |\n", x.arm, value(x.shared), value(x.perThread), x.mutexes, sm)
	}
}

// markdownCrashes says how many servers of each build had PHP crash, and
// what that means for the change.
func (r *Result) markdownCrashes(w io.Writer) {
	if len(r.ServerCrashes) == 0 {
		return
	}
	var parts, servers, signals []string
	for _, c := range r.ServerCrashes {
		parts = append(parts, fmt.Sprintf("%s %d of %d", c.Build, c.Crashed, c.Servers))
		servers = append(servers, fmt.Sprintf("%d %s", c.Servers, c.Build))
		for _, s := range c.Signals {
			if !slices.Contains(signals, s) {
				signals = append(signals, s)
			}
		}
	}
	if len(signals) == 0 {
		fmt.Fprintf(w, "\n**Server crashes:** none; every Apache child exited cleanly (%s servers).\n", strings.Join(servers, ", "))
		return
	}
	base, head := r.CrashesOf(side.Base), r.CrashesOf(side.Head)
	var means string
	switch {
	case r.headCrashes():
		means = fmt.Sprintf("%s %s (Fisher's exact test, one-sided, p=%.2g ≤ %v): a regression", verdict.Regressed.Icon(), crashesRegressed, crashesP(base, head), crashAlpha)
	case head != nil && head.Crashed > 0 && base == nil:
		means = "no base servers to compare with, so it is not gated"
	case head != nil && head.Crashed > 0 && base.Crashed == 0:
		means = fmt.Sprintf("%s base's did not, but so few crashes could fall on head's servers alone by chance (Fisher's exact test, one-sided, p=%.2g > %v), so it is not gated", verdict.WarningIcon, crashesP(base, head), crashAlpha)
	case head != nil && head.Crashed > 0:
		means = fmt.Sprintf("base's crashed too, and head's not significantly more often (Fisher's exact test, one-sided, p=%.2g > %v), so it is not gated", crashesP(base, head), crashAlpha)
	case len(r.Builds) > 1:
		means = "head's did not"
	}
	fmt.Fprintf(w, "\n**Server crashes:** PHP crashed in Apache's child (%s) in %s servers; a crash at shutdown is seen in the error log only, not by the load", markdown.Text(strings.Join(signals, ", ")), strings.Join(parts, ", "))
	if means != "" {
		fmt.Fprintf(w, "; %s", means)
	}
	fmt.Fprint(w, ".\n")
}

// markdownSweep is the sweep as a table, and as a chart GitHub draws.
func (r *Result) markdownSweep(w io.Writer) {
	if len(r.Sweep) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	head := len(r.Builds) > 1
	p("\n**Thread scaling:** the CPU cost of statistics (on/off, Hodges-Lehmann estimate and interval, p of the signed-rank test) at each count of PHP threads.\n\n")
	if head {
		p("| threads | passes | base cost | head cost | head vs base |\n|---:|---:|---:|---:|---|\n")
	} else {
		p("| threads | passes | base cost |\n|---:|---:|---:|\n")
	}
	for _, pt := range r.Sweep {
		if pt.CPU == nil {
			continue
		}
		n := 0
		if len(pt.CPU.Arms) > 0 {
			n = pt.CPU.Arms[0].N
		}
		p("| %d | %d", pt.Threads, n)
		for _, b := range r.Builds {
			p(" | %s", costCell(pt.CPU, b.Name))
		}
		if head {
			p(" | %s", headCell(pt.CPU))
		}
		p(" |\n")
	}
	if m, err := chart.Mermaid(r.ScalingChart()); err == nil {
		p("\n%s\n", m)
	} else {
		p("\n(No chart: %v.)\n", err)
	}
	if r.SweepChart != "" {
		p("\nThe chart with its intervals: `%s` among the artifacts.\n", filepath.Base(r.SweepChart))
	}
}

// profileTop is how many symbols of each profile the report lists.
const profileTop = 4

// markdownProfiles lists each arm's share of CPU in lock functions and
// its busiest symbols.
func (r *Result) markdownProfiles(w io.Writer) {
	if len(r.Profiles) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\n**Where the CPU goes** (perf, cpu-clock, %gs under load per arm):\n\n| arm | samples | in lock functions | top symbols (self) |\n|---|---:|---:|---|\n", r.Settings.ProfileS)
	for _, ap := range r.Profiles {
		if ap.Profile == nil {
			p("| %s | – | – | no profile: %s |\n", ap.Arm, markdown.Text(ap.Error))
			continue
		}
		var top []string
		for i, s := range ap.Profile.Top {
			if i == profileTop {
				break
			}
			top = append(top, fmt.Sprintf("%s %.1f%%", markdown.Code(s.Name), 100*s.Share))
		}
		p("| %s | %d | %.1f%% | %s |\n", ap.Arm, ap.Profile.Samples, 100*ap.Profile.LockShare, strings.Join(top, ", "))
	}
	p("\nFlame graphs: `profile/ARM/flamegraph.svg` among the artifacts.\n")
}
