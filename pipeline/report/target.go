package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/bench"
	"github.com/patchproof/patchproof/verify/verdict"
)

// target is one target's section: how a backport's head came to be, then
// a walk over its checks' sections, then what went wrong for the target
// outside any check.
func (p *summaryWriter) target(t results.JobTarget) {
	p.f("### %s\n\n", markdown.Text(t.Name))
	if t.Backport != nil {
		p.backport(t.Backport)
	}
	if p.opt.level < levelVerdicts {
		p.moves(sections(t))
	}
	var shown []Section
	failing := false
	for _, s := range sections(t) {
		bad := strings.Contains(s.Cell(), results.StatusFailed.Icon())
		failing = failing || bad
		if p.opt.level >= levelVerdicts || (p.opt.level >= levelFailingOnly && !bad) {
			continue
		}
		shown = append(shown, s)
	}
	if n := len(sections(t)) - len(shown); n > 0 {
		p.f("The %s of %s that the verdict above answers: in summary.md among the run's artifacts, left out here to keep the comment within its size.\n\n",
			plural(n, "section", "sections"), markdown.Text(t.Name))
	}
	if len(shown) > 0 && !failing {
		p.f("<details><summary>%s: the checks in detail</summary>\n\n", markdown.Text(t.Name))
	}
	for _, s := range shown {
		write := s.WriteSection
		if c, ok := s.(compactSection); ok && p.opt.level >= compactLevel(s) {
			write = c.WriteCompactSection
		}
		p.markdown(write)
	}
	if len(shown) > 0 && !failing {
		p.f("</details>\n\n")
	}
	if len(t.Errors) > 0 {
		p.f("#### Errors\n\n")
		for _, e := range t.Errors {
			p.f("- %s %s\n", results.StatusError.Icon(), markdown.Text(e))
		}
		p.blank()
	}
}

// A mover is a check that names what moved between base and head
// (verdict.Move), for the target's "What moved" table.
type mover interface{ Moves() []verdict.Move }

// moves writes the "What moved" table of a target's sections: each
// check's moves, in the checks' order, under the section's label.
// Everything that did not move is in the sections, collapsed.
func (p *summaryWriter) moves(ss []Section) {
	var rows []string
	for _, s := range ss {
		m, ok := s.(mover)
		if !ok {
			continue
		}
		for _, mv := range m.Moves() {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", s.Label(), mv.What, mv.How))
		}
	}
	if len(ss) == 0 {
		return
	}
	if len(rows) == 0 {
		p.f("Nothing moved: every check found head as it found base.\n\n")
		return
	}
	p.f("| check | what moved | by how much |\n|---|---|---|\n")
	for _, r := range rows {
		p.f("%s", r)
	}
	p.blank()
}

// compactLevel is the level from which a section is written compact: the
// benchmark's samples go first, the disassembly diffs after.
func compactLevel(s Section) int {
	if _, ok := s.(*bench.Result); ok {
		return levelNoSamples
	}
	return levelNoDiffs
}

// backport says how a backport target's head came to be, or which files
// and hunks of the change did not apply.
func (p *summaryWriter) backport(bp *results.BackportResult) {
	if bp.MergeUp {
		p.mergeUp(bp)
		return
	}
	p.f("#### Backport\n\n")
	switch {
	case bp.Applied && bp.Explicit != "":
		p.f("%s The backport of %s's change to %s is %s, given with `--backport` (%s).\n\n",
			results.StatusPassed.Icon(), markdown.Text(bp.From), markdown.Text(bp.Branch), markdown.Code(bp.Explicit), markdown.Code(shortSHA(bp.Commit)))
	case bp.Applied && bp.ThreeWay:
		p.f("%s %s's change (merge-base..head) does not apply onto %s as a patch; merged three ways, as git cherry-pick does%s: commit %s.\n\n",
			results.StatusPassed.Icon(), markdown.Text(bp.From), markdown.Text(bp.Branch), resolvedText(bp.Merged), markdown.Code(shortSHA(bp.Commit)))
	case bp.Applied:
		p.f("%s %s's change (merge-base..head) applies cleanly onto %s: commit %s.\n\n",
			results.StatusPassed.Icon(), markdown.Text(bp.From), markdown.Text(bp.Branch), markdown.Code(shortSHA(bp.Commit)))
	case len(bp.Conflicts) > 0 && bp.ThreeWay:
		p.f("%s %s's change conflicts with %s, as a patch and merged three ways: %s. Nothing else was checked on this branch.\n\n",
			results.StatusFailed.Icon(), markdown.Text(bp.From), markdown.Text(bp.Branch), plural(len(bp.Conflicts), "conflict", "conflicts"))
		p.conflicts(bp)
	case len(bp.Conflicts) > 0:
		p.f("%s %s's change does not apply onto %s: %s failed. Nothing else was checked on this branch.\n\n",
			results.StatusFailed.Icon(), markdown.Text(bp.From), markdown.Text(bp.Branch), plural(len(bp.Conflicts), "hunk", "hunks"))
		p.f("| file | hunk | why |\n|---|---|---|\n")
		for _, c := range bp.Conflicts {
			p.f("| %s | %s | %s |\n", markdown.Code(c.File), markdown.Code(c.Hunk), markdown.Text(c.Reason))
		}
		p.blank()
	default:
		p.f("%s %s's change could not be applied onto %s: %s\n\n",
			results.StatusError.Icon(), markdown.Text(bp.From), markdown.Text(bp.Branch), markdown.Text(firstLine(bp.Error)))
	}
}

// mergeUp says how the change merged up into a higher branch, or which
// regions conflict.
func (p *summaryWriter) mergeUp(bp *results.BackportResult) {
	p.f("#### Merge-up\n\n")
	from := markdown.Text(bp.From)
	if bp.Via != "" {
		from = markdown.Text(bp.Via) + " (with " + markdown.Text(bp.From) + "'s change)"
	}
	switch {
	case bp.Applied:
		p.f("%s %s merges up into %s as php-src's merge-up does, three ways%s: merge commit %s.\n\n",
			results.StatusPassed.Icon(), from, markdown.Text(bp.Branch), resolvedText(bp.Merged), markdown.Code(shortSHA(bp.Commit)))
	case len(bp.Conflicts) > 0:
		p.f("%s %s does not merge up into %s: %s. Nothing else was checked on this branch.\n\n",
			results.StatusFailed.Icon(), from, markdown.Text(bp.Branch), plural(len(bp.Conflicts), "conflict", "conflicts"))
		p.conflicts(bp)
	default:
		p.f("%s %s could not be merged up into %s: %s\n\n",
			results.StatusError.Icon(), from, markdown.Text(bp.Branch), markdown.Text(firstLine(bp.Error)))
	}
}

// resolvedText names the files a three-way merge resolved, "" for none.
func resolvedText(files []string) string {
	if len(files) == 0 {
		return ""
	}
	var codes []string
	for _, f := range files {
		codes = append(codes, markdown.Code(f))
	}
	return " (resolved: " + strings.Join(codes, ", ") + ")"
}

// conflicts is the table of a three-way merge's conflicts: each region
// with the branch's lines and the change's.
func (p *summaryWriter) conflicts(bp *results.BackportResult) {
	p.f("| file | where | %s has | the change has |\n|---|---|---|---|\n", markdown.Text(bp.Branch))
	for _, c := range bp.Conflicts {
		if c.Branch == "" && c.Change == "" && c.BranchLines == 0 && c.ChangeLines == 0 {
			p.f("| %s | — | %s | |\n", markdown.Code(c.File), markdown.Text(c.Reason))
			continue
		}
		p.f("| %s | %s | %s | %s |\n", markdown.Code(c.File), markdown.Text(c.Hunk), sideCell(c.Branch, c.BranchLines), sideCell(c.Change, c.ChangeLines))
	}
	p.blank()
}

// buildsSection is the builds of a target: a section of the report's own,
// since a build is no verify package's check.
type buildsSection []*builders.Build

func (bs buildsSection) Label() string { return "builds" }

func (bs buildsSection) Cell() string {
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
	return fmt.Sprintf("%s %d/%d built", s.Icon(), ok, len(bs))
}

func (bs buildsSection) WriteSection(w io.Writer) error {
	return render(w, func(p *summaryWriter) { p.builds(bs) })
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
		result := results.StatusPassed.Icon() + " built"
		if !b.OK {
			result = results.StatusFailed.Icon() + " " + markdown.Text(firstLine(cmp.Or(b.Failure, "failed")))
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
