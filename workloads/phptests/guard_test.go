package phptests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func many(prefix string, n int, o Outcome, reason string) []TestResult {
	out := make([]TestResult, n)
	for i := range out {
		out[i] = TestResult{Name: fmt.Sprintf("%s%03d.phpt", prefix, i), Outcome: o, Reason: reason}
	}
	return out
}

func TestGuard(t *testing.T) {
	suite := func(name string, parts ...[]TestResult) SuiteRun {
		var all []TestResult
		for _, p := range parts {
			all = append(all, p...)
		}
		return NewSuiteRun(name, all, 0)
	}
	result := func(ss ...SuiteRun) *RunResult {
		r := &RunResult{Build: "head-nts"}
		for _, s := range ss {
			r.Add(s)
		}
		return r
	}
	tests := []struct {
		name string
		run  *RunResult
		opt  GuardOptions
		want *InfraError // nil: the run is trusted
	}{
		{
			name: "healthy",
			run:  result(suite("ext/mysqli/tests", many("p", 90, Pass, ""), many("s", 8, Skip, "test valid only for 32bit systems"), many("f", 2, Fail, ""))),
		},
		{
			name: "exactly half skipped is allowed",
			run:  result(suite("ext/mysqli/tests", many("p", 5, Pass, ""), many("s", 5, Skip, "no reason"))),
		},
		{
			name: "most skipped",
			run:  result(suite("ext/mysqli/tests", many("p", 4, Pass, ""), many("s", 6, Skip, "no reason"))),
			want: &InfraError{Build: "head-nts", Suite: "ext/mysqli/tests", Reason: "6 of 10 tests skipped (60%, at most 50% allowed)"},
		},
		{
			name: "stricter limit",
			run:  result(suite("ext/mysqli/tests", many("p", 8, Pass, ""), many("s", 2, Skip, "no reason"))),
			opt:  GuardOptions{MaxSkipFraction: 0.1},
			want: &InfraError{Build: "head-nts", Suite: "ext/mysqli/tests", Reason: "2 of 10 tests skipped (20%, at most 10% allowed)"},
		},
		{
			name: "one suite broken among healthy ones",
			run: result(
				suite("ext/mysqli/tests", many("p", 100, Pass, "")),
				suite("ext/pdo_mysql/tests", many("s", 3, Skip, "x"), many("p", 1, Pass, "")),
			),
			want: &InfraError{Build: "head-nts", Suite: "ext/pdo_mysql/tests", Reason: "3 of 4 tests skipped (75%, at most 50% allowed)"},
		},
		{
			name: "canary: mysqli cannot connect, however few",
			run: result(suite("ext/mysqli/tests", many("p", 100, Pass, ""),
				many("c", 1, Skip, "Can't connect to MySQL Server - [2002] No such file or directory"))),
			want: &InfraError{Build: "head-nts", Suite: "ext/mysqli/tests",
				Reason: "1 tests skipped because the database could not be reached: c000.phpt: Can't connect to MySQL Server - [2002] No such file or directory"},
		},
		{
			name: "canary: pdo access denied, listed briefly",
			run: result(suite("ext/pdo_mysql/tests", many("p", 100, Pass, ""),
				many("c", 5, Skip, "SQLSTATE[HY000] [1045] Access denied for user 'x'@'127.0.0.1' (using password: YES)"))),
			want: &InfraError{Build: "head-nts", Suite: "ext/pdo_mysql/tests",
				Reason: "5 tests skipped because the database could not be reached: " +
					"c000.phpt: SQLSTATE[HY000] [1045] Access denied for user 'x'@'127.0.0.1' (using password: YES); " +
					"c001.phpt: SQLSTATE[HY000] [1045] Access denied for user 'x'@'127.0.0.1' (using password: YES); " +
					"c002.phpt: SQLSTATE[HY000] [1045] Access denied for user 'x'@'127.0.0.1' (using password: YES) (and 2 more)"},
		},
		{
			name: "a failing test that mentions connections is no canary",
			run:  result(suite("ext/mysqli/tests", many("p", 10, Pass, ""), many("f", 1, Fail, "Can't connect to MySQL Server - [2002]"))),
		},
		{
			name: "empty suite",
			run:  result(suite("ext/mysqli/tests")),
			want: &InfraError{Build: "head-nts", Suite: "ext/mysqli/tests", Reason: "no test ran"},
		},
		{
			name: "no suite",
			run:  result(),
			want: &InfraError{Build: "head-nts", Reason: "no suite ran"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Guard(tt.run, tt.opt)
			var got *InfraError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Guard returned %T %v, want *InfraError", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Guard (-want +got):\n%s", diff)
			}
		})
	}
}

// The guard on real runs (testdata made by workloads/phptests against
// MariaDB with PHP 8.2.32 NTS): a healthy full run is trusted, a run with a
// wrong password is refused by the canary.
func TestGuardOnRealRuns(t *testing.T) {
	healthy := loadRun(t, "run-healthy.json")
	if err := Guard(healthy, GuardOptions{}); err != nil {
		t.Errorf("Guard(healthy run) = %v, want nil", err)
	}
	broken := loadRun(t, "run-wrong-password.json")
	err := Guard(broken, GuardOptions{})
	var ie *InfraError
	if !errors.As(err, &ie) {
		t.Fatalf("Guard(run with a wrong password) = %v, want *InfraError", err)
	}
	if !strings.Contains(ie.Reason, "could not be reached") {
		t.Errorf("Guard(run with a wrong password): %v; want the canary to name it", err)
	}
}

func loadRun(t *testing.T, name string) *RunResult {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var r RunResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}
