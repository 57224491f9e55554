package checkout

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/childenv"
)

// rawRepo is an in-memory repository that trees are written into entry by
// entry, so that a test can make trees git itself would never write.
type rawRepo struct {
	t *testing.T
	r *git.Repository
}

func newRawRepo(t *testing.T) *rawRepo {
	t.Helper()
	r, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &rawRepo{t: t, r: r}
}

func (rr *rawRepo) blob(data string) plumbing.Hash {
	rr.t.Helper()
	h, err := WriteBlob(rr.r.Storer, []byte(data))
	if err != nil {
		rr.t.Fatal(err)
	}
	return h
}

func (rr *rawRepo) file(name, data string) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: rr.blob(data)}
}

func (rr *rawRepo) symlink(name, target string) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Symlink, Hash: rr.blob(target)}
}

func (rr *rawRepo) dir(name string, entries ...object.TreeEntry) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: rr.tree(entries...)}
}

// tree stores entries as they are: duplicates, slashes, ".." and all.
func (rr *rawRepo) tree(entries ...object.TreeEntry) plumbing.Hash {
	rr.t.Helper()
	sortTreeEntries(entries)
	o := rr.r.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
		rr.t.Fatal(err)
	}
	h, err := rr.r.Storer.SetEncodedObject(o)
	if err != nil {
		rr.t.Fatal(err)
	}
	return h
}

func (rr *rawRepo) commit(entries ...object.TreeEntry) plumbing.Hash {
	rr.t.Helper()
	h, err := WriteCommit(rr.r.Storer, rr.tree(entries...), nil, "tree", testSig)
	if err != nil {
		rr.t.Fatal(err)
	}
	return h
}

// listTree lists every path under dir, slash-separated, symlinks unfollowed.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestExportRefusesUnsafeTrees(t *testing.T) {
	tests := []struct {
		name  string
		tree  func(rr *rawRepo, elsewhere string) []object.TreeEntry
		entry string // the entry the error must name; ELSEWHERE stands for elsewhere
	}{
		{
			name: "symlink and a directory of the same name",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.symlink("x", elsewhere), rr.dir("x", rr.file("planted", "pwned\n"))}
			},
			entry: "x",
		},
		{
			name: "symlink and a directory of the same name, deeper",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.dir("ext", rr.symlink("x", elsewhere), rr.dir("x", rr.file("planted", "pwned\n")))}
			},
			entry: "ext/x",
		},
		{
			name: "a name with a slash beneath a symlink",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.symlink("x", elsewhere), rr.file("x/planted", "pwned\n")}
			},
			entry: "x/planted",
		},
		{
			name: "an absolute name",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.file(elsewhere+"/planted", "pwned\n")}
			},
			entry: "ELSEWHERE/planted",
		},
		{
			name: "a directory named ..",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.dir("..", rr.file("planted", "pwned\n"))}
			},
			entry: "..",
		},
		{
			name: "a directory named .. below another",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.dir("a", rr.dir("..", rr.dir("..", rr.file("planted", "pwned\n"))))}
			},
			entry: "a/..",
		},
		{
			name: "a directory named .",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.dir(".", rr.file("planted", "pwned\n"))}
			},
			entry: ".",
		},
		{
			name: "a .git directory",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.dir(".git", rr.file("config", "[core]\n\tfsmonitor = id\n"))}
			},
			entry: ".git",
		},
		{
			name: "a .GIT directory deeper",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.dir("ext", rr.dir(".GIT", rr.file("config", "[core]\n")))}
			},
			entry: "ext/.GIT",
		},
		{
			name: "two files of the same name",
			tree: func(rr *rawRepo, elsewhere string) []object.TreeEntry {
				return []object.TreeEntry{rr.file("README", "first\n"), rr.file("README", "second\n")}
			},
			entry: "README",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			elsewhere := filepath.Join(base, "elsewhere")
			if err := os.Mkdir(elsewhere, 0o755); err != nil {
				t.Fatal(err)
			}
			rr := newRawRepo(t)
			commit := rr.commit(tt.tree(rr, elsewhere)...)
			r := &Repo{Remote: "memory", repo: rr.r}
			dest := filepath.Join(base, "out", "src", "head")

			_, err := r.Export(context.Background(), commit, dest)
			if !errors.Is(err, ErrUnsafeEntry) {
				t.Fatalf("Export = %v, want ErrUnsafeEntry", err)
			}
			if want := strconv.Quote(strings.ReplaceAll(tt.entry, "ELSEWHERE", elsewhere)); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name the entry %s", err, want)
			}
			// Nothing was written: not at dest, not beside it, not through
			// a symlink.
			if d := cmp.Diff([]string{"elsewhere", "out", "out/src"}, listTree(t, base)); d != "" {
				t.Errorf("files written outside the export (-want +got):\n%s", d)
			}
		})
	}
}

func TestExportWritesSymlinksAsSymlinks(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "elsewhere", "secret")
	if err := os.MkdirAll(filepath.Dir(secret), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rr := newRawRepo(t)
	commit := rr.commit(
		rr.file("README", "readme\n"),
		rr.symlink("outside", secret),
		rr.symlink("inside", "README"),
		rr.dir("ext", rr.symlink("up", "../README"), rr.file("a.c", "int a;\n")),
		object.TreeEntry{Name: "sub", Mode: filemode.Submodule, Hash: plumbing.NewHash("1111111111111111111111111111111111111111")},
	)
	r := &Repo{Remote: "memory", repo: rr.r}
	dest := filepath.Join(base, "out", "head")
	n, err := r.Export(context.Background(), commit, dest)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("exported %d files, want 5", n)
	}
	for name, target := range map[string]string{"outside": secret, "inside": "README", "ext/up": "../README"} {
		p := filepath.Join(dest, filepath.FromSlash(name))
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is %v, want a symlink", name, fi.Mode())
			continue
		}
		if got, _ := os.Readlink(p); got != target {
			t.Errorf("%s -> %q, want -> %q", name, got, target)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "secret\n" {
		t.Errorf("the symlink's target was written: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dest, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("submodule sub: %v, want an empty directory", err)
	}
	want := []string{"README", "ext", "ext/a.c", "ext/up", "inside", "outside", "sub"}
	if d := cmp.Diff(want, listTree(t, dest)); d != "" {
		t.Errorf("exported tree (-want +got):\n%s", d)
	}
}

// TestExportRemovesKilledExportsLeftovers: a killed run's half-written
// export beside the target (its pid in the name, that process gone) is
// removed by the next export to the same place; a live process's, and one
// whose writer is unknown, are left alone.
func TestExportRemovesKilledExportsLeftovers(t *testing.T) {
	tr := newTestRepo(t)
	r, err := Open(context.Background(), tr.dir, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A pid that was a process and is no longer one.
	cmd := exec.Command("true")
	cmd.Env = childenv.For(childenv.Tool)
	if err := cmd.Run(); err != nil {
		t.Skipf("no true(1) to get a dead pid: %v", err)
	}
	dead := cmd.Process.Pid
	dir := filepath.Join(t.TempDir(), "src", "head")
	parent := filepath.Dir(dir)
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(p, "ext"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	killed := mk(exportTempPrefix(dir, dead) + "111")
	live := mk(exportTempPrefix(dir, os.Getpid()) + "222")
	unknown := mk("head.tmp-333")
	other := mk(exportTempPrefix(filepath.Join(parent, "base"), dead) + "444")

	if _, err := r.Export(context.Background(), tr.f1, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("a killed export's %s survived: %v", killed, err)
	}
	for _, keep := range []string{live, unknown, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed though its writer may live or it is another export's: %v", keep, err)
		}
	}
}
