package benchstat

import (
	"fmt"
	"math"
	"slices"
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
// interval for it at the given level (0 means 0.95). With too few values the
// interval is the whole sample and a warning says so.
func Summarize(s Sample, confidence float64) Summary {
	if confidence == 0 {
		confidence = defaultConfidence
	}
	n := s.N()
	if n == 0 {
		nan := math.NaN()
		return Summary{Center: nan, Lo: nan, Hi: nan, Warnings: []string{"no samples"}}
	}
	v := s.sorted()
	k, coverage := medianCIOrder(n, confidence)
	sum := Summary{
		N:          n,
		Center:     median(v),
		Lo:         v[k-1],
		Hi:         v[n-k],
		Confidence: coverage,
	}
	if coverage < confidence {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf(
			"need >= %d samples for a confidence interval at level %v; with %d it is %.3g",
			medianCISamples(confidence), confidence, n, coverage))
	}
	return sum
}

// String formats the summary as "median [lo, hi]".
func (s Summary) String() string {
	return fmt.Sprintf("%.4g [%.4g, %.4g]", s.Center, s.Lo, s.Hi)
}

// median returns the median of sorted values.
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

// medianCIOrder returns the largest k such that the interval between the
// k-th smallest and the k-th largest of n values covers the median with
// probability at least confidence, and that coverage. The number of values
// below the true median is Binomial(n, 1/2), so the interval
// [x(k), x(n+1-k)] misses it with probability 2·P(B ≤ k−1). When even
// k = 1 falls short, it returns 1 and the coverage of the whole sample.
func medianCIOrder(n int, confidence float64) (k int, coverage float64) {
	k, coverage = 1, 1-2*binomCDFHalf(n, 0)
	for j := 2; j <= (n+1)/2; j++ {
		c := 1 - 2*binomCDFHalf(n, j-1)
		if c < confidence {
			break
		}
		k, coverage = j, c
	}
	return k, max(coverage, 0)
}

// medianCISamples is the smallest n whose whole-sample interval reaches the
// confidence level: 1 − 2·(1/2)ⁿ ≥ confidence.
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
