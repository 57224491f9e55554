package checkout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/google/go-cmp/cmp"
)

// setBound sets one of the maintenance's bounds for the test.
func setBound(t *testing.T, bound *int, n int) {
	t.Helper()
	old := *bound
	*bound = n
	t.Cleanup(func() { *bound = old })
}

// openClose opens remote as a run does and lets it go.
func openClose(t *testing.T, remote string, opt Options) {
	t.Helper()
	r, err := Open(context.Background(), remote, opt)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// mirrorRefs are the hash refs of the repository at path, read afresh.
func mirrorRefs(t *testing.T, path string) map[string]plumbing.Hash {
	t.Helper()
	r, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := r.Storer.IterReferences()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]plumbing.Hash{}
	refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			m[ref.Name().String()] = ref.Hash()
		}
		return nil
	})
	return m
}

func countPacks(t *testing.T, path string) int {
	t.Helper()
	packs, err := packFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	return len(packs)
}

func countLoose(t *testing.T, path string) int {
	t.Helper()
	loose, _ := filepath.Glob(filepath.Join(path, "objects", "[0-9a-f][0-9a-f]", "*"))
	return len(loose)
}

// readHistory reads, in the repository at path opened afresh, every commit
// reachable from each of refs (a tag's target) and every file of their
// trees.
func readHistory(t *testing.T, path string, refs map[string]plumbing.Hash) {
	t.Helper()
	r, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[plumbing.Hash]bool{}
	for name, h := range refs {
		if tag, err := r.TagObject(h); err == nil {
			h = tag.Target
		}
		todo := []plumbing.Hash{h}
		for len(todo) > 0 {
			h := todo[0]
			todo = todo[1:]
			if seen[h] {
				continue
			}
			seen[h] = true
			c, err := r.CommitObject(h)
			if err != nil {
				t.Errorf("%s: commit %s: %v", name, h, err)
				continue
			}
			todo = append(todo, c.ParentHashes...)
			tree, err := c.Tree()
			if err != nil {
				t.Errorf("%s: tree of %s: %v", name, h, err)
				continue
			}
			files, err := Flatten(tree)
			if err != nil {
				t.Errorf("%s: files of %s: %v", name, h, err)
				continue
			}
			for p, e := range files {
				if e.Mode == filemode.Submodule {
					continue
				}
				b, err := r.BlobObject(e.Hash)
				if err == nil {
					var rd io.ReadCloser
					if rd, err = b.Reader(); err == nil {
						_, err = io.ReadAll(rd)
						rd.Close()
					}
				}
				if err != nil {
					t.Errorf("%s: %s of %s: %v", name, p, h, err)
				}
			}
		}
	}
}

// maintained is the line a maintenance logged, or "".
func maintained(t *testing.T, log string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "maintain") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 1 {
		t.Errorf("the maintenance logged %d lines, want one:\n%s", len(lines), log)
	}
	return strings.Join(lines, "\n")
}

// TestMaintainDropsPullRefs: a mirror over the bound of pull refs keeps
// the one the run asked for and every branch and tag; the objects only the
// dropped refs reached are gone, and so are the loose objects no ref
// reaches (a backport's), in one pack; the run reads what it fetched.
func TestMaintainDropsPullRefs(t *testing.T) {
	tr := newTestRepo(t)
	up, err := git.PlainOpen(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	type pr struct{ commit, tree, blob plumbing.Hash }
	prs := map[int]pr{}
	for n := 1; n <= 6; n++ {
		h := commitFiles(t, up, tr.c1, map[string]string{"ext/pr.txt": fmt.Sprintf("only PR %d has this\n", n)}, fmt.Sprintf("PR %d", n))
		setRef(t, up, fmt.Sprintf("refs/pull/%d/head", n), h)
		c, _ := up.CommitObject(h)
		tree, _ := c.Tree()
		f, err := tree.File("ext/pr.txt")
		if err != nil {
			t.Fatal(err)
		}
		prs[n] = pr{h, c.TreeHash, f.Hash}
	}
	setBound(t, &maxPullRefs, 4)
	ctx := context.Background()
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)

	// The mirror as earlier runs left it: branches, a tag, every PR, and
	// a backport's commit, unreferenced and loose.
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", "feature", "php-8.2.0"}})
	m, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(&git.FetchOptions{RemoteURL: url, RefSpecs: []config.RefSpec{"+refs/pull/*:refs/pull/*"}, Tags: git.NoTags}); err != nil {
		t.Fatal(err)
	}
	backport := commitFiles(t, m, tr.c2, map[string]string{"NEWS": "backported\n"}, "a backport")
	before := mirrorRefs(t, path)
	if n := len(before); n != 3+7 {
		t.Fatalf("the mirror holds %d refs before, want 3 and 7 pull refs: %v", n, before)
	}

	var log strings.Builder
	r, err := Open(ctx, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", "pull/3/head"}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[string]plumbing.Hash{}
	for name, h := range before {
		if !strings.HasPrefix(name, "refs/pull/") || name == "refs/pull/3/head" {
			want[name] = h
		}
	}
	after := mirrorRefs(t, path)
	if d := cmp.Diff(want, after); d != "" {
		t.Errorf("refs after the maintenance (-want +got):\n%s", d)
	}
	fresh, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	for n, p := range prs {
		if n == 3 {
			continue
		}
		for what, h := range map[string]plumbing.Hash{"commit": p.commit, "tree": p.tree, "blob": p.blob} {
			if err := fresh.Storer.HasEncodedObject(h); !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Errorf("the %s of dropped PR %d is still there: %v", what, n, err)
			}
		}
	}
	if err := fresh.Storer.HasEncodedObject(backport); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Errorf("the backport's commit is still there: %v", err)
	}
	if dirs, _ := os.ReadDir(filepath.Join(path, "refs", "pull")); len(dirs) != 1 || dirs[0].Name() != "3" {
		t.Errorf("refs/pull holds %v, want only 3/: a directory per dropped PR stays", dirs)
	}
	// pull/7/head was f1, which the branch feature still reaches.
	readHistory(t, path, after)
	if n := countPacks(t, path); n != 1 {
		t.Errorf("%d packs after the maintenance, want 1", n)
	}
	if n := countLoose(t, path); n != 0 {
		t.Errorf("%d loose objects after the maintenance, want 0", n)
	}
	line := maintained(t, log.String())
	if !strings.Contains(line, "pull refs 7 -> 1") {
		t.Errorf("the maintenance logged %q, want the pull refs before and after", line)
	}

	// The run goes on with the Repo Open returned.
	h, err := r.Resolve("pull/3/head")
	if err != nil || h != prs[3].commit {
		t.Fatalf("Resolve(pull/3/head) = %s, %v; want %s", h, err, prs[3].commit)
	}
	dir := filepath.Join(t.TempDir(), "head")
	if _, err := r.Export(ctx, h, dir); err != nil {
		t.Fatalf("export after the maintenance: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ext/pr.txt")); err != nil || string(b) != "only PR 3 has this\n" {
		t.Errorf("exported ext/pr.txt = %q, %v", b, err)
	}
}

// TestMaintainKeepsPullRefsOfCommit: a run that names a commit by hash
// drops no pull ref, as its commit may be reachable from one only.
func TestMaintainKeepsPullRefsOfCommit(t *testing.T) {
	tr := newTestRepo(t)
	setBound(t, &maxPullRefs, 0)
	cache := t.TempDir()
	url := "file://" + tr.dir
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"pull/7/head"}})
	var log strings.Builder
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", tr.f1.String()}, Log: &log})
	if _, ok := mirrorRefs(t, MirrorPath(cache, url))["refs/pull/7/head"]; !ok {
		t.Errorf("refs/pull/7/head was dropped, and with it the only ref to %s; log:\n%s", tr.f1, log.String())
	}
	if !strings.Contains(log.String(), "none dropped") {
		t.Errorf("the log does not say why no pull ref was dropped:\n%s", log.String())
	}
}

// TestMaintainRepacksManyPacks: a mirror over the bound of packs ends with
// one, every ref as it was, every object of their history readable: an
// annotated tag, a symlink, a submodule (whose commit is not in the
// mirror) included.
func TestMaintainRepacksManyPacks(t *testing.T) {
	tr := newTestRepo(t)
	up, err := git.PlainOpen(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	// Tagging a commit the mirror gets from no branch: the tag alone
	// reaches it.
	if _, err := up.CreateTag("v1", tr.nf, &git.CreateTagOptions{Tagger: &testSig, Message: "v1\n"}); err != nil {
		t.Fatal(err)
	}
	setBound(t, &maxPacks, 1000)
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", "pull/7/head", "v1"}})
	tip := tr.c2
	for i := range 5 {
		tip = commitFiles(t, up, tip, map[string]string{"NEWS": fmt.Sprintf("change %d\n", i)}, fmt.Sprintf("change %d", i))
		if i == 2 {
			c, _ := up.CommitObject(tip)
			tree, _ := c.Tree()
			files, err := Flatten(tree)
			if err != nil {
				t.Fatal(err)
			}
			link, err := WriteBlob(up.Storer, []byte("NEWS"))
			if err != nil {
				t.Fatal(err)
			}
			files["NEWS.link"] = Entry{Mode: filemode.Symlink, Hash: link}
			files["ext/vendored"] = Entry{Mode: filemode.Submodule, Hash: plumbing.NewHash("5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e")}
			root, err := WriteTree(up.Storer, files)
			if err != nil {
				t.Fatal(err)
			}
			if tip, err = WriteCommit(up.Storer, root, []plumbing.Hash{tip}, "a symlink and a submodule", testSig); err != nil {
				t.Fatal(err)
			}
		}
		setRef(t, up, "refs/heads/PHP-8.2", tip)
		openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}})
	}
	packs := countPacks(t, path)
	if packs < 7 {
		t.Fatalf("%d packs before, want one a fetch (7)", packs)
	}
	before := mirrorRefs(t, path)

	setBound(t, &maxPacks, 3)
	var log strings.Builder
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"pull/7/head"}, Log: &log})
	if d := cmp.Diff(before, mirrorRefs(t, path)); d != "" {
		t.Errorf("refs changed (-before +after):\n%s", d)
	}
	readHistory(t, path, before)
	if n := countPacks(t, path); n != 1 {
		t.Errorf("%d packs after the maintenance, want 1", n)
	}
	if line := maintained(t, log.String()); !strings.Contains(line, fmt.Sprintf("packs %d -> 1", packs)) {
		t.Errorf("the maintenance logged %q, want the packs before and after", line)
	}
}

// fileStates are the size, mode and modification time of every file and
// directory under dir.
func fileStates(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m[p] = fmt.Sprintf("%d %v %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMaintainLeavesMirrorUnderBounds: a mirror under both bounds, with
// several packs, pull refs the run does not ask for and a loose object,
// is not touched.
func TestMaintainLeavesMirrorUnderBounds(t *testing.T) {
	tr := newTestRepo(t)
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)
	setBound(t, &maxPullRefs, 1)
	setBound(t, &maxPacks, 2)
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", "pull/7/head"}})
	m, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, m, tr.c2, map[string]string{"NEWS": "backported\n"}, "a backport")
	if n := countPacks(t, path); n != 2 {
		t.Fatalf("%d packs, want 2", n)
	}
	before := fileStates(t, path)
	var log strings.Builder
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}, Log: &log})
	if d := cmp.Diff(before, fileStates(t, path)); d != "" {
		t.Errorf("the mirror changed (-before +after):\n%s", d)
	}
	if line := maintained(t, log.String()); line != "" {
		t.Errorf("logged %q for a mirror under the bounds", line)
	}
}

// TestMaintainWaitsForReaders: while a run has the mirror open, another
// does not maintain it (go-git would fail to read a pack deleted under the
// first); once it is closed, the next run does.
func TestMaintainWaitsForReaders(t *testing.T) {
	tr := newTestRepo(t)
	ctx := context.Background()
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)
	setBound(t, &maxPacks, 1000)
	first, err := Open(ctx, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", "pull/7/head"}})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	setBound(t, &maxPacks, 1)

	var log strings.Builder
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}, Log: &log})
	if !strings.Contains(log.String(), "put off") {
		t.Errorf("the log does not say the maintenance was put off:\n%s", log.String())
	}
	if n := countPacks(t, path); n != 2 {
		t.Errorf("%d packs while a run reads the mirror, want the 2 it read", n)
	}
	if _, err := first.Export(ctx, tr.f1, filepath.Join(t.TempDir(), "f1")); err != nil {
		t.Errorf("the first run's export: %v", err)
	}

	first.Close()
	log.Reset()
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}, Log: &log})
	if n := countPacks(t, path); n != 1 {
		t.Errorf("%d packs once no run reads the mirror, want 1; log:\n%s", n, log.String())
	}
}

// cutCtx ends after its Err has been asked after times: a repack cut short
// in the middle of writing its pack.
type cutCtx struct {
	context.Context
	asked, after atomic.Int32
}

func (c *cutCtx) Err() error {
	if c.asked.Add(1) > c.after.Load() {
		return context.Canceled
	}
	return nil
}

// TestMaintainCutShort: a maintenance that fails half-way fails no run
// and leaves a mirror that holds every ref it kept, readable, and nothing
// that removeLeftovers does not delete.
func TestMaintainCutShort(t *testing.T) {
	tr := newTestRepo(t)
	cache := t.TempDir()
	url := "file://" + tr.dir
	path := MirrorPath(cache, url)
	openClose(t, url, Options{CacheDir: cache, Refs: []string{"PHP-8.2", "pull/7/head", "php-8.2.0"}})
	setBound(t, &maxPacks, 1)
	before := mirrorRefs(t, path)
	packs := countPacks(t, path)

	// Cut in the middle of the new pack.
	r, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &cutCtx{Context: context.Background()}
	ctx.after.Store(4)
	var log strings.Builder
	err = maintainMirror(ctx, r, path, []string{"PHP-8.2"}, &log)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("maintenance cut short = %v, want context.Canceled", err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(path, "objects", "pack", "tmp_pack_*")); len(tmp) == 0 {
		t.Errorf("no temporary pack: the repack was not cut while writing it")
	}
	if err := removeLeftovers(path); err != nil {
		t.Fatal(err)
	}
	if n := countPacks(t, path); n != packs {
		t.Errorf("%d packs after a repack cut short, want the %d before", n, packs)
	}
	if d := cmp.Diff(before, mirrorRefs(t, path)); d != "" {
		t.Errorf("refs changed (-before +after):\n%s", d)
	}
	readHistory(t, path, before)

	// A maintenance that fails does not fail the run: a ref to an object
	// the mirror lacks makes the walk fail.
	setRef(t, r, "refs/heads/broken", plumbing.NewHash("0bad0bad0bad0bad0bad0bad0bad0bad0bad0bad"))
	log.Reset()
	got, err := Open(context.Background(), url, Options{CacheDir: cache, Refs: []string{"PHP-8.2"}, Log: &log})
	if err != nil {
		t.Fatalf("Open with a failing maintenance: %v", err)
	}
	defer got.Close()
	if !strings.Contains(log.String(), "using it as fetched") {
		t.Errorf("the log does not tell the maintenance failed:\n%s", log.String())
	}
	if _, err := got.Export(context.Background(), tr.c2, filepath.Join(t.TempDir(), "c2")); err != nil {
		t.Errorf("export after a failed maintenance: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(path, "objects", "pack", "tmp_*")); len(left) > 0 {
		t.Errorf("a failed maintenance left %v", left)
	}
	readHistory(t, path, before)
}
