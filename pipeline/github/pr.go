package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v60/github"
)

// PR is what patchproof needs to know about a pull request to validate it:
// the two commits and where to fetch each from.
type PR struct {
	Owner, Repo string // the base repository, as asked for
	Number      int
	Title       string
	URL         string // the PR's page

	BaseRef      string // the branch it targets, e.g. "master" or "PHP-8.4"
	BaseSHA      string
	BaseCloneURL string

	HeadRef string
	HeadSHA string
	// HeadCloneURL is the fork (or the base repository) the head branch
	// lives in; "" when that repository has been deleted, in which case
	// the head commit can still be fetched from the base repository as
	// refs/pull/N/head.
	HeadCloneURL string
	// HeadOwner and HeadName name that repository, where the head
	// branch's pushes are recorded; "" when it has been deleted.
	HeadOwner, HeadName string
}

// NoSuchPRError is returned by ResolvePR when GitHub answers 404: the pull
// request does not exist, or the token cannot see its repository.
type NoSuchPRError struct {
	Owner, Repo string
	Number      int
	Err         error // the *github.ErrorResponse
}

func (e *NoSuchPRError) Error() string {
	return fmt.Sprintf("no such pull request %s/%s#%d (or no access to it)", e.Owner, e.Repo, e.Number)
}

func (e *NoSuchPRError) Unwrap() error { return e.Err }

// ResolvePR looks up pull request number of owner/repo.
func (c *Client) ResolvePR(ctx context.Context, owner, repo string, number int) (PR, error) {
	op := fmt.Sprintf("resolve pull request %s/%s#%d", owner, repo, number)
	if number <= 0 {
		return PR{}, c.fail(op, errors.New("invalid number"))
	}
	p, _, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
			return PR{}, &scrubbedError{err: &NoSuchPRError{Owner: owner, Repo: repo, Number: number, Err: err}, scrub: c.scrub}
		}
		return PR{}, c.fail(op, err)
	}
	base, head := p.GetBase(), p.GetHead()
	return PR{
		Owner:        owner,
		Repo:         repo,
		Number:       number,
		Title:        p.GetTitle(),
		URL:          p.GetHTMLURL(),
		BaseRef:      base.GetRef(),
		BaseSHA:      base.GetSHA(),
		BaseCloneURL: base.GetRepo().GetCloneURL(),
		HeadRef:      head.GetRef(),
		HeadSHA:      head.GetSHA(),
		HeadCloneURL: head.GetRepo().GetCloneURL(),
		HeadOwner:    head.GetRepo().GetOwner().GetLogin(),
		HeadName:     head.GetRepo().GetName(),
	}, nil
}
