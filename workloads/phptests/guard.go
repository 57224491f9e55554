package phptests

import (
	"fmt"
	"regexp"
	"strings"
)

// InfraError says that a run cannot be trusted: the tests did not really
// run, so a "no regression" from it would be a false pass. It is a failure
// of the infrastructure (exit status 2), not of the change.
type InfraError struct {
	Build  string
	Suite  string // "" for the whole run
	Reason string
}

func (e *InfraError) Error() string {
	where := e.Build
	if e.Suite != "" {
		where += " " + e.Suite
	}
	return fmt.Sprintf("test suites on %s did not really run: %s", where, e.Reason)
}

// GuardOptions tune Guard. The zero value works.
type GuardOptions struct {
	// MaxSkipFraction is the largest share of skipped tests a suite may have;
	// default 0.5. Healthy runs of PHP 8.2.32's suites against MariaDB skip
	// 8% (mysqli) and 4% (pdo_mysql).
	MaxSkipFraction float64
}

const defaultMaxSkipFraction = 0.5

// unreachable matches the skip reasons of tests that could not reach the
// database: mysqli's skipifconnectfailure.inc ("Can't connect to MySQL
// Server - [2002] ...") and ext/pdo's PDOTest::skip() ("SQLSTATE[HY000]
// [2002] Connection refused", "[1045] Access denied ...", "[1049] Unknown
// database ..."). Any one of them means the run's environment is broken,
// whatever the counts say.
var unreachable = regexp.MustCompile(`(?i)can't connect to mysql server|SQLSTATE\[\w+\] \[(1040|1044|1045|1049|1130|2002|2003|2005|2006|2013)\]`)

// Guard returns an *InfraError when a run did not really exercise the
// server: a suite ran no tests, skipped more than MaxSkipFraction of them,
// or skipped a test because the database could not be reached (the canary:
// connect.inc skips rather than fails when no server answers).
func Guard(r *RunResult, opt GuardOptions) error {
	max := opt.MaxSkipFraction
	if max == 0 {
		max = defaultMaxSkipFraction
	}
	if len(r.Suites) == 0 {
		return &InfraError{Build: r.Build, Reason: "no suite ran"}
	}
	for _, s := range r.Suites {
		if s.Counts.Total == 0 {
			return &InfraError{Build: r.Build, Suite: s.Suite, Reason: "no test ran"}
		}
		var canaries []string
		for _, t := range s.Tests {
			if t.Outcome == Skip && unreachable.MatchString(t.Reason) {
				canaries = append(canaries, t.Name+": "+t.Reason)
			}
		}
		if n := len(canaries); n > 0 {
			const show = 3
			more := ""
			if n > show {
				more = fmt.Sprintf(" (and %d more)", n-show)
				canaries = canaries[:show]
			}
			return &InfraError{Build: r.Build, Suite: s.Suite, Reason: fmt.Sprintf(
				"%d tests skipped because the database could not be reached: %s%s",
				n, strings.Join(canaries, "; "), more)}
		}
		if f := float64(s.Counts.Skip) / float64(s.Counts.Total); f > max {
			return &InfraError{Build: r.Build, Suite: s.Suite, Reason: fmt.Sprintf(
				"%d of %d tests skipped (%.0f%%, at most %.0f%% allowed)",
				s.Counts.Skip, s.Counts.Total, 100*f, 100*max)}
		}
	}
	return nil
}
