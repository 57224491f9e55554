// Package load drives HTTP load against the server under test and reads
// back what the load generator measured.
//
// [Run] runs wrk (threads, connections, a duration in whole seconds, an
// optional warm-up run whose numbers are discarded) in its own process
// group, killed when the context is done, with report.lua as its script:
// wrk's done() callback prints its figures as one JSON line (exact
// microseconds, bytes and counts, the latency percentiles 50 to 99.9),
// which Run reads into a [Result]; wrk's text report only goes to the log.
// A pass with any response that was not 2xx or 3xx, any socket error or no
// completed request is unusable for a benchmark: Run returns its Result
// with a [*PassError], which callers find with errors.As and report; every
// other error means wrk could not run.
//
// wrk counts requests over a time window, so it cannot make an exact number
// of them. [Fixed] sends exactly N requests over kept-alive connections and
// checks every status, for measurements that divide a count (lock calls,
// instructions) by the requests that caused it.
package load
