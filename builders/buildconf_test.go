package builders

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	sidepkg "github.com/patchproof/patchproof/internal/side"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBuildconf records each run in the file named when the tree is
// written and regenerates configure: the regenerated one also writes
// configure.by, so a build shows which configure it ran.
const fakeBuildconf = `#!/bin/sh
echo "buildconf $*" >> 'LOG'
src=configure; [ -f configure.in.sh ] && src=configure.in.sh
{ head -n 1 $src; echo 'echo buildconf > configure.by'; tail -n +2 $src; } > configure.new
chmod +x configure.new && mv configure.new configure
`

// buildconfTree is fakeTree with a fake buildconf logging to log; unless
// shipped, the tree has no configure, only what buildconf makes it from.
func buildconfTree(t *testing.T, mainC, log string, shipped bool) string {
	t.Helper()
	dir := fakeTree(t, mainC)
	p := filepath.Join(dir, "buildconf")
	if err := os.WriteFile(p, []byte(strings.Replace(fakeBuildconf, "'LOG'", "'"+log+"'", 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	if !shipped {
		// buildconf makes configure from its parts; here, from a copy.
		if err := os.Rename(filepath.Join(dir, "configure"), filepath.Join(dir, "configure.in.sh")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildconfForced: a spec whose change touches the build system has
// both its base and its head configured by the configure buildconf makes,
// though the trees ship one; without it a shipped configure is used as it
// is, and a tree without one runs buildconf as before.
func TestBuildconfForced(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	for _, tc := range []struct {
		name      string
		shipped   bool // the trees ship configure
		buildconf bool // Spec.Buildconf, as the pipeline sets it
		wantRuns  int
	}{
		{"head changes config.m4", true, true, 2},
		{"head changes a .c file", true, false, 0},
		{"trees without configure", false, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
			log := filepath.Join(t.TempDir(), "buildconf.log")
			b := &Builder{Exec: &Host{}, CacheDir: cacheDir(t)}
			for i, side := range []string{"base", "head"} {
				src := buildconfTree(t, fmt.Sprintf("int main(void) { return %d; }\n", i), log, tc.shipped)
				res, err := b.Build(context.Background(), Spec{Label: side + "/nts", Side: sidepkg.Side(side), Source: src, TreeHash: "tree-" + side,
					Variant: NTS, Profile: ProfileMySQL, Jobs: 1, Buildconf: tc.buildconf})
				if err != nil {
					t.Fatalf("%s: %v", side, err)
				}
				_, err = os.Stat(filepath.Join(res.Dir, "configure.by"))
				if ran := err == nil; ran != (tc.buildconf || !tc.shipped) {
					t.Errorf("%s: configured by buildconf's configure = %v", side, ran)
				}
				if res.Buildconf != tc.buildconf {
					t.Errorf("%s: Build.Buildconf = %v, want %v", side, res.Buildconf, tc.buildconf)
				}
			}
			data, err := os.ReadFile(log)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if got := strings.Count(string(data), "buildconf --force"); got != tc.wantRuns {
				t.Errorf("buildconf --force ran %d times, want %d; log:\n%s", got, tc.wantRuns, data)
			}
		})
	}
}

// TestKeyBuildconf: forcing buildconf is a different build, and a spec
// that does not force it keeps the key it had before Buildconf existed,
// so that the cached builds are still found.
func TestKeyBuildconf(t *testing.T) {
	ctx := context.Background()
	b := &Builder{Exec: &Host{}}
	spec := Spec{TreeHash: "tree1", Variant: NTS, Profile: ProfileMySQL}
	plain, args, err := b.Key(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Exec.ID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "patchproof build v1\ntree %s\nvariant %s\nprofile %s\nflags %q\nconfigure %q\nexecutor %s\n",
		spec.TreeHash, spec.Variant, spec.Profile, Env(spec.Variant), args, id)
	if old := hex.EncodeToString(h.Sum(nil))[:24]; plain != old {
		t.Errorf("key without buildconf = %s, want the v1 key %s", plain, old)
	}
	spec.Buildconf = true
	forced, _, err := b.Key(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if forced == plain {
		t.Errorf("key with buildconf forced = %s, the same as without", forced)
	}
}
