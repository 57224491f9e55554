package benchstat

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// bruteMidRanks2 is twice the mid-rank of each value, the slow way: one
// more than twice the number below, plus the number equal beyond itself.
func bruteMidRanks2(v []float64) []int {
	r2 := make([]int, len(v))
	for i, x := range v {
		below, equal := 0, 0
		for _, y := range v {
			switch {
			case y < x:
				below++
			case y == x:
				equal++
			}
		}
		r2[i] = 2*below + equal + 1
	}
	return r2
}

// bruteSignedRank is the Wilcoxon signed-rank test by enumeration, with
// Pratt's zeros: the mid-ranks of every |d| (zeros among them), the zeros'
// ranks then left out, every one of the 2ⁿ sign assignments of the other
// ranks tried, and the p-value the share whose positive rank sum lies at
// least as far from the mean as the observed one.
func bruteSignedRank(d []float64) (wPlus, p float64) {
	abs := make([]float64, len(d))
	for i, x := range d {
		abs[i] = math.Abs(x)
	}
	all := bruteMidRanks2(abs)
	var r2 []int
	var pos []bool
	for i, x := range d {
		if x != 0 {
			r2 = append(r2, all[i])
			pos = append(pos, x > 0)
		}
	}
	n := len(r2)
	if n == 0 {
		return 0, 1
	}
	total, w2 := 0, 0
	for i, r := range r2 {
		total += r
		if pos[i] {
			w2 += r
		}
	}
	// In doubled units the mean is total/2; compare 2·|s − mean|.
	far := abs2(2*w2 - total)
	count := 0
	for mask := range 1 << n {
		s := 0
		for i, r := range r2 {
			if mask&(1<<i) != 0 {
				s += r
			}
		}
		if abs2(2*s-total) >= far {
			count++
		}
	}
	return float64(w2) / 2, float64(count) / float64(int(1)<<n)
}

func abs2(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestWilcoxonSignedRankBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    []float64
	}{
		{"one positive", []float64{0.3}},
		{"all positive, 6", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}},
		{"all negative, 7", []float64{-1, -2, -3, -4, -5, -6, -7}},
		{"mixed", []float64{0.8, -0.1, 0.5, 0.2, -0.3, 0.9, 0.4, 0.6}},
		{"ties in |d|", []float64{1, -1, 2, 2, -2, 3, 3, 3, 4}},
		{"zeros ranked, counted on neither side", []float64{0, 0, 1, 2, -3, 4, 5, 0, 6}},
		{"all zero", []float64{0, 0, 0}},
		{"one of each sign", []float64{-1, 1}},
		{"symmetric", []float64{-3, -2, -1, 1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WilcoxonSignedRank(tc.d)
			if err != nil {
				t.Fatal(err)
			}
			w, p := bruteSignedRank(tc.d)
			nz := 0
			for _, x := range tc.d {
				if x != 0 {
					nz++
				}
			}
			want := SignedRankTest{N: len(tc.d), NonZero: nz, WPlus: w, P: p, Exact: nz > 0}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("WilcoxonSignedRank(%v) (-brute force +got):\n%s", tc.d, diff)
			}
		})
	}
	// And on random data, rounded so that ties and zeros happen.
	r := rand.New(rand.NewPCG(14, 1))
	for range 300 {
		n := 1 + r.IntN(14)
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Round(4*r.NormFloat64()+1) / 2
		}
		got, _ := WilcoxonSignedRank(d)
		w, p := bruteSignedRank(d)
		if math.Abs(got.P-p) > 1e-12 || got.WPlus != w {
			t.Errorf("WilcoxonSignedRank(%v) = W+ %v p %v; brute force W+ %v p %v", d, got.WPlus, got.P, w, p)
		}
	}
	if _, err := WilcoxonSignedRank(nil); err == nil {
		t.Error("WilcoxonSignedRank of no pairs: no error")
	}
}

func TestWilcoxonSignedRankPublished(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want SignedRankTest
	}{
		{
			// Hollander & Wolfe's depression scale example, as in R's
			// wilcox.test documentation: V = 40 and one-sided
			// p = 0.01953, which is 10 of the 2⁹ sign assignments.
			name: "Hollander & Wolfe",
			x:    []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30},
			y:    []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29},
			want: SignedRankTest{N: 9, NonZero: 9, WPlus: 40, P: 2 * 10.0 / 512, Exact: true},
		},
		{
			// Wikipedia's worked example (Wilcoxon signed-rank test): one
			// zero, two tied |d| of 5. With the zero dropped (Wilcoxon's
			// way, R's) they share mid-rank 1.5 and W = W+ − W− = 9 over
			// 9 pairs, so W+ = 27; with the zero ranked first (Pratt's,
			// scipy's zero_method="pratt") every rank is one higher, the
			// five positive differences gain one each: W+ = 32.
			name: "Wikipedia",
			x:    []float64{125, 115, 130, 140, 140, 115, 140, 125, 140, 135},
			y:    []float64{110, 122, 125, 120, 140, 124, 123, 137, 135, 145},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := make([]float64, len(tc.x))
			for i := range d {
				d[i] = tc.x[i] - tc.y[i]
			}
			got, err := WilcoxonSignedRank(d)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want.N == 0 {
				_, p := bruteSignedRank(d)
				want = SignedRankTest{N: 10, NonZero: 9, WPlus: 32, P: p, Exact: true}
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("WilcoxonSignedRank (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWilcoxonSignedRankNormal(t *testing.T) {
	// 60 pairs: 1..60 with the ten smallest negative, so W− = 55 and
	// W+ = 1830 − 55 against a mean of 915.
	d := seq(1, 60)
	for i := range 10 {
		d[i] = -d[i]
	}
	sd := math.Sqrt(60 * 61 * 121 / 24.0)
	want := SignedRankTest{N: 60, NonZero: 60, WPlus: 1775, P: math.Erfc((1775 - 915 - 0.5) / sd / math.Sqrt2)}
	got, _ := WilcoxonSignedRank(d)
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("WilcoxonSignedRank (-want +got):\n%s", diff)
	}
	// Ties shrink the variance: 50 values of |d| = 1, 40 up and 10 down.
	// Mid-rank 25.5 each, W+ = 1020, variance 50·51·101/24 − (50³−50)/48.
	tied := make([]float64, 50)
	for i := range tied {
		tied[i] = 1
		if i < 10 {
			tied[i] = -1
		}
	}
	v := 50*51*101/24.0 - (50*50*50-50)/48.0
	want = SignedRankTest{N: 50, NonZero: 50, WPlus: 1020, P: math.Erfc((1020 - 637.5 - 0.5) / math.Sqrt(v) / math.Sqrt2)}
	got, _ = WilcoxonSignedRank(tied)
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("WilcoxonSignedRank tied (-want +got):\n%s", diff)
	}
}

// bruteBinomSignP is the sign test from exact binomial coefficients.
func bruteBinomSignP(above, below int) float64 {
	n := above + below
	if n == 0 {
		return 1
	}
	tail := new(big.Int)
	for k := 0; k <= min(above, below); k++ {
		tail.Add(tail, new(big.Int).Binomial(int64(n), int64(k)))
	}
	p := new(big.Rat).SetFrac(new(big.Int).Lsh(tail, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := p.Float64()
	return min(1, f)
}

func TestSignTest(t *testing.T) {
	for _, tc := range []struct {
		above, below int
		want         float64
	}{
		{0, 0, 1},
		{6, 0, 2.0 / 64},
		{0, 6, 2.0 / 64},
		{5, 0, 2.0 / 32},
		{9, 1, 2 * 11.0 / 1024}, // P(B ≤ 1) for Binomial(10, 1/2)
		{19, 1, 2 * 21.0 / (1 << 20)},
		{5, 5, 1},
		{3, 4, 1},
	} {
		if got := SignTest(tc.above, tc.below); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("SignTest(%d, %d) = %v, want %v", tc.above, tc.below, got, tc.want)
		}
	}
	for n := 0; n <= 70; n++ { // both sides of the exact limit, 60
		for a := 0; a <= n; a++ {
			if got, want := SignTest(a, n-a), bruteBinomSignP(a, n-a); math.Abs(got-want) > 1e-12*max(1, want)+1e-15 {
				t.Errorf("SignTest(%d, %d) = %v, binomial %v", a, n-a, got, want)
			}
		}
	}
}

// bruteWalsh is the Hodges-Lehmann interval the slow way: the Walsh
// averages listed, and k found by enumerating the 2ⁿ subsets of the ranks
// 1..n for the null distribution of W+.
func bruteWalsh(d []float64, confidence float64) Summary {
	n := len(d)
	var walsh []float64
	for i := range n {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	m := len(walsh)
	counts := make([]int, n*(n+1)/2+1)
	for mask := range 1 << n {
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += i + 1
			}
		}
		counts[s]++
	}
	cdf := func(w int) float64 {
		c := 0
		for s := 0; s <= w && s < len(counts); s++ {
			c += counts[s]
		}
		return float64(c) / float64(int(1)<<n)
	}
	k, cov := 1, 1-2*cdf(0)
	for j := 2; j <= (m+1)/2 && 1-2*cdf(j-1) >= confidence; j++ {
		k, cov = j, 1-2*cdf(j-1)
	}
	med := walsh[m/2]
	if m%2 == 0 {
		med = (walsh[m/2-1] + walsh[m/2]) / 2
	}
	return Summary{N: n, Center: med, Lo: walsh[k-1], Hi: walsh[m-k], Confidence: cov}
}

func TestWalshMedian(t *testing.T) {
	ignoreWarnings := cmpopts.IgnoreFields(Summary{}, "Warnings")
	for _, tc := range []struct {
		name string
		d    []float64
		want Summary
	}{
		{
			// Six pairs: P(W+ ≤ 0) = 1/64, P(W+ ≤ 1) = 2/64, so only the
			// whole range of Walsh averages, min(d) to max(d), reaches 95%.
			name: "six pairs",
			d:    []float64{0.01, 0.03, 0.02, 0.05, 0.04, 0.06},
			want: Summary{N: 6, Center: 0.035, Lo: 0.01, Hi: 0.06, Confidence: 1 - 2.0/64},
		},
		{
			// Ten pairs: P(W+ ≤ 8) = 25/1024 and P(W+ ≤ 9) = 33/1024
			// (the tables' critical value 8 at 5%), so the interval runs
			// from the 9th to the 47th of the 55 Walsh averages.
			name: "ten pairs",
			d:    seq(1, 10),
			want: bruteWalsh(seq(1, 10), 0.95),
		},
		{
			name: "identical arms",
			d:    []float64{0, 0, 0, 0, 0, 0},
			want: Summary{N: 6, Center: 0, Lo: 0, Hi: 0, Confidence: 1 - 2.0/64},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WalshMedian(tc.d, 0)
			if diff := cmp.Diff(tc.want, got, approx, ignoreWarnings); diff != "" {
				t.Errorf("WalshMedian (-want +got):\n%s", diff)
			}
		})
	}
	// The ten-pair interval is the 9th and 47th Walsh average of 1..10.
	if got := WalshMedian(seq(1, 10), 0); got.Lo != 3 || got.Hi != 8 || math.Abs(got.Confidence-(1-50.0/1024)) > 1e-12 {
		t.Errorf("WalshMedian(1..10) = %+v, want [3, 8] at 1−50/1024", got)
	}
	r := rand.New(rand.NewPCG(14, 2))
	for range 200 {
		n := 1 + r.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Round(100*r.NormFloat64()) / 100
		}
		conf := []float64{0.8, 0.9, 0.95, 0.99}[r.IntN(4)]
		if diff := cmp.Diff(bruteWalsh(d, conf), WalshMedian(d, conf), approx, ignoreWarnings); diff != "" {
			t.Errorf("WalshMedian(%v, %v) (-brute force +got):\n%s", d, conf, diff)
		}
	}
	if w := WalshMedian([]float64{1, 2, 3, 4, 5}, 0).Warnings; len(w) != 1 {
		t.Errorf("five pairs: warnings %q, want one", w)
	}
	if w := WalshMedian(seq(1, 6), 0).Warnings; len(w) != 0 {
		t.Errorf("six pairs: warnings %q, want none", w)
	}
}

func TestComparePaired(t *testing.T) {
	up := func(old []float64, by ...float64) []float64 {
		out := make([]float64, len(old))
		for i, o := range old {
			out[i] = o * by[i%len(by)]
		}
		return out
	}
	drift := seq(100, 109) // what varies between passes
	for _, tc := range []struct {
		name     string
		old, new []float64
		better   Better
		th       Thresholds
		want     outcome
		log      bool
	}{
		{
			// All ten pairs up, though the samples overlap: the pairing
			// sees it, p = 2/2¹⁰.
			name: "paired cost the U test misses",
			old:  drift, new: up(drift, 1.02, 1.03, 1.025),
			want: outcome{Verdict: Regressed, Effect: math.Expm1(WalshMedian(logs(up(drift, 1.02, 1.03, 1.025), drift), 0).Center), P: 2.0 / 1024},
			log:  true,
		},
		{
			name: "faster is an improvement",
			old:  drift, new: up(drift, 0.95, 0.96),
			want: outcome{Verdict: Improved, Effect: math.Expm1(WalshMedian(logs(up(drift, 0.95, 0.96), drift), 0).Center), P: 2.0 / 1024},
			log:  true,
		},
		{
			// No cut on the point estimate: a change the test finds is a
			// change, its interval says how large.
			name: "significant, below the minimum effect",
			old:  drift, new: up(drift, 1.002, 1.004),
			want: outcome{Verdict: Regressed, Effect: math.Expm1(WalshMedian(logs(up(drift, 1.002, 1.004), drift), 0).Center), P: 2.0 / 1024},
			log:  true,
		},
		{
			// Not significant, but ten pairs this quiet would have found
			// a 1% change: no change.
			name: "quiet enough to have found the minimum effect",
			old:  drift, new: up(drift, 1.001, 0.999, 1.0015, 0.9985, 1.0005, 0.9995),
			want: outcome{Verdict: NoChange, Effect: math.Expm1(WalshMedian(logs(up(drift, 1.001, 0.999, 1.0015, 0.9985, 1.0005, 0.9995), drift), 0).Center), P: 688.0 / 1024},
			log:  true,
		},
		{
			// Not significant, and too noisy to have found a 1% change:
			// not decided, where a cut on the estimate said "~".
			name: "too noisy to decide",
			old:  drift, new: up(drift, 1.03, 0.97, 1.045, 0.955, 1.015, 0.985),
			want: outcome{Verdict: NotDecided, Effect: math.Expm1(WalshMedian(logs(up(drift, 1.03, 0.97, 1.045, 0.955, 1.015, 0.985), drift), 0).Center), P: 688.0 / 1024},
			log:  true,
		},
		{
			name: "identical",
			old:  drift, new: drift,
			want: outcome{Verdict: NoChange, Effect: 0, P: 1},
			log:  true,
		},
		{
			// A zero: differences, the effect over the old median.
			name: "lock calls appear from zero",
			old:  []float64{0, 0, 0, 0, 0, 0}, new: []float64{392, 393, 393, 394, 393, 393},
			want: outcome{Verdict: Regressed, Effect: math.Inf(1), P: 2.0 / 64},
		},
		{
			name: "five pairs cannot decide",
			old:  []float64{1, 2, 3, 4, 5}, new: []float64{1.1, 2.2, 3.3, 4.4, 5.5},
			want: outcome{Verdict: NotDecided, Effect: 0.1, P: 2.0 / 32, Warnings: []string{
				"need >= 6 pairs for a confidence interval of the median difference at level 0.95; with 5 it is 0.938",
				"need >= 6 pairs that differ to detect a difference at alpha level 0.05; 5 differ",
			}},
			log: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ComparePaired(NewSample(tc.old...), NewSample(tc.new...), tc.better, tc.th)
			if err != nil {
				t.Fatal(err)
			}
			got := outcome{Verdict: c.Verdict, Effect: c.Effect, P: c.Test.P, Warnings: c.Warnings}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ComparePaired (-want +got):\n%s", diff)
			}
			if c.Log != tc.log {
				t.Errorf("Log = %v, want %v", c.Log, tc.log)
			}
			if c.SignP != SignTest(c.Above, c.Below) {
				t.Errorf("SignP %v for %d above, %d below", c.SignP, c.Above, c.Below)
			}
			if !(c.Change.Lo <= c.Change.Center && c.Change.Center <= c.Change.Hi) {
				t.Errorf("change %+v: centre outside its interval", c.Change)
			}
		})
	}
	t.Run("the U test cannot see it", func(t *testing.T) {
		u := Compare(NewSample(drift...), NewSample(up(drift, 1.02, 1.03, 1.025)...), LowerIsBetter, Thresholds{})
		if u.Significant() {
			t.Errorf("U test p = %v: the example no longer shows why pairing matters", u.Test.P)
		}
	})
	if _, err := ComparePaired(NewSample(1, 2), NewSample(1), LowerIsBetter, Thresholds{}); err == nil {
		t.Error("unpaired lengths: no error")
	}
	if _, err := ComparePaired(Sample{}, Sample{}, LowerIsBetter, Thresholds{}); err == nil {
		t.Error("no pairs: no error")
	}
	if got, want := fmtPaired(t, drift, up(drift, 1.02, 1.03, 1.025)), "+2.50% (p=0.002 n=10 pairs) regressed"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func fmtPaired(t *testing.T, old, new []float64) string {
	c, err := ComparePaired(NewSample(old...), NewSample(new...), LowerIsBetter, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	return c.String()
}

func logs(new, old []float64) []float64 {
	d := make([]float64, len(new))
	for i := range d {
		d[i] = math.Log(new[i] / old[i])
	}
	return d
}

func TestCompareExact(t *testing.T) {
	rep := func(v float64, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	type result struct {
		Verdict   Change
		Effect    float64
		Tolerance float64
		Warnings  []string
	}
	// Student's t quantiles t(0.975; 2) and t(0.975; 4), from their closed
	// forms.
	const t2, t4 = 4.302652729749462, 2.7764451051977934
	onePass := []string{"need >= 2 samples each to measure the noise of an exact measure; with 1+1 the noise assumed counts"}
	for _, tc := range []struct {
		name     string
		old, new []float64
		rule     ExactRule
		want     result
	}{
		{
			name: "lock calls gone",
			old:  rep(771, 2), new: rep(8, 2),
			want: result{Improved, 8.0/771 - 1, 0.005 * 771, nil},
		},
		{
			name: "lock calls unchanged",
			old:  rep(771, 2), new: rep(771, 2),
			want: result{NoChange, 0, 0.005 * 771, nil},
		},
		{
			// The floor of a zero mean is zero: the noise alone, pooled
			// from 2+2 values, σ = √(0.02/2).
			name: "lock calls appear from zero",
			old:  rep(0, 2), new: []float64{393, 393.2},
			want: result{Regressed, math.Inf(1), t2 * 0.1, nil},
		},
		{
			// Instructions +0.3%: beyond their noise but within the 0.5%
			// floor, which they must exceed by t·SE, SE = √50·1.
			name: "below the floor",
			old:  []float64{100000, 100010}, new: []float64{100300, 100310},
			want: result{NoChange, 300.0 / 100005, 500.025 + t2*math.Sqrt(50), nil},
		},
		{
			name: "beyond the floor",
			old:  []float64{100000, 100010}, new: []float64{100600, 100610},
			want: result{Regressed, 600.0 / 100005, 500.025 + t2*math.Sqrt(50), nil},
		},
		{
			// Apart, 6% up, but one sample spreads over 10%: the pooled
			// σ = √((50+0.5)/4), SE = σ·√(2/3).
			name: "within the noise",
			old:  []float64{100, 105, 110}, new: []float64{111, 111.5, 112},
			want: result{NoChange, 6.5 / 105, 0.525 + t4*math.Sqrt(50.5/4)*math.Sqrt(2.0/3), nil},
		},
		{
			name: "one pass: the floor alone",
			old:  []float64{1000}, new: []float64{1006},
			want: result{Regressed, 0.006, 5, onePass},
		},
		{
			// One counted pass of lock calls: Apache's own calls move by a
			// tenth or two between servers, within the allowance of half a
			// call and the assumed noise of the two values.
			name: "one pass of lock calls, within the allowance",
			old:  []float64{6.33}, new: []float64{6.21},
			rule: ExactRule{Allowance: 0.5, Noise: 0.15},
			want: result{NoChange, -0.12 / 6.33, 0.5 + 1.959963984540054*0.15*math.Sqrt2, onePass},
		},
		{
			name: "one pass of lock calls, a call more",
			old:  []float64{6.33}, new: []float64{7.33},
			rule: ExactRule{Allowance: 0.5, Noise: 0.15},
			want: result{Regressed, 1 / 6.33, 0.5 + 1.959963984540054*0.15*math.Sqrt2, onePass},
		},
		{
			// Identical values measure no noise; the assumed noise counts.
			name: "assumed noise is a minimum",
			old:  rep(1000, 2), new: rep(1008, 2),
			rule: ExactRule{RelNoise: 0.001},
			want: result{NoChange, 0.008, 5 + t2*1, nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.rule.Compare(NewSample(tc.old...), NewSample(tc.new...), LowerIsBetter, Thresholds{})
			got := result{c.Verdict, c.Effect, c.Tolerance, c.Warnings}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
			if !(c.Detectable > c.Tolerance || c.StdErr == 0 && c.Detectable == c.Tolerance) {
				t.Errorf("detectable %v below the tolerance %v", c.Detectable, c.Tolerance)
			}
		})
	}
	if c := CompareExact(NewSample(100, 101), NewSample(110, 111), HigherIsBetter, Thresholds{}); c.Verdict != Improved {
		t.Errorf("more of a higher-is-better measure: %v", c.Verdict)
	}
	if c := CompareExact(Sample{}, NewSample(1), LowerIsBetter, Thresholds{}); c.Verdict != NoChange || len(c.Warnings) != 1 {
		t.Errorf("no old samples: %+v", c)
	}
	if got, want := CompareExact(NewSample(100, 100), NewSample(114, 114), LowerIsBetter, Thresholds{}).String(), "+14.00% (exact, n=2+2) regressed"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// The exact rule's power grows with passes, and its false rate is what
// its comment states: a true 2% change in values of 1% noise, 1,000
// simulated comparisons at each count of passes; and a true change at the
// floor is called at most Alpha/2 of the time.
func TestExactRulePower(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 3))
	rate := func(n int, shift float64) float64 {
		hits := 0
		for range 1000 {
			old, new := make([]float64, n), make([]float64, n)
			for i := range n {
				old[i] = 100 * (1 + 0.01*r.NormFloat64())
				new[i] = 100 * (1 + shift + 0.01*r.NormFloat64())
			}
			if (ExactRule{RelNoise: 0.01}).Compare(NewSample(old...), NewSample(new...), LowerIsBetter, Thresholds{}).Verdict == Regressed {
				hits++
			}
		}
		return float64(hits) / 1000
	}
	var last float64
	for _, n := range []int{2, 3, 4, 6, 10} {
		p := rate(n, 0.02)
		t.Logf("2%% regression, 1%% noise, %d passes: found in %.1f%%", n, 100*p)
		if p < last {
			t.Errorf("%d passes find a 2%% regression %.3f of the time, fewer than %.3f with fewer passes", n, p, last)
		}
		last = p
	}
	for _, n := range []int{2, 6} {
		// At the floor: Alpha/2 = 2.5%, and the simulation's own error.
		if p := rate(n, 0.005); p > 0.025+0.015 {
			t.Errorf("%d passes: a change at the 0.5%% floor called regressed %.3f of the time, want at most 0.025", n, p)
		} else {
			t.Logf("change at the floor, %d passes: called regressed in %.1f%%", n, 100*p)
		}
		if p := rate(n, 0); p > 0.005 {
			t.Errorf("%d passes: no change called regressed %.3f of the time", n, p)
		}
	}
}

func TestStudentT(t *testing.T) {
	// Quantiles of Student's t: with 1, 2 and 4 degrees of freedom from
	// their closed forms (tan(π(p−½)) for 1, (2p−1)/√(2p(1−p)) for 2),
	// the others by integrating the density numerically; and the
	// normal's.
	for _, tc := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.706204736174696}, {0.975, 2, 4.302652729749462}, {0.975, 4, 2.7764451051977934},
		{0.975, 10, 2.228138851986158}, {0.975, 39, 2.022690920036922}, {0.8, 5, 0.9195437802408318},
		{0.8, 19, 0.8609505502689322}, {0.025, 10, -2.228138851986158}, {0.5, 7, 0},
	} {
		if got := studentTQuantile(tc.p, tc.df); math.Abs(got-tc.want) > 1e-9*max(1, math.Abs(tc.want)) {
			t.Errorf("t quantile %v with %d degrees of freedom = %v, want %v", tc.p, tc.df, got, tc.want)
		}
	}
	if got := normalQuantile(0.975); math.Abs(got-1.959963984540054) > 1e-12 {
		t.Errorf("normal quantile 0.975 = %v", got)
	}
	if got := normalQuantile(0.8); math.Abs(got-0.8416212335729143) > 1e-12 {
		t.Errorf("normal quantile 0.8 = %v", got)
	}
}

// The detectable shift is the formula's, and a shift of that size is
// found about 80% of the time: 1,000 simulated runs of 20 pairs.
func TestDetectableShift(t *testing.T) {
	d := []float64{0.01, -0.02, 0.015, 0.0, 0.03, -0.01, 0.005, 0.02}
	sd := stdDev(d)
	want := (2.364624251593082 + 0.8960296443137716) * sd / math.Sqrt(8*3/math.Pi) // t(0.975; 7), t(0.8; 7)
	if got := DetectableShift(d, 0.05); math.Abs(got-want) > 1e-9 {
		t.Errorf("DetectableShift = %v, want %v", got, want)
	}
	if got := DetectableShift(d[:5], 0.05); !math.IsInf(got, 1) {
		t.Errorf("five pairs: detectable %v, want +Inf (they cannot reach 0.05)", got)
	}
	if got := DetectableShift([]float64{0.01, 0.01, 0.01, 0.01, 0.01, 0.01, math.NaN()}, 0.05); got != 0 {
		t.Errorf("identical differences: detectable %v, want 0", got)
	}
	r := rand.New(rand.NewPCG(26, 5))
	const n, sigma = 20, 0.01
	// The shift sized from the noise's own standard deviation.
	shift := (studentTQuantile(0.975, n-1) + studentTQuantile(0.8, n-1)) * sigma / math.Sqrt(n*3/math.Pi)
	found := 0
	for range 1000 {
		x := make([]float64, n)
		for i := range x {
			x[i] = shift + sigma*r.NormFloat64()
		}
		if tst, _ := WilcoxonSignedRank(x); tst.P <= 0.05 {
			found++
		}
	}
	power := float64(found) / 1000
	t.Logf("a shift of %.4f (the detectable one of noise %v over %d pairs) found in %.1f%% of 1,000 runs", shift, sigma, n, 100*power)
	if power < 0.74 || power > 0.88 {
		t.Errorf("power at the detectable shift %.3f, want about 0.8", power)
	}
}

// The test and the estimate use the same differences: what is not a
// number is left out of both, and zeros count in both.
func TestNonNumbersAndZeros(t *testing.T) {
	clean := []float64{0.02, 0, 0.03, -0.01, 0, 0.04, 0.05}
	spoilt := []float64{0.02, math.NaN(), 0, 0.03, math.Inf(1), -0.01, 0, math.Inf(-1), 0.04, 0.05}
	tc, _ := WilcoxonSignedRank(clean)
	ts, _ := WilcoxonSignedRank(spoilt)
	if ts.Dropped != 3 || ts.N != tc.N || ts.P != tc.P || ts.WPlus != tc.WPlus {
		t.Errorf("with NaN and ±Inf %+v, without %+v: want the same test, 3 dropped", ts, tc)
	}
	wc, ws := WalshMedian(clean, 0), WalshMedian(spoilt, 0)
	if ws.N != wc.N || ws.Center != wc.Center || ws.Lo != wc.Lo || ws.Hi != wc.Hi || len(ws.Warnings) != len(wc.Warnings)+1 {
		t.Errorf("estimate with NaN and ±Inf %+v, without %+v: want the same, and a warning", ws, wc)
	}
	if tc.N != wc.N || tc.N != len(clean) {
		t.Errorf("the test ranks %d differences, the estimate averages %d, of %d", tc.N, wc.N, len(clean))
	}
	// The zeros are ranked: they push the others' ranks up.
	if tc.NonZero != 5 || tc.WPlus != 4+5+6+7 {
		t.Errorf("zeros: %+v, want 5 non-zero and W+ = 22 (the zeros ranks 1.5, the positives 4 to 7)", tc)
	}
	// A pair that is not a number counts on neither side of the sign test.
	c, err := ComparePaired(NewSample(1, 1, 1, 1, 1, 1, 1), NewSample(1.1, math.NaN(), 1.2, 1, 0.9, 1.3, 1.1), LowerIsBetter, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Above != 4 || c.Below != 1 || c.Test.N != 6 || c.Shift.N != 6 {
		t.Errorf("above %d below %d, test of %d, estimate of %d: want 4, 1, 6, 6", c.Above, c.Below, c.Test.N, c.Shift.N)
	}
}
