package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
		head, err := applyChange(ctx, from, tip)
		var ce *checkout.ConflictError
		switch {
		case errors.As(err, &ce):
			bp.Conflicts = ce.Conflicts
			bp.Error = ce.Error()
		case err != nil:
			bp.Error = err.Error()
		default:
			t.Head, bp.Applied, bp.Commit = head, true, head.String()
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

// applyChange applies from's change (merge-base..head) to tip and returns
// the new commit, stored in the repository's object store.
func applyChange(ctx context.Context, from *Target, tip plumbing.Hash) (plumbing.Hash, error) {
	mb, err := from.Repo.Commit(from.Base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	head, err := from.Repo.Commit(from.Head)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	patch, err := mb.PatchContext(ctx, head)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("diff %s..%s: %w", from.Base.String()[:12], from.Head.String()[:12], err)
	}
	var buf bytes.Buffer
	if err := patch.Encode(&buf); err != nil {
		return plumbing.ZeroHash, err
	}
	base, err := from.Repo.Commit(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	subject := head.Message
	msg := fmt.Sprintf("%s\n(backported by patchproof from %s)\n", subject, from.Head)
	return checkout.ApplyPatch(from.Repo.Git().Storer, base, &buf, msg, backportSig)
}
