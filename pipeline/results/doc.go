// Package results owns results.json: the Result of a run and the parts of
// it that no check's package owns (the builds, the backports, the
// concurrency check), the statuses, the verdict that decides the exit code,
// and the errors that carry a check's failure or bad input. The
// machine-code comparison and the test suites are verify/codediff's and
// verify/suites' Results, which TargetResult holds.
//
// A Result is written by one run and read back by the report, possibly
// several merged (one per CI job), so its field names are a published
// interface: add fields, never rename them. The verdict is computed from a
// Result alone, so the report of a results.json read from disk says the same
// as the run that wrote it; one left by a run that died (a stage pending or
// running) is incomplete, and CheckMerge refuses to merge Results of
// different pull requests, repositories or head commits.
package results
