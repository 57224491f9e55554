package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/results"
)

// reportToken is distinctive, so that a leak is easy to spot.
const reportToken = "ghp_ReportT0kenThatMustNeverBeSeen000001"

// env is a fixed environment for Config.Getenv.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// newPRFake serves php/php-src#4242, whose head is the commit the fixtures
// validated.
func newPRFake(t *testing.T) *githubfake.Fake {
	t.Helper()
	f := githubfake.New(t)
	f.AddUser("patchproof-bot", reportToken)
	f.AddPR(githubfake.PR{
		Owner: "php", Repo: "php-src", Number: 4242, Title: "mysqlnd: use relaxed atomics for statistics",
		Base: githubfake.Branch{Ref: "master", SHA: prTip},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: prHead},
	})
	return f
}

// live makes res look as it does while the report stage runs: not
// finished, the report stage not yet recorded.
func live(res *results.Result) *results.Result {
	res.Status, res.ExitCode, res.Error, res.FinishedAt = results.StatusRunning, 0, "", nil
	res.Stages = res.Stages[:len(res.Stages)-1]
	return res
}

// passingPR is the demo's findings, as a run of PR 4242 on master.
func passingPR() *results.Result {
	res := demoResult()
	res.Settings = settings(DefaultRepo, 4242, false)
	res.RunURL = "https://github.com/patchproof/patchproof/actions/runs/9002"
	tr := res.Targets[0]
	tr.Name, tr.Repo = "master", DefaultRepo
	tr.Base = results.CommitRef{Ref: "master", Commit: prBase, BranchTip: prTip, IsMergeBase: true}
	tr.Head = results.CommitRef{Ref: checkout.PRRef(4242), Commit: prHead, Subject: "mysqlnd: use relaxed atomics for statistics"}
	return res
}

// reportRun runs the report stage over res as the pipeline does, and
// returns the run and everything it printed.
func reportRun(t *testing.T, cfg Config, res *results.Result) (*Run, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	r, progress := newTestRun(t, cfg)
	r.Result, r.file.res = res, res
	runStages(context.Background(), r, []Stage{reportStage{}}, record, selected, logged)
	finish(context.Background(), r)
	log, _ := os.ReadFile(filepath.Join(r.Dir, "logs", "report.log"))
	return r, stdout.String() + stderr.String() + progress.String() + string(log)
}

func reportStatus(r *Run) *results.StageResult { return r.stageResult("report") }

func TestReportStagePostsOneComment(t *testing.T) {
	f := newPRFake(t)
	stepSummary := filepath.Join(t.TempDir(), "step-summary.md")
	e := env{"GITHUB_TOKEN": reportToken, "GITHUB_RUN_ID": "1001", "GITHUB_STEP_SUMMARY": stepSummary}
	cfg := Config{Repo: DefaultRepo, PR: 4242, Post: true, GitHubAPI: f.URL(), Getenv: e.get, Out: "unused"}
	var printed []string
	bodyOf := func() (string, int64) {
		t.Helper()
		cs := f.Comments("php", "php-src", 4242)
		if len(cs) != 1 {
			t.Fatalf("%d comments on the PR, want 1", len(cs))
		}
		return cs[0].Body, cs[0].ID
	}

	// A failing run creates the comment and marks the head commit failed.
	r, out := reportRun(t, cfg, live(failingResult()))
	printed = append(printed, out)
	if s := reportStatus(r); s.Status != results.StatusPassed {
		t.Fatalf("report stage: %s %s", s.Status, s.Error)
	}
	body, id := bodyOf()
	summary, err := os.ReadFile(filepath.Join(r.Dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- patchproof:v1 key=summary run=1001 -->\n" + string(summary); body != want {
		t.Errorf("comment is not the marker and summary.md:\n%s", cmp.Diff(want, body))
	}
	if !strings.HasPrefix(string(summary), "## ❌ patchproof: a check failed") {
		t.Errorf("summary.md does not open with the verdict:\n%.200s", summary)
	}
	if r.Result.Status != results.StatusFailed {
		t.Errorf("results.json status %s, want failed, as the report says", r.Result.Status)
	}
	step, _ := os.ReadFile(stepSummary)
	if !bytes.Contains(step, summary) {
		t.Error("$GITHUB_STEP_SUMMARY does not have the summary")
	}
	want := []githubfake.Status{{State: "failure", Context: "patchproof",
		Description: "failed: build: 1 of 4 builds failed (master head/zts); codediff: master: NTS machine code changed: ext/mysqlnd/mysqlnd_statistics.o:mysqlnd…",
		TargetURL:   "https://github.com/patchproof/patchproof/actions/runs/9001", Creator: "patchproof-bot"}}
	if d := cmp.Diff(want, f.Statuses("php", "php-src", prHead)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}

	// The next run (a fix pushed) updates the same comment.
	e["GITHUB_RUN_ID"] = "1002"
	r, out = reportRun(t, cfg, live(passingPR()))
	printed = append(printed, out)
	if s := reportStatus(r); s.Status != results.StatusPassed {
		t.Fatalf("report stage: %s %s", s.Status, s.Error)
	}
	body2, id2 := bodyOf()
	if id2 != id || !strings.HasPrefix(body2, "<!-- patchproof:v1 key=summary run=1002 -->\n## ✅ patchproof: passed") {
		t.Errorf("second run: comment %d (first %d) begins %.80q", id2, id, body2)
	}
	if st := f.Statuses("php", "php-src", prHead); len(st) != 2 || st[1].State != "success" ||
		st[1].Description != "passed: master NTS 484/484 identical" {
		t.Errorf("statuses after the second run: %+v", st)
	}

	// The same run again changes nothing.
	writes := func() int { return f.Count("POST", "/") + f.Count("PATCH", "/") + f.Count("DELETE", "/") }
	patches := f.Count("PATCH", "/")
	_, out = reportRun(t, cfg, live(passingPR()))
	printed = append(printed, out)
	if f.Count("PATCH", "/") != patches {
		t.Error("an unchanged comment was edited")
	}

	// An older run finishing late leaves the newer result alone.
	e["GITHUB_RUN_ID"] = "1000"
	_, out = reportRun(t, cfg, live(failingResult()))
	printed = append(printed, out)
	if b, _ := bodyOf(); b != body2 {
		t.Error("an older run overwrote the newer run's comment")
	}

	// A dry run writes nothing and says what it would do.
	e["GITHUB_RUN_ID"] = "1003"
	before := writes()
	dry := cfg
	dry.DryRun = true
	r, out = reportRun(t, dry, live(failingResult()))
	printed = append(printed, out)
	if n := writes() - before; n != 0 {
		t.Errorf("a dry run made %d writes", n)
	}
	if s := reportStatus(r); s.Status != results.StatusPassed {
		t.Errorf("dry run: report stage %s %s", s.Status, s.Error)
	}
	if !strings.Contains(out, fmt.Sprintf("would update comment %d", id)) || !strings.Contains(out, "would set status") {
		t.Errorf("dry run output lacks the plan:\n%.2000s", out)
	}
	if b, _ := bodyOf(); b != body2 {
		t.Error("a dry run changed the comment")
	}

	// The token is never shown: not printed, not logged, not posted.
	for _, p := range printed {
		if strings.Contains(p, reportToken) {
			t.Error("the token was printed")
		}
	}
	for _, c := range f.Comments("php", "php-src", 4242) {
		if strings.Contains(c.Body, reportToken) {
			t.Error("the token was posted")
		}
	}
}

func TestReportStageAfterFailedStages(t *testing.T) {
	// The report runs when everything before it failed, and renders the
	// verdict that results.json ends with.
	var ran []string
	stages := []Stage{
		fakeStage{name: "checkout", ran: &ran},
		fakeStage{name: "build", ran: &ran, err: results.CheckFailed("1 of 4 builds failed")},
		fakeStage{name: "codediff", ran: &ran, err: errors.New("read objects: no such file")},
		reportStage{},
	}
	r, _ := newTestRun(t, Config{Getenv: env{}.get})
	r.Result.Tool, r.Result.StartedAt = "patchproof", started
	runStages(context.Background(), r, stages, record, selected, logged)
	finish(context.Background(), r)
	if s := reportStatus(r); s.Status != results.StatusPassed {
		t.Fatalf("report stage: %s %s", s.Status, s.Error)
	}
	summary, err := os.ReadFile(filepath.Join(r.Dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## ⚠️ patchproof: could not run",
		"- ❌ **build** failed: 1 of 4 builds failed",
		"- ⚠️ **codediff** could not run: read objects: no such file",
	} {
		if !bytes.Contains(summary, []byte(want)) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if r.Result.Status != results.StatusError || r.Result.ExitCode != 2 {
		t.Errorf("results.json: %s/%d, want error/2 as the summary says", r.Result.Status, r.Result.ExitCode)
	}
	if bytes.Contains(summary, []byte("| report |")) {
		t.Error("the stage table shows the report stage while it renders")
	}
}

func TestReportStageWithoutPost(t *testing.T) {
	f := newPRFake(t)
	cfg := Config{Repo: DefaultRepo, PR: 4242, GitHubAPI: f.URL(), Getenv: env{"GITHUB_TOKEN": reportToken}.get}
	r, _ := reportRun(t, cfg, live(passingPR()))
	if _, err := os.Stat(filepath.Join(r.Dir, "summary.md")); err != nil {
		t.Error(err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("without --post, %d requests reached GitHub", n)
	}
}

func TestReportStageDemoPostsNoStatus(t *testing.T) {
	// The demo's commits are not the PR's: posting its report (to show it)
	// makes the comment but marks no commit.
	f := newPRFake(t)
	cfg := Config{PR: 4242, Repo: DefaultRepo, Post: true, GitHubAPI: f.URL(), Getenv: env{"GITHUB_TOKEN": reportToken}.get}
	res := live(demoResult())
	r, out := reportRun(t, cfg, res)
	if s := reportStatus(r); s.Status != results.StatusPassed {
		t.Fatalf("report stage: %s %s", s.Status, s.Error)
	}
	if n := len(f.Comments("php", "php-src", 4242)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
	if n := f.Count("POST", "/repos/php/php-src/statuses/"); n != 0 {
		t.Errorf("%d statuses set on commits the PR does not have", n)
	}
	if !strings.Contains(out, "is not the head of php/php-src#4242") {
		t.Errorf("no note of the status not set:\n%s", out)
	}
	if len(reportStatus(r).Warnings) != 1 {
		t.Errorf("report warnings %q, want the note", reportStatus(r).Warnings)
	}
}

func TestPostErrors(t *testing.T) {
	f := newPRFake(t)
	tok := env{"GITHUB_TOKEN": reportToken}.get
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no PR", Config{Post: true, Getenv: tok}, "no pull request to post to"},
		{"not a GitHub repository", Config{Post: true, PR: 4242, Repo: "/srv/php-src", Getenv: tok}, "--repo /srv/php-src"},
		{"no such PR", Config{Post: true, PR: 77, Repo: DefaultRepo, GitHubAPI: f.URL(), Getenv: tok}, "no such pull request php/php-src#77"},
		{"no token", Config{Post: true, PR: 4242, Repo: DefaultRepo, GitHubAPI: f.URL(), Getenv: env{}.get}, github.ErrNoToken.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Out = t.TempDir()
			_, err := Publish(context.Background(), tt.cfg, []*results.Result{demoResult()})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
	if n := len(f.Comments("php", "php-src", 4242)); n != 0 {
		t.Errorf("%d comments posted by failing posts", n)
	}
}

func TestPostNeedsPRBeforeRunning(t *testing.T) {
	cfg := Config{Post: true, Out: t.TempDir()}
	cfg.setDefaults()
	var ie *results.InputError
	if err := cfg.validate(); !errors.As(err, &ie) || ie.Input != "--post" {
		t.Errorf("validate: %v, want an input error naming --post", err)
	}
}

func TestGitHubAPIFromEnvironment(t *testing.T) {
	cfg := Config{Getenv: env{"PATCHPROOF_GITHUB_API": "https://ghe.example.com/api/v3/"}.get}
	cfg.setDefaults()
	if cfg.GitHubAPI != "https://ghe.example.com/api/v3/" {
		t.Errorf("GitHubAPI = %q", cfg.GitHubAPI)
	}
	cfg = Config{GitHubAPI: "http://flag/", Getenv: env{"PATCHPROOF_GITHUB_API": "http://env/"}.get}
	cfg.setDefaults()
	if cfg.GitHubAPI != "http://flag/" {
		t.Errorf("the flag lost to the environment: %q", cfg.GitHubAPI)
	}
}

func TestRunStamp(t *testing.T) {
	later := demoResult()
	later.StartedAt = started.Add(90 * 1e9)
	for _, tt := range []struct {
		env  env
		want string
	}{
		{env{"GITHUB_RUN_ID": "123456"}, "123456"},
		{env{"GITHUB_RUN_ID": "not-a-number"}, "2025-06-01T12:01:30Z"},
		{env{}, "2025-06-01T12:01:30Z"},
	} {
		if got := runStamp(tt.env.get, []*results.Result{demoResult(), later}); got != tt.want {
			t.Errorf("runStamp(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestPostTarget(t *testing.T) {
	fork := passingPR()
	fork.Settings.Repo = "https://github.com/alice/php-src.git"
	for _, tt := range []struct {
		name    string
		cfg     Config
		results []*results.Result
		want    string
	}{
		{"the run's own PR", Config{Repo: DefaultRepo, PR: 4242}, []*results.Result{passingPR()}, "php/php-src#4242"},
		{"from results.json", Config{}, []*results.Result{demoResult(), passingPR()}, "php/php-src#4242"},
		{"the results' repository", Config{}, []*results.Result{fork}, "alice/php-src#4242"},
		{"--pr for the demo", Config{PR: 7}, []*results.Result{demoResult()}, "php/php-src#7"},
		{"--pr and --repo win", Config{PR: 7, Repo: "git@ghe.example.com:team/php-src.git"}, []*results.Result{passingPR()}, "team/php-src#7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := postTarget(&tt.cfg, tt.results)
			if err != nil || got.String() != tt.want {
				t.Errorf("postTarget = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}
