package suites

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/workloads/phptests"
)

// realPair is the healthy real run as base and, as head, the same run with
// a regression, a flake, a fix and a new skip: the real diffs of the
// environment failures are what the report shows.
func realPair(t *testing.T) (base, head *RunResult) {
	base, head = loadRun(t, "run-healthy.json"), loadRun(t, "run-healthy.json")
	base.Build, head.Build = "base-nts", "head-nts"
	flip := func(r *RunResult, name string, o Outcome, reason, diff string) {
		for i := range r.Suites {
			for j := range r.Suites[i].Tests {
				if tt := &r.Suites[i].Tests[j]; tt.Name == name {
					tt.Outcome, tt.Reason, tt.Diff = o, reason, diff
				}
			}
		}
	}
	flip(head, "ext/mysqli/tests/mysqli_connect.phpt", Fail, "", "001+ Warning: mysqli_connect(): (HY000/2002): boom | with `backticks` and <html>\n001- done!")
	flip(head, "ext/mysqli/tests/mysqli_query.phpt", Fail, "", "001+ flaky output")
	flip(base, "ext/pdo/tests/pdo_001.phpt", Fail, "", "001+ was broken")
	flip(head, "ext/mysqli/tests/bug74021.phpt", Skip, "needs a server feature", "")
	return base, head
}

func TestWriteComparison(t *testing.T) {
	base, head := realPair(t)
	c := Compare(base, head)
	rerun := func(_ context.Context, build string, tests []string) (map[string]TestResult, error) {
		out := map[string]TestResult{}
		byName := base.ByName()
		if build == head.Build {
			byName = head.ByName()
		}
		for _, name := range tests {
			out[name] = byName[name]
		}
		if build == head.Build {
			out["ext/mysqli/tests/mysqli_query.phpt"] = TestResult{Outcome: Pass}
		}
		return out, nil
	}
	c, err := Deflake(context.Background(), c, 2, rerun)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeComparison(&buf, c, []*RunResult{base, head}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.md"), buf.Bytes())
}

func TestWriteComparisonNoRegression(t *testing.T) {
	r := loadRun(t, "run-healthy.json")
	var buf bytes.Buffer
	if err := writeComparison(&buf, Compare(r, r), []*RunResult{r}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report-same.md"), buf.Bytes())
}

// The JSON names are part of results.json: renaming one breaks readers.
func TestJSONNames(t *testing.T) {
	base, head := realPair(t)
	c := Compare(base, head)
	c.Regressions[0].BaseRuns = []Outcome{Pass, Pass}
	c.Regressions[0].HeadRuns = []Outcome{Fail, Fail}
	small := &RunResult{Build: "head-nts", Warnings: []string{"a warning"}}
	small.Add(phptests.NewSuiteRun("ext/pdo_mysql/tests", []TestResult{{
		Name: "ext/pdo/tests/pdo_022.phpt", Title: "MySQL PDO Common: PDOStatement::getColumnMeta",
		Via: "ext/pdo_mysql/tests/common.phpt", Outcome: XFail, DurationSeconds: 0.0765,
	}}, 1500e6))
	b, err := json.MarshalIndent(struct {
		Run        *RunResult `json:"run"`
		Comparison Comparison `json:"comparison"`
	}{small, c}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "json-names.golden.json"), append(b, '\n'))
}

// The verdict line counts a test that fails on base and head alike once,
// however many variants it fails in: the demo's three MariaDB-worded
// tests in NTS and ZTS are three, not six.
func TestAnswerCountsBothFailingTestsOnce(t *testing.T) {
	both := func(tests ...string) []Change {
		var cs []Change
		for _, n := range tests {
			cs = append(cs, Change{Test: n, Kind: UnchangedFailure, Base: Fail, Head: Fail})
		}
		return cs
	}
	r := &Result{
		Runs: []*RunResult{{Build: "b-nts"}, {Build: "h-nts"}, {Build: "b-zts"}, {Build: "h-zts"}},
		Comparisons: []*VariantComparison{
			{Variant: "nts", Comparison: Comparison{Base: "b-nts", Head: "h-nts", UnchangedFailures: both("a.phpt", "b.phpt", "c.phpt")}},
			{Variant: "zts", Comparison: Comparison{Base: "b-zts", Head: "h-zts", UnchangedFailures: both("a.phpt", "b.phpt", "c.phpt", "zts-only.phpt")}},
		},
	}
	if got := r.Answer(); !strings.Contains(got, "; 4 fail on both builds (not caused by the change)") {
		t.Errorf("Answer() = %q, want 4 tests failing on both builds", got)
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
