package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/codediff"
)

// roundTrip passes results through results.json, as the report command
// reads them.
func roundTrip(t *testing.T, rs ...*results.Result) []*results.Result {
	t.Helper()
	var out []*results.Result
	for i, res := range rs {
		p := filepath.Join(t.TempDir(), fmt.Sprintf("results-%d.json", i))
		// As a run writes it: with its format's version.
		written := *res
		written.SchemaVersion = results.SchemaVersion
		if err := written.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		back, err := results.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, back)
	}
	return out
}

func TestRenderSummaryGolden(t *testing.T) {
	for _, tt := range []struct {
		name    string
		results []*results.Result
	}{
		{"demo.md", []*results.Result{resultstest.Demo()}},
		{"failing.md", []*results.Result{resultstest.Failing()}},
		{"merged.md", []*results.Result{resultstest.Backport(), resultstest.Failing()}},
		{"racy.md", []*results.Result{resultstest.Racy()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := RenderSummary(&b, tt.results); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.name), b.Bytes())
			// What the report command reads renders the same.
			var again bytes.Buffer
			if err := RenderSummary(&again, roundTrip(t, tt.results...)); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(b.String(), again.String()); d != "" {
				t.Errorf("rendered from results.json (-direct +json):\n%s", d)
			}
		})
	}
}

func TestRenderSummaryContent(t *testing.T) {
	render := func(rs ...*results.Result) string {
		var b bytes.Buffer
		if err := RenderSummary(&b, rs); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	demo := render(resultstest.Demo())
	failing := render(resultstest.Failing())
	merged := render(resultstest.Backport(), resultstest.Failing())
	racy := render(resultstest.Racy())
	// The backports taken three ways: PHP-8.5 merged, PHP-8.4 a conflict
	// with both sides (one of them a PR's text, escaped).
	threeWay := resultstest.Backport()
	threeWay.Targets[1].Backport.Merged, threeWay.Targets[1].Backport.ThreeWay = []string{"ext/mysqlnd/mysqlnd_statistics.c"}, true
	threeWay.Targets[0].Backport.ThreeWay = true
	threeWay.Targets[0].Backport.Conflicts = []checkout.HunkConflict{{File: "ext/mysqlnd/mysqlnd_statistics.c", Hunk: "line 236",
		Reason: "the branch and the change edit these lines differently", Branch: "\t/* reworded */\n", BranchLines: 1},
		{File: "ext/mysqlnd/mysqlnd_structs.h", Hunk: "line 300", Branch: "a\nb\n", Change: "`x` | @php/core\n", BranchLines: 12, ChangeLines: 1},
		{File: "ext/mysqlnd/gone.c", Reason: "the change edits it; the branch does not have it"}}
	merged3 := render(threeWay, resultstest.Failing())
	// The change merged up: into PHP-8.5, and on through it into PHP-8.4
	// (a fixture's names; the rendering is what is checked).
	up := resultstest.Backport()
	up.Targets[1].Backport.MergeUp, up.Targets[1].Backport.Chain = true, []string{"PHP-8.5"}
	up.Targets[1].Backport.Merged = []string{"NEWS"}
	up.Targets[0].Backport.MergeUp, up.Targets[0].Backport.Via, up.Targets[0].Backport.Chain = true, "PHP-8.5", []string{"PHP-8.5", "PHP-8.4"}
	up.Targets[0].Backport.ThreeWay = true
	mergedUp := render(up, resultstest.Failing())
	for _, tt := range []struct {
		name, doc string
		want      []string
	}{
		{"demo verdict and NTS", demo, []string{"## ✅ patchproof: passed", "1. NTS: ✅ 484/484 identical", "8 changed under ZTS", "#### Builds"}},
		{"demo not run", demo, []string{"3. contention: not run: not selected (--stages)"}},
		{"failing verdict", failing, []string{"## ❌ patchproof: a check failed", "**codediff** failed: master: NTS machine code changed", "❌ 483/484 identical, 1 changed"}},
		{"diff folded", failing, []string{"<details><summary><code>mysqlnd_stats_init</code>", "```diff\n--- base/ext/mysqlnd/mysqlnd_statistics.o:mysqlnd_stats_init"}},
		{"compile error file:line", failing, []string{"ext/mysqlnd/mysqlnd_statistics.h:61:9: error: implicit declaration", "❌ make: exit status 2"}},
		{"run link", failing, []string{"[run](https://github.com/patchproof/patchproof/actions/runs/9001)", "[php/php-src#4242](https://github.com/php/php-src/pull/4242)"}},
		{"conflict named", merged, []string{"`ext/mysqlnd/mysqlnd_statistics.h` | `@@ -55,9 +55,13 @@` | context does not match", "❌ 1 hunk failed"}},
		{"demo concurrency", demo, []string{"4. concurrency: ✅ counters exact (4/4, 16 threads); ✅ ThreadSanitizer: no new race (0 in both builds)", "- ✅ counters exact under 16 threads: 4/4 counters (of mysqlnd's 6), 0 updates lost in 20,000 requests on 2 CPUs (base ✅ 4/4)",
			"<details><summary>2 of mysqlnd's 6 counters no request moved: the check says nothing of them</summary>\n\n`mem_emalloc_count`, `pconnect_success`"}},
		{"racy counters", racy, []string{"❌ counters not exact: 3 counters off", "| `rows_fetched_from_server_normal` | 20 | 400,000 | 399,505 | 495 |"}},
		{"racy race with both stacks", racy, []string{"❌ ThreadSanitizer: 1 new race report in the change's code (first in `ext/mysqlnd/mysqlnd_wireprotocol.c`)",
			"Read of size 8 at 0x7b6800000600 by thread T10 (mutexes: write M42):\n    #0 php_mysqlnd_rowp_read ext/mysqlnd/mysqlnd_wireprotocol.c:1739", "Previous write of size 8 at 0x7b6800000600 by thread T7:\n    #0 php_mysqlnd_rowp_read"}},
		{"three-way merged", merged3, []string{"does not apply onto PHP-8.5 as a patch; merged three ways, as git cherry-pick does (resolved: `ext/mysqlnd/mysqlnd_statistics.c`)",
			"PHP-8.5 ✅ merged (three-way)", "PHP-8.4 ❌ 3 conflicts"}},
		{"three-way conflicts with both sides", merged3, []string{"conflicts with PHP-8.4, as a patch and merged three ways: 3 conflicts",
			"| file | where | PHP-8.4 has | the change has |",
			"| `ext/mysqlnd/mysqlnd_statistics.c` | line 236 | `\t/* reworded */` | (nothing) |",
			"| `ext/mysqlnd/mysqlnd_structs.h` | line 300 | `a` ⏎ `b` (10 more) |",
			"| `ext/mysqlnd/gone.c` | — | the change edits it; the branch does not have it | |"}},
		{"merged up", mergedUp, []string{"#### Merge-up", "✅ master merges up into PHP-8.5 as php-src's merge-up does, three ways (resolved: `NEWS`)",
			"(master merged up into `PHP-8.5`)", "merge-up into PHP-8.5: ✅ merges up",
			"❌ PHP-8.5 (with master's change) does not merge up into PHP-8.4: 1 conflict", "--merge-up PHP-8.5,PHP-8.4 --target PHP-8.4",
			"(master merged up into `PHP-8.4` (through `PHP-8.5`))"}},
		{"merged job names", merged, []string{"### Stages: PHP-8.5+PHP-8.4", "### Stages: master"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.doc, w) {
					t.Errorf("summary lacks %q", w)
				}
			}
		})
	}
	// Targets in a stable order: master, then release branches newest first.
	iMaster, i85, i84 := strings.Index(merged, "### master"), strings.Index(merged, "### PHP-8.5"), strings.Index(merged, "### PHP-8.4")
	if !(iMaster < i85 && i85 < i84) {
		t.Errorf("targets out of order: master at %d, PHP-8.5 at %d, PHP-8.4 at %d", iMaster, i85, i84)
	}
	// The same results in another order render the same targets in the same order.
	swapped := render(resultstest.Failing(), resultstest.Backport())
	if strings.Index(swapped, "### master") > strings.Index(swapped, "### PHP-8.5") {
		t.Error("target order depends on the order of the results")
	}
}

func TestChartBar(t *testing.T) {
	for _, tt := range []struct {
		cells float64
		want  string
	}{
		{0, strings.Repeat(" ", chartWidth)},
		{0.01, "▏" + strings.Repeat(" ", chartWidth-1)},
		{1.5, "█▌" + strings.Repeat(" ", chartWidth-2)},
		{chartWidth, strings.Repeat("█", chartWidth)},
	} {
		if got := chartBar(tt.cells); got != tt.want {
			t.Errorf("chartBar(%v) = %q, want %q", tt.cells, got, tt.want)
		}
	}
}

func TestCommentBodyFitsGitHub(t *testing.T) {
	res := resultstest.Failing()
	// A change that touches every NTS function: 400-line diffs each.
	var diff strings.Builder
	for i := range 400 {
		fmt.Fprintf(&diff, "-  %4x:  mov    %%rax,%%rbx\n", i)
	}
	var changed []codediff.FuncDiff
	for i := range 60 {
		changed = append(changed, codediff.FuncDiff{Object: "ext/mysqlnd/mysqlnd_ps.o", Name: fmt.Sprintf("f%02d", i), Diff: diff.String()})
	}
	res.Targets[0].CodeDiff.NTS = resultstest.NTSReport(changed...)
	var full bytes.Buffer
	if err := RenderSummary(&full, []*results.Result{res}); err != nil {
		t.Fatal(err)
	}
	body, err := commentBody([]*results.Result{res}, renderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(body)); n > bodyBudget {
		t.Errorf("comment is %d characters, more than %d", n, bodyBudget)
	}
	if !strings.Contains(body, "- `f59` in `ext/mysqlnd/mysqlnd_ps.o`") || !strings.Contains(body, "would not fit in a comment") {
		t.Error("the compact comment does not list every changed function and say where the diffs are")
	}
	if !strings.Contains(body, "## ❌ patchproof: a check failed") {
		t.Error("the compact comment lost its verdict")
	}
}

func TestResultsJSONHasNewFields(t *testing.T) {
	// results.json is a published interface: what the report reads back
	// must be what was written.
	res := resultstest.Failing()
	back := roundTrip(t, res)[0]
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(back)
	if d := cmp.Diff(string(a), string(b)); d != "" {
		t.Errorf("round trip (-wrote +read):\n%s", d)
	}
}

// killedPR is a PR run as SIGKILL during the tests stage leaves its
// results.json: the tests running, bench not started.
func killedPR() *results.Result {
	res := resultstest.PassingPR()
	res.Status, res.ExitCode, res.Error, res.FinishedAt = results.StatusRunning, 0, "", nil
	res.Targets[0].Tests = nil
	res.Stages[3].Status, res.Stages[3].DurationMS = results.StatusRunning, 0
	res.Stages[4] = &results.StageResult{Name: "race", Status: results.StatusPending}
	return res
}

func TestRenderIncomplete(t *testing.T) {
	render := func(rs []*results.Result, expect []string) string {
		var b bytes.Buffer
		if err := renderSummary(&b, rs, renderOptions{expect: expect}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name   string
		rs     []*results.Result
		expect []string
		want   []string
	}{
		{"killed in the tests", []*results.Result{killedPR()}, nil, []string{
			"## ⏹️ patchproof: incomplete: the run did not finish\n",
			"- ⏳ tests: running\n",
			"- ⏸️ race: not started\n",
		}},
		{"a job left no results", []*results.Result{resultstest.Failing()}, []string{"master", "PHP-8.4"}, []string{
			"## ⏹️ patchproof: incomplete: the run did not finish\n",
			"- ⏸️ PHP-8.4: no results\n",
			"- ❌ **build** failed: 1 of 4 builds failed",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := render(tt.rs, tt.expect)
			for _, w := range tt.want {
				if !strings.Contains(doc, w) {
					t.Errorf("summary lacks %q:\n%.600s", w, doc)
				}
			}
			if strings.Contains(doc, "passed") && strings.Contains(doc, "## ✅") {
				t.Error("an incomplete run reads as passed")
			}
		})
	}
}

// The footer names the version each job ran, from results.json, and
// folds one command per target that reruns it.
func TestFooterVersionAndReproduce(t *testing.T) {
	rs := resultstest.PRJobs(resultstest.PRTargets...)
	rs[1].Targets[0].Backport.Branch = "PHP-8.5; rm -rf ~"
	var b bytes.Buffer
	if err := RenderSummary(&b, rs); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, want := range []string{
		"patchproof " + resultstest.FixtureVersion + " · started",
		"<details><summary>How to reproduce</summary>",
		"patchproof run --pr 4242 --base master --expect-head " + rs[0].Targets[0].Head.Commit + " --target master --stages checkout,build,codediff,tests,race,bench\n",
		"patchproof run --pr 4242 --base master --expect-head " + rs[0].Targets[0].Head.Commit + " --backport-to PHP-8.4 --target PHP-8.4 --stages checkout,build,codediff,tests,race,bench\n",
		"--backport-to 'PHP-8.5; rm -rf ~' --target PHP-8.5",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the footer lacks %q", want)
		}
	}
	if strings.Contains(doc, "0.1.0") {
		t.Error("the footer shows a made-up version")
	}
}

// A run that recorded its flags is rerun with every one of them, each
// check's settings included.
func TestReproduceRepeatsEveryFlag(t *testing.T) {
	rs := resultstest.PRJobs(resultstest.PRTargets[0])
	flags := []string{"--abi=warn", "--bench=report", "--passes=12", "--race-requests=5000", "--stages=checkout,build,race,bench", "--threads=1,16", "--variants=zts"}
	rs[0].Settings.Flags = flags
	got := reproduce(rs[0], results.JobTarget{TargetResult: rs[0].Targets[0], Job: rs[0]})
	want := "patchproof run --pr 4242 --base master --expect-head " + rs[0].Targets[0].Head.Commit + " --target master " + strings.Join(flags, " ")
	if got != want {
		t.Errorf("reproduce =\n%s\nwant\n%s", got, want)
	}
}
