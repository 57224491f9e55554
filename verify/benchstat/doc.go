// Package benchstat holds the statistics patchproof reports benchmark
// passes with, in the manner of golang.org/x/perf's benchstat: medians with
// distribution-free confidence intervals, a Mann-Whitney U test between two
// samples, and a verdict that prints as "~" unless the difference is both
// statistically significant and large enough to matter. It never reports a
// bare percentage of two means.
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
// printed "~". [Thresholds] holds Alpha, MinEffect and the confidence
// level; its zero value means 0.05, 1% and 95%.
//
// # The cost of a feature
//
// [PairedCost] measures what switching a feature on costs in one build: the
// on/off ratio (and difference) of the two arms in each pass, the median
// ratio with its confidence interval, a sign test on the pairs, and the U
// test between the on and off samples, which decides the verdict.
// [CompareCosts] then asks whether head's cost differs from base's by
// comparing the two sets of paired ratios with [Compare].
//
// Writing samples so that the real benchstat reads them is the business of
// the subpackage benchfmt.
package benchstat
