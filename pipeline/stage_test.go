package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// fakeStage records its runs and returns err.
type fakeStage struct {
	name string
	err  error
	ran  *[]string
	run  func(ctx context.Context) error
}

func (s fakeStage) String() string     { return s.name }
func (fakeStage) Needs(*Config) []Need { return nil }
func (s fakeStage) Run(ctx context.Context, r *Run) error {
	*s.ran = append(*s.ran, s.name)
	fmt.Fprintf(r.Log, "%s ran\n", s.name)
	if s.run != nil {
		return s.run(ctx)
	}
	return s.err
}

// selectStages is --stages naming names, which need not be stages of the
// list: a test's own stages.
func selectStages(names ...string) StageSet { return StageSet{names: names, some: true} }

func newTestRun(t *testing.T, cfg Config) (*Run, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	var progress bytes.Buffer
	r := &Run{Config: &cfg, Dir: dir, Log: io.Discard, Progress: NewProgress(&progress, false), Result: &results.Result{SchemaVersion: results.SchemaVersion, Status: results.StatusRunning},
		place: placementOf(cfg.Builder)}
	r.file = &resultFile{path: filepath.Join(dir, "results.json"), res: r.Result}
	// As Run's end does: t.TempDir is 0700, so a root test's servers live
	// in the system's temp dir, which nothing else would clear. Cleanups
	// run last first: the database stops before its directory goes.
	t.Cleanup(r.closeServerDirs)
	t.Cleanup(r.closeDatabase)
	return r, &progress
}

func stageStatuses(res *results.Result) map[string]results.Status {
	m := map[string]results.Status{}
	for _, s := range res.Stages {
		m[s.Name] = s.Status
	}
	return m
}

func TestRunStages(t *testing.T) {
	var ran []string
	stages := []Stage{
		fakeStage{name: "a", ran: &ran},
		fakeStage{name: "b", ran: &ran, err: results.CheckFailed("2 tests regressed")},
		fakeStage{name: "c", ran: &ran, err: errors.New("mariadb did not start")},
		fakeStage{name: "d", ran: &ran, err: Skip("no ZTS build")},
		fakeStage{name: "e", ran: &ran},
	}
	r, _ := newTestRun(t, Config{Stages: selectStages("a", "b", "c", "d")})
	runStages(context.Background(), r, stages, record, selected, logged)

	if d := cmp.Diff([]string{"a", "b", "c", "d"}, ran); d != "" {
		t.Errorf("stages ran (-want +got):\n%s", d)
	}
	want := map[string]results.Status{"a": results.StatusPassed, "b": results.StatusFailed, "c": results.StatusError, "d": results.StatusSkipped, "e": results.StatusSkipped}
	if d := cmp.Diff(want, stageStatuses(r.Result)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	// results.json on disk has every stage, the failures' errors and logs.
	disk, err := results.Read(filepath.Join(r.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, stageStatuses(disk)); d != "" {
		t.Errorf("results.json statuses (-want +got):\n%s", d)
	}
	for _, s := range disk.Stages {
		if s.Name == "c" && s.Error != "mariadb did not start" {
			t.Errorf("stage c error = %q", s.Error)
		}
		if s.Name == "e" && s.Reason != "not selected (--stages)" {
			t.Errorf("stage e reason = %q", s.Reason)
		}
		if s.Name == "a" {
			log, err := os.ReadFile(filepath.Join(r.Dir, s.Log))
			if err != nil || string(log) != "a ran\n" {
				t.Errorf("stage a log = %q, %v", log, err)
			}
		}
	}
	finish(context.Background(), r)
	if r.Result.Status != results.StatusError || r.Result.ExitCode != 2 {
		t.Errorf("run status %s exit %d, want error/2 (a stage could not run)", r.Result.Status, r.Result.ExitCode)
	}
}

func TestFinishExitCodes(t *testing.T) {
	for _, tt := range []struct {
		statuses []results.Status
		want     results.Status
		code     int
	}{
		{[]results.Status{results.StatusPassed, results.StatusSkipped, results.StatusNotAvailable}, results.StatusPassed, 0},
		{[]results.Status{results.StatusPassed, results.StatusFailed}, results.StatusFailed, 1},
		{[]results.Status{results.StatusFailed, results.StatusError}, results.StatusError, 2},
	} {
		r, _ := newTestRun(t, Config{})
		for i, s := range tt.statuses {
			sr := &results.StageResult{Name: fmt.Sprint(i), Status: s}
			if s == results.StatusSkipped || s == results.StatusNotAvailable {
				sr.Reason = "nothing to do"
			}
			r.Result.Stages = append(r.Result.Stages, sr)
		}
		finish(context.Background(), r)
		if r.Result.Status != tt.want || r.Result.ExitCode != tt.code {
			t.Errorf("%v: got %s/%d, want %s/%d", tt.statuses, r.Result.Status, r.Result.ExitCode, tt.want, tt.code)
		}
	}
}

func TestRunStagesCancellation(t *testing.T) {
	var ran []string
	ctx, cancel := context.WithCancel(context.Background())
	stages := []Stage{
		fakeStage{name: "a", ran: &ran},
		fakeStage{name: "slow", ran: &ran, run: func(ctx context.Context) error {
			cancel() // Ctrl-C arrives while this stage runs
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Second):
				return errors.New("not cancelled")
			}
		}},
		fakeStage{name: "after", ran: &ran},
	}
	r, _ := newTestRun(t, Config{})
	runStages(ctx, r, stages, record, selected, logged)
	if d := cmp.Diff([]string{"a", "slow"}, ran); d != "" {
		t.Errorf("stages ran (-want +got):\n%s", d)
	}
	finish(ctx, r)
	want := map[string]results.Status{"a": results.StatusPassed, "slow": results.StatusInterrupted, "after": results.StatusPending}
	if d := cmp.Diff(want, stageStatuses(r.Result)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if r.Result.Status != results.StatusIncomplete || r.Result.Error != "interrupted" || r.Result.ExitCode != 2 {
		t.Errorf("run = %s %q/%d, want incomplete, interrupted/2", r.Result.Status, r.Result.Error, r.Result.ExitCode)
	}
	if v := results.VerdictOf([]*results.Result{r.Result}); v.Status != results.StatusIncomplete ||
		v.Reason != "did not finish: the run: interrupted, slow: interrupted, after: not started (cancelled)" {
		t.Errorf("verdict %+v, want incomplete naming slow and after", v)
	}
}

// A run killed with SIGKILL leaves results.json as it last wrote it: read
// back at any moment of a run, it never reads as passed, and the report of
// it says what did not finish.
func TestKilledRunIsIncomplete(t *testing.T) {
	var ran []string
	var snapshots []*results.Result
	r, _ := newTestRun(t, Config{Getenv: resultstest.Env{}.Get})
	r.Result.Tool = "patchproof"
	kill := func(context.Context) error {
		res, err := results.Read(r.file.path)
		if err != nil {
			return err
		}
		snapshots = append(snapshots, res)
		return nil
	}
	stages := []Stage{
		fakeStage{name: "checkout", ran: &ran, run: kill},
		fakeStage{name: "build", ran: &ran, run: kill},
		fakeStage{name: "tests", ran: &ran, run: kill},
		fakeStage{name: "bench", ran: &ran, err: Skip("no ZTS build")},
	}
	r.begin(stages)
	runStages(context.Background(), r, stages, record, selected, logged)
	finish(context.Background(), r)
	if r.Result.Status != results.StatusPassed {
		t.Fatalf("the whole run: %s %s, want passed", r.Result.Status, r.Result.Error)
	}
	wants := [][]string{
		{"checkout: running", "build: not started", "tests: not started", "bench: not started"},
		{"build: running", "tests: not started", "bench: not started"},
		{"tests: running", "bench: not started"},
	}
	for i, res := range snapshots {
		v := results.VerdictOf([]*results.Result{res})
		if v.Status != results.StatusIncomplete || v.ExitCode() != 2 {
			t.Errorf("killed at %s: verdict %s exit %d, want incomplete, 2", stages[i], v.Status, v.ExitCode())
		}
		var got []string
		for _, u := range v.Unfinished {
			got = append(got, u.String())
		}
		if i >= len(wants) {
			t.Errorf("killed in stage %d: more snapshots than stages that read one", i)
			continue
		}
		if d := cmp.Diff(wants[i], got); d != "" {
			t.Errorf("killed in stage %d: unfinished (-want +got):\n%s", i, d)
		}
	}
}

// TestProgressQuotesNoCommand: what the progress quotes from the tree
// under test (a PHP version, a build's failure, a backport's error, a
// stage's note) starts no line of its own, so no workflow command, and
// carries no ANSI escape or bidirectional control; under Actions and not.
func TestProgressQuotesNoCommand(t *testing.T) {
	hostile := "8.4.0-dev\r::warning::x\n  ::add-mask::y \x1b[31mred \u202Eexe.txt"
	for _, actions := range []bool{true, false} {
		var out bytes.Buffer
		p := NewProgress(&out, actions)
		p.StageStart("build")
		p.Step("%s: built in 00:10 (%s)", "master-head-nts", hostile)
		p.Warn(hostile)
		p.StageEnd("build", errors.New(hostile))
		now := time.Now()
		p.Summary(&results.Result{Status: results.StatusFailed, Stages: []*results.StageResult{
			{Name: "build", Status: results.StatusFailed, StartedAt: &now, Error: hostile}}})
		for _, l := range strings.FieldsFunc(out.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "::") && !strings.HasPrefix(l, "::group::build") && l != "::endgroup::" && !strings.HasPrefix(l, "::warning::8.4.0-dev%0D") {
				t.Errorf("actions=%v: the line %q is a command of the tree's", actions, l)
			}
		}
		if i := strings.IndexAny(out.String(), "\x1b\u202E"); i >= 0 {
			t.Errorf("actions=%v: a raw ESC or bidi control at %d:\n%q", actions, i, out.String())
		}
	}
}

func TestProgressActions(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, true)
	p.StageStart("build")
	p.Annotate("ext/mysqlnd/mysqlnd_statistics.c", 206, "expected ';' before 'is'\n100% sure")
	// The tree under test names its files: one cannot end the property.
	p.Annotate("ext/a,line=1::b.c", 3, "x")
	p.Warn("head: 2 warnings\n::error::not ours")
	p.StageEnd("build", errors.New("1 of 4 builds failed"))
	got := out.String()
	for _, want := range []string{
		"::group::build\n",
		"::error file=ext/mysqlnd/mysqlnd_statistics.c,line=206::expected ';' before 'is'%0A100%25 sure\n",
		"::error file=ext/a%2Cline=1%3A%3Ab.c,line=3::x\n",
		"::warning::head: 2 warnings%0A::error::not ours\n",
		"::endgroup::\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
}

// The checkout and the builds are what every check needs, in the
// pipeline's order; no check is.
func TestPrerequisites(t *testing.T) {
	if got, want := Prerequisites(), []string{results.StageCheckout, results.StageBuild}; !slices.Equal(got, want) {
		t.Errorf("Prerequisites = %q, want %q", got, want)
	}
}
