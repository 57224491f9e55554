package githubfake

import (
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Git repositories are served the way GitHub serves them, over git's smart
// HTTP protocol at /{owner}/{repo}.git and /{owner}/{repo}, by git's own
// `git http-backend` behind the fake's server (net/http/cgi): the fetches
// patchproof makes meet a real git server, not a copy of what go-git
// expects. Reads need no token.
//
// A PR whose Base.SHA or Head.SHA is "" in a served repository takes it
// from the repository on every request: refs/heads/{base ref} and
// refs/pull/{number}/head, as GitHub keeps them. Moving a ref in the
// repository moves the PR.
//
// Faults: FailNext and Inject match git requests by their path from the
// server's root (/{owner}/{repo}.git/info/refs ...), and TruncatePacks cuts
// the next pack answers in half.

// gitRequest matches the paths of the smart HTTP protocol: the ref
// advertisement and the two services.
var gitRequest = regexp.MustCompile(`^/([^/]+)/([^/]+?)(?:\.git)?/(info/refs|git-upload-pack|git-receive-pack)$`)

// ServeGit serves the bare repository at dir as owner/repo over git's smart
// HTTP protocol. It needs git (git http-backend) on PATH.
func (f *Fake) ServeGit(owner, repo, dir string) {
	abs, err := filepath.Abs(dir)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.fatalf("githubfake: ServeGit %s: %v", dir, err)
		return
	}
	if _, err := exec.LookPath("git"); err != nil {
		f.fatalf("githubfake: ServeGit: git http-backend is needed: %v", err)
		return
	}
	f.gits[repoOf(owner, repo)] = abs
}

// GitURL is the clone URL of owner/repo as the fake serves it.
func (f *Fake) GitURL(owner, repo string) string {
	return f.srv.URL + "/" + owner + "/" + repo + ".git"
}

// TruncatePacks cuts the next n answers of owner/repo's git-upload-pack
// (the pack a fetch receives) to half their length, as a connection that
// drops mid-transfer does.
func (f *Fake) TruncatePacks(owner, repo string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.truncate[repoOf(owner, repo)] += n
}

// serveGit answers a request of the smart HTTP protocol, or reports false
// when path is not one.
func (f *Fake) serveGit(w http.ResponseWriter, r *http.Request) bool {
	m := gitRequest.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	k := repoOf(m[1], m[2])
	f.mu.Lock()
	dir, ok := f.gits[k]
	if !ok {
		f.mu.Unlock()
		return false // GitHub's 404, from serve
	}
	flt := f.takeFault(r.Method, r.URL.Path)
	cut := false
	if flt == nil && m[3] == "git-upload-pack" && f.truncate[k] > 0 {
		f.truncate[k]--
		cut = true
	}
	f.mu.Unlock()

	rec := httptest.NewRecorder()
	switch {
	case flt != nil:
		for k, v := range flt.Header {
			rec.Header()[k] = v
		}
		http.Error(rec, flt.Message, flt.Status)
	case m[3] == "git-receive-pack" || r.URL.Query().Get("service") == "git-receive-pack":
		http.Error(rec, "the fake serves fetches only", http.StatusForbidden)
	default:
		// http-backend finds the repository as GIT_PROJECT_ROOT plus
		// PATH_INFO; the URL's own spelling (with or without .git, any
		// case) is GitHub's business, not the directory's.
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + filepath.Base(dir) + "/" + m[3]
		h := &cgi.Handler{
			Path: gitPath(),
			Args: []string{"http-backend"},
			Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"},
		}
		h.ServeHTTP(rec, r2)
	}
	body := rec.Body.Bytes()
	if cut {
		body = body[:len(body)/2]
	}
	f.mu.Lock()
	f.log = append(f.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: rec.Code, Bytes: int64(len(body))})
	f.mu.Unlock()
	for k, v := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(rec.Code)
	w.Write(body)
	return true
}

func gitPath() string {
	if p, err := exec.LookPath("git"); err == nil {
		return p
	}
	return "git" // ServeGit checked: PATH changed since
}

// gitRef is the commit ref names in the repository served as k, "" when
// none is served or the ref does not exist; f.mu is held.
func (f *Fake) gitRef(k repoKey, ref string) string {
	dir, ok := f.gits[k]
	if !ok {
		return ""
	}
	r, err := git.PlainOpen(dir)
	if err != nil {
		return ""
	}
	names := []string{ref}
	if !strings.HasPrefix(ref, "refs/") {
		names = []string{"refs/heads/" + ref, "refs/tags/" + ref}
	}
	for _, name := range names {
		rf, err := r.Reference(plumbing.ReferenceName(name), true)
		if err != nil {
			continue
		}
		if c, err := r.CommitObject(rf.Hash()); err == nil {
			return c.Hash.String()
		}
		if t, err := r.TagObject(rf.Hash()); err == nil {
			if c, err := t.Commit(); err == nil {
				return c.Hash.String()
			}
		}
	}
	if plumbing.IsHash(ref) {
		if _, err := r.CommitObject(plumbing.NewHash(ref)); err == nil {
			return ref
		}
	}
	return ""
}

// branchSHA is a PR side's commit: as given, else from the served
// repository; f.mu is held.
func (f *Fake) branchSHA(pr PR, b Branch, head bool) string {
	if b.SHA != "" {
		return b.SHA
	}
	k := repoOf(pr.Owner, pr.Repo)
	if head {
		return f.gitRef(k, fmt.Sprintf("refs/pull/%d/head", pr.Number))
	}
	return f.gitRef(k, "refs/heads/"+b.Ref)
}
