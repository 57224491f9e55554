package results

import "github.com/patchproof/patchproof/verify/codediff"

// CodeDiffResult is the machine-code comparison of a target's builds.
type CodeDiffResult struct {
	// NTS is the verdict-bearing comparison: with --expect-nts-noop, any
	// changed, added or removed function fails the run.
	NTS *codediff.Report `json:"nts,omitempty"`
	// ZTS is information: which functions the change touches under ZTS.
	ZTS           *codediff.Report `json:"zts,omitempty"`
	ExpectNTSNoop bool             `json:"expect_nts_noop"`
	Errors        []string         `json:"errors,omitempty"`
}
