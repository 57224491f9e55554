package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func TestSetStatus(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct {
		name     string
		token    string
		sha      string
		s        github.Status
		want     []githubfake.Status
		wantKind string // "" no error, "invalid" an error before any request
	}{
		{
			name: "success with a target URL", token: botToken, sha: headSHA,
			s: github.Status{State: github.StateSuccess, Description: "NTS identical; tests pass",
				TargetURL: "https://github.com/php/php-src/actions/runs/1"},
			want: []githubfake.Status{{State: "success", Context: "patchproof",
				Description: "NTS identical; tests pass", TargetURL: "https://github.com/php/php-src/actions/runs/1",
				Creator: bot}},
		},
		{
			name: "own context, as an Actions token", token: appToken, sha: baseSHA,
			s:    github.Status{State: github.StatePending, Context: "patchproof/PHP-8.4"},
			want: []githubfake.Status{{State: "pending", Context: "patchproof/PHP-8.4", Creator: app}},
		},
		{
			name: "a long description is cut to 140 characters", token: botToken, sha: headSHA,
			s: github.Status{State: github.StateFailure, Description: long},
			want: []githubfake.Status{{State: "failure", Context: "patchproof",
				Description: strings.Repeat("é", 139) + "…", Creator: bot}},
		},
		{name: "invalid state", token: botToken, sha: headSHA,
			s: github.Status{State: "passed"}, wantKind: "invalid"},
		{name: "no commit", token: botToken,
			s: github.Status{State: github.StateError}, wantKind: "invalid"},
		{name: "no token", sha: headSHA, s: github.Status{State: github.StateError}, wantKind: "no token"},
		{name: "unknown commit", token: botToken, sha: strings.Repeat("3", 40),
			s: github.Status{State: github.StateError}, wantKind: "HTTP 422"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c, s := newClient(t, f, tt.token, github.Options{})
			err := c.SetStatus(context.Background(), "php", "php-src", tt.sha, tt.s)
			kind := errKind(err)
			if tt.wantKind == "invalid" && strings.HasPrefix(kind, "other: ") {
				kind = "invalid"
			}
			if kind != tt.wantKind {
				t.Errorf("error %v is %q, want %q", err, kind, tt.wantKind)
			}
			if err == nil {
				if diff := cmp.Diff(tt.want, f.Statuses("php", "php-src", tt.sha)); diff != "" {
					t.Errorf("statuses (-want +got):\n%s", diff)
				}
			}
			wantReqs := 1
			if tt.wantKind == "invalid" || tt.wantKind == "no token" {
				wantReqs = 0
			}
			if n := len(f.Requests()); n != wantReqs {
				t.Errorf("%d requests, want %d", n, wantReqs)
			}
			if w := s.got(); len(w) != 0 {
				t.Errorf("waited %v, want no retries", w)
			}
		})
	}
}
