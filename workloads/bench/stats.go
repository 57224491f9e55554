package bench

import (
	"fmt"
	"math"
	"slices"

	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/internal/side"
)

// A measureDef is how one reported measure is read from the samples.
type measureDef struct {
	name   string
	unit   string // as in bench.txt
	label  string // as in the Markdown table
	better benchstat.Better
	noisy  bool
	from   Measure
	value  func(*Sample) (float64, bool)
	// exact is the rule an exact measure is judged by: its allowance and
	// the noise of one value it assumes (see benchstat.ExactRule).
	exact benchstat.ExactRule
	// onDiffs judges head's cost of statistics against base's on the
	// differences on−off (calls a request), not on the ratios: a lock
	// count with statistics off is a handful of Apache's own calls, and a
	// ratio over it moves with a tenth of a call.
	onDiffs bool
	// part marks a part of a judged measure, shown head against base and
	// not judged (see judged).
	part bool
}

// LockResolution is the smallest difference in lock calls a request that
// counts, in every comparison of them: Apache's and libc's own ~6 calls a
// request move by a tenth or two between servers, which one counted pass
// cannot tell from a change, and a cost of statistics is hundreds of
// calls or none.
const LockResolution = 0.5

// The noise of one value the exact rule assumes where a sample is too
// small to measure its own (one counted pass): the lock counter's calls a
// request move by about a tenth between fresh servers (6.21 against 6.33
// in one run, 6.30 to 6.38 over six passes), and callgrind's instructions
// a request by a few hundredths of a percent (423,372 to 423,521 over six).
// The rule takes a little more than either; two counted passes measure it.
const (
	LockNoise        = 0.15   // calls a request
	InstructionNoise = 0.0005 // of the instructions a request
)

var (
	lockRule        = benchstat.ExactRule{Allowance: LockResolution, Noise: LockNoise}
	instructionRule = benchstat.ExactRule{RelNoise: InstructionNoise}
)

// LockCalls is the name of the measure of pthread_mutex_lock calls per
// request, the number a reviewer looks for first; CPUMeasure that of CPU
// time per request.
const (
	LockCalls  = "locks"
	CPUMeasure = "cpu"
)

// fromLocks, fromInstructions and fromCPU read a measure from the part of
// a sample it comes from, when the sample has that part.
func fromLocks(f func(*LockSample) float64) func(*Sample) (float64, bool) {
	return func(s *Sample) (float64, bool) {
		if s.Locks == nil {
			return 0, false
		}
		return f(s.Locks), true
	}
}

func fromInstructions(f func(*InstructionSample) float64) func(*Sample) (float64, bool) {
	return func(s *Sample) (float64, bool) {
		if s.Instructions == nil {
			return 0, false
		}
		return f(s.Instructions), true
	}
}

func fromCPU(f func(*CPUSample) float64) func(*Sample) (float64, bool) {
	return func(s *Sample) (float64, bool) {
		if s.CPU == nil {
			return 0, false
		}
		return f(s.CPU), true
	}
}

// measureDefs lists the reported measures in the order the report shows
// them: the exact counts first, the noisy timings last.
var measureDefs = []measureDef{
	{name: LockCalls, unit: "locks/req", label: "lock calls/req", from: MeasureLocks,
		value: fromLocks(func(l *LockSample) float64 { return l.LocksPerRequest }), exact: lockRule, onDiffs: true},
	// The same mutex in every arm, named by its owner; the busiest mutex
	// of an arm with statistics off is another one.
	{name: "stats_mutex_locks", unit: "stats-mutex-locks/req", label: "statistics mutex calls/req", from: MeasureLocks,
		value: func(s *Sample) (float64, bool) {
			if s.Locks == nil || s.Locks.StatsMutex == nil {
				return 0, false
			}
			return s.Locks.StatsMutex.LocksPerRequest, true
		}, exact: lockRule, onDiffs: true},
	// Parts of the total: a noisy denominator would fail three measures
	// for one.
	{name: "shared_locks", unit: "shared-locks/req", label: "on shared mutexes", from: MeasureLocks,
		value: fromLocks(func(l *LockSample) float64 { return l.SharedLocksPerRequest }), exact: lockRule, onDiffs: true, part: true},
	{name: "per_thread_locks", unit: "per-thread-locks/req", label: "on per-thread mutexes", from: MeasureLocks,
		value: fromLocks(func(l *LockSample) float64 { return l.PerThreadLocksPerRequest }), exact: lockRule, onDiffs: true, part: true},
	{name: "instructions", unit: "instr/req", label: "instructions/req", from: MeasureInstructions,
		value: fromInstructions(func(i *InstructionSample) float64 { return i.InstructionsPerRequest }), exact: instructionRule},
	{name: CPUMeasure, unit: "ms-cpu/req", label: "CPU ms/req", noisy: true, from: MeasureCPU,
		value: fromCPU(func(c *CPUSample) float64 { return c.CPUMsPerRequest })},
	// What explains CPU time. Six noisy measures judged each at alpha
	// give a false verdict on one of them in about a run of four: in 20
	// A/A runs (base against itself) CPU time had none, its halves and
	// req/s together four.
	{name: "cpu_user", unit: "ms-user/req", label: "user ms/req", noisy: true, from: MeasureCPU, part: true,
		value: fromCPU(func(c *CPUSample) float64 { return c.UserMsPerRequest })},
	{name: "cpu_system", unit: "ms-sys/req", label: "system ms/req", noisy: true, from: MeasureCPU, part: true,
		value: fromCPU(func(c *CPUSample) float64 { return c.SystemMsPerRequest })},
	{name: "voluntary_switches", unit: "vcsw/req", label: "voluntary switches/req", noisy: true, from: MeasureCPU, part: true,
		value: fromCPU(func(c *CPUSample) float64 { return c.VoluntarySwitchesPerRequest })},
	{name: "involuntary_switches", unit: "ivcsw/req", label: "involuntary switches/req", noisy: true, from: MeasureCPU, part: true,
		value: fromCPU(func(c *CPUSample) float64 { return c.InvoluntarySwitchesPerRequest })},
	{name: "throughput", unit: "req/s", label: "req/s", better: benchstat.HigherIsBetter, noisy: true, from: MeasureCPU, part: true,
		value: fromCPU(func(c *CPUSample) float64 { return c.RequestsPerSec })},
}

// judged reports whether head against base is judged for d: every measure
// but the parts of a judged one (what explains CPU time; the shared and
// per-thread lock calls, parts of the total). The cost of statistics
// within a build is judged for all of them: there the effect is real and
// large.
func (d measureDef) judged() bool { return !d.part }

func resolvedThresholds(th benchstat.Thresholds) Thresholds {
	// A comparison of two tiny samples reports the thresholds it used,
	// defaults filled in.
	c := benchstat.Compare(benchstat.NewSample(1), benchstat.NewSample(1), benchstat.LowerIsBetter, th)
	t := c.Thresholds
	return Thresholds{Alpha: t.Alpha, MinEffect: t.MinEffect, Confidence: t.Confidence, ExactFloor: t.ExactFloor}
}

// thresholds are the resolved thresholds t as benchstat takes them: a zero
// minimum effect or floor resolved from "none"; all zero (a Result that
// never recorded them) the defaults.
func (t Thresholds) thresholds() benchstat.Thresholds {
	if t.Alpha == 0 {
		return benchstat.Thresholds{}
	}
	none := func(x float64) float64 {
		if x == 0 {
			return -1
		}
		return x
	}
	return benchstat.Thresholds{Alpha: t.Alpha, MinEffect: none(t.MinEffect), Confidence: t.Confidence, ExactFloor: none(t.ExactFloor)}
}

// Analyse computes every measure's statistics from the arms' samples, by
// the settings the Result records (its measures, thresholds and passes a
// server), replacing any it had: a Result read back from results.json is
// judged again by this version's rules. Arms pair by pass: a cost uses
// the passes where both of a build's arms have a value, head against base
// in one arm the passes where both builds have one, and head's cost
// against base's the passes where all four do.
func (r *Result) Analyse() {
	r.Measures = nil
	th := r.Settings.Thresholds.thresholds()
	for _, d := range measureDefs {
		if !r.Settings.wants(d.from) {
			continue
		}
		r.Measures = append(r.Measures, r.measureStats(d, r.Arms, r.Passes, th))
	}
	for _, pt := range r.Sweep {
		if pt.Main {
			pt.CPU = r.measure(CPUMeasure)
			continue
		}
		pt.CPU = r.measureStats(defOf(CPUMeasure), pt.Arms, pt.Passes, th)
	}
}

// wants says whether the run took measure m: every measure where the
// settings list none.
func (s Settings) wants(m Measure) bool {
	return len(s.Measures) == 0 || slices.Contains(s.Measures, string(m))
}

// defOf is the definition of the measure called name.
func defOf(name string) measureDef {
	for _, d := range measureDefs {
		if d.name == name {
			return d
		}
	}
	panic("bench: no measure " + name)
}

// measure is the statistics of the measure called name, nil if absent.
func (r *Result) measure(name string) *MeasureStats {
	for _, m := range r.Measures {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Label is the measure's name in the report's table.
func (m *MeasureStats) Label() string {
	for _, d := range measureDefs {
		if d.name == m.Name {
			return d.label
		}
	}
	return m.Name
}

// Arm is the summary of arm a's samples, if the measure has one.
func (m *MeasureStats) Arm(a Arm) (ArmSummary, bool) {
	for _, s := range m.Arms {
		if s.Arm == a {
			return s, true
		}
	}
	return ArmSummary{}, false
}

// measureStats is one measure's statistics over arms whose samples pair by
// the passes given.
func (r *Result) measureStats(d measureDef, arms []*ArmSamples, passes []Pass, th benchstat.Thresholds) *MeasureStats {
	conf := r.Settings.Thresholds.Confidence
	ms := &MeasureStats{Name: d.name, Unit: d.unit, Better: betterWord(d.better), Noisy: d.noisy}
	byPass := map[Arm]map[int]float64{}
	for _, a := range arms {
		var vs []float64
		byPass[a.Name] = map[int]float64{}
		for _, s := range a.Samples {
			if v, ok := d.value(s); ok {
				vs = append(vs, v)
				byPass[a.Name][s.Pass] = v
			}
		}
		sum := benchstat.Summarize(benchstat.NewSample(vs...), conf)
		ms.Arms = append(ms.Arms, ArmSummary{
			Arm: a.Name, N: sum.N, Median: num(sum.Center), Lo: num(sum.Lo), Hi: num(sum.Hi),
			Confidence: sum.Confidence, Values: vs,
		})
	}
	// paired returns the values of arms in the passes where every one of
	// them has a value, in pass order; for a noisy measure, the passes of
	// one server averaged (byServer).
	paired := func(arms ...Arm) pairs {
		out := pairs{samples: make([]benchstat.Sample, len(arms))}
		var nums []int
	pass:
		for _, p := range passes {
			for _, a := range arms {
				if _, ok := byPass[a][p.Pass]; !ok {
					continue pass
				}
			}
			nums = append(nums, p.Pass)
			for i, a := range arms {
				out.samples[i].Values = append(out.samples[i].Values, byPass[a][p.Pass])
			}
		}
		out.passes = len(nums)
		if d.noisy {
			out.samples = byServer(out.samples, nums, r.Settings.PassesPerServer)
		}
		return out
	}
	for _, b := range r.Builds {
		s := paired(Arm{b.Name, true}, Arm{b.Name, false})
		cs, ws, err := buildCost(b.Name, s, d, th)
		if err != nil {
			ms.Warnings = appendNew(ms.Warnings, string(b.Name)+": "+err.Error())
			continue
		}
		ms.Costs = append(ms.Costs, cs)
		ms.Warnings = appendNew(ms.Warnings, ws...)
	}
	if len(r.Builds) < 2 {
		return ms
	}
	for _, stats := range []bool{false, true} {
		s := paired(Arm{side.Base, stats}, Arm{side.Head, stats})
		c, ws, err := armVsBase(s, d, th)
		if err != nil {
			ms.Warnings = appendNew(ms.Warnings, fmt.Sprintf("head vs base, statistics %s: %v", onOff(stats), err))
			continue
		}
		ms.HeadVsBaseArms = append(ms.HeadVsBaseArms, ArmComparison{Statistics: onOff(stats), Comparison: *c})
		ms.Warnings = appendNew(ms.Warnings, ws...)
	}
	s := paired(Arm{side.Base, true}, Arm{side.Base, false}, Arm{side.Head, true}, Arm{side.Head, false})
	c, ws, err := headVsBase(s, d, th)
	if err != nil {
		ms.Warnings = appendNew(ms.Warnings, "head vs base: "+err.Error())
	} else {
		ms.HeadVsBase = c
		ms.Warnings = appendNew(ms.Warnings, ws...)
	}
	ms.Verdict = ms.overall()
	return ms
}

// pairs are the samples of some arms that pair, and the passes they came
// from: for a noisy measure one value a server, averaged over its passes.
type pairs struct {
	samples []benchstat.Sample
	passes  int
}

// overall is the measure's verdict of head against base: regressed when
// head is worse in either arm or in its cost of statistics; else improved
// when better in one of them; else not decided when one of them could not
// decide; else no change. A part of a judged measure is not judged.
func (m *MeasureStats) overall() benchstat.Change {
	var vs []benchstat.Change
	if m.HeadVsBase != nil {
		vs = append(vs, m.HeadVsBase.Verdict)
	}
	for _, a := range m.HeadVsBaseArms {
		vs = append(vs, a.Verdict)
	}
	for _, want := range []benchstat.Change{benchstat.Regressed, benchstat.Improved, benchstat.NotDecided, benchstat.NoChange, benchstat.NotJudged} {
		if slices.Contains(vs, want) {
			return want
		}
	}
	return ""
}

// Ways a verdict is reached, as results.json spells them.
const (
	decidedByWilcoxon = "wilcoxon"
	decidedBySpread   = "spread"
)

// buildCost is the cost of statistics in one build (s: on, off): the
// paired statistics of every measure, and the verdict of the signed-rank
// test for a noisy measure or of the exact rule for an exact one.
func buildCost(build side.Side, s pairs, d measureDef, th benchstat.Thresholds) (CostStats, []string, error) {
	on, off := s.samples[0], s.samples[1]
	c, err := benchstat.PairedCost(on, off, d.better, th)
	if err != nil {
		return CostStats{}, nil, err
	}
	cs := costStats(build, c, s.passes, d.noisy)
	if d.noisy {
		cs.DecidedBy = decidedByWilcoxon
		return cs, c.Warnings, nil
	}
	ex := d.exact.Compare(off, on, d.better, th)
	cs.DecidedBy = decidedBySpread
	cs.Exact = exactStats(ex, d.exact)
	cs.Effect = num(ex.Effect)
	cs.Verdict = ex.Verdict
	return cs, ex.Warnings, nil
}

// armVsBase compares head with base in one arm (s: base, head), paired by
// pass: for a noisy measure by the signed-rank test on log(head/base) of
// each server, for an exact one by its rule.
func armVsBase(s pairs, d measureDef, th benchstat.Thresholds) (*Comparison, []string, error) {
	base, head := s.samples[0], s.samples[1]
	pc, err := benchstat.ComparePaired(base, head, d.better, th)
	if err != nil {
		return nil, nil, err
	}
	u := benchstat.Compare(base, head, d.better, th)
	c := comparison(pc, u, s.passes, d.noisy)
	return judge(c, pc, base, head, d, d.exact, th)
}

// headVsBase compares head's cost with base's over the passes in s (base
// on, base off, head on, head off): paired by pass (by server for a noisy
// measure), and for an exact measure judged by its rule on the per-pass
// costs, differences or ratios.
func headVsBase(s pairs, d measureDef, th benchstat.Thresholds) (*Comparison, []string, error) {
	base, err := benchstat.PairedCost(s.samples[0], s.samples[1], d.better, th)
	if err != nil {
		return nil, nil, err
	}
	head, err := benchstat.PairedCost(s.samples[2], s.samples[3], d.better, th)
	if err != nil {
		return nil, nil, err
	}
	pc, err := benchstat.PairedCompareCosts(base, head, th)
	if err != nil {
		return nil, nil, err
	}
	u := benchstat.CompareCosts(base, head, th)
	c := comparison(pc, u, s.passes, d.noisy)
	old, new := base.Ratios, head.Ratios
	if d.onDiffs || old.Values == nil || new.Values == nil {
		old, new = base.Diffs, head.Diffs
		c.Of = "diff"
	}
	return judge(c, pc, old, new, d, d.exact.Derived(), th)
}

// judge sets the verdict of a comparison c of new against old: not
// judged for a part of a measure; the signed-rank test's, sized by its
// power, for a noisy one; the exact rule's for an exact one.
func judge(c *Comparison, pc benchstat.PairedComparison, old, new benchstat.Sample, d measureDef, rule benchstat.ExactRule, th benchstat.Thresholds) (*Comparison, []string, error) {
	switch {
	case !d.judged() && d.noisy:
		c.Verdict = benchstat.NotJudged
		return c, pc.Warnings, nil
	case d.noisy:
		c.DecidedBy = decidedByWilcoxon
		return c, pc.Warnings, nil
	}
	ex := rule.Compare(old, new, d.better, th)
	c.DecidedBy = decidedBySpread
	c.Exact = exactStats(ex, rule)
	c.Effect = num(ex.Effect)
	c.Verdict = ex.Verdict
	c.Detectable = nil
	if !d.judged() {
		c.Verdict = benchstat.NotJudged
	}
	return c, ex.Warnings, nil
}

// appendNew appends the warnings ws lacks: the same sample-size warning
// comes from every comparison of a measure.
func appendNew(ws []string, add ...string) []string {
	for _, w := range add {
		if !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}

func betterWord(b benchstat.Better) string {
	if b == benchstat.HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// num makes a statistic JSON-safe: encoding/json refuses NaN and ±Inf,
// which here only ever mean "not defined", as the sample count then says.
func num(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func interval(s benchstat.Summary) Interval {
	return Interval{N: s.N, Median: num(s.Center), Lo: num(s.Lo), Hi: num(s.Hi), Confidence: num(s.Confidence)}
}

func costStats(build side.Side, c benchstat.Cost, passes int, noisy bool) CostStats {
	pc := c.Paired
	cs := CostStats{
		Build: build,
		Ratio: interval(c.Ratio),
		Diff:  interval(c.Diff),
		Above: pc.Above, Below: pc.Below, SignP: num(pc.SignP),
		P:             num(c.Test.P),
		Effect:        num(c.Effect),
		Verdict:       c.Verdict,
		Pairs:         passes,
		WilcoxonP:     num(pc.Test.P),
		Of:            ofWord(pc.Log),
		HodgesLehmann: hodgesLehmann(pc),
	}
	if noisy {
		cs.Servers = pc.Test.N
		cs.Detectable = detectable(pc)
	}
	return cs
}

// detectable is the smallest relative change the comparison finds with
// 80% power; nil where it has too few servers to find any.
func detectable(pc benchstat.PairedComparison) *float64 {
	if math.IsInf(pc.Detectable, 0) || math.IsNaN(pc.Detectable) {
		return nil
	}
	x := pc.Detectable
	return &x
}

func ofWord(log bool) string {
	if log {
		return "ratio"
	}
	return "diff"
}

// hodgesLehmann is the Hodges-Lehmann estimate of a paired comparison in
// the measure's own terms: a ratio new/old (the exponential of the median
// log ratio) or a difference new−old.
func hodgesLehmann(pc benchstat.PairedComparison) Interval {
	sh := pc.Shift
	if !pc.Log {
		return interval(sh)
	}
	return Interval{N: sh.N, Median: num(math.Exp(sh.Center)), Lo: num(math.Exp(sh.Lo)), Hi: num(math.Exp(sh.Hi)), Confidence: num(sh.Confidence)}
}

func exactStats(ex benchstat.ExactComparison, rule benchstat.ExactRule) *ExactStats {
	rng := func(r benchstat.Range) Range {
		return Range{N: r.N, Min: num(r.Min), Median: num(r.Median), Mean: num(r.Mean), Max: num(r.Max)}
	}
	return &ExactStats{Old: rng(ex.Old), New: rng(ex.New), Tolerance: num(ex.Tolerance), Apart: ex.Apart,
		Floor: num(ex.Floor), Allowance: rule.Allowance, Noise: num(ex.Noise), NoiseAssumed: ex.NoiseAssumed,
		StdErr: num(ex.StdErr), Detectable: num(ex.Detectable)}
}

// comparison is head against base (in one arm, or of the costs): the
// paired comparison, with the unpaired U test's p-value where results.json
// has always had it.
func comparison(pc benchstat.PairedComparison, u benchstat.Comparison, passes int, noisy bool) *Comparison {
	c := &Comparison{
		Of:    ofWord(pc.Log),
		Base:  interval(pc.Old),
		Head:  interval(pc.New),
		Above: pc.Above, Below: pc.Below, SignP: num(pc.SignP),
		P:         num(u.Test.P),
		Pairs:     passes,
		WilcoxonP: num(pc.Test.P),
		Effect:    num(pc.Effect),
		Verdict:   pc.Verdict,
	}
	if noisy {
		c.Servers = pc.Test.N
		c.Detectable = detectable(pc)
	}
	hl := hodgesLehmann(pc)
	if pc.Log {
		c.Ratio = hl
	}
	// The difference of the two, pass by pass, whatever the verdict was
	// reached on.
	diffs := make([]float64, pc.D.N())
	for i := range diffs {
		diffs[i] = pc.NewSample.Values[i] - pc.OldSample.Values[i]
	}
	c.Diff = interval(benchstat.WalshMedian(diffs, pc.Thresholds.Confidence))
	return c
}

// CPUFalseRate is how often a head equal to base reads as regressed or
// improved in CPU time: the worst of three signed-rank tests at 0.05 (each
// arm, and the cost of statistics), simulated on 1,000 A/A runs of the
// demo's 40 passes (TestCPUHeadVsBaseFalseRate). One reason CPU time,
// shown beside the exact measures, does not gate.
const CPUFalseRate = 0.12
