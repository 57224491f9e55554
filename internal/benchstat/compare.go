package benchstat

import (
	"fmt"
	"math"
)

// Defaults for the zero Thresholds, in one place.
const (
	defaultConfidence = 0.95
	defaultAlpha      = 0.05
	defaultMinEffect  = 0.01
	defaultExactFloor = 0.005
)

// Thresholds decide when a difference counts. The zero value means a 95%
// confidence level, alpha 0.05, a minimum effect of 1% and, for exact
// measures, a floor of 0.5%.
type Thresholds struct {
	// Confidence is the level of every confidence interval.
	Confidence float64
	// Alpha is the largest p-value that counts as significant.
	Alpha float64
	// MinEffect is the smallest relative change worth finding (0.01 is
	// 1%); negative means none. [Compare], as benchstat, calls no change
	// smaller than it; a paired comparison calls "~" only where it would
	// have found a change this large with 80% power, else "not decided".
	MinEffect float64
	// ExactFloor is the smallest relative change of an exact measure
	// (judged by its spread, see [CompareExact]) that counts, however
	// small the spread; negative means none.
	ExactFloor float64
}

// resolved returns t with its defaults filled in.
func (t Thresholds) resolved() Thresholds {
	if t.Confidence == 0 {
		t.Confidence = defaultConfidence
	}
	if t.Alpha == 0 {
		t.Alpha = defaultAlpha
	}
	switch {
	case t.MinEffect == 0:
		t.MinEffect = defaultMinEffect
	case t.MinEffect < 0:
		t.MinEffect = 0
	}
	switch {
	case t.ExactFloor == 0:
		t.ExactFloor = defaultExactFloor
	case t.ExactFloor < 0:
		t.ExactFloor = 0
	}
	return t
}

// String shows the thresholds a verdict was reached with.
func (t Thresholds) String() string {
	t = t.resolved()
	return fmt.Sprintf("alpha=%v min-effect=%v%% confidence=%v%% exact-floor=%v%%", t.Alpha, 100*t.MinEffect, 100*t.Confidence, 100*t.ExactFloor)
}

// Better says which direction of a measure is an improvement.
type Better int

const (
	LowerIsBetter  Better = iota // CPU time, lock calls, instructions per request
	HigherIsBetter               // requests per second
)

// change is NoChange unless p ≤ alpha and the effect reaches
// minEffect; then the sign of the effect and the direction decide.
func change(p, effect float64, better Better, th Thresholds) Change {
	if p > th.Alpha || math.IsNaN(effect) || math.Abs(effect) < th.MinEffect || effect == 0 {
		return NoChange
	}
	return direction(effect, better)
}

// A Comparison of an old and a new sample of one measure.
type Comparison struct {
	Old, New Summary
	Test     UTest
	Shift    Shift
	// Effect is the relative change the verdict judges: Shift.Ratio−1 when
	// the ratio is defined, else Shift.Diff over the old median's
	// magnitude.
	Effect     float64
	Better     Better
	Thresholds Thresholds // resolved: every field set
	// Verdict is Improved, Regressed or NoChange.
	Verdict  Change
	Warnings []string
}

// Significant reports whether the U test's p-value is at most Alpha.
func (c Comparison) Significant() bool { return c.Test.P <= c.Thresholds.Alpha }

// String formats the comparison the way benchstat shows a delta:
// "+2.70% (p=0.000 n=20+20)", or "~ (p=0.342 n=20+20)".
func (c Comparison) String() string {
	return formatDelta(c.Verdict, c.Effect, c.Test)
}

func formatDelta(v Change, effect float64, t UTest) string {
	stat := fmt.Sprintf("(p=%.3f n=%d+%d)", t.P, t.N1, t.N2)
	if v == NoChange {
		return "~ " + stat
	}
	return fmt.Sprintf("%+.2f%% %s %s", 100*effect, stat, v)
}

// Compare compares new against old.
func Compare(old, new Sample, better Better, th Thresholds) Comparison {
	th = th.resolved()
	c := Comparison{
		Old:        Summarize(old, th.Confidence),
		New:        Summarize(new, th.Confidence),
		Shift:      HodgesLehmann(old, new, th.Confidence),
		Better:     better,
		Thresholds: th,
	}
	c.Warnings = append(c.Warnings, prefixed("old: ", c.Old.Warnings)...)
	c.Warnings = append(c.Warnings, prefixed("new: ", c.New.Warnings)...)
	c.Warnings = append(c.Warnings, c.Shift.Warnings...)
	var err error
	c.Test, err = MannWhitney(old.Values, new.Values, th.Alpha)
	if err != nil {
		c.Warnings = append(c.Warnings, "U test: "+err.Error())
	}
	c.Warnings = append(c.Warnings, c.Test.Warnings...)
	c.Effect = relativeEffect(c.Shift, c.Old.Center)
	c.Verdict = change(c.Test.P, c.Effect, better, th)
	return c
}

func relativeEffect(sh Shift, oldCenter float64) float64 {
	switch {
	case !math.IsNaN(sh.Ratio):
		return sh.Ratio - 1
	case sh.Diff == 0:
		return 0
	case oldCenter == 0:
		return math.Copysign(math.Inf(1), sh.Diff)
	}
	return sh.Diff / math.Abs(oldCenter)
}

func prefixed(prefix string, ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = prefix + w
	}
	return out
}

// A Cost is what switching a feature on costs in one build, measured in
// passes that each ran both arms.
type Cost struct {
	On, Off Summary
	// Ratios holds on/off of each pass, in pass order; nil when an off
	// value is not positive. Ratio summarises them (median and its
	// order-statistic interval).
	Ratios Sample
	Ratio  Summary
	// Diffs holds on−off of each pass; Diff summarises them.
	Diffs Sample
	Diff  Summary
	// Paired compares on against off pass by pass, on log(on/off) when
	// there are ratios, else on on−off: the signed-rank test that decides
	// the verdict, the sign test beside it, and the Hodges-Lehmann
	// estimate of the cost with its interval.
	Paired PairedComparison
	// Test compares the on and off samples as unpaired; it decides
	// nothing and is kept for comparison with benchstat, which pairs
	// nothing.
	Test UTest
	// Effect is Paired.Effect: the Hodges-Lehmann cost as a relative
	// change.
	Effect     float64
	Better     Better
	Thresholds Thresholds // resolved
	// Verdict is Regressed when switching on makes the measure
	// worse.
	Verdict  Change
	Warnings []string
}

// String formats the cost like a benchstat delta.
func (c Cost) String() string { return c.Paired.String() }

// PairedCost measures the cost of the on arm against the off arm of one
// build. on.Values[i] and off.Values[i] must come from the same pass.
func PairedCost(on, off Sample, better Better, th Thresholds) (Cost, error) {
	if on.N() != off.N() {
		return Cost{}, fmt.Errorf("paired cost: %d on values but %d off values", on.N(), off.N())
	}
	if on.N() == 0 {
		return Cost{}, fmt.Errorf("paired cost: %w", errEmptySample)
	}
	th = th.resolved()
	c := Cost{
		On:         Summarize(on, th.Confidence),
		Off:        Summarize(off, th.Confidence),
		Better:     better,
		Thresholds: th,
	}
	// Ratios need a positive off value; on may be anything.
	positive := allPositive(off.Values)
	c.Diffs.Values = make([]float64, on.N())
	for i, v := range on.Values {
		c.Diffs.Values[i] = v - off.Values[i]
	}
	c.Diff = Summarize(c.Diffs, th.Confidence)
	nan := math.NaN()
	c.Ratio = Summary{Center: nan, Lo: nan, Hi: nan}
	if positive {
		c.Ratios.Values = make([]float64, on.N())
		for i, v := range on.Values {
			c.Ratios.Values[i] = v / off.Values[i]
		}
		c.Ratio = Summarize(c.Ratios, th.Confidence)
	} else {
		c.Warnings = append(c.Warnings, "an off value is not positive: no ratios, cost given as differences")
	}
	// A log ratio also needs a positive on value.
	c.Paired, _ = comparePaired(off, on, positive && allPositive(on.Values), better, th) // lengths checked
	c.Warnings = append(c.Warnings, c.Paired.Warnings...)
	c.Test, _ = MannWhitney(on.Values, off.Values, th.Alpha) // both non-empty
	c.Effect = c.Paired.Effect
	c.Verdict = c.Paired.Verdict
	return c, nil
}

// CompareCosts compares head's cost of a feature against base's as two
// unpaired samples: the two sets of per-pass ratios, or of differences
// when either build has no ratios. Where the passes pair the builds, use
// [PairedCompareCosts].
func CompareCosts(base, head Cost, th Thresholds) Comparison {
	if base.Ratios.Values != nil && head.Ratios.Values != nil {
		return Compare(base.Ratios, head.Ratios, base.Better, th)
	}
	return Compare(base.Diffs, head.Diffs, base.Better, th)
}

// PairedCompareCosts compares head's cost of a feature against base's pass
// by pass: on log(head ratio / base ratio) of each pass, or on the
// difference of the two builds' on−off differences when either build has
// no ratios. The costs must come from the same passes, in the same order.
func PairedCompareCosts(base, head Cost, th Thresholds) (PairedComparison, error) {
	if base.Ratios.Values != nil && head.Ratios.Values != nil && allPositive(base.Ratios.Values) && allPositive(head.Ratios.Values) {
		return comparePaired(base.Ratios, head.Ratios, true, base.Better, th)
	}
	return comparePaired(base.Diffs, head.Diffs, false, base.Better, th)
}
