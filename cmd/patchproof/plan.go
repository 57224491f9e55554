package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/ghactions"
	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/trigger"
)

// planAbout is plan's manual (--help).
const planAbout = `The validation workflow's plan job: reads a GitHub Actions event and decides
whether it asks patchproof to validate a pull request, and what. Triggers:
workflow_dispatch (inputs pr, repository, backport_to, builder, and bench,
threads, stages as a comment's options), a comment on a pull request whose
first line is

  /patchproof [BRANCH,BRANCH...|none] [SHA] [bench=quick|report] [threads=LIST] [stages=LIST]

(or '/patchproof help'), and the label "patchproof" on a pull request. The
user who acted must have write, maintain or admin on the repository the
workflow runs in: that is asked first, and of anyone else nothing more is
read or planned. Backport and merge-up branches must be branches of the
PR's repository, by their exact names. The head commit is the one the trigger names: a comment's
SHA (a prefix of the PR's head), else a head pushed before the comment was
written (from the head repository's activity log), a label's commit, or the
head at dispatch.

The plan is written as key=value lines (repo, owner, name, pr, base,
head_sha, backport_to, builder, targets, matrix, tool_repo, tool_sha, bench,
threads, stages, supersedes) to --output, all at once: a refused trigger
writes nothing, prints one ::error:: line and exits 2. With --answer the
plan also answers on the PR: a pending "queued" status on the head of an
accepted trigger (and an error "superseded" one on an earlier head whose
run is still pending: supersedes=true), a one-line reply saying why to a
refused one, the grammar to '/patchproof help'. A user without write
access gets one short reply, whatever they asked, at most once a day on a
PR (the plan looks for its own earlier one first). The token is
$GITHUB_TOKEN, else $GH_TOKEN.`

// planCmd is 'patchproof plan'.
func planCmd(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("plan", stdout)
	env := os.Getenv
	var opt trigger.Options
	var eventPath, output, api string
	fs.StringVar(&eventPath, "event", env("GITHUB_EVENT_PATH"), "the event payload `FILE`")
	fs.StringVar(&opt.EventName, "event-name", env("GITHUB_EVENT_NAME"), "the event's `NAME`")
	fs.StringVar(&output, "output", env("GITHUB_OUTPUT"), "append the outputs to `FILE` (default $GITHUB_OUTPUT; stdout when empty)")
	fs.StringVar(&opt.Repository, "repository", env("GITHUB_REPOSITORY"), "the `OWNER/NAME` the workflow runs in (default the event's)")
	fs.StringVar(&opt.SHA, "sha", env("GITHUB_SHA"), "the workflow's `COMMIT`")
	fs.StringVar(&opt.BackportTo, "default-backport-to", env("DEFAULT_BACKPORT_TO"),
		"backport `BRANCHES` of comments and labels naming none, comma-separated, or none (default "+trigger.DefaultBackportTo+")")
	fs.StringVar(&opt.Builder, "default-builder", env("DEFAULT_BUILDER"), "the `BUILDER` of comments and labels (default "+trigger.DefaultBuilder+")")
	fs.StringVar(&opt.ToolRepository, "tool-repository", env("TOOL_REPOSITORY"), "where patchproof is, `OWNER/NAME` (default "+trigger.DefaultToolRepository+")")
	fs.StringVar(&opt.ToolRef, "tool-ref", env("TOOL_REF"), "the patchproof `REF` to build (default the workflow's commit in that repository, else "+trigger.DefaultToolRef+")")
	fs.StringVar(&api, "github-api", cmp.Or(env("PATCHPROOF_GITHUB_API"), env("GITHUB_API_URL")),
		"GitHub REST API `URL` (default $PATCHPROOF_GITHUB_API, else $GITHUB_API_URL, else "+github.DefaultBaseURL+")")
	var ans answerOptions
	fs.BoolVar(&ans.on, "answer", false, "answer on the PR: a pending status on the head of an accepted trigger, a reply to a refused one or to /patchproof help")
	fs.StringVar(&ans.runID, "run-id", env("GITHUB_RUN_ID"), "the workflow run's `ID`, which orders the statuses (default $GITHUB_RUN_ID)")
	fs.StringVar(&ans.runURL, "run-url", pipeline.ActionsRunURL(env), "the workflow run's `URL`, the statuses' link (default from $GITHUB_SERVER_URL, $GITHUB_REPOSITORY, $GITHUB_RUN_ID)")
	fs.StringVar(&ans.login, "github-login", pipeline.GitHubLogin(env),
		"the `LOGIN` the token posts as, where GitHub will not say (default $PATCHPROOF_GITHUB_LOGIN, else github-actions[bot] under Actions)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if err := plan(ctx, stdout, stderr, opt, eventPath, output, api, ans); err != nil {
		return &annotatedError{fmt.Errorf("plan: %w", err)}
	}
	return nil
}

// answerOptions say whether and how the plan answers on the PR.
type answerOptions struct {
	on                   bool
	runID, runURL, login string
}

func plan(ctx context.Context, stdout, stderr io.Writer, opt trigger.Options, eventPath, output, api string, ans answerOptions) error {
	if eventPath == "" {
		return &results.InputError{Input: "--event", Err: errors.New("no event file (and $GITHUB_EVENT_PATH is unset)")}
	}
	var err error
	if opt.Event, err = os.ReadFile(eventPath); err != nil {
		return &results.InputError{Input: "--event " + eventPath, Err: err}
	}
	client, err := github.New(github.Options{BaseURL: api, Login: ans.login})
	if err != nil {
		return &results.InputError{Input: "--github-api " + api, Err: err}
	}
	p, err := trigger.Decide(ctx, client, opt)
	if err != nil {
		if ans.on {
			answerRefusal(ctx, stderr, client, opt, err)
		}
		if errors.Is(err, trigger.ErrHelp) {
			// Nothing to run, and nothing wrong: no outputs, exit 0.
			fmt.Fprintln(stderr, "::notice::/patchproof help: nothing to run")
			return nil
		}
		return err
	}
	if ans.on {
		acknowledge(ctx, stderr, client, p, ans)
	}
	if err := writeOutputs(stdout, output, p.Outputs()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "::notice::%s\n", ghactions.Message(p.Notice()))
	return nil
}

// answerRefusal replies on the PR to a refused trigger, or to help. A reply
// that fails is a warning: the refusal is the plan's answer either way. An
// answer to be given once in trigger.Quiet (to a user without write
// access) is not given when the PR has one of ours from then, nor when
// whether it has cannot be read: at most one, rather than one a comment.
func answerRefusal(ctx context.Context, stderr io.Writer, client *github.Client, opt trigger.Options, refusal error) {
	a, ok := trigger.AnswerFor(opt, refusal)
	if !ok {
		return
	}
	owner, name, _ := strings.Cut(a.Repo, "/")
	if a.Once != "" {
		url, found, err := client.RecentReply(ctx, owner, name, a.PR, a.Once, time.Now().Add(-trigger.Quiet))
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "::warning::not answered: %s\n", ghactions.Message(err.Error()))
			return
		case found:
			fmt.Fprintf(stderr, "::notice::not answered on %s#%d: answered so within %s: %s\n", a.Repo, a.PR, trigger.Quiet, ghactions.Message(url))
			return
		}
	}
	out, err := client.Reply(ctx, owner, name, a.PR, a.Body)
	if err != nil {
		fmt.Fprintf(stderr, "::warning::%s\n", ghactions.Message(err.Error()))
		return
	}
	fmt.Fprintf(stderr, "::notice::answered on %s#%d: %s\n", a.Repo, a.PR, ghactions.Message(out.URL))
}

// acknowledge marks an accepted trigger on the PR: the earlier heads whose
// runs it supersedes get an error status saying so, and the head a
// pending "queued" one, which the report's verdict replaces (one run
// stamp: the report's status is set over it, a newer run's is not).
// Failures are warnings: the run goes ahead unacknowledged.
func acknowledge(ctx context.Context, stderr io.Writer, client *github.Client, p *trigger.Plan, ans answerOptions) {
	warn := func(err error) { fmt.Fprintf(stderr, "::warning::%s\n", ghactions.Message(err.Error())) }
	owner, name, _ := strings.Cut(p.Repo, "/")
	if err := trigger.Supersede(ctx, client, p); err != nil {
		warn(err)
	}
	for _, sha := range p.Supersedes {
		st := p.SupersededStatus()
		st.Run, st.TargetURL = ans.runID, ans.runURL
		if _, err := client.SetStatus(ctx, owner, name, sha, st); err != nil {
			warn(err)
		}
	}
	st := p.QueuedStatus()
	st.Run, st.TargetURL = ans.runID, ans.runURL
	if _, err := client.SetStatus(ctx, owner, name, p.HeadSHA, st); err != nil {
		warn(err)
	}
}

// writeOutputs appends the outputs to path (stdout when ""), in one write
// and only now that all are known, so that the job gets all of them or none.
func writeOutputs(stdout io.Writer, path, outputs string) error {
	if path == "" {
		_, err := io.WriteString(stdout, outputs)
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return &results.InputError{Input: "--output " + path, Err: err}
	}
	if _, err := f.WriteString(outputs); err != nil {
		f.Close()
		return fmt.Errorf("write outputs to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write outputs to %s: %w", path, err)
	}
	return nil
}

// annotatedError is shown as a GitHub Actions error annotation, so that the
// run's page says why: the plan runs only in Actions.
type annotatedError struct{ err error }

func (e *annotatedError) Error() string { return e.err.Error() }
func (e *annotatedError) Unwrap() error { return e.err }
