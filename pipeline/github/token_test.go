package github_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

// TestTokenNeverShown provokes every kind of failure and checks that the
// token is in no error text and no dry-run output.
func TestTokenNeverShown(t *testing.T) {
	const unknown = "ghp_UnknownT0kenThatMustNeverBeSeen00004"
	tests := []struct {
		name  string
		token string
		opts  func(f *githubfake.Fake) github.Options
		call  func(ctx context.Context, c *github.Client, f *githubfake.Fake) error
	}{
		{
			name: "no such PR",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				_, err := c.ResolvePR(ctx, "php", "php-src", 404)
				return err
			},
		},
		{
			name:  "unknown token",
			token: unknown,
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				_, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "k", Body: "x"})
				return err
			},
		},
		{
			name: "server errors until retries run out",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				f.FailNext("", "/", http.StatusBadGateway, 100)
				_, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "k", Body: "x"})
				return err
			},
		},
		{
			name: "a server that echoes the Authorization header",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				f.Inject("", "/", 1, githubfake.Fault{Status: http.StatusBadRequest,
					Message: "malformed header Authorization: Bearer " + botToken})
				_, err := c.ResolvePR(ctx, "php", "php-src", 1)
				if err != nil && !strings.Contains(err.Error(), "[REDACTED]") {
					t.Errorf("error %q: want the echoed token redacted", err)
				}
				return err
			},
		},
		{
			name: "rate limited past MaxWait",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				f.Inject("", "/", 1, githubfake.PrimaryRateLimit(http.StatusForbidden, now.Add(time.Hour)))
				_, err := c.SetStatus(ctx, "php", "php-src", headSHA, github.Status{State: github.StateSuccess})
				return err
			},
		},
		{
			name: "validation failure",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				_, err := c.SetStatus(ctx, "php", "php-src", "deadbeef", github.Status{State: github.StateSuccess})
				return err
			},
		},
		{
			name: "server unreachable",
			opts: func(f *githubfake.Fake) github.Options {
				return github.Options{BaseURL: "http://127.0.0.1:1/api/v3/"}
			},
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				_, err := c.ResolvePR(ctx, "php", "php-src", 1)
				return err
			},
		},
		{
			name: "context canceled",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				_, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "k", Body: "x"})
				return err
			},
		},
		{
			name: "a comment quoting the token",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				_, err := c.UpsertComment(ctx, "php", "php-src", 1, github.Comment{Key: "k", Body: "token: " + botToken})
				return err
			},
		},
		{
			name: "a status quoting the token",
			call: func(ctx context.Context, c *github.Client, f *githubfake.Fake) error {
				_, err := c.SetStatus(ctx, "php", "php-src", headSHA, github.Status{
					State: github.StateError, Description: "auth " + botToken})
				return err
			},
		},
	}
	for _, tt := range tests {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dry-run=%v", tt.name, dry), func(t *testing.T) {
				f := newFake(t)
				token := tt.token
				if token == "" {
					token = botToken
				}
				var opts github.Options
				if tt.opts != nil {
					opts = tt.opts(f)
				}
				var out bytes.Buffer
				if dry {
					opts.DryRun = &out
				}
				c, _ := newClient(t, f, token, opts)
				err := tt.call(context.Background(), c, f)
				if err == nil && !dry {
					t.Fatal("no error")
				}
				for what, text := range map[string]string{
					"error":          fmt.Sprint(err),
					"dry-run output": out.String(),
					"client":         fmt.Sprintf("%v %+v %#v", c, c, c),
				} {
					if strings.Contains(text, token) {
						t.Errorf("%s shows the token: %s", what, text)
					}
				}
			})
		}
	}
}

// TestTokenFromEnvironment checks where the token is read from, by whether
// GET /user succeeds.
func TestTokenFromEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		wantErr string
	}{
		{name: "GITHUB_TOKEN", env: []string{"GITHUB_TOKEN", botToken}},
		{name: "GH_TOKEN", env: []string{"GH_TOKEN", botToken}},
		{name: "GITHUB_TOKEN wins", env: []string{"GITHUB_TOKEN", botToken, "GH_TOKEN", "ghp_wrong"}},
		{name: "whitespace trimmed", env: []string{"GITHUB_TOKEN", " " + botToken + "\n"}},
		{name: "none", wantErr: "no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c, _ := newClient(t, f, "", github.Options{Getenv: env(tt.env...)})
			_, err := c.UpsertComment(context.Background(), "php", "php-src", 1,
				github.Comment{Key: "summary", Run: "1", Body: "x"})
			if got := errKind(err); got != tt.wantErr {
				t.Errorf("error %v is %q, want %q", err, got, tt.wantErr)
			}
		})
	}
}
