package report

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// target finds the PR to post on: what the options name, the rest from
// the results. A result of a repository that is not on GitHub (a path, a
// file:// URL) names no repository to post to: php/php-src is the default
// only for the bundled demo, which validates no pull request of its own.
func (o Options) target(rs []*results.Result) (github.PullRequest, error) {
	to := o.PR
	for _, res := range rs {
		if to.Number == 0 && res.Settings.PR > 0 {
			to.Number = res.Settings.PR
		}
	}
	if to.Number <= 0 {
		return to, errors.New("post: there is no pull request to post to: give --pr N (and --repo URL unless it is " + github.PHPSrc.Web() + ")")
	}
	if o.NotOnGitHub != "" && to.Repo.IsZero() {
		return to, &results.InputError{Input: "--repo " + o.NotOnGitHub, Err: errors.New("not a GitHub repository URL (https://HOST/OWNER/REPO)")}
	}
	if !to.Repo.IsZero() {
		return to, nil
	}
	for _, res := range rs {
		if res.Settings.Demo {
			continue
		}
		repo, ok := github.ParseRepo(res.Settings.Repo)
		if !ok {
			return to, &results.InputError{Input: res.Settings.Repo, Err: errors.New("the results are of a repository not on GitHub: give --repo URL (or --post-to OWNER/REPO#N) to post them")}
		}
		to.Repo = repo
		return to, nil
	}
	to.Repo = github.PHPSrc
	return to, nil
}

// post upserts the sticky comment and sets the commit status.
func post(ctx context.Context, opt Options, rs []*results.Result, body string, pub *Published) error {
	to, err := opt.target(rs)
	if err != nil {
		return err
	}
	pub.Target = &to
	gopt := opt.GitHub
	gopt.DryRun = nil
	if opt.DryRun {
		gopt.DryRun = opt.Stdout
	}
	client, err := github.New(gopt)
	if err != nil {
		return &results.InputError{Input: "--github-api " + gopt.BaseURL, Err: err}
	}
	// The PR is read first: it must exist, and its head tells whether the
	// validated commit is still the one to mark.
	pr, prErr := client.ResolvePR(ctx, to.Repo.Owner, to.Repo.Name, to.Number)
	if prErr != nil && !opt.DryRun {
		return fmt.Errorf("post: %w", prErr)
	}

	comment, err := commentBody(rs, opt.render())
	if err != nil {
		return err
	}
	// One stamp for the comment and the status, so that each is left to
	// the newer run alike.
	run := runStamp(opt.RunID, rs)
	if run == "" {
		now := time.Now
		if gopt.Now != nil {
			now = gopt.Now
		}
		run = now().UTC().Format(time.RFC3339)
	}
	out, err := client.UpsertComment(ctx, to.Repo.Owner, to.Repo.Name, to.Number, github.Comment{
		Key: CommentKey, Run: run, Body: comment,
	})
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	pub.Comment = &out

	sha := headCommit(rs, to)
	switch {
	case sha == "":
		pub.Notes = append(pub.Notes, "no commit status: the results name no head commit")
		return nil
	case prErr != nil:
		pub.Notes = append(pub.Notes, fmt.Sprintf("could not read %s: %v", to, prErr))
	case pr.HeadSHA != sha:
		// A status on a commit the PR does not have would not show on it
		// (and the demo's commits are not on GitHub at all).
		pub.Notes = append(pub.Notes, fmt.Sprintf("no commit status: the validated head %s is not the head of %s (%s)", shortSHA(sha), to, shortSHA(pr.HeadSHA)))
		return nil
	}
	st := commitStatus(rs, pub.Verdict, out.URL)
	st.Run = run
	set, err := client.SetStatus(ctx, to.Repo.Owner, to.Repo.Name, sha, st)
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	if set.Action == github.SkippedOlder || set.Planned == github.SkippedOlder {
		if !isRunID(run) && isRunID(set.Newer) {
			// Stamped with a time: a report outside Actions, which
			// never replaces what a workflow run set.
			pub.Notes = append(pub.Notes, fmt.Sprintf("no commit status: the status on %s is workflow run %s's, which a report without $GITHUB_RUN_ID never replaces", shortSHA(sha), set.Newer))
			return nil
		}
		pub.Notes = append(pub.Notes, fmt.Sprintf("no commit status: the status on %s is of a newer run (%s)", shortSHA(sha), set.Newer))
		return nil
	}
	st.Description = set.Description
	pub.Status, pub.StatusSHA = &st, sha
	return nil
}

// runStamp orders the runs that post, their comments and their statuses:
// the Actions run id (a re-run attempt keeps its run's id, and then the
// newer attempt overwrites the older, as the same stamp lets the poster
// win), else the latest start time.
func runStamp(runID string, rs []*results.Result) string {
	if id := runID; id != "" {
		if _, err := strconv.ParseUint(id, 10, 64); err == nil {
			return id
		}
	}
	var latest time.Time
	for _, res := range rs {
		if res.StartedAt.After(latest) {
			latest = res.StartedAt
		}
	}
	if latest.IsZero() {
		return "" // the client's clock
	}
	return latest.UTC().Format(time.RFC3339)
}

// isRunID says a run stamp is an Actions run id, not a time.
func isRunID(run string) bool {
	_, err := strconv.ParseUint(run, 10, 64)
	return err == nil
}

// headCommit is the PR's head commit as validated: the head of the target
// checked out as the PR's ref, else of the first target that is not a
// backport.
func headCommit(rs []*results.Result, pr github.PullRequest) string {
	first := ""
	for _, res := range rs {
		for _, t := range res.Targets {
			if t.Backport != nil {
				continue
			}
			if t.Head.Ref == pr.HeadRef() || t.Head.Ref == "refs/"+pr.HeadRef() {
				return t.Head.Commit
			}
			if first == "" {
				first = t.Head.Commit
			}
		}
	}
	return first
}

// commitStatus is the status for a verdict: one line a reviewer sees in
// the checks list, linked to the run (or the comment).
func commitStatus(rs []*results.Result, v results.Verdict, commentURL string) github.Status {
	st := github.Status{TargetURL: commentURL}
	for _, res := range rs {
		if res.RunURL != "" {
			st.TargetURL = res.RunURL
			break
		}
	}
	switch {
	case v.Status == results.StatusPassed:
		st.State = github.StateSuccess
		var parts []string
		for _, t := range results.SortedTargets(rs) {
			if t.CodeDiff != nil && t.CodeDiff.NTS != nil {
				parts = append(parts, fmt.Sprintf("%s NTS %d/%d identical", t.Name, t.CodeDiff.NTS.Identical, t.CodeDiff.NTS.Compared))
			}
		}
		st.Description = "passed"
		if len(parts) > 0 {
			st.Description += ": " + strings.Join(parts, ", ")
		}
	case v.Status == results.StatusFailed:
		st.State, st.Description = github.StateFailure, "failed: "+stageReasons(rs, results.StatusFailed, v.Reason)
	case v.NothingChecked:
		// Nothing failed, yet nothing was validated: no success to show.
		st.State, st.Description = github.StateError, results.NothingCheckedReason
	case v.Status == results.StatusError:
		st.State, st.Description = github.StateError, "could not run: "+stageReasons(rs, results.StatusError, v.Reason)
	default:
		var parts []string
		for _, u := range v.Unfinished {
			parts = append(parts, u.String())
		}
		st.State, st.Description = github.StateError, "incomplete: "+strings.Join(parts, ", ")
	}
	st.Description = firstLine(st.Description)
	if r := []rune(st.Description); len(r) > 140 {
		st.Description = string(r[:139]) + "…"
	}
	return st
}

// stageReasons is what the stages of a status say, one after another, or
// the fallback when none does (an interrupted run).
func stageReasons(rs []*results.Result, status results.Status, fallback string) string {
	var parts []string
	for _, res := range results.SortedResults(rs) {
		for _, s := range res.Stages {
			if s.Status == status {
				parts = append(parts, s.Name+": "+firstLine(s.Note()))
			}
		}
	}
	if len(parts) == 0 {
		return fallback
	}
	return strings.Join(parts, "; ")
}
