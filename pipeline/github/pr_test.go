package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func TestResolvePR(t *testing.T) {
	tests := []struct {
		name     string
		pr       githubfake.PR
		token    string
		baseURL  func(f *githubfake.Fake) string
		owner    string
		number   int
		want     func(fake string) github.PR
		wantKind string
	}{
		{
			name: "from a fork",
			pr: githubfake.PR{Owner: "php", Repo: "php-src", Number: 7, Title: "Fix GH-1",
				Base: githubfake.Branch{Ref: "PHP-8.4", SHA: baseSHA},
				Head: githubfake.Branch{Owner: "alice", Repo: "php-src", Ref: "fix", SHA: headSHA}},
			token: botToken, owner: "php", number: 7,
			want: func(fake string) github.PR {
				return github.PR{Owner: "php", Repo: "php-src", Number: 7, Title: "Fix GH-1",
					URL:     fake + "/php/php-src/pull/7",
					BaseRef: "PHP-8.4", BaseSHA: baseSHA, BaseCloneURL: fake + "/php/php-src.git",
					HeadRef: "fix", HeadSHA: headSHA, HeadCloneURL: fake + "/alice/php-src.git",
					HeadOwner: "alice", HeadName: "php-src"}
			},
		},
		{
			name: "from a branch of the same repository, read without a token",
			pr: githubfake.PR{Owner: "php", Repo: "php-src", Number: 8, Title: "Same repo",
				Base: githubfake.Branch{Ref: "master", SHA: baseSHA},
				Head: githubfake.Branch{Ref: "topic", SHA: headSHA, CloneURL: "/srv/git/php-src"}},
			owner: "php", number: 8,
			want: func(fake string) github.PR {
				return github.PR{Owner: "php", Repo: "php-src", Number: 8, Title: "Same repo",
					URL:     fake + "/php/php-src/pull/8",
					BaseRef: "master", BaseSHA: baseSHA, BaseCloneURL: fake + "/php/php-src.git",
					HeadRef: "topic", HeadSHA: headSHA, HeadCloneURL: "/srv/git/php-src",
					HeadOwner: "php", HeadName: "php-src"}
			},
		},
		{
			name: "head repository deleted",
			pr: githubfake.PR{Owner: "php", Repo: "php-src", Number: 9, Title: "Orphan",
				Base: githubfake.Branch{Ref: "master", SHA: baseSHA},
				Head: githubfake.Branch{Owner: "gone", Repo: "php-src", Ref: "x", SHA: headSHA, Deleted: true}},
			token: botToken, owner: "PHP", number: 9, // owners are case-insensitive
			want: func(fake string) github.PR {
				return github.PR{Owner: "PHP", Repo: "php-src", Number: 9, Title: "Orphan",
					URL:     fake + "/php/php-src/pull/9",
					BaseRef: "master", BaseSHA: baseSHA, BaseCloneURL: fake + "/php/php-src.git",
					HeadRef: "x", HeadSHA: headSHA}
			},
		},
		{
			name: "base URL without /api/v3/, as a GitHub Enterprise user would give it",
			pr: githubfake.PR{Owner: "php", Repo: "php-src", Number: 10, Title: "GHE",
				Base: githubfake.Branch{Ref: "master", SHA: baseSHA},
				Head: githubfake.Branch{Ref: "topic", SHA: headSHA}},
			token: botToken, owner: "php", number: 10,
			baseURL: func(f *githubfake.Fake) string { return strings.TrimSuffix(f.URL(), "api/v3/") },
			want: func(fake string) github.PR {
				return github.PR{Owner: "php", Repo: "php-src", Number: 10, Title: "GHE",
					URL:     fake + "/php/php-src/pull/10",
					BaseRef: "master", BaseSHA: baseSHA, BaseCloneURL: fake + "/php/php-src.git",
					HeadRef: "topic", HeadSHA: headSHA, HeadCloneURL: fake + "/php/php-src.git",
					HeadOwner: "php", HeadName: "php-src"}
			},
		},
		{name: "no such PR", token: botToken, owner: "php", number: 404, wantKind: "no such PR"},
		{name: "no such repository", token: botToken, owner: "nobody", number: 1, wantKind: "no such PR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if tt.pr.Number != 0 {
				f.AddPR(tt.pr)
			}
			var opts github.Options
			if tt.baseURL != nil {
				opts.BaseURL = tt.baseURL(f)
			}
			c, _ := newClient(t, f, tt.token, opts)
			got, err := c.ResolvePR(context.Background(), tt.owner, "php-src", tt.number)
			if k := errKind(err); k != tt.wantKind {
				t.Fatalf("error %v is %q, want %q", err, k, tt.wantKind)
			}
			if err != nil {
				var nf *github.NoSuchPRError
				if errors.As(err, &nf) && (nf.Owner != tt.owner || nf.Number != tt.number) {
					t.Errorf("NoSuchPRError names %s#%d", nf.Owner, nf.Number)
				}
				if n := f.Count("GET", "/repos/"); n != 1 {
					t.Errorf("%d requests, want 1: a 404 is an answer", n)
				}
				return
			}
			fake := strings.TrimSuffix(f.URL(), githubfake.APIPrefix+"/")
			if diff := cmp.Diff(tt.want(fake), got); diff != "" {
				t.Errorf("PR (-want +got):\n%s", diff)
			}
		})
	}
}
