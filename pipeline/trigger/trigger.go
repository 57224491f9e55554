// Package trigger decides whether a GitHub event asks patchproof to
// validate a pull request, and if so what: the repository, the PR, its base
// branch and the head commit to build, the targets (the base branch, then
// each backport branch once), the builder, and the patchproof commit every
// job builds. It is the validation workflow's plan job; 'patchproof plan'
// writes a [Plan] as the job's outputs.
//
// # Triggers
//
//   - workflow_dispatch: the inputs pr, repository, backport_to and builder,
//     and the options bench, threads and stages a comment may give.
//   - issue_comment created on a pull request, whose first line is
//     "/patchproof [BRANCHES|none] [SHA] [OPTION=VALUE...]" ([ParseCommand],
//     [Grammar]); "/patchproof help" asks for the grammar ([ErrHelp]).
//   - pull_request_target labeled with the label "patchproof".
//
// # Who may trigger
//
// The user who acted (the commenter, the labeller, the dispatching actor)
// must have write, maintain or admin on the repository the workflow runs
// in, as GitHub's collaborator permission endpoint reports it now. It is
// asked first: a comment of anyone else is refused whatever it says
// ("/patchproof help" and words that do not parse included), with a
// [*RefusedError] marked NoAccess, which is answered shortly and at most
// once a day on a PR ([AnswerFor]). The event's author_association is not
// used, not even as a first filter: MEMBER and COLLABORATOR include
// people with read or triage only, and under Actions a member whose
// membership is private reads as CONTRIBUTOR.
//
// # Which branches
//
// Every backport and merge-up branch must be a branch of the PR's
// repository, by its exact name (php-8.4 is not PHP-8.4), as GitHub's
// branches endpoint answers: a word that is none (a typo, "rerun") is
// refused naming it, never planned as a target.
//
// # Which head
//
// The head commit is bound to the trigger, not to when the plan runs:
//
//   - a label: the commit the PR had when labelled, which must still be
//     its head;
//   - a comment naming a commit: it must be (a prefix of) the PR's head;
//   - a comment naming none: the head branch, in the head repository's
//     activity log, must have changed last before the comment was written,
//     to the PR's head. A change after it, or a log that cannot be read or
//     does not reach the head, refuses: the maintainer comments again or
//     names the commit. An abbreviated commit is held to the same rule
//     where the log can be read, since seven hex digits can be matched by
//     a commit made for the purpose;
//   - a dispatch: the head when the plan runs (the actor asked just now).
//
// Every refusal is a [*RefusedError] naming why, in one line.
package trigger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
)

// Defaults of [Options], in one place.
const (
	DefaultBackportTo     = "PHP-8.4,PHP-8.5"
	DefaultBuilder        = string(builders.KindDocker)
	DefaultToolRepository = "patchproof/patchproof"
	// DefaultToolRef is the patchproof to build when the workflow runs
	// outside the tool's own repository and names no ref.
	DefaultToolRef = "main"
	// LabelName is the label that asks for a run.
	LabelName = "patchproof"
	// activityPage is how many changes of the head branch are read: the
	// newest decides, the rest only make the answer easier to debug.
	activityPage = 10
)

// API is what the plan asks GitHub; *github.Client is one.
type API interface {
	ResolvePR(ctx context.Context, owner, repo string, number int) (github.PR, error)
	Permission(ctx context.Context, owner, repo, user string) (github.Permission, error)
	RefActivity(ctx context.Context, owner, repo, ref string, n int) ([]github.Activity, error)
	ResolveCommit(ctx context.Context, owner, repo, ref string) (string, error)
	Branch(ctx context.Context, owner, repo, branch string) (string, bool, error)
}

var _ API = (*github.Client)(nil)

// Options is one event and the workflow's settings. The zero value of each
// setting is its default.
type Options struct {
	EventName string // $GITHUB_EVENT_NAME
	Event     []byte // the payload, as in $GITHUB_EVENT_PATH

	// Repository is the repository the workflow runs in
	// ($GITHUB_REPOSITORY): "" means the event's. Triggers need write on
	// it, and comments and labels are on its pull requests.
	Repository string
	// SHA is the workflow's commit ($GITHUB_SHA): the patchproof to build
	// when the workflow runs in the tool's repository and ToolRef is "".
	SHA string

	// BackportTo is the comma-separated backport branches of comments and
	// labels that name none ("none" for none): DefaultBackportTo if "".
	BackportTo string
	// Builder is the builder of comments and labels: DefaultBuilder if "".
	Builder string
	// ToolRepository is where patchproof is (OWNER/NAME), and ToolRef the
	// branch, tag or commit of it to build.
	ToolRepository string
	ToolRef        string
}

func (o Options) withDefaults() Options {
	o.BackportTo = cmp.Or(o.BackportTo, DefaultBackportTo)
	o.Builder = cmp.Or(o.Builder, DefaultBuilder)
	o.ToolRepository = cmp.Or(o.ToolRepository, DefaultToolRepository)
	return o
}

// Plan is what the workflow's jobs run.
type Plan struct {
	Repo      string // OWNER/NAME of the pull request
	PR        int
	Base      string // the PR's base branch
	HeadSHA   string
	Backports []string
	// MergeUp are the branches the change is merged up into, in order.
	MergeUp  []string
	Builder  string
	Targets  []string // Base, then each of Backports and MergeUp
	ToolRepo string
	ToolSHA  string
	// Bench, Threads and Stages are a comment's options, as patchproof
	// run's --bench, --threads and --stages take them; "" for the
	// workflow's defaults.
	Bench, Threads, Stages string
	// Supersedes are the PR's earlier heads a run still shows as pending
	// ([Supersede]): with any, the plan's jobs cancel the runs in
	// progress for the PR; without, they queue behind them.
	Supersedes []string
	// The head branch, where the PR's pushes are read.
	headOwner, headName, headRef string

	// Who asked, with what access, and what bound the head, for the log.
	User       string
	Permission github.Permission
	Bound      string
}

// RefusedError is an event patchproof will not act on: not a trigger, bad
// input, a user without write access, or a head the trigger does not bind.
type RefusedError struct {
	Reason string // one line
	// NotATrigger is an event nobody meant as a trigger (another comment
	// or label, an edit): nothing is answered on the PR.
	NotATrigger bool
	// NoAccess is a user without write access, or whose access GitHub
	// will not say: nothing of what they asked is read, and the answer
	// is one short line, at most once a day on a PR.
	NoAccess bool
}

func (e *RefusedError) Error() string { return "trigger refused: " + e.Reason }

func refusef(format string, a ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, a...)}
}

// notATrigger refuses an event that asked for nothing.
func notATrigger(format string, a ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, a...), NotATrigger: true}
}

// ErrHelp is Decide's answer to "/patchproof help": nothing runs, and the
// answer on the PR is [Grammar].
var ErrHelp = errors.New("trigger: help asked")

var (
	repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	prRE   = regexp.MustCompile(`^[1-9][0-9]*$`)
	shaRE  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// request is what the event asks for, before GitHub is asked anything.
type request struct {
	event                         string // Dispatch, Comment or Label
	repo, pr, backportTo, builder string
	user                          string
	comment                       string    // a comment's body, read once the user may trigger
	named                         []string  // the branches a comment's words name
	labelled                      string    // a label's head commit
	commit                        string    // a comment's commit
	commentAt                     time.Time // when a comment was written
	bench, threads, stages        string    // a comment's options
	mergeUp                       string
}

// Decide reads the event in opt and returns the plan for it, or a
// *RefusedError when the event is not a trigger patchproof will act on.
// Other errors are GitHub's or the settings'.
func Decide(ctx context.Context, api API, opt Options) (*Plan, error) {
	opt = opt.withDefaults()
	ev, err := parseEvent(opt.Event)
	if err != nil {
		return nil, err
	}
	where := cmp.Or(opt.Repository, ev.Repository.FullName)
	if !repoRE.MatchString(where) {
		return nil, fmt.Errorf("the workflow's repository %q: want OWNER/NAME", where)
	}
	r, err := readRequest(opt, ev, where)
	if err != nil {
		return nil, err
	}
	if r.user == "" {
		return nil, refusef("the %s event names no user", opt.EventName)
	}
	// Who asked, first: of anyone without write access nothing more is
	// read, and nothing more is asked of GitHub.
	perm, err := allowed(ctx, api, where, r.user)
	if err != nil {
		return nil, err
	}
	if r.event == Comment {
		if err := r.readCommand(ev); err != nil {
			return nil, err
		}
	}
	if !repoRE.MatchString(r.repo) {
		return nil, refusef("bad repository: %s", r.repo)
	}
	if !prRE.MatchString(r.pr) {
		return nil, refusef("bad pull request number: %s", r.pr)
	}
	number, err := strconv.Atoi(r.pr)
	if err != nil {
		return nil, refusef("bad pull request number: %s", r.pr)
	}
	if _, err := builders.ParseExecutorKind(r.builder); err != nil {
		return nil, refusef("bad builder: %s (host or docker)", r.builder)
	}
	backports, err := splitBranches(r.backportTo)
	if err != nil {
		return nil, err
	}

	owner, name, _ := strings.Cut(r.repo, "/")
	pr, err := api.ResolvePR(ctx, owner, name, number)
	if err != nil {
		return nil, err
	}
	if !validBranch(pr.BaseRef) {
		return nil, refusef("unexpected base branch: %s", pr.BaseRef)
	}
	if !shaRE.MatchString(pr.HeadSHA) {
		return nil, refusef("unexpected head commit: %s", pr.HeadSHA)
	}
	bound, err := bindHead(ctx, api, r, pr)
	if err != nil {
		return nil, err
	}

	p := &Plan{
		Repo: r.repo, PR: number, Base: pr.BaseRef, HeadSHA: pr.HeadSHA, Builder: r.builder,
		Targets: []string{pr.BaseRef}, User: r.user, Permission: perm, Bound: bound,
		Bench: r.bench, Threads: r.threads, Stages: r.stages,
		headOwner: pr.HeadOwner, headName: pr.HeadName, headRef: pr.HeadRef,
	}
	for _, b := range backports {
		if !slices.Contains(p.Targets, b) {
			p.Targets = append(p.Targets, b)
			p.Backports = append(p.Backports, b)
		}
	}
	if r.mergeUp != "" {
		for _, b := range strings.Split(r.mergeUp, ",") {
			if slices.Contains(p.Targets, b) {
				return nil, refusef("merge-up=%s: %s is the base branch or a backport already: a branch the change is taken to one way", r.mergeUp, b)
			}
			p.Targets = append(p.Targets, b)
			p.MergeUp = append(p.MergeUp, b)
		}
	}
	if err := branchesExist(ctx, api, r, p.Targets[1:]); err != nil {
		return nil, err
	}
	if p.ToolRepo, p.ToolSHA, err = resolveTool(ctx, api, opt, where); err != nil {
		return nil, err
	}
	return p, nil
}

// branchesExist refuses a backport or merge-up branch that the PR's
// repository does not have, by its exact name: a word of a comment that
// is neither a command nor a branch is never a target.
func branchesExist(ctx context.Context, api API, r request, branches []string) error {
	owner, name, _ := strings.Cut(r.repo, "/")
	for _, b := range branches {
		_, ok, err := api.Branch(ctx, owner, name, b)
		switch {
		case err != nil:
			return err
		case !ok && slices.Contains(r.named, b):
			return refusef("%s is neither a command nor a branch of %s (branch names are case-sensitive); see /patchproof help", b, r.repo)
		case !ok:
			return refusef("%s is not a branch of %s (branch names are case-sensitive)", b, r.repo)
		}
	}
	return nil
}

// readRequest takes what the event asks for from it, with the workflow's
// defaults for what it does not say.
func readRequest(opt Options, ev *event, where string) (request, error) {
	r := request{event: opt.EventName, repo: where, backportTo: opt.BackportTo, builder: opt.Builder}
	switch opt.EventName {
	case Dispatch:
		r.user = ev.Sender.Login
		for _, in := range []struct {
			name     string
			to       *string
			required bool
		}{
			{"repository", &r.repo, true},
			{"pr", &r.pr, true},
			{"backport_to", &r.backportTo, false},
			{"builder", &r.builder, false},
		} {
			v, ok, err := ev.input(in.name)
			switch {
			case err != nil:
				return r, err
			case ok:
				*in.to = v
			case in.required:
				return r, refusef("the workflow_dispatch event has no input %s", in.name)
			}
		}
		if strings.TrimSpace(r.backportTo) == "" {
			r.backportTo = "none" // an empty input is no backport, not the default
		}
		// The options a comment may give, checked as a comment's are; an
		// empty input is the default.
		var opts Command
		for _, name := range []string{"bench", "threads", "stages", "merge-up"} {
			// Inputs are named as backport_to is: merge_up.
			v, ok, err := ev.input(strings.ReplaceAll(name, "-", "_"))
			if err != nil {
				return r, err
			}
			if v = strings.TrimSpace(commaRE.ReplaceAllString(v, ",")); ok && v != "" {
				if err := opts.setOption(name, v); err != nil {
					return r, err
				}
			}
		}
		r.bench, r.threads, r.stages, r.mergeUp = opts.Bench, opts.Threads, opts.Stages, opts.MergeUp
	case Comment:
		if ev.Action != "created" {
			return r, notATrigger("not a trigger: a comment %s, not created", ev.Action)
		}
		if !ev.isPR() {
			return r, notATrigger("not a trigger: a comment on issue #%d, which is not a pull request", ev.Issue.Number)
		}
		// Only whether it is a command at all: the rest is read once
		// the commenter may trigger (readCommand).
		if err := isCommand(ev.Comment.Body); err != nil {
			return r, err
		}
		r.pr, r.user, r.comment = strconv.Itoa(ev.Issue.Number), ev.Comment.User.Login, ev.Comment.Body
	case Label:
		if ev.Action != "labeled" || ev.Label.Name != LabelName {
			return r, notATrigger("not a trigger: pull_request_target %s %q, not labeled %q", ev.Action, ev.Label.Name, LabelName)
		}
		if ev.PullRequest.Head.SHA == "" {
			return r, refusef("the label event has no pull_request.head.sha")
		}
		r.pr, r.user, r.labelled = strconv.Itoa(ev.PullRequest.Number), ev.Sender.Login, ev.PullRequest.Head.SHA
	default:
		return r, notATrigger("unexpected event %s", cmp.Or(opt.EventName, `""`))
	}
	return r, nil
}

// readCommand reads the comment of a user who may trigger: what it asks
// for, or ErrHelp.
func (r *request) readCommand(ev *event) error {
	cmd, err := ParseCommand(r.comment)
	if err != nil {
		return err
	}
	if cmd.Help {
		return ErrHelp
	}
	r.bench, r.threads, r.stages, r.mergeUp = cmd.Bench, cmd.Threads, cmd.Stages, cmd.MergeUp
	switch {
	case cmd.None:
		r.backportTo = "none"
	case cmd.Backports != "":
		r.backportTo = cmd.Backports
		r.named = strings.Split(cmd.Backports, ",")
	}
	if cmd.MergeUp != "" {
		r.named = append(r.named, strings.Split(cmd.MergeUp, ",")...)
	}
	if ev.Comment.CreatedAt.IsZero() {
		return refusef("the comment has no created_at")
	}
	r.commit, r.commentAt = cmd.Commit, ev.Comment.CreatedAt
	return nil
}

// allowed returns user's permission on where if it is write or more, and
// refuses otherwise (NoAccess).
func allowed(ctx context.Context, api API, where, user string) (github.Permission, error) {
	owner, name, _ := strings.Cut(where, "/")
	perm, err := api.Permission(ctx, owner, name, user)
	var ae *github.AccessError
	switch {
	case errors.As(err, &ae):
		return perm, &RefusedError{NoAccess: true, Reason: fmt.Sprintf(
			"GitHub answers %d to reading %s's permission on %s, so whether they may trigger a run is unknown", ae.Status, user, where)}
	case err != nil:
		return perm, err
	case !perm.CanWrite():
		return perm, &RefusedError{NoAccess: true, Reason: fmt.Sprintf(
			"%s has permission %s on %s: triggering a run needs write, maintain or admin", user, perm, where)}
	}
	return perm, nil
}

// bindHead checks that the PR's head is the commit the trigger asked for,
// and says how it knows.
func bindHead(ctx context.Context, api API, r request, pr github.PR) (string, error) {
	name, head := fmt.Sprintf("%s#%s", r.repo, r.pr), pr.HeadSHA
	switch {
	case r.event == Label && r.labelled != head:
		return "", refusef("%s moved from %s to %s after it was labelled: label it again", name, r.labelled, head)
	case r.event == Label:
		return "labelled at this commit", nil
	case r.event == Dispatch:
		return "the head when dispatched", nil
	case r.commit != "" && !strings.HasPrefix(head, r.commit):
		return "", refusef("%s is at %s, not %s you named: look at the new commits, then comment again", name, head, r.commit)
	case len(r.commit) == 40:
		return "named in the comment", nil
	}

	branch := fmt.Sprintf("%s/%s branch %s", pr.HeadOwner, pr.HeadName, pr.HeadRef)
	var acts []github.Activity
	var unknown string
	if pr.HeadOwner == "" || pr.HeadName == "" {
		unknown = "the head repository is gone, so its pushes cannot be read"
	} else {
		var err error
		acts, err = api.RefActivity(ctx, pr.HeadOwner, pr.HeadName, "refs/heads/"+pr.HeadRef, activityPage)
		var ae *github.AccessError
		switch {
		case errors.As(err, &ae):
			unknown = fmt.Sprintf("GitHub answers %d to reading the pushes to %s", ae.Status, branch)
		case err != nil:
			return "", err
		case len(acts) == 0:
			unknown = "no push to " + branch + " is recorded"
		case acts[0].After != head:
			unknown = fmt.Sprintf("the newest push recorded for %s is %s, not the PR's head %s", branch, acts[0].After, head)
		}
	}
	at := stamp(r.commentAt)
	switch {
	case unknown != "" && r.commit != "":
		return "named in the comment (" + r.commit + ")", nil
	case unknown != "":
		return "", refusef("%s: whether %s moved after the comment at %s is unknown: name the commit: /patchproof [BRANCHES|none] SHA", unknown, name, at)
	case !acts[0].Time.Before(r.commentAt) && r.commit != "":
		return "", refusef("the head of %s, %s, was pushed at %s, after the comment at %s, and %s names only part of it: name all 40 digits", name, head, stamp(acts[0].Time), at, r.commit)
	case !acts[0].Time.Before(r.commentAt):
		return "", refusef("the head of %s, %s, was pushed at %s, after the comment at %s: comment again or name the commit: /patchproof SHA", name, head, stamp(acts[0].Time), at)
	}
	return "pushed at " + stamp(acts[0].Time) + ", before the comment", nil
}

// resolveTool returns the patchproof every job builds: ToolRef, else the
// workflow's own commit when it runs in the tool's repository, else
// DefaultToolRef, resolved to one commit for the whole run.
func resolveTool(ctx context.Context, api API, opt Options, where string) (string, string, error) {
	repo := opt.ToolRepository
	if !repoRE.MatchString(repo) {
		return "", "", fmt.Errorf("tool repository %q: want OWNER/NAME", repo)
	}
	ref := opt.ToolRef
	switch {
	case ref != "":
	case strings.EqualFold(where, repo) && opt.SHA != "":
		ref = opt.SHA
	default:
		ref = DefaultToolRef
	}
	if !validBranch(ref) {
		return "", "", fmt.Errorf("tool ref %q: not a branch, tag or commit", ref)
	}
	owner, name, _ := strings.Cut(repo, "/")
	sha, err := api.ResolveCommit(ctx, owner, name, ref)
	if err != nil {
		return "", "", err
	}
	if !shaRE.MatchString(sha) {
		return "", "", fmt.Errorf("resolve %s@%s: unexpected commit %q", repo, ref, sha)
	}
	return repo, sha, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Outputs is the plan as the plan job's outputs, key=value lines in the
// order and formats the workflow reads: targets a compact JSON array, the
// matrix {"include":[{"target":T,"slug":S}]} with S the target with "/"
// made "_" (artifact names cannot hold "/").
func (p *Plan) Outputs() string {
	type entry struct {
		Target string `json:"target"`
		Slug   string `json:"slug"`
	}
	matrix := struct {
		Include []entry `json:"include"`
	}{Include: []entry{}}
	for _, t := range p.Targets {
		matrix.Include = append(matrix.Include, entry{t, results.Slug(t)})
	}
	owner, name, _ := strings.Cut(p.Repo, "/")
	var b strings.Builder
	for _, kv := range [][2]string{
		{"repo", p.Repo},
		{"owner", owner},
		{"name", name},
		{"pr", strconv.Itoa(p.PR)},
		{"base", p.Base},
		{"head_sha", p.HeadSHA},
		{"backport_to", strings.Join(p.Backports, ",")},
		{"merge_up", strings.Join(p.MergeUp, ",")},
		{"builder", p.Builder},
		{"targets", compactJSON(p.Targets)},
		{"matrix", compactJSON(matrix)},
		{"tool_repo", p.ToolRepo},
		{"tool_sha", p.ToolSHA},
		{"bench", p.Bench},
		{"threads", p.Threads},
		{"stages", p.Stages},
		{"supersedes", strconv.FormatBool(len(p.Supersedes) > 0)},
	} {
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	return b.String()
}

// compactJSON is v as jq -c writes it: no spaces, no HTML escapes.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings and slices of them
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// Notice is one line for the run's log: what runs, who asked, and why this
// head.
func (p *Plan) Notice() string {
	var opts string
	for _, o := range [][2]string{{"bench", p.Bench}, {"threads", p.Threads}, {"stages", p.Stages}, {"merge-up", strings.Join(p.MergeUp, ",")}} {
		if o[1] != "" {
			opts += "; " + o[0] + " " + o[1]
		}
	}
	return fmt.Sprintf("%s#%d at %s (%s): targets %s; builder %s%s; patchproof %s@%s; asked by %s (%s)",
		p.Repo, p.PR, p.HeadSHA[:12], p.Bound, strings.Join(p.Targets, " "), p.Builder, opts,
		p.ToolRepo, p.ToolSHA[:12], p.User, p.Permission)
}
