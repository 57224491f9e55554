package suites

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/verify/verdict"
	"github.com/patchproof/patchproof/workloads/phptests"
)

// Result is the test-suite check of one target: its part of results.json
// (the target's "tests"): every build's runs, and base vs head per
// variant. Its field names are published: add fields, never rename them.
type Result struct {
	Runs        []*RunResult         `json:"runs"`
	Comparisons []*VariantComparison `json:"comparisons"`
	Server      string               `json:"server"` // what the suites ran against
	Errors      []string             `json:"errors,omitempty"`
}

// VariantComparison is base vs head of one variant.
type VariantComparison struct {
	Variant    string     `json:"variant"` // the builds' variant: "nts", "zts"
	Comparison Comparison `json:"comparison"`
}

// Regressed reports whether any variant's comparison has a regression.
func (r *Result) Regressed() bool {
	for _, vc := range r.Comparisons {
		if vc.Comparison.Regressed() {
			return true
		}
	}
	return false
}

// Target is one target's Result, named as the run names the target.
type Target struct {
	Name   string
	Result *Result
}

// Judge applies the test-suite check's rules to every target. It could
// not judge (a plain error) where a build's suites could not be run or
// re-run, or where a run did not really exercise the server (Guard): a
// "no regression" from such a run would be a false pass. Otherwise a test
// that regressed from base to head, confirmed by its re-runs, fails the
// check (a *verdict.CheckError). A nil Result is a target the check did
// not run on.
func Judge(targets []Target) error {
	var errs, infra, regressions []string
	for _, t := range targets {
		r := t.Result
		if r == nil {
			continue
		}
		errs = append(errs, r.Errors...)
		for _, run := range r.Runs {
			if err := phptests.Guard(run, phptests.GuardOptions{}); err != nil {
				infra = append(infra, err.Error())
			}
		}
		for _, vc := range r.Comparisons {
			for _, reg := range vc.Comparison.Regressions {
				regressions = append(regressions, fmt.Sprintf("%s %s: %s", t.Name, vc.Variant, reg.Test))
			}
		}
	}
	if err := verdict.CouldNotRun(errs); err != nil {
		return err
	}
	if err := verdict.CouldNotRun(infra); err != nil {
		return err
	}
	if len(regressions) > 0 {
		return verdict.CheckFailed("%d tests regressed: %s", len(regressions), strings.Join(regressions, ", "))
	}
	return nil
}
