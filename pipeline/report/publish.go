package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// Options say where a report goes. The zero value writes the summary to
// Stdout (discarded when nil) and posts nothing.
type Options struct {
	// Out is the directory summary.md is written to; "" writes the summary
	// to Stdout instead.
	Out    string
	Stdout io.Writer
	// StepSummary is a file the summary is appended to:
	// $GITHUB_STEP_SUMMARY under GitHub Actions; "" for none.
	StepSummary string

	// Post makes the summary the pull request's sticky comment and sets a
	// commit status on the head commit the results validated. With DryRun
	// the client reads but writes nothing: what it would post goes to
	// Stdout.
	Post, DryRun bool
	// PR is the pull request to post on, as far as the caller knows it: a
	// whole one (--post-to), or the number and repository it was given
	// (--pr, --repo). What it leaves zero comes from the results: the first
	// one run for a pull request gives its number and, when it is on
	// GitHub, its repository; php/php-src is the last resort.
	PR github.PullRequest
	// NotOnGitHub is the repository the caller was given when it is not on
	// GitHub (a path, a file:// URL): a post then has nowhere to go, and
	// fails naming it.
	NotOnGitHub string
	// GitHub configures the client: the API root, the environment the
	// token is read from, the login of an App or Actions token. Its DryRun
	// is set from DryRun.
	GitHub github.Options
	// RunID orders the runs that post ($GITHUB_RUN_ID), so that an older
	// run never overwrites a newer run's comment; "" orders them by when
	// they started.
	RunID string
	// Expect are the targets the results must cover: one per CI job. A
	// target none of them has makes the report incomplete, as a job that
	// died reads.
	Expect []string
	// Artifacts link the run's artifacts by name (patchproof-KIND-SLUG:
	// results, evidence and logs of each target's job) to their pages,
	// for the comment to link; nil names them without links.
	Artifacts map[string]string
}

func (o Options) withDefaults() Options {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	return o
}

// render are the rendering options of the summary.
func (o Options) render() renderOptions {
	return renderOptions{expect: o.Expect, artifacts: o.Artifacts}
}

// Published says where a summary went.
type Published struct {
	Verdict     results.Verdict
	Summary     string              // the summary.md written; "" when it went to Stdout
	JUnit       string              // junit.xml beside it, when suites were compared
	StepSummary string              // the file it was appended to, if any
	Comment     *github.Outcome     // nil when nothing was posted
	Status      *github.Status      // the commit status set (or, in a dry run, that would be)
	StatusSHA   string              // on this commit
	Notes       []string            // what was left undone, and why
	Target      *github.PullRequest // where it was posted
}

// WriteLog says where the summary went, a line each, for a stage's log.
func (p *Published) WriteLog(w io.Writer) {
	fmt.Fprintf(w, "verdict: %s %s\n", p.Verdict.Status, p.Verdict.Reason)
	if p.Summary != "" {
		fmt.Fprintf(w, "summary: %s\n", p.Summary)
	}
	if p.StepSummary != "" {
		fmt.Fprintf(w, "appended to $GITHUB_STEP_SUMMARY (%s)\n", p.StepSummary)
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
// delivers it: to opt.Out/summary.md, or opt.Stdout when opt.Out is ""; to
// opt.StepSummary when set; and, with opt.Post, as the PR's sticky comment
// and a commit status on the head commit it validated (printed instead with
// opt.DryRun). The run and the report command both deliver through it. The
// error is about delivery; the checks' outcome is Published.Verdict.
func Publish(ctx context.Context, opt Options, rs []*results.Result) (*Published, error) {
	opt = opt.withDefaults()
	pub := &Published{Verdict: results.Expecting(rs, opt.Expect)}
	var body bytes.Buffer
	if err := renderSummary(&body, rs, opt.render()); err != nil {
		return pub, err
	}
	if opt.Out != "" {
		if err := os.MkdirAll(opt.Out, 0o755); err != nil {
			return pub, fmt.Errorf("write summary: %w", err)
		}
		pub.Summary = filepath.Join(opt.Out, "summary.md")
		if err := safefs.WritePath(pub.Summary, body.Bytes(), 0o644); err != nil {
			return pub, fmt.Errorf("write summary: %w", err)
		}
		var junit bytes.Buffer
		if ok, err := WriteJUnit(&junit, rs); err != nil {
			return pub, err
		} else if ok {
			pub.JUnit = filepath.Join(opt.Out, "junit.xml")
			if err := safefs.WritePath(pub.JUnit, junit.Bytes(), 0o644); err != nil {
				return pub, fmt.Errorf("write junit.xml: %w", err)
			}
		}
	} else if !(opt.Post && opt.DryRun) { // a dry run prints the comment already
		if _, err := opt.Stdout.Write(body.Bytes()); err != nil {
			return pub, fmt.Errorf("write summary: %w", err)
		}
	}
	if opt.StepSummary != "" {
		if err := appendFile(opt.StepSummary, body.Bytes()); err != nil {
			return pub, fmt.Errorf("append to $GITHUB_STEP_SUMMARY: %w", err)
		}
		pub.StepSummary = opt.StepSummary
	}
	if !opt.Post {
		return pub, nil
	}
	return pub, post(ctx, opt, rs, body.String(), pub)
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
