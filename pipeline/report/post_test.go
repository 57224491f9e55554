package report

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/pipeline/github"
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
