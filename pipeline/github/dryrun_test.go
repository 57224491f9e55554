package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchproof/patchproof/pipeline/github"
)

func TestDryRun(t *testing.T) {
	const marked = "<!-- patchproof:v1 key=summary run=7 -->\nthe summary\n"
	comment := github.Comment{Key: "summary", Run: "7", Body: "the summary"}
	tests := []struct {
		name    string
		token   string
		seed    []string // bodies of the bot's comments
		status  bool     // SetStatus instead of UpsertComment
		want    github.Outcome
		wantOut string
	}{
		{
			name: "would create", token: botToken,
			want:    github.Outcome{Action: github.DryRun, Planned: github.Created},
			wantOut: "dry run: would create a comment on php/php-src#1:\n" + marked,
		},
		{
			name: "would update", token: botToken, seed: []string{body("summary", "6", "older")},
			want:    github.Outcome{Action: github.DryRun, Planned: github.Updated, CommentID: 1001},
			wantOut: "dry run: would update comment 1001 on php/php-src#1:\n" + marked,
		},
		{
			name: "unchanged", token: botToken, seed: []string{body("summary", "7", "the summary")},
			want:    github.Outcome{Action: github.DryRun, Planned: github.Unchanged, CommentID: 1001},
			wantOut: "dry run: comment 1001 on php/php-src#1 is unchanged:\n" + marked,
		},
		{
			name: "newer run there", token: botToken, seed: []string{body("summary", "8", "newer")},
			want:    github.Outcome{Action: github.DryRun, Planned: github.SkippedOlder, CommentID: 1001},
			wantOut: "dry run: comment 1001 on php/php-src#1 shows a newer run (8); would leave it:\n" + marked,
		},
		{
			name: "duplicates", token: botToken,
			seed: []string{body("summary", "5", "five"), body("summary", "6", "six")},
			want: github.Outcome{Action: github.DryRun, Planned: github.Updated, CommentID: 1001,
				Deleted: []int64{1002}},
			wantOut: "dry run: would update comment 1001 on php/php-src#1; would delete duplicates 1002:\n" + marked,
		},
		{
			name:    "no token: nothing to look with",
			want:    github.Outcome{Action: github.DryRun},
			wantOut: "dry run: would create or update the comment (no token to look for it) on php/php-src#1:\n" + marked,
		},
		{
			name: "status", token: botToken, status: true,
			wantOut: `dry run: would set status "patchproof" on php/php-src@` + headSHA +
				`: failure "1 test regressed" https://example.com/run/1` + "\n",
		},
		{
			name: "status without a token", status: true,
			wantOut: `dry run: would set status "patchproof" on php/php-src@` + headSHA +
				`: failure "1 test regressed" https://example.com/run/1` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			for _, b := range tt.seed {
				f.AddComment("php", "php-src", 1, bot, b)
			}
			before := f.Comments("php", "php-src", 1)
			var out strings.Builder
			c, _ := newClient(t, f, tt.token, github.Options{DryRun: &out})
			ctx := context.Background()
			if tt.status {
				_, err := c.SetStatus(ctx, "php", "php-src", headSHA, github.Status{
					State: github.StateFailure, Description: "1 test regressed", TargetURL: "https://example.com/run/1"})
				if err != nil {
					t.Fatal(err)
				}
				// With a token it looks, as a real run would; without,
				// it asks nothing.
				if n := len(f.Requests()); tt.token == "" && n != 0 {
					t.Errorf("%d requests, want none", n)
				}
			} else {
				got, err := c.UpsertComment(ctx, "php", "php-src", 1, comment)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got, ignoreURL, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("outcome (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if n := writes(f); n != 0 {
				t.Errorf("%d writes, want none", n)
			}
			if diff := cmp.Diff(before, f.Comments("php", "php-src", 1)); diff != "" {
				t.Errorf("comments changed (-before +after):\n%s", diff)
			}
			if len(f.Statuses("php", "php-src", headSHA)) != 0 {
				t.Error("a status was set")
			}
		})
	}
}
