package report

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/visible"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/abi"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/suites"
	"github.com/patchproof/patchproof/workloads/phptests"
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
func hostile() *results.Result { return hostileWith(prPayloads) }

// hostileWith is hostile with payloads for the PR's texts, each of them
// somewhere, and the checks that hostile() leaves out besides: php -v's
// version, the head's API number, the concurrency check's counter names,
// race summary and stack frames, a failed test's diff, and the benchmark's
// warnings.
func hostileWith(payloads []string) *results.Result {
	res := resultstest.Failing()
	t := res.Targets[0]
	p := func(i int) string { return payloads[i%len(payloads)] }
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
	for i := range payloads {
		name := fmt.Sprintf("ext/mysqli/tests/%s-%d.phpt", p(i), i)
		base = append(base, suites.TestResult{Name: name, Outcome: suites.Pass})
		head = append(head, suites.TestResult{Name: name, Outcome: suites.Fail, Reason: p(i + 1), Diff: "001+ " + p(i+3) + "\n001- ok\n"})
		skip := fmt.Sprintf("ext/mysqli/tests/skip-%d.phpt", i)
		base = append(base, suites.TestResult{Name: skip, Outcome: suites.Fail, Reason: p(i + 2)})
		head = append(head, suites.TestResult{Name: skip, Outcome: suites.Fail, Reason: p(i + 2)})
		// Skipped on head only: the SKIP reason is the head's own text.
		skipped := fmt.Sprintf("ext/mysqli/tests/skipped-%d.phpt", i)
		base = append(base, suites.TestResult{Name: skipped, Outcome: suites.Pass})
		head = append(head, suites.TestResult{Name: skipped, Outcome: suites.Skip, Reason: p(i)})
	}
	br, hr := &suites.RunResult{Build: "master-base-nts"}, &suites.RunResult{Build: "master-head-nts"}
	br.Add(phptests.NewSuiteRun("ext/mysqli/tests", base, time.Second))
	hr.Add(phptests.NewSuiteRun("ext/mysqli/tests", head, time.Second))
	// A run's warnings quote what the head's run-tests.php printed (an
	// unknown result word, a test's name).
	hr.Warnings = []string{p(0), p(3)}
	t.Tests = &suites.Result{Server: "MariaDB", Runs: []*suites.RunResult{br, hr},
		Comparisons: []*suites.VariantComparison{{Variant: "nts", Comparison: suites.Compare(br, hr)}}}
	// An ABI change: the names and types are the head's headers'.
	t.ABI = &abi.Result{Branch: t.Name, Policy: "information", Variants: []*abi.Variant{{Name: "zts", Headers: 1, Types: 2,
		Changes: []abi.Change{{Kind: abi.MemberRetyped, Subject: "struct " + p(0), Member: p(1), Base: p(2), Head: p(3),
			File: "ext/mysqlnd/" + p(4) + ".h", Line: 3, Break: true}}}}}
	for i, b := range t.Builds {
		if b.OK {
			b.PHPVersion = "PHP 8.5.0-dev " + p(i)
		}
	}
	t.ABI.Variants[0].APINumbers = []abi.APINumber{{Name: "PHP_API_VERSION", File: "main/php.h", Line: 1, Base: "20240924", Head: p(1)}}
	rr := resultstest.RaceResult(true)
	for i := range rr.Counters[1].Check.Off {
		rr.Counters[1].Check.Off[i].Name = p(i + 2)
	}
	rr.Counters[1].Check.WorkError = p(3)
	rep := &rr.TSan.Diff.New[0]
	rep.Summary, rep.Location = "data race "+p(4), p(0)
	rep.Accesses[0].What = p(1)
	rep.Accesses[0].Stack[0].Func = p(2)
	t.Race = rr
	t.Bench = resultstest.DemoBench("bench/master")
	t.Bench.Warnings = append(t.Bench.Warnings, p(3))
	t.Bench.Arms[0].Samples[0].Warnings = append(t.Bench.Arms[0].Samples[0].Warnings, "locks: table "+p(4)+" vanished in the window")
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

// probes are what got through the escapers before they knew of them
// (internal/markdown's Probes): character references that GitHub reads
// as @, # and a link's colon, a lone CR (a line break to CommonMark that
// goldmark does not take for one), and bidirectional, zero-width and
// control characters (an RLO, isolates, ANSI's ESC, a C1 CSI).
var probes = []string{
	"&commat;php/security-team",
	"&#64;probe-dec &#x40;probe-hex",
	"&num;31337",
	"https&colon;//evil.example/probe",
	"lone\rCR",
	"\u202Eexe.txt",
	"\x1b[31mred",
	"ad\u200bmin \u2066x\u2069 \u009b31m",
}

// The whole comment and summary of a run whose every PR-controlled text is
// a probe: no raw CR, control, bidirectional or zero-width character is
// in the Markdown (but the word joiners the escapes put after @ and #),
// and rendered as HTML, its raw HTML kept and every character reference
// read as a browser reads it, no reference of the probes' has made an @,
// a # or a link. The probes reach both (the check is not vacuous), their
// hidden characters shown as code points.
func TestCommentShowsNoHiddenText(t *testing.T) {
	res := hostileWith(probes)
	var summary bytes.Buffer
	if err := RenderSummary(&summary, []*results.Result{res}); err != nil {
		t.Fatal(err)
	}
	comment, err := commentBody([]*results.Result{res}, renderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	for name, doc := range map[string]string{"summary.md": summary.String(), "comment": comment} {
		for i, r := range doc {
			if r == '\r' || visible.Hidden(r) && r != '\u2060' {
				t.Errorf("%s: a raw %U at %d: %q", name, r, i, doc[max(0, i-60):min(len(doc), i+60)])
			}
		}
		var out bytes.Buffer
		if err := md.Convert([]byte(doc), &out); err != nil {
			t.Fatal(err)
		}
		seen := html.UnescapeString(out.String())
		for _, live := range []string{"@php/security-team", "@probe-dec", "@probe-hex", "#31337", "https://evil.example/probe"} {
			if i := strings.Index(seen, live); i >= 0 {
				t.Errorf("%s: %q is read from a reference: %q", name, live, seen[max(0, i-80):min(len(seen), i+80)])
			}
		}
		for _, reached := range []string{"security-team", "probe-dec", "31337", "evil.example/probe", "<U+202E>exe.txt", "<U+001B>[31mred", "<U+200B>", "<U+009B>"} {
			if !strings.Contains(seen, reached) {
				t.Errorf("%s: %q does not reach it; the test proves less than it says", name, reached)
			}
		}
	}
	// What each check of the run quotes reaches the summary.
	for _, part := range []string{"PHP 8.5.0-dev", "PHP_API_VERSION", "data race", "locks: table"} {
		if !strings.Contains(summary.String(), part) {
			t.Errorf("summary.md lacks %q: hostileWith does not reach that check", part)
		}
	}
}
