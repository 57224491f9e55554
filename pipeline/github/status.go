package github

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v60/github"
)

// State is a commit status state.
type State string

const (
	StatePending State = "pending"
	StateSuccess State = "success"
	StateFailure State = "failure" // a check failed
	StateError   State = "error"   // the checks could not run
)

// Status is a commit status.
type Status struct {
	State       State
	Context     string // "" means DefaultContext
	Description string // cut to 140 characters, GitHub's limit
	TargetURL   string // e.g. the workflow run
	// Run orders the runs that set a status in Context on a commit, as
	// Comment.Run orders comments: it ends the description, "(run 200)",
	// and a status is not set over one of ours that names a newer run.
	// A run id stands over a time and over no stamp (""): a status that
	// names no run id (a report run outside Actions) is never set over
	// one of ours that names one.
	Run string
}

// StatusOutcome reports what SetStatus did.
type StatusOutcome struct {
	// Action is Created, SkippedOlder (a newer run's status stands, or
	// was put back over this one: a run that set it at the same time), or
	// DryRun.
	Action Action
	// Planned is what a real run would have done, for a DryRun; "" when a
	// dry run had no token, or no Run, to look with.
	Planned Action
	// Newer is the newer run whose status stands, when SkippedOlder.
	Newer string
	// Description is the description as set (or that would be): cut to
	// GitHub's limit, with the run's stamp.
	Description string
}

// maxDescription is GitHub's limit on a status description, in characters.
const maxDescription = 140

// runSuffix is how a status description carries its run: at its end, where
// a reviewer reads it too.
func runSuffix(run string) string { return " (run " + run + ")" }

var statusRunRE = regexp.MustCompile(` ?\(run (\S+)\)$`)

// statusRun reads the run from the end of a status description; "" when
// there is none.
func statusRun(description string) string {
	m := statusRunRE.FindStringSubmatch(description)
	if m == nil || !validRun(m[1]) {
		return ""
	}
	return m[1]
}

// stamped is description cut to GitHub's limit with the run's stamp kept
// whole at its end.
func stamped(description, run string) string {
	if run == "" {
		return truncate(description, maxDescription)
	}
	suffix := runSuffix(run)
	if description == "" {
		suffix = strings.TrimPrefix(suffix, " ")
	}
	return truncate(description, maxDescription-utf8.RuneCountInString(suffix)) + suffix
}

// SetStatus sets status s on commit sha of owner/repo, unless our newest
// status in its context there (ours or a peer's: the plan's pending one)
// stands over s.Run (standsOver): then it leaves that one (SkippedOlder).
// Run ids (or times) are told apart as UpsertComment tells them, so that
// an older run's report, posted late, never turns a newer run's failure
// into a success; and a run id stands over a time or no stamp, so that a
// report from a laptop never does either.
func (c *Client) SetStatus(ctx context.Context, owner, repo, sha string, s Status) (StatusOutcome, error) {
	if s.Context == "" {
		s.Context = DefaultContext
	}
	op := fmt.Sprintf("set status %q on %s/%s@%s", s.Context, owner, repo, sha)
	switch s.State {
	case StatePending, StateSuccess, StateFailure, StateError:
	default:
		return StatusOutcome{}, c.fail(op, fmt.Errorf("invalid state %q", s.State))
	}
	switch {
	case sha == "":
		return StatusOutcome{}, c.fail(op, errors.New("no commit"))
	case s.Run != "" && !validRun(s.Run):
		return StatusOutcome{}, c.fail(op, fmt.Errorf("run %q: want a decimal run id or an RFC 3339 time", s.Run))
	}
	s.Description = stamped(s.Description, s.Run)
	if c.scrub(s.Description+s.TargetURL) != s.Description+s.TargetURL {
		return StatusOutcome{}, c.fail(op, errors.New("status contains the token; refusing to post it"))
	}
	out := StatusOutcome{Action: Created, Description: s.Description}

	var shown ourStatus // our newest status in the context; ID 0 if none
	if c.authed {
		login, err := c.whoami(ctx)
		if err != nil {
			return StatusOutcome{}, c.fail(op, err)
		}
		err = c.eachOurStatus(ctx, owner, repo, sha, c.runLogins(login), s.Context, func(o ourStatus) bool {
			shown = o
			return false
		})
		if err != nil {
			return StatusOutcome{}, c.fail(op, err)
		}
		if standsOver(shown.run, s.Run) {
			out.Action, out.Newer = SkippedOlder, shown.run
		}
	}

	if c.dryRun != nil {
		planned := out.Action
		if !c.authed {
			planned = "" // nothing was looked at
		}
		var err error
		if planned == SkippedOlder {
			err = c.dryRunf("dry run: status %q on %s/%s@%s shows a newer run (%s); would leave it: %s %q %s\n",
				s.Context, owner, repo, sha, out.Newer, s.State, s.Description, s.TargetURL)
		} else {
			err = c.dryRunf("dry run: would set status %q on %s/%s@%s: %s %q %s\n",
				s.Context, owner, repo, sha, s.State, s.Description, s.TargetURL)
		}
		if err != nil {
			return StatusOutcome{}, c.fail(op, err)
		}
		return StatusOutcome{Action: DryRun, Planned: planned, Newer: out.Newer, Description: s.Description}, nil
	}
	if !c.authed {
		return StatusOutcome{}, c.fail(op, ErrNoToken)
	}
	if out.Action == SkippedOlder {
		return out, nil
	}

	created, err := c.createStatus(ctx, owner, repo, sha, s.Context, string(s.State), s.Description, s.TargetURL)
	if err != nil {
		return StatusOutcome{}, c.fail(op, err)
	}
	// A newer run may have set its status since we looked, and ours now
	// hides it: look again, and put the newest run's back on top.
	newer, err := c.overtaken(ctx, owner, repo, sha, s, created, shown.id)
	if err != nil {
		return StatusOutcome{}, c.fail(op, err)
	}
	if newer.id != 0 {
		st := newer.st
		if _, err := c.createStatus(ctx, owner, repo, sha, s.Context, st.GetState(), st.GetDescription(), st.GetTargetURL()); err != nil {
			return StatusOutcome{}, c.fail(op, fmt.Errorf("put back run %s's status: %w", newer.run, err))
		}
		out.Action, out.Newer = SkippedOlder, newer.run
	}
	return out, nil
}

func (c *Client) createStatus(ctx context.Context, owner, repo, sha, context, state, description, targetURL string) (int64, error) {
	st := &gh.RepoStatus{
		State:       gh.String(state),
		Context:     gh.String(context),
		Description: gh.String(description),
	}
	if targetURL != "" {
		st.TargetURL = gh.String(targetURL)
	}
	got, _, err := c.gh.Repositories.CreateStatus(ctx, owner, repo, sha, st)
	if err != nil {
		return 0, err
	}
	return got.GetID(), nil
}

// overtaken looks, after our status (ID created) was set, at ours in the
// context set since the one we saw before (ID seen; 0: none): it returns
// the one of the newest run, when that run is newer than ours and nothing
// of ours came after ours (a later one made its own check). ID 0: none.
func (c *Client) overtaken(ctx context.Context, owner, repo, sha string, s Status, created, seen int64) (ourStatus, error) {
	login, err := c.whoami(ctx)
	if err != nil {
		return ourStatus{}, err
	}
	var newest ourStatus
	reached, after := false, false
	err = c.eachOurStatus(ctx, owner, repo, sha, c.runLogins(login), s.Context, func(o ourStatus) bool {
		switch {
		case o.id == seen && seen != 0:
			return false
		case o.id == created:
			reached = true
		case !reached:
			after = true
			return false
		case standsOver(o.run, s.Run) && (newest.id == 0 || standsOver(o.run, newest.run)):
			newest = o
		}
		return true
	})
	if err != nil || after || !reached {
		// Ours not listed (yet): what it hides, GitHub does not show yet
		// either.
		return ourStatus{}, err
	}
	return newest, nil
}

// standsOver reports whether a status of run a stands over one of run b:
// a is a newer run (newerRun), or a names a run id and b does not (a time,
// as a report outside Actions is stamped, or no stamp), since a run
// without an id is never known to be newer than a workflow run.
func standsOver(a, b string) bool {
	ka, _, _ := runKind(a)
	kb, _, _ := runKind(b)
	return newerRun(a, b) || (ka == 1 && kb != 1)
}

// ourStatus is one of our statuses in the context being set.
type ourStatus struct {
	id  int64
	run string // "" when its description names none
	st  *gh.RepoStatus
}

// runLogins are the accounts whose statuses are runs of ours: the token's
// own (login) and the peers'.
func (c *Client) runLogins(login string) []string {
	return append([]string{login}, c.peers...)
}

// eachOurStatus calls visit with the statuses of sha that one of logins
// (nil for anyone) set in the context, newest first, as GitHub lists them,
// until visit returns false or there are no more.
func (c *Client) eachOurStatus(ctx context.Context, owner, repo, sha string, logins []string, context string, visit func(ourStatus) bool) error {
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.gh.Repositories.ListStatuses(ctx, owner, repo, sha, opts)
		if err != nil {
			return fmt.Errorf("list statuses: %w", err)
		}
		for _, st := range page {
			creator := st.GetCreator().GetLogin()
			if st.GetContext() != context || (logins != nil && !slices.ContainsFunc(logins, func(l string) bool { return strings.EqualFold(l, creator) })) {
				continue
			}
			if !visit(ourStatus{id: st.GetID(), run: statusRun(st.GetDescription()), st: st}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// truncate cuts s to at most n characters, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
