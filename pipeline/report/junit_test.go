package report

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"testing"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/suites"
)

func TestWriteJUnit(t *testing.T) {
	regressed := resultstest.Demo()
	c := &regressed.Targets[0].Tests.Comparisons[0].Comparison
	c.Regressions = []suites.Change{{
		Test: "ext/mysqli/tests/mysqli_get_client_stats.phpt", Kind: suites.Regression, Base: suites.Pass, Head: suites.Fail,
		Reason: "output differs", Diff: "-bytes_sent: 635\n+bytes_sent: 636\n",
		// Confirmed by both re-runs: a rerunFailure each.
		BaseRuns: []suites.Outcome{suites.Pass, suites.Pass, suites.Pass}, HeadRuns: []suites.Outcome{suites.Fail, suites.Fail, suites.Fail},
	}}
	// A test head failed twice in three runs, and base passed: flaky, not
	// failed, with a flakyFailure per failed run.
	c.Flakes = []suites.Change{{
		Test: "ext/mysqli/tests/t001.phpt", Kind: suites.Regression, Base: suites.Pass, Head: suites.Fail,
		BaseRuns: []suites.Outcome{suites.Pass}, HeadRuns: []suites.Outcome{suites.Fail, suites.Pass, suites.Fail},
	}}
	for _, tt := range []struct {
		name     string
		rs       []*results.Result
		failures int
	}{
		{"demo.junit.xml", []*results.Result{resultstest.Demo()}, 0},
		{"regressed.junit.xml", []*results.Result{regressed}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			ok, err := WriteJUnit(&b, tt.rs)
			if err != nil || !ok {
				t.Fatalf("WriteJUnit = %v, %v", ok, err)
			}
			golden.Check(t, filepath.Join("testdata", tt.name), b.Bytes())
			var back junitSuites
			if err := xml.Unmarshal(b.Bytes(), &back); err != nil {
				t.Fatalf("not XML: %v", err)
			}
			failures, timed := 0, 0
			for _, s := range back.Suites {
				for _, c := range s.Cases {
					if c.Time == "" {
						t.Errorf("%s: no time", c.Name)
					} else if c.Time != "0.000" {
						timed++
					}
					if c.Failure != nil {
						failures++
						if c.Failure.Text == "" {
							t.Errorf("%s: a failure without its diff", c.Name)
						}
					}
				}
			}
			if timed == 0 {
				t.Error("no case has its time")
			}
			flaky, reruns := 0, 0
			for _, s := range back.Suites {
				if s.Properties == nil || len(s.Properties.List) < 6 {
					t.Errorf("suite %s: properties %+v, want the target, variant, builds and commits", s.Name, s.Properties)
				}
				for _, c := range s.Cases {
					flaky += len(c.FlakyFailure)
					reruns += len(c.RerunFailure)
				}
			}
			if want := map[string]int{"regressed.junit.xml": 2}[tt.name]; flaky != want {
				t.Errorf("%d flakyFailure elements, want %d", flaky, want)
			}
			if want := map[string]int{"regressed.junit.xml": 2}[tt.name]; reruns != want {
				t.Errorf("%d rerunFailure elements, want %d (the regression's two failed re-runs)", reruns, want)
			}
			if failures != tt.failures || back.Failures != tt.failures {
				t.Errorf("%d failing testcases (%d counted), want %d", failures, back.Failures, tt.failures)
			}
		})
	}
	// Nothing compared, nothing written.
	var b bytes.Buffer
	if ok, err := WriteJUnit(&b, []*results.Result{{}}); ok || err != nil || b.Len() != 0 {
		t.Errorf("WriteJUnit of no comparison = %v, %v, %d bytes", ok, err, b.Len())
	}
}
