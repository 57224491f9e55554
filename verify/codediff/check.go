package codediff

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/verify/verdict"
)

// Result is the machine-code check of one target: its part of results.json
// (the target's "codediff"). Its field names are published: add fields,
// never rename them.
type Result struct {
	// NTS is the verdict-bearing comparison: with --expect-nts-noop, any
	// changed, added or removed function fails the run.
	NTS *Report `json:"nts,omitempty"`
	// ZTS is information: which functions the change touches under ZTS.
	ZTS           *Report  `json:"zts,omitempty"`
	ExpectNTSNoop bool     `json:"expect_nts_noop"`
	Errors        []string `json:"errors,omitempty"`
	// Rejected are the variants head's objects kept from being compared
	// (ErrHeadRejected): an object beyond the bounds they are read
	// within, or one that crashed the confined parser. Each fails the
	// target, no-op expected or not: the change's build made them, and a
	// comparison it prevents must not read as a pass.
	Rejected []string `json:"rejected,omitempty"`
}

// Target is one target's Result, named as the run names the target.
type Target struct {
	Name   string
	Result *Result
}

// Judge applies the machine-code check's rules to every target: a target
// that could not be compared is an error (the check could not judge it);
// one whose head's objects were rejected is a failure (a
// *verdict.CheckError), and so, when a no-op was expected, is an NTS
// function that head changed, added or removed. An error wins over a
// failure: a target that could not be compared leaves the run unjudged
// whatever the others say. A nil Result is a target the check did not run
// on.
func Judge(targets []Target) error {
	var failures, errs []string
	for _, t := range targets {
		r := t.Result
		if r == nil {
			continue
		}
		for _, e := range r.Errors {
			errs = append(errs, t.Name+": "+e)
		}
		for _, e := range r.Rejected {
			failures = append(failures, t.Name+": "+e)
		}
		if r.ExpectNTSNoop && r.NTS != nil && !r.NTS.AllIdentical() {
			failures = append(failures, fmt.Sprintf("%s: NTS machine code changed: %s", t.Name, changedNames(r.NTS)))
		}
	}
	return verdict.Judged(errs, failures, "")
}

// maxNamed caps the functions a failure's message names.
const maxNamed = 10

// changedNames lists what differs, as object:function, added ones with a
// "+" and removed ones with a "-".
func changedNames(r *Report) string {
	var names []string
	for _, c := range r.Changed {
		names = append(names, c.Object+":"+c.Name)
	}
	for _, a := range r.Added {
		names = append(names, "+"+a.Object+":"+a.Name)
	}
	for _, d := range r.Removed {
		names = append(names, "-"+d.Object+":"+d.Name)
	}
	if len(names) > maxNamed {
		names = append(names[:maxNamed], fmt.Sprintf("and %d more", len(names)-maxNamed))
	}
	return strings.Join(names, ", ")
}
