package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// reportStage renders the run's summary and delivers it: OUT/summary.md,
// $GITHUB_STEP_SUMMARY, and with --post the PR comment and commit status.
// It runs whatever the earlier stages did: a failed run needs its report
// most.
type reportStage struct{}

func (reportStage) String() string { return "report" }

func (reportStage) Run(ctx context.Context, r *Run) error {
	cfg := *r.Config
	cfg.Out = r.Dir
	// The run ends as this stage does; say how long it took.
	res := *r.Result
	now := time.Now().UTC().Truncate(time.Second)
	res.FinishedAt = &now
	pub, err := Publish(ctx, cfg, []*results.Result{&res})
	if pub != nil {
		pub.log(r.Log)
		if pub.Summary != "" {
			r.Progress.Step("summary: %s", relPath(r.Dir, pub.Summary))
		}
		if pub.Comment != nil {
			r.Progress.Step("comment %s %s", pub.Comment.Action, pub.Comment.URL)
		}
		for _, n := range pub.Notes {
			r.Warn("report", "%s", n)
		}
	}
	return err
}

// Published says where a summary went.
type Published struct {
	Verdict   results.Verdict
	Summary   string          // the summary.md written; "" when it went to Stdout
	Comment   *github.Outcome // nil when nothing was posted
	Status    *github.Status  // the commit status set (or, in a dry run, that would be)
	StatusSHA string          // on this commit
	Notes     []string        // what was left undone, and why
	Target    *PostTarget     // where it was posted
	stepSum   string          // $GITHUB_STEP_SUMMARY, when appended to
}

func (p *Published) log(w io.Writer) {
	fmt.Fprintf(w, "verdict: %s %s\n", p.Verdict.Status, p.Verdict.Reason)
	if p.Summary != "" {
		fmt.Fprintf(w, "summary: %s\n", p.Summary)
	}
	if p.stepSum != "" {
		fmt.Fprintf(w, "appended to $GITHUB_STEP_SUMMARY (%s)\n", p.stepSum)
	}
	if p.Comment != nil {
		fmt.Fprintf(w, "comment on %s: %s %s\n", p.Target, p.Comment.Action, p.Comment.URL)
	}
	if p.Status != nil {
		fmt.Fprintf(w, "status on %s: %s %q\n", p.StatusSHA, p.Status.State, p.Status.Description)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// CommentKey names patchproof's sticky summary comment on a PR.
const CommentKey = "summary"

// Publish renders results (one per target or job) into one summary and
// delivers it: to cfg.Out/summary.md, or cfg.Stdout when cfg.Out is ""; to
// $GITHUB_STEP_SUMMARY when that is set; and, with cfg.Post, as the PR's
// sticky comment and a commit status on the head commit it validated
// (printed instead with cfg.DryRun). The run and the report command both
// deliver through it. The error is about delivery; the checks' outcome is
// Published.Verdict.
func Publish(ctx context.Context, cfg Config, rs []*results.Result) (*Published, error) {
	cfg.setDefaults()
	pub := &Published{Verdict: results.VerdictOf(rs)}
	var body bytes.Buffer
	if err := RenderSummary(&body, rs); err != nil {
		return pub, err
	}
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return pub, fmt.Errorf("write summary: %w", err)
		}
		pub.Summary = filepath.Join(cfg.Out, "summary.md")
		if err := os.WriteFile(pub.Summary, body.Bytes(), 0o644); err != nil {
			return pub, fmt.Errorf("write summary: %w", err)
		}
	} else if !(cfg.Post && cfg.DryRun) { // a dry run prints the comment already
		if _, err := cfg.Stdout.Write(body.Bytes()); err != nil {
			return pub, fmt.Errorf("write summary: %w", err)
		}
	}
	if path := cfg.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		if err := appendFile(path, body.Bytes()); err != nil {
			return pub, fmt.Errorf("append to $GITHUB_STEP_SUMMARY: %w", err)
		}
		pub.stepSum = path
	}
	if !cfg.Post {
		return pub, nil
	}
	return pub, post(ctx, &cfg, rs, body.String(), pub)
}

func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PostTarget is the pull request a summary is posted on.
type PostTarget struct {
	Owner, Repo string
	PR          int
}

func (t *PostTarget) String() string { return fmt.Sprintf("%s/%s#%d", t.Owner, t.Repo, t.PR) }

// postTarget finds the PR to post on: the Config's, else the one the
// results were run for.
func postTarget(cfg *Config, rs []*results.Result) (*PostTarget, error) {
	if cfg.PostTo != "" {
		return ParsePostTo(cfg.PostTo)
	}
	repo, pr := cfg.Repo, cfg.PR
	for _, res := range rs {
		if res.Settings.PR <= 0 {
			continue
		}
		if pr == 0 {
			pr = res.Settings.PR
		}
		if _, _, _, ok := parseRepoURL(res.Settings.Repo); ok && repo == "" {
			repo = res.Settings.Repo
		}
		break
	}
	if pr <= 0 {
		return nil, errors.New("post: there is no pull request to post to: give --pr N (and --repo URL unless it is " + DefaultRepo + ")")
	}
	if repo == "" {
		repo = DefaultRepo
	}
	owner, name, _, ok := parseRepoURL(repo)
	if !ok {
		return nil, &results.InputError{Input: "--repo " + repo, Err: errors.New("not a GitHub repository URL (https://HOST/OWNER/REPO)")}
	}
	return &PostTarget{Owner: owner, Repo: name, PR: pr}, nil
}

// post upserts the sticky comment and sets the commit status.
func post(ctx context.Context, cfg *Config, rs []*results.Result, body string, pub *Published) error {
	to, err := postTarget(cfg, rs)
	if err != nil {
		return err
	}
	pub.Target = to
	opts := github.Options{BaseURL: cfg.GitHubAPI, Getenv: cfg.Getenv, Login: githubLogin(cfg.Getenv)}
	if cfg.DryRun {
		opts.DryRun = cfg.Stdout
	}
	client, err := github.New(opts)
	if err != nil {
		return &results.InputError{Input: "--github-api " + cfg.GitHubAPI, Err: err}
	}
	// The PR is read first: it must exist, and its head tells whether the
	// validated commit is still the one to mark.
	pr, prErr := client.ResolvePR(ctx, to.Owner, to.Repo, to.PR)
	if prErr != nil && !cfg.DryRun {
		return fmt.Errorf("post: %w", prErr)
	}

	comment, err := commentBody(rs, body)
	if err != nil {
		return err
	}
	out, err := client.UpsertComment(ctx, to.Owner, to.Repo, to.PR, github.Comment{
		Key: CommentKey, Run: runStamp(cfg.Getenv, rs), Body: comment,
	})
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	pub.Comment = &out

	sha := headCommit(rs, to.PR)
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
	if err := client.SetStatus(ctx, to.Owner, to.Repo, sha, st); err != nil {
		return fmt.Errorf("post: %w", err)
	}
	pub.Status, pub.StatusSHA = &st, sha
	return nil
}

// githubLogin is the account an Actions or App token posts as, for which
// GitHub will not answer GET /user: $PATCHPROOF_GITHUB_LOGIN, else the
// Actions bot under Actions.
func githubLogin(getenv func(string) string) string {
	if l := getenv("PATCHPROOF_GITHUB_LOGIN"); l != "" {
		return l
	}
	if getenv("GITHUB_ACTIONS") == "true" {
		return "github-actions[bot]"
	}
	return ""
}

// maxComment leaves room under GitHub's 65536-character comment limit for
// the marker the GitHub layer adds.
const maxComment = 65000

// commentBody is the summary as a comment: without the disassembly diffs
// when they would not fit, and cut as a last resort.
func commentBody(rs []*results.Result, full string) (string, error) {
	if utf8.RuneCountInString(full) <= maxComment {
		return full, nil
	}
	var b strings.Builder
	if err := renderSummary(&b, rs, renderOptions{compact: true}); err != nil {
		return "", err
	}
	s := b.String()
	if utf8.RuneCountInString(s) <= maxComment {
		return s, nil
	}
	const cut = "\n\n… (cut here: the comment would exceed GitHub's size limit; summary.md has all of it)\n"
	r := []rune(s)
	return string(r[:maxComment-utf8.RuneCountInString(cut)]) + cut, nil
}

// runStamp orders the runs that post: the Actions run id (a re-run attempt
// keeps its run's id, and then the newer attempt overwrites the older, as
// the same stamp lets the poster win), else the latest start time.
func runStamp(getenv func(string) string, rs []*results.Result) string {
	if id := getenv("GITHUB_RUN_ID"); id != "" {
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

// headCommit is the PR's head commit as validated: the head of the target
// checked out as the PR's ref, else of the first target that is not a
// backport.
func headCommit(rs []*results.Result, pr int) string {
	first := ""
	for _, res := range rs {
		for _, t := range res.Targets {
			if t.Backport != nil {
				continue
			}
			if t.Head.Ref == checkout.PRRef(pr) || t.Head.Ref == "refs/"+checkout.PRRef(pr) {
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
	switch v.Status {
	case results.StatusPassed:
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
	case results.StatusFailed:
		st.State, st.Description = github.StateFailure, "failed: "+stageReasons(rs, results.StatusFailed, v.Reason)
	default:
		st.State, st.Description = github.StateError, "could not run: "+stageReasons(rs, results.StatusError, v.Reason)
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

func shortSHA(sha string) string { return sha[:min(12, len(sha))] }

// ParsePostTo reads OWNER/REPO#N or https://HOST/OWNER/REPO/pull/N.
func ParsePostTo(s string) (*PostTarget, error) {
	var repo, num string
	if i := strings.LastIndex(s, "/pull/"); i >= 0 {
		u, err := url.Parse(s[:i])
		if err != nil || u.Host == "" {
			return nil, errors.New("want OWNER/REPO#N or a pull request URL")
		}
		repo, num = strings.Trim(u.Path, "/"), s[i+len("/pull/"):]
	} else {
		var ok bool
		if repo, num, ok = strings.Cut(s, "#"); !ok {
			return nil, errors.New("want OWNER/REPO#N or a pull request URL")
		}
	}
	owner, name, ok := strings.Cut(repo, "/")
	n, err := strconv.Atoi(strings.TrimSuffix(num, "/"))
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || err != nil || n <= 0 {
		return nil, errors.New("want OWNER/REPO#N or a pull request URL")
	}
	return &PostTarget{Owner: owner, Repo: name, PR: n}, nil
}
