package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v60/github"
)

// Comment is one sticky comment to post.
type Comment struct {
	// Key names the comment: a PR has at most one of ours per key, e.g.
	// "summary" or "backport-PHP-8.4". Letters, digits and ._/:@+- only.
	Key string
	// Run orders the runs that post under Key: a decimal run id (such as
	// $GITHUB_RUN_ID) or an RFC 3339 time. "" means the client's clock now.
	Run string
	// Body is the Markdown to show, without the marker.
	Body string
	// Entry is this run as the list of earlier runs will show it once a
	// later run replaces the comment; nil means Options.Entry. The list
	// itself (HistoryEntry) is carried from the comment replaced, and
	// appended to Body.
	Entry *HistoryEntry
}

// Action is what UpsertComment did.
type Action string

const (
	Created      Action = "created"
	Updated      Action = "updated"
	Unchanged    Action = "unchanged"     // the comment already had this body and run
	SkippedOlder Action = "skipped-older" // a newer run's comment was left alone
	DryRun       Action = "dry-run"       // nothing written; see Outcome.Planned
)

// Outcome reports what UpsertComment did.
type Outcome struct {
	Action Action
	// Planned is what a real run would have done, for a DryRun; it is ""
	// when a dry run had no token to look with and so cannot tell created
	// from updated.
	Planned   Action
	CommentID int64   // the sticky comment; 0 if there is none (yet)
	URL       string  // its page
	Deleted   []int64 // duplicates removed (or that would be)
}

// maxBody is GitHub's limit on a comment body, in characters.
const maxBody = 65536

// commentsPerPage is how many comments a page lists: GitHub's default, and
// few enough that a page of the longest comments there can be, written
// by anyone who may comment on the PR, stays within DefaultMaxResponse (30
// × 65536 characters × 6 bytes, a control character's JSON escape, is
// 11.25 MiB), so that they cannot keep patchproof from posting.
const commentsPerPage = 30

var keyRE = regexp.MustCompile(`^[A-Za-z0-9._/:@+-]+$`)

// marker is the hidden first line that identifies a sticky comment.
func marker(key, run string) string {
	return "<!-- patchproof:v1 key=" + key + " run=" + run + " -->"
}

var markerRE = regexp.MustCompile(`^<!-- patchproof:v1 key=(\S+) run=(\S+) -->$`)

// parseMarker reads the marker from the first line of body.
func parseMarker(body string) (key, run string, ok bool) {
	line, _, _ := strings.Cut(body, "\n")
	m := markerRE.FindStringSubmatch(strings.TrimSuffix(line, "\r"))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// runKind tells the two kinds of run stamp apart; 0 is neither.
func runKind(run string) (kind int, id uint64, t time.Time) {
	if id, err := strconv.ParseUint(run, 10, 64); err == nil {
		return 1, id, time.Time{}
	}
	if t, err := time.Parse(time.RFC3339, run); err == nil {
		return 2, 0, t
	}
	return 0, 0, time.Time{}
}

func validRun(run string) bool {
	k, _, _ := runKind(run)
	return k != 0 && !strings.ContainsAny(run, " \t\r\n")
}

// newerRun reports whether run a is strictly newer than run b. Stamps of
// different kinds, or that do not parse (a hand-edited marker), are not
// ordered, and then neither is newer: the poster wins.
func newerRun(a, b string) bool {
	ka, ia, ta := runKind(a)
	kb, ib, tb := runKind(b)
	switch {
	case ka != kb:
		return false
	case ka == 1:
		return ia > ib
	case ka == 2:
		return ta.After(tb)
	}
	return false
}

// sameBody compares bodies as GitHub may hand them back, with CRLF.
func sameBody(a, b string) bool {
	return strings.ReplaceAll(a, "\r\n", "\n") == strings.ReplaceAll(b, "\r\n", "\n")
}

// ours is one of our marked comments with the key being posted.
type ours struct {
	ID   int64
	Run  string
	Body string // as stored, marker included
	URL  string
}

// plan is how to go from the comments found to exactly one that shows the
// newest run.
type plan struct {
	action Action
	keep   ours    // the comment that stays; ID 0: none, create one
	body   string  // the body keep must have
	edit   bool    // keep needs editing to get it
	delete []int64 // duplicates
}

// reconcile plans the writes for want, given found (ours with the key,
// sorted by ID) and the ID of the comment this call has just created (0 if
// none; if non-zero it is in found).
func reconcile(found []ours, want ours, created int64) plan {
	if len(found) == 0 {
		return plan{action: Created, body: want.Body}
	}
	keep := found[0]
	newest, wantWins := want, true
	for _, f := range found {
		// Compare by stamp even the comment we created: a racing run may
		// already have given it a newer run's body.
		if newerRun(f.Run, newest.Run) {
			newest, wantWins = f, false
		}
	}
	p := plan{keep: keep, body: newest.Body, edit: !sameBody(keep.Body, newest.Body)}
	for _, f := range found[1:] {
		p.delete = append(p.delete, f.ID)
	}
	switch {
	case !wantWins:
		p.action = SkippedOlder
	case keep.ID == created:
		p.action = Created
	case p.edit:
		p.action = Updated
	default:
		p.action = Unchanged
	}
	return p
}

// UpsertComment makes cm the PR's one sticky comment under cm.Key: it creates,
// edits or leaves the comment as the package doc describes, and removes
// duplicates left by runs that posted at the same time.
func (c *Client) UpsertComment(ctx context.Context, owner, repo string, number int, cm Comment) (Outcome, error) {
	op := fmt.Sprintf("upsert comment %q on %s/%s#%d", cm.Key, owner, repo, number)
	if cm.Run == "" {
		cm.Run = c.now().UTC().Format(time.RFC3339Nano)
	}
	switch {
	case number <= 0:
		return Outcome{}, c.fail(op, errors.New("invalid PR number"))
	case !keyRE.MatchString(cm.Key):
		return Outcome{}, c.fail(op, errors.New("key must be non-empty letters, digits and ._/:@+-"))
	case !validRun(cm.Run):
		return Outcome{}, c.fail(op, fmt.Errorf("run %q: want a decimal run id or an RFC 3339 time", cm.Run))
	}
	want := ours{Run: cm.Run, Body: marker(cm.Key, cm.Run) + "\n" + cm.Body}
	entry := cm.Entry
	if entry == nil {
		entry = c.entry
	}
	if entry != nil {
		e := *entry
		if e.Run == "" {
			e.Run = cm.Run
		}
		if entry = &e; !e.valid() {
			entry = nil
		}
	}
	if n := utf8.RuneCountInString(want.Body); n > maxBody {
		return Outcome{}, c.fail(op, fmt.Errorf("body is %d characters, GitHub takes at most %d", n, maxBody))
	}
	if c.scrub(want.Body) != want.Body {
		return Outcome{}, c.fail(op, errors.New("body contains the token; refusing to post it"))
	}

	if !c.authed {
		if c.dryRun == nil {
			return Outcome{}, c.fail(op, ErrNoToken)
		}
		// Without a token we cannot tell which comments are ours.
		err := c.dryRunf("dry run: would create or update the comment (no token to look for it) on %s/%s#%d:\n%s\n", owner, repo, number, want.Body)
		if err != nil {
			return Outcome{}, c.fail(op, err)
		}
		return Outcome{Action: DryRun}, nil
	}

	login, err := c.whoami(ctx)
	if err != nil {
		return Outcome{}, c.fail(op, err)
	}
	found, err := c.listOurs(ctx, owner, repo, number, login, cm.Key)
	if err != nil {
		return Outcome{}, c.fail(op, err)
	}
	// The earlier runs come from the comment this one replaces, the
	// newest run's: they survive every edit, a force-push's included.
	if b := marker(cm.Key, cm.Run) + "\n" + withHistory(cm.Body, newestOf(found).Body, entry); utf8.RuneCountInString(b) <= maxBody {
		want.Body = b
	}
	p := reconcile(found, want, 0)

	if c.dryRun != nil {
		if err := c.dryRunPlan(owner, repo, number, p, want); err != nil {
			return Outcome{}, c.fail(op, err)
		}
		return Outcome{Action: DryRun, Planned: p.action, CommentID: p.keep.ID, URL: p.keep.URL, Deleted: p.delete}, nil
	}

	if p.keep.ID == 0 {
		ic, _, err := c.gh.Issues.CreateComment(ctx, owner, repo, number, &gh.IssueComment{Body: gh.String(want.Body)})
		if err != nil {
			return Outcome{}, c.fail(op, err)
		}
		want.ID, want.URL = ic.GetID(), ic.GetHTMLURL()
		// Another run may have created one too since we looked: look
		// again, and let the oldest stand.
		found, err = c.listOurs(ctx, owner, repo, number, login, cm.Key)
		if err != nil {
			return Outcome{}, c.fail(op, err)
		}
		if i, ok := slices.BinarySearchFunc(found, want.ID, func(o ours, id int64) int { return cmp.Compare(o.ID, id) }); !ok {
			// Not listed yet, but it exists: it must take part.
			found = slices.Insert(found, i, want)
		}
		p = reconcile(found, want, want.ID)
	}

	if p.edit {
		ic, _, err := c.gh.Issues.EditComment(ctx, owner, repo, p.keep.ID, &gh.IssueComment{Body: gh.String(p.body)})
		if err != nil {
			return Outcome{}, c.fail(op, err)
		}
		p.keep.URL = ic.GetHTMLURL()
	}
	for _, id := range p.delete {
		_, err := c.gh.Issues.DeleteComment(ctx, owner, repo, id)
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
			continue // a racing run deleted it first
		}
		if err != nil {
			return Outcome{}, c.fail(op, fmt.Errorf("delete duplicate comment %d: %w", id, err))
		}
	}
	return Outcome{Action: p.action, CommentID: p.keep.ID, URL: p.keep.URL, Deleted: p.delete}, nil
}

// newestOf is the comment of found of the newest run (the last of those
// that do not order); none is the zero ours.
func newestOf(found []ours) ours {
	var best ours
	for i, f := range found {
		if i == 0 || !newerRun(best.Run, f.Run) {
			best = f
		}
	}
	return best
}

// listOurs returns the comments on the PR written by login and marked with
// key, sorted by ID. It reads every page.
func (c *Client) listOurs(ctx context.Context, owner, repo string, number int, login, key string) ([]ours, error) {
	var found []ours
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: commentsPerPage}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments: %w", err)
		}
		for _, ic := range page {
			if !strings.EqualFold(ic.GetUser().GetLogin(), login) {
				continue
			}
			k, run, ok := parseMarker(ic.GetBody())
			if !ok || k != key {
				continue
			}
			found = append(found, ours{ID: ic.GetID(), Run: run, Body: ic.GetBody(), URL: ic.GetHTMLURL()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	slices.SortFunc(found, func(a, b ours) int { return cmp.Compare(a.ID, b.ID) })
	return found, nil
}

// dryRunPlan writes what UpsertComment would do.
func (c *Client) dryRunPlan(owner, repo string, number int, p plan, want ours) error {
	where := fmt.Sprintf("%s/%s#%d", owner, repo, number)
	var what string
	switch p.action {
	case Created:
		what = "would create a comment on " + where
	case Updated:
		what = fmt.Sprintf("would update comment %d on %s", p.keep.ID, where)
	case Unchanged:
		what = fmt.Sprintf("comment %d on %s is unchanged", p.keep.ID, where)
	case SkippedOlder:
		_, run, _ := parseMarker(p.body)
		what = fmt.Sprintf("comment %d on %s shows a newer run (%s); would leave it", p.keep.ID, where, run)
	}
	if len(p.delete) > 0 {
		ids := make([]string, len(p.delete))
		for i, id := range p.delete {
			ids[i] = strconv.FormatInt(id, 10)
		}
		what += "; would delete duplicates " + strings.Join(ids, ", ")
	}
	return c.dryRunf("dry run: %s:\n%s\n", what, want.Body)
}
