package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/ghactions"
	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
)

// reportAbout is report's manual (--help).
const reportAbout = `Renders one or more results.json (one per target or job) as one Markdown
summary, to stdout or to DIR/summary.md with --out, and to
$GITHUB_STEP_SUMMARY when it is set. With --post it becomes the pull request's
sticky comment, and the head commit gets a status, as with 'patchproof run
--post'. The PR is --pr (and --repo), else the one the results were run for.
With no file, patchproof-out/results.json is read.

Results merged must be of one repository, pull request and head commit,
a target each. With --expect-head (and --pr, --repo) they must be of the
run that was planned: that repository, PR and head commit, and only the
targets of --expect-targets; the validation workflow's report job checks
the results it got from the runners so, before it posts anything. A run that did not finish (killed, interrupted) and, with
--expect-targets, a target no file has, make the report incomplete: it
says what did not finish, and the commit status is an error.

The comment keeps a collapsed list of the runs it replaced (head, verdict,
the CPU cost of statistics), newest first.`

// defaultResults is what 'patchproof report' reads with no file named: the
// results of 'patchproof run' with its default --out.
const defaultResults = "patchproof-out/results.json"

// reportCmd is 'patchproof report'.
func reportCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("report", stdout)
	var files listFlag
	var cfg pipeline.Config
	var expect, expectHead, artifacts string
	fs.Var(&files, "merge", "a results.json `FILE` to merge (repeatable; files may also follow the flags)")
	fs.BoolVar(&cfg.Post, "post", false, "post the summary comment and commit status on the PR")
	fs.BoolVar(&cfg.DryRun, "dry-run", false, "print what --post would post, and post nothing (implies --post)")
	fs.IntVar(&cfg.PR, "pr", 0, "post on pull request `N` (default: the results' PR)")
	fs.StringVar(&cfg.Repo, "repo", "", "the PR's repository `URL` (default: the results', else "+pipeline.DefaultRepo+")")
	fs.StringVar(&cfg.GitHubAPI, "github-api", "", "GitHub REST API `URL` (default $PATCHPROOF_GITHUB_API, else https://api.github.com/)")
	fs.StringVar(&cfg.Out, "out", "", "write `DIR`/summary.md instead of printing the summary")
	fs.StringVar(&expect, "expect-targets", "", "the `TARGETS` the results must cover, one per job (comma-separated): one missing makes the report incomplete")
	fs.StringVar(&expectHead, "expect-head", "", "the planned head `COMMIT`: with --pr and --repo, every result must be of that PR and commit, and of --expect-targets only, or nothing is posted (exit 2)")
	fs.StringVar(&artifacts, "artifacts", "", "link each target's artifacts from `FILE`: this run's list of them as the API gives it (gh api --paginate repos/R/actions/runs/ID/artifacts); needs GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID")
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
	if err := cfg.ValidateReport(); err != nil {
		return err
	}
	expected, err := splitList("--expect-targets", expect, true)
	if err != nil {
		return err
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
	if err := checkMerge(files, rs); err != nil {
		return err
	}
	if expectHead != "" {
		if err := checkPlanned(files, rs, cfg, expectHead, expected); err != nil {
			return err
		}
	}

	// The results were written on machines that ran the PR's code: the link
	// to their run is not taken from them but from this job's own
	// environment (the same workflow run), or there is none.
	runURL := cfg.RunURL()
	for _, res := range rs {
		res.RunURL = runURL
	}
	var links map[string]string
	if artifacts != "" {
		if links, err = readArtifacts(artifacts, runURL); err != nil {
			return err
		}
	}

	cfg.Post = cfg.Post || cfg.DryRun
	cfg.Stdout, cfg.Stderr = stdout, stderr
	opt := cfg.ReportOptions()
	opt.Expect = expected
	opt.Artifacts = links
	// The comment lists the runs before this one: this run's entry.
	opt.GitHub.Entry = report.HistoryEntry(rs, expected)
	pub, err := report.Publish(ctx, opt, rs)
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
			fmt.Fprintf(stderr, "note: %s\n", ghactions.Line(n))
		}
	}
	if err != nil {
		return err
	}
	switch v := pub.Verdict; {
	case v.Status == results.StatusPassed:
		return nil
	case v.Status == results.StatusFailed:
		return results.CheckFailed("%s", v.Reason)
	case v.NothingChecked:
		return errors.New(v.Reason)
	case v.Status == results.StatusError:
		return fmt.Errorf("could not run: %s", v.Reason)
	default:
		return fmt.Errorf("incomplete: %s", v.Reason)
	}
}

// checkMerge rejects files that are not parts of one run, before anything
// is written: the same file twice, or results.CheckMerge's refusal, naming
// both files.
func checkMerge(files []string, rs []*results.Result) error {
	seen := map[string]string{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		if first, ok := seen[abs]; ok {
			return &results.InputError{Input: first + " and " + f, Err: errors.New("the same file named twice")}
		}
		seen[abs] = f
	}
	var me *results.MergeError
	if err := results.CheckMerge(rs); errors.As(err, &me) {
		return &results.InputError{Input: files[me.A] + " and " + files[me.B], Err: fmt.Errorf("cannot merge: %w", err)}
	}
	return nil
}

// readResults reads one results.json; anything else is bad input naming
// the file.
func readResults(path string) (*results.Result, error) {
	res, err := results.Read(path)
	var pe *fs.PathError
	var ve *results.VersionError
	var se *results.SizeError
	switch {
	case errors.As(err, &pe):
		return nil, &results.InputError{Input: path, Err: pe.Err}
	case errors.As(err, &ve) && ve.Missing:
		// Not read as passed: a file without a version is no
		// patchproof run's, whatever its status says.
		return nil, &results.InputError{Input: path, Err: fmt.Errorf("no schema_version: refused (this patchproof reads versions 1 to %d)", results.SchemaVersion)}
	case errors.As(err, &ve):
		return nil, &results.InputError{Input: path, Err: fmt.Errorf("schema_version %d is not one this patchproof reads (1 to %d)", ve.Version, results.SchemaVersion)}
	case errors.As(err, &se):
		return nil, &results.InputError{Input: path, Err: fmt.Errorf("larger than %d MiB, the most a results.json may be", se.Max>>20)}
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

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// checkPlanned rejects results that are not of the run that was planned:
// another repository or PR, a target not in expected (when given), or a
// target that validated another head than expectHead (a backport target:
// made from another) or names none. The results come from machines that ran the PR's
// code, and are checked before anything is posted with a write token.
func checkPlanned(files []string, rs []*results.Result, cfg pipeline.Config, expectHead string, expected []string) error {
	if !fullSHA.MatchString(expectHead) {
		return &results.InputError{Input: "--expect-head " + expectHead, Err: errors.New("want a full commit hash")}
	}
	want, ok := github.ParseRepo(cfg.Repo)
	if cfg.PR <= 0 || !ok {
		return &results.InputError{Input: "--expect-head " + expectHead, Err: errors.New("needs --pr N and --repo URL: the pull request that was planned")}
	}
	for i, res := range rs {
		bad := func(format string, a ...any) error {
			return &results.InputError{Input: files[i], Err: fmt.Errorf("not a result of %s#%d at %s: %s", want, cfg.PR, expectHead[:12], fmt.Sprintf(format, a...))}
		}
		if got, ok := github.ParseRepo(res.Settings.Repo); !ok || !strings.EqualFold(got.Host, want.Host) ||
			!strings.EqualFold(got.Owner, want.Owner) || !strings.EqualFold(got.Name, want.Name) {
			return bad("its repository is %q", res.Settings.Repo)
		}
		if res.Settings.PR != cfg.PR {
			return bad("its pull request is #%d", res.Settings.PR)
		}
		for _, t := range res.Targets {
			if len(expected) > 0 && !slices.Contains(expected, t.Name) {
				return bad("target %s was not planned", t.Name)
			}
			head := t.Head.Commit
			if t.Backport != nil {
				head = t.Backport.FromCommit
			}
			switch {
			case head == "":
				// A result that names no commit cannot be shown to be of
				// the planned one, whatever else it says.
				return bad("target %s names no head commit", t.Name)
			case head != expectHead:
				return bad("target %s validated %s", t.Name, head)
			}
		}
	}
	return nil
}
