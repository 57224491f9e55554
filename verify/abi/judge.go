package abi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/verify/verdict"
)

// The policies Judge records.
const (
	policyInformation = "information"
)

// Target is one target's Result, named as the run names the target.
type Target struct {
	Name   string
	Result *Result
}

// Judge applies the check's rule to every target under mode: on a stable
// branch's target (Stable of its name) a change that breaks the ABI fails
// it under Fail with a *verdict.CheckError naming each break, and is a
// warning under Warn; on another branch, or under Off, nothing fails. A
// variant that could not be compared (Errors) is a plain error: the check
// could not run, and that wins over any failure. Each target's part of
// the error Judge returns is prefixed with its name, as every check's is
// (verdict.Judged). A variant head's build kept from being compared
// (Rejected) fails its target under every mode but Off. Judge records in each Result's Policy what it made of
// the changes. A nil Result is a target the check did not run on.
func Judge(targets []Target, mode Mode) error {
	var failed, broken []string
	for _, t := range targets {
		err := judge(t.Result, Stable(t.Name), mode)
		var ce *verdict.CheckError
		switch {
		case errors.As(err, &ce):
			failed = append(failed, t.Name+": "+ce.Message)
		case err != nil:
			broken = append(broken, fmt.Sprintf("%s: %v", t.Name, err))
		}
	}
	return verdict.Judged(broken, failed, "")
}

// judge applies the rule to one target's r, stable when its branch is.
func judge(r *Result, stable bool, mode Mode) error {
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
	var failed []string
	if len(r.Rejected) > 0 && r.Policy != string(Off) {
		failed = append(failed, strings.Join(r.Rejected, "; "))
	}
	if bs := r.Breaks(); len(bs) > 0 && r.Policy == string(Fail) {
		failed = append(failed, "the ABI of a stable branch changed: "+strings.Join(bs, "; "))
	}
	if len(failed) > 0 {
		return verdict.CheckFailed("%s", strings.Join(failed, "; "))
	}
	return nil
}
