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

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/trigger"
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
	f.AddBranch("php", "php-src", "PHP-8.4", strings.Repeat("5", 40))
	f.AddBranch("php", "php-src", "PHP-8.5", strings.Repeat("6", 40))
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
merge_up=
builder=docker
targets=["master","PHP-8.4"]
matrix={"include":[{"target":"master","slug":"master"},{"target":"PHP-8.4","slug":"PHP-8.4"}]}
tool_repo=patchproof/patchproof
tool_sha=` + planTool + `
bench=
threads=
stages=
supersedes=false
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
	for _, want := range []string{"/patchproof [BRANCH,BRANCH...|none] [SHA]", "--event FILE", "--output FILE", "--default-backport-to", "--answer"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("plan -h does not say %q:\n%s", want, stdout.String())
		}
	}
	stderr.Reset()
	if code := exitCode(&stderr, patchproof(context.Background(), &stdout, &stderr, []string{"plan", "extra"})); code != 2 {
		t.Errorf("plan extra: exit %d, want 2", code)
	}
}

const planOld = "3333333333333333333333333333333333333333"

// ourStatuses are the statuses github-actions[bot] set on sha, oldest
// first, as "state description".
func ourStatuses(f *githubfake.Fake, sha string) []string {
	var out []string
	for _, s := range f.Statuses("php", "php-src", sha) {
		if s.Creator == "github-actions[bot]" && s.Context == "patchproof" {
			out = append(out, string(s.State)+" "+s.Description)
		}
	}
	return out
}

// An accepted trigger, with --answer, is acknowledged by a pending status
// on the head, which the report's verdict of the same run then replaces.
func TestPlanAnswerAccepted(t *testing.T) {
	f := planFake(t)
	code, stdout, stderr := runPlan(t, f, "--answer", "--run-id", "500", "--run-url", "https://example.test/run/500",
		"--github-login", "github-actions[bot]", "--event", commentFile(t, "maintainer", "/patchproof PHP-8.4, PHP-8.5 bench=report"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{`targets=["master","PHP-8.4","PHP-8.5"]`, "bench=report", "supersedes=false"} {
		if !strings.Contains(stdout, line+"\n") {
			t.Errorf("outputs lack %q:\n%s", line, stdout)
		}
	}
	want := []string{"pending queued: master, PHP-8.4, PHP-8.5; bench=report (run 500)"}
	if d := cmp.Diff(want, ourStatuses(f, planHead)); d != "" {
		t.Fatalf("statuses after the plan (-want +got):\n%s", d)
	}
	// The report job of the same run sets the verdict over it.
	c, err := github.New(github.Options{BaseURL: f.URL(), Login: "github-actions[bot]", Getenv: func(k string) string {
		if k == "GITHUB_TOKEN" {
			return planToken
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := c.SetStatus(context.Background(), "php", "php-src", planHead, github.Status{State: github.StateSuccess, Description: "passed", Run: "500"})
	if err != nil || set.Action != github.Created {
		t.Fatalf("the report's status: %v, %v", set.Action, err)
	}
	st, ok, err := c.ShownStatus(context.Background(), "php", "php-src", planHead, "")
	if err != nil || !ok || st.State != github.StateSuccess {
		t.Errorf("the status shown is %+v (%v, %v), want the success", st, ok, err)
	}
	if n := len(f.Comments("php", "php-src", 1)); n != 0 {
		t.Errorf("an accepted trigger left %d comments, want none", n)
	}
}

// A refused trigger, with --answer, gets a reply of one line saying why
// and where the grammar is, the comment's own words escaped; the plan
// still writes nothing and exits 2.
func TestPlanAnswerRefused(t *testing.T) {
	f := planFake(t)
	code, stdout, stderr := runPlan(t, f, "--answer", "--run-id", "501", "--github-login", "github-actions[bot]",
		"--event", commentFile(t, "maintainer", "/patchproof PHP-8.4,<img>@everyone"))
	if code != 2 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, stdout)
	}
	if !strings.Contains(stderr, "::error::patchproof plan: trigger refused: bad backport branch: <img") {
		t.Errorf("stderr lacks the refusal:\n%s", stderr)
	}
	cs := f.Comments("php", "php-src", 1)
	if len(cs) != 1 {
		t.Fatalf("%d comments, want one reply", len(cs))
	}
	body := cs[0].Body
	if want := "@maintainer patchproof did not run: bad backport branch: &lt;img&gt;@\u2060everyone. `/patchproof help` shows how to ask.\n"; body != want {
		t.Errorf("reply %q, want %q", body, want)
	}
	if strings.Contains(body, "<img") || strings.HasPrefix(body, "/") {
		t.Errorf("reply is not escaped, or begins with a command:\n%s", body)
	}
	if got := ourStatuses(f, planHead); len(got) != 0 {
		t.Errorf("a refused trigger set statuses %q", got)
	}
	// Who may not trigger is answered too, once a day (TestPlanNoAccess).
	code, _, _ = runPlan(t, f, "--answer", "--github-login", "github-actions[bot]", "--event", commentFile(t, "member", "/patchproof"))
	if cs := f.Comments("php", "php-src", 1); code != 2 || len(cs) != 2 || !strings.Contains(cs[1].Body, "member has permission read") {
		t.Errorf("exit %d; comments %+v; want a second reply naming the permission", code, cs)
	}
}

// Anyone may comment on a public repository's pull requests: the plan acts
// on, and answers, only users with write access. Anyone else's comment,
// whatever it asks (help, words that do not parse, a branch), is refused
// before it is read, and answered in one short line at most once a day on
// a PR: the first since the last day's is, the others are not.
func TestPlanNoAccess(t *testing.T) {
	f := planFake(t)
	f.SetPermission("php", "php-src", "triager", "triage")
	answer := func(user, body string) {
		t.Helper()
		code, stdout, stderr := runPlan(t, f, "--answer", "--run-id", "900", "--github-login", "github-actions[bot]",
			"--event", commentFile(t, user, body))
		if code != 2 || stdout != "" || strings.Count(stderr, "::error::") != 1 ||
			!strings.Contains(stderr, "trigger refused: "+user+" has permission read") {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want 2, nothing, and the refusal", user, body, code, stdout, stderr)
		}
	}
	// A day and more ago, a reply.
	f.SetClock(func() time.Time { return time.Now().Add(-25 * time.Hour) })
	answer("member", "/patchproof")
	// Now: one reply more, for all of these together.
	f.SetClock(time.Now)
	for _, c := range []struct{ user, body string }{
		{"member", "/patchproof"}, {"member", "/patchproof help"}, {"stranger", "/patchproof a b c"},
		{"triager", "/patchproof PHP-8.4"}, {"member", "/patchproof rerun"}, {"stranger", "/patchproof none merge-up=PHP-8.5"},
	} {
		answer(c.user, c.body)
	}
	cs := f.Comments("php", "php-src", 1)
	if len(cs) != 2 {
		t.Fatalf("%d replies, want 2 (a day ago, and the first now)", len(cs))
	}
	for _, c := range cs {
		if c.Author != "github-actions[bot]" || !strings.HasPrefix(c.Body, "@member patchproof did not run: member has permission read on php/php-src") ||
			strings.Contains(c.Body, "/patchproof [BRANCH") || len(c.Body) > 400 {
			t.Errorf("reply by %s of %d bytes, want one short line without the grammar:\n%s", c.Author, len(c.Body), c.Body)
		}
	}
	// Nothing of the PR was read, nothing set on it.
	if n := f.Count("GET", "/repos/php/php-src/pulls/"); n != 0 {
		t.Errorf("the PR was read %d times", n)
	}
	if got := ourStatuses(f, planHead); len(got) != 0 {
		t.Errorf("statuses %q set for users without write access", got)
	}
}

// A word that is neither a command nor a branch of the repository (branch
// names are case-sensitive) is refused, naming it, in one line and a reply
// of one line that points to /patchproof help; it is never planned.
func TestPlanUnknownWords(t *testing.T) {
	for _, tt := range []struct{ body, word string }{
		{"/patchproof rerun", "rerun"},
		{"/patchproof php-8.4", "php-8.4"},
		{"/patchproof PHP-8.4,PHP-8.6", "PHP-8.6"},
		{"/patchproof none merge-up=PHP-8.5,main", "main"},
	} {
		t.Run(tt.body, func(t *testing.T) {
			f := planFake(t)
			code, stdout, stderr := runPlan(t, f, "--answer", "--github-login", "github-actions[bot]", "--event", commentFile(t, "maintainer", tt.body))
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, outputs %q; want 2 and none", code, stdout)
			}
			want := "\n::error::patchproof plan: trigger refused: " + tt.word + " is neither a command nor a branch of php/php-src"
			if !strings.Contains("\n"+stderr, want) || strings.Count(stderr, "::error::") != 1 {
				t.Errorf("stderr %q, want one error line starting %q", stderr, want[1:])
			}
			cs := f.Comments("php", "php-src", 1)
			if len(cs) != 1 || strings.Count(strings.TrimSpace(cs[0].Body), "\n") != 0 ||
				!strings.Contains(cs[0].Body, tt.word+" is neither a command nor a branch") || !strings.Contains(cs[0].Body, "`/patchproof help`") {
				t.Errorf("replies %+v, want one line naming %s and /patchproof help", cs, tt.word)
			}
			if got := ourStatuses(f, planHead); len(got) != 0 {
				t.Errorf("a refused trigger set statuses %q", got)
			}
		})
	}
}

// "/patchproof help" of a maintainer is answered with the grammar; nothing
// is planned, and the plan job succeeds. Anyone else's is refused as any
// comment of theirs is (TestPlanNoAccess).
func TestPlanAnswerHelp(t *testing.T) {
	f := planFake(t)
	out := filepath.Join(t.TempDir(), "github_output")
	code, _, stderr := runPlan(t, f, "--answer", "--github-login", "github-actions[bot]", "--output", out,
		"--event", commentFile(t, "maintainer", "/patchproof help"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("help wrote outputs: %v", err)
	}
	cs := f.Comments("php", "php-src", 1)
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, "@maintainer patchproof validates this pull request") ||
		!strings.Contains(cs[0].Body, trigger.Grammar) {
		t.Fatalf("comments %+v, want one reply with the grammar", cs)
	}
	// Without --answer, nothing is posted.
	if code, _, _ := runPlan(t, f, "--event", commentFile(t, "maintainer", "/patchproof help")); code != 0 || len(f.Comments("php", "php-src", 1)) != 1 {
		t.Errorf("without --answer: exit %d, comments %d", code, len(f.Comments("php", "php-src", 1)))
	}
	// A member who may only read gets no grammar.
	if code, _, _ := runPlan(t, f, "--answer", "--github-login", "github-actions[bot]", "--event", commentFile(t, "member", "/patchproof help")); code != 2 {
		t.Errorf("help of a member: exit %d, want 2", code)
	}
	if cs := f.Comments("php", "php-src", 1); len(cs) != 2 || strings.Contains(cs[1].Body, trigger.Grammar) {
		t.Errorf("help of a member: comments %+v, want a short refusal", cs)
	}
}

// A trigger for the head a run waits for queues behind it; one for a head
// that moved supersedes it: supersedes=true for the jobs, and the earlier
// head's pending status becomes an error that says where the run went.
func TestPlanAnswerSupersedes(t *testing.T) {
	f := planFake(t)
	f.AddRef("alice", "php-src", "old", planOld) // a commit GitHub knows
	f.AddRef("php", "php-src", "old", planOld)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: planOld}})
	plan := func(run, body string) string {
		t.Helper()
		code, stdout, stderr := runPlan(t, f, "--answer", "--run-id", run, "--github-login", "github-actions[bot]",
			"--event", commentFile(t, "maintainer", body))
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", run, code, stderr)
		}
		return stdout
	}
	if out := plan("600", "/patchproof none "+planOld); !strings.Contains(out, "supersedes=false\n") {
		t.Errorf("the first run supersedes something:\n%s", out)
	}
	// The same head again: queued behind the first.
	if out := plan("601", "/patchproof PHP-8.4 "+planOld); !strings.Contains(out, "supersedes=false\n") {
		t.Errorf("a second trigger for the same head supersedes:\n%s", out)
	}
	// The head moves; a trigger for it supersedes the pending run.
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: planHead}})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Before: planOld, After: planHead, Time: planCommentAt.Add(-time.Minute)})
	if out := plan("602", "/patchproof none "+planHead); !strings.Contains(out, "supersedes=true\n") {
		t.Errorf("a trigger for a moved head does not supersede:\n%s", out)
	}
	want := []string{"pending queued: master (run 600)", "pending queued: master, PHP-8.4 (run 601)",
		"error superseded: the head moved to 222222222222 (run 602)"}
	if d := cmp.Diff(want, ourStatuses(f, planOld)); d != "" {
		t.Errorf("statuses of the earlier head (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"pending queued: master (run 602)"}, ourStatuses(f, planHead)); d != "" {
		t.Errorf("statuses of the head (-want +got):\n%s", d)
	}
}

// A run whose report (as another account, the App's) set its verdict over
// the plan's pending status is finished: a trigger after the head moved
// supersedes nothing, so it cancels no run of the new head.
func TestPlanAnswerFinishedRunNotSuperseded(t *testing.T) {
	f := planFake(t)
	f.AddRef("php", "php-src", "old", planOld)
	f.AddUser("patchproof-app", "ghp_ReportAppT0ken000000000000000000001")
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: planOld}})
	args := []string{"--answer", "--github-login", "github-actions[bot]"}
	if code, _, stderr := runPlan(t, f, append(args, "--run-id", "700", "--event", commentFile(t, "maintainer", "/patchproof none "+planOld))...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	report, err := github.New(github.Options{BaseURL: f.URL(), Getenv: func(k string) string {
		if k == "GITHUB_TOKEN" {
			return "ghp_ReportAppT0ken000000000000000000001"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.SetStatus(context.Background(), "php", "php-src", planOld, github.Status{State: github.StateSuccess, Description: "passed", Run: "700"}); err != nil {
		t.Fatal(err)
	}
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: planHead}})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Before: planOld, After: planHead, Time: planCommentAt.Add(-time.Minute)})
	code, stdout, stderr := runPlan(t, f, append(args, "--run-id", "701", "--event", commentFile(t, "maintainer", "/patchproof none "+planHead))...)
	if code != 0 || !strings.Contains(stdout, "supersedes=false\n") {
		t.Errorf("exit %d, outputs:\n%s%s", code, stdout, stderr)
	}
}
