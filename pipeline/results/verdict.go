package results

import "strings"

// Verdict is the outcome of one or more runs: the report's headline, the
// commit status and the exit status.
type Verdict struct {
	Status Status // StatusPassed, StatusFailed or StatusError
	Reason string // what failed or could not run; "" when passed
}

// ExitCode is patchproof's exit status for v: 0 passed, 1 a check failed,
// 2 could not run.
func (v Verdict) ExitCode() int { return severity(v.Status) }

// severity orders statuses for merging, and is the exit status: could not
// run is worse than a failed check, which is worse than a pass.
func severity(s Status) int {
	switch s {
	case StatusPassed:
		return 0
	case StatusFailed:
		return 1
	}
	return 2
}

// StageVerdict is a run's verdict from its stages: a stage that could not
// run makes it an error, else a failed check a failure. A stage still
// running (the report, while it renders) does not count, so the report
// renders the verdict the run ends with.
func StageVerdict(stages []*StageResult) Verdict {
	var failed, errored []string
	for _, s := range stages {
		switch s.Status {
		case StatusFailed:
			failed = append(failed, s.Name)
		case StatusError:
			errored = append(errored, s.Name+": "+s.Error)
		}
	}
	switch {
	case len(errored) > 0:
		return Verdict{StatusError, strings.Join(errored, "; ")}
	case len(failed) > 0:
		return Verdict{StatusFailed, "checks failed: " + strings.Join(failed, ", ")}
	}
	return Verdict{Status: StatusPassed}
}

// verdict is one Result's verdict: its final status once the run has
// finished, else what its stages say so far.
func (r *Result) verdict() Verdict {
	switch r.Status {
	case StatusPassed, StatusFailed, StatusError:
		return Verdict{r.Status, r.Error}
	}
	return StageVerdict(r.Stages)
}

// VerdictOf is the verdict of results taken together: the worst of each
// one's, with the reasons of those that are that bad.
func VerdictOf(rs []*Result) Verdict {
	if len(rs) == 0 {
		return Verdict{StatusError, "no results"}
	}
	worst := Verdict{Status: StatusPassed}
	var reasons []string
	for _, res := range rs {
		v := res.verdict()
		if severity(v.Status) > severity(worst.Status) {
			worst.Status, reasons = v.Status, nil
		}
		if v.Status == worst.Status && v.Reason != "" {
			if len(rs) > 1 {
				v.Reason = JobName(res) + ": " + v.Reason
			}
			reasons = append(reasons, v.Reason)
		}
	}
	worst.Reason = strings.Join(reasons, "; ")
	return worst
}
