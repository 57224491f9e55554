package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/pipeline/results"
)

// The rehearsal of the production path: scripts/test runs scripts/rehearse
// into PATCHPROOF_E2E_REHEARSAL after the demo's runs (its master target
// builds what the demo built). These tests read what it saw.

func rehearsal(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PATCHPROOF_E2E_REHEARSAL")
	if dir == "" {
		t.Skip("PATCHPROOF_E2E_REHEARSAL is not set: scripts/test rehearses the workflow after the demo")
	}
	return dir
}

// planOutput reads one output of a run's plan job.
func planOutput(t *testing.T, dir, run, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, run, "plan.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	t.Fatalf("%s's plan has no %s", run, key)
	return ""
}

// apiComment is a comment as the fake's API listed it.
type apiComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
}

// sticky keeps the summary comments, leaving out the plan's replies.
func sticky(cs []apiComment) []apiComment {
	var out []apiComment
	for _, c := range cs {
		if strings.HasPrefix(c.Body, "<!-- patchproof:v1 key=summary ") {
			out = append(out, c)
		}
	}
	return out
}

// apiStatus is a commit status as the fake's API listed it, newest first.
type apiStatus struct {
	State, Context, Description string
	Creator                     struct{ Login string }
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// The plan, a job per target over HTTP, the merge: one comment showing
// master and PHP-8.4 validated and PHP-8.5's conflict by file and hunk,
// one commit status, each job's exit status as the workflow would see it.
func TestE2ERehearsalRun(t *testing.T) {
	dir := rehearsal(t)
	if got := planOutput(t, dir, "run1", "targets"); got != `["master","PHP-8.4","PHP-8.5"]` {
		t.Errorf("the plan's targets are %s", got)
	}
	head := planOutput(t, dir, "run1", "head_sha")
	if got := readText(t, filepath.Join(dir, "run1", "exit-codes")); got != "master 0\nPHP-8.4 0\nPHP-8.5 1" {
		t.Errorf("the jobs' exit statuses:\n%s\nwant master 0, PHP-8.4 0, PHP-8.5 1 (its backport does not apply)", got)
	}
	if rc := readText(t, filepath.Join(dir, "run1", "report.log.rc")); rc != "1" {
		t.Errorf("the report exited %s, want 1 (PHP-8.5's backport failed): %s", rc, readText(t, filepath.Join(dir, "run1", "report.log")))
	}

	// What each job found, from the artifacts the report merged.
	art := func(target string) *results.Result {
		res, err := results.Read(filepath.Join(dir, "run1", "artifacts", "patchproof-results-"+target, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Targets) != 1 || res.Targets[0].Name != target {
			t.Fatalf("the %s job's results have targets %+v", target, res.Targets)
		}
		return res
	}
	for _, target := range []string{"master", "PHP-8.4"} {
		tg := art(target).Targets[0]
		cd := tg.CodeDiff
		if cd == nil || cd.NTS == nil || !cd.NTS.AllIdentical() || cd.NTS.Compared < 400 {
			t.Errorf("%s: NTS %+v, want every mysqlnd function identical", target, cd)
		}
		if len(tg.Builds) != 2 {
			t.Errorf("%s: %d builds, want base and head NTS", target, len(tg.Builds))
		}
		// The change alters struct st_mysqlnd_stats under ZTS alone: the
		// header probes of the NTS builds find their ABI unchanged.
		if a := tg.ABI; a == nil || len(a.Errors) != 0 || len(a.Variants) != 1 || a.Variants[0].Name != "nts" || len(a.Variants[0].Changes) != 0 || a.Variants[0].Layouts == "" {
			t.Errorf("%s: ABI %+v, want NTS compared through header probes, unchanged", target, a)
		} else if v := a.Variants[0]; v.Types < 1000 {
			t.Errorf("%s: NTS ABI of %d types: the probes covered too little", target, v.Types)
		}
		for _, b := range tg.Builds {
			// master's trees are the demo's: its builds were the demo's.
			if target == "master" && !b.Cached {
				t.Errorf("master: %s was built again, want the demo's build", b.Label)
			}
		}
	}
	if tg := art("master").Targets[0]; tg.Head.Commit != head || tg.Base.Ref != "master" {
		t.Errorf("master: head %s base %s, want %s on master", tg.Head.Commit, tg.Base.Ref, head)
	}
	// On PHP-8.4 a line of the change's context differs: the patch does
	// not apply, the three-way merge (git cherry-pick's) takes it.
	const stats = "ext/mysqlnd/mysqlnd_statistics.c"
	if bp := art("PHP-8.4").Targets[0].Backport; bp == nil || !bp.Applied || bp.FromCommit != head || len(bp.Merged) != 1 || bp.Merged[0] != stats {
		t.Errorf("PHP-8.4: backport %+v, want %s from %s merged three ways", bp, stats, head)
	}
	// On PHP-8.5 a line the change removes was reworded: a true conflict,
	// reported with both sides.
	bp := art("PHP-8.5").Targets[0].Backport
	if bp == nil || bp.Applied || !bp.ThreeWay || len(bp.Conflicts) != 1 {
		t.Fatalf("PHP-8.5: backport %+v, want one three-way conflict", bp)
	}
	conflict := bp.Conflicts[0]
	if conflict.File != stats || conflict.Hunk != "line 235" || !strings.Contains(conflict.Branch, "the counters go first") || conflict.Change != "" {
		t.Errorf("PHP-8.5: conflict %+v, want %s at line 235: the branch's reworded comment against the change's removal", conflict, stats)
	}

	var comments []apiComment
	readJSON(t, filepath.Join(dir, "run1", "comments.json"), &comments)
	if comments = sticky(comments); len(comments) != 1 {
		t.Fatalf("%d comments after run 1, want 1", len(comments))
	}
	body := comments[0].Body
	for _, want := range []string{
		"run=1001", "### master", "### PHP-8.4", "### PHP-8.5",
		"does not apply onto PHP-8.4 as a patch; merged three ways, as git cherry-pick does (resolved: `" + stats + "`)",
		"conflicts with PHP-8.5, as a patch and merged three ways: 1 conflict",
		"| `" + stats + "` | line 235 | `\t/* the counters go first: mnd_free would reference LOCK_access */` | (nothing) |",
		"PHP-8.4 ✅ merged (three-way)", "PHP-8.5 ❌ 1 conflict",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
	// Each target's artifacts linked, by this run's URL and the ids of
	// the run's list.
	runURL := strings.TrimSuffix(readText(t, filepath.Join(dir, "github-url")), "/api/v3/") + "/php/php-src/actions/runs/1001"
	for i, target := range []string{"master", "PHP-8.4", "PHP-8.5"} {
		want := fmt.Sprintf("- `%s`: [results](%s/artifacts/%d) (", target, runURL, 100100+2*i+1)
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
	if strings.Count(body, "identical") < 2 {
		t.Errorf("the comment shows %d NTS verdicts, want master's and PHP-8.4's", strings.Count(body, "identical"))
	}
	if n := strings.Count(body, "✅ nts: ABI unchanged"); n < 2 {
		t.Errorf("the comment shows %d NTS ABI lines, want master's and PHP-8.4's", n)
	}

	// The plan's pending status. The second trigger for this head (run
	// 1103, below) queued a newer run of its own, whose pending status the
	// plan posted as another account than the report's: run 1's verdict
	// leaves it on top, since run 1103's verdict is the one to come. (The
	// new head's run 2 shows a pending status, then its verdict over it.)
	var planned, statuses []apiStatus
	readJSON(t, filepath.Join(dir, "run1", "statuses-planned.json"), &planned)
	if len(planned) != 1 || planned[0].State != "pending" || planned[0].Description != "queued: master, PHP-8.4, PHP-8.5 (run 1001)" {
		t.Errorf("statuses on %s after the plan: %+v, want one pending \"queued\"", head[:12], planned)
	}
	readJSON(t, filepath.Join(dir, "run1", "statuses.json"), &statuses)
	if len(statuses) != 2 || statuses[0].State != "pending" || statuses[0].Context != "patchproof" ||
		statuses[0].Description != "queued: master, PHP-8.4, PHP-8.5; bench=report (run 1103)" || statuses[1].Description != planned[0].Description {
		t.Errorf("statuses on %s: %+v, want run 1103's pending one on top of run 1001's, and no verdict of run 1001 over them", head[:12], statuses)
	}
	if log := readText(t, filepath.Join(dir, "run1", "report.log")); !strings.Contains(log, "no commit status: the status on "+head[:12]+" is of a newer run (1103)") {
		t.Errorf("run 1's report log does not say it left run 1103's status:\n%s", log)
	}
}

// Comments while run 1 waits: a stranger's trigger and help are both
// refused (no write access), the first answered with one short reply and
// the second not at all (one a day on a PR); a second trigger for the same
// head, typed as people type it, is planned as meant and queues
// (supersedes nothing).
func TestE2ERehearsalAnswers(t *testing.T) {
	dir := rehearsal(t)
	for _, c := range []struct{ name, rc string }{{"comment-refused", "2"}, {"comment-help", "2"}, {"comment-again", "0"}} {
		if rc := readText(t, filepath.Join(dir, c.name, "plan.rc")); rc != c.rc {
			t.Errorf("%s's plan exited %s, want %s: %s", c.name, rc, c.rc, readText(t, filepath.Join(dir, c.name, "plan.log")))
		}
	}
	// The trigger as people type it: a space after the comma, no commit
	// (the push before the comment binds the head), an option.
	var event struct {
		Comment struct{ Body string } `json:"comment"`
	}
	readJSON(t, filepath.Join(dir, "comment-again", "event.json"), &event)
	if event.Comment.Body != "/patchproof PHP-8.4, PHP-8.5 bench=report" {
		t.Errorf("the second trigger was %q, want the issue's /patchproof PHP-8.4, PHP-8.5 bench=report", event.Comment.Body)
	}
	for key, want := range map[string]string{"targets": `["master","PHP-8.4","PHP-8.5"]`, "bench": "report", "supersedes": "false",
		"head_sha": planOutput(t, dir, "run1", "head_sha")} {
		if got := planOutput(t, dir, "comment-again", key); got != want {
			t.Errorf("the second trigger's %s is %q, want %q", key, got, want)
		}
	}
	var comments []apiComment
	readJSON(t, filepath.Join(dir, "comments-answers.json"), &comments)
	var replies []string
	for _, c := range comments {
		if strings.HasPrefix(c.Body, "@stranger ") {
			replies = append(replies, c.Body)
		}
	}
	if len(replies) != 1 || !strings.Contains(replies[0], "patchproof did not run: stranger has permission read") ||
		strings.Contains(replies[0], "/patchproof [BRANCH,BRANCH...|none] [SHA]") {
		t.Errorf("replies %q, want one: the refusal's reason, without the grammar", replies)
	}
}

// The PR's head moves: a job of the old plan is refused in one line (exit
// 2), the next run updates the same comment and sets a status on the new
// head, and the old run's report, posted again, leaves it alone.
func TestE2ERehearsalHeadMoves(t *testing.T) {
	dir := rehearsal(t)
	old, moved := planOutput(t, dir, "run1", "head_sha"), planOutput(t, dir, "run2", "head_sha")
	if old == moved {
		t.Fatalf("run 2 planned the same head %s", old)
	}
	if rc := readText(t, filepath.Join(dir, "run1", "job-moved.rc")); rc != "2" {
		t.Errorf("a job of run 1's plan after the push exited %s, want 2", rc)
	}
	log := readText(t, filepath.Join(dir, "run1", "job-moved.log"))
	var errLines []string
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "patchproof: ") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "--expect-head "+old) || !strings.Contains(errLines[0], moved) ||
		!strings.Contains(errLines[0], "moved") {
		t.Errorf("the refused job said %q, want one line naming %s and %s", errLines, old, moved)
	}
	if got := readText(t, filepath.Join(dir, "run2", "exit-codes")); got != "master 0\nPHP-8.4 0\nPHP-8.5 1" {
		t.Errorf("run 2's jobs: %s", got)
	}

	var first, second, final []apiComment
	readJSON(t, filepath.Join(dir, "run1", "comments.json"), &first)
	readJSON(t, filepath.Join(dir, "run2", "comments.json"), &second)
	readJSON(t, filepath.Join(dir, "comments-final.json"), &final)
	first, second, final = sticky(first), sticky(second), sticky(final)
	if len(first) != 1 || len(second) != 1 || len(final) != 1 {
		t.Fatalf("comments: %d, %d, %d after run 1, run 2 and the stale report; want one each time", len(first), len(second), len(final))
	}
	if second[0].ID != first[0].ID || !strings.Contains(second[0].Body, "run=1002") {
		t.Errorf("run 2 did not update comment %d with its run (comment %d)", first[0].ID, second[0].ID)
	}
	// Run 1 stays on the PR, under the earlier runs: its head and verdict.
	if !strings.Contains(second[0].Body, "<summary>Earlier runs (1)</summary>") || !strings.Contains(second[0].Body, "| 1001 | `"+old[:12]+"` | failed |") {
		t.Errorf("run 2's comment does not list run 1 under its earlier runs:\n%s", second[0].Body)
	}
	if final[0].ID != first[0].ID || final[0].Body != second[0].Body {
		t.Errorf("run 1's report, posted after run 2's, changed the comment:\n%.300s", final[0].Body)
	}
	if log := readText(t, filepath.Join(dir, "run1", "report-stale.log")); !strings.Contains(log, "comment skipped-older") {
		t.Errorf("the stale report says:\n%s\nwant comment skipped-older", log)
	}
	var statuses []apiStatus
	readJSON(t, filepath.Join(dir, "run2", "statuses.json"), &statuses)
	if len(statuses) != 2 || statuses[1].State != "pending" || statuses[1].Description != "queued: master, PHP-8.4, PHP-8.5 (run 1002)" ||
		statuses[0].State == "pending" {
		t.Errorf("statuses on the new head %+v, want run 2's pending one, then its verdict", statuses)
	}
}

// The first fetch fills a cold mirror; after the push the next fetches
// only the new commit: the mirror hardly grows.
func TestE2ERehearsalFetch(t *testing.T) {
	dir := rehearsal(t)
	type fetch struct {
		Wall     float64 `json:"wall_s"`
		Export   float64 `json:"export_s"`
		MirrorKB int64   `json:"mirror_kb"`
	}
	var cold, warm fetch
	readJSON(t, filepath.Join(dir, "run1", "fetch-cold.json"), &cold)
	readJSON(t, filepath.Join(dir, "run2", "fetch-warm.json"), &warm)
	t.Logf("cold: %.1f s (%.1f s of it exporting), mirror %d KiB; warm: %.1f s (%.1f s exporting), mirror %d KiB",
		cold.Wall, cold.Export, cold.MirrorKB, warm.Wall, warm.Export, warm.MirrorKB)
	if log := readText(t, filepath.Join(dir, "run1", "fetch-cold.log")); !strings.Contains(log, "creating mirror of ") {
		t.Errorf("the first fetch did not create the mirror: it was not cold")
	}
	if log := readText(t, filepath.Join(dir, "run2", "fetch-warm.log")); strings.Contains(log, "creating mirror of ") {
		t.Errorf("the fetch after the push created a mirror again")
	}
	if cold.MirrorKB < 10_000 {
		t.Errorf("the cold mirror is %d KiB, want the whole release tree", cold.MirrorKB)
	}
	if grown := warm.MirrorKB - cold.MirrorKB; grown > cold.MirrorKB/100 {
		t.Errorf("the warm fetch grew the mirror by %d KiB, want only the new commit (< 1%% of %d KiB)", grown, cold.MirrorKB)
	}
	if warm.Wall-warm.Export >= cold.Wall-cold.Export {
		t.Errorf("the warm fetch took %.1f s, no less than the cold one's %.1f s", warm.Wall-warm.Export, cold.Wall-cold.Export)
	}
	note := readText(t, filepath.Join(dir, "note.md"))
	if !strings.Contains(note, "fetch-cold") || !strings.Contains(note, "### PHP-8.5") {
		t.Errorf("the note lacks the fetch times or the comment:\n%.500s", note)
	}
}
