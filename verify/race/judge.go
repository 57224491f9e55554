package race

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Target is one target's Result, named as the run names the target.
type Target struct {
	Name   string
	Result *Result
}

// Judge applies every failing rule of the check to every target, once its
// parts are measured. Base's counters losing updates, or the database
// server counting other work than the requests did, means the check is
// broken: Judge records that in the Result's Errors (results.json and the
// report show it there, after what could not be measured). A target with
// Errors makes a plain error: the check could not judge it, and that wins
// over any failure. Otherwise every finding against head (its counters not
// exact, its PHP crashing where base's did not, a new race in the change's
// code) makes one verdict.CheckFailed for all targets; nil is a pass. Each
// line of the message names its target. A nil Result is a target the
// check did not run on. Judge may be called again: it records each error
// once.
func Judge(targets []Target) error {
	var errs, failed []string
	for _, t := range targets {
		r := t.Result
		if r == nil {
			continue
		}
		switch err := judge(r); {
		case errors.Is(err, verdict.ErrCheckFailed):
			failed = append(failed, named(t.Name, r.Findings())...)
		case err != nil:
			errs = append(errs, named(t.Name, r.Errors)...)
		}
	}
	return verdict.Judged(errs, failed, unsafePrefix)
}

// judge applies the rules to one target: a plain error where r has
// Errors, once what breaks its counters is recorded there, else its
// findings' failure, else nil.
func judge(r *Result) error {
	r.recordBroken()
	return verdict.Judged(r.Errors, r.Findings(), unsafePrefix)
}

// recordBroken adds to r.Errors, once each, what makes its counters unable
// to judge head.
func (r *Result) recordBroken() {
	for _, e := range r.broken() {
		if !slices.Contains(r.Errors, e) {
			r.Errors = append(r.Errors, e)
		}
	}
}

// named prefixes each of a target's lines with its name.
func named(target string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = target + ": " + l
	}
	return out
}

// unsafePrefix begins the check's failure, before its findings.
const unsafePrefix = "not safe under concurrency: "

// broken is what makes r's counters unable to judge head.
func (r *Result) broken() []string {
	var errs []string
	for _, c := range r.Counters {
		switch {
		case c.Check.Exact() && c.Side == side.Head && c.Check.OneCPU():
			// Exact proves nothing here; lost updates on one CPU still
			// fail head (Findings).
			errs = append(errs, c.Name()+": "+oneCPUText)
		case c.Check.Exact():
		case c.Check.WorkError != "":
			errs = append(errs, fmt.Sprintf("%s: %s", c.Name(), c.Check.WorkError))
		case c.Side == side.Base:
			// The mutex guards base's counters: if they came out wrong, the
			// check is what is broken, and head's numbers prove nothing.
			errs = append(errs, fmt.Sprintf("%s: %s although base takes the statistics mutex: the check cannot judge head here", c.Name(), c.Check))
		}
	}
	return errs
}

// Findings are what fails head, one line each; a Result with Errors has
// its findings shown but not judged (Judge).
func (r *Result) Findings() []string {
	var failed []string
	for _, c := range r.Counters {
		if c.Side == side.Head && !c.Check.Exact() && c.Check.WorkError == "" {
			failed = append(failed, fmt.Sprintf("%s: %s", c.Name(), c.Check))
		}
	}
	if r.HeadCrashed() {
		signals, _ := r.ChildSignals(side.Head)
		failed = append(failed, fmt.Sprintf("head's PHP crashed in Apache's child (%s) where base's did not", strings.Join(signals, ", ")))
	}
	if r.TSan != nil {
		if n := len(r.TSan.Diff.New); n > 0 {
			failed = append(failed, fmt.Sprintf("ThreadSanitizer: %s in the change's code, first %s", plural(n, "new data race report", "new data race reports"), r.TSan.Diff.New[0].Summary))
		}
	}
	return failed
}

// String is the counter run's verdict in one line, as the stage's progress
// and the check's messages say it.
func (c CounterCheck) String() string {
	if c.Exact() {
		return fmt.Sprintf("%d/%d counters exact, 0 updates lost in %d requests%s", c.Counters, c.Counters, c.Requests, c.onCPUs())
	}
	var names []string
	for i, o := range c.Off {
		if i == 3 {
			names = append(names, "…")
			break
		}
		if o.Gauge() {
			names = append(names, fmt.Sprintf("gauge %s off by %+d", o.Name, o.Got-o.Expected))
			continue
		}
		names = append(names, fmt.Sprintf("%s %d of %d", o.Name, o.Got, o.Expected))
	}
	return fmt.Sprintf("%s off in %d requests%s, %d short in all (%s)", plural(len(c.Off), "counter", "counters"), c.Requests, c.onCPUs(), c.Lost, strings.Join(names, ", "))
}

// onCPUs is " on N CPUs", "" when unknown.
func (c CounterCheck) onCPUs() string {
	if c.CPUs == 0 {
		return ""
	}
	return " on " + plural(c.CPUs, "CPU", "CPUs")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
