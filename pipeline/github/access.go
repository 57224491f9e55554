package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// AccessError is GitHub's 403 or 404 to a read: the resource does not
// exist, or the token may not see it (GitHub answers 404 for both where it
// hides private repositories). Rate limits are not AccessErrors.
type AccessError struct {
	Status int
	Err    error // the *github.ErrorResponse
}

func (e *AccessError) Error() string { return e.Err.Error() }
func (e *AccessError) Unwrap() error { return e.Err }

// readFail wraps err as c.fail does, making a plain 403 or 404 an
// *AccessError so that callers can tell "no access" from "GitHub is down".
func (c *Client) readFail(op string, err error) error {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil &&
		(er.Response.StatusCode == http.StatusForbidden || er.Response.StatusCode == http.StatusNotFound) {
		err = &AccessError{Status: er.Response.StatusCode, Err: err}
	}
	return c.fail(op, err)
}

// Permission is a user's access to a repository as GitHub reports it.
type Permission struct {
	// Level is the legacy base level: admin, write, read or none. GitHub
	// reports the maintain role as write and triage as read.
	Level string
	// Role is the role itself: admin, maintain, write, triage, read, or
	// the name of an organisation's custom role.
	Role string
}

// CanWrite reports whether p may push: Level admin or write, which covers
// maintain and custom roles built on write, or a Role that implies it in
// case Level is ever reported as the role.
func (p Permission) CanWrite() bool {
	switch {
	case p.Level == "admin", p.Level == "write":
		return true
	case p.Role == "admin", p.Role == "maintain", p.Role == "write":
		return true
	}
	return false
}

// String is "write (role maintain)", or the level alone when the role says
// nothing more.
func (p Permission) String() string {
	if p.Role == "" || p.Role == p.Level {
		return p.Level
	}
	return p.Level + " (role " + p.Role + ")"
}

// Permission returns user's permission on owner/repo. go-github v60 has
// no role_name, which is the only field that names maintain and custom
// roles, so the request is made here.
func (c *Client) Permission(ctx context.Context, owner, repo, user string) (Permission, error) {
	op := fmt.Sprintf("read %s's permission on %s/%s", user, owner, repo)
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/collaborators/%s/permission",
		url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(user)), nil)
	if err != nil {
		return Permission{}, c.fail(op, err)
	}
	var out struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	if _, err := c.gh.Do(ctx, req, &out); err != nil {
		return Permission{}, c.readFail(op, err)
	}
	if out.Permission == "" {
		return Permission{}, c.fail(op, errors.New("the answer has no permission"))
	}
	return Permission{Level: out.Permission, Role: out.RoleName}, nil
}

// Activity is one change of a ref, from the repository's activity log.
type Activity struct {
	// Type is push, force_push, branch_creation, branch_deletion, pr_merge
	// or merge_queue_merge.
	Type          string
	Ref           string // refs/heads/BRANCH
	Before, After string // the ref's commit before and after
	Actor         string
	Time          time.Time
}

// MaxActivities is the most RefActivity returns: one page.
const MaxActivities = 100

// RefActivity returns the newest n (at most MaxActivities) changes of ref
// in owner/repo, newest first, of every type: a force push is an activity
// type of its own, so filtering on push would miss one.
func (c *Client) RefActivity(ctx context.Context, owner, repo, ref string, n int) ([]Activity, error) {
	op := fmt.Sprintf("list the activity of %s in %s/%s", ref, owner, repo)
	n = min(max(n, 1), MaxActivities)
	q := url.Values{"ref": {ref}, "direction": {"desc"}, "per_page": {fmt.Sprint(n)}}
	// go-github v60 has no call for this endpoint.
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/activity?%s",
		url.PathEscape(owner), url.PathEscape(repo), q.Encode()), nil)
	if err != nil {
		return nil, c.fail(op, err)
	}
	var out []struct {
		ActivityType string    `json:"activity_type"`
		Ref          string    `json:"ref"`
		Before       string    `json:"before"`
		After        string    `json:"after"`
		Timestamp    time.Time `json:"timestamp"`
		Actor        *struct {
			Login string `json:"login"`
		} `json:"actor"`
	}
	if _, err := c.gh.Do(ctx, req, &out); err != nil {
		return nil, c.readFail(op, err)
	}
	acts := make([]Activity, 0, len(out))
	for _, a := range out {
		act := Activity{Type: a.ActivityType, Ref: a.Ref, Before: a.Before, After: a.After, Time: a.Timestamp}
		if a.Actor != nil {
			act.Actor = a.Actor.Login
		}
		acts = append(acts, act)
	}
	return acts, nil
}

// ResolveCommit returns the commit ref (a branch, a tag or a SHA) names in
// owner/repo. The ref goes into the path as it is, slashes included, as
// GitHub expects a branch like release/1.0.
func (c *Client) ResolveCommit(ctx context.Context, owner, repo, ref string) (string, error) {
	op := fmt.Sprintf("resolve %s/%s@%s", owner, repo, ref)
	commit, _, err := c.gh.Repositories.GetCommit(ctx, owner, repo, ref, nil)
	if err != nil {
		return "", c.readFail(op, err)
	}
	if commit.GetSHA() == "" {
		return "", c.fail(op, errors.New("the answer has no sha"))
	}
	return commit.GetSHA(), nil
}

// Branch returns the commit branch is at in owner/repo, and whether
// owner/repo has a branch of exactly that name: GitHub answers a renamed
// branch's old name with the new one (its redirect is followed), and a
// name that differs in case is another branch, or none.
func (c *Client) Branch(ctx context.Context, owner, repo, branch string) (sha string, ok bool, err error) {
	op := fmt.Sprintf("read branch %s of %s/%s", branch, owner, repo)
	// The name goes into the path as it is, slashes included, as
	// ResolveCommit's ref does; each part escaped.
	parts := strings.Split(branch, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/branches/%s",
		url.PathEscape(owner), url.PathEscape(repo), strings.Join(parts, "/")), nil)
	if err != nil {
		return "", false, c.fail(op, err)
	}
	var out struct {
		Name   string `json:"name"`
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	_, err = c.gh.Do(ctx, req, &out)
	var er *gh.ErrorResponse
	switch {
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound:
		return "", false, nil
	case err != nil:
		return "", false, c.readFail(op, err)
	case out.Name != branch:
		return "", false, nil
	}
	return out.Commit.SHA, true, nil
}
