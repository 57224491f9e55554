package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
)

const (
	docsREST     = "https://docs.github.com/rest"
	maxBody      = 65536 // characters in a comment body
	maxStatusLen = 140   // characters in a status description
)

// writeError writes GitHub's error shape.
func writeError(w http.ResponseWriter, status int, message, docURL string) {
	if docURL == "" {
		docURL = docsREST
	}
	writeJSON(w, status, map[string]any{
		"message":           message,
		"documentation_url": docURL,
		"status":            strconv.Itoa(status),
	})
}

// writeInvalid writes a 422 Validation Failed naming one problem.
func writeInvalid(w http.ResponseWriter, resource, field, code, message string) {
	e := map[string]any{"resource": resource, "field": field, "code": code}
	if message != "" {
		e["message"] = message
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message":           "Validation Failed",
		"errors":            []any{e},
		"documentation_url": docsREST,
		"status":            "422",
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// mustAuth answers 401 for an anonymous write.
func mustAuth(w http.ResponseWriter, r *http.Request) (*account, bool) {
	a := caller(r)
	if a == nil {
		writeError(w, http.StatusUnauthorized, "Requires authentication", docsREST)
		return nil, false
	}
	return a, true
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (f *Fake) userJSON(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{
		"login":    login,
		"id":       idOf(login),
		"type":     typ,
		"html_url": f.srv.URL + "/" + login,
	}
}

// idOf gives an account a stable numeric id.
func idOf(login string) int64 {
	var h int64 = 7
	for _, c := range strings.ToLower(login) {
		h = h*31 + int64(c)
	}
	return max(h, -h) % 1e8
}

func (f *Fake) getUser(w http.ResponseWriter, r *http.Request) {
	a := caller(r)
	switch {
	case a == nil:
		writeError(w, http.StatusUnauthorized, "Requires authentication", docsREST+"/users/users#get-the-authenticated-user")
	case a.app:
		writeError(w, http.StatusForbidden, "Resource not accessible by integration", docsREST+"/users/users#get-the-authenticated-user")
	default:
		writeJSON(w, http.StatusOK, f.userJSON(a.login))
	}
}

// issue finds the PR named in r's path, answering 404 if there is none.
func (f *Fake) issue(w http.ResponseWriter, r *http.Request) (issueKey, PR, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found", "")
		return issueKey{}, PR{}, false
	}
	k := key(r.PathValue("owner"), r.PathValue("repo"), n)
	f.mu.Lock()
	pr, ok := f.prs[k]
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", "")
	}
	return k, pr, ok
}

func (f *Fake) getPR(w http.ResponseWriter, r *http.Request) {
	_, pr, ok := f.issue(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	baseSHA, headSHA := f.branchSHA(pr, pr.Base, false), f.branchSHA(pr, pr.Head, true)
	f.mu.Unlock()
	branch := func(b Branch, sha string) map[string]any {
		owner, repo := cmpOr(b.Owner, pr.Owner), cmpOr(b.Repo, pr.Repo)
		m := map[string]any{
			"label": owner + ":" + b.Ref,
			"ref":   b.Ref,
			"sha":   sha,
			"user":  f.userJSON(owner),
			"repo":  nil,
		}
		if !b.Deleted {
			m["repo"] = map[string]any{
				"id":        idOf(owner + "/" + repo),
				"name":      repo,
				"full_name": owner + "/" + repo,
				"owner":     f.userJSON(owner),
				"private":   false,
				"html_url":  f.srv.URL + "/" + owner + "/" + repo,
				"clone_url": cmpOr(b.CloneURL, f.srv.URL+"/"+owner+"/"+repo+".git"),
			}
		}
		return m
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":       idOf(fmt.Sprintf("%s/%s#%d", pr.Owner, pr.Repo, pr.Number)),
		"number":   pr.Number,
		"state":    "open",
		"title":    pr.Title,
		"url":      f.URL() + fmt.Sprintf("repos/%s/%s/pulls/%d", pr.Owner, pr.Repo, pr.Number),
		"html_url": f.srv.URL + fmt.Sprintf("/%s/%s/pull/%d", pr.Owner, pr.Repo, pr.Number),
		"base":     branch(pr.Base, baseSHA),
		"head":     branch(pr.Head, headSHA),
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// commentJSON renders c; f.mu is held.
func (f *Fake) commentJSON(c *Comment) map[string]any {
	k := f.where[c.ID]
	pr := f.prs[k]
	return map[string]any{
		"id":                 c.ID,
		"node_id":            fmt.Sprintf("IC_%d", c.ID),
		"url":                f.URL() + fmt.Sprintf("repos/%s/%s/issues/comments/%d", pr.Owner, pr.Repo, c.ID),
		"html_url":           f.srv.URL + fmt.Sprintf("/%s/%s/pull/%d#issuecomment-%d", pr.Owner, pr.Repo, pr.Number, c.ID),
		"issue_url":          f.URL() + fmt.Sprintf("repos/%s/%s/issues/%d", pr.Owner, pr.Repo, pr.Number),
		"body":               c.Body,
		"user":               f.userJSON(c.Author),
		"created_at":         stamp(c.Created),
		"updated_at":         stamp(c.Updated),
		"author_association": "NONE",
	}
}

// addComment stores a new comment; f.mu is held.
func (f *Fake) addComment(k issueKey, author, body string) *Comment {
	f.nextID++
	now := f.now()
	c := &Comment{ID: f.nextID, Author: author, Body: body, Created: now, Updated: now}
	f.comments[k] = append(f.comments[k], c)
	f.where[c.ID] = k
	return c
}

func (f *Fake) listComments(w http.ResponseWriter, r *http.Request) {
	k, _, ok := f.issue(w, r)
	if !ok {
		return
	}
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		var err error
		if since, err = time.Parse(time.RFC3339, v); err != nil {
			writeInvalid(w, "IssueComment", "since", "invalid", "since is not an ISO 8601 time")
			return
		}
	}
	f.mu.Lock()
	var all []*Comment
	for _, c := range f.comments[k] {
		if !c.Updated.Before(since) {
			all = append(all, c)
		}
	}
	lo, hi := f.paginate(w, r, len(all))
	items := []any{}
	for _, c := range all[lo:hi] {
		items = append(items, f.commentJSON(c))
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, items)
}

// paginate reads page and per_page (30 by default, at most 100) as GitHub
// does, sets the Link header for a list of n items, and returns the
// indexes of the page's items, [lo, hi).
func (f *Fake) paginate(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	perPage, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max(1, (n+perPage-1)/perPage)
	link := func(p int, rel string) string {
		q := url.Values{}
		for k, v := range r.URL.Query() {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s%s?%s>; rel=%q`, f.srv.URL, APIPrefix, r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min((page-1)*perPage, n)
	return lo, min(lo+perPage, n)
}

// commentBody decodes and validates {"body": ...}, answering 4xx if bad.
func commentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", "")
		return "", false
	}
	switch {
	case in.Body == nil || strings.TrimSpace(*in.Body) == "":
		writeInvalid(w, "IssueComment", "body", "missing_field", "")
		return "", false
	case utf8.RuneCountInString(*in.Body) > maxBody:
		writeInvalid(w, "IssueComment", "data", "unprocessable",
			fmt.Sprintf("Body is too long (maximum is %d characters)", maxBody))
		return "", false
	}
	return *in.Body, true
}

func (f *Fake) createComment(w http.ResponseWriter, r *http.Request) {
	a, ok := mustAuth(w, r)
	if !ok {
		return
	}
	k, _, ok := f.issue(w, r)
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	out := f.commentJSON(f.addComment(k, a.login, body))
	f.mu.Unlock()
	w.Header().Set("Location", out["url"].(string))
	writeJSON(w, http.StatusCreated, out)
}

// comment finds the comment named in r's path, answering 404 if it is not in
// the named repository, and 403 if the caller is not its author. f.mu is
// held on success.
func (f *Fake) comment(w http.ResponseWriter, r *http.Request, a *account) (*Comment, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	k, found := f.where[id]
	if err != nil || !found || k.owner != strings.ToLower(r.PathValue("owner")) || k.repo != strings.ToLower(r.PathValue("repo")) {
		f.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found", "")
		return nil, false
	}
	i := slices.IndexFunc(f.comments[k], func(c *Comment) bool { return c.ID == id })
	c := f.comments[k][i]
	if !strings.EqualFold(c.Author, a.login) {
		f.mu.Unlock()
		writeError(w, http.StatusForbidden, "Must have admin rights to Repository.", "")
		return nil, false
	}
	return c, true
}

func (f *Fake) editComment(w http.ResponseWriter, r *http.Request) {
	a, ok := mustAuth(w, r)
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	c, ok := f.comment(w, r, a)
	if !ok {
		return
	}
	c.Body, c.Updated = body, f.now()
	out := f.commentJSON(c)
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) deleteComment(w http.ResponseWriter, r *http.Request) {
	a, ok := mustAuth(w, r)
	if !ok {
		return
	}
	c, ok := f.comment(w, r, a)
	if !ok {
		return
	}
	k := f.where[c.ID]
	f.comments[k] = slices.DeleteFunc(f.comments[k], func(x *Comment) bool { return x == c })
	delete(f.where, c.ID)
	f.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) createStatus(w http.ResponseWriter, r *http.Request) {
	a, ok := mustAuth(w, r)
	if !ok {
		return
	}
	owner, repo, sha := r.PathValue("owner"), r.PathValue("repo"), r.PathValue("sha")
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", "")
		return
	}
	switch {
	case !slices.Contains([]string{"error", "failure", "pending", "success"}, in.State):
		writeInvalid(w, "Status", "state", "custom", "state is not included in the list")
		return
	case utf8.RuneCountInString(in.Description) > maxStatusLen:
		writeInvalid(w, "Status", "description", "custom",
			fmt.Sprintf("description is too long (maximum is %d characters)", maxStatusLen))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.knownCommit(owner, repo, sha) {
		writeInvalid(w, "Status", "sha", "custom", "No commit found for SHA: "+sha)
		return
	}
	f.statusID++
	s := storedStatus{Status: Status{
		State: in.State, Context: cmpOr(in.Context, "default"),
		Description: in.Description, TargetURL: in.TargetURL, Creator: a.login,
	}, id: f.statusID, created: f.now()}
	sk := statusKey{strings.ToLower(owner), strings.ToLower(repo), sha}
	f.statuses[sk] = append(f.statuses[sk], s)
	writeJSON(w, http.StatusCreated, f.statusJSON(owner, repo, s))
}

// statusJSON is a status as GitHub shows it; f.mu is held.
func (f *Fake) statusJSON(owner, repo string, s storedStatus) map[string]any {
	return map[string]any{
		"url":         fmt.Sprintf("%s%s/repos/%s/%s/statuses/%d", f.srv.URL, APIPrefix, owner, repo, s.id),
		"id":          s.id,
		"state":       s.State,
		"context":     s.Context,
		"description": s.Description,
		"target_url":  s.TargetURL,
		"creator":     f.userJSON(s.Creator),
		"created_at":  stamp(s.created),
		"updated_at":  stamp(s.created),
	}
}

// listStatuses lists the statuses of a commit, newest first and a page at
// a time, as GitHub does. The fake keeps statuses by full SHA: a shorter
// ref lists none.
func (f *Fake) listStatuses(w http.ResponseWriter, r *http.Request) {
	owner, repo, sha := r.PathValue("owner"), r.PathValue("repo"), r.PathValue("ref")
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.knownRepo(repoOf(owner, repo)) {
		writeError(w, http.StatusNotFound, "Not Found", docsREST+"/commits/statuses#list-commit-statuses-for-a-reference")
		return
	}
	all := slices.Clone(f.statuses[statusKey{strings.ToLower(owner), strings.ToLower(repo), sha}])
	slices.Reverse(all)
	lo, hi := f.paginate(w, r, len(all))
	items := []any{}
	for _, s := range all[lo:hi] {
		items = append(items, f.statusJSON(owner, repo, s))
	}
	writeJSON(w, http.StatusOK, items)
}

// knownCommit reports whether sha is the base or head of a PR of the
// repository, a commit AddRef named, or a commit of it as served
// (ServeGit); f.mu is held.
func (f *Fake) knownCommit(owner, repo, sha string) bool {
	for k, pr := range f.prs {
		if k.owner == strings.ToLower(owner) && k.repo == strings.ToLower(repo) &&
			(f.branchSHA(pr, pr.Base, false) == sha || f.branchSHA(pr, pr.Head, true) == sha) {
			return true
		}
	}
	// A status may go on any commit of a served repository, as on GitHub,
	// and on a commit AddRef made known.
	for _, c := range f.refs[repoOf(owner, repo)] {
		if c == sha {
			return true
		}
	}
	return plumbing.IsHash(sha) && f.gitRef(repoOf(owner, repo), sha) == sha
}
