package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/docker/dockertest"
	"github.com/patchproof/patchproof/internal/side"
)

// poisonConfigure is what a pull request puts at the top of the tree's
// configure (a build-system change: the tree is configured afresh, its
// own script run by the build): it appends to every file of the shared
// ccache, at the path its remote-storage setting names, and plants an
// entry of its own, as a head that stores its code under the key of a
// file it did not change would. It says what it did, then stops the
// build: the rest of configure and make would only cost time.
const poisonConfigure = `dir=${CCACHE_REMOTE_STORAGE#file:}; dir=${dir%%|*}
tried=0; wrote=0
for f in $(find "$dir" -type f 2>/dev/null); do
	tried=$((tried+1))
	if (printf poison >> "$f") 2>/dev/null; then wrote=$((wrote+1)); fi
done
tried=$((tried+1))
if (echo poison > "$dir/planted.o") 2>/dev/null; then wrote=$((wrote+1)); fi
echo "patchproof-e2e-poison: dir=$dir tried=$tried wrote=$wrote"
exit 1
`

var poisonLine = regexp.MustCompile(`patchproof-e2e-poison: dir=(\S*) tried=(\d+) wrote=(\d+)`)

// The ccache scenario of a poisoned base build, end to end on a real PHP
// tree (the demo's): a head whose configure writes into the shared ccache
// by hand, built as the build stage builds a head (untrusted) by the
// Docker builder, leaves every byte of it as it was: the shared ccache is
// bound read-only into its container, so no later base build can link
// what a head stored there. The controls show the attack is real: built as
// trusted (a base), or on the host, where the build runs as the user who
// owns the cache (docs/workflows.md: the host builder is for trees one
// trusts), the same configure writes the shared ccache.
func TestE2ECCacheHeadCannotPoison(t *testing.T) {
	_, out := e2eResult(t)
	trees, _ := filepath.Glob(filepath.Join(out, "src", "PHP-8.2-base-*"))
	if len(trees) != 1 {
		t.Fatalf("base tree: %v", trees)
	}
	realCCache := filepath.Join(dockertest.ImageOptions(t).CacheDir, "ccache")
	c := dockertest.Client(t)
	img, err := builders.EnsureBuildImage(context.Background(), c, dockertest.ImageOptions(t))
	if err != nil {
		t.Fatalf("build image: %v", err)
	}
	dock := &builders.Docker{Client: c, Image: img, User: docker.User(), Labels: dockertest.Labels(t, "build")}

	// One poisoned tree for every case: a build copies its source.
	src := filepath.Join(t.TempDir(), "php")
	if out, err := exec.Command("cp", "-a", trees[0], src).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	configure := filepath.Join(src, "configure")
	code, err := os.ReadFile(configure)
	if err != nil {
		t.Fatal(err)
	}
	shebang, rest, _ := bytes.Cut(code, []byte("\n"))
	if !bytes.HasPrefix(shebang, []byte("#!")) {
		t.Fatalf("configure begins %q, not with #!", shebang)
	}
	poisoned := string(shebang) + "\n" + poisonConfigure + string(rest)
	if err := os.WriteFile(configure, []byte(poisoned), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name      string
		exec      builders.Executor
		trusted   bool
		wantWrote bool
	}{
		{"docker-head", dock, false, false},
		{"docker-trusted-control", dock, true, true},
		{"host-head-not-guaranteed", &builders.Host{}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A cache of the test's own, its shared ccache seeded with real
			// entries of the demo's builds: the controls write into it.
			cache := t.TempDir()
			shared := filepath.Join(cache, "ccache")
			if n := seedCCache(t, realCCache, shared, 24); n == 0 {
				t.Fatalf("no entries in %s to seed from: the demo's builds run first", realCCache)
			}
			before := digestTree(t, shared)

			b := &builders.Builder{Exec: tt.exec, CacheDir: cache, CCache: true}
			defer b.Release()
			var log bytes.Buffer
			_, err = b.Build(context.Background(), builders.Spec{
				Label: "poison/nts", Side: side.Head, Source: src, TreeHash: "poison-e2e", Variant: builders.NTS,
				Profile: builders.ProfileMySQL, Jobs: 2, Log: &log, Trusted: tt.trusted,
			})
			if !errors.Is(err, builders.ErrBuildFailed) || !strings.Contains(err.Error(), "configure") {
				t.Fatalf("Build = %v, want configure to fail as the attack ends it\n%s", err, tail(log.String()))
			}
			m := poisonLine.FindStringSubmatch(log.String())
			if m == nil {
				t.Fatalf("the attack did not run (no report in the build's log):\n%s", tail(log.String()))
			}
			tried, _ := strconv.Atoi(m[2])
			wrote, _ := strconv.Atoi(m[3])
			if m[1] != shared || tried < 2 {
				t.Fatalf("the attack tried %d files in %q, want the seeded entries of %s", tried, m[1], shared)
			}
			after := digestTree(t, shared)
			changed := cmp.Diff(before, after)
			if tt.wantWrote {
				if wrote == 0 || changed == "" {
					t.Errorf("wrote %d of %d and the shared ccache changed: %v; the control must show the attack working", wrote, tried, changed != "")
				}
				return
			}
			if wrote != 0 || changed != "" {
				t.Errorf("a head's configure wrote %d of %d files of the shared ccache (-before +after):\n%s", wrote, tried, changed)
			}
			t.Logf("a head's configure tried %d files of the shared ccache and wrote none", tried)
		})
	}
}

// seedCCache copies up to n files of the ccache storage from into to,
// each at its own relative path, and returns how many it copied.
func seedCCache(t *testing.T, from, to string, n int) int {
	t.Helper()
	copied := 0
	filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || copied >= n || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(from, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		copied++
		return nil
	})
	return copied
}

// digestTree is every file under dir, by relative path, with the SHA-256
// of its content.
func digestTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[rel] = fmt.Sprintf("%s %d", hex.EncodeToString(sum[:8]), len(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tail is the end of a build log, for a failure message.
func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
