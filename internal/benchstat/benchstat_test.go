package benchstat

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var approx = cmp.Options{cmpopts.EquateApprox(0, 1e-12), cmpopts.EquateNaNs(), cmpopts.EquateEmpty()}

func seq(from, to float64) []float64 {
	var v []float64
	for x := from; x <= to; x++ {
		v = append(v, x)
	}
	return v
}

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name       string
		values     []float64
		confidence float64
		want       Summary
	}{
		{
			// P(B ≤ 1) = 11/1024 for B ~ Binomial(10, 1/2): [x(2), x(9)]
			// misses the median with probability 22/1024; k = 3 would miss
			// it with 2·56/1024 > 5%.
			name:   "ten values",
			values: []float64{7, 3, 10, 1, 5, 9, 2, 8, 6, 4},
			want:   Summary{N: 10, Center: 5.5, Lo: 2, Hi: 9, Confidence: 1 - 22.0/1024},
		},
		{
			// P(B ≤ 5) = (1+20+190+1140+4845+15504)/2²⁰ for n = 20.
			name:   "twenty values",
			values: seq(1, 20),
			want:   Summary{N: 20, Center: 10.5, Lo: 6, Hi: 15, Confidence: 1 - 2*21700.0/(1<<20)},
		},
		{
			// benchmath widens the interval from the median one order
			// statistic at a time, left first when the two sides tie, and
			// stops at the level: x(1) to x(7) miss the median with
			// probability (1 + 8 + 1)/256, where the symmetric x(1) to
			// x(8) would cover it with 254/256.
			name:   "eight values lean left",
			values: []float64{8, 1, 7, 2, 6, 3, 5, 4},
			want:   Summary{N: 8, Center: 4.5, Lo: 1, Hi: 7, Confidence: 246.0 / 256},
		},
		{
			name:       "ten values at 99%",
			values:     seq(1, 10),
			confidence: 0.99,
			want:       Summary{N: 10, Center: 5.5, Lo: 1, Hi: 10, Confidence: 1 - 2.0/1024},
		},
		{
			name:   "six values are enough for 95%",
			values: []float64{3, 1, 2, 6, 5, 4},
			want:   Summary{N: 6, Center: 3.5, Lo: 1, Hi: 6, Confidence: 1 - 2.0/64},
		},
		{
			// benchmath's interval would be unbounded: the whole sample
			// instead, with the coverage it has.
			name:   "five values are not",
			values: []float64{1, 2, 3, 4, 5},
			want: Summary{N: 5, Center: 3, Lo: 1, Hi: 5, Confidence: 1 - 2.0/32, Warnings: []string{
				"need >= 6 samples for a confidence interval at level 0.95; with 5 it is 0.938"}},
		},
		{
			name:   "one value",
			values: []float64{7},
			want: Summary{N: 1, Center: 7, Lo: 7, Hi: 7, Confidence: 0, Warnings: []string{
				"need >= 6 samples for a confidence interval at level 0.95; with 1 it is 0"}},
		},
		{
			name:   "exact measure",
			values: []float64{771, 771, 771, 771, 771, 771},
			want:   Summary{N: 6, Center: 771, Lo: 771, Hi: 771, Confidence: 1 - 2.0/64},
		},
		{
			name: "no values",
			want: Summary{Center: nan, Lo: nan, Hi: nan, Warnings: []string{"no samples"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSample(tc.values...)
			got := Summarize(s, tc.confidence)
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.values, s.Values, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Summarize reordered the raw values (-want +got):\n%s", diff)
			}
		})
	}
}

// The whole sample stands in for benchmath's interval exactly where that
// is unbounded: where even the whole sample's coverage, 1 − 2/2ⁿ, falls
// short of the level.
func TestSummarizeBounded(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for _, conf := range []float64{0.9, 0.95, 0.99} {
			s := Summarize(NewSample(seq(1, float64(n))...), conf)
			bounded := 1-math.Ldexp(2, -n) >= conf
			switch {
			case bounded && (len(s.Warnings) != 0 || s.Confidence < conf || s.Lo < 1 || s.Hi > float64(n)):
				t.Errorf("n=%d at %v: %+v, want an interval within the sample reaching the level", n, conf, s)
			case !bounded && (len(s.Warnings) != 1 || s.Lo != 1 || s.Hi != float64(n) || s.Confidence >= conf):
				t.Errorf("n=%d at %v: %+v, want the whole sample, short of the level, with a warning", n, conf, s)
			}
		}
	}
}

func TestMannWhitney(t *testing.T) {
	var x60, y60 []float64 // 30 and 10 zeros, 30 and 50 ones
	for i := range 60 {
		x60 = append(x60, float64(min(1, i/30)))
		y60 = append(y60, float64(min(1, i/10)))
	}
	tooFew := []string{"need >= 4 samples to detect a difference at alpha level 0.05"}
	for _, tc := range []struct {
		name string
		x, y []float64
		want UTest
	}{
		{
			// Two orderings of 6 values out of C(6,3) = 20 are this
			// extreme, which is not extreme enough for alpha 0.05.
			name: "separated, 3+3",
			x:    []float64{1, 2, 3}, y: []float64{4, 5, 6},
			want: UTest{N1: 3, N2: 3, P: 2.0 / 20, Alpha: 0.05, Warnings: tooFew},
		},
		{
			name: "separated, 4+4",
			x:    []float64{8, 6, 7, 5}, y: []float64{1, 2, 3, 4},
			want: UTest{N1: 4, N2: 4, P: 2.0 / 70, Alpha: 0.05},
		},
		{
			// Hollander & Wolfe's permeability example, as in R's
			// wilcox.test documentation: W = 35, one-sided p = 0.1272,
			// which is 382 of the C(15,5) = 3003 orderings.
			name: "textbook",
			x:    []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			y:    []float64{1.15, 0.88, 0.90, 0.74, 1.21},
			want: UTest{N1: 10, N2: 5, P: 2 * 382.0 / 3003, Alpha: 0.05},
		},
		{
			// Mid-ranks 1, 3, 3, 3, 5.5, 5.5; x sums to 7. Of the 20 ways
			// to pick 3 of them, 3 sum to 7 (the least), so the lower
			// tail is 3/20.
			name: "ties, exact",
			x:    []float64{1, 2, 2}, y: []float64{2, 3, 3},
			want: UTest{N1: 3, N2: 3, P: 2 * 3.0 / 20, Alpha: 0.05, Warnings: tooFew},
		},
		{
			name: "all tied",
			x:    []float64{5, 5, 5}, y: []float64{5, 5},
			want: UTest{N1: 3, N2: 2, P: 1, Alpha: 0.05, Warnings: []string{"all samples are equal"}},
		},
		{
			// U = 30·10 + (30·10 + 30·50)/2 = 1200 against a mean of 1800;
			// σ² = 60·60/12·(121 − (40³−40 + 80³−80)/(120·119)).
			name: "ties, normal approximation",
			x:    x60, y: y60,
			want: UTest{N1: 60, N2: 60, Alpha: 0.05,
				P: math.Erfc((600 - 0.5) / math.Sqrt(300*(121-575880.0/14280)) / math.Sqrt2)},
		},
		{
			name: "no ties, normal approximation",
			x:    seq(1, 60), y: seq(61, 120),
			want: UTest{N1: 60, N2: 60, Alpha: 0.05,
				P: math.Erfc((1800 - 0.5) / math.Sqrt(3600*121/12.0) / math.Sqrt2)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := slices.Clone(tc.x)
			got, err := MannWhitney(tc.x, tc.y, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("MannWhitney (-want +got):\n%s", diff)
			}
			if !slices.Equal(x, tc.x) {
				t.Errorf("MannWhitney reordered its input: %v, was %v", tc.x, x)
			}
			// Swapping the samples keeps p.
			swapped, _ := MannWhitney(tc.y, tc.x, 0)
			mirror := UTest{N1: got.N2, N2: got.N1, P: got.P, Alpha: got.Alpha, Warnings: got.Warnings}
			if diff := cmp.Diff(mirror, swapped, approx); diff != "" {
				t.Errorf("MannWhitney swapped (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := MannWhitney(nil, []float64{1}, 0); err == nil {
		t.Error("MannWhitney of an empty sample: no error")
	}
	if got, _ := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.2); math.Abs(got.P-0.1) > 1e-12 || len(got.Warnings) != 0 {
		t.Errorf("MannWhitney at alpha 0.2 = %+v, want p 0.1 and no warning", got)
	}
}

func TestHodgesLehmann(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		old, new []float64
		want     Shift
	}{
		{
			// The 16 differences run from 7 to 13 with median 10; for 4+4
			// P(U ≤ 0) = 1/70 and P(U ≤ 1) = 2/70, so only the full range
			// reaches 95%. The median ratio is (14/3 + 11/2)/2.
			name: "4+4",
			old:  []float64{1, 2, 3, 4}, new: []float64{11, 12, 13, 14},
			want: Shift{Diff: 10, DiffLo: 7, DiffHi: 13,
				Ratio: (14.0/3 + 5.5) / 2, RatioLo: 11.0 / 4, RatioHi: 14,
				Confidence: 1 - 2.0/70},
		},
		{
			name: "3+3 is too few",
			old:  []float64{1, 2, 3}, new: []float64{2, 3, 4},
			want: Shift{Diff: 1, DiffLo: -1, DiffHi: 3, Ratio: 1.5, RatioLo: 2.0 / 3, RatioHi: 4,
				Confidence: 1 - 2.0/20, Warnings: []string{
					"need >= 4 samples each for a confidence interval of the change at level 0.95; with 3+3 it is 0.9"}},
		},
		{
			name: "no ratio across zero",
			old:  []float64{-1, 0, 1, 2}, new: []float64{1, 2, 3, 4},
			want: Shift{Diff: 2, DiffLo: -1, DiffHi: 5, Ratio: nan, RatioLo: nan, RatioHi: nan,
				Confidence: 1 - 2.0/70},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HodgesLehmann(NewSample(tc.old...), NewSample(tc.new...), 0)
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("HodgesLehmann (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHodgesLehmannInterval(t *testing.T) {
	// For 10+10, P(U ≤ 23) = 0.0216 and P(U ≤ 24) = 0.0262 (tables of the
	// Mann-Whitney distribution), so the 95% interval runs from the 24th
	// smallest to the 24th largest of the 100 differences.
	old, new := seq(1, 10), seq(1, 10)
	sh := HodgesLehmann(NewSample(old...), NewSample(new...), 0.95)
	diffs := []float64{} // differences j−i for i, j in 1..10, sorted
	for d := -9.0; d <= 9; d++ {
		for range 10 - int(math.Abs(d)) {
			diffs = append(diffs, d)
		}
	}
	want := Shift{Diff: 0, DiffLo: diffs[23], DiffHi: diffs[100-24], Ratio: 1,
		RatioLo: sh.RatioLo, RatioHi: sh.RatioHi, Confidence: sh.Confidence}
	if diff := cmp.Diff(want, sh, approx); diff != "" {
		t.Errorf("HodgesLehmann (-want +got):\n%s", diff)
	}
	if sh.Confidence < 0.95 || sh.Confidence > 1-2*0.0216+1e-4 {
		t.Errorf("confidence %v, want 1−2·P(U ≤ 23) ≈ 0.957", sh.Confidence)
	}
}

// outcome is what a test of a comparison checks.
type outcome struct {
	Verdict  Change
	Effect   float64
	P        float64
	Warnings []string
}

// medianRatio is the Hodges-Lehmann ratio the slow way: the median of all
// ratios new/old.
func medianRatio(old, new []float64) float64 {
	var r []float64
	for _, o := range old {
		for _, n := range new {
			r = append(r, n/o)
		}
	}
	slices.Sort(r)
	return (r[(len(r)-1)/2] + r[len(r)/2]) / 2
}

func TestCompare(t *testing.T) {
	fewFive := []string{
		"old: need >= 6 samples for a confidence interval at level 0.95; with 5 it is 0.938",
		"new: need >= 6 samples for a confidence interval at level 0.95; with 5 it is 0.938",
	}
	rep := func(v float64, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	for _, tc := range []struct {
		name     string
		old, new []float64
		better   Better
		th       Thresholds
		want     outcome
	}{
		{
			// Separated samples of 10: 2 of the C(20,10) = 184756
			// orderings are this extreme.
			name: "slower is a regression",
			old:  seq(100, 109), new: seq(110, 119), better: LowerIsBetter,
			want: outcome{Verdict: Regressed, Effect: medianRatio(seq(100, 109), seq(110, 119)) - 1, P: 2 / 184756.0},
		},
		{
			name: "more requests per second is an improvement",
			old:  seq(100, 109), new: seq(110, 119), better: HigherIsBetter,
			want: outcome{Verdict: Improved, Effect: medianRatio(seq(100, 109), seq(110, 119)) - 1, P: 2 / 184756.0},
		},
		{
			name: "significant but below the minimum effect",
			old:  seq(1000, 1009), new: seq(1010, 1019),
			want: outcome{Verdict: NoChange, Effect: medianRatio(seq(1000, 1009), seq(1010, 1019)) - 1, P: 2 / 184756.0},
		},
		{
			name: "the same change counts with no minimum effect",
			old:  seq(1000, 1009), new: seq(1010, 1019), th: Thresholds{MinEffect: -1},
			want: outcome{Verdict: Regressed, Effect: medianRatio(seq(1000, 1009), seq(1010, 1019)) - 1, P: 2 / 184756.0},
		},
		{
			// U = 15 of 36 (each new value beats the old ones below it).
			name: "interleaved samples are not different",
			old:  []float64{1, 3, 5, 7, 9, 11}, new: []float64{2, 4, 6, 8, 10, 12},
			want: outcome{Verdict: NoChange, Effect: medianRatio([]float64{1, 3, 5, 7, 9, 11}, []float64{2, 4, 6, 8, 10, 12}) - 1,
				P: 0.6991341991341992},
		},
		{
			// Exact measures: every value tied within its arm.
			name: "lock calls gone",
			old:  rep(771, 5), new: rep(8, 5),
			want: outcome{Verdict: Improved, Effect: 8.0/771 - 1, P: 2.0 / 252, Warnings: fewFive},
		},
		{
			name: "lock calls unchanged",
			old:  rep(771, 5), new: rep(771, 5),
			want: outcome{Verdict: NoChange, Effect: 0, P: 1, Warnings: append(slices.Clip(fewFive), "all samples are equal")},
		},
		{
			name: "lock calls appear from zero",
			old:  rep(0, 5), new: rep(722, 5),
			want: outcome{Verdict: Regressed, Effect: math.Inf(1), P: 2.0 / 252, Warnings: fewFive},
		},
		{
			name: "three passes cannot tell",
			old:  []float64{1, 2, 3}, new: []float64{11, 12, 13},
			want: outcome{Verdict: NoChange, Effect: 6 - 1, P: 0.1, Warnings: []string{
				"old: need >= 6 samples for a confidence interval at level 0.95; with 3 it is 0.75",
				"new: need >= 6 samples for a confidence interval at level 0.95; with 3 it is 0.75",
				"need >= 4 samples each for a confidence interval of the change at level 0.95; with 3+3 it is 0.9",
				"need >= 4 samples to detect a difference at alpha level 0.05",
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(NewSample(tc.old...), NewSample(tc.new...), tc.better, tc.th)
			got := outcome{Verdict: c.Verdict, Effect: c.Effect, P: c.Test.P, Warnings: c.Warnings}
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComparisonString(t *testing.T) {
	for _, tc := range []struct {
		old, new []float64
		want     string
	}{
		// The median of the pairwise ratios.
		{seq(100, 109), seq(110, 119), "+9.57% (p=0.000 n=10+10) regressed"},
		{seq(110, 119), seq(100, 109), "-8.73% (p=0.000 n=10+10) improved"},
		{[]float64{1, 3, 5, 7, 9, 11}, []float64{2, 4, 6, 8, 10, 12}, "~ (p=0.699 n=6+6)"},
	} {
		got := Compare(NewSample(tc.old...), NewSample(tc.new...), LowerIsBetter, Thresholds{}).String()
		if got != tc.want {
			t.Errorf("Compare(%v, %v).String() = %q, want %q", tc.old, tc.new, got, tc.want)
		}
	}
}

func TestThresholds(t *testing.T) {
	if diff := cmp.Diff(Thresholds{Confidence: 0.95, Alpha: 0.05, MinEffect: 0.01, ExactFloor: 0.005}, Thresholds{}.resolved()); diff != "" {
		t.Errorf("zero Thresholds resolve to (-want +got):\n%s", diff)
	}
	if got, want := (Thresholds{}).String(), "alpha=0.05 min-effect=1% confidence=95% exact-floor=0.5%"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestPairedCost(t *testing.T) {
	off := []float64{1.00, 1.02, 0.98, 1.01, 0.99, 1.00}
	on := []float64{1.10, 1.13, 1.07, 1.12, 1.08, 1.11}
	c, err := PairedCost(NewSample(on...), NewSample(off...), LowerIsBetter, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	ratios := []float64{1.10 / 1.00, 1.13 / 1.02, 1.07 / 0.98, 1.12 / 1.01, 1.08 / 0.99, 1.11 / 1.00}
	// Sorted: 1.08/.99, 1.07/.98, 1.10, 1.13/1.02, 1.12/1.01, 1.11.
	want := Cost{
		On:     Summary{N: 6, Center: 1.105, Lo: 1.07, Hi: 1.13, Confidence: 1 - 2.0/64},
		Off:    Summary{N: 6, Center: 1.00, Lo: 0.98, Hi: 1.02, Confidence: 1 - 2.0/64},
		Ratios: Sample{Values: ratios},
		Ratio:  Summary{N: 6, Center: (1.10 + 1.13/1.02) / 2, Lo: 1.08 / 0.99, Hi: 1.11, Confidence: 1 - 2.0/64},
		Diffs:  Sample{Values: []float64{1.10 - 1.00, 1.13 - 1.02, 1.07 - 0.98, 1.12 - 1.01, 1.08 - 0.99, 1.11 - 1.00}},
		Diff:   Summary{N: 6, Center: ((1.10 - 1.00) + (1.11 - 1.00)) / 2, Lo: 1.07 - 0.98, Hi: 1.13 - 1.02, Confidence: 1 - 2.0/64},
		// Every on value above every off value: 2 of C(12,6) = 924.
		Test:       UTest{N1: 6, N2: 6, P: 2.0 / 924, Alpha: 0.05},
		Better:     LowerIsBetter,
		Thresholds: Thresholds{Confidence: 0.95, Alpha: 0.05, MinEffect: 0.01, ExactFloor: 0.005},
		Verdict:    Regressed,
	}
	if diff := cmp.Diff(want, c, approx, cmpopts.IgnoreFields(Cost{}, "Paired", "Effect")); diff != "" {
		t.Errorf("PairedCost (-want +got):\n%s", diff)
	}
	// The verdict is the signed-rank test's on log(on/off): six of six up,
	// p = 2/64, and the cost is the Hodges-Lehmann estimate of the log
	// ratios, here within the ratios' own range.
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	hl := WalshMedian(logs, 0)
	got := outcome{Verdict: c.Verdict, Effect: c.Effect, P: c.Paired.Test.P}
	if diff := cmp.Diff(outcome{Verdict: Regressed, Effect: math.Expm1(hl.Center), P: 2.0 / 64}, got, approx); diff != "" {
		t.Errorf("PairedCost verdict (-want +got):\n%s", diff)
	}
	if !c.Paired.Log || c.Paired.Above != 6 || math.Abs(c.Paired.SignP-2.0/64) > 1e-12 || math.Abs(c.Paired.Change.Lo-math.Expm1(hl.Lo)) > 1e-12 {
		t.Errorf("PairedCost paired: log %v above %d sign p %v change %+v, want lo %v", c.Paired.Log, c.Paired.Above, c.Paired.SignP, c.Paired.Change, math.Expm1(hl.Lo))
	}
	if c.Effect < 1.08/0.99-1 || c.Effect > 1.11-1 {
		t.Errorf("PairedCost effect %v outside the ratios' range", c.Effect)
	}

	t.Run("zero off values", func(t *testing.T) {
		c, err := PairedCost(NewSample(722, 723, 722, 722, 721), NewSample(0, 0, 0, 0, 0), LowerIsBetter, Thresholds{})
		if err != nil {
			t.Fatal(err)
		}
		// Five pairs all up: the signed-rank test's best is 2/32, so five
		// pairs can detect nothing, and say so.
		got := outcome{Verdict: c.Verdict, Effect: c.Effect, P: c.Paired.Test.P, Warnings: c.Warnings}
		want := outcome{Verdict: NotDecided, Effect: math.Inf(1), P: 2.0 / 32, Warnings: []string{
			"an off value is not positive: no ratios, cost given as differences",
			"need >= 6 pairs for a confidence interval of the median difference at level 0.95; with 5 it is 0.938",
			"need >= 6 pairs that differ to detect a difference at alpha level 0.05; 5 differ",
		}}
		if diff := cmp.Diff(want, got, approx); diff != "" {
			t.Errorf("PairedCost (-want +got):\n%s", diff)
		}
		if c.Ratios.Values != nil || c.Diff.Center != 722 {
			t.Errorf("PairedCost: ratios %v, median difference %v; want none and 722", c.Ratios.Values, c.Diff.Center)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if _, err := PairedCost(NewSample(1, 2), NewSample(1), LowerIsBetter, Thresholds{}); err == nil {
			t.Error("unpaired lengths: no error")
		}
		if _, err := PairedCost(Sample{}, Sample{}, LowerIsBetter, Thresholds{}); err == nil {
			t.Error("empty samples: no error")
		}
	})
}

func TestCompareCosts(t *testing.T) {
	off := seq(100, 107)
	mul := func(f []float64, by ...float64) []float64 {
		out := make([]float64, len(f))
		for i := range f {
			out[i] = f[i] * by[i%len(by)]
		}
		return out
	}
	base, err := PairedCost(NewSample(mul(off, 1.11, 1.12, 1.13)...), NewSample(off...), LowerIsBetter, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	head, err := PairedCost(NewSample(mul(off, 1.005, 1.01, 1.015)...), NewSample(off...), LowerIsBetter, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	c := CompareCosts(base, head, Thresholds{})
	// Ratios 1.11, 1.12, 1.13 (3, 3, 2 of them) against 1.005, 1.01, 1.015:
	// all apart, so p = 2/C(16,8); the median of the ratios of ratios is
	// 1.01/1.12.
	got := outcome{Verdict: c.Verdict, Effect: c.Effect, P: c.Test.P, Warnings: c.Warnings}
	want := outcome{Verdict: Improved, Effect: 1.01/1.12 - 1, P: 2 / 12870.0}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("CompareCosts (-want +got):\n%s", diff)
	}
	if c.Shift.Diff > -0.09 || c.Shift.Diff < -0.12 {
		t.Errorf("CompareCosts: difference of the ratios %v, want about -0.11", c.Shift.Diff)
	}
}
