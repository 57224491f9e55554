package builders

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ccacheTree is a fake tree of three files compiled through $(CC) and
// linked into prog, which prints who(): u.c's who says "genuine", main.c
// prefixes it with label. Its build records its ccache statistics in
// ccache.stats. With attack set, its Makefile compiles u.c the way a
// hostile pull request would poison it for later builds: through a
// compiler wrapper that compiles a planted u.c instead (ccache's prefix
// command is not part of what it hashes), with recache, so that the result
// is stored over the genuine one under the genuine file's key.
func ccacheTree(t *testing.T, label string, attack bool) string {
	t.Helper()
	poison := ""
	if attack {
		poison = "CCACHE_RECACHE=1 CCACHE_PREFIX=$(CURDIR)/evilcc "
	}
	return writeTree(t, map[string]string{
		"configure": fakeConfigure,
		"Makefile": `include Makefile.vars
all: prog
` + fakePHPRecipe + `	ccache --print-stats > ccache.stats
prog: main.o u.o v.o
	gcc main.o u.o v.o -o prog
main.o: main.c
	$(CC) -c $(CFLAGS) main.c -o main.o
u.o: u.c
	` + poison + `$(CC) -c $(CFLAGS) u.c -o u.o
v.o: v.c
	$(CC) -c $(CFLAGS) v.c -o v.o
`,
		"main.c": `#include <stdio.h>
const char *who(void);
int v(void);
int main(void) { printf("` + label + `: %s\n", who()); return v(); }
`,
		"u.c":       `const char *who(void) { return "genuine"; }` + "\n",
		"v.c":       `int v(void) { return 0; }` + "\n",
		"planted.c": `const char *who(void) { return "planted"; }` + "\n",
		"evilcc": `#!/bin/sh
# The compiler, given planted.c wherever it was given u.c.
dir=$(dirname "$0")
for a; do
	shift
	case "$a" in *u.c) set -- "$@" "$dir/planted.c";; *) set -- "$@" "$a";; esac
done
exec "$@"
`,
	})
}

// ccacheStat is one counter of a build's ccache.stats.
func ccacheStat(t *testing.T, dir, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "ccache.stats"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, "\t"); ok && k == name {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("ccache.stats: %q", l)
			}
			return n
		}
	}
	t.Fatalf("ccache.stats has no %s:\n%s", name, data)
	return 0
}

// snapshot is every file under dir with the digest of its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		m[p] = sha256File(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The scenario of a poisoned ccache, replayed: base builds, a head whose
// Makefile stores a planted object under the ccache key of a file it did
// not change, then a later base build of that file. The later base must
// link the genuine object. The control case builds the head as trusted,
// with the shared ccache writable, as every build was before: the attack
// must work there, or the test shows nothing.
func TestCCacheUntrustedBuildCannotPoisonTrusted(t *testing.T) {
	for _, tool := range []string{"gcc", "ccache"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	for _, tt := range []struct {
		name        string
		headTrusted bool
		want        string // the later base's prog
	}{
		{"untrusted head", false, "base2: genuine\n"},
		{"control: a head trusted as a base is", true, "base2: planted\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
			cache := cacheDir(t)
			b := &Builder{Exec: &Host{}, CacheDir: cache, CCache: true}
			ctx := context.Background()
			build := func(label string, trusted, attack bool) *Build {
				t.Helper()
				res, err := b.Build(ctx, Spec{Label: label, Source: ccacheTree(t, label, attack), TreeHash: label,
					Variant: NTS, Profile: ProfileMySQL, Jobs: 1, Trusted: trusted})
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				return res
			}
			run := func(res *Build) string {
				t.Helper()
				out, err := exec.Command(filepath.Join(res.Dir, "prog")).Output()
				if err != nil {
					t.Fatalf("%s: prog: %v", res.Label, err)
				}
				return string(out)
			}
			shared := filepath.Join(cache, ccacheDir)

			build("base1", true, false)
			before := snapshot(t, shared)
			if len(before) < 3 {
				t.Fatalf("the trusted build stored nothing in the shared ccache: %v", before)
			}
			head := build("head", tt.headTrusted, true)
			if got := run(head); got != "head: planted\n" {
				t.Fatalf("the head's attack did not compile the planted u.c: prog said %q", got)
			}
			// The head read the shared ccache: v.c is base1's.
			if n := ccacheStat(t, head.Dir, "remote_storage_read_hit"); n < 1 {
				t.Errorf("the head had %d hits in the shared ccache, want v.c's", n)
			}
			if !tt.headTrusted {
				if d := cmp.Diff(before, snapshot(t, shared)); d != "" {
					t.Errorf("the untrusted head changed the shared ccache (-before +after):\n%s", d)
				}
			}
			if _, err := os.Lstat(filepath.Join(head.Dir, ownCCacheDir)); !os.IsNotExist(err) {
				t.Errorf("the head's own ccache landed in its entry: %v", err)
			}

			base2 := build("base2", true, false)
			if got := run(base2); got != tt.want {
				t.Errorf("the later base's prog said %q, want %q", got, tt.want)
			}
			// u.c came from the shared ccache, so the base did read it.
			if n := ccacheStat(t, base2.Dir, "remote_storage_read_hit"); n < 2 {
				t.Errorf("the later base had %d hits in the shared ccache, want u.c's and v.c's", n)
			}
		})
	}
}

func TestCCacheSetup(t *testing.T) {
	for _, tt := range []struct {
		name       string
		shared     string
		trusted    bool
		wantEnv    []string
		wantMounts []Mount
		wantErr    string
	}{
		{
			name: "trusted", shared: "/c/ccache", trusted: true,
			wantEnv: []string{"CC=ccache gcc", "CCACHE_DIR=/c/builds/k.tmp-1/.patchproof-ccache", "CCACHE_BASEDIR=/c/builds/k.tmp-1", "CCACHE_NOHASHDIR=1",
				"CCACHE_REMOTE_STORAGE=file:/c/ccache|update-mtime=true", "CCACHE_REMOTE_ONLY=1"},
			wantMounts: []Mount{{Path: "/c/ccache"}},
		},
		{
			name: "untrusted", shared: "/c/ccache",
			wantEnv: []string{"CC=ccache gcc", "CCACHE_DIR=/c/builds/k.tmp-1/.patchproof-ccache", "CCACHE_BASEDIR=/c/builds/k.tmp-1", "CCACHE_NOHASHDIR=1",
				"CCACHE_REMOTE_STORAGE=file:/c/ccache|read-only"},
			wantMounts: []Mount{{Path: "/c/ccache", ReadOnly: true}},
		},
		// Each would split the setting, and the read-only attribute would
		// not be the shared ccache's.
		{name: "a space", shared: "/my cache/ccache", wantErr: `ccache dir "/my cache/ccache"`},
		{name: "a bar", shared: "/c|x/ccache", wantErr: `ccache dir "/c|x/ccache"`},
		{name: "a percent", shared: "/c%20/ccache", wantErr: `ccache dir "/c%20/ccache"`},
		{name: "relative", shared: "c/ccache", wantErr: `ccache dir "c/ccache"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, mounts, err := ccacheSetup(tt.shared, "/c/builds/k.tmp-1", tt.trusted)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ccacheSetup(%q) = %v, want an error with %q", tt.shared, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.wantEnv, env); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantMounts, mounts); d != "" {
				t.Errorf("mounts (-want +got):\n%s", d)
			}
		})
	}
}

func TestPruneCCache(t *testing.T) {
	type file struct {
		name string
		size int
		age  time.Duration
	}
	files := []file{
		{"CACHEDIR.TAG", 50, 10 * time.Hour},
		{"ab/oldest", 100, 9 * time.Hour},
		{"cd/older", 100, 8 * time.Hour},
		{"ab/old", 100, 7 * time.Hour},
		{"ef/new", 100, time.Hour},
	}
	for _, tt := range []struct {
		name string
		max  int64
		want []string // what is left
	}{
		{"under the limit", 400, []string{"CACHEDIR.TAG", "ab/old", "ab/oldest", "cd/older", "ef/new"}},
		// Over: down to 90% of max, oldest first; the tag stays.
		{"over by one file", 399, []string{"CACHEDIR.TAG", "ab/old", "cd/older", "ef/new"}},
		{"far over", 150, []string{"CACHEDIR.TAG", "ef/new"}},
		{"nothing may stay", 10, []string{"CACHEDIR.TAG"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ccacheDir)
			now := time.Now()
			for _, f := range files {
				p := filepath.Join(dir, filepath.FromSlash(f.name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, make([]byte, f.size), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
					t.Fatal(err)
				}
			}
			if err := pruneCCache(dir, tt.max); err != nil {
				t.Fatal(err)
			}
			var left []string
			for p := range snapshot(t, dir) {
				rel, _ := filepath.Rel(dir, p)
				left = append(left, filepath.ToSlash(rel))
			}
			slices.Sort(left)
			if d := cmp.Diff(tt.want, left); d != "" {
				t.Errorf("left after pruning to %d (-want +got):\n%s", tt.max, d)
			}
		})
	}
	// No shared ccache yet: nothing to prune.
	if err := pruneCCache(filepath.Join(t.TempDir(), "none"), 1); err != nil {
		t.Errorf("prune of a missing dir: %v", err)
	}
}
