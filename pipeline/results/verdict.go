package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Verdict is the outcome of one or more runs: the report's headline, the
// commit status and the exit status.
type Verdict struct {
	Status Status // StatusPassed, StatusFailed, StatusError or StatusIncomplete
	Reason string // what failed, could not run or did not finish; "" when passed
	// Unfinished lists what did not finish when Status is
	// StatusIncomplete, one entry each: "tests: running", "bench: not
	// started", "PHP-8.4: no results".
	Unfinished []Unfinished
	// NothingChecked is set with StatusError when that is all there is to
	// it: every run finished, none failed or could not run, and not one
	// check ran (only the checkout, or every check skipped).
	NothingChecked bool
}

// NothingCheckedReason is the Reason of a verdict of NothingChecked.
const NothingCheckedReason = "nothing was checked"

// nothingChecked is the verdict of a run whose stages all finished and
// none failed, but that checked nothing. It is no pass, which a reviewer
// would read as the change validated, and exits 2 rather than 1: no check
// failed, the run did not do its job, as one that could not run.
var nothingChecked = Verdict{Status: StatusError, Reason: NothingCheckedReason, NothingChecked: true}

// legacyReportStage is the stage a results.json written before the report
// became the run's last step records for it.
const legacyReportStage = "report"

// IsCheck reports whether the stage checks the change: the checkout does
// not, nor the report of an older results.json.
func (s *StageResult) IsCheck() bool { return s.Name != StageCheckout && s.Name != legacyReportStage }

// checkedNothing reports whether stages, none of which failed or could
// not run, include no check that ran.
func checkedNothing(stages []*StageResult) bool {
	for _, s := range stages {
		switch {
		case s.Status == StatusFailed, s.Status == StatusError:
			return false
		case s.IsCheck() && s.Status == StatusPassed:
			return false
		}
	}
	return true
}

// Unfinished is a part of a run that did not finish: a stage, a target
// whose job left no results, or the run itself.
type Unfinished struct {
	Job    string // the job it is part of, among several Results; "" for one
	Name   string // the stage ("tests"), the target ("PHP-8.4") or "the run"
	Status Status // StatusRunning, StatusInterrupted, StatusPending (never started, missing), or what the file says
	Note   string // "running", "not started (cancelled)", "missing", "no results"
}

func (u Unfinished) String() string {
	s := u.Name + ": " + u.Note
	if u.Job != "" {
		s = u.Job + ": " + s
	}
	return s
}

// ExitCode is patchproof's exit status for v: 0 passed, 1 a check failed,
// 2 could not run or did not finish.
func (v Verdict) ExitCode() int { return min(severity(v.Status), 2) }

// severity orders statuses for merging: a run that did not finish says
// least of all, so it is worst; could not run is worse than a failed
// check, which is worse than a pass.
func severity(s Status) int {
	switch s {
	case StatusPassed:
		return 0
	case StatusFailed:
		return 1
	case StatusError:
		return 2
	}
	return 3 // incomplete, or a status this version does not know
}

// final reports whether s is the status of a run that finished.
func final(s Status) bool {
	return s == StatusPassed || s == StatusFailed || s == StatusError
}

// StageVerdict is a run's verdict from its stages: a stage that did not
// finish (pending, running, interrupted, of an unknown status) makes it
// incomplete, else a stage that could not run an error, else a failed
// check a failure, else a run in which no check ran an error
// (NothingChecked).
func StageVerdict(stages []*StageResult) Verdict {
	var failed, errored []string
	var unfinished []Unfinished
	for _, s := range stages {
		if u, ok := s.unfinished(); ok {
			unfinished = append(unfinished, u)
			continue
		}
		switch s.Status {
		case StatusFailed:
			failed = append(failed, s.Name)
		case StatusError:
			errored = append(errored, s.Name+": "+s.Error)
		}
	}
	switch {
	case len(unfinished) > 0:
		return incomplete(unfinished)
	case len(errored) > 0:
		return Verdict{Status: StatusError, Reason: strings.Join(errored, "; ")}
	case len(failed) > 0:
		return Verdict{Status: StatusFailed, Reason: "checks failed: " + strings.Join(failed, ", ")}
	case checkedNothing(stages):
		return nothingChecked
	}
	return Verdict{Status: StatusPassed}
}

func incomplete(unfinished []Unfinished) Verdict {
	var parts []string
	for _, u := range unfinished {
		parts = append(parts, u.String())
	}
	return Verdict{Status: StatusIncomplete, Reason: "did not finish: " + strings.Join(parts, ", "), Unfinished: unfinished}
}

// unfinished says how s did not finish, and whether it did not.
func (s *StageResult) unfinished() (Unfinished, bool) {
	u := Unfinished{Name: s.Name, Status: s.Status}
	switch s.Status {
	case StatusPassed, StatusFailed, StatusError, StatusNotAvailable:
		return u, false
	case StatusSkipped:
		if s.Reason != "" {
			return u, false
		}
		// A real skip always says why; a reasonless one is how runs before
		// StatusPending pre-filled the stages they never reached.
		u.Status, u.Note = StatusPending, "not started"
	case StatusPending:
		u.Note = "not started"
		if s.Reason != "" {
			u.Note += " (" + s.Reason + ")"
		}
	case StatusRunning, StatusInterrupted:
		u.Note = string(s.Status)
	default:
		u.Note = fmt.Sprintf("unknown status %q", s.Status)
	}
	return u, true
}

// Unfinished lists what did not finish in r, one entry each: every stage
// pending, running, interrupted or of an unknown status, every stage the
// run selected that has no entry, and first the run itself when its
// status is not that of a finished run and it says why, or no stage says
// more. Empty when r is complete.
func (r *Result) Unfinished() []Unfinished {
	var out []Unfinished
	for _, s := range r.Stages {
		if u, ok := s.unfinished(); ok {
			out = append(out, u)
		}
	}
	for _, name := range r.Settings.Stages {
		if !slices.ContainsFunc(r.Stages, func(s *StageResult) bool { return s.Name == name }) {
			out = append(out, Unfinished{Name: name, Status: StatusPending, Note: "missing"})
		}
	}
	if len(r.Stages) == 0 {
		out = append(out, Unfinished{Name: theRun, Status: StatusPending, Note: "no stage recorded"})
	}
	if !final(r.Status) && (r.Error != "" || len(out) == 0) {
		// Why the run stopped ("interrupted") comes first.
		u := Unfinished{Name: theRun, Status: r.Status, Note: cmp.Or(r.Error, string(r.Status), "no status")}
		out = append([]Unfinished{u}, out...)
	}
	return out
}

// theRun names the run itself among what did not finish.
const theRun = "the run"

// verdict is one Result's verdict: incomplete when anything in it did not
// finish, else its final status; a pass that checked nothing (as runs
// before NothingChecked recorded one) is NothingChecked, and so is the
// error a run records for it.
func (r *Result) verdict() Verdict {
	if u := r.Unfinished(); len(u) > 0 {
		return incomplete(u)
	}
	if (r.Status == StatusPassed || r.Status == StatusError) && checkedNothing(r.Stages) {
		v := nothingChecked
		if r.Status == StatusError {
			v.Reason = cmp.Or(r.Error, v.Reason)
		}
		return v
	}
	return Verdict{Status: r.Status, Reason: r.Error}
}

// VerdictOf is the verdict of results taken together: the worst of each
// one's, with the reasons (and what did not finish) of those that are that
// bad, each named by its job when there are several. It is NothingChecked
// only when no result checked anything: one job that checked nothing
// beside others that did is an error of that job.
func VerdictOf(rs []*Result) Verdict {
	if len(rs) == 0 {
		return Verdict{Status: StatusError, Reason: "no results"}
	}
	worst := Verdict{Status: StatusPassed}
	var reasons []string
	nothing := true
	for _, res := range rs {
		v := res.verdict()
		nothing = nothing && v.NothingChecked
		if severity(v.Status) > severity(worst.Status) {
			worst.Status, reasons, worst.Unfinished = v.Status, nil, nil
		}
		if v.Status != worst.Status {
			continue
		}
		job := ""
		if len(rs) > 1 {
			job = JobName(res) + ": "
		}
		if v.Reason != "" {
			reasons = append(reasons, job+v.Reason)
		}
		for _, u := range v.Unfinished {
			if len(rs) > 1 {
				u.Job = JobName(res)
			}
			worst.Unfinished = append(worst.Unfinished, u)
		}
	}
	worst.Reason = strings.Join(reasons, "; ")
	worst.NothingChecked = nothing
	return worst
}

// Expecting is the verdict of rs when each target named in want must be
// among them: a target none has (the CI job of it left no results.json)
// makes the verdict incomplete.
func Expecting(rs []*Result, want []string) Verdict {
	v := VerdictOf(rs)
	var missing []Unfinished
	for _, name := range want {
		found := false
		for _, res := range rs {
			found = found || slices.ContainsFunc(res.Targets, func(t *TargetResult) bool { return t.Name == name })
		}
		if !found {
			missing = append(missing, Unfinished{Name: name, Status: StatusPending, Note: "no results"})
		}
	}
	if len(missing) == 0 {
		return v
	}
	if v.Status != StatusIncomplete {
		v.Unfinished = nil
	}
	return incomplete(append(v.Unfinished, missing...))
}
