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
)

// Thresholds decide when a difference counts. The zero value means a 95%
// confidence level, alpha 0.05 and a minimum effect of 1%.
type Thresholds struct {
	// Confidence is the level of every confidence interval.
	Confidence float64
	// Alpha is the largest p-value that counts as significant.
	Alpha float64
	// MinEffect is the smallest relative change (0.01 is 1%) that counts
	// as a change even when significant; negative means no minimum.
	MinEffect float64
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
	return t
}

// String shows the thresholds a verdict was reached with.
func (t Thresholds) String() string {
	t = t.resolved()
	return fmt.Sprintf("alpha=%v min-effect=%v%% confidence=%v%%", t.Alpha, 100*t.MinEffect, 100*t.Confidence)
}

// Better says which direction of a measure is an improvement.
type Better int

const (
	LowerIsBetter  Better = iota // CPU time, lock calls, instructions per request
	HigherIsBetter               // requests per second
)

// A Verdict is what a comparison concludes.
type Verdict int

const (
	Unchanged Verdict = iota // no significant change, or one below the minimum effect
	Improved
	Regressed
)

func (v Verdict) String() string {
	switch v {
	case Improved:
		return "improved"
	case Regressed:
		return "regressed"
	}
	return "~"
}

// verdict is Unchanged unless p ≤ alpha and the effect reaches minEffect;
// then the sign of the effect and the direction decide.
func verdict(p, effect float64, better Better, th Thresholds) Verdict {
	if p > th.Alpha || math.IsNaN(effect) || math.Abs(effect) < th.MinEffect || effect == 0 {
		return Unchanged
	}
	if (effect > 0) == (better == HigherIsBetter) {
		return Improved
	}
	return Regressed
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
	Verdict    Verdict
	Warnings   []string
}

// Significant reports whether the U test's p-value is at most Alpha.
func (c Comparison) Significant() bool { return c.Test.P <= c.Thresholds.Alpha }

// String formats the comparison the way benchstat shows a delta:
// "+2.70% (p=0.000 n=20+20)", or "~ (p=0.342 n=20+20)".
func (c Comparison) String() string {
	return formatDelta(c.Verdict, c.Effect, c.Test)
}

func formatDelta(v Verdict, effect float64, t UTest) string {
	stat := fmt.Sprintf("(p=%.3f n=%d+%d)", t.P, t.N1, t.N2)
	if v == Unchanged {
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
	c.Test, err = MannWhitney(old.Values, new.Values)
	if err != nil {
		c.Warnings = append(c.Warnings, "U test: "+err.Error())
	}
	if c.Test.P > th.Alpha && old.N() > 0 && new.N() > 0 && uTestMinP(old.N(), new.N()) > th.Alpha {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"need >= %d samples each to detect a difference at alpha level %v", uTestSamples(th.Alpha), th.Alpha))
	}
	c.Effect = relativeEffect(c.Shift, c.Old.Center)
	c.Verdict = verdict(c.Test.P, c.Effect, better, th)
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
	// value is not positive. Ratio summarises them.
	Ratios Sample
	Ratio  Summary
	// Diffs holds on−off of each pass; Diff summarises them.
	Diffs Sample
	Diff  Summary
	// Above and Below count the passes where on was larger and smaller
	// than off; SignP is the two-sided sign test on them.
	Above, Below int
	SignP        float64
	// Test compares the on and off samples as unpaired; its p-value
	// decides the verdict.
	Test UTest
	// Effect is the median ratio − 1, or with no ratios the median
	// difference over the off median's magnitude.
	Effect     float64
	Better     Better
	Thresholds Thresholds // resolved
	// Verdict is Regressed when switching on makes the measure worse.
	Verdict  Verdict
	Warnings []string
}

// String formats the cost like a benchstat delta.
func (c Cost) String() string { return formatDelta(c.Verdict, c.Effect, c.Test) }

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
	positive := true
	c.Diffs.Values = make([]float64, on.N())
	for i, v := range on.Values {
		o := off.Values[i]
		c.Diffs.Values[i] = v - o
		positive = positive && o > 0
		switch {
		case v > o:
			c.Above++
		case v < o:
			c.Below++
		}
	}
	c.Diff = Summarize(c.Diffs, th.Confidence)
	if positive {
		c.Ratios.Values = make([]float64, on.N())
		for i, v := range on.Values {
			c.Ratios.Values[i] = v / off.Values[i]
		}
		c.Ratio = Summarize(c.Ratios, th.Confidence)
		c.Warnings = append(c.Warnings, c.Ratio.Warnings...)
		c.Effect = c.Ratio.Center - 1
	} else {
		nan := math.NaN()
		c.Ratio = Summary{N: 0, Center: nan, Lo: nan, Hi: nan}
		c.Warnings = append(c.Warnings, "an off value is not positive: no ratios, cost given as differences")
		c.Warnings = append(c.Warnings, c.Diff.Warnings...)
		c.Effect = relativeEffect(Shift{Ratio: nan, Diff: c.Diff.Center}, c.Off.Center)
	}
	c.SignP = signTestP(c.Above, c.Below)
	c.Test, _ = MannWhitney(on.Values, off.Values) // both non-empty
	c.Verdict = verdict(c.Test.P, c.Effect, better, th)
	return c, nil
}

// signTestP is the two-sided sign test of above against below; tied pairs
// are left out.
func signTestP(above, below int) float64 {
	n := above + below
	if n == 0 {
		return 1
	}
	return min(1, 2*binomCDFHalf(n, min(above, below)))
}

// CompareCosts compares head's cost of a feature against base's: the two
// sets of paired ratios, or of paired differences when either build has no
// ratios.
func CompareCosts(base, head Cost, th Thresholds) Comparison {
	if base.Ratios.Values != nil && head.Ratios.Values != nil {
		return Compare(base.Ratios, head.Ratios, base.Better, th)
	}
	return Compare(base.Diffs, head.Diffs, base.Better, th)
}
