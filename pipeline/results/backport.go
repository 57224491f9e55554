package results

import "github.com/patchproof/patchproof/pipeline/checkout"

// BackportResult says how a backport target came to be.
type BackportResult struct {
	From      string                  `json:"from"`               // the target the change comes from
	Branch    string                  `json:"branch"`             // where it goes
	Explicit  string                  `json:"explicit,omitempty"` // a --backport ref, when given
	Applied   bool                    `json:"applied"`
	Commit    string                  `json:"commit,omitempty"` // the backport commit made or given
	Conflicts []checkout.HunkConflict `json:"conflicts,omitempty"`
	Error     string                  `json:"error,omitempty"`
	// FromCommit is the head commit of the change: the pull request's
	// head, so that a job of backports alone still names it.
	FromCommit string `json:"from_commit,omitempty"`
}
