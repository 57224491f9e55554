package benchstat

import (
	"fmt"
	"math"
)

// A Range is the spread of a sample of an exact measure: its smallest,
// median, mean and largest value.
type Range struct {
	N                      int
	Min, Median, Mean, Max float64
}

// Width is Max−Min: the spread of the repeated measurements.
func (r Range) Width() float64 { return r.Max - r.Min }

func newRange(s Sample) Range {
	if s.N() == 0 {
		nan := math.NaN()
		return Range{Min: nan, Median: nan, Mean: nan, Max: nan}
	}
	v := s.sorted()
	var sum float64
	for _, x := range v {
		sum += x
	}
	return Range{N: len(v), Min: v[0], Median: median(v), Mean: sum / float64(len(v)), Max: v[len(v)-1]}
}

// An ExactRule is what the judgment of an exact measure assumes beyond
// the run's [Thresholds]: the smallest difference that counts in the
// measure's own units, and the noise of one value that a sample too small
// to measure its own spread is taken to have.
//
// The rule ([ExactRule.Compare]) is a test against the smallest change
// worth finding: the difference of the two means counts when it exceeds
// the floor, max(ExactFloor of the old mean, Allowance), by more than
// q·SE, where SE = σ·√(1/n₁+1/n₂) is the standard error of the
// difference and q the two-sided 1−Alpha/2 quantile of Student's t with
// n₁+n₂−2 degrees of freedom. σ is the pooled standard deviation of the
// two samples, but never less than the assumed noise (Noise, or RelNoise
// of the old mean's magnitude); with one value a side there is nothing to
// pool, σ is the assumed noise and q the normal quantile. So the
// tolerance shrinks towards the floor as passes are added (SE falls as
// 1/√n, q towards 1.96), and a change beyond the floor is found more
// often the more passes there are.
//
// False rate: were the noise normal with a standard deviation of at most
// σ, a true difference exactly at the floor would be called a change with
// probability at most Alpha/2, and one of zero with probability at most
// 2·(1−Φ(floor/(σ·√(1/n₁+1/n₂)) + q)), which for the floors and noises
// the benchmark assumes is below 10⁻⁶. Where the real noise of one value
// is larger than the assumed one and a sample has one value, the rule is
// as wrong as the assumption: two values a side measure it.
type ExactRule struct {
	// Allowance is the smallest absolute difference that counts, however
	// small the floor's share of the old mean (0.5 lock calls a request).
	Allowance float64
	// Noise and RelNoise are the standard deviation of one value the rule
	// assumes at least, in the measure's units and as a share of the old
	// mean's magnitude; the larger counts.
	Noise, RelNoise float64
}

// Derived is the rule for values that are the ratio or difference of two
// values of the measure, each with the rule's noise: √2 times the noise,
// the same allowance.
func (r ExactRule) Derived() ExactRule {
	return ExactRule{Allowance: r.Allowance, Noise: math.Sqrt2 * r.Noise, RelNoise: math.Sqrt2 * r.RelNoise}
}

// An ExactComparison judges an exact measure — one that repeats to within
// a small spread, such as lock calls or instructions per request — by a
// test against the smallest change worth finding (see [ExactRule]).
type ExactComparison struct {
	Old, New Range
	// Diff is New.Mean − Old.Mean.
	Diff float64
	// Floor is the smallest change worth finding:
	// max(ExactFloor·|Old.Mean|, Allowance).
	Floor float64
	// Noise is the standard deviation of one value the test used: the
	// pooled one of the two samples, or the assumed one where that is
	// larger or there is nothing to pool (NoiseAssumed); Df its degrees
	// of freedom, 0 for the assumed one.
	Noise        float64
	NoiseAssumed bool
	Df           int
	// StdErr is the standard error of Diff, Noise·√(1/n₁+1/n₂).
	StdErr float64
	// Tolerance is the largest |Diff| that is not a change:
	// Floor + q·StdErr.
	Tolerance float64
	// Detectable is the smallest true |difference| the rule finds with
	// 80% power: Floor + (q + q₀.₈)·StdErr.
	Detectable float64
	// Apart says the two ranges do not overlap; it is shown, and decides
	// nothing.
	Apart bool
	// Effect is Diff over |Old.Mean|: ±Inf when that is zero, 0 when
	// Diff is.
	Effect     float64
	Better     Better
	Thresholds Thresholds // resolved
	// Verdict is Improved or Regressed when |Diff|
	// exceeds Tolerance, else NoChange.
	Verdict  Change
	Warnings []string
}

// Changed reports whether the comparison found a change.
func (c ExactComparison) Changed() bool { return c.Verdict != NoChange }

// String formats the comparison: "+13.93% (exact, n=5+5) regressed", or
// "~ (exact, n=5+5)".
func (c ExactComparison) String() string {
	stat := fmt.Sprintf("(exact, n=%d+%d)", c.Old.N, c.New.N)
	if c.Verdict == NoChange {
		return "~ " + stat
	}
	return fmt.Sprintf("%+.2f%% %s %s", 100*c.Effect, stat, c.Verdict)
}

// CompareExact compares new against old as exact measures by the zero
// ExactRule: no allowance beyond the floor, no assumed noise.
func CompareExact(old, new Sample, better Better, th Thresholds) ExactComparison {
	return ExactRule{}.Compare(old, new, better, th)
}

// Compare compares new against old as exact measures: a change when the
// difference of the means exceeds the floor by more than its noise allows
// (see [ExactRule]).
func (r ExactRule) Compare(old, new Sample, better Better, th Thresholds) ExactComparison {
	th = th.resolved()
	c := ExactComparison{Old: newRange(old), New: newRange(new), Better: better, Thresholds: th, Verdict: NoChange}
	if old.N() == 0 || new.N() == 0 {
		nan := math.NaN()
		c.Diff, c.Floor, c.Noise, c.StdErr, c.Tolerance, c.Detectable, c.Effect = nan, nan, nan, nan, nan, nan, nan
		c.Warnings = []string{"no samples"}
		return c
	}
	n1, n2 := old.N(), new.N()
	c.Diff = c.New.Mean - c.Old.Mean
	c.Floor = max(th.ExactFloor*math.Abs(c.Old.Mean), r.Allowance)
	assumed := max(r.Noise, r.RelNoise*math.Abs(c.Old.Mean))
	c.Df = n1 + n2 - 2
	q, q80 := normalQuantile(1-th.Alpha/2), normalQuantile(detectPower)
	if c.Df > 0 {
		c.Noise = pooledStdDev(old.Values, new.Values)
		q, q80 = studentTQuantile(1-th.Alpha/2, c.Df), studentTQuantile(detectPower, c.Df)
	}
	if assumed > c.Noise || c.Df == 0 {
		c.Noise, c.NoiseAssumed = max(assumed, c.Noise), true
	}
	c.StdErr = c.Noise * math.Sqrt(1/float64(n1)+1/float64(n2))
	c.Tolerance = c.Floor + q*c.StdErr
	c.Detectable = c.Floor + (q+q80)*c.StdErr
	c.Apart = c.Old.Max < c.New.Min || c.New.Max < c.Old.Min
	c.Effect = relativeEffect(Shift{Ratio: math.NaN(), Diff: c.Diff}, c.Old.Mean)
	if n1 < 2 || n2 < 2 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"need >= 2 samples each to measure the noise of an exact measure; with %d+%d the noise assumed counts",
			n1, n2))
	}
	if math.Abs(c.Diff) > c.Tolerance {
		c.Verdict = direction(c.Effect, better)
	}
	return c
}

// pooledStdDev is the standard deviation of two samples about their own
// means, pooled: √((Σ(x−x̄)² + Σ(y−ȳ)²)/(n₁+n₂−2)).
func pooledStdDev(x, y []float64) float64 {
	ss := func(v []float64) float64 {
		var mean float64
		for _, a := range v {
			mean += a
		}
		mean /= float64(len(v))
		var s float64
		for _, a := range v {
			s += (a - mean) * (a - mean)
		}
		return s
	}
	return math.Sqrt((ss(x) + ss(y)) / float64(len(x)+len(y)-2))
}

// direction is the verdict a change of the given sign means.
func direction(effect float64, better Better) Change {
	if (effect > 0) == (better == HigherIsBetter) {
		return Improved
	}
	return Regressed
}
