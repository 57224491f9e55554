package github

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseMarker(t *testing.T) {
	type result struct {
		Key, Run string
		OK       bool
	}
	tests := []struct {
		body string
		want result
	}{
		{marker("summary", "12") + "\nbody", result{"summary", "12", true}},
		{marker("backport/PHP-8.4", "2025-06-01T12:00:00Z") + "\r\nbody", result{"backport/PHP-8.4", "2025-06-01T12:00:00Z", true}},
		{marker("summary", "12"), result{"summary", "12", true}},
		{"text\n" + marker("summary", "12"), result{}},               // not the first line
		{"<!-- patchproof:v2 key=summary run=1 -->\nbody", result{}}, // another version
		{" " + marker("summary", "12") + "\nbody", result{}},         // not at the start
		{"<!-- patchproof:v1 key=summary -->\nbody", result{}},       // no run
		{"<!-- patchproof:v1 key=a b run=1 -->\nbody", result{}},     // space in key
		{"", result{}},
	}
	for _, tt := range tests {
		k, r, ok := parseMarker(tt.body)
		if diff := cmp.Diff(tt.want, result{k, r, ok}); diff != "" {
			t.Errorf("parseMarker(%q) (-want +got):\n%s", tt.body, diff)
		}
	}
}

func TestNewerRun(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"2", "1", true},
		{"1", "2", false},
		{"1", "1", false},
		{"10", "9", true}, // numerically, not as text
		{"2025-06-01T12:00:01Z", "2025-06-01T12:00:00Z", true},
		{"2025-06-01T12:00:00.000000001Z", "2025-06-01T12:00:00Z", true},
		{"2025-06-01T14:00:00+02:00", "2025-06-01T12:00:00Z", false}, // the same instant
		{"2025-06-01T12:00:00Z", "2025-06-01T14:00:01+02:00", false},
		{"5", "2025-06-01T12:00:00Z", false}, // different kinds: not ordered
		{"2025-06-01T12:00:00Z", "5", false},
		{"5", "garbage", false},
		{"garbage", "5", false},
	}
	for _, tt := range tests {
		if got := newerRun(tt.a, tt.b); got != tt.want {
			t.Errorf("newerRun(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for attempt, step := range []time.Duration{1, 2, 4, 8, 16, 30, 30} {
		step *= time.Second
		seen := map[time.Duration]bool{}
		for range 200 {
			d := backoff(attempt)
			if d < step/2 || d > step {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", attempt, d, step/2, step)
			}
			seen[d] = true
		}
		if len(seen) < 100 {
			t.Errorf("backoff(%d): %d distinct waits in 200, want jitter", attempt, len(seen))
		}
	}
	if d := backoff(100); d < backoffCap/2 || d > backoffCap {
		t.Errorf("backoff(100) = %v, want capped", d)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 140, "short"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"ééééééé", 6, "ééééé…"},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
