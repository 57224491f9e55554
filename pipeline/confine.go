package pipeline

import (
	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/verify/abi"
	"github.com/patchproof/patchproof/verify/codediff"
)

// ConfinedJobs are the jobs the checks run in a child of patchproof's own
// executable (internal/confine): the parsers of the builds' objects and
// binaries. main gives them to confine.Main first thing, and so does the
// TestMain of a test binary that runs the checks.
func ConfinedJobs() []confine.Job {
	return append(codediff.Jobs(), abi.Jobs()...)
}
