package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/abi"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/suites"
)

// prPayloads are what a PR's author controls and tried to deface the
// comment with: mentions, links, images, HTML, a code span's backtick, a
// table's pipe, a line break.
var prPayloads = []string{
	"@php/release-managers ![px](https://evil.example/p.png)",
	"[click](https://evil.example/x) <https://evil.example/y> www.evil.example",
	"gh`8978`.phpt | a | b",
	`<img src="https://evil.example/i.png"><script>alert(1)</script>`,
	"ping @someone\n> fixes #12345",
}

// hostile is a failing run in which every text the PR controls is a
// payload: the head's subject and branch, a changed function's name and
// object, a compiler message, a stage warning, a regressed test's name, a
// skip reason, a failure's info.
func hostile() *results.Result {
	res := resultstest.Failing()
	t := res.Targets[0]
	p := func(i int) string { return prPayloads[i%len(prPayloads)] }
	t.Head.Subject = p(0)
	t.Head.Ref = p(1)
	t.CodeDiff.NTS = resultstest.NTSReport(codediff.FuncDiff{
		Object: "ext/mysqlnd/" + p(2) + ".o", Name: p(3), BaseSize: 8, HeadSize: 9,
		Diff: "--- a\n+++ b\n@@ -1 +1 @@\n-" + p(4) + "\n+" + p(0) + "\n",
	})
	t.CodeDiff.NTS.Added = []codediff.Func{{Name: p(1), Object: p(2), Size: 4}}
	t.CodeDiff.NTS.Warnings = []string{p(4)}
	for _, b := range t.Builds {
		if !b.OK {
			b.Errors = []builders.CompileError{{File: "ext/mysqlnd/" + p(2), Line: 1, Column: 1, Message: p(3)}}
		}
	}
	res.Stages[2].Warnings = []string{p(0)}
	var base, head []suites.TestResult
	for i := range prPayloads {
		name := fmt.Sprintf("ext/mysqli/tests/%s-%d.phpt", p(i), i)
		base = append(base, suites.TestResult{Name: name, Outcome: suites.Pass})
		head = append(head, suites.TestResult{Name: name, Outcome: suites.Fail, Reason: p(i + 1)})
		skip := fmt.Sprintf("ext/mysqli/tests/skip-%d.phpt", i)
		base = append(base, suites.TestResult{Name: skip, Outcome: suites.Fail, Reason: p(i + 2)})
		head = append(head, suites.TestResult{Name: skip, Outcome: suites.Fail, Reason: p(i + 2)})
		// Skipped on head only: the SKIP reason is the head's own text.
		skipped := fmt.Sprintf("ext/mysqli/tests/skipped-%d.phpt", i)
		base = append(base, suites.TestResult{Name: skipped, Outcome: suites.Pass})
		head = append(head, suites.TestResult{Name: skipped, Outcome: suites.Skip, Reason: p(i)})
	}
	br, hr := &suites.RunResult{Build: "master-base-nts"}, &suites.RunResult{Build: "master-head-nts"}
	br.Add(suites.NewSuiteRun("ext/mysqli/tests", base, time.Second))
	hr.Add(suites.NewSuiteRun("ext/mysqli/tests", head, time.Second))
	// A run's warnings quote what the head's run-tests.php printed (an
	// unknown result word, a test's name).
	hr.Warnings = []string{p(0), p(3)}
	t.Tests = &suites.Result{Server: "MariaDB", Runs: []*suites.RunResult{br, hr},
		Comparisons: []*suites.VariantComparison{{Variant: "nts", Comparison: suites.Compare(br, hr)}}}
	// An ABI change: the names and types are the head's headers'.
	t.ABI = &abi.Result{Branch: t.Name, Policy: "information", Variants: []*abi.Variant{{Name: "zts", Headers: 1, Types: 2,
		Changes: []abi.Change{{Kind: abi.MemberRetyped, Subject: "struct " + p(0), Member: p(1), Base: p(2), Head: p(3),
			File: "ext/mysqlnd/" + p(4) + ".h", Line: 3, Break: true}}}}}
	// A backport that conflicts three ways: both sides are the trees'
	// text, the change's the PR's.
	res.Targets = append(res.Targets, &results.TargetResult{Name: "PHP-8.4", Repo: t.Repo,
		Base: results.CommitRef{Ref: "PHP-8.4", Commit: strings.Repeat("3", 40)},
		Head: results.CommitRef{Ref: t.Head.Commit[:12] + " onto PHP-8.4"},
		Backport: &results.BackportResult{From: "master", FromCommit: t.Head.Commit, Branch: "PHP-8.4", ThreeWay: true,
			Error: "merge conflicts: 1 region", Conflicts: []checkout.HunkConflict{{File: "ext/mysqlnd/" + p(2), Hunk: "line 3",
				Reason: "the branch and the change edit these lines differently", Branch: p(0) + "\n" + p(4) + "\n", Change: p(1) + "\n" + p(3) + "\n",
				BranchLines: 3, ChangeLines: 2}}}})
	return res
}

// The whole comment, rendered from a run whose every PR-controlled text is
// a payload, parsed as GitHub's GFM: no link or image goes where the PR
// says, no HTML of the PR's is raw, no table row has more cells than its
// header, and no mention or reference of the payloads' is live text. The
// payloads do reach the comment (the check is not vacuous).
func TestCommentDefangsWhatThePRControls(t *testing.T) {
	res := hostile()
	var summary bytes.Buffer
	if err := RenderSummary(&summary, []*results.Result{res}); err != nil {
		t.Fatal(err)
	}
	comment, err := commentBody([]*results.Result{res}, renderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live := regexp.MustCompile(`@(php/release-managers|someone)|#12345`)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for name, doc := range map[string]string{"summary.md": summary.String(), "comment": comment} {
		if !strings.Contains(doc, "evil.example") || !strings.Contains(doc, "release-managers") {
			t.Fatalf("%s: the payloads do not reach it; the test proves nothing", name)
		}
		src := []byte(doc)
		var plain bytes.Buffer
		header := 0
		ast.Walk(md.Parser().Parse(gmtext.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch n := n.(type) {
			case *ast.Link:
				if strings.Contains(string(n.Destination), "evil") {
					t.Errorf("%s: a link to %s", name, n.Destination)
				}
			case *ast.Image:
				t.Errorf("%s: an image of %s", name, n.Destination)
			case *ast.AutoLink:
				if u := string(n.URL(src)); strings.Contains(u, "evil") {
					t.Errorf("%s: an autolink to %s", name, u)
				}
			case *ast.RawHTML:
				var h strings.Builder
				for i := 0; i < n.Segments.Len(); i++ {
					seg := n.Segments.At(i)
					h.Write(seg.Value(src))
				}
				if s := h.String(); strings.Contains(s, "<img") || strings.Contains(s, "<script") {
					t.Errorf("%s: raw HTML %q", name, s)
				}
			case *ast.HTMLBlock:
				var h strings.Builder
				for i := 0; i < n.Lines().Len(); i++ {
					seg := n.Lines().At(i)
					h.Write(seg.Value(src))
				}
				if s := h.String(); strings.Contains(s, "<img") || strings.Contains(s, "<script") {
					t.Errorf("%s: an HTML block %q", name, s)
				}
			case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
				// GitHub renders nothing live in code.
				return ast.WalkSkipChildren, nil
			case *east.TableHeader:
				header = n.ChildCount()
			case *east.TableRow:
				if n.ChildCount() != header {
					t.Errorf("%s: a table row of %d cells under a header of %d", name, n.ChildCount(), header)
				}
			case *ast.Text:
				plain.Write(n.Segment.Value(src))
			case *ast.String:
				plain.Write(n.Value)
			}
			return ast.WalkContinue, nil
		})
		if m := live.FindString(plain.String()); m != "" {
			t.Errorf("%s: %q is live text, a mention or reference on GitHub", name, m)
		}
	}
}
