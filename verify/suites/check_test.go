package suites

import (
	"strings"
	"testing"

	"github.com/patchproof/patchproof/verify/verdict/verdicttest"
	"github.com/patchproof/patchproof/workloads/phptests"
)

func TestJudge(t *testing.T) {
	run := func(build string, tests ...TestResult) *RunResult {
		r := &RunResult{Build: build}
		r.Add(phptests.NewSuiteRun("ext/mysqli/tests", tests, 0))
		return r
	}
	ok := TestResult{Name: "ext/mysqli/tests/a.phpt", Outcome: Pass}
	broke := TestResult{Name: "ext/mysqli/tests/a.phpt", Outcome: Fail}
	base, head, regressedHead := run("base-nts", ok), run("head-nts", ok), run("head-nts", broke)
	// Every test skipped as the database was unreachable: a run Guard
	// refuses, whatever its comparison says.
	unreachable := run("head-zts", TestResult{Name: "ext/mysqli/tests/a.phpt", Outcome: Skip, Reason: "Can't connect to MySQL Server - [2002] No such file"})
	compared := func(variant string, b, h *RunResult) *VariantComparison {
		return &VariantComparison{Variant: variant, Comparison: Compare(b, h)}
	}
	passed := &Result{Runs: []*RunResult{base, head}, Comparisons: []*VariantComparison{compared("nts", base, head)}}
	regressed := &Result{Runs: []*RunResult{base, regressedHead}, Comparisons: []*VariantComparison{compared("nts", base, regressedHead)}}
	for _, tt := range []struct {
		name    string
		targets []Target
		want    string // "" for nil
		failed  bool   // a *verdict.CheckError rather than a plain error
	}{
		{"passed", []Target{{"master", passed}}, "", false},
		{"not run on a target", []Target{{"master", passed}, {"PHP-8.4", nil}}, "", false},
		{"a regression fails", []Target{{"master", passed}, {"PHP-8.4", regressed}},
			"1 tests regressed: PHP-8.4 nts: ext/mysqli/tests/a.phpt", true},
		{"every regression is named", []Target{{"master", regressed}, {"PHP-8.4", regressed}},
			"2 tests regressed: master nts: ext/mysqli/tests/a.phpt, PHP-8.4 nts: ext/mysqli/tests/a.phpt", true},
		{"a run that could not be made cannot be judged", []Target{{"master", &Result{Runs: []*RunResult{base}, Errors: []string{"suites on master-head-nts: boom"}}}},
			"suites on master-head-nts: boom", false},
		{"an error wins over a regression", []Target{{"master", regressed}, {"PHP-8.4", &Result{Errors: []string{"re-run: boom"}}}},
			"re-run: boom", false},
		{"a run that did not reach the server cannot be judged", []Target{{"master", &Result{Runs: []*RunResult{base, unreachable}}}},
			"test suites on head-zts ext/mysqli/tests did not really run: 1 tests skipped because the database could not be reached: ext/mysqli/tests/a.phpt: Can't connect to MySQL Server - [2002] No such file", false},
		{"so does it when another target regressed", []Target{{"master", regressed}, {"PHP-8.4", &Result{Runs: []*RunResult{unreachable}}}},
			"test suites on head-zts ext/mysqli/tests did not really run: 1 tests skipped because the database could not be reached: ext/mysqli/tests/a.phpt: Can't connect to MySQL Server - [2002] No such file", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Judge(tt.targets)
			verdicttest.Judged(t, err, tt.want, tt.failed)
		})
	}
}

func TestCell(t *testing.T) {
	flaky := Comparison{Flakes: []Change{{Test: "a.phpt"}}}
	regressed := Comparison{Regressions: []Change{{Test: "a.phpt"}, {Test: "b.phpt"}}}
	for _, tt := range []struct {
		name string
		r    *Result
		want string
	}{
		{"not compared", &Result{}, "⚠️ not compared"},
		{"no regression", &Result{Comparisons: []*VariantComparison{{Variant: "nts"}, {Variant: "zts"}}}, "✅ no regression (nts, zts)"},
		{"regressions and a flake", &Result{Comparisons: []*VariantComparison{{Variant: "nts", Comparison: regressed}, {Variant: "zts", Comparison: flaky}}},
			"❌ 2 regressions (nts, zts), 1 flake"},
		{"an error", &Result{Comparisons: []*VariantComparison{{Variant: "nts"}}, Errors: []string{"boom"}}, "✅ no regression (nts), ⚠️ 1 error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Cell(); got != tt.want {
				t.Errorf("Cell = %q, want %q", got, tt.want)
			}
		})
	}
}

// Suites that agree fold into a line; a regression or an error is shown
// open, as is a target whose suites could not be compared.
func TestWriteSectionFolds(t *testing.T) {
	regressed := Comparison{Base: "base-nts", Head: "head-nts", Regressions: []Change{{Test: "a.phpt", Kind: Regression}}}
	for _, tt := range []struct {
		name string
		r    *Result
		fold bool
	}{
		{"agreeing", &Result{Comparisons: []*VariantComparison{{Variant: "nts", Comparison: Comparison{Base: "base-nts", Head: "head-nts"}}}}, true},
		{"regressed", &Result{Comparisons: []*VariantComparison{{Variant: "nts", Comparison: regressed}}}, false},
		{"an error", &Result{Comparisons: []*VariantComparison{{Variant: "nts"}}, Errors: []string{"boom"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.r.WriteSection(&b); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			folded := strings.HasPrefix(got, "<details><summary>Test suites: "+tt.r.Cell()+"</summary>\n\n") && strings.HasSuffix(got, "</details>\n\n")
			if folded != tt.fold {
				t.Errorf("folded %v, want %v:\n%s", folded, tt.fold, got)
			}
			if !strings.HasSuffix(got, "\n\n") {
				t.Errorf("the section does not end its block:\n%q", got)
			}
		})
	}
}
