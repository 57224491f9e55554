package benchstat

import (
	"fmt"
	"math"

	"github.com/patchproof/patchproof/verify/verdict"
)

// A Range is the spread of a sample of an exact measure: its smallest,
// median and largest value.
type Range struct {
	N                int
	Min, Median, Max float64
}

// Width is Max−Min: the spread of the repeated measurements.
func (r Range) Width() float64 { return r.Max - r.Min }

func newRange(s Sample) Range {
	if s.N() == 0 {
		nan := math.NaN()
		return Range{Min: nan, Median: nan, Max: nan}
	}
	v := s.sorted()
	return Range{N: len(v), Min: v[0], Median: median(v), Max: v[len(v)-1]}
}

// An ExactComparison judges an exact measure — one that repeats to within
// a small spread, such as lock calls or instructions per request — by
// that spread rather than by a test: a change is a change beyond what
// repeated measurements of either sample vary by.
type ExactComparison struct {
	Old, New Range
	// Diff is New.Median − Old.Median.
	Diff float64
	// Tolerance is the largest |Diff| that is not a change:
	// max(ExactFloor·|Old.Median|, Old.Width(), New.Width()).
	Tolerance float64
	// Apart says the two ranges do not overlap.
	Apart bool
	// Effect is Diff over |Old.Median|: ±Inf when that is zero, 0 when
	// Diff is.
	Effect     float64
	Better     Better
	Thresholds Thresholds // resolved
	// Verdict is verdict.Improved or verdict.Regressed when the ranges
	// are apart and |Diff| exceeds Tolerance, else verdict.NoChange.
	Verdict  verdict.Change
	Warnings []string
}

// Changed reports whether the comparison found a change.
func (c ExactComparison) Changed() bool { return c.Verdict != verdict.NoChange }

// String formats the comparison: "+13.93% (exact, n=5+5) regressed", or
// "~ (exact, n=5+5)".
func (c ExactComparison) String() string {
	stat := fmt.Sprintf("(exact, n=%d+%d)", c.Old.N, c.New.N)
	if c.Verdict == verdict.NoChange {
		return "~ " + stat
	}
	return fmt.Sprintf("%+.2f%% %s %s", 100*c.Effect, stat, c.Verdict)
}

// CompareExact compares new against old as exact measures: the verdict is
// a change when the ranges of the two samples do not overlap and their
// medians differ by more than max(ExactFloor of the old median, the wider
// of the two ranges). With one value a side there is no spread to
// measure: the floor alone decides, and a warning says so.
func CompareExact(old, new Sample, better Better, th Thresholds) ExactComparison {
	th = th.resolved()
	c := ExactComparison{Old: newRange(old), New: newRange(new), Better: better, Thresholds: th, Verdict: verdict.NoChange}
	if old.N() == 0 || new.N() == 0 {
		c.Diff, c.Tolerance, c.Effect = math.NaN(), math.NaN(), math.NaN()
		c.Warnings = []string{"no samples"}
		return c
	}
	c.Diff = c.New.Median - c.Old.Median
	c.Tolerance = max(th.ExactFloor*math.Abs(c.Old.Median), c.Old.Width(), c.New.Width())
	c.Apart = c.Old.Max < c.New.Min || c.New.Max < c.Old.Min
	c.Effect = relativeEffect(Shift{Ratio: math.NaN(), Diff: c.Diff}, c.Old.Median)
	if old.N() < 2 || new.N() < 2 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"need >= 2 samples each to measure the spread of an exact measure; with %d+%d only the floor of %v%% counts",
			old.N(), new.N(), 100*th.ExactFloor))
	}
	if c.Apart && math.Abs(c.Diff) > c.Tolerance {
		c.Verdict = direction(c.Effect, better)
	}
	return c
}

// direction is the verdict a change of the given sign means.
func direction(effect float64, better Better) verdict.Change {
	if (effect > 0) == (better == HigherIsBetter) {
		return verdict.Improved
	}
	return verdict.Regressed
}
