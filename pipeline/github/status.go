package github

import (
	"context"
	"errors"
	"fmt"
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
}

// maxDescription is GitHub's limit on a status description, in characters.
const maxDescription = 140

// SetStatus sets status s on commit sha of owner/repo.
func (c *Client) SetStatus(ctx context.Context, owner, repo, sha string, s Status) error {
	if s.Context == "" {
		s.Context = DefaultContext
	}
	op := fmt.Sprintf("set status %q on %s/%s@%s", s.Context, owner, repo, sha)
	switch s.State {
	case StatePending, StateSuccess, StateFailure, StateError:
	default:
		return c.fail(op, fmt.Errorf("invalid state %q", s.State))
	}
	if sha == "" {
		return c.fail(op, errors.New("no commit"))
	}
	s.Description = truncate(s.Description, maxDescription)
	if c.scrub(s.Description+s.TargetURL) != s.Description+s.TargetURL {
		return c.fail(op, errors.New("status contains the token; refusing to post it"))
	}

	if c.dryRun != nil {
		if err := c.dryRunf("dry run: would set status %q on %s/%s@%s: %s %q %s\n",
			s.Context, owner, repo, sha, s.State, s.Description, s.TargetURL); err != nil {
			return c.fail(op, err)
		}
		return nil
	}
	if !c.authed {
		return c.fail(op, ErrNoToken)
	}
	st := &gh.RepoStatus{
		State:       gh.String(string(s.State)),
		Context:     gh.String(s.Context),
		Description: gh.String(s.Description),
	}
	if s.TargetURL != "" {
		st.TargetURL = gh.String(s.TargetURL)
	}
	if _, _, err := c.gh.Repositories.CreateStatus(ctx, owner, repo, sha, st); err != nil {
		return c.fail(op, err)
	}
	return nil
}

// truncate cuts s to at most n characters, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
