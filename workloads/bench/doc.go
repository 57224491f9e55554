// Package bench owns the contention benchmark: how much mysqlnd's
// statistics cost a threaded PHP server, in the base build and in the head
// build, measured so that the answer holds on a noisy shared machine and is
// decisive on a quiet one.
//
// # Protocol
//
// [Run] measures four arms — base and head, each with
// mysqlnd.collect_statistics on and off — in Options.Passes passes. Each
// pass runs every arm once, in a balanced order (a build's on and off back
// to back, which goes first alternating from pass to pass), and
// each measure of an arm runs on a fresh server (workloads/httpd: Apache
// mpm_event, one process of Options.Threads PHP threads, one persistent PDO
// connection per thread) against the workload's data (workloads/select20 by
// default, the report's):
//
//  1. CPU: wrk's warm-up, then Options.Duration of wrk with
//     Options.Connections; the server's CPU time (from a cgroup v2 of its
//     own, else its processes' /proc/PID/stat: Result.CPUSource) divided by
//     the requests, with req/s and latency. Noisy: reported with its
//     spread, never a gate on a shared machine.
//  2. Locks: the LD_PRELOAD counter of workloads/lockcount over exactly
//     Options.LockRequests requests after a warm-up: pthread_mutex_lock
//     calls per request, distinct mutexes, and the calls on mysqlnd's
//     global statistics mutex — named for certain, not by rank: the mutex
//     whose address is a word of the heap block mysqlnd_global_stats
//     points to, read from the server's memory before it stops
//     (lockcount.NameHeld). Exact and repeatable.
//  3. Instructions: the server under callgrind (apache2 -X), counted over
//     exactly Options.CallgrindRequests requests between marker requests
//     (workloads/callgrind). Repeatable to a fraction of a percent.
//
// Any non-2xx response or socket error ends the run with an error and the
// samples so far. So does a window in which fewer requests completed.
//
// # Statistics
//
// Per measure (locks, statistics-mutex locks, instructions, CPU, req/s), with
// verify/benchstat, the arms paired by pass: each arm's median and
// confidence interval; the cost of statistics in each build, on against
// off; head's cost against base's; and a verdict — improved, regressed or
// no significant change — under the thresholds the Result records.
//
// Lock calls and instructions are exact or nearly so, and are judged as
// exact: a cost (off → on) or a change of it (base's per-pass costs →
// head's) counts when the two ranges do not overlap and the medians differ
// by more than max(0.5%, the wider range) — one or two passes suffice.
// CPU time and req/s are noisy: a cost is decided by the Wilcoxon
// signed-rank test on the per-pass log(on/off), with the sign test beside
// it and the Hodges-Lehmann estimate (median of the Walsh averages) with
// its interval as the cost; head against base by the same test on
// log(head's on/off ÷ base's on/off) of each pass. Both need 6 passes that
// agree to reach p ≤ 0.05. The unpaired Mann-Whitney p-values, which
// benchstat shows, are kept in the Result and decide nothing. Too few
// passes for a confidence level or a significant test is a warning in the
// Result, not an error.
//
// # Output
//
// The [Result] (JSON, part of results.json), bench.json (the same) and
// bench.txt (Result.WriteBenchTxt: the samples in the Go benchmark format,
// which benchstat reads unchanged) in Options.Dir, and
// [Result.Markdown] for the pull request comment.
//
// Apache's event MPM closes kept-alive connections while no worker thread
// is idle, so every mode loads the server with fewer connections than
// threads (the report 3/4 of them, quick half) and keeps them alive; given
// at least as many connections as threads, the CPU passes turn keep-alive
// off (Options.KeepAlive) and the Result says so. The counted windows keep
// fewer requests in flight than there are threads.
package bench
