// Package githubfake is an in-process GitHub REST API for tests: the
// endpoints patchproof uses, served by httptest the way GitHub Enterprise
// Server serves them (under /api/v3/), with GitHub's authentication,
// pagination, authorship rules, validation and error shapes, plus failure
// injection — server errors, primary and secondary rate limits, latency, and
// a barrier that makes concurrent requests interleave on demand.
//
// Endpoints:
//
//	GET    /user
//	GET    /repos/{owner}/{repo}/pulls/{number}
//	GET    /repos/{owner}/{repo}/issues/{number}/comments   (since, page, per_page; Link header)
//	POST   /repos/{owner}/{repo}/issues/{number}/comments
//	PATCH  /repos/{owner}/{repo}/issues/comments/{id}
//	DELETE /repos/{owner}/{repo}/issues/comments/{id}
//	POST   /repos/{owner}/{repo}/statuses/{sha}
//	GET    /repos/{owner}/{repo}/commits/{ref}
//	GET    /repos/{owner}/{repo}/commits/{sha}/statuses   (newest first; page, per_page; Link header)
//	GET    /repos/{owner}/{repo}/branches/{branch}
//	GET    /repos/{owner}/{repo}/collaborators/{username}/permission
//	GET    /repos/{owner}/{repo}/activity   (ref, activity_type, direction, per_page; one page)
//	GET    /{owner}/{repo}[.git]/info/refs, POST .../git-upload-pack   (ServeGit)
//
// Tokens are registered with AddUser (GET /user answers) or AddAppToken (GET
// /user is refused with 403, as for GitHub App and Actions tokens). A request
// without a token may read; one with an unknown token gets 401 Bad
// credentials. Comments may be edited or deleted only by their author. Owner
// and repository names are case-insensitive, as on GitHub. Comment IDs are
// shared by all repositories and only ever increase.
//
// A repository exists for the fake when a PR's base or head is in it, or
// when one of the methods below names it; the other endpoints answer 404
// for any other.
//
// Commits: a ref set with AddRef, a branch, tag or full SHA of a served
// repository (ServeGit), a full SHA that is a PR's base or head or an
// AddRef's commit, or an unambiguous prefix of 7 or more digits of one
// resolves; anything else is 422 "No commit found for SHA", as on GitHub.
//
// Branches: one set with AddBranch, a PR's base or head branch in its
// repository, or a refs/heads/ branch of a served repository is answered
// by name, exactly (a name in another case is another branch); anything
// else is 404 "Branch not found".
//
// Permissions are set per user and repository with SetPermission, by role
// (admin, maintain, write, triage, read, none); the answer carries the role
// as role_name and, as "permission", the legacy level GitHub maps it to
// (maintain is write, triage is read). A user given no role reads a public
// repository: read. GitHub answers this endpoint only to a token: anonymous
// callers get 401, and a personal token whose user has less than write on
// the repository gets 403 "Must have push access to view collaborator
// permission."; installation tokens (AddAppToken) may read it.
//
// Activities (pushes, force pushes, branch creations ...) are recorded per
// repository with AddActivity and listed newest first (direction=asc for
// oldest first), filtered by ref (refs/heads/B or B) and activity_type,
// per_page at most 100 (default 30). There is no second page: the fake
// serves no cursors.
//
// Git repositories are served over git's smart HTTP protocol with ServeGit
// (git.go): a fetch of a PR's refs/pull/N/head meets git's own server.
package githubfake

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// APIPrefix is where the fake serves the API, as GitHub Enterprise does.
const APIPrefix = "/api/v3"

// PR is a pull request to serve.
type PR struct {
	Owner, Repo string
	Number      int
	Title       string
	Base, Head  Branch
}

// Branch is one side of a PR.
type Branch struct {
	Owner, Repo string // "" means the PR's own repository
	Ref, SHA    string
	CloneURL    string // "" means {fake}/{owner}/{repo}.git
	Deleted     bool   // the repository is gone: "repo": null
}

// Comment is an issue comment as the fake holds it.
type Comment struct {
	ID               int64
	Author           string
	Body             string
	Created, Updated time.Time
}

// Status is a commit status as the fake holds it.
type Status struct {
	State, Context, Description, TargetURL string
	Creator                                string
}

// storedStatus is a Status with what GitHub gives it when it is set.
type storedStatus struct {
	Status
	id      int64
	created time.Time
}

// Request is one request the fake answered.
type Request struct {
	Method string
	Path   string // below APIPrefix, e.g. /repos/o/r/pulls/1; a git request's from the root, /o/r.git/info/refs
	Query  string
	Status int
	Bytes  int64 // of the answer's body, for git requests
}

// Fault is a canned error response.
type Fault struct {
	Status  int
	Header  http.Header
	Message string
	DocURL  string // documentation_url
}

// PrimaryRateLimit is GitHub's answer once the hourly quota is spent:
// status (403 or 429) with X-RateLimit-Remaining: 0 and the reset time.
func PrimaryRateLimit(status int, reset time.Time) Fault {
	return Fault{
		Status: status,
		Header: http.Header{
			"X-Ratelimit-Limit":     {"5000"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Used":      {"5000"},
			"X-Ratelimit-Reset":     {strconv.FormatInt(reset.Unix(), 10)},
		},
		Message: "API rate limit exceeded for user ID 1.",
		DocURL:  "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits",
	}
}

// SecondaryRateLimit is GitHub's answer to too many requests too fast:
// status (403 or 429) with Retry-After.
func SecondaryRateLimit(status int, retryAfter time.Duration) Fault {
	return Fault{
		Status:  status,
		Header:  http.Header{"Retry-After": {strconv.Itoa(int(retryAfter / time.Second))}},
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
		DocURL:  "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
	}
}

// Fake is a running fake GitHub API.
type Fake struct {
	t   testing.TB
	srv *httptest.Server
	mux *http.ServeMux

	mu       sync.Mutex
	accounts map[string]account // by token
	prs      map[issueKey]PR
	comments map[issueKey][]*Comment // by ID
	where    map[int64]issueKey
	statuses map[statusKey][]storedStatus  // oldest first
	refs     map[repoKey]map[string]string // ref -> sha
	branches map[repoKey]map[string]string // branch -> sha
	roles    map[repoKey]map[string]string // lower-case login -> role
	activity map[repoKey][]Activity
	gits     map[repoKey]string // served git repositories
	truncate map[repoKey]int    // pack answers left to cut
	nextID   int64
	// statusID numbers statuses apart from comments, as GitHub does:
	// setting one does not move the IDs comments get.
	statusID int64
	faults   []*fault
	barriers []*barrier
	latency  time.Duration
	log      []Request
	now      func() time.Time
}

type account struct {
	login string
	app   bool
}

type issueKey struct {
	owner, repo string // lower case
	number      int
}

type statusKey struct{ owner, repo, sha string }

type repoKey struct{ owner, repo string } // lower case

func repoOf(owner, repo string) repoKey {
	return repoKey{strings.ToLower(owner), strings.ToLower(repo)}
}

type match struct{ method, prefix string }

func (m match) matches(method, path string) bool {
	return (m.method == "" || m.method == method) && strings.HasPrefix(path, m.prefix)
}

type fault struct {
	match
	left int
	f    Fault
}

type barrier struct {
	match
	n                 int
	arrived, answered int
	all, done         chan struct{}
}

// New starts a fake that is closed when the test ends.
func New(t testing.TB) *Fake {
	f := newFake()
	f.t = t
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// Serve starts a fake outside a test, on l (cmd/githubfake uses it to let a
// whole patchproof run post offline). Close stops it.
func Serve(l net.Listener) *Fake {
	f := newFake()
	f.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(f.serve)}}
	f.srv.Start()
	return f
}

// Close stops a fake made by Serve.
func (f *Fake) Close() { f.srv.Close() }

func newFake() *Fake {
	f := &Fake{
		accounts: map[string]account{},
		prs:      map[issueKey]PR{},
		comments: map[issueKey][]*Comment{},
		where:    map[int64]issueKey{},
		statuses: map[statusKey][]storedStatus{},
		refs:     map[repoKey]map[string]string{},
		branches: map[repoKey]map[string]string{},
		roles:    map[repoKey]map[string]string{},
		activity: map[repoKey][]Activity{},
		gits:     map[repoKey]string{},
		truncate: map[repoKey]int{},
		nextID:   1000,
		now:      time.Now,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /user", f.getUser)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}", f.getPR)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", f.listComments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", f.createComment)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", f.editComment)
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/issues/comments/{id}", f.deleteComment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/statuses/{sha}", f.createStatus)
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref...}", f.getCommit)
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/statuses", f.listStatuses)
	mux.HandleFunc("GET /repos/{owner}/{repo}/branches/{branch...}", f.getBranch)
	mux.HandleFunc("GET /repos/{owner}/{repo}/collaborators/{username}/permission", f.getPermission)
	mux.HandleFunc("GET /repos/{owner}/{repo}/activity", f.listActivity)
	f.mux = mux
	return f
}

// URL is the API root, for the client's base URL.
func (f *Fake) URL() string { return f.srv.URL + APIPrefix + "/" }

// AddUser registers a personal token of login.
func (f *Fake) AddUser(login, token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts[token] = account{login: login}
}

// AddAppToken registers an installation token that acts as login (such as
// "github-actions[bot]"); GET /user refuses it.
func (f *Fake) AddAppToken(login, token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts[token] = account{login: login, app: true}
}

// AddPR serves pr.
func (f *Fake) AddPR(pr PR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prs[key(pr.Owner, pr.Repo, pr.Number)] = pr
}

// AddRef makes ref (a branch or tag name) of owner/repo resolve to sha.
func (f *Fake) AddRef(owner, repo, ref, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := repoOf(owner, repo)
	if f.refs[k] == nil {
		f.refs[k] = map[string]string{}
	}
	f.refs[k][ref] = sha
}

// AddBranch makes owner/repo have the branch name at sha (which AddRef
// makes resolve too).
func (f *Fake) AddBranch(owner, repo, name, sha string) {
	f.AddRef(owner, repo, name, sha)
	f.mu.Lock()
	defer f.mu.Unlock()
	k := repoOf(owner, repo)
	if f.branches[k] == nil {
		f.branches[k] = map[string]string{}
	}
	f.branches[k][name] = sha
}

// Roles GitHub reports, and the legacy permission level each maps to.
var roleLevel = map[string]string{
	"admin": "admin", "maintain": "write", "write": "write",
	"triage": "read", "read": "read", "none": "none",
}

// SetPermission gives login the role on owner/repo: admin, maintain,
// write, triage, read or none.
func (f *Fake) SetPermission(owner, repo, login, role string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := roleLevel[role]; !ok {
		f.fatalf("githubfake: SetPermission: unknown role %q", role)
		return
	}
	k := repoOf(owner, repo)
	if f.roles[k] == nil {
		f.roles[k] = map[string]string{}
	}
	f.roles[k][strings.ToLower(login)] = role
}

// Activity is one change of a ref, as the activity log records it.
type Activity struct {
	Ref           string // refs/heads/BRANCH; a bare BRANCH is made so
	Type          string // push (the default), force_push, branch_creation, ...
	Before, After string
	Actor         string
	Time          time.Time
}

// AddActivity records a change of a ref of owner/repo.
func (f *Fake) AddActivity(owner, repo string, a Activity) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.HasPrefix(a.Ref, "refs/") {
		a.Ref = "refs/heads/" + a.Ref
	}
	if a.Type == "" {
		a.Type = "push"
	}
	k := repoOf(owner, repo)
	f.activity[k] = append(f.activity[k], a)
}

// fatalf fails the test, or panics outside one; f.mu may be held.
func (f *Fake) fatalf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if f.t == nil {
		panic(msg)
	}
	f.t.Fatal(msg)
}

// AddComment adds a comment by author to a PR added before, and returns its
// ID.
func (f *Fake) AddComment(owner, repo string, number int, author, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := key(owner, repo, number)
	if _, ok := f.prs[k]; !ok {
		f.fatalf("githubfake: AddComment: no PR %s/%s#%d", owner, repo, number)
	}
	return f.addComment(k, author, body).ID
}

// Comments returns a copy of a PR's comments, oldest first.
func (f *Fake) Comments(owner, repo string, number int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Comment
	for _, c := range f.comments[key(owner, repo, number)] {
		out = append(out, *c)
	}
	return out
}

// Statuses returns the statuses set on sha, oldest first.
func (f *Fake) Statuses(owner, repo, sha string) []Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Status
	for _, s := range f.statuses[statusKey{strings.ToLower(owner), strings.ToLower(repo), sha}] {
		out = append(out, s.Status)
	}
	return out
}

// Requests returns the requests answered so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// PackBytes is the bytes of the pack answers (git-upload-pack) sent so
// far: what fetches cost.
func (f *Fake) PackBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, r := range f.log {
		if strings.HasSuffix(r.Path, "/git-upload-pack") {
			n += r.Bytes
		}
	}
	return n
}

// Count returns how many requests answered so far match method ("" for any)
// and the path prefix.
func (f *Fake) Count(method, pathPrefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.log {
		if (match{method, pathPrefix}).matches(r.Method, r.Path) {
			n++
		}
	}
	return n
}

// FailNext makes the next n requests matching method ("" for any) and the
// path prefix (below APIPrefix) fail with status.
func (f *Fake) FailNext(method, pathPrefix string, status, n int) {
	f.Inject(method, pathPrefix, n, Fault{Status: status, Message: http.StatusText(status)})
}

// Inject makes the next n requests matching method and the path prefix get
// flt instead of an answer. Faults queue in the order injected.
func (f *Fake) Inject(method, pathPrefix string, n int, flt Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &fault{match: match{method, pathPrefix}, left: n, f: flt})
}

// SetLatency delays every answer by d.
func (f *Fake) SetLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

// SetClock replaces the clock that stamps comments.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// Barrier holds the next n requests matching method and the path prefix
// until all n have arrived, applies them all, and only then answers any:
// as if each client had sent its request before seeing another's effect.
// A barrier not filled within ten seconds is released, and the test fails.
func (f *Fake) Barrier(method, pathPrefix string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.barriers = append(f.barriers, &barrier{
		match: match{method, pathPrefix}, n: n,
		all: make(chan struct{}), done: make(chan struct{}),
	})
}

func key(owner, repo string, number int) issueKey {
	return issueKey{strings.ToLower(owner), strings.ToLower(repo), number}
}

// serve wraps the endpoints with what applies to every request: latency,
// faults, barriers, authentication, rate-limit headers and the log.
func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if f.serveGit(w, r) {
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, APIPrefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	latency := f.latency
	flt := f.takeFault(r.Method, path)
	var b *barrier
	if flt == nil {
		b = f.joinBarrier(r.Method, path)
	}
	f.mu.Unlock()

	time.Sleep(latency)
	rec := httptest.NewRecorder()
	switch {
	case flt != nil:
		for k, v := range flt.Header {
			rec.Header()[k] = v
		}
		writeError(rec, flt.Status, flt.Message, flt.DocURL)
	default:
		if b != nil {
			f.wait(b.all, "arrive")
		}
		if acct, ok := f.authenticate(rec, r); ok {
			r2 := r.Clone(context.WithValue(r.Context(), ctxKey{}, acct))
			r2.URL.Path, r2.URL.RawPath = path, ""
			f.mux.ServeHTTP(rec, r2)
		}
		if b != nil {
			f.mu.Lock()
			if b.answered++; b.answered == b.n {
				close(b.done)
			}
			f.mu.Unlock()
			f.wait(b.done, "be applied")
		}
	}
	f.mu.Lock()
	f.log = append(f.log, Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Status: rec.Code})
	f.mu.Unlock()

	h := w.Header()
	for k, v := range rec.Header() {
		h[k] = v
	}
	if h.Get("X-Ratelimit-Remaining") == "" {
		h.Set("X-Ratelimit-Limit", "5000")
		h.Set("X-Ratelimit-Remaining", "4999")
		h.Set("X-Ratelimit-Used", "1")
		h.Set("X-Ratelimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// takeFault pops a pending fault for the request; f.mu is held.
func (f *Fake) takeFault(method, path string) *Fault {
	for i, flt := range f.faults {
		if flt.matches(method, path) {
			if flt.left--; flt.left <= 0 {
				f.faults = slices.Delete(f.faults, i, i+1)
			}
			return &flt.f
		}
	}
	return nil
}

// joinBarrier enrols the request in a pending barrier; f.mu is held.
func (f *Fake) joinBarrier(method, path string) *barrier {
	for i, b := range f.barriers {
		if b.matches(method, path) {
			if b.arrived++; b.arrived == b.n {
				close(b.all)
				f.barriers = slices.Delete(f.barriers, i, i+1)
			}
			return b
		}
	}
	return nil
}

func (f *Fake) wait(ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		f.t.Errorf("githubfake: barrier: requests did not all %s within 10s", what)
	}
}

type ctxKey struct{}

// caller is the authenticated account of r, nil if anonymous.
func caller(r *http.Request) *account {
	a, _ := r.Context().Value(ctxKey{}).(*account)
	return a
}

// authenticate checks the Authorization header. It returns the caller's
// account (nil for an anonymous caller) and false if it has answered 401.
func (f *Fake) authenticate(w http.ResponseWriter, r *http.Request) (*account, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, true
	}
	scheme, token, _ := strings.Cut(h, " ")
	f.mu.Lock()
	acct, ok := f.accounts[token]
	f.mu.Unlock()
	if !ok || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) {
		writeError(w, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
		return nil, false
	}
	return &acct, true
}
