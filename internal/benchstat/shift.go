package benchstat

import (
	"fmt"
	"math"
	"slices"
)

// exactLimit is the size below which the intervals of the Hodges-Lehmann
// estimates and the signed-rank test use exact distributions rather than
// the normal approximation.
const exactLimit = 50

// A Shift is the Hodges-Lehmann estimate of how far a new sample lies from
// an old one, with the distribution-free confidence interval that inverts
// the Mann-Whitney U test (Moses' interval): the k-th smallest and k-th
// largest of all pairwise differences.
type Shift struct {
	// Diff is the median of all differences new−old; DiffLo and DiffHi
	// bound it.
	Diff, DiffLo, DiffHi float64
	// Ratio is the median of all ratios new/old, with RatioLo and RatioHi;
	// NaN unless every value of both samples is positive.
	Ratio, RatioLo, RatioHi float64
	// Confidence is the interval's coverage.
	Confidence float64
	Warnings   []string
}

// HodgesLehmann estimates the shift from old to new at the given confidence
// level (0 means 0.95).
func HodgesLehmann(old, new Sample, confidence float64) Shift {
	if confidence == 0 {
		confidence = defaultConfidence
	}
	nan := math.NaN()
	sh := Shift{Diff: nan, DiffLo: nan, DiffHi: nan, Ratio: nan, RatioLo: nan, RatioHi: nan}
	n1, n2 := old.N(), new.N()
	if n1 == 0 || n2 == 0 {
		sh.Warnings = []string{"no samples"}
		return sh
	}
	k, coverage := shiftCIOrder(n1, n2, confidence)
	sh.Confidence = coverage
	if coverage < confidence {
		sh.Warnings = append(sh.Warnings, fmt.Sprintf(
			"need >= %d samples each for a confidence interval of the change at level %v; with %d+%d it is %.3g",
			shiftCISamples(confidence), confidence, n1, n2, coverage))
	}
	m := n1 * n2
	diffs := make([]float64, 0, m)
	positive := true
	for _, o := range old.Values {
		for _, v := range new.Values {
			diffs = append(diffs, v-o)
			positive = positive && o > 0 && v > 0
		}
	}
	slices.Sort(diffs)
	sh.Diff, sh.DiffLo, sh.DiffHi = median(diffs), diffs[k-1], diffs[m-k]
	if positive {
		// The logarithm is monotone, so the order statistics of the ratios
		// are those of the log-differences and k stays the same.
		ratios := make([]float64, 0, m)
		for _, o := range old.Values {
			for _, v := range new.Values {
				ratios = append(ratios, v/o)
			}
		}
		slices.Sort(ratios)
		sh.Ratio, sh.RatioLo, sh.RatioHi = median(ratios), ratios[k-1], ratios[m-k]
	}
	return sh
}

// shiftCIOrder returns the largest k for which [d(k), d(n1·n2+1−k)] of the
// sorted pairwise differences covers the shift with probability at least
// confidence, 1−2·P(U ≤ k−1) under no difference, and that coverage. When
// even k = 1 falls short it returns 1 and that coverage.
func shiftCIOrder(n1, n2 int, confidence float64) (k int, coverage float64) {
	cdf := uNullCDF(n1, n2)
	k, coverage = 1, 1-2*cdf(0)
	for j := 2; j <= (n1*n2+1)/2; j++ {
		c := 1 - 2*cdf(j-1)
		if c < confidence {
			break
		}
		k, coverage = j, c
	}
	return k, max(coverage, 0)
}

// shiftCISamples is the smallest n for which two samples of n values give a
// confidence interval of the shift at the level.
func shiftCISamples(confidence float64) int {
	n := 1
	for 1-uTestMinP(n, n) < confidence && n < 1000 {
		n++
	}
	return n
}

// uNullCDF returns P(U ≤ u) for samples of sizes n1 and n2 drawn from one
// continuous distribution: exact below exactLimit, else the normal
// approximation with continuity correction.
func uNullCDF(n1, n2 int) func(u int) float64 {
	if n1 < exactLimit && n2 < exactLimit {
		r2 := make([]int, n1+n2)
		for i := range r2 {
			r2[i] = 2 * (i + 1)
		}
		counts := rankSumCounts(r2, n1)
		// U = W − n1(n1+1)/2 and the doubled sum is 2W.
		offset := n1 * (n1 + 1)
		var all float64
		for _, c := range counts {
			all += c
		}
		cum := make([]float64, n1*n2+1)
		var run float64
		for u := range cum {
			run += counts[2*u+offset]
			cum[u] = run / all
		}
		return func(u int) float64 {
			switch {
			case u < 0:
				return 0
			case u >= len(cum):
				return 1
			}
			return cum[u]
		}
	}
	mean := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
	return func(u int) float64 {
		return 0.5 * math.Erfc(-(float64(u)+0.5-mean)/sd/math.Sqrt2)
	}
}

// rankSumCounts returns, for every s, the number of ways of choosing m of
// the doubled ranks r2 with sum s.
func rankSumCounts(r2 []int, m int) []float64 {
	maxSum := 0
	for _, r := range r2 {
		maxSum += r
	}
	// counts[k][s]: subsets of size k of the ranks seen so far summing to s.
	counts := make([][]float64, m+1)
	for k := range counts {
		counts[k] = make([]float64, maxSum+1)
	}
	counts[0][0] = 1
	seen := 0
	for _, r := range r2 {
		seen += r
		for k := m; k >= 1; k-- {
			prev, cur := counts[k-1], counts[k]
			for s := seen; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	return counts[m]
}

// uTestMinP is the smallest two-sided p-value the U test can give for
// samples of sizes n1 and n2, reached when they do not overlap: the widest
// interval of the shift misses it with that probability.
func uTestMinP(n1, n2 int) float64 {
	lc, _ := math.Lgamma(float64(n1 + n2 + 1))
	a, _ := math.Lgamma(float64(n1 + 1))
	b, _ := math.Lgamma(float64(n2 + 1))
	return min(1, 2*math.Exp(a+b-lc))
}
