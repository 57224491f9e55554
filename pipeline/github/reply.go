package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v60/github"
)

// Reply posts body as a new comment on the PR: an answer to one comment
// (a refused trigger, "/patchproof help"), which is not sticky and never
// edited. A body that begins with a slash command is refused, so that the
// bot never triggers itself.
func (c *Client) Reply(ctx context.Context, owner, repo string, number int, body string) (Outcome, error) {
	op := fmt.Sprintf("reply on %s/%s#%d", owner, repo, number)
	switch {
	case number <= 0:
		return Outcome{}, c.fail(op, errors.New("invalid PR number"))
	case strings.TrimSpace(body) == "":
		return Outcome{}, c.fail(op, errors.New("empty body"))
	case strings.HasPrefix(strings.TrimSpace(body), "/"):
		return Outcome{}, c.fail(op, errors.New("the body begins with a slash command"))
	case utf8.RuneCountInString(body) > maxBody:
		return Outcome{}, c.fail(op, fmt.Errorf("body is %d characters, GitHub takes at most %d", utf8.RuneCountInString(body), maxBody))
	case c.scrub(body) != body:
		return Outcome{}, c.fail(op, errors.New("body contains the token; refusing to post it"))
	}
	if c.dryRun != nil {
		if err := c.dryRunf("dry run: would reply on %s/%s#%d:\n%s\n", owner, repo, number, body); err != nil {
			return Outcome{}, c.fail(op, err)
		}
		return Outcome{Action: DryRun, Planned: Created}, nil
	}
	if !c.authed {
		return Outcome{}, c.fail(op, ErrNoToken)
	}
	ic, _, err := c.gh.Issues.CreateComment(ctx, owner, repo, number, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return Outcome{}, c.fail(op, err)
	}
	return Outcome{Action: Created, CommentID: ic.GetID(), URL: ic.GetHTMLURL()}, nil
}

// ReplyMarker is the hidden line that marks a reply of kind key (letters,
// digits and ._/:@+-), at its end, so that RecentReply finds it again.
func ReplyMarker(key string) string { return "<!-- patchproof:reply " + key + " -->" }

// RecentReply reports whether the PR has a reply of ours (the token's
// account's) marked with ReplyMarker(key) written at or after since, and
// its page: a reply that must not be repeated is not. Only the comments
// GitHub lists as updated since then are read (a reply is never edited).
func (c *Client) RecentReply(ctx context.Context, owner, repo string, number int, key string, since time.Time) (string, bool, error) {
	op := fmt.Sprintf("look for a recent %s reply on %s/%s#%d", key, owner, repo, number)
	if !keyRE.MatchString(key) {
		return "", false, c.fail(op, errors.New("key must be non-empty letters, digits and ._/:@+-"))
	}
	if !c.authed {
		return "", false, c.fail(op, ErrNoToken)
	}
	login, err := c.whoami(ctx)
	if err != nil {
		return "", false, c.fail(op, err)
	}
	marker := ReplyMarker(key)
	opts := &gh.IssueListCommentsOptions{Since: &since, ListOptions: gh.ListOptions{PerPage: commentsPerPage}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return "", false, c.readFail(op, err)
		}
		for _, ic := range page {
			if strings.EqualFold(ic.GetUser().GetLogin(), login) && !ic.GetCreatedAt().Before(since) &&
				strings.Contains(ic.GetBody(), marker) {
				return ic.GetHTMLURL(), true, nil
			}
		}
		if resp.NextPage == 0 {
			return "", false, nil
		}
		opts.Page = resp.NextPage
	}
}

// ShownStatus returns the newest status set on sha in context ("" for
// DefaultContext), by any account, and whether there is one: what a
// reviewer sees of patchproof on that commit. The plan and the report may
// post as different accounts (the Actions token, the App's), and the
// newest of either is what stands.
func (c *Client) ShownStatus(ctx context.Context, owner, repo, sha, context string) (Status, bool, error) {
	if context == "" {
		context = DefaultContext
	}
	op := fmt.Sprintf("read status %q of %s/%s@%s", context, owner, repo, sha)
	var got Status
	found := false
	err := c.eachOurStatus(ctx, owner, repo, sha, nil, context, func(o ourStatus) bool {
		got = Status{State: State(o.st.GetState()), Context: context, Description: o.st.GetDescription(),
			TargetURL: o.st.GetTargetURL(), Run: o.run}
		found = true
		return false
	})
	if err != nil {
		return Status{}, false, c.readFail(op, err)
	}
	return got, found, nil
}
