package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// reportRun ends a run whose stages left res, as the pipeline does, and
// returns the run and everything it printed.
func reportRun(t *testing.T, cfg Config, res *results.Result) (*Run, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	r, progress := newTestRun(t, cfg)
	r.Result, r.file.res = res, res
	finish(context.Background(), r)
	log, _ := os.ReadFile(filepath.Join(r.Dir, "logs", "report.log"))
	return r, stdout.String() + stderr.String() + progress.String() + string(log)
}

// ended checks that the run ended as want says, in memory and in the
// results.json it wrote last.
func ended(t *testing.T, r *Run, want results.Status, code int) {
	t.Helper()
	disk, err := results.Read(r.file.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*results.Result{r.Result, disk} {
		if res.Status != want || res.ExitCode != code || res.FinishedAt == nil {
			t.Errorf("run ended %s/%d (%q), finished at %v; want %s/%d", res.Status, res.ExitCode, res.Error, res.FinishedAt, want, code)
		}
	}
	if slices.ContainsFunc(disk.Stages, func(s *results.StageResult) bool { return s.Name == "report" }) {
		t.Error("results.json records the report as a stage")
	}
}

func TestReportPostsOneComment(t *testing.T) {
	f := resultstest.PRFake(t)
	stepSummary := filepath.Join(t.TempDir(), "step-summary.md")
	e := resultstest.Env{"GITHUB_TOKEN": resultstest.Token, "GITHUB_RUN_ID": "1001", "GITHUB_STEP_SUMMARY": stepSummary}
	cfg := Config{Repo: DefaultRepo, PR: 4242, Post: true, GitHubAPI: f.URL(), Getenv: e.Get, Out: "unused"}
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
	r, out := reportRun(t, cfg, resultstest.Live(resultstest.Failing()))
	printed = append(printed, out)
	ended(t, r, results.StatusFailed, 1)
	body, id := bodyOf()
	summary, err := os.ReadFile(filepath.Join(r.Dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Then the run's entry for the list of earlier runs, in its marker.
	shown, history, _ := strings.Cut(body, "\n<!-- patchproof:history v1 ")
	if want := "<!-- patchproof:v1 key=summary run=1001 -->\n" + string(summary); shown != strings.TrimRight(want, "\n")+"\n" {
		t.Errorf("comment is not the marker and summary.md:\n%s", cmp.Diff(want, shown))
	}
	if history == "" || strings.Count(history, "\n") != 1 {
		t.Errorf("the comment does not end with one history marker:\n%s", body)
	}
	if !strings.HasPrefix(string(summary), "## ❌ patchproof: a check failed") {
		t.Errorf("summary.md does not open with the verdict:\n%.200s", summary)
	}
	step, _ := os.ReadFile(stepSummary)
	if !bytes.Contains(step, summary) {
		t.Error("$GITHUB_STEP_SUMMARY does not have the summary")
	}
	want := []githubfake.Status{{State: "failure", Context: "patchproof",
		Description: "failed: build: 1 of 4 builds failed (master head/zts); codediff: master: NTS machine code changed: ext/mysqlnd/mysqlnd_statistic… (run 1001)",
		TargetURL:   "https://github.com/patchproof/patchproof/actions/runs/9001", Creator: "patchproof-bot"}}
	if d := cmp.Diff(want, f.Statuses("php", "php-src", resultstest.PRHead)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}

	// The next run (a fix pushed) updates the same comment.
	e["GITHUB_RUN_ID"] = "1002"
	r, out = reportRun(t, cfg, resultstest.Live(resultstest.PassingPR()))
	printed = append(printed, out)
	ended(t, r, results.StatusPassed, 0)
	body2, id2 := bodyOf()
	if id2 != id || !strings.HasPrefix(body2, "<!-- patchproof:v1 key=summary run=1002 -->\n## ✅ patchproof: passed") {
		t.Errorf("second run: comment %d (first %d) begins %.80q", id2, id, body2)
	}
	if st := f.Statuses("php", "php-src", resultstest.PRHead); len(st) != 2 || st[1].State != "success" ||
		st[1].Description != "passed: master NTS 484/484 identical (run 1002)" {
		t.Errorf("statuses after the second run: %+v", st)
	}

	// The same run again changes nothing.
	writes := func() int { return f.Count("POST", "/") + f.Count("PATCH", "/") + f.Count("DELETE", "/") }
	patches := f.Count("PATCH", "/")
	_, out = reportRun(t, cfg, resultstest.Live(resultstest.PassingPR()))
	printed = append(printed, out)
	if f.Count("PATCH", "/") != patches {
		t.Error("an unchanged comment was edited")
	}

	// An older run finishing late leaves the newer result alone.
	e["GITHUB_RUN_ID"] = "1000"
	_, out = reportRun(t, cfg, resultstest.Live(resultstest.Failing()))
	printed = append(printed, out)
	if b, _ := bodyOf(); b != body2 {
		t.Error("an older run overwrote the newer run's comment")
	}
	if st := f.Statuses("php", "php-src", resultstest.PRHead); st[len(st)-1].State != "success" {
		t.Errorf("an older run's failure was set over the newer run's success: %+v", st)
	}

	// A dry run writes nothing and says what it would do.
	e["GITHUB_RUN_ID"] = "1003"
	before := writes()
	dry := cfg
	dry.DryRun = true
	r, out = reportRun(t, dry, resultstest.Live(resultstest.Failing()))
	printed = append(printed, out)
	if n := writes() - before; n != 0 {
		t.Errorf("a dry run made %d writes", n)
	}
	ended(t, r, results.StatusFailed, 1)
	if !strings.Contains(out, fmt.Sprintf("would update comment %d", id)) || !strings.Contains(out, "would set status") {
		t.Errorf("dry run output lacks the plan:\n%.2000s", out)
	}
	if b, _ := bodyOf(); b != body2 {
		t.Error("a dry run changed the comment")
	}

	// The token is never shown: not printed, not logged, not posted.
	for _, p := range printed {
		if strings.Contains(p, resultstest.Token) {
			t.Error("the token was printed")
		}
	}
	for _, c := range f.Comments("php", "php-src", 4242) {
		if strings.Contains(c.Body, resultstest.Token) {
			t.Error("the token was posted")
		}
	}
}

func TestReportAfterFailedStages(t *testing.T) {
	// The report follows whatever the stages did, and renders the verdict
	// that results.json ends with.
	var ran []string
	stages := []Stage{
		fakeStage{name: "checkout", ran: &ran},
		fakeStage{name: "build", ran: &ran, err: results.CheckFailed("1 of 4 builds failed")},
		fakeStage{name: "codediff", ran: &ran, err: errors.New("read objects: no such file")},
	}
	r, _ := newTestRun(t, Config{Getenv: resultstest.Env{}.Get})
	r.Result.Tool, r.Result.StartedAt = "patchproof", resultstest.Started
	runStages(context.Background(), r, stages, record, selected, logged)
	finish(context.Background(), r)
	ended(t, r, results.StatusError, 2)
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
}

func TestReportWithoutPost(t *testing.T) {
	f := resultstest.PRFake(t)
	cfg := Config{Repo: DefaultRepo, PR: 4242, GitHubAPI: f.URL(), Getenv: resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get}
	r, _ := reportRun(t, cfg, resultstest.Live(resultstest.PassingPR()))
	if _, err := os.Stat(filepath.Join(r.Dir, "summary.md")); err != nil {
		t.Error(err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("without --post, %d requests reached GitHub", n)
	}
	ended(t, r, results.StatusPassed, 0)
}

func TestReportDemoPostsNoStatus(t *testing.T) {
	// The demo's commits are not the PR's: posting its report (to show it)
	// makes the comment but marks no commit.
	f := resultstest.PRFake(t)
	cfg := Config{PR: 4242, Repo: DefaultRepo, Post: true, GitHubAPI: f.URL(), Getenv: resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get}
	r, out := reportRun(t, cfg, resultstest.Live(resultstest.Demo()))
	ended(t, r, results.StatusPassed, 0)
	if n := len(f.Comments("php", "php-src", 4242)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
	if n := f.Count("POST", "/repos/php/php-src/statuses/"); n != 0 {
		t.Errorf("%d statuses set on commits the PR does not have", n)
	}
	if !strings.Contains(out, "is not the head of php/php-src#4242") {
		t.Errorf("no note of the status not set:\n%s", out)
	}
	disk, err := results.Read(r.file.path)
	if err != nil {
		t.Fatal(err)
	}
	if len(disk.Warnings) != 1 || !strings.Contains(disk.Warnings[0], "is not the head of php/php-src#4242") {
		t.Errorf("results.json warnings %q, want the note", disk.Warnings)
	}
}

// A report that cannot be delivered is the run's error (exit 2), whatever
// the checks found, and results.json says so.
func TestReportNotDelivered(t *testing.T) {
	f := resultstest.PRFake(t)
	for _, tt := range []struct {
		name string
		res  *results.Result
		want string // the run's error
	}{
		{"checks passed", resultstest.Live(resultstest.PassingPR()), "report: "},
		{"a check failed", resultstest.Live(resultstest.Failing()), "report: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Repo: DefaultRepo, PR: 4242, Post: true, GitHubAPI: f.URL(), Getenv: resultstest.Env{}.Get}
			r, _ := reportRun(t, cfg, tt.res)
			ended(t, r, results.StatusError, 2)
			if !strings.HasPrefix(r.Result.Error, tt.want) || !strings.Contains(r.Result.Error, github.ErrNoToken.Error()) {
				t.Errorf("the run's error %q, want the report's (%s)", r.Result.Error, github.ErrNoToken)
			}
		})
	}
}

// results.json has the run's verdict only once its report is delivered:
// a run killed while it posts reads as incomplete, not as passed.
func TestResultsFinalAfterReport(t *testing.T) {
	var r *Run
	var seen []*results.Result
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if res, err := results.Read(r.file.path); err == nil {
			seen = append(seen, res)
		}
		http.Error(w, `{"message": "Bad credentials"}`, http.StatusUnauthorized)
	}))
	defer api.Close()
	cfg := Config{Repo: DefaultRepo, PR: 4242, Post: true, GitHubAPI: api.URL + "/",
		Getenv: resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get}
	r, _ = newTestRun(t, cfg)
	res := resultstest.Live(resultstest.PassingPR())
	r.Result, r.file.res = res, res
	r.save() // as the last stage left it
	finish(context.Background(), r)
	if len(seen) == 0 {
		t.Fatal("the report never asked GitHub")
	}
	for _, s := range seen {
		if v := results.VerdictOf([]*results.Result{s}); v.Status != results.StatusIncomplete {
			t.Errorf("while the report posts, results.json reads %s (%s), want incomplete", v.Status, v.Reason)
		}
	}
	ended(t, r, results.StatusError, 2)
}

// An interrupted run writes its summary (incomplete), never posts, and
// ends incomplete whatever its stages said.
func TestReportInterrupted(t *testing.T) {
	f := resultstest.PRFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Repo: DefaultRepo, PR: 4242, Post: true, GitHubAPI: f.URL(), Getenv: resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get}
	r, _ := newTestRun(t, cfg)
	res := resultstest.Live(resultstest.PassingPR())
	r.Result, r.file.res = res, res
	finish(ctx, r)
	ended(t, r, results.StatusIncomplete, 2)
	summary, err := os.ReadFile(filepath.Join(r.Dir, "summary.md"))
	if err != nil || !strings.Contains(string(summary), "incomplete") {
		t.Errorf("summary.md %.200q, %v; want one saying incomplete", summary, err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("an interrupted run sent %d requests to GitHub", n)
	}
}

func TestPostErrors(t *testing.T) {
	f := resultstest.PRFake(t)
	tok := resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no PR", Config{Post: true, Getenv: tok}, "no pull request to post to"},
		{"not a GitHub repository", Config{Post: true, PR: 4242, Repo: "/srv/php-src", Getenv: tok}, "--repo /srv/php-src"},
		{"no such PR", Config{Post: true, PR: 77, Repo: DefaultRepo, GitHubAPI: f.URL(), Getenv: tok}, "no such pull request php/php-src#77"},
		{"no token", Config{Post: true, PR: 4242, Repo: DefaultRepo, GitHubAPI: f.URL(), Getenv: resultstest.Env{}.Get}, github.ErrNoToken.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Out = t.TempDir()
			_, err := report.Publish(context.Background(), tt.cfg.ReportOptions(), []*results.Result{resultstest.Demo()})
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
	cfg := Config{Getenv: resultstest.Env{"PATCHPROOF_GITHUB_API": "https://ghe.example.com/api/v3/"}.Get}
	cfg.setDefaults()
	if cfg.GitHubAPI != "https://ghe.example.com/api/v3/" {
		t.Errorf("GitHubAPI = %q", cfg.GitHubAPI)
	}
	cfg = Config{GitHubAPI: "http://flag/", Getenv: resultstest.Env{"PATCHPROOF_GITHUB_API": "http://env/"}.Get}
	cfg.setDefaults()
	if cfg.GitHubAPI != "http://flag/" {
		t.Errorf("the flag lost to the environment: %q", cfg.GitHubAPI)
	}
}

func TestReportOptions(t *testing.T) {
	e := resultstest.Env{"GITHUB_STEP_SUMMARY": "/tmp/step.md", "GITHUB_RUN_ID": "9001", "GITHUB_ACTIONS": "true", "GITHUB_TOKEN": "t"}
	for _, tt := range []struct {
		name        string
		cfg         Config
		pr          string // the options' PR, as OWNER/REPO#N
		notOnGitHub string
	}{
		{"the run's own PR", Config{Repo: DefaultRepo, PR: 4242}, "php/php-src#4242", ""},
		{"nothing given", Config{}, "/#0", ""},
		{"--pr alone", Config{PR: 7}, "php/php-src#7", ""},
		{"--pr and --repo", Config{PR: 7, Repo: "git@ghe.example.com:team/php-src.git"}, "team/php-src#7", ""},
		{"a repository not on GitHub", Config{PR: 4242, Repo: "/srv/php-src"}, "/#4242", "/srv/php-src"},
		{"--post-to wins", Config{PR: 4242, Repo: "/srv/php-src", PostTo: "https://github.com/php/php-src/pull/24448"}, "php/php-src#24448", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Getenv = e.Get
			opt := tt.cfg.ReportOptions()
			if got := opt.PR.String(); got != tt.pr || opt.NotOnGitHub != tt.notOnGitHub {
				t.Errorf("PR %s, not on GitHub %q; want %s, %q", got, opt.NotOnGitHub, tt.pr, tt.notOnGitHub)
			}
			if opt.StepSummary != "/tmp/step.md" || opt.RunID != "9001" || opt.GitHub.Login != "github-actions[bot]" {
				t.Errorf("from the environment: step summary %q, run %q, login %q", opt.StepSummary, opt.RunID, opt.GitHub.Login)
			}
			// What it prints quotes the PR: it starts no command.
			var out bytes.Buffer
			tt.cfg.Stdout = &out
			fmt.Fprint(tt.cfg.ReportOptions().Stdout, "```\n::add-mask::x\n```\n")
			if !strings.HasPrefix(out.String(), "::stop-commands::") {
				t.Errorf("stdout under Actions is printed with the commands on: %q", out.String())
			}
		})
	}
}
