// Package bench is the contention benchmark check's one home: its part of
// results.json ([Result], what workloads/bench measured), the rules that
// fail a run ([Judge]), and its report: its line of the verdict block
// ([Result.Cell]) and the target's "Contention benchmark" section
// ([Result.WriteSection]).
//
// workloads/bench runs the benchmark and computes each measure's
// statistics with internal/benchstat: medians with intervals, the cost of
// statistics in each build, head against base in each arm and of their
// costs, each with its verdict.Change. This package decides which of those
// fail the run, and says where and by how much:
//
//   - an exact measure (lock calls, the statistics mutex's calls,
//     instructions per request) in which head is worse than base with
//     statistics off, with them on, or in the cost of statistics, judged
//     by benchstat.ExactRule (lock calls on differences, with an
//     allowance of 0.5 calls a request; their shared and per-thread parts
//     are shown, not judged). The noisy ones (CPU time, throughput) are
//     shown with their intervals and what they could detect, and never
//     gate: a shared machine's load moves them;
//   - head's PHP crashing in a larger share of its servers than base's:
//     Fisher's exact test, one-sided, p ≤ 0.01, whether or not base's
//     ever crashed (one crash in 42 servers where base had none is p =
//     0.5: chance could put it there). A crash that does not gate is
//     still shown, in the cell and the section.
//
// The check's words are verify/verdict's: a Judge that fails returns a
// *verdict.CheckError naming what regressed, and a change renders as
// verdict.Change does ("~" for no significant change in the tables).
package bench
