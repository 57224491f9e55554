package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/verdict"
)

// checkoutStage exports each target's base and head trees into the run
// directory and records the commits in the Result.
type checkoutStage struct{}

func (checkoutStage) String() string { return results.StageCheckout }

func (checkoutStage) Needs(*Config) []Need {
	return []Need{{Why: "go-git is built in; the demo downloads Debian's php8.2 source package once"}}
}

func (checkoutStage) Run(ctx context.Context, r *Run) error {
	if len(r.Targets) == 0 {
		return errors.New("no targets: planning did not finish")
	}
	var conflicts, errs []string
	for _, t := range r.Targets {
		res := r.targetResult(t)
		if t.Head.IsZero() {
			// A backport that did not apply: reported, not built.
			conflicts = append(conflicts, fmt.Sprintf("%s: %s", t.Name, t.Backport.Error))
			r.Progress.Step("%s: backport does not apply: %s", t.Name, t.Backport.Error)
			continue
		}
		if err := exportTrees(ctx, r, t); err != nil {
			// The other targets still get their trees.
			errs = append(errs, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		res.Trees = results.Trees{Base: relPath(r.Dir, t.BaseTree), Head: relPath(r.Dir, t.HeadTree)}
		r.save()
	}
	return verdict.Judged(errs, conflicts, "backports do not apply: ")
}

// exportTrees exports t's base and head trees under OUT/src and sets
// t.BaseTree and t.HeadTree.
func exportTrees(ctx context.Context, r *Run, t *Target) error {
	for _, s := range side.Sides {
		_, h := t.tree(s)
		dir := filepath.Join(r.Dir, "src", fmt.Sprintf("%s-%s-%s", safeName(t.Name), s, h.String()[:12]))
		if _, err := os.Stat(dir); err == nil {
			// A re-run into the same --out: the tree of a commit never changes.
			t.setTree(s, dir)
			continue
		}
		r.Progress.Step("%s: export %s %s", t.Name, s, h.String()[:12])
		n, err := t.Repo.Export(ctx, h, dir)
		var tooLarge *checkout.TreeTooLargeError
		if errors.As(err, &tooLarge) {
			flag := "--max-tree-bytes"
			if tooLarge.Files {
				flag = "--max-tree-files"
			}
			return fmt.Errorf("%s: %w (%s sets the limit)", s, err, flag)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(r.Log, "%s %s: %d files in %s\n", t.Name, s, n, dir)
		t.setTree(s, dir)
	}
	return nil
}

// HostChecks are what the checkout needs of this machine beyond its
// tools: free disk in the cache, for the mirrors and for the builds it
// leads to.
func (checkoutStage) HostChecks(o HostOptions) []HostCheck { return []HostCheck{diskCheck(o)} }

// prerequisite marks the checkout as what every check needs: the trees.
func (checkoutStage) prerequisite() {}
