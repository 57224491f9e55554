package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/pipeline/results"
)

// Every flag's value is checked while the run is planned, before anything
// is fetched or written: a bad one exits 2 with one line naming the flag
// and the value, and leaves --out and the cache's mirrors untouched.
func TestBadFlagValues(t *testing.T) {
	cleanEnv(t)
	// A URL, so that a fetch would make a mirror in the cache.
	remote := "file://" + smallPHPRepo(t)
	run := func(args ...string) []string {
		return append([]string{"run", "--repo", remote, "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats"}, args...)
	}
	for _, tt := range []struct {
		name  string
		args  []string
		names string // the flag and value the line must name
	}{
		{"negative jobs", run("--jobs", "-1"), "--jobs -1"},
		{"negative threads", run("--threads", "-5"), "--threads -5"},
		{"negative passes", run("--passes", "-3"), "--passes -3"},
		{"server CPUs not a list", run("--server-cpus", "abc;rm"), "--server-cpus abc;rm"},
		{"load CPUs open range", run("--load-cpus", "1-"), "--load-cpus 1-"},
		{"database CPUs backwards", run("--db-cpus", "3-1"), "--db-cpus 3-1"},
		{"CPUs empty item", run("--server-cpus", "0,,2"), "--server-cpus 0,,2"},
		{"objects not a glob", run("--objects", "["), "--objects ["},
		{"objects outside the build", run("--objects", "../../*.o"), "--objects ../../*.o"},
		{"objects absolute", run("--objects", "/etc/*"), "--objects /etc/*"},
		{"GitHub API not a URL", run("--github-api", "::bad"), "--github-api ::bad"},
		{"GitHub API not HTTP", run("--github-api", "ftp://example.com/"), "--github-api ftp://example.com/"},
		{"GitHub API no host", run("--github-api", "https:///api"), "--github-api https:///api"},
		{"stages none", run("--stages", ","), "--stages ,"},
		{"stages empty", run("--stages", ""), "--stages"},
		{"stages empty item", run("--stages", "checkout,"), "--stages checkout,"},
		{"variants none", run("--variants", ","), "--variants ,"},
		{"variants empty", run("--variants", ""), "--variants"},
		{"variant unknown", run("--variants", "nts,tsan"), "--variants nts,tsan"},
		{"stage unknown", run("--stages", "checkout,lint"), "--stages checkout,lint"},
		{"builder unknown", run("--builder", "podman"), "--builder podman"},
		{"profile unknown", run("--profile", "minimal"), "--profile minimal"},
		{"bench unknown", run("--bench", "full"), "--bench full"},
		{"backport-to empty item", run("--backport-to", "PHP-8.4,,PHP-8.5"), "--backport-to PHP-8.4,,PHP-8.5"},
		{"expect-head abbreviated", run("--expect-head", "1a2b3c4"), "--expect-head 1a2b3c4"},
		{"expect-head upper case", run("--expect-head", strings.Repeat("A", 40)), "--expect-head " + strings.Repeat("A", 40)},
		{"head a pattern", run("--head", "*"), "--head *"},
		{"base a pattern", []string{"run", "--repo", remote, "--base", "PHP-8.?", "--head", "mysqlnd-atomic-stats"}, "--base PHP-8.?"},
		{"head a range", run("--head", "PHP-8.2..mysqlnd-atomic-stats"), "--head PHP-8.2..mysqlnd-atomic-stats"},
		{"head a revision", run("--head", "mysqlnd-atomic-stats~1"), "--head mysqlnd-atomic-stats~1"},
		{"head a parent", run("--head", "mysqlnd-atomic-stats^"), "--head mysqlnd-atomic-stats^"},
		{"head a refspec", run("--head", "a:b"), "--head a:b"},
		{"head a character class", run("--head", "[ab]"), "--head [ab]"},
		{"head with a space", run("--head", "a b"), "--head a b"},
		{"head an option", run("--head", "-x"), "--head -x"},
		{"head a lock file", run("--head", "topic.lock"), "--head topic.lock"},
		{"head a directory", run("--head", "topic/"), "--head topic/"},
		{"head a reflog", run("--head", "topic@{1}"), "--head topic@{1}"},
		{"backport-to a pattern", run("--backport-to", "PHP-8.*"), "--backport-to PHP-8.*"},
		{"backport a pattern", run("--backport-to", "PHP-8.4", "--backport", "PHP-8.4=refs/heads/*"), "--backport PHP-8.4=refs/heads/*"},
		{"target a pattern", run("--target", "PHP-*"), "--target PHP-*"},

		{"report: GitHub API not a URL", []string{"report", "--post", "--pr", "1", "--github-api", "::bad", "RESULTS"}, "--github-api ::bad"},
		{"report: negative PR", []string{"report", "--post", "--pr", "-3", "RESULTS"}, "--pr -3"},
		{"report: no targets expected", []string{"report", "--expect-targets", ",", "RESULTS"}, "--expect-targets ,"},
		{"doctor: builder unknown", []string{"doctor", "--builder", "podman"}, "--builder podman"},
		{"codediff: objects not a glob", []string{"codediff", "--objects", "[", "BASE", "HEAD"}, "--objects ["},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out, cache := filepath.Join(dir, "out"), filepath.Join(dir, "cache")
			res := writeResult(t, jobResult("master", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), results.StatusPassed))
			var args []string
			for _, a := range tt.args {
				switch a {
				case "RESULTS":
					a = res
				case "BASE", "HEAD":
					a = t.TempDir()
				}
				args = append(args, a)
			}
			switch args[0] {
			case "run":
				args = append(args, "--out", out, "--cache", cache)
			case "report":
				args = append(args[:1], append([]string{"--out", out}, args[1:]...)...)
			}
			var stdout, stderr bytes.Buffer
			err := patchproof(context.Background(), &stdout, &stderr, args)
			if code := exitCode(&stderr, err); code != 2 {
				t.Errorf("exit %d, want 2 (err %v)", code, err)
			}
			line := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, tt.names) {
				t.Errorf("stderr %q: want one line naming %q", stderr.String(), tt.names)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input wrote %s", out)
			}
			if _, err := os.Stat(filepath.Join(cache, "mirrors")); !os.IsNotExist(err) {
				t.Errorf("bad input fetched into the cache's mirrors")
			}
		})
	}
}
