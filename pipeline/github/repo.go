package github

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Repo is a repository on a GitHub host: the identity that links, posts and
// PR lookups need. It is parsed once, where a URL enters patchproof, and
// passed on as it is.
type Repo struct {
	Host  string // "github.com", a GitHub Enterprise host; "" when only OWNER/REPO was given
	Owner string
	Name  string
}

// PHPSrc is the repository --pr refers to by default.
var PHPSrc = Repo{Host: "github.com", Owner: "php", Name: "php-src"}

// ParseRepo reads a repository from https://HOST/OWNER/REPO[.git],
// ssh://git@HOST/OWNER/REPO[.git] or git@HOST:OWNER/REPO[.git]. ok is false
// for anything else: a local path, a file:// URL, the demo.
func ParseRepo(repo string) (r Repo, ok bool) {
	var path string
	switch u, err := url.Parse(repo); {
	case err == nil && (u.Scheme == "https" || u.Scheme == "http" || u.Scheme == "ssh") && u.Host != "":
		r.Host, path = u.Hostname(), u.Path
	case strings.Contains(repo, "@") && strings.Contains(repo, ":") && !strings.Contains(repo, "://"):
		_, rest, _ := strings.Cut(repo, "@")
		r.Host, path, _ = strings.Cut(rest, ":")
	default:
		return Repo{}, false
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimSuffix(path, "/"), ".git"), "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || r.Host == "" {
		return Repo{}, false
	}
	r.Owner, r.Name = parts[0], parts[1]
	return r, true
}

// IsZero reports whether r names no repository.
func (r Repo) IsZero() bool { return r == Repo{} }

// String is OWNER/REPO.
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// Web is the repository's page, https://HOST/OWNER/REPO, or "" when the
// host is not known.
func (r Repo) Web() string {
	if r.Host == "" || r.Owner == "" || r.Name == "" {
		return ""
	}
	return "https://" + r.Host + "/" + r.Owner + "/" + r.Name
}

// PullRequest names a pull request: its repository and number. What GitHub
// says about it is a [PR], from [Client.ResolvePR].
type PullRequest struct {
	Repo   Repo
	Number int
}

// String is OWNER/REPO#N.
func (p PullRequest) String() string { return fmt.Sprintf("%s#%d", p.Repo, p.Number) }

// Web is the pull request's page, or "" when the host is not known.
func (p PullRequest) Web() string {
	if w := p.Repo.Web(); w != "" {
		return w + "/pull/" + strconv.Itoa(p.Number)
	}
	return ""
}

// HeadRef is the ref GitHub keeps the pull request's head at.
func (p PullRequest) HeadRef() string { return HeadRef(p.Number) }

// HeadRef is the ref GitHub keeps pull request n's head at, pull/N/head: a
// mirror of the repository has it too.
func HeadRef(n int) string { return "pull/" + strconv.Itoa(n) + "/head" }

var errPullRequest = errors.New("want OWNER/REPO#N or a pull request URL")

// ParsePullRequest reads OWNER/REPO#N or https://HOST/OWNER/REPO/pull/N.
func ParsePullRequest(s string) (PullRequest, error) {
	var repo, num, host string
	if i := strings.LastIndex(s, "/pull/"); i >= 0 {
		u, err := url.Parse(s[:i])
		if err != nil || u.Host == "" {
			return PullRequest{}, errPullRequest
		}
		repo, num, host = strings.Trim(u.Path, "/"), s[i+len("/pull/"):], u.Hostname()
	} else {
		var ok bool
		if repo, num, ok = strings.Cut(s, "#"); !ok {
			return PullRequest{}, errPullRequest
		}
	}
	owner, name, ok := strings.Cut(repo, "/")
	n, err := strconv.Atoi(strings.TrimSuffix(num, "/"))
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || err != nil || n <= 0 {
		return PullRequest{}, errPullRequest
	}
	return PullRequest{Repo: Repo{Host: host, Owner: owner, Name: name}, Number: n}, nil
}
