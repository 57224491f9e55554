package pipeline

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
)

// Target is one thing to validate: a base commit and a head commit of a
// repository. The PR itself is a target; each backport is another.
type Target struct {
	Name string // the base branch: master, PHP-8.4, ...
	Repo *checkout.Repo

	BaseRef, HeadRef string
	BranchTip        plumbing.Hash // tip of the base ref
	Base             plumbing.Hash // merge-base of Head and BranchTip
	Head             plumbing.Hash

	// How a backport target was made; nil for the PR's own target.
	Backport *results.BackportResult

	// Set by the checkout stage.
	BaseTree, HeadTree string
	// Set by the build stage, one per side and variant.
	Builds []*builders.Build

	Result *results.TargetResult
}

// tree is the exported source tree and the commit of one side.
func (t *Target) tree(s side.Side) (dir string, commit plumbing.Hash) {
	if s == side.Head {
		return t.HeadTree, t.Head
	}
	return t.BaseTree, t.Base
}

// setTree records where a side's tree was exported.
func (t *Target) setTree(s side.Side, dir string) {
	if s == side.Head {
		t.HeadTree = dir
	} else {
		t.BaseTree = dir
	}
}

// build returns the target's successful build of a side and variant.
func (t *Target) build(s side.Side, v builders.Variant) *builders.Build {
	for _, b := range t.Builds {
		if b.OK && b.Variant == v && b.Side == s {
			return b
		}
	}
	return nil
}

// targetResult fills and returns the Result entry of a target.
func (r *Run) targetResult(t *Target) *results.TargetResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.Result != nil {
		return t.Result
	}
	t.Result = &results.TargetResult{
		Name:     t.Name,
		Repo:     r.Result.Settings.Repo,
		Base:     results.CommitRef{Ref: t.BaseRef, Commit: t.Base.String(), BranchTip: t.BranchTip.String(), IsMergeBase: true},
		Head:     results.CommitRef{Ref: t.HeadRef, Commit: t.Head.String()},
		Backport: t.Backport,
	}
	if t.Head.IsZero() {
		t.Result.Head.Commit = ""
	}
	for _, c := range []*results.CommitRef{&t.Result.Base, &t.Result.Head} {
		if c.Commit == "" {
			continue
		}
		if commit, err := t.Repo.Commit(plumbing.NewHash(c.Commit)); err == nil {
			c.Subject, _, _ = strings.Cut(commit.Message, "\n")
			c.Tree = commit.TreeHash.String()
		}
	}
	r.Result.Targets = append(r.Result.Targets, t.Result)
	return t.Result
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// setTarget records a stage's part of t's result under the run's lock, and
// writes results.json.
func (r *Run) setTarget(t *Target, set func(*results.TargetResult)) {
	tr := r.targetResult(t)
	r.mu.Lock()
	set(tr)
	r.mu.Unlock()
	r.save()
}
