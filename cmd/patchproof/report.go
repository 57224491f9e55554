package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
)

const reportUsage = `Usage: patchproof report [--merge] [flags] [results.json...]

Renders one or more results.json (one per target or job) as one Markdown
summary, to stdout or to DIR/summary.md with --out, and to
$GITHUB_STEP_SUMMARY when it is set. With --post it becomes the pull request's
sticky comment, and the head commit gets a status, as with 'patchproof run
--post'. The PR is --pr (and --repo), else the one the results were run for.
With no file, patchproof-out/results.json is read.

Exit status: 0 every check passed, 1 a check failed, 2 a run could not
complete, bad input, or posting failed.

`

// defaultResults is what 'patchproof report' reads with no file named: the
// results of 'patchproof run' with its default --out.
const defaultResults = "patchproof-out/results.json"

// reportCmd is 'patchproof report'.
func reportCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("report", stderr)
	var files listFlag
	var cfg pipeline.Config
	fs.Var(&files, "merge", "a results.json `FILE` to merge (repeatable; files may also follow the flags)")
	fs.BoolVar(&cfg.Post, "post", false, "post the summary comment and commit status on the PR")
	fs.BoolVar(&cfg.DryRun, "dry-run", false, "print what --post would post, and post nothing (implies --post)")
	fs.IntVar(&cfg.PR, "pr", 0, "post on pull request `N` (default: the results' PR)")
	fs.StringVar(&cfg.Repo, "repo", "", "the PR's repository `URL` (default: the results', else "+pipeline.DefaultRepo+")")
	fs.StringVar(&cfg.GitHubAPI, "github-api", "", "GitHub REST API `URL` (default $PATCHPROOF_GITHUB_API, else https://api.github.com/)")
	fs.StringVar(&cfg.Out, "out", "", "write `DIR`/summary.md instead of printing the summary")
	fs.Usage = func() {
		fmt.Fprint(stderr, reportUsage)
		fs.PrintDefaults()
	}
	// Files and flags may come in any order: report --merge a.json b.json --post.
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		files = listFlag{defaultResults}
	}
	var rs []*results.Result
	for _, f := range files {
		res, err := readResults(f)
		if err != nil {
			return err
		}
		rs = append(rs, res)
	}

	cfg.Post = cfg.Post || cfg.DryRun
	cfg.Stdout, cfg.Stderr = stdout, stderr
	pub, err := report.Publish(ctx, cfg.ReportOptions(), rs)
	if pub != nil {
		if pub.Summary != "" {
			fmt.Fprintf(stderr, "summary: %s\n", pub.Summary)
		}
		if c := pub.Comment; c != nil && !cfg.DryRun {
			fmt.Fprintf(stderr, "comment %s: %s\n", c.Action, c.URL)
		}
		if s := pub.Status; s != nil && !cfg.DryRun {
			fmt.Fprintf(stderr, "status %s on %s\n", s.State, pub.StatusSHA)
		}
		for _, n := range pub.Notes {
			fmt.Fprintf(stderr, "note: %s\n", n)
		}
	}
	if err != nil {
		return err
	}
	switch v := pub.Verdict; v.Status {
	case results.StatusPassed:
		return nil
	case results.StatusFailed:
		return results.CheckFailed("%s", v.Reason)
	default:
		return fmt.Errorf("could not run: %s", v.Reason)
	}
}

// readResults reads one results.json; anything else is bad input naming
// the file.
func readResults(path string) (*results.Result, error) {
	res, err := results.Read(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, &results.InputError{Input: path, Err: pe.Err}
	case err != nil:
		cause := err
		if u := errors.Unwrap(err); u != nil {
			cause = u
		}
		return nil, &results.InputError{Input: path, Err: fmt.Errorf("not a results.json: %w", cause)}
	case res.Tool != "patchproof":
		return nil, &results.InputError{Input: path, Err: errors.New(`not a results.json: no "tool": "patchproof"`)}
	}
	return res, nil
}

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
