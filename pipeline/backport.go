package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/results"
)

// backportSig signs the backport commits patchproof makes. It is fixed, so
// the same change on the same tip makes the same commit.
var backportSig = object.Signature{Name: "patchproof", Email: "backport@patchproof.invalid", When: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}

// planBackports adds a target per backport branch: the change of from
// (merge-base..head) applied onto the branch's tip, or an explicit ref. A
// change that does not apply still yields a target, with its conflicts and
// no head, so the report names the failed files and hunks while the other
// targets run.
func planBackports(ctx context.Context, cfg *Config, from *Target) ([]*Target, error) {
	var out []*Target
	for _, branch := range cfg.BackportTo {
		if branch == from.Name {
			continue
		}
		tip, err := from.Repo.Resolve(branch)
		if err != nil {
			return nil, inputErr("--backport-to "+branch, err)
		}
		t := &Target{Name: branch, Repo: from.Repo, BaseRef: branch, BranchTip: tip, Base: tip}
		bp := &results.BackportResult{From: from.Name, FromCommit: from.Head.String(), Branch: branch}
		t.Backport = bp
		if ref, ok := cfg.Backports[branch]; ok {
			bp.Explicit = ref
			explicit, err := resolveTarget(from.Repo, branch, ref)
			if err != nil {
				return nil, err
			}
			explicit.Backport = bp
			bp.Applied, bp.Commit = true, explicit.Head.String()
			out = append(out, explicit)
			continue
		}
		t.HeadRef = fmt.Sprintf("%s onto %s", from.Head.String()[:12], branch)
		head, merged, err := applyChange(ctx, from, branch, tip)
		var ce *checkout.ConflictError
		switch {
		case errors.As(err, &ce):
			bp.Conflicts, bp.ThreeWay = ce.Conflicts, ce.ThreeWay
			bp.Error = ce.Error()
		case err != nil:
			bp.Error = err.Error()
		default:
			t.Head, bp.Applied, bp.Commit = head, true, head.String()
			if merged != nil {
				bp.ThreeWay, bp.Merged = true, merged.Merged
			}
		}
		out = append(out, t)
	}
	for b := range cfg.Backports {
		found := false
		for _, t := range cfg.BackportTo {
			found = found || t == b
		}
		if !found {
			return nil, &results.InputError{Input: "--backport " + b + "=...", Err: errors.New("the branch is not in --backport-to")}
		}
	}
	return out, nil
}

// applyChange takes from's change (merge-base..head) to tip, branch's,
// and returns the new commit, stored in the repository's object store:
// as a patch when it applies (at an offset, never with fuzz), else as git
// cherry-picks it, a three-way merge of each file with the merge-base as
// the ancestor (merged names the files that merge resolved). A change
// that conflicts either way is a *checkout.ConflictError of the merge:
// each region with both sides.
func applyChange(ctx context.Context, from *Target, branch string, tip plumbing.Hash) (head plumbing.Hash, merged *checkout.MergeResult, err error) {
	mb, err := from.Repo.Commit(from.Base)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	hc, err := from.Repo.Commit(from.Head)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	patch, err := mb.PatchContext(ctx, hc)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("diff %s..%s: %w", from.Base.String()[:12], from.Head.String()[:12], err)
	}
	var buf bytes.Buffer
	if err := patch.Encode(&buf); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	base, err := from.Repo.Commit(tip)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	msg := fmt.Sprintf("%s\n(backported by patchproof from %s)\n", hc.Message, from.Head)
	s := from.Repo.Git().Storer
	head, err = checkout.ApplyPatch(s, base, &buf, msg, backportSig)
	var ce *checkout.ConflictError
	if !errors.As(err, &ce) {
		return head, nil, err
	}
	head, res, err := checkout.MergeChange(s, mb, hc, base, msg, backportSig)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if res.Unchanged {
		// Nothing of the change would be tested on the branch.
		return plumbing.ZeroHash, nil, fmt.Errorf("the change is on %s already: merged three ways, it changes nothing there", branch)
	}
	return head, res, nil
}

// planMergeUp adds a target per --merge-up branch, in order: the change's
// head merged into the first (php-src's merge-up, a merge commit with the
// two merged as parents), that merge into the next, and so on. A merge
// that conflicts still yields a target, with its conflicts and no head,
// and so do the branches above it, which cannot be merged into.
func planMergeUp(cfg *Config, from *Target) ([]*Target, error) {
	var out []*Target
	prev, prevName := from.Head, from.Name
	for _, branch := range cfg.MergeUp {
		if branch == from.Name {
			return nil, &results.InputError{Input: "--merge-up " + strings.Join(cfg.MergeUp, ","), Err: fmt.Errorf("%s is the change's own branch", branch)}
		}
		tip, err := from.Repo.Resolve(branch)
		if err != nil {
			return nil, inputErr("--merge-up "+branch, err)
		}
		t := &Target{Name: branch, Repo: from.Repo, BaseRef: branch, BranchTip: tip, Base: tip,
			HeadRef: fmt.Sprintf("%s merged into %s", prevName, branch)}
		bp := &results.BackportResult{From: from.Name, FromCommit: from.Head.String(), Branch: branch, MergeUp: true,
			Chain: slices.Clone(cfg.MergeUp[:len(out)+1])}
		if prevName != from.Name {
			bp.Via = prevName
		}
		t.Backport = bp
		out = append(out, t)
		if prev.IsZero() {
			bp.Error = prevName + " did not merge: nothing to merge up"
			prevName = branch
			continue
		}
		head, merged, err := mergeUp(from.Repo, prev, tip, fmt.Sprintf("Merge branch '%s' into %s\n", prevName, branch))
		var ce *checkout.ConflictError
		switch {
		case errors.As(err, &ce):
			bp.Conflicts, bp.ThreeWay, bp.Error = ce.Conflicts, true, ce.Error()
		case err != nil:
			bp.Error = err.Error()
		default:
			t.Head, bp.Applied, bp.Commit, bp.Merged, bp.ThreeWay = head, true, head.String(), merged, true
		}
		prev, prevName = t.Head, branch
	}
	return out, nil
}

// mergeUp merges head into tip, three ways with their merge-base, as a
// merge commit; merged are the files both had changed.
func mergeUp(repo *checkout.Repo, head, tip plumbing.Hash, msg string) (plumbing.Hash, []string, error) {
	mbHash, err := repo.MergeBase(head, tip)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var cs [3]*object.Commit
	for i, h := range []plumbing.Hash{mbHash, head, tip} {
		if cs[i], err = repo.Commit(h); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	h, res, err := checkout.MergeUp(repo.Git().Storer, cs[0], cs[1], cs[2], msg, backportSig)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return h, res.Merged, nil
}
