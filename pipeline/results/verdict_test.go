package results_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

import ()

func TestVerdictOf(t *testing.T) {
	running := resultstest.Demo()
	running.Status, running.FinishedAt = results.StatusRunning, nil
	running.Stages[5].Status = results.StatusRunning // the report, rendering
	errored := resultstest.Demo()
	errored.Status, errored.Error = results.StatusError, "tests: mariadb did not start"
	for _, tt := range []struct {
		name string
		rs   []*results.Result
		want results.Verdict
	}{
		{"passed", []*results.Result{resultstest.Demo()}, results.Verdict{Status: results.StatusPassed}},
		{"a live run ignores the report stage", []*results.Result{running}, results.Verdict{Status: results.StatusPassed}},
		{"failed", []*results.Result{resultstest.Failing()}, results.Verdict{Status: results.StatusFailed, Reason: "checks failed: build, codediff"}},
		{"worst of two", []*results.Result{resultstest.Demo(), resultstest.Failing()}, results.Verdict{Status: results.StatusFailed, Reason: "master: checks failed: build, codediff"}},
		{"error beats failure", []*results.Result{resultstest.Failing(), errored}, results.Verdict{Status: results.StatusError, Reason: "PHP-8.2: tests: mariadb did not start"}},
		{"none", nil, results.Verdict{Status: results.StatusError, Reason: "no results"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, results.VerdictOf(tt.rs)); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
		})
	}
}
