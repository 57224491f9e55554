package report

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/suites"
)

// target is one target's section.
func (p *summaryWriter) target(t results.JobTarget) {
	p.f("### %s\n\n", markdown.Text(t.Name))
	if t.Backport != nil {
		p.backport(t.Backport)
	}
	if t.Backport == nil || t.Backport.Applied {
		p.nts(t.CodeDiff)
		p.zts(t.CodeDiff)
		p.builds(t.Builds)
		if t.Tests != nil {
			// Suites that agree are a line in the overview; their tables
			// are there for whoever wants them.
			fold := !t.Tests.Regressed() && len(t.Tests.Errors) == 0
			if fold {
				p.f("<details><summary>Test suites: %s</summary>\n\n", testsCell(t.Tests))
			}
			p.tests(t.Tests)
			if fold {
				p.f("</details>\n\n")
			}
		}
		if t.Race != nil {
			p.race(t.Race)
		}
		if t.Bench != nil {
			p.f("#### Contention benchmark\n\n")
			p.markdown(t.Bench.Markdown)
		}
	}
	if len(t.Errors) > 0 {
		p.f("#### Errors\n\n")
		for _, e := range t.Errors {
			p.f("- %s %s\n", statusIcon(results.StatusError), markdown.Text(e))
		}
		p.blank()
	}
}

// backport says how a backport target's head came to be, or which files
// and hunks of the change did not apply.
func (p *summaryWriter) backport(bp *results.BackportResult) {
	p.f("#### Backport\n\n")
	switch {
	case bp.Applied && bp.Explicit != "":
		p.f("%s The backport of %s's change to %s is %s, given with `--backport` (%s).\n\n",
			statusIcon(results.StatusPassed), markdown.Text(bp.From), markdown.Text(bp.Branch), markdown.Code(bp.Explicit), markdown.Code(shortSHA(bp.Commit)))
	case bp.Applied:
		p.f("%s %s's change (merge-base..head) applies cleanly onto %s: commit %s.\n\n",
			statusIcon(results.StatusPassed), markdown.Text(bp.From), markdown.Text(bp.Branch), markdown.Code(shortSHA(bp.Commit)))
	case len(bp.Conflicts) > 0:
		p.f("%s %s's change does not apply onto %s: %s failed. Nothing else was checked on this branch.\n\n",
			statusIcon(results.StatusFailed), markdown.Text(bp.From), markdown.Text(bp.Branch), plural(len(bp.Conflicts), "hunk", "hunks"))
		p.f("| file | hunk | why |\n|---|---|---|\n")
		for _, c := range bp.Conflicts {
			p.f("| %s | %s | %s |\n", markdown.Code(c.File), markdown.Code(c.Hunk), markdown.Text(c.Reason))
		}
		p.blank()
	default:
		p.f("%s %s's change could not be applied onto %s: %s\n\n",
			statusIcon(results.StatusError), markdown.Text(bp.From), markdown.Text(bp.Branch), markdown.Text(firstLine(bp.Error)))
	}
}

// tests is the test-suite comparison of each variant, base vs head.
func (p *summaryWriter) tests(tr *results.TestsResult) {
	for _, vc := range tr.Comparisons {
		var runs []*suites.RunResult
		for _, r := range tr.Runs {
			if r.Build == vc.Comparison.Base || r.Build == vc.Comparison.Head {
				runs = append(runs, r)
			}
		}
		p.markdown(func(w io.Writer) error { return suites.WriteMarkdown(w, vc.Comparison, runs) })
	}
	if len(tr.Comparisons) == 0 {
		p.f("#### Test suites\n\nNot compared: no base and head run of the same variant.\n\n")
	}
	for _, e := range tr.Errors {
		p.f("> [!WARNING]\n> %s\n\n", markdown.Text(e))
	}
	if tr.Server != "" {
		p.f("The suites ran against %s.\n\n", markdown.Text(tr.Server))
	}
}

func (p *summaryWriter) nts(cd *results.CodeDiffResult) {
	p.f("#### NTS machine code\n\n")
	if cd == nil {
		p.f("Not compared: the codediff stage did not run for this target.\n\n")
		return
	}
	for _, e := range cd.Errors {
		p.f("> [!WARNING]\n> Not compared: %s\n\n", markdown.Text(e))
	}
	if cd.NTS == nil {
		if len(cd.Errors) == 0 {
			p.f("Not compared: no NTS build of both base and head.\n\n")
		}
		return
	}
	if cd.ExpectNTSNoop {
		p.f("The verdict: with `--expect-nts-noop`, any changed, added or removed function fails the run.\n\n")
	} else {
		p.f("Information only (`--expect-nts-noop=false`).\n\n")
	}
	if !p.opt.compact {
		p.markdown(cd.NTS.Markdown)
		return
	}
	r := cd.NTS
	p.f("**%s** (`%s`): %d changed, %d added, %d removed.\n\n", r.Summary(), r.Objects, len(r.Changed), len(r.Added), len(r.Removed))
	p.funcList(r, 0)
	if len(r.Changed) > 0 {
		p.f("The disassembly diffs would not fit in a comment: they are in summary.md and results.json.\n\n")
	}
}

// maxListed caps the functions listed by name in a section.
const maxListed = 100

func (p *summaryWriter) zts(cd *results.CodeDiffResult) {
	if cd == nil || cd.ZTS == nil {
		return
	}
	r := cd.ZTS
	p.f("#### ZTS machine code\n\n")
	p.f("Information: the functions the change touches under ZTS. %s.\n\n", r.Summary())
	for _, w := range r.Warnings {
		p.f("> warning: %s\n", markdown.Text(w))
	}
	p.blank()
	if n := len(r.Changed) + len(r.Added) + len(r.Removed); n > 0 {
		p.f("<details><summary>%s under ZTS</summary>\n\n", html.EscapeString(changeCounts(r)))
		p.funcList(r, maxListed)
		p.f("</details>\n\n")
	}
}

// funcList lists the changed, added and removed functions of r by name, at
// most max of them (0: all).
func (p *summaryWriter) funcList(r *codediff.Report, max int) {
	var lines []string
	for _, d := range r.Changed {
		lines = append(lines, fmt.Sprintf("- %s in %s (%d → %d bytes)", markdown.Code(d.Name), markdown.Code(d.Object), d.BaseSize, d.HeadSize))
	}
	for _, f := range r.Added {
		lines = append(lines, fmt.Sprintf("- added: %s in %s (%d bytes)", markdown.Code(f.Name), markdown.Code(f.Object), f.Size))
	}
	for _, f := range r.Removed {
		lines = append(lines, fmt.Sprintf("- removed: %s in %s (%d bytes)", markdown.Code(f.Name), markdown.Code(f.Object), f.Size))
	}
	if max > 0 && len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("- and %d more (results.json has them all)", len(lines)-max))
	}
	for _, l := range lines {
		p.f("%s\n", l)
	}
	p.blank()
}

// maxCompileErrors caps the compiler errors shown per failed build.
const maxCompileErrors = 5

func (p *summaryWriter) builds(bs []*builders.Build) {
	if len(bs) == 0 {
		return
	}
	sorted := slices.Clone(bs)
	slices.SortStableFunc(sorted, func(a, b *builders.Build) int {
		return cmp.Or(cmp.Compare(a.Side, b.Side), cmp.Compare(a.Variant, b.Variant))
	})
	p.f("#### Builds\n\n")
	p.f("| build | result | cached | php -v | time |\n|---|---|---|---|--:|\n")
	for _, b := range sorted {
		result := statusIcon(results.StatusPassed) + " built"
		if !b.OK {
			result = statusIcon(results.StatusFailed) + " " + markdown.Text(firstLine(cmp.Or(b.Failure, "failed")))
		}
		cached := "no"
		if b.Cached {
			cached = "yes"
		}
		version := "—"
		if b.PHPVersion != "" {
			version = markdown.Code(b.PHPVersion)
		}
		p.f("| %s %s | %s | %s | %s | %s |\n", markdown.Text(string(b.Side)), markdown.Text(string(b.Variant)), result, cached, version, fmtMS(b.DurationMS))
	}
	p.blank()
	for _, b := range sorted {
		if b.OK || len(b.Errors) == 0 {
			continue
		}
		p.f("**%s %s** failed to compile; the first errors:\n\n", markdown.Text(string(b.Side)), markdown.Text(string(b.Variant)))
		var lines []string
		for i, e := range b.Errors {
			if i == maxCompileErrors {
				lines = append(lines, fmt.Sprintf("... and %d more in %s", len(b.Errors)-i, cmp.Or(b.BuildLog, "the build log")))
				break
			}
			place := fmt.Sprintf("%s:%d", e.File, e.Line)
			if e.Column > 0 {
				place += fmt.Sprintf(":%d", e.Column)
			}
			lines = append(lines, place+": error: "+e.Message)
		}
		p.f("%s\n", markdown.CodeBlock("text", strings.Join(lines, "\n")))
	}
}

// changeCounts is "2 changed", "2 changed, 1 added", ...
func changeCounts(r *codediff.Report) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{len(r.Changed), "changed"}, {len(r.Added), "added"}, {len(r.Removed), "removed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}
