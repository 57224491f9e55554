package abi

import (
	"strings"

	"github.com/patchproof/patchproof/verify/verdict"
)

// The policies Judge records.
const (
	policyInformation = "information"
)

// Judge applies the check's rule to r: on a stable branch's target (stable)
// a change that breaks the ABI fails it under Fail with a
// *verdict.CheckError naming each break, and is a warning under Warn; on
// another branch, or under Off, nothing fails. A variant that could not be
// compared (r.Errors) is a plain error: the check could not run. Judge
// records in r.Policy what it made of the changes.
func Judge(r *Result, stable bool, mode Mode) error {
	if r == nil {
		return nil
	}
	switch {
	case mode == Off:
		r.Policy = string(Off)
	case !stable:
		r.Policy = policyInformation
	default:
		r.Policy = mode.String()
	}
	if err := verdict.CouldNotRun(r.Errors); err != nil {
		return err
	}
	if r.Policy != string(Fail) {
		return nil
	}
	if bs := r.Breaks(); len(bs) > 0 {
		return verdict.CheckFailed("the ABI of a stable branch changed: %s", strings.Join(bs, "; "))
	}
	return nil
}
