package suites

import "testing"

// A known cause is given to a test that fails on both builds, and only to
// it: the same test failing on head alone is the change's regression.
func TestKnownCauses(t *testing.T) {
	const known = "ext/mysqli/tests/mysqli_report_new.phpt"
	for _, tc := range []struct {
		name       string
		test       string
		base, head Outcome
		kind       Kind
		wantCause  bool
	}{
		{"known, fails on both", known, Fail, Fail, UnchangedFailure, true},
		{"known, borks on both", known, Bork, Bork, UnchangedFailure, true},
		{"known, fails on head only", known, Pass, Fail, Regression, false},
		{"unknown, fails on both", "ext/mysqli/tests/other.phpt", Fail, Fail, UnchangedFailure, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(run("base", tr(tc.test, tc.base)), run("head", tr(tc.test, tc.head)))
			var got []Change
			switch tc.kind {
			case UnchangedFailure:
				got = c.UnchangedFailures
			case Regression:
				got = c.Regressions
			}
			if len(got) != 1 {
				t.Fatalf("%d %s changes, want 1: %+v", len(got), tc.kind, c)
			}
			if cause := got[0].Cause; (cause != "") != tc.wantCause || (tc.wantCause && cause != knownCauses[tc.test]) {
				t.Errorf("Cause = %q, want a cause: %v", cause, tc.wantCause)
			}
		})
	}
}
