package bench

import (
	"math"
	"slices"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/benchstat"
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
}

// measureDefs lists the reported measures in the order the report shows
// them: the exact counts first, the noisy timings last.
var measureDefs = []measureDef{
	{lockCalls, "locks/req", "lock calls/req", benchstat.LowerIsBetter, false, MeasureLocks,
		func(s *Sample) (float64, bool) {
			if s.Locks == nil {
				return 0, false
			}
			return s.Locks.LocksPerRequest, true
		}},
	{"top_mutex_locks", "top-mutex-locks/req", "top mutex calls/req", benchstat.LowerIsBetter, false, MeasureLocks,
		func(s *Sample) (float64, bool) {
			if s.Locks == nil {
				return 0, false
			}
			return s.Locks.TopMutexPerRequest, true
		}},
	{"instructions", "instr/req", "instructions/req", benchstat.LowerIsBetter, false, MeasureInstructions,
		func(s *Sample) (float64, bool) {
			if s.Instructions == nil {
				return 0, false
			}
			return s.Instructions.InstructionsPerRequest, true
		}},
	{"cpu", "ms-cpu/req", "CPU ms/req", benchstat.LowerIsBetter, true, MeasureCPU,
		func(s *Sample) (float64, bool) {
			if s.CPU == nil {
				return 0, false
			}
			return s.CPU.CPUMsPerRequest, true
		}},
	{"throughput", "req/s", "req/s", benchstat.HigherIsBetter, true, MeasureCPU,
		func(s *Sample) (float64, bool) {
			if s.CPU == nil {
				return 0, false
			}
			return s.CPU.RequestsPerSec, true
		}},
}

func resolvedThresholds(th benchstat.Thresholds) Thresholds {
	// A comparison of two tiny samples reports the thresholds it used,
	// defaults filled in.
	c := benchstat.Compare(benchstat.NewSample(1), benchstat.NewSample(1), benchstat.LowerIsBetter, th)
	return Thresholds{Alpha: c.Thresholds.Alpha, MinEffect: c.Thresholds.MinEffect, Confidence: c.Thresholds.Confidence}
}

// analyse computes every measure's statistics from the arms' samples.
func (r *Result) analyse(o Options) {
	th := o.Thresholds
	conf := r.Settings.Thresholds.Confidence
	r.Measures = nil
	for _, d := range measureDefs {
		if !o.wants(d.from) {
			continue
		}
		ms := &MeasureStats{Name: d.name, Unit: d.unit, Better: betterWord(d.better), Noisy: d.noisy}
		samples := map[Arm]benchstat.Sample{}
		for _, a := range r.Arms {
			var vs []float64
			for _, s := range a.Samples {
				if v, ok := d.value(s); ok {
					vs = append(vs, v)
				}
			}
			smp := benchstat.NewSample(vs...)
			samples[a.Name] = smp
			sum := benchstat.Summarize(smp, conf)
			ms.Arms = append(ms.Arms, ArmSummary{
				Arm: a.Name, N: sum.N, Median: num(sum.Center), Lo: num(sum.Lo), Hi: num(sum.Hi),
				Confidence: sum.Confidence, Values: vs,
			})
		}
		costs := map[side.Side]benchstat.Cost{}
		for _, b := range r.Builds {
			on, off := samples[Arm{b.Name, true}], samples[Arm{b.Name, false}]
			c, err := benchstat.PairedCost(on, off, d.better, th)
			if err != nil {
				ms.Warnings = appendNew(ms.Warnings, string(b.Name)+": "+err.Error())
				continue
			}
			costs[b.Name] = c
			ms.Costs = append(ms.Costs, costStats(b.Name, c))
			ms.Warnings = appendNew(ms.Warnings, c.Warnings...)
		}
		base, okb := costs[side.Base]
		head, okh := costs[side.Head]
		if okb && okh {
			c := benchstat.CompareCosts(base, head, th)
			ms.HeadVsBase = comparison(c, base.Ratios.Values != nil && head.Ratios.Values != nil)
			ms.Verdict = ms.HeadVsBase.Verdict
			ms.Warnings = appendNew(ms.Warnings, c.Warnings...)
		}
		r.Measures = append(r.Measures, ms)
	}
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

// verdictWord spells a verdict for results.json.
func verdictWord(v benchstat.Verdict) Verdict {
	if v == benchstat.Unchanged {
		return NoChange
	}
	return Verdict(v.String())
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
	return CostStats{
		Build: build,
		Ratio: interval(c.Ratio),
		Diff:  interval(c.Diff),
		Above: c.Above, Below: c.Below, SignP: num(c.SignP),
		P:       num(c.Test.P),
		Effect:  num(c.Effect),
		Verdict: verdictWord(c.Verdict),
	}
}

func comparison(c benchstat.Comparison, ratios bool) *Comparison {
	of := "diff"
	if ratios {
		of = "ratio"
	}
	sh := c.Shift
	return &Comparison{
		Of:   of,
		Base: interval(c.Old),
		Head: interval(c.New),
		Ratio: Interval{N: c.Old.N, Median: num(sh.Ratio), Lo: num(sh.RatioLo), Hi: num(sh.RatioHi),
			Confidence: num(sh.Confidence)},
		Diff: Interval{N: c.Old.N, Median: num(sh.Diff), Lo: num(sh.DiffLo), Hi: num(sh.DiffHi),
			Confidence: num(sh.Confidence)},
		P:       num(c.Test.P),
		Effect:  num(c.Effect),
		Verdict: verdictWord(c.Verdict),
	}
}
