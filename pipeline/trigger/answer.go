package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/pipeline/github"
)

// Answer is what the plan says on the pull request about a trigger it
// will not run: why, in one line, and where the grammar is; or, for
// "/patchproof help" of someone who may trigger, the grammar.
type Answer struct {
	Repo string // OWNER/NAME
	PR   int
	Body string // Markdown; never begins with a command
	// Once, when set, is the kind of an answer posted at most once in
	// Quiet on a PR: the plan looks for one of its own replies of that
	// kind (github.Client.RecentReply) before it posts, and the body
	// ends with its marker (github.ReplyMarker). The answer to a user
	// without write access is one: anyone may comment on a public
	// repository's pull requests, as often as they like.
	Once string
}

// NoAccessReply is the kind of the answer to a user without write access
// (Answer.Once), and Quiet how long the plan stays silent after one on a
// PR.
const (
	NoAccessReply = "no-access"
	Quiet         = 24 * time.Hour
)

var loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$`)

// AnswerFor is the answer to the event of opt, which Decide refused with
// err (or answered with ErrHelp), and whether there is one to post: an
// event nobody meant as a trigger gets none, and neither does a dispatch,
// whose actor reads the run's log. A user without write access gets one
// short line, whatever they asked, to be posted once in Quiet on a PR
// (Once); anyone else's refused trigger one line and a pointer to
// "/patchproof help", whose answer is the grammar.
func AnswerFor(opt Options, err error) (Answer, bool) {
	var re *RefusedError
	help := errors.Is(err, ErrHelp)
	if !help && (!errors.As(err, &re) || re.NotATrigger) {
		return Answer{}, false
	}
	ev, perr := parseEvent(opt.Event)
	if perr != nil {
		return Answer{}, false
	}
	a := Answer{Repo: cmp.Or(opt.Repository, ev.Repository.FullName)}
	var user string
	switch opt.EventName {
	case Comment:
		a.PR, user = ev.Issue.Number, ev.Comment.User.Login
	case Label:
		a.PR, user = ev.PullRequest.Number, ev.Sender.Login
	default:
		return Answer{}, false
	}
	if !repoRE.MatchString(a.Repo) || a.PR <= 0 {
		return Answer{}, false
	}
	var b strings.Builder
	switch {
	case loginRE.MatchString(user):
		fmt.Fprintf(&b, "@%s ", user)
	case user != "":
		b.WriteString(markdown.Text(user) + ": ")
	}
	switch {
	case re != nil && re.NoAccess:
		// Quiet is a day: the answer says so.
		fmt.Fprintf(&b, "patchproof did not run: %s. It runs when someone with write access asks; for a day, requests without it get no reply on this pull request.\n\n%s\n",
			markdown.Text(re.Reason), github.ReplyMarker(NoAccessReply))
		a.Once = NoAccessReply
	case help:
		b.WriteString("patchproof validates this pull request when someone with write access asks, with a new comment whose first line is:\n\n")
		b.WriteString(markdown.CodeBlock("text", Grammar))
	default:
		fmt.Fprintf(&b, "patchproof did not run: %s. `/patchproof help` shows how to ask.\n", markdown.Text(re.Reason))
	}
	a.Body = b.String()
	return a, true
}

// StatusAPI is what acknowledging a plan asks GitHub; *github.Client is
// one.
type StatusAPI interface {
	RefActivity(ctx context.Context, owner, repo, ref string, n int) ([]github.Activity, error)
	ShownStatus(ctx context.Context, owner, repo, sha, context string) (github.Status, bool, error)
}

var _ StatusAPI = (*github.Client)(nil)

// Supersede finds the PR's earlier heads whose patchproof status is still
// pending ("queued" or running), whoever set it: the head moved while it waited, so the
// plan's jobs may cancel it (Plan.Supersedes). The earlier heads are those
// the head branch's recent pushes replaced; a head branch that cannot be
// read supersedes nothing, which only means the older run finishes.
func Supersede(ctx context.Context, api StatusAPI, p *Plan) error {
	if p.headOwner == "" || p.headName == "" {
		return nil
	}
	acts, err := api.RefActivity(ctx, p.headOwner, p.headName, "refs/heads/"+p.headRef, activityPage)
	var ae *github.AccessError
	switch {
	case errors.As(err, &ae):
		return nil
	case err != nil:
		return err
	}
	owner, name, _ := strings.Cut(p.Repo, "/")
	seen := map[string]bool{p.HeadSHA: true}
	for _, a := range acts {
		for _, sha := range []string{a.After, a.Before} {
			if !shaRE.MatchString(sha) || seen[sha] {
				continue
			}
			seen[sha] = true
			st, ok, err := api.ShownStatus(ctx, owner, name, sha, "")
			switch {
			case errors.As(err, &ae):
				continue
			case err != nil:
				return err
			case ok && st.State == github.StatePending:
				p.Supersedes = append(p.Supersedes, sha)
			}
		}
	}
	return nil
}

// QueuedStatus is the pending status the plan sets on the head: what will
// run, until the report replaces it with the verdict.
func (p *Plan) QueuedStatus() github.Status {
	d := "queued: " + strings.Join(p.Targets, ", ")
	for _, o := range [][2]string{{"bench", p.Bench}, {"threads", p.Threads}, {"stages", p.Stages}, {"merge-up", strings.Join(p.MergeUp, ",")}} {
		if o[1] != "" {
			d += "; " + o[0] + "=" + o[1]
		}
	}
	return github.Status{State: github.StatePending, Description: d}
}

// SupersededStatus is the status set on an earlier head whose run the
// plan cancels: not a verdict, and it says where the run went.
func (p *Plan) SupersededStatus() github.Status {
	return github.Status{State: github.StateError, Description: "superseded: the head moved to " + p.HeadSHA[:12]}
}
