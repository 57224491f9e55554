package githubfake_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

func TestCommits(t *testing.T) {
	f := newFake(t)
	sha := "abcdef0123456789abcdef0123456789abcdef01"
	f.AddRef("patchproof", "patchproof", "main", sha)
	f.AddRef("patchproof", "patchproof", "release/1.0", "abcdef9999999999999999999999999999999999")
	tests := []struct {
		path    string
		want    int
		wantSHA string
	}{
		{"/repos/patchproof/patchproof/commits/main", 200, sha},
		{"/repos/Patchproof/Patchproof/commits/release/1.0", 200, "abcdef9999999999999999999999999999999999"},
		{"/repos/patchproof/patchproof/commits/" + sha, 200, sha},
		{"/repos/patchproof/patchproof/commits/abcdef0", 200, sha},
		{"/repos/patchproof/patchproof/commits/abcdef", 422, ""}, // too short
		{"/repos/patchproof/patchproof/commits/abcdef9", 200, "abcdef9999999999999999999999999999999999"},
		{"/repos/patchproof/patchproof/commits/nope", 422, ""},
		{"/repos/php/php-src/commits/bbb", 422, ""}, // a PR's head, but not 7 digits
		{"/repos/nobody/nothing/commits/main", 404, ""},
	}
	for _, tt := range tests {
		code, body, _ := do(t, f, "GET", tt.path, "", "")
		if code != tt.want {
			t.Errorf("%s: %d, want %d (%v)", tt.path, code, tt.want, body)
			continue
		}
		if tt.wantSHA != "" && body.(map[string]any)["sha"] != tt.wantSHA {
			t.Errorf("%s: sha %v, want %s", tt.path, body.(map[string]any)["sha"], tt.wantSHA)
		}
	}
}

func TestPermissions(t *testing.T) {
	f := newFake(t)
	f.SetPermission("php", "php-src", "bot", "maintain")
	f.SetPermission("php", "php-src", "Carol", "triage")
	tests := []struct {
		user, token string
		want        int
		level, role string
	}{
		{"carol", "app-token", 200, "read", "triage"}, // logins are case-insensitive
		{"bot", "app-token", 200, "write", "maintain"},
		{"stranger", "app-token", 200, "read", "read"},
		{"carol", "bot-token", 200, "read", "triage"}, // bot may push
		{"carol", "eve-token", 403, "", ""},           // eve may not
		{"carol", "", 401, "", ""},
	}
	for _, tt := range tests {
		code, body, _ := do(t, f, "GET", "/repos/php/php-src/collaborators/"+tt.user+"/permission", tt.token, "")
		if code != tt.want {
			t.Errorf("%s as %q: %d, want %d (%v)", tt.user, tt.token, code, tt.want, body)
			continue
		}
		if code == 200 {
			m := body.(map[string]any)
			if m["permission"] != tt.level || m["role_name"] != tt.role {
				t.Errorf("%s: permission %v role %v, want %s %s", tt.user, m["permission"], m["role_name"], tt.level, tt.role)
			}
		}
	}
	if code, _, _ := do(t, f, "GET", "/repos/nobody/nothing/collaborators/bot/permission", "app-token", ""); code != 404 {
		t.Errorf("unknown repository: %d, want 404", code)
	}
}

func TestActivity(t *testing.T) {
	f := newFake(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "x", After: "a1", Actor: "alice", Time: t0})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "refs/heads/x", Type: "force_push", Before: "a1", After: "a2", Time: t0.Add(time.Minute)})
	f.AddActivity("alice", "php-src", githubfake.Activity{Ref: "y", After: "b1", Time: t0.Add(2 * time.Minute)})
	tests := []struct {
		query string
		want  []string // after, newest first unless asked otherwise
	}{
		{"", []string{"b1", "a2", "a1"}},
		{"?ref=refs/heads/x", []string{"a2", "a1"}},
		{"?ref=x&direction=asc", []string{"a1", "a2"}},
		{"?ref=x&activity_type=push", []string{"a1"}},
		{"?ref=x&per_page=1", []string{"a2"}},
		{"?ref=z", []string{}},
	}
	for _, tt := range tests {
		code, body, _ := do(t, f, "GET", "/repos/alice/php-src/activity"+tt.query, "", "")
		if code != 200 {
			t.Fatalf("%s: %d", tt.query, code)
		}
		got := []string{}
		for _, a := range body.([]any) {
			got = append(got, a.(map[string]any)["after"].(string))
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.query, d)
		}
	}
	_, body, _ := do(t, f, "GET", "/repos/alice/php-src/activity?ref=x&per_page=1", "", "")
	want := map[string]any{"id": 1.0, "node_id": "RA_1", "before": "a1", "after": "a2", "ref": "refs/heads/x",
		"timestamp": "2025-06-01T12:01:00Z", "activity_type": "force_push", "actor": nil}
	if d := cmp.Diff(want, body.([]any)[0]); d != "" {
		t.Errorf("entry (-want +got):\n%s", d)
	}
	if code, _, _ := do(t, f, "GET", "/repos/nobody/nothing/activity", "", ""); code != 404 {
		t.Errorf("unknown repository: %d, want 404", code)
	}
}
