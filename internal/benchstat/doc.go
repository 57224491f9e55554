// Package benchstat holds the statistics patchproof reports benchmark
// passes with, in the manner of golang.org/x/perf's benchstat: medians with
// distribution-free confidence intervals, a Mann-Whitney U test between two
// samples, a Wilcoxon signed-rank test between paired ones, a judgment by
// test against the smallest change worth finding for exact measures, and
// a verdict that prints as "~" unless the difference is statistically
// significant (for an exact measure, beyond the smallest change worth
// finding by more than its noise), or "not decided" where the samples
// could not have found a change worth finding. It never reports a bare
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
// ([HodgesLehmann], [WalshMedian]). benchstat does not say what a sample
// could have found; here a paired comparison states the smallest change
// it would find with 80% power ([DetectableShift]). And benchstat's
// assume=exact expects equal values and tests nothing, where lock calls
// and instructions per request repeat to within a small noise that a
// test of its own decides ([ExactRule]).
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
// U test. Its Verdict is Improved or Regressed only if
// p ≤ Alpha and the relative effect is at least MinEffect; otherwise it is
// NoChange, printed "~". [Thresholds] holds Alpha, MinEffect, the confidence level
// and ExactFloor; its zero value means 0.05, 1%, 95% and 0.5%.
//
// # Paired samples
//
// When value i of two samples came from the same pass, whatever drifts
// between passes cancels within the pair, and a paired test has far more
// power than the U test. [ComparePaired] compares the pairs on log(new/old)
// when every value is positive, else on new−old: [WilcoxonSignedRank] on
// those differences decides (below 50 non-zero pairs the exact
// distribution of the signed mid-ranks, so ties are exact; above, the
// normal approximation with the variance of the mid-ranks themselves and
// a continuity correction), [SignTest] is shown beside it, and
// [WalshMedian] gives the Hodges-Lehmann estimate of the median
// difference — the median of the Walsh averages (dᵢ+dⱼ)/2 — with the
// interval that inverts the signed-rank test, reported as a relative
// change. The test, the sign test and the estimate use the same
// differences: those that are not numbers (NaN, ±Inf) are left out of
// all three, with a warning; zeros stay in all three (the test ranks them
// with the rest and counts them on neither side, Pratt's treatment, as
// the estimate averages them in). Six pairs that all agree are the fewest
// that reach p ≤ 0.05 and a 95% interval ([PairsToDetect]).
//
// The verdict is sized by power, not cut on the point estimate: a change
// when the signed-rank test finds one (p ≤ Alpha), however small its
// estimate (its interval says how large); otherwise "~" where the
// comparison would have found a change of MinEffect, the smallest worth
// finding, with 80% power, and "not decided" where it would not. The
// detectable change is sized from the pairs' own spread: (t₁₋α/₂ +
// t₀.₈)·s/√(n·3/π), 3/π the signed-rank test's efficiency against the t
// test under normal noise ([DetectableShift]). A cut "p ≤ 0.05 and an
// estimate of at least 1%" finds a true change of exactly 1% at most half
// the time, however quiet the machine.
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
// Some measures repeat to within a tiny noise (lock calls and
// instructions per request), so a change worth finding is far larger than
// the noise and one or two passes decide. [ExactRule.Compare] tests the
// difference of the two means against the smallest change worth finding,
// the floor max(ExactFloor of the old mean, the rule's Allowance): a
// change when |difference| > floor + t·SE, SE the standard error of the
// difference from the samples' pooled standard deviation, never less than
// the noise the rule assumes (all there is with one value a side, with
// the normal quantile for t). Its tolerance shrinks towards the floor as
// passes are added, so its power grows with them; a true change at the
// floor is called with probability at most Alpha/2, and no change, where
// the noise is at most the assumed one, with a probability the floor's
// many standard errors make negligible. [CompareExact] is the rule with
// no allowance and no assumed noise. (A rule by the samples' ranges —
// apart, and the medians further apart than the wider range — weakens as
// passes are added, the range growing with n.)
package benchstat
