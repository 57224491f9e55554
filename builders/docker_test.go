package builders

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/docker/dockertest"
	"github.com/patchproof/patchproof/internal/proc"
)

// dockerForTest connects to the engine scripts/test starts, and makes (once,
// then cached) the build image.
func dockerForTest(t *testing.T, cache string) *Docker {
	t.Helper()
	ctx := context.Background()
	c, err := docker.Connect(ctx)
	if err != nil {
		t.Skipf("no Docker engine (scripts/test starts one): %v", err)
	}
	t.Cleanup(func() { c.Close() })
	// The build image a run makes, in this test's cache.
	opt := dockertest.ImageOptions(t)
	opt.CacheDir = cache
	img, err := EnsureBuildImage(ctx, c, opt)
	if err != nil {
		t.Fatalf("build image: %v", err)
	}
	// A label of this test's own, so containers of other runs on the same
	// engine do not count.
	return &Docker{Client: c, Image: img, Labels: map[string]string{"patchproof.test": fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())}}
}

func testCache(t *testing.T) string {
	if d := os.Getenv("PATCHPROOF_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "patchproof")
}

func patchproofContainers(t *testing.T, d *Docker) int {
	label := "patchproof.test=" + d.Labels["patchproof.test"]
	list, err := d.Client.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", label))})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func TestDockerExec(t *testing.T) {
	d := dockerForTest(t, testCache(t))
	ctx := context.Background()
	var out bytes.Buffer
	runErr, execErr := d.Exec(ctx, Cmd{Args: []string{"sh", "-c", "echo hi; echo err >&2; exit 3"}, Output: &out})
	var ee *proc.ExitError
	if execErr != nil || !errors.As(runErr, &ee) || ee.Code != 3 {
		t.Errorf("exit 3: runErr %v execErr %v", runErr, execErr)
	}
	if got := out.String(); !strings.Contains(got, "hi\n") || !strings.Contains(got, "err\n") {
		t.Errorf("output %q, want both streams", got)
	}
	runErr, execErr = d.Exec(ctx, Cmd{Args: []string{"/nonexistent/program"}})
	if runErr != nil || execErr == nil {
		t.Errorf("missing program: runErr %v execErr %v, want only execErr", runErr, execErr)
	}
	// Cancelled mid-command: Exec returns and the container is gone.
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	_, execErr = d.Exec(cctx, Cmd{Args: []string{"sleep", "300"}})
	if execErr == nil || time.Since(start) > 60*time.Second {
		t.Errorf("cancelled sleep: execErr %v after %v", execErr, time.Since(start))
	}
	if n := patchproofContainers(t, d); n != 0 {
		t.Errorf("%d patchproof containers left", n)
	}
}

func TestDockerBuild(t *testing.T) {
	cache := cacheDir(t)
	d := dockerForTest(t, testCache(t))
	b := &Builder{Exec: d, CacheDir: cache, CCache: true}
	src := fakeTree(t, "int main(void) { return 0; }\n")
	res, err := b.Build(context.Background(), Spec{Label: "base/zts", Source: src, TreeHash: "t", Variant: ZTS, Profile: ProfileMySQL})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || !strings.Contains(res.PHPVersion, "(ZTS)") || !strings.HasPrefix(res.Compiler, "docker/sha256:") {
		t.Errorf("docker build = ok %v version %q compiler %q", res.OK, res.PHPVersion, res.Compiler)
	}
	if res.Executor != "docker" {
		t.Errorf("executor = %q", res.Executor)
	}
}

// A command in a build container writes its own directory, and the shared
// ccache only when its tree is trusted; it cannot reach the cache's other
// builds: they are not in the container at all.
func TestDockerExecSeesOnlyItsBuild(t *testing.T) {
	d := dockerForTest(t, testCache(t))
	for _, tt := range []struct {
		name        string
		trusted     bool
		writeShared bool
	}{
		{"untrusted", false, false},
		{"trusted", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			shared, mine, other := filepath.Join(cache, ccacheDir), filepath.Join(cache, "builds", "mine.tmp-1"), filepath.Join(cache, "builds", "other")
			for _, dir := range []string{shared, mine, other} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(other, "php"), []byte("trusted\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			env, mounts, err := ccacheSetup(shared, mine, tt.trusted)
			if err != nil {
				t.Fatal(err)
			}
			// The attack of a hostile Makefile: into the shared ccache by hand,
			// at the path its remote storage setting names.
			script := `touch ok; mkdir -p "$CCACHE_DIR" && touch "$CCACHE_DIR/own"; ` +
				`dir=${CCACHE_REMOTE_STORAGE#file:}; dir=${dir%%|*}; echo poison > "$dir/entry" 2>/dev/null; ` +
				`echo poison > ` + other + `/php 2>/dev/null; ls ` + other + ` >/dev/null 2>&1 && echo "other visible" || echo "other not visible"`
			var out bytes.Buffer
			runErr, execErr := d.Exec(context.Background(), Cmd{Dir: mine, Args: []string{"sh", "-c", script}, Env: env, Mounts: mounts, Output: &out})
			if runErr != nil || execErr != nil {
				t.Fatalf("%v %v: %s", runErr, execErr, out.String())
			}
			for _, f := range []string{filepath.Join(mine, "ok"), filepath.Join(mine, ownCCacheDir, "own")} {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("the build could not write %s: %v", f, err)
				}
			}
			if _, err := os.Stat(filepath.Join(shared, "entry")); (err == nil) != tt.writeShared {
				t.Errorf("wrote the shared ccache: %v, want %v", err == nil, tt.writeShared)
			}
			if b, _ := os.ReadFile(filepath.Join(other, "php")); string(b) != "trusted\n" || !strings.Contains(out.String(), "other not visible") {
				t.Errorf("another build: %q, the container said %q", b, out.String())
			}
		})
	}
}
