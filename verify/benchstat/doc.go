// Package benchstat holds the statistics patchproof reports benchmark
// passes with, in the manner of golang.org/x/perf's benchstat: medians with
// distribution-free confidence intervals, a Mann-Whitney U test between two
// samples, a Wilcoxon signed-rank test between paired ones, a judgment by
// spread for exact measures, and a verdict that prints as "~" unless the
// difference is both statistically significant (or, for an exact measure,
// beyond its spread) and large enough to matter. It never reports a bare
// percentage of two means.
//
// # What comes from x/perf, and what is this package's own
//
// The unpaired statistics are golang.org/x/perf/benchmath's, the code the
// real benchstat runs, so that a median, an interval or a p-value here is
// the one "benchstat bench.txt" prints: [Summarize] is
// AssumeNothing.Summary and [MannWhitney] is AssumeNothing.Compare. The one
// departure is a sample too small for a bounded interval, below.
//
// The rest is this package's own, because x/perf has nothing like it.
// benchstat pairs nothing, and patchproof's passes pair: each pass runs
// every arm back to back, so whatever drifts between passes cancels within
// the pair ([ComparePaired], [PairedCost], [WilcoxonSignedRank],
// [SignTest], [WalshMedian]). benchstat reports no estimate of a change
// with its interval, only the ratio of two medians; here the change is the
// Hodges-Lehmann estimate with the interval that inverts its test
// ([HodgesLehmann], [WalshMedian]). And benchstat's assume=exact expects
// equal values and tests nothing, where lock calls and instructions per
// request repeat to within a small spread that decides ([CompareExact]).
// The exact distributions these need (of the signed mid-ranks given their
// ties, of U for the intervals) are this package's too, and its tests
// check them against brute force and published tables.
//
// Reading and writing the Go benchmark format is golang.org/x/perf/benchfmt's
// business: workloads/bench writes bench.txt with it.
//
// # Who owns what
//
// This package is statistics only, shared by whatever compares samples.
// Its verdicts are verify/verdict's Change, the one vocabulary of every
// check, so that a comparison's word reaches results.json and the report
// unchanged. workloads/bench measures the benchmark and summarises it
// with this package; verify/bench, the benchmark check, decides which
// verdicts fail a run and renders them.
//
// # Samples and summaries
//
// A [Sample] keeps the raw values of one measure in one arm (a build with
// statistics on or off), in the order the passes ran, so that arms measured
// in the same pass can be paired. [Summarize] gives the median and
// benchmath's order-statistic confidence interval, grown out from the
// median one value at a time, the likelier side first and the left one on
// a tie, until its coverage (from the binomial distribution of the number
// of values below the true median; above 30 values, its normal
// approximation) reaches the requested confidence; so it can end one value
// short of symmetric. Fewer than 6 values cannot give 95%, and benchmath's
// interval is then unbounded; the summary here spans the whole sample
// instead, states the confidence it does have, and carries a warning. Too
// few samples is never an error.
//
// # Comparing two samples
//
// [MannWhitney] tests whether two samples come from the same distribution,
// two-sided, as benchmath does: exactly, given the ties, up to 50 values a
// sample (25 when values tie), else by the normal approximation with tie
// and continuity corrections.
//
// [Compare] summarises both samples, runs the U test and estimates the
// change with the Hodges-Lehmann estimator: the median of all pairwise
// differences new−old (and, for positive values, of all pairwise ratios
// new/old) with the distribution-free confidence interval that inverts the
// U test. Its Verdict is verdict.Improved or verdict.Regressed only if
// p ≤ Alpha and the relative effect is at least MinEffect; otherwise it is
// verdict.NoChange, printed "~". [Thresholds] holds Alpha, MinEffect, the confidence level
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
package benchstat
