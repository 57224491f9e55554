// Package bench is the contention benchmark check's one home: its part of
// results.json ([Result], what workloads/bench measured), the rules that
// fail a run ([Judge]), and its report: the overview's cell
// ([Result.Cell]) and the target's "Contention benchmark" section
// ([Result.WriteSection]).
//
// workloads/bench runs the benchmark and computes each measure's
// statistics with verify/benchstat: medians with intervals, the cost of
// statistics in each build, head's cost against base's, each with its
// verdict.Change. This package decides which of those fail the run, and
// says so:
//
//   - an exact measure (lock calls, the statistics mutex's calls,
//     instructions per request) whose cost of statistics is worse in head
//     than in base, judged by its spread. The noisy ones (CPU time,
//     throughput) are shown with their intervals and never gate: a shared
//     machine's load moves them;
//   - head's PHP crashing in its servers more than base's: in any of them
//     where base's never crashed, or in a share of them that Fisher's
//     exact test (one-sided, p ≤ 0.01) finds larger than base's, since a
//     crash base has now and then does not hide one head has always.
//
// The check's words are verify/verdict's: a Judge that fails returns a
// *verdict.CheckError naming what regressed, and a change renders as
// verdict.Change does ("~" for no significant change in the tables).
package bench
