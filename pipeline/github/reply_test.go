package github_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/pipeline/github"
)

// A reply is a new comment each time, never sticky; one that would begin
// with a command, or hold the token, is refused before anything is sent.
func TestReply(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, botToken, github.Options{})
	ctx := context.Background()
	for range 2 {
		out, err := c.Reply(ctx, "php", "php-src", 1, "@alice patchproof did not run: why.")
		if err != nil || out.Action != github.Created || out.CommentID == 0 {
			t.Fatalf("Reply = %+v, %v", out, err)
		}
	}
	if cs := f.Comments("php", "php-src", 1); len(cs) != 2 || cs[1].Author != bot {
		t.Fatalf("comments %+v, want two replies by %s", cs, bot)
	}
	for _, body := range []string{"/patchproof none", "  /patchproof", "", "the token " + botToken} {
		if _, err := c.Reply(ctx, "php", "php-src", 1, body); err == nil || strings.Contains(err.Error(), botToken) {
			t.Errorf("Reply(%q) = %v, want a refusal without the token", body, err)
		}
	}
	if n := f.Count("POST", "/repos/php/php-src/issues/1/comments"); n != 2 {
		t.Errorf("%d comments posted, want 2", n)
	}
	var dry bytes.Buffer
	d, _ := newClient(t, f, botToken, github.Options{DryRun: &dry})
	if out, err := d.Reply(ctx, "php", "php-src", 1, "help text"); err != nil || out.Action != github.DryRun || !strings.Contains(dry.String(), "would reply on php/php-src#1:\nhelp text") {
		t.Errorf("dry run: %+v, %v, %q", out, err, dry.String())
	}
	if n := len(f.Comments("php", "php-src", 1)); n != 2 {
		t.Errorf("a dry run posted: %d comments", n)
	}
}

// RecentReply finds our marked reply written since a time: not another
// kind's, not one by someone else (a commenter can copy the marker), not
// an older one.
func TestRecentReply(t *testing.T) {
	f := newFake(t)
	clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.SetClock(func() time.Time { return clock })
	c, _ := newClient(t, f, appToken, github.Options{Login: app})
	ctx := context.Background()
	find := func(since time.Time) bool {
		t.Helper()
		_, ok, err := c.RecentReply(ctx, "php", "php-src", 1, "no-access", since)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if find(clock.Add(-24 * time.Hour)) {
		t.Error("found a reply on a PR without comments")
	}
	f.AddComment("php", "php-src", 1, "mallory", "copied "+github.ReplyMarker("no-access"))
	f.AddComment("php", "php-src", 1, app, "another kind "+github.ReplyMarker("other"))
	if find(clock.Add(-24 * time.Hour)) {
		t.Error("found someone else's comment, or another kind's")
	}
	if _, err := c.Reply(ctx, "php", "php-src", 1, "@mallory short\n"+github.ReplyMarker("no-access")); err != nil {
		t.Fatal(err)
	}
	if !find(clock.Add(-24 * time.Hour)) {
		t.Error("did not find our reply of the last day")
	}
	if find(clock.Add(time.Second)) {
		t.Error("found a reply older than asked for")
	}
	if n := f.Count("GET", "/repos/php/php-src/issues/1/comments"); n != 4 {
		t.Errorf("%d listings, want one a look", n)
	}
}
