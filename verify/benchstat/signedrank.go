package benchstat

import (
	"fmt"
	"math"
	"slices"
)

// A SignedRankTest is the result of a two-sided Wilcoxon signed-rank test
// of paired differences against a median of zero.
type SignedRankTest struct {
	// N counts the pairs given; NonZero those whose difference is not
	// zero, which are all the test ranks (zeros are dropped, Wilcoxon's
	// convention and R's).
	N, NonZero int
	// WPlus is the sum of the mid-ranks of |d| over the positive d.
	WPlus float64
	// P is the two-sided p-value: the probability, if every difference
	// were as likely positive as negative, of a WPlus at least as far from
	// its mean NonZero·(NonZero+1)/4.
	P float64
	// Exact says P comes from the exact distribution of WPlus over the 2ⁿ
	// sign assignments of these mid-ranks, not the normal approximation.
	Exact bool
}

// WilcoxonSignedRank runs a two-sided Wilcoxon signed-rank test on the
// paired differences d. Below exactLimit non-zero differences the p-value
// is exact given the ties (the mid-ranks' own sign-flip distribution);
// above, it comes from the normal approximation with the variance
// corrected for ties and a continuity correction of 1/2.
func WilcoxonSignedRank(d []float64) (SignedRankTest, error) {
	t := SignedRankTest{N: len(d), P: 1}
	if len(d) == 0 {
		return t, errEmptySample
	}
	var abs []float64
	var positive []bool
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			abs = append(abs, math.Abs(x))
			positive = append(positive, x > 0)
		}
	}
	n := len(abs)
	t.NonZero = n
	if n == 0 {
		return t, nil // every pair tied: nothing tells the arms apart
	}
	r2, ties := doubledRanks(abs)
	var w2 int
	for i, r := range r2 {
		if positive[i] {
			w2 += r
		}
	}
	t.WPlus = float64(w2) / 2
	if n < exactLimit {
		t.Exact = true
		t.P = exactSignedRankP(r2, w2)
		return t, nil
	}
	t.P = normalSignedRankP(t.WPlus, n, ties)
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

// signFlipCounts returns, for every s, the number of the 2ⁿ sign
// assignments to the doubled ranks r2 whose positive ranks sum to s.
func signFlipCounts(r2 []int) []float64 {
	total := 0
	for _, r := range r2 {
		total += r
	}
	counts := make([]float64, total+1)
	counts[0] = 1
	seen := 0
	for _, r := range r2 {
		seen += r
		for s := seen; s >= r; s-- {
			counts[s] += counts[s-r]
		}
	}
	return counts
}

// exactSignedRankP is twice the smaller tail of the sign-flip distribution
// at the doubled positive rank sum w2, at most 1. The distribution is
// symmetric (flipping every sign maps s to total−s), so this equals the
// probability of a sum at least as far from the mean.
func exactSignedRankP(r2 []int, w2 int) float64 {
	counts := signFlipCounts(r2)
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

// normalSignedRankP is the two-sided p-value of WPlus from the normal
// approximation: mean n(n+1)/4, variance n(n+1)(2n+1)/24 less Σ(t³−t)/48
// over the groups of t tied |d|, continuity correction 1/2.
func normalSignedRankP(wPlus float64, n int, ties []int) float64 {
	nf := float64(n)
	var tieSum float64
	for _, t := range ties {
		tf := float64(t)
		tieSum += tf*tf*tf - tf
	}
	variance := nf*(nf+1)*(2*nf+1)/24 - tieSum/48
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(wPlus-nf*(nf+1)/4) - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return math.Erfc(z / math.Sqrt2)
}

// signedRankNullCDF returns P(W+ ≤ w) for n differences from a continuous
// distribution symmetric about zero (ranks 1..n, no ties): exact below
// exactLimit, else the normal approximation with continuity correction.
func signedRankNullCDF(n int) func(w int) float64 {
	if n < exactLimit {
		r2 := make([]int, n)
		for i := range r2 {
			r2[i] = 2 * (i + 1)
		}
		counts := signFlipCounts(r2)
		all := math.Ldexp(1, n)
		cum := make([]float64, n*(n+1)/2+1)
		var run float64
		for w := range cum {
			run += counts[2*w]
			cum[w] = run / all
		}
		return func(w int) float64 {
			switch {
			case w < 0:
				return 0
			case w >= len(cum):
				return 1
			}
			return cum[w]
		}
	}
	nf := float64(n)
	mean := nf * (nf + 1) / 4
	sd := math.Sqrt(nf * (nf + 1) * (2*nf + 1) / 24)
	return func(w int) float64 {
		return 0.5 * math.Erfc(-(float64(w)+0.5-mean)/sd/math.Sqrt2)
	}
}

// signedRankMinP is the smallest two-sided p-value the signed-rank test
// (and the sign test) can give with n non-zero differences: all of one
// sign, 2/2ⁿ.
func signedRankMinP(n int) float64 { return min(1, math.Ldexp(2, -n)) }

// pairsToDetect is the smallest n whose signed-rank test can reach alpha.
func pairsToDetect(alpha float64) int {
	n := 1
	for signedRankMinP(n) > alpha && n < 1000 {
		n++
	}
	return n
}

// WalshMedian is the Hodges-Lehmann estimate of the centre of the paired
// differences d — the median of the n(n+1)/2 Walsh averages (dᵢ+dⱼ)/2,
// i ≤ j — with the distribution-free confidence interval that inverts the
// signed-rank test: the k-th smallest and k-th largest Walsh average, k
// the largest with 1 − 2·P(W+ ≤ k−1) ≥ confidence (0 means 0.95). All n
// differences count, zeros too, so that identical arms give exactly 0.
// With too few pairs the interval spans every Walsh average, the summary
// states the coverage it has, and a warning says so.
func WalshMedian(d []float64, confidence float64) Summary {
	if confidence == 0 {
		confidence = defaultConfidence
	}
	n := len(d)
	if n == 0 {
		nan := math.NaN()
		return Summary{Center: nan, Lo: nan, Hi: nan, Warnings: []string{"no pairs"}}
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range n {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	m := len(walsh)
	k, coverage := walshCIOrder(n, confidence)
	s := Summary{N: n, Center: median(walsh), Lo: walsh[k-1], Hi: walsh[m-k], Confidence: coverage}
	if coverage < confidence {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"need >= %d pairs for a confidence interval of the median difference at level %v; with %d it is %.3g",
			walshCISamples(confidence), confidence, n, coverage))
	}
	return s
}

// walshCIOrder returns the largest k for which [w(k), w(M+1−k)] of the M
// sorted Walsh averages of n differences covers their centre with
// probability at least confidence, and that coverage; 1 and its coverage
// when even k = 1 falls short.
func walshCIOrder(n int, confidence float64) (k int, coverage float64) {
	cdf := signedRankNullCDF(n)
	k, coverage = 1, 1-2*cdf(0)
	for j := 2; j <= (n*(n+1)/2+1)/2; j++ {
		c := 1 - 2*cdf(j-1)
		if c < confidence {
			break
		}
		k, coverage = j, c
	}
	return k, max(coverage, 0)
}

// walshCISamples is the smallest n whose widest Walsh interval reaches the
// confidence level: 1 − 2/2ⁿ ≥ confidence.
func walshCISamples(confidence float64) int {
	n := 1
	for 1-signedRankMinP(n) < confidence && n < 1000 {
		n++
	}
	return n
}

// SignTest is the two-sided sign test of above positive against below
// negative differences (ties left out): twice the smaller binomial tail
// under p = 1/2, at most 1.
func SignTest(above, below int) float64 {
	n := above + below
	if n == 0 {
		return 1
	}
	return min(1, 2*binomCDFHalf(n, min(above, below)))
}
