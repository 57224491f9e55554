package github_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
