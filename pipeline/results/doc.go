// Package results owns results.json: the Result of a run and the parts of
// it that no check's package owns (the commits, the backports), the
// stages' names, the statuses, the verdict that decides the exit code, and
// the errors that carry a check's failure or bad input. Each check's part
// of a target is its verify package's Result, which TargetResult holds
// and lists for the report (Checks); the builds are builders'.
//
// A Result is written by one run and read back by the report, possibly
// several merged (one per CI job), so its field names are a published
// interface: add fields, never rename them. The verdict is computed from a
// Result alone, so the report of a results.json read from disk says the same
// as the run that wrote it; one left by a run that died (a stage pending or
// running) is incomplete, and CheckMerge refuses to merge Results of
// different pull requests, repositories or head commits.
package results
