package benchstat

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// A Sample is the raw values of one measure in one arm, in the order the
// passes ran.
type Sample struct {
	Values []float64
}

// NewSample returns a Sample holding a copy of values.
func NewSample(values ...float64) Sample {
	return Sample{Values: slices.Clone(values)}
}

// N is the number of values.
func (s Sample) N() int { return len(s.Values) }

// sorted returns a sorted copy of the values: benchmath sorts a sample in
// place, and a Sample keeps its pass order for pairing.
func (s Sample) sorted() []float64 {
	v := slices.Clone(s.Values)
	slices.Sort(v)
	return v
}

// A Summary is the median of a sample with its confidence interval.
type Summary struct {
	N      int
	Center float64 // the median
	// Lo and Hi bound the interval that holds the true median with
	// probability Confidence.
	Lo, Hi float64
	// Confidence is the coverage the interval has, which is at least the
	// level asked for unless a warning says otherwise.
	Confidence float64
	Warnings   []string
}

// Summarize returns the median of s and a distribution-free confidence
// interval for it at the given level (0 means 0.95), as benchstat computes
// them: golang.org/x/perf/benchmath's AssumeNothing.Summary, whose
// order-statistic interval may lean one value to the left of symmetric
// when that still reaches the level.
//
// With too few values for the level, benchmath's interval is unbounded
// (benchstat prints ±∞); Summarize then gives the whole sample as the
// interval, the coverage that range does have as its Confidence, and a
// warning: results.json cannot hold an infinity, and the range of two
// passes says more than none.
func Summarize(s Sample, confidence float64) Summary {
	if confidence == 0 {
		confidence = defaultConfidence
	}
	n := s.N()
	if n == 0 {
		nan := math.NaN()
		return Summary{Center: nan, Lo: nan, Hi: nan, Warnings: []string{"no samples"}}
	}
	bs := benchmath.NewSample(s.sorted(), &benchmath.DefaultThresholds)
	xs := benchmath.AssumeNothing.Summary(bs, confidence)
	sum := Summary{N: n, Center: xs.Center, Lo: xs.Lo, Hi: xs.Hi, Confidence: xs.Confidence}
	if math.IsInf(xs.Lo, 0) || math.IsInf(xs.Hi, 0) {
		sum.Lo, sum.Hi = bs.Values[0], bs.Values[n-1]
		sum.Confidence = max(0, 1-2*binomCDFHalf(n, 0))
		sum.Warnings = append(sum.Warnings, fmt.Sprintf(
			"need >= %d samples for a confidence interval at level %v; with %d it is %.3g",
			medianCISamples(confidence), confidence, n, sum.Confidence))
	}
	return sum
}

// String formats the summary as "median [lo, hi]".
func (s Summary) String() string {
	return fmt.Sprintf("%.4g [%.4g, %.4g]", s.Center, s.Lo, s.Hi)
}

// median returns the median of sorted values: the middle one, or the mean
// of the middle two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// medianCISamples is the smallest n whose whole-sample interval reaches the
// confidence level, 1 − 2·(1/2)ⁿ ≥ confidence: the fewest values for which
// benchmath's interval is bounded.
func medianCISamples(confidence float64) int {
	n := 1
	for 1-2*binomCDFHalf(n, 0) < confidence && n < 1000 {
		n++
	}
	return n
}

// binomCDFHalf returns P(B ≤ k) for B ~ Binomial(n, 1/2).
func binomCDFHalf(n, k int) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	if n <= 60 {
		// Exactly: C(n, i)·(n−i) and the sum stay below 2⁶⁴.
		var c, sum uint64 = 1, 0
		for i := 0; i <= k; i++ {
			sum += c
			c = c * uint64(n-i) / uint64(i+1)
		}
		return math.Ldexp(float64(sum), -n)
	}
	lgn, _ := math.Lgamma(float64(n + 1))
	var p float64
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lgn - a - b - float64(n)*math.Ln2)
	}
	return min(p, 1)
}
