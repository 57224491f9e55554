package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
		{"too many jobs", run("--jobs", "100000"), "--jobs 100000"},
		{"too many threads", run("--threads", "100000"), "--threads 100000"},
		{"too many threads in a list", run("--threads", "1,16,100000"), "--threads 1,16,100000"},
		{"too many passes", run("--passes", "1000000000"), "--passes 1000000000"},
		{"too many race requests", run("--race-requests", "1000000000"), "--race-requests 1000000000"},
		{"server CPUs not a list", run("--server-cpus", "abc;rm"), "--server-cpus abc;rm"},
		{"load CPUs open range", run("--load-cpus", "1-"), "--load-cpus 1-"},
		{"database CPUs backwards", run("--db-cpus", "3-1"), "--db-cpus 3-1"},
		{"CPUs empty item", run("--server-cpus", "0,,2"), "--server-cpus 0,,2"},
		// No machine this runs on has CPU 100000 (a CPU set holds 1024).
		{"server CPUs not on this machine", run("--server-cpus", "100000"), "--server-cpus 100000"},
		{"load CPUs past this machine's", run("--load-cpus", "0-100000"), "--load-cpus 0-100000"},
		{"database CPUs not on this machine", run("--db-cpus", "100000-100002"), "--db-cpus 100000-100002"},
		{"negative fetch timeout", run("--fetch-timeout", "-1s"), "--fetch-timeout -1s"},
		{"negative fetch idle timeout", run("--fetch-idle-timeout", "-5m"), "--fetch-idle-timeout -5m0s"},
		{"negative max tree files", run("--max-tree-files", "-1"), "--max-tree-files -1"},
		{"max tree bytes not a size", run("--max-tree-bytes", "2XB"), "--max-tree-bytes 2XB"},
		{"max tree bytes negative", run("--max-tree-bytes", "-1GiB"), "--max-tree-bytes -1GiB"},
		{"cache max not a size", run("--cache-max", "1TB"), "--cache-max 1TB"},
		{"objects not a glob", run("--objects", "["), "--objects ["},
		{"objects outside the build", run("--objects", "../../*.o"), "--objects ../../*.o"},
		{"objects absolute", run("--objects", "/etc/*"), "--objects /etc/*"},
		{"GitHub API not a URL", run("--github-api", "::bad"), "--github-api ::bad"},
		{"GitHub API not HTTP", run("--github-api", "ftp://example.com/"), "--github-api ftp://example.com/"},
		{"GitHub API no host", run("--github-api", "https:///api"), "--github-api https:///api"},
		{"GitHub API with a space", run("--github-api", "http://127.0.0.1:1/api v3/"), "--github-api http://127.0.0.1:1/api v3/"},
		{"GitHub API with a space after it", run("--github-api", "http://127.0.0.1:1/api/v3/ x"), "--github-api http://127.0.0.1:1/api/v3/ x"},
		{"GitHub API with a query", run("--github-api", "http://127.0.0.1:1/api/v3/?x=1"), "--github-api http://127.0.0.1:1/api/v3/?x=1"},
		{"stages none", run("--stages", ","), "--stages ,"},
		{"stages empty", run("--stages", ""), "--stages"},
		{"stages empty item", run("--stages", "checkout,"), "--stages checkout,"},
		{"variants none", run("--variants", ","), "--variants ,"},
		{"variants empty", run("--variants", ""), "--variants"},
		{"variant unknown", run("--variants", "nts,tsan"), "--variants nts,tsan"},
		{"variant twice", run("--variants", "nts,nts"), "--variants nts,nts"},
		{"variant twice, spaced", run("--variants", "nts, zts ,zts"), "--variants nts, zts ,zts"},
		{"stage twice", run("--stages", "checkout,checkout"), "--stages checkout,checkout"},
		{"threads twice", run("--threads", "16,16"), "--threads 16,16"},
		{"bench measures twice", run("--bench-measures", "cpu,locks,cpu"), "--bench-measures cpu,locks,cpu"},
		{"bench measure unknown", run("--bench-measures", "cpu,ticks"), "--bench-measures cpu,ticks"},
		{"backport-to twice", run("--backport-to", "PHP-8.4,PHP-8.4"), "--backport-to PHP-8.4,PHP-8.4"},
		{"doctor: stage twice", []string{"doctor", "--stages", "build,build"}, "--stages build,build"},
		{"report: target expected twice", []string{"report", "--expect-targets", "master,master", "RESULTS"}, "--expect-targets master,master"},
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
		{"post-to without post", run("--post-to", "php/php-src#4242"), "--post-to php/php-src#4242"},
		{"dry-run without post", run("--dry-run"), "--dry-run"},
		{"repo empty", run("--repo", ""), `--repo ""`},
		{"repo blank", run("--repo", " "), `--repo " "`},
		{"base and head without repo", []string{"run", "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats"}, "--base PHP-8.2"},
		{"head without repo", []string{"run", "--head", "mysqlnd-atomic-stats"}, "--head mysqlnd-atomic-stats"},

		{"report: GitHub API not a URL", []string{"report", "--post", "--pr", "1", "--github-api", "::bad", "RESULTS"}, "--github-api ::bad"},
		{"report: GitHub API with a space", []string{"report", "--post", "--pr", "1", "--github-api", "http://127.0.0.1:1/a b/", "RESULTS"}, "--github-api http://127.0.0.1:1/a b/"},
		{"plan: GitHub API with a space", []string{"plan", "--event", "RESULTS", "--github-api", "http://127.0.0.1:1/a b/"}, "--github-api http://127.0.0.1:1/a b/"},
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
			if _, err := os.Stat(filepath.Join(cache, "demo")); !os.IsNotExist(err) {
				t.Errorf("bad input prepared the bundled demo")
			}
		})
	}
}

// A cache named with --cache (or $PATCHPROOF_CACHE) that is no directory
// is bad input, named in one line, exit 2: doctor does not report the
// free disk of what /dev/null is on, and cache does not list a typo as an
// empty cache. The default cache may be absent: nothing was cached yet.
func TestCacheDirFlag(t *testing.T) {
	cleanEnv(t)
	t.Setenv("PATCHPROOF_CACHE", "")
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "typo")
	for _, tt := range []struct {
		name  string
		args  []string
		env   string // $PATCHPROOF_CACHE
		names string
	}{
		{name: "doctor: a device", args: []string{"doctor", "--stages", "checkout", "--cache", "/dev/null"}, names: "--cache /dev/null: not a directory"},
		{name: "doctor: a file", args: []string{"doctor", "--stages", "checkout", "--cache", file}, names: "--cache " + file + ": not a directory"},
		{name: "doctor: beneath a file", args: []string{"doctor", "--stages", "checkout", "--cache", file + "/cache"}, names: "--cache " + file + "/cache: " + file + " is not a directory"},
		{name: "doctor: from the environment", args: []string{"doctor", "--stages", "checkout"}, env: "/dev/null", names: "$PATCHPROOF_CACHE /dev/null: not a directory"},
		{name: "cache: a typo", args: []string{"cache", "--cache", typo}, names: "--cache " + typo + ": no such directory"},
		{name: "cache prune: a typo", args: []string{"cache", "prune", "--cache", typo}, names: "--cache " + typo + ": no such directory"},
		{name: "cache: a file", args: []string{"cache", "--cache", file}, names: "--cache " + file + ": not a directory"},
		{name: "cache: from the environment", args: []string{"cache"}, env: typo, names: "$PATCHPROOF_CACHE " + typo + ": no such directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATCHPROOF_CACHE", tt.env)
			var stdout, stderr bytes.Buffer
			err := patchproof(context.Background(), &stdout, &stderr, tt.args)
			if code := exitCode(&stderr, err); code != 2 {
				t.Errorf("exit %d, want 2 (err %v)\n%s", code, err, stdout.String())
			}
			line := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, tt.names) {
				t.Errorf("stderr %q: want one line saying %q", stderr.String(), tt.names)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed a report of a cache that is not one:\n%s", stdout.String())
			}
			if _, err := os.Stat(typo); !os.IsNotExist(err) {
				t.Errorf("made %s", typo)
			}
		})
	}
	// Absent, the default cache is an empty one; a --cache doctor checks
	// before the first run makes it is fine too.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", "")
	for _, args := range [][]string{{"cache"}, {"doctor", "--stages", "checkout", "--cache", typo}} {
		var stdout, stderr bytes.Buffer
		err := patchproof(context.Background(), &stdout, &stderr, args)
		if code := exitCode(&stderr, err); code == 2 && strings.Contains(stderr.String(), "cache") {
			t.Errorf("%v: exit %d: %s", args, code, stderr.String())
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "1000", want: 1000},
		{in: "2GiB", want: 2 << 30},
		{in: "512 MiB", want: 512 << 20},
		{in: "1536KiB", want: 1536 << 10},
		{in: "0", want: 0},
		{in: "2GB", bad: true},
		{in: "-1", bad: true},
		{in: "1.5GiB", bad: true},
		{in: "GiB", bad: true},
		{in: "9999999999GiB", bad: true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			n, err := parseSize("--max-tree-bytes", tt.in)
			if tt.bad {
				var ie *results.InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), "--max-tree-bytes "+tt.in) {
					t.Errorf("parseSize(%q) = %d, %v; want an input error naming the flag and value", tt.in, n, err)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, n, err, tt.want)
			}
		})
	}
}

// Lowered limits reach the checkout: a tree over them fails the run (exit
// 2) with one line naming the commit and the flag, and leaves no part of
// the export in --out; a remote that never answers fails the run within
// the idle limit, naming the remote and the flag.
func TestLimitFlags(t *testing.T) {
	cleanEnv(t)
	repo := smallPHPRepo(t)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer silent.Close()
	remote := silent.URL + "/php/php-src.git"
	for _, tt := range []struct {
		name  string
		args  []string
		names []string // what the one line must say
	}{
		{"tree files", []string{"--repo", repo, "--max-tree-files", "2"}, []string{"more than 2 files and directories", "--max-tree-files"}},
		{"tree bytes", []string{"--repo", repo, "--max-tree-bytes", "10"}, []string{"more than 10 bytes of files", "--max-tree-bytes"}},
		{"fetch idle", []string{"--repo", remote, "--fetch-idle-timeout", "500ms"}, []string{remote, "nothing received for 500ms", "--fetch-idle-timeout"}},
		{"fetch total", []string{"--repo", remote, "--fetch-idle-timeout", "1m", "--fetch-timeout", "500ms"}, []string{remote, "not done after 500ms", "--fetch-timeout"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--cache", t.TempDir(), "--out", out, "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats", "--stages", "checkout"}, tt.args...)
			var stdout, stderr, msg bytes.Buffer
			start := time.Now()
			err := patchproof(context.Background(), &stdout, &stderr, args)
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the run took %v", took)
			}
			if code := exitCode(&msg, err); code != 2 {
				t.Fatalf("exit %d, want 2 (err %v)", code, err)
			}
			line := strings.TrimSuffix(msg.String(), "\n")
			for _, s := range tt.names {
				if strings.Contains(line, "\n") || !strings.Contains(line, s) {
					t.Errorf("error %q: want one line saying %q", line, s)
				}
			}
			// What was exported of a tree over its limits is gone.
			if entries, _ := os.ReadDir(filepath.Join(out, "src")); len(entries) > 0 {
				t.Errorf("out/src holds %v", entries)
			}
		})
	}
}

// An --out that is, holds or is inside the repository validated or the
// cache is refused before anything is written there: the run writes and
// the workflow removes --out.
func TestOutApart(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct {
		name string
		// setup returns --repo, --cache and --out under dir.
		setup func(t *testing.T, dir string) (repo, cache, out string)
		names string // what the one line must say besides --out
	}{
		{"out is the repository", func(t *testing.T, dir string) (string, string, string) {
			repo := smallPHPRepo(t)
			return repo, filepath.Join(dir, "cache"), repo
		}, "is the repository"},
		{"out inside the repository", func(t *testing.T, dir string) (string, string, string) {
			repo := smallPHPRepo(t)
			return repo, filepath.Join(dir, "cache"), filepath.Join(repo, "out")
		}, "is inside the repository"},
		{"out holds the repository", func(t *testing.T, dir string) (string, string, string) {
			repo := smallPHPRepo(t)
			return repo, filepath.Join(dir, "cache"), filepath.Dir(repo)
		}, "holds the repository"},
		{"out is the repository's file URL", func(t *testing.T, dir string) (string, string, string) {
			repo := smallPHPRepo(t)
			return "file://" + repo, filepath.Join(dir, "cache"), repo
		}, "is the repository"},
		{"out a link to the repository", func(t *testing.T, dir string) (string, string, string) {
			repo := smallPHPRepo(t)
			link := filepath.Join(dir, "link")
			if err := os.Symlink(repo, link); err != nil {
				t.Fatal(err)
			}
			return repo, filepath.Join(dir, "cache"), filepath.Join(link, "out")
		}, "is inside the repository"},
		{"out is the cache", func(t *testing.T, dir string) (string, string, string) {
			c := filepath.Join(dir, "cache")
			return smallPHPRepo(t), c, c
		}, "is the cache"},
		{"out inside the cache", func(t *testing.T, dir string) (string, string, string) {
			c := filepath.Join(dir, "cache")
			return smallPHPRepo(t), c, filepath.Join(c, "out")
		}, "is inside the cache"},
		{"out holds the cache", func(t *testing.T, dir string) (string, string, string) {
			return smallPHPRepo(t), filepath.Join(dir, "out", "cache"), filepath.Join(dir, "out")
		}, "holds the cache"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			repo, cache, out := tt.setup(t, dir)
			local := strings.TrimPrefix(repo, "file://")
			before := listTree(t, local)
			var stdout, stderr bytes.Buffer
			err := patchproof(context.Background(), &stdout, &stderr, []string{"run", "--repo", repo,
				"--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats", "--stages", "checkout", "--cache", cache, "--out", out})
			if code := exitCode(&stderr, err); code != 2 {
				t.Fatalf("exit %d, want 2 (err %v)", code, err)
			}
			line := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, "--out "+out) || !strings.Contains(line, tt.names) {
				t.Errorf("stderr %q: want one line naming --out %s and saying %q", stderr.String(), out, tt.names)
			}
			if d := cmp.Diff(before, listTree(t, local)); d != "" {
				t.Errorf("the repository changed (-before +after):\n%s", d)
			}
			for _, p := range []string{filepath.Join(out, "logs"), filepath.Join(out, "results.json"), filepath.Join(cache, "mirrors"), filepath.Join(cache, "runs")} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("bad input wrote %s", p)
				}
			}
		})
	}
}

// listTree lists the paths under dir.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// A rerun repeats every flag given but those naming the source, the
// target and the output: a check's own flags included, without a list of
// them.
func TestRerunFlags(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	for _, name := range []string{"repo", "out", "post-to", "threads", "bench", "race-requests", "variants", "passes", "some-new-check-setting"} {
		fs.String(name, "", "")
	}
	if err := fs.Parse([]string{"--repo=/r", "--out=/o", "--post-to=o/r#1", "--threads=1,16", "--bench=report",
		"--race-requests=5000", "--variants=zts", "--passes=12", "--some-new-check-setting=x"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"--bench=report", "--passes=12", "--race-requests=5000", "--some-new-check-setting=x", "--threads=1,16", "--variants=zts"}
	if d := cmp.Diff(want, rerunFlags(fs)); d != "" {
		t.Errorf("rerunFlags (-want +got):\n%s", d)
	}
}
