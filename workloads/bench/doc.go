// Package bench runs the contention benchmark: how much mysqlnd's
// statistics cost a threaded PHP server, in the base build and in the head
// build, measured so that the answer holds on a noisy shared machine and is
// decisive on a quiet one.
//
// It measures and summarises; it does not judge. Which of its verdicts
// fail a run (an exact measure that regressed, head's PHP crashing more
// often than base's), the verdict block's line and the report's section are
// verify/bench's, the benchmark check's one home, which holds this
// package's [Result] as its part of results.json. Nothing here imports
// verify/bench.
//
// # Protocol
//
// [Run] measures four arms — base and head, each with
// mysqlnd.collect_statistics on and off. Every server is Apache mpm_event
// (workloads/httpd), one process of Options.Threads PHP threads, one
// persistent PDO connection per thread, serving the workload's data
// (workloads/select20 by default, the report's), with the build's OPcache
// where the build has one (production's settings, scripts compiled once:
// Settings.OPcache says which, or why not). Pass p runs the arms in a
// balanced order (a build's on and off back to back, which goes first
// alternating from pass to pass; see balancedOrder).
//
//  1. Counted passes (Options.CountedPasses, 1 quick, 2 report), each
//     measure of an arm on a fresh server:
//     - Locks: the LD_PRELOAD counter of workloads/lockcount over exactly
//     Options.LockRequests requests after a warm-up: pthread_mutex_lock
//     calls per request, split between mutexes more than one thread
//     locks (shared: where threads contend) and those one thread only
//     locks, and the calls on mysqlnd's global statistics mutex — named
//     for certain, not by rank: the mutex whose address is a word of the
//     heap block mysqlnd_global_stats points to, read from the server's
//     memory before it stops (lockcount.NameHeld). Exact and repeatable.
//     - Instructions: the server under callgrind (apache2 -X), counted over
//     exactly Options.CallgrindRequests requests between marker requests
//     (workloads/callgrind). Repeatable to a fraction of a percent.
//  2. The CPU block: Options.Passes short windows per arm (40 of 1 s quick,
//     30 of 2 s report) in the balanced order, so that a pass's on and off
//     windows are seconds apart, on warm servers, one per arm (each in a
//     cgroup of its own, without address space randomisation, warmed with
//     wrk), replaced by fresh ones every Options.PassesPerServer passes. Per window: the server's CPU time (cgroup v2,
//     container cgroup, or /proc: Result.CPUSource) in user and system
//     mode, its threads' context switches, the machine's steal and CPU
//     pressure, divided by the requests; with req/s and latency. A window
//     that lost more than 5% of the machine to steal is flagged.
//  3. Profiles: on the block's warm servers, a perf profile (cpu-clock) of
//     each arm under load: the top symbols, the share in lock functions,
//     a flame graph (workloads/perfprof).
//  4. The sweep: with Options.Sweep, a CPU block of its own at each other
//     thread count, for the scaling table and chart, of the fewest passes
//     that can decide the cost there (6 servers of 2 passes, of 1 s quick,
//     3 s report); a sweep given fewer is not run, and a warning says so.
//
// On a machine of 4 CPUs or fewer, with no CPU list given, the server is
// pinned to the upper half of the CPUs and wrk and the database to the
// rest (Settings.Pinning says so): unpinned, they trade CPUs from window
// to window and that noise hides a cost of a few percent. On one CPU the
// server's threads never run at once, so the cost measured is that of
// locking, not of contention between CPUs.
//
// Any non-2xx response or socket error ends the run with an error and the
// samples so far. So does a window in which fewer requests completed.
//
// # Statistics
//
// Per measure (lock calls in all, on shared and on per-thread mutexes and
// on the statistics mutex; instructions; CPU time in all, in user and in
// system mode; voluntary and involuntary context switches; req/s), with
// internal/benchstat, the arms paired by pass: each arm's median and
// confidence interval; the cost of statistics in each build, on against
// off; head against base with statistics off, with them on
// (MeasureStats.HeadVsBaseArms) and of their costs (HeadVsBase); and a
// verdict (a benchstat.Change) under the thresholds the Result records. The
// measure's Verdict is regressed where head is worse than base in either
// arm or in its cost: a head 2% slower in both arms has base's cost and
// one 2% slower only with statistics off a smaller one, and both are
// regressions. Result.Analyse computes it all again from the samples.
//
// Lock calls and instructions are exact or nearly so, and are judged by
// benchstat.ExactRule: a difference of the means counts when it exceeds
// the smallest change worth finding, max(0.5% of the old mean, 0.5 lock
// calls a request for lock calls), by more than Student's t times its
// standard error: the noise pooled from the counted passes, never less
// than the noise the rule assumes of one pass (LockNoise calls a request,
// InstructionNoise of the instructions), which is all one pass has. So
// its power grows with passes, and a true change at the floor is called
// at most 2.5% of the time. Lock calls are judged on differences (calls a
// request), head's cost against base's too: a ratio over the off arm's
// six calls moves with a tenth of one. Their shared and per-thread parts
// are shown against base, not judged: parts of the total, one noisy
// denominator would fail three measures for one.
//
// CPU time, context switches and req/s are noisy. The passes of one round
// of servers share its servers' offsets, so they are averaged into one
// pair (byServer): the server is the unit, n = Passes/PassesPerServer. A
// cost or a change is decided by the Wilcoxon signed-rank test on the
// servers' log(on/off) or log(head/base), with the sign test beside it
// and the Hodges-Lehmann estimate with its interval; the verdict is sized
// by power: a change when p ≤ 0.05, whatever its estimate; "~" where the
// test would have found 1% (the minimum effect) with 80% power, and "not
// decided" where it would not. What it could detect is reported beside
// every verdict (CostStats.Detectable, Comparison.Detectable). Head
// against base is given a verdict for CPU time only: what explains it
// (user and system time, switches, req/s) is shown with its interval,
// "not judged", because a verdict on each of six noisy measures is a
// false one somewhere in about a run of four. The unpaired Mann-Whitney
// p-values, which benchstat shows, are kept in the Result and decide
// nothing. Too few passes for a confidence level or a significant test is
// a warning in the Result, not an error.
//
// # Output
//
// The [Result] (JSON, inline in verify/bench's part of results.json),
// bench.json (the same) and bench.txt (Result.WriteBenchTxt: the samples
// in the Go benchmark format, which benchstat reads unchanged), sweep.svg
// (the scaling chart, [Result.ScalingChart]) and profile/ARM/ (perf.data,
// folded stacks, flamegraph.svg) in Options.Dir. What the pull request
// comment shows of them verify/bench renders.
//
// Apache's event MPM closes kept-alive connections while no worker thread
// is idle, so every mode loads the server with fewer connections than
// threads (the report 3/4 of them, quick half) and keeps them alive; given
// at least as many connections as threads (a sweep's single thread), the
// CPU windows turn keep-alive off (Options.KeepAlive) and the Result says
// so. The counted windows keep fewer requests in flight than there are
// threads.
//
// [Options.AA] measures base against itself as if it were head: repeated
// (scripts/bench-repeat --aa), it gives the rate of false verdicts.
package bench
