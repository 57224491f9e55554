package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// The comment of the PR this tool exists for, master and its two
// backports, each job's results.json merged, and of five targets: within
// the budget, with every target's verdict block and heading and the
// commits table, nothing cut inside a table, a code block or <details>.
func TestCommentBudget(t *testing.T) {
	for _, names := range [][]string{resultstest.PRTargets, resultstest.FiveTargets} {
		t.Run(fmt.Sprintf("%d targets", len(names)), func(t *testing.T) {
			checkBudget(t, roundTrip(t, resultstest.PRJobs(names...)...), names)
		})
	}
}

// checkBudget renders the merge of rs, the jobs of targets names, as a
// comment: within the budget, with what every comment must hold.
func checkBudget(t *testing.T, rs []*results.Result, names []string) {
	t.Helper()
	var full bytes.Buffer
	if err := RenderSummary(&full, rs); err != nil {
		t.Fatal(err)
	}
	// Each target's artifacts linked, as the report job links them.
	links := map[string]string{}
	for i, name := range names {
		for _, k := range artifactKinds {
			links["patchproof-"+k.kind+"-"+results.Slug(name)] = fmt.Sprintf("https://github.com/patchproof/patchproof/actions/runs/19283746501/artifacts/40123456%02d", i)
		}
	}
	body, err := commentBody(rs, renderOptions{expect: names, artifacts: links})
	if err != nil {
		t.Fatal(err)
	}
	n := utf8.RuneCountInString(body)
	t.Logf("summary.md %d characters, comment %d", utf8.RuneCount(full.Bytes()), n)
	if n > bodyBudget {
		t.Errorf("the comment is %d characters, over %d (%d less the history's %d)", n, bodyBudget, commentBudget, HistoryReserve)
	}
	// It fits by shrinking, never by the last resort's cut.
	if strings.Contains(body, "(cut here:") {
		t.Error("the comment was cut to fit its budget")
	}
	for _, name := range names {
		if !strings.Contains(body, "- `"+name+"`: [results](") {
			t.Errorf("the comment lacks %s's artifact links", name)
		}
	}
	checkComment(t, body, names)
}

// checkComment asserts what every comment must hold, however shrunk.
func checkComment(t *testing.T, body string, names []string) {
	t.Helper()
	for _, name := range names {
		for _, want := range []string{"**" + name + "**: head ", "### " + name + "\n"} {
			if !strings.Contains(body, want) {
				t.Errorf("the comment lacks %q", want)
			}
		}
		i := strings.Index(body, "**"+name+"**: head ")
		if i < 0 {
			continue
		}
		block := body[i:]
		for q := 1; q <= 5; q++ {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d\. `, q)).MatchString(block) {
				t.Errorf("%s's verdict block lacks question %d", name, q)
			}
		}
	}
	if !strings.Contains(body, "### Commits\n\n| target | base | base branch | head |\n") {
		t.Error("the comment lacks the commits table")
	}
	checkBalanced(t, body)
}

// checkBalanced fails a Markdown document with a <details> left open, a
// code block left open, or a table row cut short.
func checkBalanced(t *testing.T, doc string) {
	t.Helper()
	depth, fence := 0, false
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		depth += strings.Count(line, "<details") - strings.Count(line, "</details>")
		if depth < 0 {
			t.Fatalf("line %d closes a <details> none opened", i+1)
		}
		if strings.HasPrefix(trimmed, "|") && !strings.HasSuffix(trimmed, "|") {
			t.Errorf("line %d is a table row cut short: %q", i+1, line)
		}
	}
	if depth != 0 || fence {
		t.Errorf("the document ends with %d <details> and a code block (%v) open", depth, fence)
	}
}

// A comment over the budget even with every section left out is cut at a
// block's end, never inside a table or <details>.
func TestSafeCut(t *testing.T) {
	doc := "## x\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<details><summary>s</summary>\n\n| c |\n|---|\n| 3 |\n\n</details>\n\ntail\n"
	for n := 0; n <= len(doc); n++ {
		got := safeCut(doc, n)
		if !strings.HasPrefix(doc, got) || utf8.RuneCountInString(got) > n {
			t.Fatalf("safeCut(%d) = %q", n, got)
		}
		checkBalanced(t, got)
	}
	if got := safeCut(doc, len(doc)); got != doc[:strings.LastIndex(doc, "tail")] {
		t.Errorf("safeCut(all) = %q", got)
	}
}

// The verdict block of the demo's comment comes first: at most 12 lines
// above the first table, with no "✅ passed" left alone when PHP crashed
// in every benchmark server.
func TestVerdictBlockFirst(t *testing.T) {
	rs := []*results.Result{resultstest.DemoRun()}
	var full bytes.Buffer
	if err := RenderSummary(&full, rs); err != nil {
		t.Fatal(err)
	}
	body, err := commentBody(rs, renderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The target's sections begin with its heading: the block is what
	// comes before it and before any table.
	above, _, found := strings.Cut(body, "\n|")
	if !found {
		t.Fatal("the comment has no table")
	}
	above, _, _ = strings.Cut(above, "\n### ")
	lines := strings.Split(strings.TrimRight(above, "\n"), "\n")
	t.Logf("the comment's head:\n%s", above)
	if len(lines) > 12 {
		t.Errorf("%d lines above the first table, want at most 12:\n%s", len(lines), above)
	}
	for _, want := range []string{
		"## ✅ patchproof: passed",
		"Head `9f1e2d3c4b5a` (`mysqlnd-atomic-stats`) against base `5d8a2e9c0b7f` (merge-base with `PHP-8.2`)",
		"1. NTS: ✅ 484/484 identical",
		"2. tests: ✅ no regression",
		"3. contention: ✅ statistics-mutex calls a request 381 → 0; CPU cost of statistics +",
		"4. concurrency: ✅ counters exact",
		"5. backports: ",
		"- ⚠️ not gated: PHP crashed in every benchmark server (base 62 of 62, head 62 of 62",
	} {
		if !strings.Contains(above, want) {
			t.Errorf("the comment's head lacks %q", want)
		}
	}
}

// A stage that did not run, though asked for, and that no question's line
// tells of, is on the ⚠️ line.
func TestStagesSkipped(t *testing.T) {
	res := resultstest.Demo()
	res.Stages = append(res.Stages,
		&results.StageResult{Name: "abi", Status: results.StatusNotAvailable, Reason: "no abidw"},
		&results.StageResult{Name: "lint", Status: results.StatusSkipped, Reason: "not selected (--stages)"})
	got := stagesSkipped([]*results.Result{res})
	if want := []string{"stage abi not available (no abidw)"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stagesSkipped = %q, want %q", got, want)
	}
}

// In a merge of one job per target, a stage another target's job skipped
// (its backport did not apply, so it built nothing) is no caveat of this
// target's: each verdict block reads its own job's stages.
func TestVerdictCaveatsAreTheTargetsOwn(t *testing.T) {
	rs := resultstest.PRJobs(resultstest.PRTargets...)
	skipped := rs[len(rs)-1]
	for _, s := range skipped.Stages {
		if s.Name == "build" {
			s.Status, s.StartedAt, s.Reason = results.StatusSkipped, nil, "no source trees: checkout did not finish"
		}
	}
	rs = roundTrip(t, rs...)
	var b bytes.Buffer
	if err := RenderSummary(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := "stage build skipped (no source trees: checkout did not finish)"
	if n := strings.Count(b.String(), want); n != 1 {
		t.Errorf("%q appears %d times in the summary, want once (the skipped job's target only)", want, n)
	}
}
