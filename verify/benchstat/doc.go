// Package benchstat holds the statistics patchproof reports benchmark
// passes with, in the manner of golang.org/x/perf's benchstat: medians with
// distribution-free confidence intervals, a Mann-Whitney U test between two
// samples, a Wilcoxon signed-rank test between paired ones, a judgment by
// spread for exact measures, and a verdict that prints as "~" unless the
// difference is both statistically significant (or, for an exact measure,
// beyond its spread) and large enough to matter. It never reports a bare
// percentage of two means.
//
// # Samples and summaries
//
// A [Sample] keeps the raw values of one measure in one arm (a build with
// statistics on or off), in the order the passes ran, so that arms measured
// in the same pass can be paired. [Summarize] gives the median and an
// order-statistic confidence interval: the interval between the k-th
// smallest and k-th largest value whose coverage, from the binomial
// distribution of the number of values below the true median, is at least
// the requested confidence. Fewer than 6 values cannot give 95%: the summary
// then spans the whole sample, states the confidence it does have, and
// carries a warning. Too few samples is never an error.
//
// # Comparing two samples
//
// [MannWhitney] tests whether two samples come from the same distribution,
// two-sided. Below 50 values in each sample the p-value comes from the exact
// permutation distribution of the rank sum, computed with the sample's own
// mid-ranks, so ties are handled exactly; above, from the normal
// approximation with tie and continuity corrections.
//
// [Compare] summarises both samples, runs the U test and estimates the
// change with the Hodges-Lehmann estimator: the median of all pairwise
// differences new−old (and, for positive values, of all pairwise ratios
// new/old) with the distribution-free confidence interval that inverts the
// U test. Its [Verdict] is [Improved] or [Regressed] only if p ≤ Alpha and
// the relative effect is at least MinEffect; otherwise it is [Unchanged],
// printed "~". [Thresholds] holds Alpha, MinEffect, the confidence level
// and ExactFloor; its zero value means 0.05, 1%, 95% and 0.5%.
//
// # Paired samples
//
// When value i of two samples came from the same pass, whatever drifts
// between passes cancels within the pair, and a paired test has far more
// power than the U test. [ComparePaired] compares the pairs on log(new/old)
// when every value is positive, else on new−old: [WilcoxonSignedRank] on
// those differences decides (zeros dropped; below 50 non-zero pairs the
// exact distribution of the signed mid-ranks, so ties are exact; above,
// the normal approximation with the variance corrected for ties and a
// continuity correction), [SignTest] is shown beside it, and [WalshMedian]
// gives the Hodges-Lehmann estimate of the median difference — the median
// of the Walsh averages (dᵢ+dⱼ)/2 — with the interval that inverts the
// signed-rank test, reported as a relative change. Six pairs that all
// agree are the fewest that reach p ≤ 0.05 and a 95% interval.
//
// # The cost of a feature
//
// [PairedCost] measures what switching a feature on costs in one build: the
// on/off ratio (and difference) of the two arms in each pass, and the
// paired comparison of off against on, which decides the verdict. The U
// test between the on and off samples is kept beside it, for comparison
// with benchstat, which pairs nothing. [PairedCompareCosts] asks whether
// head's cost differs from base's pass by pass (log of head's ratio over
// base's); [CompareCosts] does it unpaired, with [Compare], where the
// passes do not pair the builds.
//
// # Exact measures
//
// Some measures repeat to within a tiny spread (lock calls and
// instructions per request): a test would need many passes to say what
// two equal ranges already say. [CompareExact] calls a change any change
// beyond that spread: the ranges of the two samples do not overlap and
// their medians differ by more than max(ExactFloor of the old median, the
// wider range). One value a side is enough; the floor (0.5% by default)
// then stands alone.
//
// Writing samples so that the real benchstat reads them is the business of
// the subpackage benchfmt.
package benchstat
