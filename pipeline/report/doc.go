// Package report owns patchproof's report: the Markdown summary of one or
// more Results (one per target or CI job) for summary.md,
// $GITHUB_STEP_SUMMARY and the pull request's comment, and publishing it
// there, with a commit status on the head commit that was validated.
//
// A target's part of the report is a walk over the ordered list of its
// checks, results.TargetResult.Checks (section.go): each check's result,
// in its verify package, gives its line of the target's verdict block
// (the reviewer's question it answers, by number), its sections
// (Section), its rows of "What moved" and the artifacts it tells of, so
// that a check is added without the report naming it.
//
// It reads Results only, so a results.json written by another job renders
// the same as the run in hand, and the output depends on nothing else (no
// clock, no map order): the golden tests check it byte for byte. The verdict
// it renders is results.VerdictOf (results.Expecting when the targets are
// named), the one that decides the exit code; a run that did not finish
// renders as incomplete, never as passed.
package report
