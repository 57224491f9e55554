package demo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/ulikunitz/xz"
)

// statsH is a miniature of ext/mysqlnd/mysqlnd_statistics.h.
const statsH = `#ifdef ZTS
#define MYSQLND_STATS_LOCK(stats) tsrm_mutex_lock((stats)->LOCK_access)
#else
#define MYSQLND_STATS_LOCK(stats)
#endif
`

const testPatch = `mysqlnd: a test change

diff --git a/ext/mysqlnd/mysqlnd_statistics.h b/ext/mysqlnd/mysqlnd_statistics.h
--- a/ext/mysqlnd/mysqlnd_statistics.h
+++ b/ext/mysqlnd/mysqlnd_statistics.h
@@ -1,5 +1,5 @@
 #ifdef ZTS
-#define MYSQLND_STATS_LOCK(stats) tsrm_mutex_lock((stats)->LOCK_access)
+#define MYSQLND_STATS_LOCK(stats)
 #else
 #define MYSQLND_STATS_LOCK(stats)
 #endif
`

// makeTarball writes a release-shaped tarball (one top-level dir) and
// returns its bytes.
func makeTarball(t *testing.T, compress string) []byte {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	add := func(name string, mode int64, body string) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.WriteHeader(&tar.Header{Name: "php-8.2.99/", Mode: 0o755, Typeflag: tar.TypeDir})
	add("php-8.2.99/main/php_version.h", 0o644, "#define PHP_VERSION \"8.2.99\"\n")
	add("php-8.2.99/ext/mysqlnd/mysqlnd_statistics.h", 0o644, statsH)
	add("php-8.2.99/configure", 0o755, "#!/bin/sh\n")
	tw.WriteHeader(&tar.Header{Name: "php-8.2.99/link", Linkname: "configure", Typeflag: tar.TypeSymlink})
	tw.Close()
	var out bytes.Buffer
	switch compress {
	case "xz":
		w, err := xz.NewWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(raw.Bytes())
		w.Close()
	case "gz":
		w := gzip.NewWriter(&out)
		w.Write(raw.Bytes())
		w.Close()
	}
	return out.Bytes()
}

func TestBuild(t *testing.T) {
	var heads []plumbing.Hash
	for _, compress := range []string{"xz", "gz", "xz"} {
		t.Run(compress, func(t *testing.T) {
			dir := t.TempDir()
			tarball := filepath.Join(dir, "php.tar")
			os.WriteFile(tarball, makeTarball(t, compress), 0o644)
			repo := filepath.Join(dir, "demo.git")
			if err := Build(context.Background(), tarball, "8.2.99", []byte(testPatch), repo); err != nil {
				t.Fatal(err)
			}
			r, err := git.PlainOpen(repo)
			if err != nil {
				t.Fatal(err)
			}
			base, err := r.Reference(plumbing.NewBranchReferenceName(BaseBranch), true)
			if err != nil {
				t.Fatal(err)
			}
			head, err := r.Reference(plumbing.NewBranchReferenceName(HeadBranch), true)
			if err != nil {
				t.Fatal(err)
			}
			hc, _ := r.CommitObject(head.Hash())
			if len(hc.ParentHashes) != 1 || hc.ParentHashes[0] != base.Hash() {
				t.Errorf("head's parent = %v, want the base %s", hc.ParentHashes, base.Hash())
			}
			if !strings.HasPrefix(hc.Message, "mysqlnd: a test change") {
				t.Errorf("head message = %q, want the patch's preamble", hc.Message)
			}
			tree, _ := hc.Tree()
			f, err := tree.File("ext/mysqlnd/mysqlnd_statistics.h")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := f.Contents()
			if strings.Contains(got, "LOCK_access") {
				t.Errorf("the patch was not applied:\n%s", got)
			}
			if c, err := tree.File("configure"); err != nil || c.Mode.String() != "0100755" {
				t.Errorf("configure: %v, mode %v; want executable", err, c)
			}
			heads = append(heads, head.Hash())
		})
	}
	// The same tree makes the same commits on every machine, whatever the
	// compression.
	for _, h := range heads[1:] {
		if h != heads[0] {
			t.Errorf("head commits differ between builds: %s vs %s", heads[0], h)
		}
	}
}

func TestBuildRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	notTar := filepath.Join(dir, "x.tar.xz")
	os.WriteFile(notTar, []byte("hello"), 0o644)
	if err := Build(context.Background(), notTar, "8.2.99", []byte(testPatch), filepath.Join(dir, "a.git")); err == nil {
		t.Error("Build(not a tarball) succeeded")
	}
	good := filepath.Join(dir, "php.tar.gz")
	os.WriteFile(good, makeTarball(t, "gz"), 0o644)
	badPatch := strings.Replace(testPatch, "tsrm_mutex_lock", "something_else", 1)
	err := Build(context.Background(), good, "8.2.99", []byte(badPatch), filepath.Join(dir, "b.git"))
	if err == nil || !strings.Contains(err.Error(), "ext/mysqlnd/mysqlnd_statistics.h") {
		t.Errorf("Build(patch that does not apply) = %v, want an error naming the file", err)
	}
	for _, p := range []string{"a.git", "b.git"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("a failed build left %s", p)
		}
	}
}

func TestEnsureDownloads(t *testing.T) {
	body := makeTarball(t, "xz")
	sum := sha256.Sum256(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/php.tar.xz" {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	src := Source{Name: "php.tar.xz", URL: srv.URL + "/php.tar.xz", SHA256: hex.EncodeToString(sum[:]), Version: "8.2.99"}

	cache := t.TempDir()
	repo, err := Ensure(context.Background(), Options{CacheDir: cache, Source: src, Patch: []byte(testPatch)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := git.PlainOpen(repo); err != nil {
		t.Fatalf("Ensure returned %s, not a repository: %v", repo, err)
	}
	again, err := Ensure(context.Background(), Options{CacheDir: cache, Source: src, Patch: []byte(testPatch)})
	if err != nil || again != repo {
		t.Errorf("second Ensure = %q, %v; want the cached %q", again, err, repo)
	}

	for name, s := range map[string]Source{
		"checksum mismatch": {Name: "php.tar.xz", URL: src.URL, SHA256: strings.Repeat("0", 64), Version: "8.2.99"},
		"404":               {Name: "php.tar.xz", URL: srv.URL + "/missing", SHA256: src.SHA256, Version: "8.2.99"},
	} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := Ensure(context.Background(), Options{CacheDir: cache, Source: s, Patch: []byte(testPatch)})
			if err == nil || !strings.Contains(err.Error(), s.URL) {
				t.Fatalf("Ensure = %v, want an error naming %s", err, s.URL)
			}
			left, _ := filepath.Glob(filepath.Join(cache, "demo", "*"))
			for _, l := range left {
				if !strings.HasSuffix(l, ".lock") {
					t.Errorf("a failed download left %s", l)
				}
			}
		})
	}
}
