package results_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// killed is the demo's results.json as a run killed (SIGKILL) at stage
// i leaves it: that stage running, the ones after it as the run
// recorded them when it began.
func killed(i int, later results.Status) *results.Result {
	res := resultstest.Demo()
	res.Status, res.ExitCode, res.Error, res.FinishedAt = results.StatusRunning, 0, "", nil
	res.Stages[i].Status, res.Stages[i].DurationMS = results.StatusRunning, 0
	for _, s := range res.Stages[i+1:] {
		*s = results.StageResult{Name: s.Name, Status: later}
	}
	return res
}

// stageAt is the index of a stage of the demo's results.
func stageAt(name string) int {
	for i, s := range resultstest.Demo().Stages {
		if s.Name == name {
			return i
		}
	}
	panic("no stage " + name)
}

func TestVerdictOf(t *testing.T) {
	errored := resultstest.Demo()
	errored.Status, errored.Error = results.StatusError, "tests: mariadb did not start"
	interrupted := resultstest.Demo()
	interrupted.Status, interrupted.ExitCode, interrupted.Error = results.StatusIncomplete, 2, "interrupted"
	interrupted.Stages[stageAt("tests")].Status = results.StatusInterrupted
	for _, name := range []string{"race", "bench"} {
		interrupted.Stages[stageAt(name)] = &results.StageResult{Name: name, Status: results.StatusPending, Reason: "cancelled"}
	}
	unknown := resultstest.Demo()
	unknown.Stages[stageAt("tests")].Status = "exploded"
	missing := resultstest.Demo()
	missing.Stages = append(missing.Stages[:stageAt("tests")], missing.Stages[stageAt("tests")+1:]...)
	strange := resultstest.Demo()
	strange.Status = "weird"
	failedThenKilled := killed(stageAt("tests"), results.StatusPending)
	failedThenKilled.Stages[1].Status = results.StatusFailed

	notFinished := func(u ...string) verdict {
		return verdict{results.StatusIncomplete, "did not finish: " + strings.Join(u, ", "), u}
	}
	v := func(s results.Status, reason string) verdict { return verdict{s, reason, nil} }
	for _, tt := range []struct {
		name string
		rs   []*results.Result
		want verdict
	}{
		{"passed", []*results.Result{resultstest.Demo()}, v(results.StatusPassed, "")},
		{"failed", []*results.Result{resultstest.Failing()}, v(results.StatusFailed, "checks failed: build, codediff")},
		{"worst of two", []*results.Result{resultstest.Demo(), resultstest.Failing()}, v(results.StatusFailed, "master: checks failed: build, codediff")},
		{"error beats failure", []*results.Result{resultstest.Failing(), errored}, v(results.StatusError, "PHP-8.2: tests: mariadb did not start")},
		{"none", nil, v(results.StatusError, "no results")},

		{"killed during the tests", []*results.Result{killed(stageAt("tests"), results.StatusPending)},
			notFinished("tests: running", "race: not started", "bench: not started")},
		{"killed, stages pre-filled as skipped by an older run", []*results.Result{killed(stageAt("tests"), results.StatusSkipped)},
			notFinished("tests: running", "race: not started", "bench: not started")},
		{"killed while the report posts", []*results.Result{resultstest.Live(resultstest.Demo())},
			notFinished("the run: running")},
		{"a failed check does not hide that the run died", []*results.Result{failedThenKilled},
			notFinished("tests: running", "race: not started", "bench: not started")},
		{"interrupted", []*results.Result{interrupted},
			notFinished("the run: interrupted", "tests: interrupted", "race: not started (cancelled)", "bench: not started (cancelled)")},
		{"a stage of unknown status", []*results.Result{unknown}, notFinished(`tests: unknown status "exploded"`)},
		{"a selected stage missing", []*results.Result{missing}, notFinished("tests: missing")},
		{"a run of unknown status", []*results.Result{strange}, notFinished("the run: weird")},
		{"no stages", []*results.Result{{Status: results.StatusPassed}}, notFinished("the run: no stage recorded")},
		{"incomplete beats error", []*results.Result{errored, resultstest.Live(resultstest.Failing())},
			verdict{results.StatusIncomplete, "master: did not finish: the run: running", []string{"master: the run: running"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := results.VerdictOf(tt.rs)
			if d := cmp.Diff(tt.want, verdictOf(v)); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
			if v.Status == results.StatusIncomplete && v.ExitCode() != 2 {
				t.Errorf("exit %d for an incomplete run, want 2", v.ExitCode())
			}
		})
	}
}

// verdict is a Verdict with what did not finish as text, to compare.
type verdict struct {
	Status     results.Status
	Reason     string
	Unfinished []string
}

func verdictOf(v results.Verdict) verdict {
	out := verdict{Status: v.Status, Reason: v.Reason}
	for _, u := range v.Unfinished {
		out.Unfinished = append(out.Unfinished, u.String())
	}
	return out
}

func TestExpecting(t *testing.T) {
	rs := []*results.Result{resultstest.Failing()}
	if d := cmp.Diff(results.VerdictOf(rs), results.Expecting(rs, []string{"master"})); d != "" {
		t.Errorf("every target there (-want +got):\n%s", d)
	}
	want := results.Verdict{Status: results.StatusIncomplete, Reason: "did not finish: PHP-8.4: no results",
		Unfinished: []results.Unfinished{{Name: "PHP-8.4", Status: results.StatusPending, Note: "no results"}}}
	if d := cmp.Diff(want, results.Expecting(rs, []string{"master", "PHP-8.4"})); d != "" {
		t.Errorf("a job left no results (-want +got):\n%s", d)
	}
}

func TestStageVerdict(t *testing.T) {
	st := func(name string, status results.Status, reason string) *results.StageResult {
		return &results.StageResult{Name: name, Status: status, Reason: reason}
	}
	checkout := st("checkout", results.StatusPassed, "")
	notSelected := func(names ...string) []*results.StageResult {
		var out []*results.StageResult
		for _, n := range names {
			out = append(out, st(n, results.StatusSkipped, "not selected (--stages)"))
		}
		return out
	}
	nothing := results.Verdict{Status: results.StatusError, Reason: "nothing was checked", NothingChecked: true}
	for _, tt := range []struct {
		name   string
		stages []*results.StageResult
		want   results.Verdict
		exit   int
	}{
		// What finish records: a stage left pending (never run) is no pass.
		{"a stage never run", []*results.StageResult{checkout, st("tests", results.StatusPending, "")},
			results.Verdict{Status: results.StatusIncomplete, Reason: "did not finish: tests: not started",
				Unfinished: []results.Unfinished{{Name: "tests", Status: results.StatusPending, Note: "not started"}}}, 2},
		{"only the checkout", []*results.StageResult{checkout}, nothing, 2},
		{"the checkout and the report", []*results.StageResult{checkout, st("report", results.StatusPassed, "")}, nothing, 2},
		{"every check skipped", append([]*results.StageResult{checkout}, notSelected("build", "codediff", "tests", "race", "bench")...), nothing, 2},
		{"no check available", []*results.StageResult{checkout, st("bench", results.StatusNotAvailable, "no valgrind")}, nothing, 2},
		{"one check ran", append([]*results.StageResult{checkout, st("build", results.StatusPassed, "")}, notSelected("tests")...),
			results.Verdict{Status: results.StatusPassed}, 0},
		{"a backport that does not apply fails the checkout", []*results.StageResult{st("checkout", results.StatusFailed, "")},
			results.Verdict{Status: results.StatusFailed, Reason: "checks failed: checkout"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := results.StageVerdict(tt.stages)
			if d := cmp.Diff(tt.want, v); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
			if v.ExitCode() != tt.exit {
				t.Errorf("exit %d, want %d", v.ExitCode(), tt.exit)
			}
		})
	}
}

// checkedNothing is a run of the demo with --stages checkout,report as
// runs before NothingChecked recorded it: passed.
func checkedNothing() *results.Result {
	res := resultstest.Demo()
	for _, s := range res.Stages {
		if s.IsCheck() {
			*s = results.StageResult{Name: s.Name, Status: results.StatusSkipped, Reason: "not selected (--stages)"}
		}
	}
	return res
}

// A run that checked nothing is no pass, whatever its results.json says,
// and says so as the one reason when no result checked anything.
func TestVerdictOfNothingChecked(t *testing.T) {
	recorded := checkedNothing()
	recorded.Status, recorded.ExitCode, recorded.Error = results.StatusError, 2, "nothing was checked"
	other := resultstest.PassingPR()
	other.Targets[0].Name = "PHP-8.4"
	for _, tt := range []struct {
		name string
		rs   []*results.Result
		want results.Verdict
	}{
		{"recorded as a pass", []*results.Result{checkedNothing()},
			results.Verdict{Status: results.StatusError, Reason: "nothing was checked", NothingChecked: true}},
		{"recorded as it is now", []*results.Result{recorded},
			results.Verdict{Status: results.StatusError, Reason: "nothing was checked", NothingChecked: true}},
		{"no job checked anything", []*results.Result{checkedNothing(), recorded},
			results.Verdict{Status: results.StatusError, Reason: "PHP-8.2: nothing was checked; PHP-8.2: nothing was checked", NothingChecked: true}},
		{"one job of two checked nothing", []*results.Result{other, checkedNothing()},
			results.Verdict{Status: results.StatusError, Reason: "PHP-8.2: nothing was checked"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := results.VerdictOf(tt.rs)
			if d := cmp.Diff(tt.want, v); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
			if v.ExitCode() != 2 {
				t.Errorf("exit %d, want 2: nothing was validated", v.ExitCode())
			}
		})
	}
}
