package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
)

const (
	cmdToken = "ghp_CmdReportT0kenThatMustNeverBeSeen0001"
	headSHA  = "2c3d4e5f60718293a4b5c6d7e8f9012345678901"
)

// jobResult is one job's results.json: a target of PR 4242 with its NTS
// comparison and a stage that passed or failed.
func jobResult(target string, started time.Time, codediffStatus results.Status) *results.Result {
	identical := 484
	if codediffStatus == results.StatusFailed {
		identical = 483
	}
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Tool: "patchproof", Version: "0.1.0", StartedAt: started, Status: results.StatusPassed,
		Settings: results.Settings{Repo: pipeline.DefaultRepo, PR: 4242, Variants: []string{"nts"}, Builder: "host", Profile: "mysql", Jobs: 4},
		Targets: []*results.TargetResult{{
			Name: target, Repo: pipeline.DefaultRepo,
			Base: results.CommitRef{Ref: target, Commit: strings.Repeat("1", 40)},
			Head: results.CommitRef{Ref: "pull/4242/head", Commit: headSHA},
			CodeDiff: &codediff.Result{ExpectNTSNoop: true, NTS: &codediff.Report{
				Objects: "ext/mysqlnd/*.o", Compared: 484, Identical: identical,
			}},
		}},
		Stages: []*results.StageResult{{Name: "codediff", Status: codediffStatus}},
	}
	if codediffStatus == results.StatusFailed {
		res.Status, res.ExitCode, res.Error = results.StatusFailed, 1, "checks failed: codediff"
		res.Stages[0].Error = target + ": NTS machine code changed: check failed"
	}
	return res
}

func writeResult(t *testing.T, res *results.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runReport runs 'patchproof report args...' and returns its exit status and
// output.
func runReport(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := patchproof(context.Background(), &stdout, &stderr, append([]string{"report"}, args...))
	code := exitCode(&stderr, err)
	return code, stdout.String(), stderr.String()
}

// cleanEnv keeps the tests' environment out of the command's, and the
// command's writes out of a CI job's step summary.
func cleanEnv(t *testing.T) {
	for _, k := range []string{"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY",
		"GITHUB_ACTIONS", "PATCHPROOF_GITHUB_API", "PATCHPROOF_GITHUB_LOGIN"} {
		t.Setenv(k, "")
	}
}

func TestReportMerge(t *testing.T) {
	cleanEnv(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	master := writeResult(t, jobResult("master", t0, results.StatusPassed))
	php84 := writeResult(t, jobResult("PHP-8.4", t0, results.StatusFailed))

	code, stdout, stderr := runReport(t, "--merge", php84, master)
	if code != 1 {
		t.Errorf("exit %d, want 1 (a job's check failed); stderr %s", code, stderr)
	}
	if n := strings.Count(stdout, "\n## "); n != 0 || !strings.HasPrefix(stdout, "## ❌ patchproof: a check failed") {
		t.Errorf("want one report with one headline, got:\n%.300s", stdout)
	}
	if i, j := strings.Index(stdout, "### master"), strings.Index(stdout, "### PHP-8.4"); i < 0 || j < i {
		t.Errorf("targets missing or out of order (master %d, PHP-8.4 %d)", i, j)
	}

	// Passing jobs exit 0; files and flags in any order; --out writes the file.
	out := t.TempDir()
	code, stdout, stderr = runReport(t, master, "--out", out)
	if code != 0 || stdout != "" {
		t.Errorf("exit %d, stdout %q; stderr %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "summary.md")); err != nil || !bytes.HasPrefix(b, []byte("## ✅ patchproof: passed")) {
		t.Errorf("summary.md: %.100q, %v", b, err)
	}
}

func TestReportBadInput(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "summary.md")
	os.WriteFile(notJSON, []byte("## not json\n"), 0o644)
	other := filepath.Join(dir, "codediff.json")
	os.WriteFile(other, []byte(`{"objects": "ext/mysqlnd/*.o", "compared": 3}`), 0o644)
	good := writeResult(t, jobResult("master", time.Now(), results.StatusPassed))
	for _, tt := range []struct {
		name string
		args []string
		file string
	}{
		{"missing file", []string{good, filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not JSON", []string{notJSON}, notJSON},
		{"not a results.json", []string{"--merge", good, "--merge", other}, other},
		{"no file, no default", []string{}, "patchproof-out/results.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := runReport(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			line := strings.TrimSuffix(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, tt.file) {
				t.Errorf("stderr %q: want one line naming %s", stderr, tt.file)
			}
			if stdout != "" {
				t.Errorf("bad input printed a report:\n%.200s", stdout)
			}
		})
	}
}

// A results.json of a schema version this patchproof does not know is
// bad input: refused, naming the file and the version, before anything is
// posted.
func TestReportUnknownSchemaVersion(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	res := jobResult("master", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), results.StatusPassed)
	res.SchemaVersion = 99
	path := writeResult(t, res)
	code, stdout, stderr := runReport(t, "--post", "--github-api", f.URL(), path)
	line := strings.TrimSuffix(stderr, "\n")
	if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, path) || !strings.Contains(line, "99") {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming %s and version 99", code, stderr, path)
	}
	if stdout != "" || len(f.Comments("php", "php-src", 4242)) != 0 || len(f.Statuses("php", "php-src", headSHA)) != 0 {
		t.Errorf("a results.json of an unknown version was reported: stdout %.100q, comments %+v, statuses %+v",
			stdout, f.Comments("php", "php-src", 4242), f.Statuses("php", "php-src", headSHA))
	}
}

// A results.json that names no schema_version (or an old one's 0) is
// refused in one line naming the file, exit 2, and nothing is posted:
// whatever wrote it, its "passed" is no patchproof run's verdict.
func TestReportNoSchemaVersion(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	good := writeResult(t, jobResult("master", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), results.StatusPassed))
	for _, tt := range []struct {
		name, drop, want string
	}{
		{"no schema_version", `"schema_version":1,`, "no schema_version"},
		{"schema_version 0", `"schema_version":1,`, "schema_version 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(good)
			if err != nil {
				t.Fatal(err)
			}
			repl := ""
			if tt.want == "schema_version 0" {
				repl = `"schema_version":0,`
			}
			if !bytes.Contains(b, []byte(tt.drop)) {
				t.Fatalf("%s lacks %s", good, tt.drop)
			}
			path := filepath.Join(t.TempDir(), "results.json")
			if err := os.WriteFile(path, bytes.Replace(b, []byte(tt.drop), []byte(repl), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runReport(t, "--post", "--github-api", f.URL(), path)
			line := strings.TrimSuffix(stderr, "\n")
			if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, path) || !strings.Contains(line, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming %s and %q", code, stderr, path, tt.want)
			}
			if stdout != "" || len(f.Comments("php", "php-src", 4242)) != 0 || len(f.Statuses("php", "php-src", headSHA)) != 0 {
				t.Errorf("a results.json without a version was reported: stdout %.100q, comments %+v, statuses %+v",
					stdout, f.Comments("php", "php-src", 4242), f.Statuses("php", "php-src", headSHA))
			}
		})
	}
	// A file over the bound is refused naming it and the bound, unread.
	big := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, results.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runReport(t, big)
	if line := strings.TrimSuffix(stderr, "\n"); code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, big) || !strings.Contains(line, "64 MiB") {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming %s and its bound", code, stderr, big)
	}
}

// The results of a run that checked nothing (its checkout only) report
// so, and exit 2: nothing was validated.
func TestReportNothingChecked(t *testing.T) {
	cleanEnv(t)
	res := jobResult("master", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), results.StatusPassed)
	res.Stages = []*results.StageResult{{Name: "checkout", Status: results.StatusPassed}}
	code, stdout, stderr := runReport(t, writeResult(t, res))
	if code != 2 || stderr != "patchproof: nothing was checked\n" {
		t.Errorf("exit %d, stderr %q; want 2, nothing was checked", code, stderr)
	}
	if !strings.HasPrefix(stdout, "## ⚪ patchproof: nothing was checked\n") {
		t.Errorf("summary:\n%.200s", stdout)
	}
}

func TestReportPost(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	master := writeResult(t, jobResult("master", t0, results.StatusPassed))
	php84 := writeResult(t, jobResult("PHP-8.4", t0, results.StatusPassed))
	var printed strings.Builder

	// Two jobs' results: one comment, and the head commit marked.
	code, stdout, stderr := runReport(t, "--merge", master, "--merge", php84, "--post", "--github-api", f.URL())
	printed.WriteString(stdout + stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	comments := f.Comments("php", "php-src", 4242)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "### PHP-8.4") || !strings.Contains(comments[0].Body, "### master") {
		t.Fatalf("want one comment with both targets, got %d", len(comments))
	}
	if st := f.Statuses("php", "php-src", headSHA); len(st) != 1 || st[0].State != "success" {
		t.Errorf("statuses %+v", st)
	}

	// A later run's results update it in place.
	later := writeResult(t, jobResult("PHP-8.4", t0.Add(time.Hour), results.StatusFailed))
	code, stdout, stderr = runReport(t, master, later, "--post", "--github-api", f.URL())
	printed.WriteString(stdout + stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	after := f.Comments("php", "php-src", 4242)
	if len(after) != 1 || after[0].ID != comments[0].ID || !strings.Contains(after[0].Body, "a check failed") {
		t.Errorf("want the same comment updated, got %d comments", len(after))
	}

	// A dry run posts nothing and prints the comment once.
	writes := f.Count("POST", "/") + f.Count("PATCH", "/")
	code, stdout, stderr = runReport(t, master, "--dry-run", "--github-api", f.URL())
	printed.WriteString(stdout + stderr)
	if code != 0 {
		t.Errorf("dry run: exit %d: %s", code, stderr)
	}
	if n := f.Count("POST", "/") + f.Count("PATCH", "/"); n != writes {
		t.Errorf("a dry run made %d writes", n-writes)
	}
	if strings.Count(stdout, "## ✅ patchproof: passed") != 1 || !strings.Contains(stdout, "dry run:") {
		t.Errorf("dry run output:\n%.500s", stdout)
	}

	if strings.Contains(printed.String(), cmdToken) {
		t.Error("the token was printed")
	}
}

// The demo run of scripts/test wrote its summary; 'patchproof report'
// renders its results.json to the same verdict.
func TestE2ESummary(t *testing.T) {
	res, out := e2eResult(t)
	cleanEnv(t)
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatalf("the run wrote no summary: %v", err)
	}
	for _, want := range []string{fmt.Sprintf("\n1. NTS: ✅ %d/%d identical\n", demoNTSFunctions, demoNTSFunctions), "#### ZTS machine code", "mysqlnd_stats_init", "### Commits"} {
		if !bytes.Contains(summary, []byte(want)) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	code, stdout, stderr := runReport(t, filepath.Join(out, "results.json"))
	if code != res.ExitCode {
		t.Errorf("report exit %d, the run's %d: %s", code, res.ExitCode, stderr)
	}
	head := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	if head(stdout) != head(string(summary)) {
		t.Errorf("report says %q, the run said %q", head(stdout), head(string(summary)))
	}
}

// fakePR is a GitHub fake with php/php-src#4242, whose head is headSHA, and
// a user whose token is in $GITHUB_TOKEN.
func fakePR(t *testing.T) *githubfake.Fake {
	t.Helper()
	t.Setenv("GITHUB_TOKEN", cmdToken)
	f := githubfake.New(t)
	f.AddUser("patchproof-bot", cmdToken)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 4242,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Ref: "atomic-stats", SHA: headSHA}})
	return f
}

// An older run's report --post (run 100, posted after run 200's) leaves
// the commit status alone, as it does the comment: a newer run's failure
// is never turned green by the evidence of an older one.
func TestReportOlderRunLeavesStatus(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	passing := writeResult(t, jobResult("master", t0, results.StatusPassed))
	failing := writeResult(t, jobResult("master", t0, results.StatusFailed))
	type status struct{ State, Description string }
	for _, step := range []struct {
		run, file string
		exit      int
		want      []status // every status on the head, oldest first
		note      string   // in stderr
	}{
		{"200", failing, 1, []status{{"failure", "failed: codediff: master: NTS machine code changed: check failed (run 200)"}}, ""},
		{"100", passing, 0, []status{{"failure", "failed: codediff: master: NTS machine code changed: check failed (run 200)"}},
			"note: no commit status: the status on " + headSHA[:12] + " is of a newer run (200)"},
		// A report without $GITHUB_RUN_ID (a laptop's, stamped with its
		// start) is never newer than a workflow run: it leaves the
		// failure too.
		{"", passing, 0, []status{{"failure", "failed: codediff: master: NTS machine code changed: check failed (run 200)"}},
			"note: no commit status: the status on " + headSHA[:12] + " is workflow run 200's, which a report without $GITHUB_RUN_ID never replaces"},
		{"300", passing, 0, []status{
			{"failure", "failed: codediff: master: NTS machine code changed: check failed (run 200)"},
			{"success", "passed: master NTS 484/484 identical (run 300)"}}, ""},
	} {
		t.Setenv("GITHUB_RUN_ID", step.run)
		code, _, stderr := runReport(t, "--post", "--github-api", f.URL(), step.file)
		if code != step.exit {
			t.Errorf("run %s: exit %d, want %d: %s", step.run, code, step.exit, stderr)
		}
		var got []status
		for _, st := range f.Statuses("php", "php-src", headSHA) {
			got = append(got, status{st.State, st.Description})
		}
		if d := cmp.Diff(step.want, got); d != "" {
			t.Errorf("run %s: statuses (-want +got):\n%s", step.run, d)
		}
		if !strings.Contains(stderr, step.note) {
			t.Errorf("run %s: stderr %q lacks %q", step.run, stderr, step.note)
		}
		if step.run == "" {
			continue // the comment orders as before: the poster's
		}
		if cs := f.Comments("php", "php-src", 4242); len(cs) != 1 || !strings.Contains(cs[0].Body, " run="+max(step.run, "200")+" ") {
			t.Errorf("run %s: comments %+v, want one, of the newest run", step.run, cs)
		}
	}
}

// killedJob is a job's results.json as SIGKILL during the tests stage
// leaves it: the run running, the tests running, the benchmark not started.
func killedJob(target string, started time.Time) *results.Result {
	res := jobResult(target, started, results.StatusPassed)
	res.Status = results.StatusRunning
	res.Stages = append(res.Stages,
		&results.StageResult{Name: "tests", Status: results.StatusRunning},
		&results.StageResult{Name: "bench", Status: results.StatusPending})
	return res
}

// A killed run's results never read as passed: report --post says what
// did not finish, sets an error status and exits 2; so does a target
// whose job left no results.json.
func TestReportIncomplete(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	master := writeResult(t, jobResult("master", t0, results.StatusPassed))
	killed := writeResult(t, killedJob("PHP-8.4", t0))
	for _, tt := range []struct {
		name string
		args []string
		want []string // in the comment
	}{
		{"a job killed", []string{"--merge", master, "--merge", killed}, []string{"- ⏳ PHP-8.4: tests: running", "- ⏸️ PHP-8.4: bench: not started"}},
		{"a job left nothing", []string{master, "--expect-targets", "master,PHP-8.4"}, []string{"- ⏸️ PHP-8.4: no results"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Statuses("php", "php-src", headSHA))
			code, _, stderr := runReport(t, append(tt.args, "--post", "--github-api", f.URL())...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (incomplete); stderr %s", code, stderr)
			}
			if !strings.Contains(stderr, "incomplete") {
				t.Errorf("stderr does not say incomplete: %s", stderr)
			}
			comments := f.Comments("php", "php-src", 4242)
			if len(comments) != 1 || !strings.Contains(comments[0].Body, "## ⏹️ patchproof: incomplete: the run did not finish") {
				t.Fatalf("want one comment saying incomplete, got %d: %+v", len(comments), comments)
			}
			for _, w := range tt.want {
				if !strings.Contains(comments[0].Body, w) {
					t.Errorf("the comment lacks %q", w)
				}
			}
			st := f.Statuses("php", "php-src", headSHA)
			if len(st) != before+1 || st[len(st)-1].State != "error" || !strings.HasPrefix(st[len(st)-1].Description, "incomplete: ") {
				t.Errorf("statuses %+v, want a new error status saying incomplete", st)
			}
		})
	}
}

func TestReportMergeMismatch(t *testing.T) {
	cleanEnv(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	master := writeResult(t, jobResult("master", t0, results.StatusPassed))
	otherPR := jobResult("PHP-8.4", t0, results.StatusPassed)
	otherPR.Settings.PR = 4243
	otherRepo := jobResult("PHP-8.4", t0, results.StatusPassed)
	otherRepo.Settings.Repo = "https://github.com/alice/php-src"
	otherHead := jobResult("PHP-8.4", t0, results.StatusPassed)
	otherHead.Targets[0].Head.Commit = strings.Repeat("f", 40)
	for _, tt := range []struct {
		name  string
		other string
		want  string
	}{
		{"different PRs", writeResult(t, otherPR), "different pull requests (#4242, #4243)"},
		{"different repositories", writeResult(t, otherRepo), "different repositories"},
		{"different head commits", writeResult(t, otherHead), "different head commits"},
		{"a target twice", writeResult(t, jobResult("master", t0, results.StatusFailed)), "target master twice"},
		{"the same file twice", master, "named twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runReport(t, "--merge", master, "--merge", tt.other, "--out", out)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			line := strings.TrimSuffix(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, tt.want) || !strings.Contains(line, master) || !strings.Contains(line, tt.other) {
				t.Errorf("stderr %q: want one line naming both files and %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("bad input printed a report:\n%.200s", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input wrote %s", out)
			}
		})
	}
}

// Results of a repository that is not on GitHub post nowhere by default:
// not on php/php-src's PR of the same number.
func TestReportLocalRepositoryPostsNowhere(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	local := jobResult("master", time.Now(), results.StatusPassed)
	local.Settings.Repo = "/srv/php-src"
	code, _, stderr := runReport(t, writeResult(t, local), "--post", "--github-api", f.URL())
	if code != 2 || !strings.Contains(stderr, "/srv/php-src") || !strings.Contains(stderr, "--repo") {
		t.Errorf("exit %d, stderr %q; want 2 and a line naming the repository and --repo", code, stderr)
	}
	if n := len(f.Comments("php", "php-src", 4242)); n != 0 {
		t.Errorf("%d comments posted on php/php-src#4242", n)
	}
}

// report --expect-head posts only results of the planned run: the
// repository, PR and head commit, and planned targets; anything else is
// refused (exit 2) before anything is posted.
func TestReportExpectHead(t *testing.T) {
	cleanEnv(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	master := writeResult(t, jobResult("master", t0, results.StatusPassed))
	backport := jobResult("PHP-8.4", t0, results.StatusPassed)
	backport.Targets[0].Head.Commit = strings.Repeat("5", 40) // the backport commit
	backport.Targets[0].Backport = &results.BackportResult{From: "master", Branch: "PHP-8.4", Applied: true, FromCommit: headSHA}
	php84 := writeResult(t, backport)
	stale := jobResult("PHP-8.4", t0, results.StatusPassed)
	stale.Targets[0].Backport = &results.BackportResult{From: "master", Branch: "PHP-8.4", Applied: true, FromCommit: strings.Repeat("6", 40)}
	stale.Targets[0].Head.Commit = strings.Repeat("5", 40)
	stalePath := writeResult(t, stale)
	noHead := jobResult("master", t0, results.StatusPassed)
	noHead.Targets[0].Head.Commit = ""
	noHeadPath := writeResult(t, noHead)
	noFrom := jobResult("PHP-8.4", t0, results.StatusPassed)
	noFrom.Targets[0].Head.Commit = strings.Repeat("5", 40)
	noFrom.Targets[0].Backport = &results.BackportResult{From: "master", Branch: "PHP-8.4", Applied: true}
	noFromPath := writeResult(t, noFrom)

	planned := []string{"--pr", "4242", "--repo", pipeline.DefaultRepo, "--expect-head", headSHA}
	tests := []struct {
		name string
		args []string
		want string // in the refusal; "" for none
	}{
		{"the planned run", append(planned, "--expect-targets", "master,PHP-8.4", master, php84), ""},
		{"the repository spelt otherwise", []string{"--pr", "4242", "--repo", "https://GitHub.com/PHP/php-src.git", "--expect-head", headSHA, master}, ""},
		{"another head", []string{"--pr", "4242", "--repo", pipeline.DefaultRepo, "--expect-head", strings.Repeat("3", 40), master},
			"not a result of php/php-src#4242 at 333333333333: target master validated " + headSHA},
		{"another PR", []string{"--pr", "4243", "--repo", pipeline.DefaultRepo, "--expect-head", headSHA, master}, "its pull request is #4242"},
		{"another repository", []string{"--pr", "4242", "--repo", "https://github.com/someone/php-src", "--expect-head", headSHA, master}, "its repository is"},
		{"a target not planned", append(planned, "--expect-targets", "master", master, php84), "target PHP-8.4 was not planned"},
		{"a backport of another head", append(planned, stalePath), "target PHP-8.4 validated 666666"},
		{"a target with no head commit", append(planned, noHeadPath), "target master names no head commit"},
		{"a backport from no commit", append(planned, master, noFromPath), "target PHP-8.4 names no head commit"},
		{"no PR", []string{"--expect-head", headSHA, master}, "needs --pr N and --repo URL"},
		{"not a commit", []string{"--pr", "4242", "--repo", pipeline.DefaultRepo, "--expect-head", "2c3d4e5", master}, "want a full commit hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakePR(t)
			code, _, stderr := runReport(t, append([]string{"--post", "--github-api", f.URL()}, tt.args...)...)
			n := len(f.Comments("php", "php-src", 4242))
			if tt.want == "" {
				if code != 0 || n != 1 {
					t.Errorf("exit %d, %d comments; want 0 and one comment: %s", code, n, stderr)
				}
				return
			}
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming %q", code, stderr, tt.want)
			}
			if n != 0 || len(f.Statuses("php", "php-src", headSHA)) != 0 {
				t.Errorf("refused results were posted: %d comments", n)
			}
		})
	}
}

// report --post of a run for a moved head keeps the run before it, its
// head and verdict, in the comment's list of earlier runs.
func TestReportPostHistory(t *testing.T) {
	cleanEnv(t)
	f := fakePR(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	t.Setenv("GITHUB_RUN_ID", "700")
	if code, _, stderr := runReport(t, "--post", "--github-api", f.URL(), writeResult(t, jobResult("master", t0, results.StatusFailed))); code != 1 {
		t.Fatalf("run 700: exit %d: %s", code, stderr)
	}
	const moved = "3d4e5f60718293a4b5c6d7e8f9012345678901ab"
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 4242,
		Base: githubfake.Branch{Ref: "master", SHA: strings.Repeat("1", 40)},
		Head: githubfake.Branch{Ref: "atomic-stats", SHA: moved}})
	second := jobResult("master", t0.Add(time.Hour), results.StatusPassed)
	second.Targets[0].Head.Commit = moved
	t.Setenv("GITHUB_RUN_ID", "701")
	if code, _, stderr := runReport(t, "--post", "--github-api", f.URL(), writeResult(t, second)); code != 0 {
		t.Fatalf("run 701: exit %d: %s", code, stderr)
	}
	cs := f.Comments("php", "php-src", 4242)
	if len(cs) != 1 {
		t.Fatalf("%d comments, want one", len(cs))
	}
	for _, want := range []string{"run=701", "<summary>Earlier runs (1)</summary>", "| 700 | `" + headSHA[:12] + "` | failed | — |"} {
		if !strings.Contains(cs[0].Body, want) {
			t.Errorf("comment lacks %q:\n%s", want, cs[0].Body)
		}
	}
}
