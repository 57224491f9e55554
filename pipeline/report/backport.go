package report

import (
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
)

// overview is one row per target: the reviewer's minute. Its columns are
// the checks' (those every overview has, and those some target has), in
// the list's order, then the backport's.
func (p *summaryWriter) overview(targets []results.JobTarget) {
	if len(targets) == 0 {
		return
	}
	present := make([]map[string]Section, len(targets))
	for i, t := range targets {
		present[i] = map[string]Section{}
		for _, s := range sections(t) {
			present[i][s.column] = s.Section
		}
	}
	var shown []check
	for _, c := range checks {
		if c.always || slices.ContainsFunc(present, func(m map[string]Section) bool { return m[c.column] != nil }) {
			shown = append(shown, c)
		}
	}
	backports := slices.ContainsFunc(targets, func(t results.JobTarget) bool { return t.Backport != nil })
	p.f("| target |")
	for _, c := range shown {
		p.f(" %s |", c.column)
	}
	if backports {
		p.f(" backport |")
	}
	p.f("\n|---|%s", strings.Repeat("---|", len(shown)))
	if backports {
		p.f("---|")
	}
	p.f("\n")
	for i, t := range targets {
		p.f("| [%s](#%s) |", markdown.Text(t.Name), markdown.Anchor(t.Name))
		for _, c := range shown {
			cell := c.absent
			if s := present[i][c.column]; s != nil {
				cell = s.Cell()
			}
			p.f(" %s |", cell)
		}
		if backports {
			p.f(" %s |", backportCell(t.Backport))
		}
		p.f("\n")
	}
	p.blank()
}

func backportCell(bp *results.BackportResult) string {
	switch {
	case bp == nil:
		return "—"
	case bp.Applied && bp.Explicit != "":
		return results.StatusPassed.Icon() + " given"
	case bp.Applied:
		return results.StatusPassed.Icon() + " applies"
	case len(bp.Conflicts) > 0:
		return results.StatusFailed.Icon() + " " + plural(len(bp.Conflicts), "hunk", "hunks") + " failed"
	}
	return results.StatusError.Icon() + " not applied"
}
