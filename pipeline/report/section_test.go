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
		{"demo", demo, []string{"NTS machine code", "ZTS machine code (information)", "builds", "tests", "concurrency"}},
		// Every target is asked question 1, whether the stage ran or not.
		{"nothing ran", &notRun, []string{"NTS machine code"}},
		{"a backport that did not apply", &unapplied, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range sections(results.JobTarget{TargetResult: tt.t}) {
				got = append(got, s.column)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("sections (-want +got):\n%s", d)
			}
		})
	}
}

// A target without a check that another target has reads "not run" in
// that check's column.
func TestOverviewCheckNotRunOnATarget(t *testing.T) {
	res := resultstest.Demo()
	other := *res.Targets[0]
	other.Name, other.Tests, other.Race = "PHP-8.4", nil, nil
	res.Targets = append(res.Targets, &other)
	p := &summaryWriter{}
	p.overview(results.SortedTargets([]*results.Result{res}))
	cells := func(line string) []string { return strings.Split(strings.Trim(line, "| "), " | ") }
	lines := strings.Split(p.b.String(), "\n")
	header := cells(lines[0])
	var row []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| [PHP-8.4]") {
			row = cells(l)
		}
	}
	if len(row) != len(header) {
		t.Fatalf("PHP-8.4's row %q does not fit the header %q", row, header)
	}
	checked := 0
	for i, h := range header {
		if h == "tests" || h == "concurrency" {
			checked++
			if row[i] != "not run" {
				t.Errorf("PHP-8.4's %s cell is %q, want \"not run\"", h, row[i])
			}
		}
	}
	if checked != 2 {
		t.Errorf("the overview %q lacks the tests or the concurrency column", header)
	}
}
