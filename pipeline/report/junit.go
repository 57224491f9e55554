package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/suites"
)

// The JUnit XML of the test-suite comparison, for CI systems that read test
// reports: one testsuite per target and variant (head's run, judged against
// base's), one testcase per test head ran, a failure per regression with
// its diff. A test that fails on base as on head is not head's failure: it
// is a skipped testcase that says so.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Skipped  int    `xml:"skipped,attr"`
	// Properties say what was compared: the commits, the builds, the
	// server. JUnit puts them before the cases.
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	List []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	// Time is head's run of the test, in seconds, as JUnit readers sum it.
	Time    string        `xml:"time,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	// FlakyFailure is Surefire's element for a test that failed in some of
	// its re-runs and passed in others: readers show it as flaky, not
	// failed.
	FlakyFailure []junitMessage `xml:"flakyFailure,omitempty"`
	// RerunFailure is Surefire's element for each re-run of a failed test
	// that failed again: a regression its re-runs confirmed.
	RerunFailure []junitMessage `xml:"rerunFailure,omitempty"`
	Skipped      *junitMessage  `xml:"skipped,omitempty"`
	SystemOut    string         `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the base-vs-head comparison of every target's suites.
// It writes nothing and returns false when no target compared its suites.
func WriteJUnit(w io.Writer, rs []*results.Result) (bool, error) {
	all := junitSuites{Name: "patchproof: base vs head"}
	for _, t := range results.SortedTargets(rs) {
		if t.Tests == nil {
			continue
		}
		for _, vc := range t.Tests.Comparisons {
			s := junitSuiteOf(t.TargetResult, vc)
			all.Suites = append(all.Suites, s)
			all.Tests += s.Tests
			all.Failures += s.Failures
			all.Skipped += s.Skipped
		}
	}
	if len(all.Suites) == 0 {
		return false, nil
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return true, err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return true, fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return true, err
}

func junitSuiteOf(t *results.TargetResult, vc *suites.VariantComparison) junitSuite {
	c, runs := vc.Comparison, t.Tests.Runs
	s := junitSuite{Name: fmt.Sprintf("%s %s: %s vs %s", t.Name, vc.Variant, c.Head, c.Base)}
	var props []junitProperty
	for _, p := range [][2]string{
		{"target", t.Name}, {"variant", vc.Variant},
		{"base.build", c.Base}, {"base.commit", t.Base.Commit},
		{"head.build", c.Head}, {"head.commit", t.Head.Commit},
		{"server", t.Tests.Server},
	} {
		if p[1] != "" {
			props = append(props, junitProperty{Name: p[0], Value: p[1]})
		}
	}
	s.Properties = &junitProperties{List: props}
	byKind := map[string]suites.Change{}
	for _, group := range [][]suites.Change{c.Regressions, c.Flakes, c.UnchangedFailures, c.Fixes, c.ChangedSkips, c.OnlyHead} {
		for _, ch := range group {
			if _, ok := byKind[ch.Test]; !ok {
				byKind[ch.Test] = ch
			}
		}
	}
	regressed, flaky := map[string]bool{}, map[string]bool{}
	for _, ch := range c.Regressions {
		regressed[ch.Test] = true
	}
	for _, ch := range c.Flakes {
		flaky[ch.Test] = true
	}
	var head *suites.RunResult
	for _, r := range runs {
		if r.Build == c.Head {
			head = r
		}
	}
	var names []string
	tests := map[string]suites.TestResult{}
	if head != nil {
		tests = head.ByName()
		for n := range tests {
			names = append(names, n)
		}
	}
	// A regression whose test head did not run at all is still a case.
	for n := range regressed {
		if _, ok := tests[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		tr, ran := tests[n]
		tc := junitCase{Name: n, Classname: classOf(n), Time: fmt.Sprintf("%.3f", tr.DurationSeconds)}
		ch, changed := byKind[n]
		switch {
		case regressed[n]:
			msg := fmt.Sprintf("regression: %s on base, %s on head", orNone(ch.Base), orNone(ch.Head))
			if ch.Reason != "" {
				msg += ": " + ch.Reason
			}
			tc.Failure = &junitMessage{Message: msg, Type: "regression", Text: ch.Diff}
			s.Failures++
			if len(ch.HeadRuns) > 1 {
				for i, o := range ch.HeadRuns[1:] {
					if o != suites.Pass {
						tc.RerunFailure = append(tc.RerunFailure, junitMessage{Message: fmt.Sprintf("head: %s again in re-run %d", o, i+1), Type: "regression"})
					}
				}
			}
		case flaky[n]:
			tc.SystemOut = fmt.Sprintf("flaky: differed between base and head, but its re-runs did not agree with themselves (base %v, head %v)", ch.BaseRuns, ch.HeadRuns)
			for _, o := range ch.HeadRuns {
				if o != suites.Pass {
					tc.FlakyFailure = append(tc.FlakyFailure, junitMessage{Message: fmt.Sprintf("head: %s in one of its runs", o), Type: "flaky"})
				}
			}
		case changed && ch.Kind == suites.UnchangedFailure:
			tc.Skipped = &junitMessage{Message: fmt.Sprintf("fails on base too (%s): not the change's", orNone(ch.Base))}
			s.Skipped++
		case ran && tr.Outcome == suites.Skip:
			tc.Skipped = &junitMessage{Message: tr.Reason}
			s.Skipped++
		case changed && ch.Kind == suites.Fix:
			tc.SystemOut = fmt.Sprintf("fixed: %s on base, %s on head", orNone(ch.Base), orNone(ch.Head))
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	return s
}

// classOf is the test's directory, as JUnit readers group by class.
func classOf(test string) string {
	if i := strings.LastIndex(test, "/"); i >= 0 {
		return strings.ReplaceAll(test[:i], "/", ".")
	}
	return test
}

func orNone(o suites.Outcome) string {
	if o == "" {
		return "not run"
	}
	return string(o)
}
