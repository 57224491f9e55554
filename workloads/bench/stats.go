package bench

import (
	"math"
	"slices"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/benchstat"
	"github.com/patchproof/patchproof/verify/verdict"
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
	// resolution, for an exact measure, is the smallest difference of a
	// build's on and off that counts as a cost, in the measure's unit.
	resolution float64
}

// LockResolution is the smallest cost in lock calls a request that
// counts: Apache's and libc's own ~6 calls a request move by a tenth or two
// between servers, which with one counted pass is no spread to judge by,
// and a cost of statistics is hundreds of calls or none.
const LockResolution = 0.5

// LockCalls is the name of the measure of pthread_mutex_lock calls per
// request, the number a reviewer looks for first; cpuMeasure that of CPU
// time per request.
const (
	LockCalls  = "locks"
	cpuMeasure = "cpu"
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
	{LockCalls, "locks/req", "lock calls/req", benchstat.LowerIsBetter, false, MeasureLocks,
		fromLocks(func(l *LockSample) float64 { return l.LocksPerRequest }), LockResolution},
	// The same mutex in every arm, named by its owner; the busiest mutex
	// of an arm with statistics off is another one.
	{"stats_mutex_locks", "stats-mutex-locks/req", "statistics mutex calls/req", benchstat.LowerIsBetter, false, MeasureLocks,
		func(s *Sample) (float64, bool) {
			if s.Locks == nil || s.Locks.StatsMutex == nil {
				return 0, false
			}
			return s.Locks.StatsMutex.LocksPerRequest, true
		}, LockResolution},
	{"shared_locks", "shared-locks/req", "on shared mutexes", benchstat.LowerIsBetter, false, MeasureLocks,
		fromLocks(func(l *LockSample) float64 { return l.SharedLocksPerRequest }), LockResolution},
	{"per_thread_locks", "per-thread-locks/req", "on per-thread mutexes", benchstat.LowerIsBetter, false, MeasureLocks,
		fromLocks(func(l *LockSample) float64 { return l.PerThreadLocksPerRequest }), LockResolution},
	{"instructions", "instr/req", "instructions/req", benchstat.LowerIsBetter, false, MeasureInstructions,
		fromInstructions(func(i *InstructionSample) float64 { return i.InstructionsPerRequest }), 0},
	{cpuMeasure, "ms-cpu/req", "CPU ms/req", benchstat.LowerIsBetter, true, MeasureCPU,
		fromCPU(func(c *CPUSample) float64 { return c.CPUMsPerRequest }), 0},
	{"cpu_user", "ms-user/req", "user ms/req", benchstat.LowerIsBetter, true, MeasureCPU,
		fromCPU(func(c *CPUSample) float64 { return c.UserMsPerRequest }), 0},
	{"cpu_system", "ms-sys/req", "system ms/req", benchstat.LowerIsBetter, true, MeasureCPU,
		fromCPU(func(c *CPUSample) float64 { return c.SystemMsPerRequest }), 0},
	{"voluntary_switches", "vcsw/req", "voluntary switches/req", benchstat.LowerIsBetter, true, MeasureCPU,
		fromCPU(func(c *CPUSample) float64 { return c.VoluntarySwitchesPerRequest }), 0},
	{"involuntary_switches", "ivcsw/req", "involuntary switches/req", benchstat.LowerIsBetter, true, MeasureCPU,
		fromCPU(func(c *CPUSample) float64 { return c.InvoluntarySwitchesPerRequest }), 0},
	{"throughput", "req/s", "req/s", benchstat.HigherIsBetter, true, MeasureCPU,
		fromCPU(func(c *CPUSample) float64 { return c.RequestsPerSec }), 0},
}

// breakdown reports whether d explains CPU time rather than being the
// question: every noisy measure but CPU time itself. Head against base it
// is shown and not judged. Six noisy measures judged each at alpha give a
// false verdict on one of them in about a run of four: in 20 A/A runs
// (base against itself) CPU time had none, its halves and req/s together
// four. The cost of statistics within a build is judged for all of them:
// there the effect is real and large.
func (d measureDef) breakdown() bool { return d.noisy && d.name != cpuMeasure }

func resolvedThresholds(th benchstat.Thresholds) Thresholds {
	// A comparison of two tiny samples reports the thresholds it used,
	// defaults filled in.
	c := benchstat.Compare(benchstat.NewSample(1), benchstat.NewSample(1), benchstat.LowerIsBetter, th)
	t := c.Thresholds
	return Thresholds{Alpha: t.Alpha, MinEffect: t.MinEffect, Confidence: t.Confidence, ExactFloor: t.ExactFloor}
}

// analyse computes every measure's statistics from the arms' samples.
// Arms pair by pass: a cost uses the passes where both of a build's arms
// have a value, head against base the passes where all four do.
func (r *Result) analyse(o Options) {
	r.Measures = nil
	for _, d := range measureDefs {
		if !o.wants(d.from) {
			continue
		}
		r.Measures = append(r.Measures, r.measureStats(d, r.Arms, r.Passes, o.Thresholds))
	}
	for _, pt := range r.Sweep {
		if pt.Main {
			pt.CPU = r.measure(cpuMeasure)
			continue
		}
		pt.CPU = r.measureStats(defOf(cpuMeasure), pt.Arms, pt.Passes, o.Thresholds)
	}
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
	{
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
		// paired returns the values of arms in the passes where every one
		// of them has a value, in pass order.
		paired := func(arms ...Arm) []benchstat.Sample {
			out := make([]benchstat.Sample, len(arms))
		pass:
			for _, p := range passes {
				for _, a := range arms {
					if _, ok := byPass[a][p.Pass]; !ok {
						continue pass
					}
				}
				for i, a := range arms {
					out[i].Values = append(out[i].Values, byPass[a][p.Pass])
				}
			}
			return out
		}
		for _, b := range r.Builds {
			s := paired(Arm{b.Name, true}, Arm{b.Name, false})
			cs, ws, err := buildCost(b.Name, s[0], s[1], d, th)
			if err != nil {
				ms.Warnings = appendNew(ms.Warnings, string(b.Name)+": "+err.Error())
				continue
			}
			ms.Costs = append(ms.Costs, cs)
			ms.Warnings = appendNew(ms.Warnings, ws...)
		}
		if len(r.Builds) > 1 {
			s := paired(Arm{side.Base, true}, Arm{side.Base, false}, Arm{side.Head, true}, Arm{side.Head, false})
			c, ws, err := headVsBase(s, d, th)
			if err != nil {
				ms.Warnings = appendNew(ms.Warnings, "head vs base: "+err.Error())
			} else {
				ms.HeadVsBase = c
				ms.Verdict = c.Verdict
				ms.Warnings = appendNew(ms.Warnings, ws...)
			}
		}
		return ms
	}
}

// Ways a verdict is reached, as results.json spells them.
const (
	decidedByWilcoxon = "wilcoxon"
	decidedBySpread   = "spread"
)

// buildCost is the cost of statistics in one build: the paired statistics
// of every measure, and the verdict of the signed-rank test for a noisy
// measure or of the spread for an exact one.
func buildCost(build side.Side, on, off benchstat.Sample, d measureDef, th benchstat.Thresholds) (CostStats, []string, error) {
	c, err := benchstat.PairedCost(on, off, d.better, th)
	if err != nil {
		return CostStats{}, nil, err
	}
	cs := costStats(build, c)
	if d.noisy {
		cs.DecidedBy = decidedByWilcoxon
		return cs, c.Warnings, nil
	}
	ex := benchstat.CompareExact(off, on, d.better, th)
	if d.resolution > 0 && ex.Tolerance < d.resolution {
		ex.Tolerance = d.resolution
		if math.Abs(ex.Diff) <= d.resolution {
			ex.Verdict = verdict.NoChange
		}
	}
	cs.DecidedBy = decidedBySpread
	cs.Exact = exactStats(ex)
	cs.Effect = num(ex.Effect)
	cs.Verdict = ex.Verdict
	return cs, ex.Warnings, nil
}

// headVsBase compares head's cost with base's over the passes in s (base
// on, base off, head on, head off): paired by pass, and for an exact
// measure judged by the spread of the per-pass costs.
func headVsBase(s []benchstat.Sample, d measureDef, th benchstat.Thresholds) (*Comparison, []string, error) {
	base, err := benchstat.PairedCost(s[0], s[1], d.better, th)
	if err != nil {
		return nil, nil, err
	}
	head, err := benchstat.PairedCost(s[2], s[3], d.better, th)
	if err != nil {
		return nil, nil, err
	}
	pc, err := benchstat.PairedCompareCosts(base, head, th)
	if err != nil {
		return nil, nil, err
	}
	u := benchstat.CompareCosts(base, head, th)
	c := comparison(pc, u)
	if d.breakdown() {
		c.Verdict = verdict.NotJudged
		return c, pc.Warnings, nil
	}
	if d.noisy {
		c.DecidedBy = decidedByWilcoxon
		return c, pc.Warnings, nil
	}
	ex := benchstat.CompareExact(pc.OldSample, pc.NewSample, d.better, th)
	c.DecidedBy = decidedBySpread
	c.Exact = exactStats(ex)
	c.Effect = num(ex.Effect)
	c.Verdict = ex.Verdict
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

func costStats(build side.Side, c benchstat.Cost) CostStats {
	pc := c.Paired
	return CostStats{
		Build: build,
		Ratio: interval(c.Ratio),
		Diff:  interval(c.Diff),
		Above: pc.Above, Below: pc.Below, SignP: num(pc.SignP),
		P:             num(c.Test.P),
		Effect:        num(c.Effect),
		Verdict:       c.Verdict,
		Pairs:         pc.Test.N,
		WilcoxonP:     num(pc.Test.P),
		Of:            ofWord(pc.Log),
		HodgesLehmann: hodgesLehmann(pc),
	}
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

func exactStats(ex benchstat.ExactComparison) *ExactStats {
	rng := func(r benchstat.Range) Range {
		return Range{N: r.N, Min: num(r.Min), Median: num(r.Median), Max: num(r.Max)}
	}
	return &ExactStats{Old: rng(ex.Old), New: rng(ex.New), Tolerance: num(ex.Tolerance), Apart: ex.Apart}
}

// comparison is head's cost against base's: the paired comparison, with
// the unpaired U test's p-value where results.json has always had it.
func comparison(pc benchstat.PairedComparison, u benchstat.Comparison) *Comparison {
	c := &Comparison{
		Of:    ofWord(pc.Log),
		Base:  interval(pc.Old),
		Head:  interval(pc.New),
		Above: pc.Above, Below: pc.Below, SignP: num(pc.SignP),
		P:         num(u.Test.P),
		Pairs:     pc.Test.N,
		WilcoxonP: num(pc.Test.P),
		Effect:    num(pc.Effect),
		Verdict:   pc.Verdict,
	}
	hl := hodgesLehmann(pc)
	if pc.Log {
		c.Ratio = hl
	}
	// The difference of the two builds' costs, pass by pass, whatever the
	// verdict was reached on.
	diffs := make([]float64, pc.D.N())
	for i := range diffs {
		diffs[i] = pc.NewSample.Values[i] - pc.OldSample.Values[i]
	}
	c.Diff = interval(benchstat.WalshMedian(diffs, pc.Thresholds.Confidence))
	return c
}
