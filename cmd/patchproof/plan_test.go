package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

const (
	planToken = "ghs_PlanJobT0kenThatMustNeverBeSeen00001"
	planHead  = "2222222222222222222222222222222222222222"
	planTool  = "4444444444444444444444444444444444444444"
)

var planCommentAt = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// planFake is php/php-src#1 from alice's fork, its head pushed an hour
// before the comment, patchproof's main at planTool, and two users: a
// maintainer and a member who may only read.
func planFake(t *testing.T) *githubfake.Fake {
	t.Helper()
	for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "GITHUB_REPOSITORY",
		"GITHUB_SHA", "GITHUB_API_URL", "DEFAULT_BACKPORT_TO", "DEFAULT_BUILDER", "TOOL_REPOSITORY", "TOOL_REF"} {
		t.Setenv(k, "")
	}
	cleanEnv(t)
	t.Setenv("GH_TOKEN", planToken) // as validate.yml passes it
	f := githubfake.New(t)
	f.AddAppToken("github-actions[bot]", planToken)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: planHead}})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", After: planHead, Time: planCommentAt.Add(-time.Hour)})
	f.AddRef("patchproof", "patchproof", "main", planTool)
	f.SetPermission("php", "php-src", "maintainer", "maintain")
	f.SetPermission("php", "php-src", "member", "read")
	return f
}

// commentFile writes an issue_comment payload by user and returns its path.
func commentFile(t *testing.T, user, body string) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"action":     "created",
		"repository": map[string]any{"full_name": "php/php-src"},
		"sender":     map[string]any{"login": user},
		"issue":      map[string]any{"number": 1, "pull_request": map[string]any{}},
		"comment": map[string]any{"body": body, "created_at": planCommentAt.Format(time.RFC3339),
			"user": map[string]any{"login": user}, "author_association": "MEMBER"},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runPlan(t *testing.T, f *githubfake.Fake, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"plan", "--github-api", f.URL(), "--event-name", "issue_comment", "--repository", "php/php-src"}, args...)
	err := patchproof(context.Background(), &stdout, &stderr, args)
	return exitCode(&stderr, err), stdout.String(), stderr.String()
}

const planOutputs = `repo=php/php-src
owner=php
name=php-src
pr=1
base=master
head_sha=` + planHead + `
backport_to=PHP-8.4
builder=docker
targets=["master","PHP-8.4"]
matrix={"include":[{"target":"master","slug":"master"},{"target":"PHP-8.4","slug":"PHP-8.4"}]}
tool_repo=patchproof/patchproof
tool_sha=` + planTool + `
`

// A maintainer's comment appends the outputs to the file the job already
// has, and logs a notice.
func TestPlanComment(t *testing.T) {
	f := planFake(t)
	out := filepath.Join(t.TempDir(), "github_output")
	os.WriteFile(out, []byte("earlier=1\n"), 0o644)
	code, stdout, stderr := runPlan(t, f, "--event", commentFile(t, "maintainer", "/patchproof PHP-8.4\r\nThanks!"), "--output", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(out)
	if d := cmp.Diff("earlier=1\n"+planOutputs, string(got)); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing with --output", stdout)
	}
	if want := "::notice::php/php-src#1 at 222222222222 (pushed at 2025-06-01T11:00:00Z, before the comment): targets master PHP-8.4;"; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want it to start %q", stderr, want)
	}
	if strings.Contains(stderr, planToken) {
		t.Error("the token was printed")
	}
}

// With no --output and no $GITHUB_OUTPUT, the outputs go to stdout.
func TestPlanStdout(t *testing.T) {
	f := planFake(t)
	code, stdout, stderr := runPlan(t, f, "--event", commentFile(t, "maintainer", "/patchproof PHP-8.4"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := cmp.Diff(planOutputs, stdout); d != "" {
		t.Errorf("stdout (-want +got):\n%s", d)
	}
}

// A refused trigger writes no output, neither a new file nor a line in the
// job's, and says why in one ::error:: line, exit status 2.
func TestPlanRefused(t *testing.T) {
	tests := []struct {
		name, user, body string
		setup            func(f *githubfake.Fake)
		args             []string
		want             string
	}{
		{name: "a member who may only read", user: "member", body: "/patchproof",
			want: "::error::patchproof plan: trigger refused: member has permission read on php/php-src: triggering a run needs write, maintain or admin\n"},
		{name: "a push after the comment", user: "maintainer", body: "/patchproof",
			setup: func(f *githubfake.Fake) {
				f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", After: planHead, Time: planCommentAt.Add(time.Minute)})
			},
			want: "::error::patchproof plan: trigger refused: the head of php/php-src#1, " + planHead +
				", was pushed at 2025-06-01T12:01:00Z, after the comment at 2025-06-01T12:00:00Z: comment again or name the commit: /patchproof SHA\n"},
		{name: "a bad branch", user: "maintainer", body: "/patchproof PHP-8.4,$(id)",
			want: "::error::patchproof plan: trigger refused: bad backport branch: $(id)\n"},
		{name: "the tool's ref is gone", user: "maintainer", body: "/patchproof",
			args: []string{"--tool-ref", "no-such-branch"},
			want: "::error::patchproof plan: resolve patchproof/patchproof@no-such-branch: GET " + "URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := planFake(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			dir := t.TempDir()
			fresh, existing := filepath.Join(dir, "fresh"), filepath.Join(dir, "existing")
			os.WriteFile(existing, []byte("earlier=1\n"), 0o644)
			for _, out := range []string{fresh, existing} {
				code, stdout, stderr := runPlan(t, f, append([]string{"--event", commentFile(t, tt.user, tt.body), "--output", out}, tt.args...)...)
				if code != 2 {
					t.Errorf("exit %d, want 2", code)
				}
				want := strings.ReplaceAll(tt.want, "URL", strings.TrimSuffix(f.URL(), "/"))
				if !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("stderr %q, want one line starting %q", stderr, want)
				}
				if stdout != "" {
					t.Errorf("stdout %q, want nothing", stdout)
				}
			}
			if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused trigger made the output file: %v", err)
			}
			if got, _ := os.ReadFile(existing); string(got) != "earlier=1\n" {
				t.Errorf("a refused trigger wrote %q to the job's outputs", got)
			}
		})
	}
}

func TestPlanUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := patchproof(context.Background(), &stdout, &stderr, []string{"help"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "patchproof plan [--event FILE]") {
		t.Errorf("usage does not name plan:\n%s", stdout.String())
	}
	stdout.Reset()
	err := patchproof(context.Background(), &stdout, &stderr, []string{"plan", "-h"})
	if code := exitCode(&stderr, err); code != 0 {
		t.Errorf("plan -h: exit %d", code)
	}
	for _, want := range []string{"/patchproof [BRANCH,BRANCH...|none] [SHA]", "-event FILE", "-output FILE", "-default-backport-to"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("plan -h does not say %q:\n%s", want, stderr.String())
		}
	}
	stderr.Reset()
	if code := exitCode(&stderr, patchproof(context.Background(), &stdout, &stderr, []string{"plan", "extra"})); code != 2 {
		t.Errorf("plan extra: exit %d, want 2", code)
	}
}
