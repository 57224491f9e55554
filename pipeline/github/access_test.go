package github_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func TestPermission(t *testing.T) {
	f := newFake(t)
	f.SetPermission("php", "php-src", bot, "write")
	for _, role := range []string{"admin", "maintain", "write", "triage", "read", "none"} {
		f.SetPermission("php", "php-src", role+"-user", role)
	}
	tests := []struct {
		user, token string
		want        github.Permission
		canWrite    bool
		wantKind    string
		accessErr   int
	}{
		{user: "admin-user", token: appToken, want: github.Permission{Level: "admin", Role: "admin"}, canWrite: true},
		{user: "maintain-user", token: appToken, want: github.Permission{Level: "write", Role: "maintain"}, canWrite: true},
		{user: "write-user", token: botToken, want: github.Permission{Level: "write", Role: "write"}, canWrite: true},
		{user: "triage-user", token: appToken, want: github.Permission{Level: "read", Role: "triage"}},
		{user: "read-user", token: appToken, want: github.Permission{Level: "read", Role: "read"}},
		{user: "none-user", token: appToken, want: github.Permission{Level: "none", Role: "none"}},
		{user: "github-actions[bot]", token: appToken, want: github.Permission{Level: "read", Role: "read"}},
		// mallory has no push access: GitHub will not tell her.
		{user: "write-user", token: malloryToken, wantKind: "HTTP 403", accessErr: 403},
		{user: "write-user", wantKind: "HTTP 401"},
	}
	for _, tt := range tests {
		c, _ := newClient(t, f, tt.token, github.Options{})
		got, err := c.Permission(context.Background(), "php", "php-src", tt.user)
		if k := errKind(err); k != tt.wantKind {
			t.Errorf("%s as %q: error %q (%v), want %q", tt.user, tt.token, k, err, tt.wantKind)
			continue
		}
		var ae *github.AccessError
		if tt.accessErr != 0 && (!errors.As(err, &ae) || ae.Status != tt.accessErr) {
			t.Errorf("%s: %v is not an AccessError %d", tt.user, err, tt.accessErr)
		}
		if err != nil {
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.user, d)
		}
		if got.CanWrite() != tt.canWrite {
			t.Errorf("%s: CanWrite %v, want %v", tt.user, got.CanWrite(), tt.canWrite)
		}
	}
	// GitHub reports a custom role built on write as its name, with the
	// base level: that is write too.
	if !(github.Permission{Level: "write", Role: "release-manager"}).CanWrite() {
		t.Error("a custom role on write cannot write")
	}
}

func TestRefActivity(t *testing.T) {
	f := newFake(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Before: baseSHA, After: headSHA, Actor: "alice", Time: t0})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "atomic-stats", Type: "force_push", Before: headSHA, After: baseSHA, Time: t0.Add(time.Second)})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "other", After: headSHA, Time: t0.Add(time.Hour)})
	c, _ := newClient(t, f, appToken, github.Options{})
	got, err := c.RefActivity(context.Background(), "alice", "php-src", "refs/heads/atomic-stats", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []github.Activity{
		{Type: "force_push", Ref: "refs/heads/atomic-stats", Before: headSHA, After: baseSHA, Time: t0.Add(time.Second)},
		{Type: "push", Ref: "refs/heads/atomic-stats", Before: baseSHA, After: headSHA, Actor: "alice", Time: t0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("activity (-want +got):\n%s", d)
	}
	q := f.Requests()[len(f.Requests())-1].Query
	if want := "direction=desc&per_page=10&ref=refs%2Fheads%2Fatomic-stats"; q != want {
		t.Errorf("query %q, want %q: every activity type, newest first", q, want)
	}

	f.FailNext("GET", "/repos/alice/php-src/activity", 404, 1)
	_, err = c.RefActivity(context.Background(), "alice", "php-src", "refs/heads/atomic-stats", 10)
	var ae *github.AccessError
	if !errors.As(err, &ae) || ae.Status != 404 {
		t.Errorf("404: %v is not an AccessError 404", err)
	}
	f.FailNext("GET", "/repos/alice/php-src/activity", 502, 1)
	noRetry, _ := newClient(t, f, appToken, github.Options{MaxRetries: -1})
	if _, err = noRetry.RefActivity(context.Background(), "alice", "php-src", "refs/heads/atomic-stats", 10); err == nil || errors.As(err, &ae) {
		t.Errorf("502: %v, want an error that is no AccessError", err)
	}
}

func TestResolveCommit(t *testing.T) {
	f := newFake(t)
	f.AddRef("patchproof", "patchproof", "release/1.0", headSHA)
	c, _ := newClient(t, f, appToken, github.Options{})
	for _, ref := range []string{"release/1.0", headSHA, headSHA[:7]} {
		got, err := c.ResolveCommit(context.Background(), "patchproof", "patchproof", ref)
		if err != nil || got != headSHA {
			t.Errorf("ResolveCommit(%s) = %q, %v; want %s", ref, got, err, headSHA)
		}
	}
	if _, err := c.ResolveCommit(context.Background(), "patchproof", "patchproof", "nope"); errKind(err) != "HTTP 422" {
		t.Errorf("unknown ref: %v, want HTTP 422", err)
	}
}

// A branch is there only by its exact name: another case is another
// branch (or none), and GitHub's redirect from a renamed branch's old name
// is not the name asked for.
func TestBranch(t *testing.T) {
	f := newFake(t)
	f.AddBranch("php", "php-src", "PHP-8.4", baseSHA)
	f.AddBranch("php", "php-src", "release/8.5", headSHA)
	c, _ := newClient(t, f, appToken, github.Options{})
	for _, tt := range []struct {
		branch string
		sha    string
		ok     bool
	}{
		{"PHP-8.4", baseSHA, true},
		{"php-8.4", "", false},
		{"release/8.5", headSHA, true},
		{"master", baseSHA, true}, // the PR's base
		{"rerun", "", false},
	} {
		sha, ok, err := c.Branch(context.Background(), "php", "php-src", tt.branch)
		if err != nil || ok != tt.ok || sha != tt.sha {
			t.Errorf("Branch(%q) = %q, %v, %v; want %q, %v", tt.branch, sha, ok, err, tt.sha, tt.ok)
		}
	}
	if _, _, err := c.Branch(context.Background(), "nobody", "nothing", "master"); err != nil {
		t.Errorf("a repository GitHub does not know: %v, want no such branch", err)
	}
	f.FailNext("GET", "/repos/php/php-src/branches/", 403, 1)
	if _, _, err := c.Branch(context.Background(), "php", "php-src", "PHP-8.4"); err == nil {
		t.Error("Branch read a 403 as no such branch; want an error")
	}
}
