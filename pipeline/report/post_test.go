package report

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

func TestRunStamp(t *testing.T) {
	later := resultstest.Demo()
	later.StartedAt = resultstest.Started.Add(90 * time.Second)
	for _, tt := range []struct {
		runID, want string
	}{
		{"123456", "123456"},
		{"not-a-number", "2025-06-01T12:01:30Z"},
		{"", "2025-06-01T12:01:30Z"},
	} {
		if got := runStamp(tt.runID, []*results.Result{resultstest.Demo(), later}); got != tt.want {
			t.Errorf("runStamp(%q) = %q, want %q", tt.runID, got, tt.want)
		}
	}
}

func TestPostTarget(t *testing.T) {
	fork := resultstest.PassingPR()
	fork.Settings.Repo = "https://github.com/alice/php-src.git"
	team := github.Repo{Host: "ghe.example.com", Owner: "team", Name: "php-src"}
	local := resultstest.PassingPR()
	local.Settings.Repo = "/srv/php-src"
	noPR := resultstest.PassingPR()
	noPR.Settings.Repo, noPR.Settings.PR = "https://github.com/alice/php-src", 0
	for _, tt := range []struct {
		name string
		opt  Options
		rs   []*results.Result
		want string
	}{
		{"the run's own PR", Options{PR: github.PullRequest{Repo: github.PHPSrc, Number: 4242}}, []*results.Result{resultstest.PassingPR()}, "php/php-src#4242"},
		{"from results.json", Options{}, []*results.Result{resultstest.Demo(), resultstest.PassingPR()}, "php/php-src#4242"},
		{"the results' repository", Options{}, []*results.Result{fork}, "alice/php-src#4242"},
		{"a number for the demo", Options{PR: github.PullRequest{Number: 7}}, []*results.Result{resultstest.Demo()}, "php/php-src#7"},
		{"the options win", Options{PR: github.PullRequest{Repo: team, Number: 7}}, []*results.Result{resultstest.PassingPR()}, "team/php-src#7"},
		{"a local repository with --repo", Options{PR: github.PullRequest{Repo: team, Number: 7}}, []*results.Result{local}, "team/php-src#7"},
		{"the results' repository without a PR", Options{PR: github.PullRequest{Number: 7}}, []*results.Result{noPR}, "alice/php-src#7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.opt.target(tt.rs)
			if err != nil || got.String() != tt.want {
				t.Errorf("target = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestPostErrors(t *testing.T) {
	f := resultstest.PRFake(t)
	tok := resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get
	php := func(n int) github.PullRequest { return github.PullRequest{Repo: github.PHPSrc, Number: n} }
	for _, tt := range []struct {
		name string
		opt  Options
		want string
	}{
		{"no PR", Options{GitHub: github.Options{Getenv: tok}}, "no pull request to post to"},
		{"not a GitHub repository", Options{PR: github.PullRequest{Number: 4242}, NotOnGitHub: "/srv/php-src", GitHub: github.Options{Getenv: tok}}, "--repo /srv/php-src"},
		{"no such PR", Options{PR: php(77), GitHub: github.Options{BaseURL: f.URL(), Getenv: tok}}, "no such pull request php/php-src#77"},
		{"no token", Options{PR: php(4242), GitHub: github.Options{BaseURL: f.URL(), Getenv: resultstest.Env{}.Get}}, github.ErrNoToken.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Out, tt.opt.Post = t.TempDir(), true
			_, err := Publish(context.Background(), tt.opt, []*results.Result{resultstest.Demo()})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
	if n := len(f.Comments("php", "php-src", 4242)); n != 0 {
		t.Errorf("%d comments posted by failing posts", n)
	}
}

// A result of a repository that is not on GitHub names no PR of
// php/php-src: posting it needs --repo (or --post-to).
func TestPostTargetLocalRepository(t *testing.T) {
	for _, repo := range []string{"/srv/php-src", "file:///srv/php-src.git"} {
		res := resultstest.PassingPR()
		res.Settings.Repo = repo
		for _, opt := range []Options{{}, {PR: github.PullRequest{Number: 4242}}} {
			got, err := opt.target([]*results.Result{res})
			if err == nil || !strings.Contains(err.Error(), repo) || !strings.Contains(err.Error(), "--repo") {
				t.Errorf("%s, options %+v: target %v, %v; want an error naming it and --repo", repo, opt.PR, got, err)
			}
		}
	}
}

func TestCommitStatusIncomplete(t *testing.T) {
	rs := []*results.Result{killedPR()}
	st := commitStatus(rs, results.VerdictOf(rs), "")
	want := "incomplete: tests: running, race: not started"
	if st.State != github.StateError || st.Description != want {
		t.Errorf("status %s %q, want error %q", st.State, st.Description, want)
	}
}

// A run that checked nothing (only the checkout, or every check skipped)
// is posted as such: the headline says so, and the commit status is an
// error, not a success a reviewer would read as the change validated.
func TestPublishNothingChecked(t *testing.T) {
	onlyCheckout := func(status results.Status, reason string) *results.Result {
		res := resultstest.PassingPR()
		for _, s := range res.Stages {
			if s.IsCheck() {
				*s = results.StageResult{Name: s.Name, Status: results.StatusSkipped, Reason: "not selected (--stages)"}
			}
		}
		res.Status, res.ExitCode, res.Error = status, results.Verdict{Status: status}.ExitCode(), reason
		return res
	}
	notAvailable := resultstest.PassingPR()
	for _, s := range notAvailable.Stages {
		if s.IsCheck() {
			*s = results.StageResult{Name: s.Name, Status: results.StatusNotAvailable, Reason: "no valgrind"}
		}
	}
	for _, tt := range []struct {
		name string
		res  *results.Result
	}{
		{"only the checkout, recorded as a pass", onlyCheckout(results.StatusPassed, "")},
		{"only the checkout, recorded as it is now", onlyCheckout(results.StatusError, results.NothingCheckedReason)},
		{"no check available", notAvailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := resultstest.PRFake(t)
			opt := Options{Out: t.TempDir(), Post: true, PR: github.PullRequest{Repo: github.PHPSrc, Number: 4242},
				GitHub: github.Options{BaseURL: f.URL(), Getenv: resultstest.Env{"GITHUB_TOKEN": resultstest.Token}.Get}}
			pub, err := Publish(context.Background(), opt, []*results.Result{tt.res})
			if err != nil {
				t.Fatal(err)
			}
			if v := pub.Verdict; v.Status != results.StatusError || !v.NothingChecked || v.ExitCode() != 2 {
				t.Errorf("verdict %+v (exit %d), want an error that nothing was checked, exit 2", v, v.ExitCode())
			}
			cs := f.Comments("php", "php-src", 4242)
			if len(cs) != 1 {
				t.Fatalf("%d comments, want 1", len(cs))
			}
			_, body, _ := strings.Cut(cs[0].Body, "\n")
			if !strings.HasPrefix(body, "## ⚪ patchproof: nothing was checked\n") || strings.Contains(body, "could not run") {
				t.Errorf("comment does not say that nothing was checked, and only that:\n%.400s", body)
			}
			want := []githubfake.Status{{State: "error", Context: "patchproof", Description: "nothing was checked (run 2025-06-01T12:00:00Z)",
				TargetURL: tt.res.RunURL, Creator: "patchproof-bot"}}
			if d := cmp.Diff(want, f.Statuses("php", "php-src", resultstest.PRHead)); d != "" {
				t.Errorf("statuses (-want +got):\n%s", d)
			}
		})
	}
}
