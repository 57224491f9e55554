package pipeline

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/codediff"
	"github.com/patchproof/patchproof/verify/suites"
	"github.com/patchproof/patchproof/workloads/bench"
)

// This file renders the report: one Markdown summary of one or more Results
// (one per target or job), for summary.md, $GITHUB_STEP_SUMMARY and the PR
// comment. It reads Results only, so a results.json written by another job
// renders the same as the run in hand; the output depends on nothing else
// (no clock, no map order), which is what the golden test checks.

// RenderSummary writes the Markdown summary of results: the verdict, an
// overview row per target, then per target the machine-code comparison, the
// builds and the other checks, the stages with a chart of where the time
// went, and the commits, settings and machine. Several Results (one per job)
// render as one report.
func RenderSummary(w io.Writer, rs []*results.Result) error {
	return renderSummary(w, rs, renderOptions{})
}

// renderOptions vary the summary.
type renderOptions struct {
	// compact leaves out the disassembly diffs, for a comment that would
	// exceed GitHub's size limit with them.
	compact bool
}

func renderSummary(w io.Writer, rs []*results.Result, opt renderOptions) error {
	p := &summaryWriter{opt: opt}
	rs = results.SortedResults(rs)
	targets := results.SortedTargets(rs)
	v := results.VerdictOf(rs)
	p.headline(rs, targets, v)
	for _, t := range targets {
		p.target(t)
	}
	for _, res := range rs {
		p.stages(res, len(rs) > 1)
	}
	p.footer(rs, targets)
	if p.err != nil {
		return fmt.Errorf("render summary: %w", p.err)
	}
	_, err := io.WriteString(w, p.b.String())
	return err
}

// summaryWriter accumulates the summary; the first error of a section's Markdown
// method is kept.
type summaryWriter struct {
	b   strings.Builder
	err error
	opt renderOptions
}

func (p *summaryWriter) f(format string, a ...any) { fmt.Fprintf(&p.b, format, a...) }

// markdown writes a section rendered by its own Markdown method.
func (p *summaryWriter) markdown(md func(io.Writer) error) {
	if err := md(&p.b); err != nil && p.err == nil {
		p.err = err
	}
	p.blank()
}

// blank ends the current block with exactly one blank line.
func (p *summaryWriter) blank() {
	s := p.b.String()
	switch {
	case s == "", strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		p.b.WriteString("\n")
	default:
		p.b.WriteString("\n\n")
	}
}

// statusIcon is the icon of a status, so that a verdict reads at a glance.
func statusIcon(s results.Status) string {
	switch s {
	case results.StatusPassed:
		return "✅"
	case results.StatusFailed:
		return "❌"
	case results.StatusError:
		return "⚠️"
	case results.StatusSkipped:
		return "⏭️"
	case results.StatusNotAvailable:
		return "➖"
	case results.StatusRunning:
		return "⏳"
	}
	return "❔"
}

// notChecks are stages that check nothing themselves.
var notChecks = []string{"checkout", "report"}

func (p *summaryWriter) headline(rs []*results.Result, targets []results.JobTarget, v results.Verdict) {
	ran, notRun := checksRun(rs)
	checked := false
	for _, s := range ran {
		if !slices.Contains(notChecks, s) {
			checked = true
		}
	}
	switch {
	case v.Status == results.StatusPassed && !checked:
		p.f("## ⚪ patchproof: nothing was checked\n\n")
	case v.Status == results.StatusPassed:
		p.f("## ✅ patchproof: passed\n\n")
	case v.Status == results.StatusFailed:
		p.f("## ❌ patchproof: a check failed\n\n")
	default:
		p.f("## ⚠️ patchproof: could not run\n\n")
	}
	p.f("%s\n\n", subject(rs, targets))

	if v.Status != results.StatusPassed {
		n := 0
		for _, res := range rs {
			for _, s := range res.Stages {
				if s.Status != results.StatusFailed && s.Status != results.StatusError {
					continue
				}
				label := s.Name
				if len(rs) > 1 {
					label = results.JobName(res) + " " + s.Name
				}
				what := "failed"
				if s.Status == results.StatusError {
					what = "could not run"
				}
				p.f("- %s **%s** %s: %s\n", statusIcon(s.Status), markdown.Text(label), what, markdown.Text(firstLine(s.Note())))
				n++
			}
		}
		if n == 0 {
			p.f("- %s %s\n", statusIcon(v.Status), markdown.Text(v.Reason))
		}
		p.blank()
	}
	if len(ran) > 0 {
		p.f("Ran: %s.", strings.Join(ran, ", "))
	}
	if len(notRun) > 0 {
		if len(ran) > 0 {
			p.f(" ")
		}
		p.f("Not run: %s.", markdown.Text(strings.Join(notRun, "; ")))
	}
	p.blank()
	for _, res := range rs {
		for _, w := range res.Warnings {
			p.f("> [!WARNING]\n> %s\n\n", markdown.Text(w))
		}
	}
	p.overview(targets)
}

// subject says what was validated: the PR, or the repository and refs.
func subject(rs []*results.Result, targets []results.JobTarget) string {
	var parts []string
	s := rs[0].Settings
	switch {
	case s.Demo && strings.HasPrefix(s.Repo, "demo"):
		parts = append(parts, "The bundled "+markdown.Text(s.Repo))
	case s.Demo:
		parts = append(parts, "The bundled demo: "+markdown.Text(s.Repo))
	case s.PR > 0:
		ref := fmt.Sprintf("#%d", s.PR)
		if owner, name, _, ok := parseRepoURL(s.Repo); ok {
			ref = fmt.Sprintf("[%s/%s#%d](%s/pull/%d)", owner, name, s.PR, repoWeb(s.Repo), s.PR)
		}
		parts = append(parts, "Pull request "+ref)
	default:
		parts = append(parts, markdown.Code(s.Repo))
	}
	var names []string
	for _, t := range targets {
		names = append(names, markdown.Text(t.Name))
	}
	if len(names) > 0 {
		parts = append(parts, mdPlural(len(names), "target", "targets")+": "+strings.Join(names, ", "))
	}
	for _, res := range rs {
		if res.RunURL != "" {
			parts = append(parts, fmt.Sprintf("[the run](%s)", res.RunURL))
			break
		}
	}
	return strings.Join(parts, " · ")
}

// checksRun lists the stages that ran in any result, and those that ran in
// none, grouped by why: "tests, bench — not selected (--stages)".
func checksRun(rs []*results.Result) (ran, notRun []string) {
	var order, reasons []string
	did := map[string]bool{}
	why := map[string]string{}
	for _, res := range rs {
		for _, s := range res.Stages {
			if s.Name == "report" {
				continue
			}
			if !slices.Contains(order, s.Name) {
				order = append(order, s.Name)
			}
			switch s.Status {
			case results.StatusPassed, results.StatusFailed, results.StatusError, results.StatusRunning:
				did[s.Name] = true
			default:
				if why[s.Name] == "" {
					why[s.Name] = cmp.Or(s.Reason, string(s.Status))
				}
			}
		}
	}
	for _, name := range order {
		if did[name] {
			ran = append(ran, name)
		} else if !slices.Contains(reasons, why[name]) {
			reasons = append(reasons, why[name])
		}
	}
	for _, reason := range reasons {
		var names []string
		for _, name := range order {
			if !did[name] && why[name] == reason {
				names = append(names, name)
			}
		}
		notRun = append(notRun, strings.Join(names, ", ")+" — "+reason)
	}
	return ran, notRun
}

// overview is one row per target: the reviewer's minute.
func (p *summaryWriter) overview(targets []results.JobTarget) {
	if len(targets) == 0 {
		return
	}
	var tests, benches, backports bool
	for _, t := range targets {
		tests = tests || t.Tests != nil
		benches = benches || t.Bench != nil
		backports = backports || t.Backport != nil
	}
	p.f("| target | NTS machine code | ZTS machine code (information) | builds |")
	if tests {
		p.f(" tests |")
	}
	if benches {
		p.f(" cost of statistics, head vs base |")
	}
	if backports {
		p.f(" backport |")
	}
	p.f("\n|---|---|---|---|%s%s%s\n", strings.Repeat("---|", btoi(tests)), strings.Repeat("---|", btoi(benches)), strings.Repeat("---|", btoi(backports)))
	for _, t := range targets {
		if t.Backport != nil && !t.Backport.Applied {
			p.f("| [%s](#%s) | not compared | not compared | none |", markdown.Text(t.Name), markdown.Anchor(t.Name))
		} else {
			p.f("| [%s](#%s) | %s | %s | %s |", markdown.Text(t.Name), markdown.Anchor(t.Name), ntsCell(t.CodeDiff), ztsCell(t.CodeDiff), buildsCell(t.Builds))
		}
		if tests {
			p.f(" %s |", testsCell(t.Tests))
		}
		if benches {
			p.f(" %s |", benchCell(t.Bench))
		}
		if backports {
			p.f(" %s |", backportCell(t.Backport))
		}
		p.f("\n")
	}
	p.blank()
}

// benchCell sums the benchmark up: each exact measure's verdict on head's
// cost of statistics against base's.
func benchCell(b *bench.Result) string {
	if b == nil {
		return "not run"
	}
	var parts []string
	for _, m := range b.Measures {
		if m.Name == "locks" {
			// The number a reviewer looks for first.
			var baseOn, headOn *bench.ArmSummary
			for i := range m.Arms {
				switch m.Arms[i].Arm {
				case "base-on":
					baseOn = &m.Arms[i]
				case "head-on":
					headOn = &m.Arms[i]
				}
			}
			if baseOn != nil && headOn != nil {
				parts = append(parts, fmt.Sprintf("lock calls/req, statistics on: %.4g → %.4g", baseOn.Median, headOn.Median))
			}
		}
		if m.Noisy || m.Verdict == "" {
			continue
		}
		icon := "➖"
		switch m.Verdict {
		case "improved":
			icon = "✅"
		case "regressed":
			icon = "❌"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", icon, strings.ReplaceAll(m.Name, "_", " "), m.Verdict))
	}
	if len(parts) == 0 {
		return "base only"
	}
	return strings.Join(parts, "<br>")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func testsCell(tr *results.TestsResult) string {
	if tr == nil {
		return "not run"
	}
	if len(tr.Comparisons) == 0 {
		return statusIcon(results.StatusError) + " not compared"
	}
	regressions, flakes := 0, 0
	var variants []string
	for _, vc := range tr.Comparisons {
		regressions += len(vc.Comparison.Regressions)
		flakes += len(vc.Comparison.Flakes)
		variants = append(variants, string(vc.Variant))
	}
	var s string
	if regressions > 0 {
		s = statusIcon(results.StatusFailed) + " " + mdPlural(regressions, "regression", "regressions")
	} else {
		s = statusIcon(results.StatusPassed) + " no regression"
	}
	s += " (" + strings.Join(variants, ", ") + ")"
	if flakes > 0 {
		s += ", " + mdPlural(flakes, "flake", "flakes")
	}
	if len(tr.Errors) > 0 {
		s += ", " + statusIcon(results.StatusError) + " " + mdPlural(len(tr.Errors), "error", "errors")
	}
	return s
}

func backportCell(bp *results.BackportResult) string {
	switch {
	case bp == nil:
		return "—"
	case bp.Applied && bp.Explicit != "":
		return statusIcon(results.StatusPassed) + " given"
	case bp.Applied:
		return statusIcon(results.StatusPassed) + " applies"
	case len(bp.Conflicts) > 0:
		return statusIcon(results.StatusFailed) + " " + mdPlural(len(bp.Conflicts), "hunk", "hunks") + " failed"
	}
	return statusIcon(results.StatusError) + " not applied"
}

func ntsCell(cd *results.CodeDiffResult) string {
	if cd == nil || cd.NTS == nil {
		if cd != nil && len(cd.Errors) > 0 {
			return statusIcon(results.StatusError) + " not compared"
		}
		return "not compared"
	}
	r := cd.NTS
	if r.AllIdentical() {
		return fmt.Sprintf("%s %d/%d identical", statusIcon(results.StatusPassed), r.Identical, r.Compared)
	}
	mark := "ℹ️"
	if cd.ExpectNTSNoop {
		mark = statusIcon(results.StatusFailed)
	}
	return fmt.Sprintf("%s %d/%d identical, %s", mark, r.Identical, r.Compared, changeCounts(r))
}

func ztsCell(cd *results.CodeDiffResult) string {
	if cd == nil || cd.ZTS == nil {
		return "not compared"
	}
	r := cd.ZTS
	if r.AllIdentical() {
		return fmt.Sprintf("%d/%d identical", r.Identical, r.Compared)
	}
	return fmt.Sprintf("%s (of %d)", changeCounts(r), r.Compared)
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

func buildsCell(bs []*builders.Build) string {
	if len(bs) == 0 {
		return "none"
	}
	ok := 0
	for _, b := range bs {
		if b.OK {
			ok++
		}
	}
	s := results.StatusPassed
	if ok < len(bs) {
		s = results.StatusFailed
	}
	return fmt.Sprintf("%s %d/%d built", statusIcon(s), ok, len(bs))
}

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
			statusIcon(results.StatusFailed), markdown.Text(bp.From), markdown.Text(bp.Branch), mdPlural(len(bp.Conflicts), "hunk", "hunks"))
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
		p.f("| %s %s | %s | %s | %s | %s |\n", markdown.Text(b.Side), markdown.Text(string(b.Variant)), result, cached, version, fmtMS(b.DurationMS))
	}
	p.blank()
	for _, b := range sorted {
		if b.OK || len(b.Errors) == 0 {
			continue
		}
		p.f("**%s %s** failed to compile; the first errors:\n\n", markdown.Text(b.Side), markdown.Text(string(b.Variant)))
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

// stages is the stage table of one Result, with a chart of where the time
// went and the warnings and long errors folded.
func (p *summaryWriter) stages(res *results.Result, merged bool) {
	if len(res.Stages) == 0 {
		return
	}
	if merged {
		p.f("### Stages: %s\n\n", markdown.Text(results.JobName(res)))
	} else {
		p.f("### Stages\n\n")
	}
	var shown []*results.StageResult
	for _, s := range res.Stages {
		// The report stage is the one rendering this, in a live run.
		if s.Name == "report" && s.Status == results.StatusRunning {
			continue
		}
		shown = append(shown, s)
	}
	p.chart(shown)
	p.f("| stage | status | time | note |\n|---|---|--:|---|\n")
	for _, s := range shown {
		t := "—"
		if s.StartedAt != nil {
			t = fmtMS(s.DurationMS)
		}
		note := markdown.Text(cmp.Or(firstLine(s.Note()), s.Reason))
		if n := len(s.Warnings); n > 0 {
			note = strings.TrimPrefix(note+"; ", "; ") + "⚠️ " + mdPlural(n, "warning", "warnings")
		}
		p.f("| %s | %s %s | %s | %s |\n", s.Name, statusIcon(s.Status), s.Status, t, note)
	}
	p.blank()
	for _, s := range shown {
		long := strings.Contains(strings.TrimSpace(s.Error), "\n") || len(s.Error) > 160
		if !long && len(s.Warnings) == 0 {
			continue
		}
		var what []string
		if long {
			what = append(what, "error")
		}
		if n := len(s.Warnings); n > 0 {
			what = append(what, mdPlural(n, "warning", "warnings"))
		}
		p.f("<details><summary>%s: %s</summary>\n\n", html.EscapeString(s.Name), strings.Join(what, ", "))
		if long {
			p.f("%s\n", markdown.CodeBlock("text", s.Error))
		}
		for _, w := range s.Warnings {
			p.f("- %s\n", markdown.Text(w))
		}
		p.blank()
		if s.Log != "" {
			p.f("Log: `%s`\n\n", s.Log)
		}
		p.f("</details>\n\n")
	}
}

// chartWidth is the longest bar, in character cells.
const chartWidth = 24

// chart draws the stages' durations as bars: where the time went reads
// faster from bars than from a column of numbers. It is text, so it renders
// in a PR comment.
func (p *summaryWriter) chart(stages []*results.StageResult) {
	var ran []*results.StageResult
	var longest int64
	for _, s := range stages {
		if s.StartedAt != nil {
			ran = append(ran, s)
			longest = max(longest, s.DurationMS)
		}
	}
	if len(ran) < 2 || longest <= 0 {
		return
	}
	nameWidth := 0
	for _, s := range ran {
		nameWidth = max(nameWidth, len(s.Name))
	}
	var lines []string
	for _, s := range ran {
		bar := chartBar(float64(s.DurationMS) / float64(longest) * chartWidth)
		lines = append(lines, fmt.Sprintf("%-*s %s %7s", nameWidth, s.Name, bar, fmtMS(s.DurationMS)))
	}
	p.f("%s\n", markdown.CodeBlock("text", strings.Join(lines, "\n")))
}

// chartBar draws cells character cells in eighths; anything above zero shows.
func chartBar(cells float64) string {
	eighths := int(cells*8 + 0.5)
	if eighths == 0 && cells > 0 {
		eighths = 1
	}
	partial := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	s := strings.Repeat("█", eighths/8) + partial[eighths%8]
	// Pad to the width in cells: %-*s counts bytes, not cells.
	return s + strings.Repeat(" ", max(0, chartWidth-(eighths+7)/8))
}

// footer lists the commits of every target, then per Result its version,
// time, link, settings and machine.
func (p *summaryWriter) footer(rs []*results.Result, targets []results.JobTarget) {
	p.f("### Commits\n\n")
	if len(targets) > 0 {
		p.f("| target | base | base branch | head |\n|---|---|---|---|\n")
		for _, t := range targets {
			web := repoWeb(t.Repo)
			base := commitLink(web, t.Base.Commit)
			if t.Base.IsMergeBase {
				base += " (merge-base)"
			}
			branch := markdown.Code(t.Base.Ref)
			if t.Base.BranchTip != "" {
				branch += " at " + commitLink(web, t.Base.BranchTip)
			}
			head := commitLink(web, t.Head.Commit) + " " + markdown.Code(t.Head.Ref)
			if t.Head.Subject != "" {
				head += " " + markdown.Text(t.Head.Subject)
			}
			p.f("| %s | %s | %s | %s |\n", markdown.Text(t.Name), base, branch, head)
		}
		p.blank()
	} else {
		p.f("No target was planned.\n\n")
	}
	for _, res := range rs {
		label := ""
		if len(rs) > 1 {
			label = "**" + markdown.Text(results.JobName(res)) + "**: "
		}
		line := []string{fmt.Sprintf("%s%s %s", label, cmp.Or(res.Tool, "patchproof"), markdown.Text(res.Version))}
		line = append(line, "started "+res.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		if res.FinishedAt != nil {
			line = append(line, "took "+fmtMS(res.FinishedAt.Sub(res.StartedAt).Milliseconds()))
		}
		if res.RunURL != "" {
			line = append(line, fmt.Sprintf("[run](%s)", res.RunURL))
		}
		p.f("%s\n\n", strings.Join(line, " · "))
		p.settings(res)
	}
}

func (p *summaryWriter) settings(res *results.Result) {
	s, m := res.Settings, res.Machine
	p.f("<details><summary>Settings and machine</summary>\n\n")
	repo := markdown.Code(s.Repo)
	if s.PR > 0 {
		repo += fmt.Sprintf(" PR #%d", s.PR)
	}
	yes := map[bool]string{true: "yes", false: "no"}
	p.f("- repository: %s\n", repo)
	p.f("- variants: %s · builder: %s · profile: %s · jobs: %d\n", markdown.Text(strings.Join(s.Variants, ", ")), markdown.Text(s.Builder), markdown.Text(s.Profile), s.Jobs)
	p.f("- stages: %s · NTS must not change: %s\n", markdown.Text(strings.Join(s.Stages, ", ")), yes[s.ExpectNTSNoop])
	machine := fmt.Sprintf("%s, %s", cmp.Or(m.Hostname, "unknown host"), mdPlural(m.CPUs, "CPU", "CPUs"))
	if m.CPUModel != "" {
		machine += " (" + m.CPUModel + ")"
	}
	p.f("- machine: %s\n", markdown.Text(machine))
	if m.OS != "" || m.Kernel != "" {
		p.f("- system: %s\n", markdown.Text(strings.TrimSpace(m.OS+", Linux "+m.Kernel)))
	}
	p.f("\n</details>\n\n")
}

// commitLink is a short commit hash, linked when the repository is on the
// web.
func commitLink(web, commit string) string {
	if strings.Trim(commit, "0") == "" { // none, or the zero hash of a backport that did not apply
		return "—"
	}
	short := commit[:min(12, len(commit))]
	if web == "" {
		return markdown.Code(short)
	}
	return fmt.Sprintf("[%s](%s/commit/%s)", markdown.Code(short), web, commit)
}

// repoWeb is the web page of a repository URL (https://host/owner/repo),
// or "" for a local path, a file:// URL or the demo.
func repoWeb(repo string) string {
	owner, name, host, ok := parseRepoURL(repo)
	if !ok {
		return ""
	}
	return "https://" + host + "/" + owner + "/" + name
}

// parseRepoURL reads owner, name and host from https://host/owner/repo[.git],
// ssh://git@host/owner/repo[.git] or git@host:owner/repo[.git].
func parseRepoURL(repo string) (owner, name, host string, ok bool) {
	var path string
	switch u, err := url.Parse(repo); {
	case err == nil && (u.Scheme == "https" || u.Scheme == "http" || u.Scheme == "ssh") && u.Host != "":
		host, path = u.Hostname(), u.Path
	case strings.Contains(repo, "@") && strings.Contains(repo, ":") && !strings.Contains(repo, "://"):
		_, rest, _ := strings.Cut(repo, "@")
		host, path, _ = strings.Cut(rest, ":")
	default:
		return "", "", "", false
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimSuffix(path, "/"), ".git"), "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || host == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], host, true
}

// fmtMS formats milliseconds at a precision a reader needs.
func fmtMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func mdPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
