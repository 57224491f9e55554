package githubfake

import (
	"cmp"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// knownRepo reports whether the fake holds anything of k; f.mu is held.
func (f *Fake) knownRepo(k repoKey) bool {
	if f.refs[k] != nil || f.roles[k] != nil || f.activity[k] != nil || f.gits[k] != "" {
		return true
	}
	for _, pr := range f.prs {
		for _, b := range []Branch{pr.Base, pr.Head} {
			if repoOf(cmpOr(b.Owner, pr.Owner), cmpOr(b.Repo, pr.Repo)) == k && !b.Deleted {
				return true
			}
		}
	}
	return false
}

// commits returns every commit the fake knows in k; f.mu is held.
func (f *Fake) commits(k repoKey) []string {
	var all []string
	for _, sha := range f.refs[k] {
		all = append(all, sha)
	}
	for _, pr := range f.prs {
		for i, b := range []Branch{pr.Base, pr.Head} {
			if repoOf(cmpOr(b.Owner, pr.Owner), cmpOr(b.Repo, pr.Repo)) == k {
				if sha := f.branchSHA(pr, b, i == 1); sha != "" {
					all = append(all, sha)
				}
			}
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}

var hexPrefix = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

func (f *Fake) getCommit(w http.ResponseWriter, r *http.Request) {
	k, ref := repoOf(r.PathValue("owner"), r.PathValue("repo")), r.PathValue("ref")
	f.mu.Lock()
	known := f.knownRepo(k)
	sha, ok := f.refs[k][ref]
	if !ok {
		sha = f.gitRef(k, ref)
		ok = sha != ""
	}
	if !ok && hexPrefix.MatchString(ref) {
		var found []string
		for _, c := range f.commits(k) {
			if strings.HasPrefix(c, ref) {
				found = append(found, c)
			}
		}
		if len(found) == 1 {
			sha, ok = found[0], true
		}
	}
	f.mu.Unlock()
	switch {
	case !known:
		writeError(w, http.StatusNotFound, "Not Found", docsREST+"/commits/commits#get-a-commit")
	case !ok:
		writeInvalid(w, "Commit", "sha", "custom", "No commit found for SHA: "+ref)
	default:
		writeJSON(w, http.StatusOK, map[string]any{
			"sha":      sha,
			"node_id":  "C_" + sha,
			"url":      f.URL() + "repos/" + r.PathValue("owner") + "/" + r.PathValue("repo") + "/commits/" + sha,
			"html_url": f.srv.URL + "/" + r.PathValue("owner") + "/" + r.PathValue("repo") + "/commit/" + sha,
			"commit":   map[string]any{"message": ""},
		})
	}
}

// branch is the commit of branch name in k, and whether k has it; f.mu is
// held.
func (f *Fake) branch(k repoKey, name string) (string, bool) {
	if sha, ok := f.branches[k][name]; ok {
		return sha, true
	}
	for _, pr := range f.prs {
		for i, b := range []Branch{pr.Base, pr.Head} {
			if repoOf(cmpOr(b.Owner, pr.Owner), cmpOr(b.Repo, pr.Repo)) == k && !b.Deleted && b.Ref == name {
				return f.branchSHA(pr, b, i == 1), true
			}
		}
	}
	if sha := f.gitRef(k, "refs/heads/"+name); sha != "" {
		return sha, true
	}
	return "", false
}

func (f *Fake) getBranch(w http.ResponseWriter, r *http.Request) {
	const doc = docsREST + "/branches/branches#get-a-branch"
	k, name := repoOf(r.PathValue("owner"), r.PathValue("repo")), r.PathValue("branch")
	f.mu.Lock()
	known := f.knownRepo(k)
	sha, ok := f.branch(k, name)
	f.mu.Unlock()
	switch {
	case !known:
		writeError(w, http.StatusNotFound, "Not Found", doc)
	case !ok:
		writeError(w, http.StatusNotFound, "Branch not found", doc)
	default:
		writeJSON(w, http.StatusOK, map[string]any{
			"name":      name,
			"commit":    map[string]any{"sha": sha, "url": f.URL() + "repos/" + r.PathValue("owner") + "/" + r.PathValue("repo") + "/commits/" + sha},
			"protected": false,
		})
	}
}

// role is login's role on k: read where none was set; f.mu is held.
func (f *Fake) role(k repoKey, login string) string {
	if role, ok := f.roles[k][strings.ToLower(login)]; ok {
		return role
	}
	return "read"
}

func (f *Fake) getPermission(w http.ResponseWriter, r *http.Request) {
	const doc = docsREST + "/collaborators/collaborators#get-repository-permissions-for-a-user"
	a, ok := mustAuth(w, r)
	if !ok {
		return
	}
	k, login := repoOf(r.PathValue("owner"), r.PathValue("repo")), r.PathValue("username")
	f.mu.Lock()
	known := f.knownRepo(k)
	callerLevel := roleLevel[f.role(k, a.login)]
	role := f.role(k, login)
	f.mu.Unlock()
	switch {
	case !known:
		writeError(w, http.StatusNotFound, "Not Found", doc)
	case !a.app && callerLevel != "write" && callerLevel != "admin":
		writeError(w, http.StatusForbidden, "Must have push access to view collaborator permission.", doc)
	default:
		writeJSON(w, http.StatusOK, map[string]any{
			"permission": roleLevel[role],
			"role_name":  role,
			"user":       f.userJSON(login),
		})
	}
}

func (f *Fake) listActivity(w http.ResponseWriter, r *http.Request) {
	k := repoOf(r.PathValue("owner"), r.PathValue("repo"))
	q := r.URL.Query()
	ref := q.Get("ref")
	if ref != "" && !strings.HasPrefix(ref, "refs/") {
		ref = "refs/heads/" + ref
	}
	perPage, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)

	f.mu.Lock()
	known := f.knownRepo(k)
	var acts []Activity
	for _, a := range f.activity[k] {
		if (ref == "" || a.Ref == ref) && (q.Get("activity_type") == "" || a.Type == q.Get("activity_type")) {
			acts = append(acts, a)
		}
	}
	f.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, "Not Found", docsREST+"/repos/repos#list-repository-activities")
		return
	}
	slices.SortStableFunc(acts, func(a, b Activity) int { return b.Time.Compare(a.Time) })
	if q.Get("direction") == "asc" {
		slices.Reverse(acts)
	}
	items := []any{}
	for i, a := range acts[:min(len(acts), perPage)] {
		var actor any
		if a.Actor != "" {
			actor = f.userJSON(a.Actor)
		}
		items = append(items, map[string]any{
			"id":            i + 1,
			"node_id":       "RA_" + strconv.Itoa(i+1),
			"before":        cmp.Or(a.Before, strings.Repeat("0", 40)),
			"after":         a.After,
			"ref":           a.Ref,
			"timestamp":     stamp(a.Time),
			"activity_type": a.Type,
			"actor":         actor,
		})
	}
	writeJSON(w, http.StatusOK, items)
}
