package report

import (
	"github.com/patchproof/patchproof/pipeline/results"
)

// backportCell is a backport's outcome in a few words.
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
