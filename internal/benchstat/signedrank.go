package benchstat

import (
	"fmt"
	"math"
	"slices"
)

// A SignedRankTest is the result of a two-sided Wilcoxon signed-rank test
// of paired differences against a median of zero.
type SignedRankTest struct {
	// N counts the pairs ranked: those given less the Dropped ones, whose
	// difference is not a number (NaN or ±Inf), which neither the test nor
	// the estimate ([WalshMedian]) can use. NonZero counts those whose
	// difference is not zero.
	N, NonZero, Dropped int
	// WPlus is the sum of the mid-ranks of |d| over the positive d. The
	// zeros are ranked with the rest and count on neither side (Pratt's
	// treatment), so that the test and the Hodges-Lehmann estimate, which
	// averages the zeros in, use the same differences.
	WPlus float64
	// P is the two-sided p-value: the probability, if every difference
	// were as likely positive as negative, of a WPlus at least as far from
	// its mean (half the sum of the non-zero differences' ranks).
	P float64
	// Exact says P comes from the exact distribution of WPlus over the
	// 2^NonZero sign assignments of these mid-ranks, not the normal
	// approximation.
	Exact bool
}

// usable is d without the differences that are not numbers (NaN, ±Inf),
// and how many those were: what the signed-rank test ranks and the
// Hodges-Lehmann estimate averages, the same for both.
func usable(d []float64) (kept []float64, dropped int) {
	kept = make([]float64, 0, len(d))
	for _, x := range d {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			dropped++
			continue
		}
		kept = append(kept, x)
	}
	return kept, dropped
}

// WilcoxonSignedRank runs a two-sided Wilcoxon signed-rank test on the
// paired differences d. The differences that are not numbers are dropped,
// as [WalshMedian] drops them; the zeros are ranked among the rest and
// then count on neither side (Pratt's treatment, scipy's
// zero_method="pratt"), as WalshMedian averages them in. Below exactLimit
// non-zero differences the p-value is exact given the ties (the
// mid-ranks' own sign-flip distribution); above, it comes from the normal
// approximation with the variance of the mid-ranks themselves (which
// corrects for ties and zeros) and a continuity correction of 1/2.
func WilcoxonSignedRank(d []float64) (SignedRankTest, error) {
	t := SignedRankTest{N: len(d), P: 1}
	if len(d) == 0 {
		return t, errEmptySample
	}
	kept, dropped := usable(d)
	t.N, t.Dropped = len(kept), dropped
	if len(kept) == 0 {
		return t, errEmptySample
	}
	abs := make([]float64, len(kept))
	for i, x := range kept {
		abs[i] = math.Abs(x)
	}
	all, _ := doubledRanks(abs)
	var r2 []int
	var w2 int
	for i, x := range kept {
		if x == 0 {
			continue
		}
		r2 = append(r2, all[i])
		if x > 0 {
			w2 += all[i]
		}
	}
	n := len(r2)
	t.NonZero = n
	if n == 0 {
		return t, nil // every pair tied: nothing tells the arms apart
	}
	t.WPlus = float64(w2) / 2
	if n < exactLimit {
		t.Exact = true
		t.P = exactSignedRankP(r2, w2)
		return t, nil
	}
	t.P = normalSignedRankP(r2, w2)
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

// normalSignedRankP is the two-sided p-value of the doubled positive rank
// sum w2 from the normal approximation: under the null every rank is on
// the positive side with probability 1/2, so WPlus has mean Σr/2 and
// variance Σr²/4 over the ranks r (without zeros or ties, n(n+1)/4 and
// n(n+1)(2n+1)/24; each group of t tied |d| lowers the variance by
// (t³−t)/48), and a continuity correction of 1/2.
func normalSignedRankP(r2 []int, w2 int) float64 {
	var sum, sq float64
	for _, r := range r2 {
		x := float64(r) / 2
		sum += x
		sq += x * x
	}
	variance := sq / 4
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(float64(w2)/2-sum/2) - 0.5) / math.Sqrt(variance)
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

// PairsToDetect is the fewest pairs whose signed-rank test (or sign test)
// can reach alpha (0 means 0.05): 6 at 0.05, all of one sign. Fewer can
// decide nothing, however large the change.
func PairsToDetect(alpha float64) int {
	if alpha == 0 {
		alpha = defaultAlpha
	}
	return pairsToDetect(alpha)
}

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
// differences count, zeros too, so that identical arms give exactly 0;
// those that are not numbers (NaN, ±Inf) are left out, with a warning, as
// [WilcoxonSignedRank] leaves them out. With too few pairs the interval
// spans every Walsh average, the summary states the coverage it has, and
// a warning says so.
func WalshMedian(d []float64, confidence float64) Summary {
	if confidence == 0 {
		confidence = defaultConfidence
	}
	d, dropped := usable(d)
	var warnings []string
	if dropped > 0 {
		warnings = append(warnings, fmt.Sprintf("%d of %d differences not a number (NaN or infinite): left out", dropped, dropped+len(d)))
	}
	n := len(d)
	if n == 0 {
		nan := math.NaN()
		return Summary{Center: nan, Lo: nan, Hi: nan, Warnings: append(warnings, "no pairs")}
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
	s := Summary{N: n, Center: median(walsh), Lo: walsh[k-1], Hi: walsh[m-k], Confidence: coverage, Warnings: warnings}
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
