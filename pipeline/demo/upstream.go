package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/pipeline/checkout"
)

// The demo's upstream is a php-src-shaped repository to rehearse the
// production path on (`patchproof run --pr N --backport-to PHP-8.4,PHP-8.5`
// over HTTP, cmd/githubfake serving it): the demo's release tree as master,
// two release branches that have diverged from it, and the demo's change
// as pull request UpstreamPR. Its master and PR head are the demo's own
// commits, so a run of that target builds what the demo built.
const (
	UpstreamMaster = "master"
	UpstreamPR     = 24448
)

// UpstreamPRRef is where the upstream keeps its pull request's head, as
// GitHub does.
var UpstreamPRRef = fmt.Sprintf("refs/pull/%d/head", UpstreamPR)

// Divergence is a release branch of the upstream: From plus a commit of
// its own, made by applying Patch (a commit message, then a git diff).
type Divergence struct {
	Branch, From string
	Patch        []byte
}

var (
	//go:embed upstream/PHP-8.4.patch
	php84Patch []byte
	//go:embed upstream/PHP-8.5.patch
	php85Patch []byte
)

// ReleaseBranches are the upstream's release branches: on PHP-8.4 the
// demo's change does not apply as a patch (a line of its context differs)
// and merges three ways, as git cherry-pick takes it; on PHP-8.5
// (branched from PHP-8.4) a line it removes was reworded: a conflict.
var ReleaseBranches = []Divergence{
	{Branch: "PHP-8.4", From: UpstreamMaster, Patch: php84Patch},
	{Branch: "PHP-8.5", From: "PHP-8.4", Patch: php85Patch},
}

// EnsureUpstream returns the path of the demo's upstream in the cache
// (CacheDir/demo/upstream-HASH.git), making it from the demo repository
// (Ensure) when it is not there yet. It is read-only: whoever changes it
// (a rehearsal moving the PR's head) works on a copy.
func EnsureUpstream(ctx context.Context, opt Options) (string, error) {
	src, err := Ensure(ctx, opt)
	if err != nil {
		return "", err
	}
	branches := opt.Branches
	if branches == nil {
		branches = ReleaseBranches
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", filepath.Base(src), UpstreamPRRef)
	for _, d := range branches {
		fmt.Fprintf(h, "%s %s %d\n", d.Branch, d.From, len(d.Patch))
		h.Write(d.Patch)
	}
	repo := filepath.Join(filepath.Dir(src), "upstream-"+hex.EncodeToString(h.Sum(nil))[:12]+".git")
	unlock, err := cachedir.Lock(repo + ".lock")
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", repo, err)
	}
	defer unlock()
	if r, err := git.PlainOpen(repo); err == nil {
		// The last branch is made last: with it, the repository is whole.
		last := plumbing.NewBranchReferenceName(UpstreamMaster)
		if len(branches) > 0 {
			last = plumbing.NewBranchReferenceName(branches[len(branches)-1].Branch)
		}
		if _, err := r.Reference(last, true); err == nil {
			return repo, nil
		}
	}
	// Under the lock, a half-made upstream beside is a killed maker's.
	if left, err := filepath.Glob(repo + ".tmp-*"); err == nil {
		for _, l := range left {
			os.RemoveAll(l)
		}
	}
	if opt.Log != nil {
		fmt.Fprintf(opt.Log, "making the demo's upstream %s\n", repo)
	}
	if err := BuildUpstream(ctx, src, repo, branches); err != nil {
		return "", err
	}
	return repo, nil
}

// BuildUpstream makes a bare repository at dst from the demo repository
// src: its BaseBranch as master, its HeadBranch as UpstreamPRRef, and each
// release branch in order. dst appears complete or not at all. The objects
// come over by a local git fetch, which packs them: a server of the
// upstream then sends from a pack, as GitHub does, instead of compressing
// the demo's loose objects again for every clone.
func BuildUpstream(ctx context.Context, src, dst string, branches []Divergence) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-")
	if err != nil {
		return fmt.Errorf("make the demo's upstream: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, args := range [][]string{
		{"init", "--bare", "--quiet", tmp},
		{"-C", tmp, "fetch", "--quiet", "--no-tags", src,
			"+refs/heads/" + BaseBranch + ":refs/heads/" + UpstreamMaster,
			"+refs/heads/" + HeadBranch + ":" + UpstreamPRRef},
		{"-C", tmp, "symbolic-ref", "HEAD", "refs/heads/" + UpstreamMaster},
	} {
		if err := runGit(ctx, args...); err != nil {
			return fmt.Errorf("make the demo's upstream: %w", err)
		}
	}
	r, err := git.PlainOpen(tmp)
	if err != nil {
		return fmt.Errorf("make the demo's upstream: %w", err)
	}
	for _, d := range branches {
		from, err := r.Reference(plumbing.NewBranchReferenceName(d.From), true)
		if err != nil {
			return fmt.Errorf("make the demo's upstream: branch %s from %s: %w", d.Branch, d.From, err)
		}
		base, err := r.CommitObject(from.Hash())
		if err != nil {
			return fmt.Errorf("make the demo's upstream: branch %s: %w", d.Branch, err)
		}
		msg := string(d.Patch)
		if i := strings.Index(msg, "\ndiff --git "); i >= 0 {
			msg = msg[:i+1]
		}
		h, err := checkout.ApplyPatch(r.Storer, base, bytes.NewReader(d.Patch), strings.TrimSpace(msg)+"\n", sig)
		if err != nil {
			return fmt.Errorf("make the demo's upstream: the commit of %s: %w", d.Branch, err)
		}
		if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(d.Branch), h)); err != nil {
			return fmt.Errorf("make the demo's upstream: %w", err)
		}
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// runGit runs git with args; its error carries what git said.
func runGit(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(childenv.For(childenv.Tool), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
