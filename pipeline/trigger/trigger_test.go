package trigger_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/trigger"
)

const (
	appToken  = "ghs_ActionsT0kenOfThePlanJob0000000001"
	readToken = "ghp_ReadOnlyMemberT0ken00000000000002"

	baseSHA  = "1111111111111111111111111111111111111111"
	headSHA  = "2222222222222222222222222222222222222222"
	oldSHA   = "3333333333333333333333333333333333333333"
	toolSHA  = "4444444444444444444444444444444444444444"
	toolSHA2 = "5555555555555555555555555555555555555555"
)

// commentAt is when the tests' comments were written.
var commentAt = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// newFake serves php/php-src#1, a PR from alice's fork at headSHA, pushed
// an hour before commentAt, and patchproof/patchproof whose main is
// toolSHA. The users have the role their name says.
func newFake(t *testing.T) *githubfake.Fake {
	t.Helper()
	f := githubfake.New(t)
	f.AddAppToken("github-actions[bot]", appToken)
	f.AddUser("reader", readToken)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "master", SHA: baseSHA},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: headSHA}})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Before: oldSHA, After: headSHA,
		Actor: "alice", Time: commentAt.Add(-time.Hour)})
	f.AddRef("patchproof", "patchproof", "main", toolSHA)
	f.AddRef("patchproof", "patchproof", "v1.0", toolSHA2)
	for _, b := range []string{"master", "PHP-8.3", "PHP-8.4", "PHP-8.5", "release/8.5"} {
		f.AddBranch("php", "php-src", b, baseSHA)
	}
	for _, role := range []string{"admin", "maintain", "write", "triage", "read", "none"} {
		f.SetPermission("php", "php-src", role+"-user", role)
	}
	return f
}

func client(t *testing.T, f *githubfake.Fake, token string) *github.Client {
	t.Helper()
	c, err := github.New(github.Options{BaseURL: f.URL(), MaxRetries: -1,
		Getenv: func(k string) string {
			if k == "GITHUB_TOKEN" {
				return token
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func commentEvent(t *testing.T, user, body string) []byte {
	return mustJSON(t, map[string]any{
		"action":     "created",
		"repository": map[string]any{"full_name": "php/php-src"},
		"sender":     map[string]any{"login": user},
		"issue":      map[string]any{"number": 1, "pull_request": map[string]any{"url": "x"}},
		"comment": map[string]any{"id": 7, "body": body, "created_at": commentAt.Format(time.RFC3339),
			"user": map[string]any{"login": user}, "author_association": "MEMBER"},
	})
}

func labelEvent(t *testing.T, user, sha string) []byte {
	return mustJSON(t, map[string]any{
		"action":       "labeled",
		"repository":   map[string]any{"full_name": "php/php-src"},
		"sender":       map[string]any{"login": user},
		"label":        map[string]any{"name": "patchproof"},
		"pull_request": map[string]any{"number": 1, "head": map[string]any{"sha": sha}},
	})
}

func dispatchEvent(t *testing.T, user string, inputs map[string]any) []byte {
	return mustJSON(t, map[string]any{
		"repository": map[string]any{"full_name": "php/php-src"},
		"sender":     map[string]any{"login": user},
		"inputs":     inputs,
	})
}

// decide plans the event with the Actions token of php/php-src.
func decide(t *testing.T, f *githubfake.Fake, name string, ev []byte) (*trigger.Plan, error) {
	t.Helper()
	return trigger.Decide(context.Background(), client(t, f, appToken), trigger.Options{
		EventName: name, Event: ev, Repository: "php/php-src", SHA: baseSHA,
	})
}

// refusal is the reason of a *RefusedError, "" for none; any other error
// fails the test.
func refusal(t *testing.T, err error) string {
	t.Helper()
	var re *trigger.RefusedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return re.Reason
	}
	t.Fatalf("not a refusal: %v", err)
	return ""
}

func TestPermission(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		payload func(t *testing.T) []byte
		refused string // part of the reason; "" means accepted
	}{
		{"comment by admin", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "admin-user", "/patchproof") }, ""},
		{"comment by maintain", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "maintain-user", "/patchproof") }, ""},
		{"comment by write", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") }, ""},
		{"comment by a member with read", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "read-user", "/patchproof") },
			"read-user has permission read on php/php-src: triggering a run needs write, maintain or admin"},
		{"comment by triage", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "triage-user", "/patchproof") },
			"triage-user has permission read (role triage) on php/php-src"},
		{"comment by a stranger", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "mallory", "/patchproof") },
			"mallory has permission read on php/php-src"},
		{"comment by none", trigger.Comment, func(t *testing.T) []byte { return commentEvent(t, "none-user", "/patchproof") },
			"none-user has permission none"},
		{"label by write", trigger.Label, func(t *testing.T) []byte { return labelEvent(t, "write-user", headSHA) }, ""},
		{"label by read", trigger.Label, func(t *testing.T) []byte { return labelEvent(t, "read-user", headSHA) },
			"read-user has permission read on php/php-src"},
		{"label by triage, who may label", trigger.Label, func(t *testing.T) []byte { return labelEvent(t, "triage-user", headSHA) },
			"triage-user has permission read (role triage)"},
		{"dispatch by maintain", trigger.Dispatch, func(t *testing.T) []byte {
			return dispatchEvent(t, "maintain-user", map[string]any{"pr": "1", "repository": "php/php-src"})
		}, ""},
		{"dispatch by read", trigger.Dispatch, func(t *testing.T) []byte {
			return dispatchEvent(t, "read-user", map[string]any{"pr": "1", "repository": "php/php-src"})
		}, "read-user has permission read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			p, err := decide(t, f, tt.event, tt.payload(t))
			got := refusal(t, err)
			if tt.refused == "" {
				if got != "" {
					t.Fatalf("refused: %s", got)
				}
				if p.HeadSHA != headSHA {
					t.Errorf("head %s, want %s", p.HeadSHA, headSHA)
				}
				return
			}
			if !strings.Contains(got, tt.refused) {
				t.Errorf("refusal %q, want it to contain %q", got, tt.refused)
			}
			var re *trigger.RefusedError
			if errors.As(err, &re); !re.NoAccess {
				t.Errorf("refusal %q is not marked NoAccess", got)
			}
			if n := f.Count("GET", "/repos/php/php-src/pulls/"); n != 0 {
				t.Errorf("the PR was read %d times after the user was refused", n)
			}
		})
	}
}

// A token that may not read permissions (a personal token of a user
// without push access) refuses, saying so, rather than guessing.
func TestPermissionUnreadable(t *testing.T) {
	f := newFake(t)
	_, err := trigger.Decide(context.Background(), client(t, f, readToken), trigger.Options{
		EventName: trigger.Comment, Event: commentEvent(t, "write-user", "/patchproof"), Repository: "php/php-src",
	})
	want := "GitHub answers 403 to reading write-user's permission on php/php-src"
	if got := refusal(t, err); !strings.Contains(got, want) {
		t.Errorf("refusal %q, want it to contain %q", got, want)
	}
}

func TestHeadBinding(t *testing.T) {
	pushedAfter := githubfake.Activity{Ref: "atomic-stats", Before: oldSHA, After: headSHA, Actor: "alice", Time: commentAt.Add(30 * time.Second)}
	tests := []struct {
		name    string
		event   string
		payload func(t *testing.T) []byte
		setup   func(f *githubfake.Fake)
		refused string
		bound   string
	}{
		{name: "pushed before the comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			bound: "pushed at 2025-06-01T11:00:00Z, before the comment"},
		{name: "pushed after the comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup:   func(f *githubfake.Fake) { f.AddActivity("alice", "php-src", pushedAfter) },
			refused: "the head of php/php-src#1, " + headSHA + ", was pushed at 2025-06-01T12:00:30Z, after the comment at 2025-06-01T12:00:00Z: comment again or name the commit: /patchproof SHA"},
		{name: "pushed in the same second as the comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup: func(f *githubfake.Fake) {
				f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Before: oldSHA, After: headSHA, Time: commentAt})
			},
			refused: "after the comment"},
		{name: "force-pushed after the comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup: func(f *githubfake.Fake) {
				a := pushedAfter
				a.Type = "force_push"
				f.AddActivity("alice", "php-src", a)
			},
			refused: "after the comment"},
		{name: "a push to another branch after the comment does not count",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup: func(f *githubfake.Fake) {
				a := pushedAfter
				a.Ref, a.After = "other", oldSHA
				f.AddActivity("alice", "php-src", a)
			},
			bound: "pushed at 2025-06-01T11:00:00Z, before the comment"},
		{name: "the log does not reach the head yet",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup: func(f *githubfake.Fake) {
				f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Before: headSHA, After: oldSHA, Time: commentAt.Add(-time.Minute)})
			},
			refused: "the newest push recorded for alice/php-src branch atomic-stats is " + oldSHA + ", not the PR's head " + headSHA},
		{name: "activity unreadable",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup:   func(f *githubfake.Fake) { f.FailNext("GET", "/repos/alice/php-src/activity", 404, 1) },
			refused: "GitHub answers 404 to reading the pushes to alice/php-src branch atomic-stats: whether php/php-src#1 moved after the comment at 2025-06-01T12:00:00Z is unknown: name the commit"},
		{name: "activity forbidden, commit named",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof 2222222") },
			setup: func(f *githubfake.Fake) { f.FailNext("GET", "/repos/alice/php-src/activity", 403, 1) },
			bound: "named in the comment (2222222)"},
		{name: "the full head named, pushed after the comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof "+headSHA) },
			setup: func(f *githubfake.Fake) { f.AddActivity("alice", "php-src", pushedAfter) },
			bound: "named in the comment"},
		{name: "the head abbreviated",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof none 2222222") },
			bound: "pushed at 2025-06-01T11:00:00Z, before the comment"},
		{name: "the head abbreviated, pushed after the comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof 2222222") },
			setup:   func(f *githubfake.Fake) { f.AddActivity("alice", "php-src", pushedAfter) },
			refused: "and 2222222 names only part of it: name all 40 digits"},
		{name: "a stale commit named",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof "+oldSHA) },
			refused: "php/php-src#1 is at " + headSHA + ", not " + oldSHA + " you named"},
		{name: "a stale abbreviated commit named",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof PHP-8.4 3333333") },
			refused: "not 3333333 you named"},
		{name: "head repository deleted",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup: func(f *githubfake.Fake) {
				f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
					Base: githubfake.Branch{Ref: "master", SHA: baseSHA},
					Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: headSHA, Deleted: true}})
			},
			refused: "the head repository is gone"},
		{name: "label at the head",
			event: trigger.Label, payload: func(t *testing.T) []byte { return labelEvent(t, "write-user", headSHA) },
			setup: func(f *githubfake.Fake) { f.AddActivity("alice", "php-src", pushedAfter) },
			bound: "labelled at this commit"},
		{name: "moved after the label",
			event: trigger.Label, payload: func(t *testing.T) []byte { return labelEvent(t, "write-user", oldSHA) },
			refused: "php/php-src#1 moved from " + oldSHA + " to " + headSHA + " after it was labelled: label it again"},
		{name: "dispatch",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": 1, "repository": "php/php-src"})
			},
			bound: "the head when dispatched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			p, err := decide(t, f, tt.event, tt.payload(t))
			got := refusal(t, err)
			switch {
			case tt.refused != "" && !strings.Contains(got, tt.refused):
				t.Errorf("refusal %q, want it to contain %q", got, tt.refused)
			case tt.refused == "" && got != "":
				t.Errorf("refused: %s", got)
			case tt.refused == "" && p.Bound != tt.bound:
				t.Errorf("bound %q, want %q", p.Bound, tt.bound)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		payload func(t *testing.T) []byte
		setup   func(f *githubfake.Fake)
		refused string
	}{
		{name: "a word after /patchproof",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproofing") },
			refused: "not a patchproof command"},
		{name: "three words",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof a b c") },
			refused: "too many words (a b c)"},
		{name: "text after the branches",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof PHP-8.4 please") },
			refused: "please is not a commit"},
		{name: "a leading space",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", " /patchproof") },
			refused: "not a patchproof command"},
		{name: "the command on the second line",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "LGTM\n/patchproof") },
			refused: "not a patchproof command"},
		{name: "a branch with an option",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof -rf") },
			refused: "bad backport branch: -rf"},
		{name: "a branch with ..",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof PHP-8.4,a..b") },
			refused: "bad backport branch: a..b"},
		{name: "a branch with a shell character",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof PHP-8.4;id") },
			refused: "bad backport branch: PHP-8.4;id"},
		{name: "a commit in upper case",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof ABCDEF1") },
			refused: "ABCDEF1 is not a commit: name it in lowercase hex"},
		{name: "a comment on an issue",
			event: trigger.Comment, payload: func(t *testing.T) []byte {
				return mustJSON(t, map[string]any{"action": "created", "repository": map[string]any{"full_name": "php/php-src"},
					"issue":   map[string]any{"number": 5, "pull_request": nil},
					"comment": map[string]any{"body": "/patchproof", "created_at": commentAt, "user": map[string]any{"login": "write-user"}}})
			},
			refused: "issue #5, which is not a pull request"},
		{name: "an edited comment",
			event: trigger.Comment, payload: func(t *testing.T) []byte {
				var ev map[string]any
				json.Unmarshal(commentEvent(t, "write-user", "/patchproof"), &ev)
				ev["action"] = "edited"
				return mustJSON(t, ev)
			},
			refused: "a comment edited, not created"},
		{name: "another label",
			event: trigger.Label, payload: func(t *testing.T) []byte {
				var ev map[string]any
				json.Unmarshal(labelEvent(t, "write-user", headSHA), &ev)
				ev["label"] = map[string]any{"name": "bug"}
				return mustJSON(t, ev)
			},
			refused: `not labeled "patchproof"`},
		{name: "a label event without the labelled commit",
			event: trigger.Label, payload: func(t *testing.T) []byte { return labelEvent(t, "write-user", "") },
			refused: "the label event has no pull_request.head.sha"},
		{name: "another event",
			event: "pull_request", payload: func(t *testing.T) []byte { return labelEvent(t, "write-user", headSHA) },
			refused: "unexpected event pull_request"},
		{name: "a bad dispatch repository",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src/../x"})
			},
			refused: "bad repository: php/php-src/../x"},
		{name: "a bad dispatch number",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": "01", "repository": "php/php-src"})
			},
			refused: "bad pull request number: 01"},
		{name: "a bad dispatch builder",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src", "builder": "podman"})
			},
			refused: "bad builder: podman (host or docker)"},
		{name: "a dispatch without pr",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"repository": "php/php-src"})
			},
			refused: "no input pr"},
		{name: "a base branch that is no branch name",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			setup: func(f *githubfake.Fake) {
				f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
					Base: githubfake.Branch{Ref: "-x", SHA: baseSHA},
					Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: headSHA}})
			},
			refused: "unexpected base branch: -x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			_, err := decide(t, f, tt.event, tt.payload(t))
			if got := refusal(t, err); !strings.Contains(got, tt.refused) {
				t.Errorf("refusal %q, want it to contain %q", got, tt.refused)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		line string
		want trigger.Command
	}{
		{"/patchproof", trigger.Command{}},
		{"/patchproof  \r\nthanks", trigger.Command{}},
		{"/patchproof\tnone", trigger.Command{None: true}},
		{"/patchproof PHP-8.4", trigger.Command{Backports: "PHP-8.4"}},
		{"/patchproof PHP-8.4,PHP-8.5 " + headSHA, trigger.Command{Backports: "PHP-8.4,PHP-8.5", Commit: headSHA}},
		{"/patchproof 2222222", trigger.Command{Commit: "2222222"}},
		{"/patchproof none abcdef0", trigger.Command{None: true, Commit: "abcdef0"}},
		// A hex branch name is given with the commit after it.
		{"/patchproof deadbeef 2222222", trigger.Command{Backports: "deadbeef", Commit: "2222222"}},
		// Six digits are no commit: a branch, which the plan then checks.
		{"/patchproof abcdef", trigger.Command{Backports: "abcdef"}},
		// Lists as people type them: spaces around the commas.
		{"/patchproof PHP-8.4, PHP-8.5", trigger.Command{Backports: "PHP-8.4,PHP-8.5"}},
		{"/patchproof PHP-8.4 ,PHP-8.5 , release/8.3 2222222", trigger.Command{Backports: "PHP-8.4,PHP-8.5,release/8.3", Commit: "2222222"}},
		{"/patchproof PHP-8.4, PHP-8.5 bench=report", trigger.Command{Backports: "PHP-8.4,PHP-8.5", Bench: "report"}},
		{"/patchproof bench=quick", trigger.Command{Bench: "quick"}},
		{"/patchproof none 2222222 stages=codediff, tests", trigger.Command{None: true, Commit: "2222222", Stages: "checkout,build,codediff,tests"}},
		// Options anywhere after the command.
		{"/patchproof threads=1,4,16 PHP-8.4", trigger.Command{Backports: "PHP-8.4", Threads: "1,4,16"}},
		{"/patchproof threads=16", trigger.Command{Threads: "16"}},
		// "report" in a stage list selects nothing, as --stages reads it.
		{"/patchproof stages=bench,report,build", trigger.Command{Stages: "checkout,build,bench"}},
		// The prerequisites alone are what was asked.
		{"/patchproof stages=checkout", trigger.Command{Stages: "checkout"}},
		{"/patchproof help", trigger.Command{Help: true}},
		{"/patchproof  help \r\nthanks", trigger.Command{Help: true}},
		// A fix on the lowest branch, merged up as php-src merges.
		{"/patchproof none merge-up=PHP-8.5, master", trigger.Command{None: true, MergeUp: "PHP-8.5,master"}},
	}
	for _, tt := range tests {
		got, err := trigger.ParseCommand(tt.line)
		if err != nil {
			t.Errorf("ParseCommand(%q): %v", tt.line, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseCommand(%q) (-want +got):\n%s", tt.line, d)
		}
	}
}

// Every refusal of a comment's words names the word and why.
func TestParseCommandRefusals(t *testing.T) {
	tests := []struct {
		line    string
		refused string
		trigger bool // meant as a trigger: the PR gets an answer
	}{
		{"/patchproofing", "not a patchproof command", false},
		{"/patchproof a b c", "too many words (a b c)", true},
		{"/patchproof PHP-8.4 please", "please is not a commit (7 to 40 lowercase hex digits)", true},
		{"/patchproof ABCDEF1", "ABCDEF1 is not a commit: name it in lowercase hex", true},
		{"/patchproof bench=slow", `bench=slow: unknown benchmark settings "slow" (quick, report)`, true},
		{"/patchproof bench=", "bench= has no value", true},
		{"/patchproof bench=quick bench=report", "bench= is given twice", true},
		{"/patchproof threads=0", `threads=0: "0" is not a thread count (1 or more)`, true},
		{"/patchproof threads=4,x", `threads=4,x: "x" is not a thread count`, true},
		{"/patchproof threads=4,,8", `threads=4,,8: "" is not a thread count`, true},
		{"/patchproof threads=4,4", "threads=4,4: 4 is listed twice", true},
		{"/patchproof threads=100000", "threads=100000: 100000 is more than 256 threads", true},
		{"/patchproof stages=bogus", `stages=bogus: unknown stage "bogus" (stages: checkout,build,modules,codediff,abi,tests,race,bench)`, true},
		{"/patchproof stages=tests,", "stages=tests,: an empty item", true},
		{"/patchproof stages=report", "stages=report selects no stage", true},
		{"/patchproof jobs=4", "unknown option jobs= (bench=, threads=, stages=, merge-up=)", true},
		{"/patchproof merge-up=PHP-8.5,PHP-8.5", "merge-up=PHP-8.5,PHP-8.5: PHP-8.5 is listed twice", true},
		{"/patchproof merge-up=-x", `merge-up=-x: "-x" is not a branch`, true},
		{"/patchproof merge-up=a..b", `merge-up=a..b: a..b is not a branch`, true},
		{"/patchproof $(id)=1", `unknown option "$(id)"=`, true},
		{"/patchproof help me", "help takes nothing else", true},
		{"/patchproof help PHP-8.4", "help takes nothing else: /patchproof help", true},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, err := trigger.ParseCommand(tt.line)
			var re *trigger.RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("ParseCommand(%q) = %v, want a refusal", tt.line, err)
			}
			if !strings.Contains(re.Reason, tt.refused) {
				t.Errorf("refusal %q, want it to contain %q", re.Reason, tt.refused)
			}
			if re.NotATrigger == tt.trigger {
				t.Errorf("NotATrigger = %v, want %v", re.NotATrigger, !tt.trigger)
			}
		})
	}
}

// The outputs of a good comment are what the workflow's bash plan wrote:
// the same keys in the same order, targets as jq -c's array, the matrix
// with slugs.
func TestOutputs(t *testing.T) {
	f := newFake(t)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 1,
		Base: githubfake.Branch{Ref: "PHP-8.4", SHA: baseSHA},
		Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "atomic-stats", SHA: headSHA}})
	// The base branch is dropped from the backports, and a branch named
	// twice is one target.
	p, err := decide(t, f, trigger.Comment, commentEvent(t, "write-user", "/patchproof PHP-8.4,release/8.5,PHP-8.5,release/8.5"))
	if err != nil {
		t.Fatal(err)
	}
	want := `repo=php/php-src
owner=php
name=php-src
pr=1
base=PHP-8.4
head_sha=` + headSHA + `
backport_to=release/8.5,PHP-8.5
merge_up=
builder=docker
targets=["PHP-8.4","release/8.5","PHP-8.5"]
matrix={"include":[{"target":"PHP-8.4","slug":"PHP-8.4"},{"target":"release/8.5","slug":"release_8.5"},{"target":"PHP-8.5","slug":"PHP-8.5"}]}
tool_repo=patchproof/patchproof
tool_sha=` + toolSHA + `
bench=
threads=
stages=
supersedes=false
`
	if d := cmp.Diff(want, p.Outputs()); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}

	// A fix on the lowest branch merged up: the higher branches are
	// targets, after the backports, and a job's --merge-up list.
	p, err = decide(t, f, trigger.Comment, commentEvent(t, "write-user", "/patchproof none merge-up=PHP-8.5, master"))
	if err != nil {
		t.Fatal(err)
	}
	out := p.Outputs()
	for _, line := range []string{"merge_up=PHP-8.5,master\n", `targets=["PHP-8.4","PHP-8.5","master"]` + "\n", "backport_to=\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("outputs lack %q:\n%s", line, out)
		}
	}
	if d := p.QueuedStatus().Description; d != "queued: PHP-8.4, PHP-8.5, master; merge-up=PHP-8.5,master" {
		t.Errorf("queued status %q", d)
	}
	// A branch taken two ways is refused.
	_, err = decide(t, f, trigger.Comment, commentEvent(t, "write-user", "/patchproof PHP-8.5 merge-up=PHP-8.5"))
	var re *trigger.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "merge-up=PHP-8.5: PHP-8.5 is the base branch or a backport already") {
		t.Errorf("a backport merged up too: %v, want a refusal", err)
	}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		name          string
		event         string
		payload       func(t *testing.T) []byte
		opt           trigger.Options
		wantBackports string
		wantBuilder   string
		wantTool      string
	}{
		{name: "comment: the defaults",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			wantBackports: "PHP-8.4,PHP-8.5", wantBuilder: "docker", wantTool: toolSHA},
		{name: "comment: none",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof none") },
			opt:           trigger.Options{BackportTo: "PHP-8.3", Builder: "host"},
			wantBackports: "", wantBuilder: "host", wantTool: toolSHA},
		{name: "label: the settings",
			event: trigger.Label, payload: func(t *testing.T) []byte { return labelEvent(t, "write-user", headSHA) },
			opt:           trigger.Options{BackportTo: " PHP-8.3 , ", Builder: "host", ToolRef: "v1.0"},
			wantBackports: "PHP-8.3", wantBuilder: "host", wantTool: toolSHA2},
		{name: "dispatch: an empty backport_to is none",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src", "backport_to": "", "builder": "host"})
			},
			wantBackports: "", wantBuilder: "host", wantTool: toolSHA},
		{name: "the workflow in the tool's repository builds its own commit",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src"})
			},
			opt:           trigger.Options{Repository: "patchproof/patchproof", SHA: toolSHA2},
			wantBackports: "PHP-8.4,PHP-8.5", wantBuilder: "docker", wantTool: toolSHA2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.SetPermission("patchproof", "patchproof", "write-user", "write")
			opt := tt.opt
			opt.EventName, opt.Event = tt.event, tt.payload(t)
			opt.Repository = cmpOr(opt.Repository, "php/php-src")
			p, err := trigger.Decide(context.Background(), client(t, f, appToken), opt)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{strings.Join(p.Backports, ","), p.Builder, p.ToolSHA}
			if d := cmp.Diff([]string{tt.wantBackports, tt.wantBuilder, tt.wantTool}, got); d != "" {
				t.Errorf("backports, builder, tool (-want +got):\n%s", d)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A comment as people type it plans what it says: the branches despite
// the spaces, the options as the jobs' outputs.
func TestCommentOptions(t *testing.T) {
	f := newFake(t)
	p, err := decide(t, f, trigger.Comment, commentEvent(t, "write-user", "/patchproof PHP-8.4, PHP-8.5 bench=report threads=4,16 stages=bench, build"))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{strings.Join(p.Targets, " "), p.Bench, p.Threads, p.Stages}
	if d := cmp.Diff([]string{"master PHP-8.4 PHP-8.5", "report", "4,16", "checkout,build,bench"}, got); d != "" {
		t.Errorf("targets, bench, threads, stages (-want +got):\n%s", d)
	}
	out := p.Outputs()
	for _, line := range []string{"backport_to=PHP-8.4,PHP-8.5\n", "bench=report\n", "threads=4,16\n", "stages=checkout,build,bench\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("outputs lack %q:\n%s", line, out)
		}
	}
	if n := "; bench report; threads 4,16; stages checkout,build,bench;"; !strings.Contains(p.Notice(), n) {
		t.Errorf("notice %q lacks %q", p.Notice(), n)
	}
}

// A dispatch's options are a comment's, checked alike.
func TestDispatchOptions(t *testing.T) {
	f := newFake(t)
	p, err := decide(t, f, trigger.Dispatch, dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src",
		"bench": "quick", "threads": "2, 8", "stages": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{p.Bench, p.Threads, p.Stages}; !cmp.Equal(got, []string{"quick", "2,8", ""}) {
		t.Errorf("bench, threads, stages = %q", got)
	}
	_, err = decide(t, f, trigger.Dispatch, dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src", "bench": "slow"}))
	if got := refusal(t, err); !strings.Contains(got, `bench=slow: unknown benchmark settings "slow"`) {
		t.Errorf("refusal %q", got)
	}
}

// "/patchproof help" plans nothing and asks GitHub only who asked: the
// answer is the grammar, to someone who may trigger.
func TestHelp(t *testing.T) {
	f := newFake(t)
	p, err := decide(t, f, trigger.Comment, commentEvent(t, "write-user", "/patchproof help"))
	if !errors.Is(err, trigger.ErrHelp) || p != nil {
		t.Fatalf("Decide = %v, %v; want ErrHelp", p, err)
	}
	for _, r := range f.Requests() {
		if !strings.HasSuffix(r.Path, "/permission") {
			t.Errorf("help asked %s %s", r.Method, r.Path)
		}
	}
	opt := trigger.Options{EventName: trigger.Comment, Event: commentEvent(t, "write-user", "/patchproof help"), Repository: "php/php-src"}
	if a, ok := trigger.AnswerFor(opt, err); !ok || a.Once != "" || !strings.Contains(a.Body, trigger.Grammar) {
		t.Errorf("answer %+v, %v; want the grammar", a, ok)
	}
}

// Of a user without write access nothing is read but who they are:
// whatever the comment says (help, words that do not parse, branches), it
// is refused as theirs, and the answer is one short line, to be posted at
// most once a day on the PR (Once).
func TestNoAccess(t *testing.T) {
	for _, user := range []string{"read-user", "triage-user", "none-user", "mallory"} {
		for _, body := range []string{"/patchproof", "/patchproof help", "/patchproof a b c", "/patchproof PHP-8.4,$(id)",
			"/patchproof rerun", "/patchproof jobs=4", "/patchproof " + headSHA} {
			t.Run(user+" "+body, func(t *testing.T) {
				f := newFake(t)
				ev := commentEvent(t, user, body)
				_, err := decide(t, f, trigger.Comment, ev)
				var re *trigger.RefusedError
				if !errors.As(err, &re) || !re.NoAccess || !strings.HasPrefix(re.Reason, user+" has permission ") {
					t.Fatalf("Decide = %v, want a refusal for the permission", err)
				}
				if n, perms := len(f.Requests()), f.Count("GET", "/repos/php/php-src/collaborators/"); n != perms || n != 1 {
					t.Errorf("%d requests, %d of the permission; want that one only", n, perms)
				}
				a, ok := trigger.AnswerFor(trigger.Options{EventName: trigger.Comment, Event: ev, Repository: "php/php-src"}, err)
				if !ok || a.Once != trigger.NoAccessReply || strings.Contains(a.Body, "/patchproof [BRANCH") ||
					!strings.HasSuffix(a.Body, github.ReplyMarker(trigger.NoAccessReply)+"\n") || len(a.Body) > 400 ||
					strings.Count(a.Body, "\n") != 3 {
					t.Errorf("answer %+v, %v; want one short line and the marker, once", a, ok)
				}
			})
		}
	}
	// A label of someone who may label but not push is answered alike.
	f := newFake(t)
	ev := labelEvent(t, "triage-user", headSHA)
	_, err := decide(t, f, trigger.Label, ev)
	if a, ok := trigger.AnswerFor(trigger.Options{EventName: trigger.Label, Event: ev, Repository: "php/php-src"}, err); !ok || a.Once != trigger.NoAccessReply {
		t.Errorf("answer to a triager's label %+v, %v; want the short one, once", a, ok)
	}
}

// A backport or merge-up branch must be a branch of the PR's repository,
// by its exact name: a word that is none is refused naming it, in one
// line that points to /patchproof help, and never planned.
func TestUnknownBranches(t *testing.T) {
	for _, tt := range []struct {
		name    string
		event   string
		payload func(t *testing.T) []byte
		opt     trigger.Options
		refused string // "" for planned
	}{
		{name: "a word no command",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof rerun") },
			refused: "rerun is neither a command nor a branch of php/php-src (branch names are case-sensitive); see /patchproof help"},
		{name: "a branch in another case",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof php-8.4") },
			refused: "php-8.4 is neither a command nor a branch of php/php-src"},
		{name: "one of two",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof PHP-8.4, PHP-8.6") },
			refused: "PHP-8.6 is neither a command nor a branch"},
		{name: "merged up into none",
			event: trigger.Comment, payload: func(t *testing.T) []byte {
				return commentEvent(t, "write-user", "/patchproof none merge-up=PHP-8.5,main")
			},
			refused: "main is neither a command nor a branch"},
		{name: "a default backport that is none",
			event: trigger.Comment, payload: func(t *testing.T) []byte { return commentEvent(t, "write-user", "/patchproof") },
			opt:     trigger.Options{BackportTo: "PHP-8.4,PHP-7.4"},
			refused: "PHP-7.4 is not a branch of php/php-src (branch names are case-sensitive)"},
		{name: "a dispatch's",
			event: trigger.Dispatch, payload: func(t *testing.T) []byte {
				return dispatchEvent(t, "write-user", map[string]any{"pr": "1", "repository": "php/php-src", "backport_to": "php-8.5"})
			},
			refused: "php-8.5 is not a branch of php/php-src"},
		{name: "branches that are",
			event: trigger.Comment, payload: func(t *testing.T) []byte {
				return commentEvent(t, "write-user", "/patchproof PHP-8.4,release/8.5 merge-up=PHP-8.5")
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			opt := tt.opt
			opt.EventName, opt.Event, opt.Repository = tt.event, tt.payload(t), "php/php-src"
			p, err := trigger.Decide(context.Background(), client(t, f, appToken), opt)
			got := refusal(t, err)
			if tt.refused == "" {
				if got != "" {
					t.Fatalf("refused: %s", got)
				}
				if d := cmp.Diff([]string{"master", "PHP-8.4", "release/8.5", "PHP-8.5"}, p.Targets); d != "" {
					t.Errorf("targets (-want +got):\n%s", d)
				}
				return
			}
			if !strings.Contains(got, tt.refused) {
				t.Fatalf("refusal %q, want it to contain %q", got, tt.refused)
			}
			if a, ok := trigger.AnswerFor(opt, err); tt.event == trigger.Comment &&
				(!ok || a.Once != "" || strings.Count(a.Body, "\n") != 1 || !strings.Contains(a.Body, "`/patchproof help`") || strings.Contains(a.Body, "/patchproof [BRANCH")) {
				t.Errorf("answer %+v, %v; want one line pointing to /patchproof help", a, ok)
			}
		})
	}
}

// The grammar names the checks a comment selects: the pipeline's stages
// but the checkout and the builds, which come with them.
func TestGrammarNamesTheChecks(t *testing.T) {
	if want := "stages= the checks\nto run, of modules, codediff, abi, tests, race, bench (the checkout"; !strings.Contains(trigger.Grammar, want) {
		t.Errorf("Grammar lacks %q:\n%s", want, trigger.Grammar)
	}
}
