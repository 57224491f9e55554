package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchproof/patchproof/pipeline/results"
)

// checkoutStage exports each target's base and head trees into the run
// directory and records the commits in the Result.
type checkoutStage struct{}

func (checkoutStage) String() string { return "checkout" }

func (checkoutStage) Run(ctx context.Context, r *Run) error {
	if len(r.Targets) == 0 {
		return errors.New("no targets: planning did not finish")
	}
	var conflicts []string
	for _, t := range r.Targets {
		res := r.targetResult(t)
		if t.Head.IsZero() {
			// A backport that did not apply: reported, not built.
			conflicts = append(conflicts, fmt.Sprintf("%s: %s", t.Name, t.Backport.Error))
			r.Progress.Step("%s: backport does not apply: %s", t.Name, t.Backport.Error)
			continue
		}
		for _, side := range []struct {
			name string
			h    plumbing.Hash
			dir  *string
		}{{"base", t.Base, &t.BaseTree}, {"head", t.Head, &t.HeadTree}} {
			dir := filepath.Join(r.Dir, "src", fmt.Sprintf("%s-%s-%s", safeName(t.Name), side.name, side.h.String()[:12]))
			if _, err := os.Stat(dir); err == nil {
				// A re-run into the same --out: the tree of a commit never changes.
				*side.dir = dir
				continue
			}
			r.Progress.Step("%s: export %s %s", t.Name, side.name, side.h.String()[:12])
			n, err := t.Repo.Export(ctx, side.h, dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(r.Log, "%s %s: %d files in %s\n", t.Name, side.name, n, dir)
			*side.dir = dir
		}
		res.Trees = results.Trees{Base: relPath(r.Dir, t.BaseTree), Head: relPath(r.Dir, t.HeadTree)}
		r.save()
	}
	if len(conflicts) > 0 {
		return results.CheckFailed("backports do not apply: %s", strings.Join(conflicts, "; "))
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
