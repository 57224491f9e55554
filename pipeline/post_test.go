package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// A run that validates something other than the PR it posts on (the demo,
// say) posts with --post-to; a second run updates the same comment. The
// report follows every run: --stages need not name it, and may, as
// scripts written when it was a stage do.
func TestRunPostTo(t *testing.T) {
	f := resultstest.PRFake(t)
	repo := backportRepo(t)
	cache := t.TempDir()
	for _, tt := range []struct{ runID, stages string }{{"1", "checkout,report"}, {"2", "checkout"}} {
		runID := tt.runID
		stages, err := ParseStageSet(strings.Split(tt.stages, ","))
		if err != nil {
			t.Fatal(err)
		}
		e := resultstest.Env{"GITHUB_TOKEN": resultstest.Token, "GITHUB_RUN_ID": runID}
		res, err := Execute(context.Background(), Config{
			Repo: repo, Base: "master", Head: "pull/9/head", Stages: stages,
			Post: true, PostTo: "php/php-src#4242", GitHubAPI: f.URL(), Getenv: e.Get,
			Out: t.TempDir(), Cache: cache,
		})
		// Checkout and report only: nothing was checked, and posted so.
		if err == nil || err.Error() != results.NothingCheckedReason {
			t.Fatalf("run %s: %v; want %q", runID, err, results.NothingCheckedReason)
		}
		if d := cmp.Diff([]string{"checkout"}, res.Settings.Stages); d != "" {
			t.Errorf("run %s: settings' stages (-want +got):\n%s", runID, d)
		}
		cs := f.Comments("php", "php-src", 4242)
		if len(cs) != 1 {
			t.Fatalf("run %s: %d comments, want 1", runID, len(cs))
		}
		if !strings.Contains(cs[0].Body, "run="+runID+" ") {
			t.Errorf("run %s: the comment is not this run's:\n%.200s", runID, cs[0].Body)
		}
	}
	for _, bad := range []string{"php-src#1", "php/php-src", "php/php-src#x", "https://github.com/php/php-src/issues/3"} {
		var ie *results.InputError
		_, err := Execute(context.Background(), Config{Post: true, PostTo: bad, Out: t.TempDir(), Cache: cache})
		if !errors.As(err, &ie) {
			t.Errorf("--post-to %q = %v, want an input error", bad, err)
		}
	}
}

// --pr N without --base asks GitHub which branch the PR targets.
func TestPRBaseBranch(t *testing.T) {
	f := resultstest.PRFake(t)
	cfg := Config{Repo: DefaultRepo, PR: 4242, GitHubAPI: f.URL(), Getenv: resultstest.Env{}.Get}
	cfg.setDefaults()
	got, err := prBaseBranch(context.Background(), &cfg)
	if err != nil || got != "master" {
		t.Errorf("prBaseBranch = %q, %v; want master", got, err)
	}
	cfg.PR = 999
	var ie *results.InputError
	if _, err := prBaseBranch(context.Background(), &cfg); !errors.As(err, &ie) {
		t.Errorf("missing PR = %v, want an input error", err)
	}
}

// An interrupted run still leaves a summary.md that says so; nothing is
// posted.
func TestInterruptedRunSummary(t *testing.T) {
	f := resultstest.PRFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	res, err := Execute(ctx, Config{
		Repo: backportRepo(t), Base: "master", Head: "pull/9/head", Out: out, Cache: t.TempDir(),
		Post: true, PostTo: "php/php-src#4242", GitHubAPI: f.URL(), Getenv: resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get,
	})
	if err == nil || res == nil || res.Error != "interrupted" || res.ExitCode != 2 {
		t.Fatalf("Execute = %+v, %v; want an interrupted run", res, err)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatalf("no summary.md: %v", err)
	}
	if !strings.Contains(string(summary), "interrupted") {
		t.Errorf("summary.md does not say the run was interrupted:\n%.300s", summary)
	}
	if n := len(f.Comments("php", "php-src", 4242)); n != 0 {
		t.Errorf("an interrupted run posted %d comments", n)
	}
}
