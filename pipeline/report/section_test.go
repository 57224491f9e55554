package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

func TestSections(t *testing.T) {
	demo := resultstest.Demo().Targets[0]
	notRun := *demo
	notRun.CodeDiff, notRun.Builds, notRun.Tests, notRun.Race = nil, nil, nil, nil
	unapplied := *demo
	unapplied.Backport = &results.BackportResult{From: "master", Branch: "PHP-8.4", Error: "no merge-base"}
	for _, tt := range []struct {
		name string
		t    *results.TargetResult
		want []string
	}{
		{"demo", demo, []string{"NTS", "ZTS", "builds", "tests", "concurrency"}},
		// Every target is asked question 1, whether the stage ran or not.
		{"nothing ran", &notRun, []string{"NTS"}},
		{"a backport that did not apply", &unapplied, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range sections(results.JobTarget{TargetResult: tt.t}) {
				got = append(got, s.Label())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("sections (-want +got):\n%s", d)
			}
		})
	}
}

// A target without a check that another target has reads "not run" on
// that question's line of its verdict block.
func TestVerdictBlockCheckNotRunOnATarget(t *testing.T) {
	res := resultstest.Demo()
	other := *res.Targets[0]
	other.Name, other.Tests, other.Race = "PHP-8.4", nil, nil
	res.Targets = append(res.Targets, &other)
	rs := []*results.Result{res}
	p := &summaryWriter{}
	for _, jt := range results.SortedTargets(rs) {
		if jt.Name == "PHP-8.4" {
			p.verdictBlock(jt, rs, true)
		}
	}
	lines := strings.Split(strings.TrimSpace(p.b.String()), "\n")
	want := []string{"2. tests: not run", "4. concurrency: not run"}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Errorf("PHP-8.4's verdict block lacks %q:\n%s", w, p.b.String())
		}
	}
	if !strings.HasPrefix(lines[0], "**PHP-8.4**: head ") || !strings.HasPrefix(lines[1], "1. NTS: ✅ 484/484 identical") {
		t.Errorf("verdict block:\n%s", p.b.String())
	}
}

// The checks are asked in the order of the reviewer's questions, each
// check's number its own, those that answer none last.
func TestQuestionOrder(t *testing.T) {
	checks := (&results.TargetResult{}).Checks()
	var got []string
	for _, i := range questionOrder() {
		got = append(got, checks[i].Stage)
	}
	want := []string{results.StageCodeDiff, results.StageTests, results.StageBench, results.StageRace, results.StageABI, results.StageBuild, results.StageModules}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("questionOrder (-want +got):\n%s", d)
	}
}
