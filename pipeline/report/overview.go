package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
)

// A column of the overview beyond the four every target has: shown when
// some target has the check's part of the result.
type column struct {
	header string
	has    func(t results.JobTarget) bool
	cell   func(t results.JobTarget) string
}

// columns are the overview's optional columns, in order. A check that
// wants a line in the reviewer's minute adds its column here.
var columns = []column{
	{"tests", func(t results.JobTarget) bool { return t.Tests != nil }, func(t results.JobTarget) string { return testsCell(t.Tests) }},
	{"concurrency", func(t results.JobTarget) bool { return t.Race != nil }, func(t results.JobTarget) string { return t.Race.Cell() }},
	{"cost of statistics, head vs base", func(t results.JobTarget) bool { return t.Bench != nil }, func(t results.JobTarget) string { return t.Bench.Cell() }},
	{"backport", func(t results.JobTarget) bool { return t.Backport != nil }, func(t results.JobTarget) string { return backportCell(t.Backport) }},
}

// overview is one row per target: the reviewer's minute.
func (p *summaryWriter) overview(targets []results.JobTarget) {
	if len(targets) == 0 {
		return
	}
	var shown []column
	for _, c := range columns {
		if slices.ContainsFunc(targets, c.has) {
			shown = append(shown, c)
		}
	}
	p.f("| target | NTS machine code | ZTS machine code (information) | builds |")
	for _, c := range shown {
		p.f(" %s |", c.header)
	}
	p.f("\n|---|---|---|---|%s\n", strings.Repeat("---|", len(shown)))
	for _, t := range targets {
		if t.Backport != nil && !t.Backport.Applied {
			p.f("| [%s](#%s) | not compared | not compared | none |", markdown.Text(t.Name), markdown.Anchor(t.Name))
		} else {
			p.f("| [%s](#%s) | %s | %s | %s |", markdown.Text(t.Name), markdown.Anchor(t.Name), ntsCell(t.CodeDiff), ztsCell(t.CodeDiff), buildsCell(t.Builds))
		}
		for _, c := range shown {
			p.f(" %s |", c.cell(t))
		}
		p.f("\n")
	}
	p.blank()
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
		s = statusIcon(results.StatusFailed) + " " + plural(regressions, "regression", "regressions")
	} else {
		s = statusIcon(results.StatusPassed) + " no regression"
	}
	s += " (" + strings.Join(variants, ", ") + ")"
	if flakes > 0 {
		s += ", " + plural(flakes, "flake", "flakes")
	}
	if len(tr.Errors) > 0 {
		s += ", " + statusIcon(results.StatusError) + " " + plural(len(tr.Errors), "error", "errors")
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
		return statusIcon(results.StatusFailed) + " " + plural(len(bp.Conflicts), "hunk", "hunks") + " failed"
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
