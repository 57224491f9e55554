package benchstat

import (
	"fmt"
	"math"
)

// A PairedComparison compares a new sample against an old one pair by
// pair: value i of each came from the same pass, so what varies between
// passes cancels in the pair.
type PairedComparison struct {
	// OldSample and NewSample are the pairs compared, in pair order; Old
	// and New summarise them.
	OldSample, NewSample Sample
	Old, New             Summary
	// Log says the pairs were compared as log(new/old), which needs every
	// value positive; otherwise as new−old.
	Log bool
	// D holds log(new/old) or new−old of each pair, in pair order.
	D Sample
	// Above and Below count the pairs where new was larger and smaller
	// than old; SignP is the two-sided sign test on them.
	Above, Below int
	SignP        float64
	// Test is the Wilcoxon signed-rank test on D; its p-value decides the
	// verdict.
	Test SignedRankTest
	// Shift is the Hodges-Lehmann estimate of D's centre (the median of
	// its Walsh averages) with the interval that inverts Test, in D's
	// units.
	Shift Summary
	// Change is Shift as a relative change: exp(x)−1 when Log, else x
	// over the old median's magnitude (±Inf when that is zero).
	Change Summary
	// Effect is Change.Center, the change the verdict's direction is
	// read from.
	Effect float64
	// Detectable is the smallest relative change this comparison would
	// find with 80% power at Alpha, sized from its own noise (see
	// [DetectableShift]); +Inf when it has too few pairs to find any.
	Detectable float64
	Better     Better
	Thresholds Thresholds // resolved
	Verdict    Change
	Warnings   []string
}

// Significant reports whether the signed-rank p-value is at most Alpha.
func (c PairedComparison) Significant() bool { return c.Test.P <= c.Thresholds.Alpha }

// String formats the comparison like a benchstat delta, the test named:
// "+2.70% (p=0.031 n=6 pairs) regressed" or "~ (p=0.438 n=6 pairs)".
func (c PairedComparison) String() string {
	stat := fmt.Sprintf("(p=%.3f n=%d pairs)", c.Test.P, c.Test.N)
	if c.Verdict == NoChange {
		return "~ " + stat
	}
	return fmt.Sprintf("%+.2f%% %s %s", 100*c.Effect, stat, c.Verdict)
}

// ComparePaired compares new against old pair by pair: on log(new/old)
// when every value is positive, else on new−old. old.Values[i] and
// new.Values[i] must come from the same pass.
func ComparePaired(old, new Sample, better Better, th Thresholds) (PairedComparison, error) {
	return comparePaired(old, new, allPositive(old.Values) && allPositive(new.Values), better, th)
}

func comparePaired(old, new Sample, log bool, better Better, th Thresholds) (PairedComparison, error) {
	if old.N() != new.N() {
		return PairedComparison{}, fmt.Errorf("paired comparison: %d old values but %d new values", old.N(), new.N())
	}
	if old.N() == 0 {
		return PairedComparison{}, fmt.Errorf("paired comparison: %w", errEmptySample)
	}
	th = th.resolved()
	c := PairedComparison{
		OldSample:  NewSample(old.Values...),
		NewSample:  NewSample(new.Values...),
		Old:        Summarize(old, th.Confidence),
		New:        Summarize(new, th.Confidence),
		Log:        log,
		Better:     better,
		Thresholds: th,
	}
	c.D.Values = make([]float64, old.N())
	for i, o := range old.Values {
		v := new.Values[i]
		if log {
			c.D.Values[i] = math.Log(v / o)
		} else {
			c.D.Values[i] = v - o
		}
	}
	// The sign test, the signed-rank test and the estimate all use the
	// same differences: the ones that are numbers, zeros included.
	d, _ := usable(c.D.Values)
	for _, x := range d {
		switch {
		case x > 0:
			c.Above++
		case x < 0:
			c.Below++
		}
	}
	c.SignP = SignTest(c.Above, c.Below)
	c.Test, _ = WilcoxonSignedRank(c.D.Values) // not empty
	c.Shift = WalshMedian(c.D.Values, th.Confidence)
	c.Warnings = append(c.Warnings, c.Shift.Warnings...)
	rel := func(x float64) float64 {
		if log {
			return math.Expm1(x)
		}
		return relativeEffect(Shift{Ratio: math.NaN(), Diff: x}, c.Old.Center)
	}
	c.Change = Summary{N: c.Shift.N, Center: rel(c.Shift.Center), Lo: rel(c.Shift.Lo), Hi: rel(c.Shift.Hi), Confidence: c.Shift.Confidence}
	if c.Test.P > th.Alpha && c.Test.NonZero > 0 && signedRankMinP(c.Test.NonZero) > th.Alpha {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"need >= %d pairs that differ to detect a difference at alpha level %v; %d differ",
			pairsToDetect(th.Alpha), th.Alpha, c.Test.NonZero))
	}
	c.Effect = c.Change.Center
	c.Detectable = math.Inf(1)
	if mde := DetectableShift(d, th.Alpha); !math.IsInf(mde, 1) {
		c.Detectable = math.Abs(rel(mde))
	}
	c.Verdict = decide(c.Test.P, c.Effect, c.Detectable, better, th)
	return c, nil
}

// detectPower is the power at which [DetectableShift] sizes a
// comparison: the chance that a change of that size is found.
const detectPower = 0.8

// DetectableShift is the smallest shift of the centre of the paired
// differences d that the signed-rank test finds with 80% power at alpha
// (two-sided), sized from d's own spread: (t₁₋α/₂ + t₀.₈)·s/√(n·3/π),
// s the standard deviation of the n differences, the t quantiles with
// n−1 degrees of freedom, and 3/π the signed-rank test's efficiency
// relative to the t test under normal noise. +Inf when n pairs cannot
// reach alpha at all (fewer than 6 at 0.05); 0 when every difference is
// the same. Differences that are not numbers are left out, as the test
// leaves them out.
func DetectableShift(d []float64, alpha float64) float64 {
	if alpha == 0 {
		alpha = defaultAlpha
	}
	d, _ = usable(d)
	n := len(d)
	if n < 2 || signedRankMinP(n) > alpha {
		return math.Inf(1)
	}
	sd := stdDev(d)
	q := studentTQuantile(1-alpha/2, n-1) + studentTQuantile(detectPower, n-1)
	return q * sd / math.Sqrt(float64(n)*3/math.Pi)
}

// stdDev is the sample standard deviation (n−1 in the denominator).
func stdDev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}

// decide is the verdict of a paired comparison, sized by its power: a
// change when the signed-rank test finds one (p ≤ Alpha), however small
// its estimate — the size of a change is its interval's to tell, not a
// cut on the point estimate, which would miss a true change of exactly
// MinEffect half the time; otherwise no change where the comparison could
// have found a change of MinEffect (the smallest worth finding) with 80%
// power, and not decided where it could not. With no MinEffect (a
// negative one), a comparison that finds nothing is no change.
func decide(p, effect, detectable float64, better Better, th Thresholds) Change {
	switch {
	case p <= th.Alpha && effect != 0 && !math.IsNaN(effect):
		return direction(effect, better)
	case th.MinEffect == 0 || detectable <= th.MinEffect:
		return NoChange
	}
	return NotDecided
}

func allPositive(vs []float64) bool {
	for _, v := range vs {
		if !(v > 0) {
			return false
		}
	}
	return true
}
