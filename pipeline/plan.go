package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/demo"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// plan resolves the run's targets: it opens (and fetches into the mirror)
// the repository, resolves the refs, and finds the merge-base. Everything it
// rejects is bad input: it runs before anything is written to the run
// directory.
func plan(ctx context.Context, cfg *Config, cache string, log io.Writer) ([]*Target, error) {
	remote, base, head := cfg.Repo, cfg.Base, cfg.Head
	if cfg.Demo() {
		path, err := demo.Ensure(ctx, demo.Options{CacheDir: cache, Mirror: cfg.debianMirror(), Log: log})
		if err != nil {
			return nil, fmt.Errorf("prepare the demo: %w", err)
		}
		remote, base, head = path, demo.BaseBranch, demo.HeadBranch
	}
	if cfg.PR > 0 {
		if head == "" {
			head = github.HeadRef(cfg.PR)
		}
		if base == "" {
			b, err := prBaseBranch(ctx, cfg)
			if err != nil {
				return nil, err
			}
			base = b
			fmt.Fprintf(log, "PR #%d targets %s\n", cfg.PR, base)
		}
	}
	refs := []string{base, head}
	refs = append(refs, cfg.BackportTo...)
	refs = append(refs, cfg.MergeUp...)
	for _, ref := range cfg.Backports {
		refs = append(refs, ref)
	}
	repo, err := checkout.Open(ctx, remote, checkout.Options{CacheDir: cache, Refs: refs, Log: log, Limits: cfg.Limits})
	var timeout *checkout.FetchTimeoutError
	if errors.As(err, &timeout) {
		flag := "--fetch-timeout"
		if timeout.Idle {
			flag = "--fetch-idle-timeout"
		}
		return nil, fmt.Errorf("%w (%s sets the limit)", err, flag)
	}
	if err != nil {
		return nil, inputErr(remote, err)
	}
	t, err := resolveTarget(repo, base, head)
	if err != nil {
		repo.Close()
		return nil, err
	}
	if cfg.ExpectHead != "" && t.Head.String() != cfg.ExpectHead {
		repo.Close()
		return nil, &results.InputError{Input: "--expect-head " + cfg.ExpectHead,
			Err: fmt.Errorf("%s of %s is now %s: the head moved since it was planned; trigger patchproof again", head, remote, t.Head)}
	}
	backports, err := planBackports(ctx, cfg, t)
	if err != nil {
		repo.Close()
		return nil, err
	}
	mergeUps, err := planMergeUp(cfg, t)
	if err != nil {
		repo.Close()
		return nil, err
	}
	targets := append(append([]*Target{t}, backports...), mergeUps...)
	if cfg.Target != "" {
		var picked []*Target
		for _, t := range targets {
			if t.Name == cfg.Target {
				picked = append(picked, t)
			}
		}
		if len(picked) == 0 {
			repo.Close()
			return nil, &results.InputError{Input: "--target " + cfg.Target, Err: errors.New("no such target in the plan")}
		}
		targets = picked
	}
	return targets, nil
}

func resolveTarget(repo *checkout.Repo, baseRef, headRef string) (*Target, error) {
	tip, err := repo.Resolve(baseRef)
	if err != nil {
		return nil, inputErr(baseRef, err)
	}
	head, err := repo.Resolve(headRef)
	if err != nil {
		return nil, inputErr(headRef, err)
	}
	for _, c := range []struct {
		ref string
		h   plumbing.Hash
	}{{baseRef, tip}, {headRef, head}} {
		if err := repo.CheckPHPSrc(c.h); err != nil {
			return nil, inputErr(c.ref, err)
		}
	}
	mb, err := repo.MergeBase(head, tip)
	if err != nil {
		return nil, inputErr(baseRef+"..."+headRef, err)
	}
	name := strings.TrimPrefix(strings.TrimPrefix(baseRef, "refs/heads/"), "origin/")
	return &Target{Name: name, Repo: repo, BaseRef: baseRef, HeadRef: headRef, BranchTip: tip, Base: mb, Head: head}, nil
}

// inputErr marks errors about things the user named (refs, paths, remotes)
// as input errors; others pass through.
func inputErr(input string, err error) error {
	if errors.Is(err, checkout.ErrNotFound) || errors.Is(err, checkout.ErrNotPHPSrc) {
		return &results.InputError{Input: input, Err: err}
	}
	return err
}

// prBaseBranch asks GitHub which branch a PR targets.
func prBaseBranch(ctx context.Context, cfg *Config) (string, error) {
	if !cfg.onGitHub {
		return "", &results.InputError{Input: "--pr " + strconv.Itoa(cfg.PR), Err: errors.New("the base branch is unknown: give --base (the repository is not on GitHub)")}
	}
	client, err := github.New(github.Options{BaseURL: cfg.GitHubAPI, Getenv: cfg.Getenv})
	if err != nil {
		return "", &results.InputError{Input: "--github-api " + cfg.GitHubAPI, Err: err}
	}
	pr, err := client.ResolvePR(ctx, cfg.repo.Owner, cfg.repo.Name, cfg.PR)
	var nsp *github.NoSuchPRError
	switch {
	case errors.As(err, &nsp):
		return "", &results.InputError{Input: fmt.Sprintf("--pr %d", cfg.PR), Err: err}
	case err != nil:
		return "", fmt.Errorf("ask GitHub for the base branch of PR #%d (or give --base): %w", cfg.PR, err)
	}
	return pr.BaseRef, nil
}
