package report

import (
	"fmt"
	"strings"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/results"
)

// backportCell is a backport's (or a merge-up's) outcome in a few words.
func backportCell(bp *results.BackportResult) string {
	switch {
	case bp == nil:
		return "—"
	case bp.Applied && bp.Explicit != "":
		return results.StatusPassed.Icon() + " given"
	case bp.Applied && bp.MergeUp:
		return results.StatusPassed.Icon() + " merges up"
	case bp.Applied && bp.ThreeWay:
		return results.StatusPassed.Icon() + " merged (three-way)"
	case bp.Applied:
		return results.StatusPassed.Icon() + " applies"
	case len(bp.Conflicts) > 0 && bp.ThreeWay:
		return results.StatusFailed.Icon() + " " + plural(len(bp.Conflicts), "conflict", "conflicts")
	case len(bp.Conflicts) > 0:
		return results.StatusFailed.Icon() + " " + plural(len(bp.Conflicts), "hunk", "hunks") + " failed"
	}
	return results.StatusError.Icon() + " not applied"
}

// sideCell is one side of a merge conflict in a table cell: its lines as
// code spans, one after another, and how many more there were.
func sideCell(text string, n int) string {
	ls := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		return "(nothing)"
	}
	var parts []string
	for _, l := range ls {
		parts = append(parts, markdown.Code(l))
	}
	cell := strings.Join(parts, " ⏎ ")
	if n > len(ls) {
		cell += fmt.Sprintf(" (%d more)", n-len(ls))
	}
	return cell
}

// mergedFrom is what a backport or merge-up target's head was made of, as
// the verdict block names it: "master's change onto `PHP-8.4`", "PHP-8.4
// merged up into `PHP-8.5`".
func mergedFrom(bp *results.BackportResult) string {
	if !bp.MergeUp {
		return markdown.Text(bp.From) + "'s change onto " + markdown.Code(bp.Branch)
	}
	s := markdown.Text(bp.From) + " merged up into " + markdown.Code(bp.Branch)
	if bp.Via != "" {
		s += " (through " + markdown.Code(bp.Via) + ")"
	}
	return s
}
