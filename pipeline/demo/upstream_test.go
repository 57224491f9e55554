package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchproof/patchproof/pipeline/checkout"
)

// Release branches of the test tree: on PHP-8.4 two lines above the
// change's hunk, on PHP-8.5 its removed line changed.
var testBranches = []Divergence{
	{Branch: "PHP-8.4", From: UpstreamMaster, Patch: []byte(`a release-branch commit

diff --git a/ext/mysqlnd/mysqlnd_statistics.h b/ext/mysqlnd/mysqlnd_statistics.h
--- a/ext/mysqlnd/mysqlnd_statistics.h
+++ b/ext/mysqlnd/mysqlnd_statistics.h
@@ -1,3 +1,5 @@
+/* PHP-8.4 */
+
 #ifdef ZTS
 #define MYSQLND_STATS_LOCK(stats) tsrm_mutex_lock((stats)->LOCK_access)
 #else
`)},
	{Branch: "PHP-8.5", From: "PHP-8.4", Patch: []byte(`a conflicting commit

diff --git a/ext/mysqlnd/mysqlnd_statistics.h b/ext/mysqlnd/mysqlnd_statistics.h
--- a/ext/mysqlnd/mysqlnd_statistics.h
+++ b/ext/mysqlnd/mysqlnd_statistics.h
@@ -3,4 +3,4 @@
 #ifdef ZTS
-#define MYSQLND_STATS_LOCK(stats) tsrm_mutex_lock((stats)->LOCK_access)
+#define MYSQLND_STATS_LOCK(stats) tsrm_mutex_lock((stats)->lock)
 #else
 #define MYSQLND_STATS_LOCK(stats)
`)},
}

// The upstream has the demo's commits as master and the PR's head, and
// release branches on which the change applies at an offset and
// conflicts; it is made once and then taken from the cache.
func TestEnsureUpstream(t *testing.T) {
	body := makeTarball(t, "gz")
	sum := sha256.Sum256(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	opt := Options{
		CacheDir: t.TempDir(),
		Source:   Source{Name: "php.tar.gz", URL: srv.URL + "/php.tar.gz", SHA256: hex.EncodeToString(sum[:]), Version: "8.2.99"},
		Patch:    []byte(testPatch),
		Branches: testBranches,
	}
	ctx := context.Background()
	up, err := EnsureUpstream(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	demoRepo, err := Ensure(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := git.PlainOpen(demoRepo)
	r, err := git.PlainOpen(up)
	if err != nil {
		t.Fatal(err)
	}
	ref := func(r *git.Repository, name string) plumbing.Hash {
		t.Helper()
		h, err := r.Reference(plumbing.ReferenceName(name), true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return h.Hash()
	}
	master, head := ref(r, "refs/heads/master"), ref(r, UpstreamPRRef)
	if master != ref(d, "refs/heads/"+BaseBranch) || head != ref(d, "refs/heads/"+HeadBranch) {
		t.Errorf("master %s and the PR's head %s are not the demo's commits", master, head)
	}
	if h := ref(r, "HEAD"); h != master {
		t.Errorf("HEAD is %s, want master", h)
	}
	php84, php85 := ref(r, "refs/heads/PHP-8.4"), ref(r, "refs/heads/PHP-8.5")
	for _, c := range []struct {
		branch         plumbing.Hash
		parent         plumbing.Hash
		name, conflict string
	}{{php84, master, "PHP-8.4", ""}, {php85, php84, "PHP-8.5", "@@ -1,5 +1,5 @@"}} {
		commit, err := r.CommitObject(c.branch)
		if err != nil {
			t.Fatal(err)
		}
		if len(commit.ParentHashes) != 1 || commit.ParentHashes[0] != c.parent {
			t.Errorf("%s: parents %v, want %s", c.name, commit.ParentHashes, c.parent)
		}
		// The change, as a backport would apply it.
		_, err = checkout.ApplyPatch(r.Storer, commit, bytes.NewReader([]byte(testPatch)), "backport\n", sig)
		var ce *checkout.ConflictError
		switch {
		case c.conflict == "" && err != nil:
			t.Errorf("the change onto %s: %v, want it applied (at an offset)", c.name, err)
		case c.conflict != "" && (!errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Hunk != c.conflict ||
			ce.Conflicts[0].File != "ext/mysqlnd/mysqlnd_statistics.h"):
			t.Errorf("the change onto %s: %v, want one conflict in ext/mysqlnd/mysqlnd_statistics.h %s", c.name, err, c.conflict)
		}
	}

	again, err := EnsureUpstream(ctx, opt)
	if err != nil || again != up {
		t.Errorf("second EnsureUpstream = %q, %v; want the cached %q", again, err, up)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(up), "*.tmp-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if !strings.HasPrefix(filepath.Base(up), "upstream-") {
		t.Errorf("upstream at %s, want CACHE/demo/upstream-HASH.git", up)
	}
}

// A release branch whose commit does not apply leaves nothing.
func TestBuildUpstreamFails(t *testing.T) {
	body := makeTarball(t, "gz")
	dir := t.TempDir()
	tarball := filepath.Join(dir, "php.tar.gz")
	if err := os.WriteFile(tarball, body, 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "demo.git")
	if err := Build(context.Background(), tarball, "8.2.99", []byte(testPatch), src); err != nil {
		t.Fatal(err)
	}
	bad := []Divergence{{Branch: "PHP-8.5", From: UpstreamMaster, Patch: bytes.Replace(testBranches[1].Patch, []byte(" #ifdef ZTS"), []byte(" #ifdef NOPE"), 1)}}
	dst := filepath.Join(dir, "upstream.git")
	err := BuildUpstream(context.Background(), src, dst, bad)
	if err == nil || !strings.Contains(err.Error(), "PHP-8.5") {
		t.Errorf("BuildUpstream = %v, want an error naming PHP-8.5", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "upstream.git*")); len(left) > 0 {
		t.Errorf("a failed build left %v", left)
	}
}
