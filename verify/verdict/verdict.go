// Package verdict is the one vocabulary every check speaks: the status of a
// stage or a run (passed, failed, could not run, did not finish…), the
// change a comparison of base and head concludes (improved, regressed, no
// change, not decided), and the error a check returns when it fails or
// could not run. Each has one rendering, so that a word means the same in
// every section of the report, in results.json and on the commit status.
// It also names the shapes of a check's part of the report: its Section,
// the rows it gives "What moved" (Move) and the files it tells of
// (Artifact).
package verdict

import (
	"errors"
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/benchstat"
)

// Status is the outcome of a run or a stage, as results.json spells it.
type Status string

const (
	Running      Status = "running"
	Passed       Status = "passed"
	Failed       Status = "failed"  // ran, and a check failed
	Error        Status = "error"   // could not run
	Skipped      Status = "skipped" // not selected, or nothing to do
	NotAvailable Status = "not-available"
	// Pending is a stage not started yet: every stage is recorded so when
	// the run begins, so that a run that dies leaves its stages pending,
	// never "skipped" as if a stage had had nothing to do.
	Pending Status = "pending"
	// Interrupted is a stage cut short by SIGINT or SIGTERM.
	Interrupted Status = "interrupted"
	// Incomplete is a run that did not finish: interrupted, or read back
	// while (or after) it died. It never reads as passed.
	Incomplete Status = "incomplete"
)

// Statuses lists every status this version writes, in the order of the
// schema's enum.
var Statuses = []Status{Running, Passed, Failed, Error, Skipped, NotAvailable, Pending, Interrupted, Incomplete}

// Icon is the status's icon, so that a verdict reads at a glance.
func (s Status) Icon() string {
	switch s {
	case Passed:
		return "✅"
	case Failed:
		return "❌"
	case Error:
		return "⚠️"
	case Skipped:
		return "⏭️"
	case NotAvailable:
		return "➖"
	case Running:
		return "⏳"
	case Pending:
		return "⏸️"
	case Interrupted, Incomplete:
		return "⏹️"
	}
	return "❔"
}

// The marks of what is neither a status nor a change: a warning, what a
// reviewer must know though it gates nothing (a break under --abi warn,
// a crash chance could explain), and information, a finding the rules do
// not judge (a break on a branch that is not stable, NTS machine code
// that changed where no no-op was expected).
const (
	WarningIcon     = "⚠️"
	InformationIcon = "ℹ️"
)

// Change is what a comparison of head with base (or of one arm with
// another) concludes about a measure, as results.json spells it; "" where
// nothing was compared. The statistics that decide it own the word
// (internal/benchstat); every check says it through this name.
type Change = benchstat.Change

const (
	Improved   = benchstat.Improved
	Regressed  = benchstat.Regressed
	NoChange   = benchstat.NoChange
	NotDecided = benchstat.NotDecided
	NotJudged  = benchstat.NotJudged
)

// Changes lists every change this version writes.
var Changes = benchstat.Changes

// ErrCheckFailed is what every failed check's error is (errors.Is): the
// pipeline ran but a check did not pass (a test regression, changed NTS
// machine code where a no-op was expected, a benchmark regression). It maps
// to exit status 1; every other error means patchproof could not run (exit
// status 2).
var ErrCheckFailed = errors.New("check failed")

// CheckError is a check that did not pass. Message says what failed, in
// one line; the stage's Message is taken from it.
type CheckError struct {
	Message string
}

// CheckFailed returns a *CheckError with the formatted message.
func CheckFailed(format string, a ...any) error {
	return &CheckError{Message: fmt.Sprintf(format, a...)}
}

func (e *CheckError) Error() string { return e.Message + ": " + ErrCheckFailed.Error() }

// Is makes a *CheckError an ErrCheckFailed.
func (e *CheckError) Is(target error) bool { return target == ErrCheckFailed }

// CouldNotRun is the error of a check or stage that could not run some of
// its parts (a target not compared, a build's suites not run, a run that
// did not exercise the server), each part's message on one line; nil when
// every part ran. It is never an ErrCheckFailed: what could not run makes
// the check an error (exit status 2), whatever the other parts found, so a
// Judge returns it before its failures.
func CouldNotRun(msgs []string) error {
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Judged is a check's verdict over its targets, once they are judged: the
// error of the parts that could not run (CouldNotRun(errs)), which wins;
// else one failure (a *CheckError) of every failing part, its message
// prefix followed by the parts' lines; else nil, a pass.
func Judged(errs, failures []string, prefix string) error {
	if err := CouldNotRun(errs); err != nil {
		return err
	}
	if len(failures) == 0 {
		return nil
	}
	return CheckFailed("%s%s", prefix, strings.Join(failures, "; "))
}
