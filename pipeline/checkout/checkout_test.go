package checkout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/pipeline/github/githubfake"
)

// testRepo is a php-src-shaped repository made in a temp dir:
//
//	base ── c1 ── c2 (PHP-8.2)
//	         └── f1 (feature, refs/pull/7/head)
//
// so the merge-base of the PR and PHP-8.2 is c1, not the branch tip.
type testRepo struct {
	dir            string
	c1, c2, f1, nf plumbing.Hash
}

var testSig = object.Signature{Name: "t", Email: "t@example.org", When: time.Unix(1700000000, 0).UTC()}

func commitFiles(t *testing.T, r *git.Repository, parent plumbing.Hash, files map[string]string, msg string) plumbing.Hash {
	t.Helper()
	flat := Files{}
	if !parent.IsZero() {
		c, err := r.CommitObject(parent)
		if err != nil {
			t.Fatal(err)
		}
		tree, _ := c.Tree()
		if flat, err = Flatten(tree); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range files {
		h, err := WriteBlob(r.Storer, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		mode := filemode.Regular
		if strings.HasSuffix(p, ".sh") {
			mode = filemode.Executable
		}
		flat[p] = Entry{Mode: mode, Hash: h}
	}
	root, err := WriteTree(r.Storer, flat)
	if err != nil {
		t.Fatal(err)
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = []plumbing.Hash{parent}
	}
	h, err := WriteCommit(r.Storer, root, parents, msg, testSig)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func setRef(t *testing.T, r *git.Repository, name string, h plumbing.Hash) {
	t.Helper()
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h)); err != nil {
		t.Fatal(err)
	}
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "php-src.git")
	r, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	tr := &testRepo{dir: dir}
	tr.c1 = commitFiles(t, r, plumbing.ZeroHash, map[string]string{
		"main/php_version.h":               "#define PHP_VERSION \"8.2.32\"\n",
		"ext/mysqlnd/mysqlnd_statistics.h": "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n",
		"buildconf.sh":                     "#!/bin/sh\n",
	}, "c1")
	tr.c2 = commitFiles(t, r, tr.c1, map[string]string{"NEWS": "c2\n"}, "c2")
	tr.f1 = commitFiles(t, r, tr.c1, map[string]string{"ext/mysqlnd/mysqlnd_statistics.h": "line 1\nline 2\nline 3\nCHANGED 4\nline 5\nline 6\nline 7\n"}, "f1: the change")
	tr.nf = commitFiles(t, r, plumbing.ZeroHash, map[string]string{"README.md": "not php\n"}, "unrelated")
	setRef(t, r, "refs/heads/PHP-8.2", tr.c2)
	setRef(t, r, "refs/heads/feature", tr.f1)
	setRef(t, r, "refs/pull/7/head", tr.f1)
	setRef(t, r, "refs/heads/not-php", tr.nf)
	setRef(t, r, "refs/tags/php-8.2.0", tr.c1)
	return tr
}

func TestResolveAndMergeBase(t *testing.T) {
	tr := newTestRepo(t)
	for _, remote := range []struct{ name, url string }{
		{"local path", tr.dir},
		{"file URL mirror", "file://" + tr.dir},
	} {
		t.Run(remote.name, func(t *testing.T) {
			r, err := Open(context.Background(), remote.url, Options{CacheDir: t.TempDir(), Refs: []string{"PHP-8.2", "pull/7/head", "php-8.2.0"}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for ref, want := range map[string]plumbing.Hash{
				"PHP-8.2":            tr.c2,
				"refs/heads/PHP-8.2": tr.c2,
				"pull/7/head":        tr.f1,
				"refs/pull/7/head":   tr.f1,
				"php-8.2.0":          tr.c1,
				tr.c1.String():       tr.c1,
			} {
				got, err := r.Resolve(ref)
				if err != nil {
					t.Errorf("Resolve(%q): %v", ref, err)
					continue
				}
				if got != want {
					t.Errorf("Resolve(%q) = %s, want %s", ref, got, want)
				}
			}
			mb, err := r.MergeBase(tr.f1, tr.c2)
			if err != nil {
				t.Fatal(err)
			}
			if mb != tr.c1 {
				t.Errorf("merge-base = %s, want c1 %s (not the branch tip c2 %s)", mb, tr.c1, tr.c2)
			}
			if _, err := r.Resolve("no-such-branch"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Resolve(no-such-branch) = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestMissingInputs(t *testing.T) {
	tr := newTestRepo(t)
	ctx := context.Background()
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "nope"), Options{CacheDir: t.TempDir()}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(missing path) = %v, want ErrNotFound", err)
	}
	notRepo := t.TempDir()
	if _, err := Open(ctx, notRepo, Options{CacheDir: t.TempDir()}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(plain dir) = %v, want ErrNotFound", err)
	}
	cache := t.TempDir()
	_, err := Open(ctx, "file://"+tr.dir, Options{CacheDir: cache, Refs: []string{"no-such-branch"}})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(URL, missing ref) = %v, want ErrNotFound", err)
	}
	// A failed first fetch leaves no mirror behind.
	if _, err := os.Stat(MirrorPath(cache, "file://"+tr.dir)); !os.IsNotExist(err) {
		t.Errorf("a failed fetch left a mirror: %v", err)
	}
	if _, err := Open(ctx, "file://"+filepath.Join(t.TempDir(), "gone.git"), Options{CacheDir: cache, Refs: []string{"x"}}); err == nil {
		t.Error("Open(URL of a missing repository) succeeded")
	}
	r, err := Open(ctx, tr.dir, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.CheckPHPSrc(tr.nf); !errors.Is(err, ErrNotPHPSrc) {
		t.Errorf("CheckPHPSrc(unrelated) = %v, want ErrNotPHPSrc", err)
	}
	if err := r.CheckPHPSrc(tr.c2); err != nil {
		t.Errorf("CheckPHPSrc(c2) = %v", err)
	}
}

func TestMirrorReuseAndRepair(t *testing.T) {
	tr := newTestRepo(t)
	ctx := context.Background()
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)

	// A killed run left garbage where the mirror goes: it is rebuilt.
	if err := os.MkdirAll(filepath.Join(path, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}})
	if err != nil {
		t.Fatalf("Open over a broken mirror: %v", err)
	}
	r.Close()

	// Runs at once share the mirror; each fetches its refs under the lock.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := []string{"PHP-8.2", "pull/7/head"}[i%2]
			r, err := Open(ctx, url, Options{CacheDir: cache, Refs: []string{ref}})
			if err == nil {
				_, err = r.Resolve(ref)
				r.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Open %d: %v", i, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{filepath.Base(path), filepath.Base(path) + ".lock", filepath.Base(path) + ".readers"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("mirrors dir holds leftovers (-want +got):\n%s", d)
	}
}

func TestExport(t *testing.T) {
	tr := newTestRepo(t)
	r, err := Open(context.Background(), tr.dir, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := filepath.Join(t.TempDir(), "src", "head")
	n, err := r.Export(context.Background(), tr.f1, dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("exported %d files, want 3", n)
	}
	got, err := os.ReadFile(filepath.Join(dir, "ext/mysqlnd/mysqlnd_statistics.h"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "CHANGED 4") {
		t.Errorf("exported the wrong content: %q", got)
	}
	fi, err := os.Stat(filepath.Join(dir, "buildconf.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("buildconf.sh mode %v, want executable", fi.Mode())
	}
	// Cancelled: nothing is left at dir.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir2 := filepath.Join(t.TempDir(), "cancelled")
	if _, err := r.Export(ctx, tr.f1, dir2); err == nil {
		t.Error("Export with a cancelled context succeeded")
	}
	if _, err := os.Stat(dir2); !os.IsNotExist(err) {
		t.Errorf("a cancelled export left %s", dir2)
	}
}

// TestOpenDoesNotHoldMirrorLock: a run that has its mirror open holds no
// lock that a fetch waits for (only its shared readers lock), so a second
// run on the same cache opens it at once instead of waiting for the first
// to finish.
func TestOpenDoesNotHoldMirrorLock(t *testing.T) {
	tr := newTestRepo(t)
	cache := t.TempDir()
	url := "file://" + tr.dir
	first, err := Open(context.Background(), url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var log strings.Builder
	second, err := Open(ctx, url, Options{CacheDir: cache, Refs: []string{"pull/7/head"}, Log: &log})
	if err != nil {
		t.Fatalf("second Open while the first is open: %v (log %q)", err, log.String())
	}
	defer second.Close()
	if strings.Contains(log.String(), "waiting for") {
		t.Errorf("second Open waited for a lock: %q", log.String())
	}
	// The first run still reads what the second fetched beside it.
	if _, err := first.Resolve(tr.c2.String()); err != nil {
		t.Errorf("first run after the second fetched: %v", err)
	}
	if got, err := second.Resolve("pull/7/head"); err != nil || got != tr.f1 {
		t.Errorf("second Resolve(pull/7/head) = %s, %v; want %s", got, err, tr.f1)
	}
}

// TestOpenRemovesMirrorLeftovers: what a killed creator, fetcher or
// maintainer left in the cache (a half-made mirror beside it, go-git's
// unfinished pack and packed-refs files in it, a pack's index without its
// pack) is gone after the next Open, which takes the lock that any live
// creator, fetcher or maintainer would hold.
func TestOpenRemovesMirrorLeftovers(t *testing.T) {
	tr := newTestRepo(t)
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)
	r, err := Open(context.Background(), url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	leftovers := []string{
		path + ".tmp-123456/objects/pack/pack-x.pack",
		filepath.Join(path, "objects/pack/tmp_pack_abc"),
		filepath.Join(path, "objects/pack/tmp_obj_def"),
		filepath.Join(path, "._packed-refs123"),
		filepath.Join(path, "objects/pack/pack-0123456789abcdef0123456789abcdef01234567.idx"),
	}
	for _, f := range leftovers {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err = Open(context.Background(), url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for _, f := range append(leftovers, path+".tmp-123456") {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("leftover %s survived the next Open: %v", f, err)
		}
	}
	if _, err := r.Resolve("PHP-8.2"); err != nil {
		t.Errorf("mirror broken by the clean-up: %v", err)
	}
}

// A fetch that fails in passing (a 5xx, a pack cut short) is tried again
// and lands whole; one that keeps failing fails with the server's answer
// after fetchAttempts tries; a ref that is not there is asked for once.
func TestFetchRetriesTransientFaults(t *testing.T) {
	tr := newTestRepo(t)
	f := githubfake.New(t)
	f.ServeGit("php", "php-src", tr.dir)
	url := f.GitURL("php", "php-src")
	defer func(w time.Duration) { fetchWait = w }(fetchWait)
	fetchWait = 10 * time.Millisecond
	ctx := context.Background()
	packs := func() int { return f.Count("POST", "/php/php-src") }

	cache := t.TempDir()
	var log strings.Builder
	f.FailNext("", "/php/php-src", 503, 2)
	r, err := Open(ctx, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}, Log: &log})
	if err != nil {
		t.Fatalf("two 503s, then an answer: %v", err)
	}
	if h, err := r.Resolve("PHP-8.2"); err != nil || h != tr.c2 {
		t.Errorf("PHP-8.2 after the retries: %v %v, want %v", h, err, tr.c2)
	}
	if n := strings.Count(log.String(), "trying again"); n != 2 {
		t.Errorf("%d retries logged, want 2:\n%s", n, log.String())
	}

	// A warm mirror, a pack cut short once: the retry brings it whole, and
	// nothing of the cut one is left.
	f.TruncatePacks("php", "php-src", 1)
	before := packs()
	if r, err = Open(ctx, url, Options{CacheDir: cache, Refs: []string{"pull/7/head"}}); err != nil {
		t.Fatalf("a pack cut short once: %v", err)
	}
	if h, err := r.Resolve("pull/7/head"); err != nil || h != tr.f1 {
		t.Errorf("pull/7/head after the retry: %v %v, want %v", h, err, tr.f1)
	}
	if n := packs() - before; n != 2 {
		t.Errorf("%d pack requests, want 2 (the cut one and its retry)", n)
	}
	if left, _ := filepath.Glob(filepath.Join(MirrorPath(cache, url), "objects", "pack", "tmp_*")); len(left) > 0 {
		t.Errorf("the cut pack's leftovers: %v", left)
	}

	// A fresh fake for each: a fault queue left over would answer the next.
	f = githubfake.New(t)
	f.ServeGit("php", "php-src", tr.dir)
	url = f.GitURL("php", "php-src")
	f.FailNext("", "/php/php-src", 502, 100)
	_, err = Open(ctx, url, Options{CacheDir: t.TempDir(), Refs: []string{"PHP-8.2"}})
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Errorf("502s throughout: %v, want the server's answer", err)
	}
	if n := f.Count("", "/php/php-src"); n != fetchAttempts {
		t.Errorf("502s throughout: %d requests, want %d", n, fetchAttempts)
	}

	f = githubfake.New(t)
	f.ServeGit("php", "php-src", tr.dir)
	log.Reset()
	if _, err := Open(ctx, f.GitURL("php", "php-src"), Options{CacheDir: t.TempDir(), Refs: []string{"no-such-branch"}, Log: &log}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing branch: %v, want not found", err)
	}
	if strings.Contains(log.String(), "trying again") {
		t.Errorf("a missing branch was asked for again:\n%s", log.String())
	}
}
