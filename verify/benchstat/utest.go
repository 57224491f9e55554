package benchstat

import (
	"errors"
	"math"
	"slices"
)

// exactLimit is the sample size below which the U test uses the exact
// permutation distribution; both samples must be under it.
const exactLimit = 50

// A UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	N1, N2 int
	// U counts the pairs (x, y), x from the first sample and y from the
	// second, with x > y; a tie counts one half.
	U float64
	// P is the two-sided p-value: the probability, if both samples came
	// from one distribution, of a U at least as far from N1·N2/2.
	P float64
	// Exact says P comes from the exact permutation distribution (given
	// the ties), not the normal approximation.
	Exact bool
}

// errEmptySample is returned when a test needs values it was not given.
var errEmptySample = errors.New("empty sample")

// MannWhitney runs a two-sided Mann-Whitney U test on x and y.
func MannWhitney(x, y []float64) (UTest, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{N1: n1, N2: n2, P: 1}, errEmptySample
	}
	all := make([]float64, 0, n1+n2)
	all = append(append(all, x...), y...)
	r2, ties := doubledRanks(all)
	var w2x int // sum of doubled ranks of x
	for _, r := range r2[:n1] {
		w2x += r
	}
	t := UTest{N1: n1, N2: n2, U: float64(w2x)/2 - float64(n1*(n1+1))/2}
	if n1 < exactLimit && n2 < exactLimit {
		t.Exact = true
		t.P = exactRankSumP(r2, n1, w2x)
		return t, nil
	}
	t.P = normalUP(t.U, n1, n2, ties)
	return t, nil
}

// doubledRanks returns twice the mid-rank of every value (an integer even
// with ties) and the sizes of the groups of tied values.
func doubledRanks(values []float64) (r2 []int, ties []int) {
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case values[a] < values[b]:
			return -1
		case values[a] > values[b]:
			return 1
		}
		return 0
	})
	r2 = make([]int, len(values))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && values[idx[j]] == values[idx[i]] {
			j++
		}
		// Positions i+1..j share the mid-rank (i+1+j)/2.
		for _, k := range idx[i:j] {
			r2[k] = i + 1 + j
		}
		if j-i > 1 {
			ties = append(ties, j-i)
		}
		i = j
	}
	return r2, ties
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

// exactRankSumP is the two-sided p-value of the doubled rank sum w2 of m
// values among the doubled ranks r2: twice the smaller tail, at most 1.
func exactRankSumP(r2 []int, m, w2 int) float64 {
	// The distribution of the other sample's sum is the mirror image, so
	// count subsets of the smaller size: less work, same p.
	total := 0
	for _, r := range r2 {
		total += r
	}
	if other := len(r2) - m; other < m {
		m, w2 = other, total-w2
	}
	counts := rankSumCounts(r2, m)
	var all, lower, upper float64
	for s, c := range counts {
		all += c
		if s <= w2 {
			lower += c
		}
		if s >= w2 {
			upper += c
		}
	}
	return min(1, 2*min(lower, upper)/all)
}

// normalUP is the two-sided p-value of U from the normal approximation, with
// the variance corrected for ties and a continuity correction of 1/2.
func normalUP(u float64, n1, n2 int, ties []int) float64 {
	n := float64(n1 + n2)
	var tieSum float64
	for _, t := range ties {
		tf := float64(t)
		tieSum += tf*tf*tf - tf
	}
	variance := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value tied: nothing tells the samples apart
	}
	z := (math.Abs(u-float64(n1*n2)/2) - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return math.Erfc(z / math.Sqrt2)
}

// uTestMinP is the smallest two-sided p-value the U test can give for
// samples of sizes n1 and n2, reached when they do not overlap.
func uTestMinP(n1, n2 int) float64 {
	lc, _ := math.Lgamma(float64(n1 + n2 + 1))
	a, _ := math.Lgamma(float64(n1 + 1))
	b, _ := math.Lgamma(float64(n2 + 1))
	return min(1, 2*math.Exp(a+b-lc))
}

// uTestSamples is the smallest n for which two samples of n values can
// reach a p-value of alpha.
func uTestSamples(alpha float64) int {
	n := 1
	for uTestMinP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}
