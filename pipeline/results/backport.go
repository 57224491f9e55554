package results

import "github.com/patchproof/patchproof/pipeline/checkout"

// BackportResult says how a backport target came to be: the change
// applied to another branch, or merged up into a higher one.
type BackportResult struct {
	From string `json:"from"` // the target the change comes from
	// MergeUp says the target is the change merged up into a higher
	// branch (a merge commit of the lower branch's head), not applied;
	// Via is the branch merged in when it is not From (the merge-up
	// below this one), Chain the --merge-up branches up to this one.
	MergeUp  bool     `json:"merge_up,omitempty"`
	Via      string   `json:"via,omitempty"`
	Chain    []string `json:"chain,omitempty"`
	Branch   string   `json:"branch"`             // where it goes
	Explicit string   `json:"explicit,omitempty"` // a --backport ref, when given
	Applied  bool     `json:"applied"`
	Commit   string   `json:"commit,omitempty"` // the backport commit made or given
	// Merged are, when the change's patch did not apply, the files both
	// the branch and the change had changed, which a three-way merge
	// resolved as git cherry-pick would: the change was taken to the
	// branch so. Empty when the patch applied.
	Merged    []string                `json:"merged,omitempty"`
	Conflicts []checkout.HunkConflict `json:"conflicts,omitempty"`
	// ThreeWay says the change was taken by a three-way merge (its patch
	// did not apply): Merged are the files it resolved, or Conflicts the
	// regions it could not, each with both sides.
	ThreeWay bool   `json:"three_way,omitempty"`
	Error    string `json:"error,omitempty"`
	// FromCommit is the head commit of the change: the pull request's
	// head, so that a job of backports alone still names it.
	FromCommit string `json:"from_commit,omitempty"`
}
