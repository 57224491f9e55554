package builders

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileBuild builds a fake tree whose files and Makefile do what a pull
// request could, beside a host file it must not reach; it returns the
// build, its error and the host file's content after it.
func hostileBuild(t *testing.T, files map[string]string, makeExtra string) (*Build, string, error) {
	t.Helper()
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	host := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(host, []byte("ssh-ed25519 AAAA runner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{
		"configure": fakeConfigure,
		"Makefile": "include Makefile.vars\nall: main.lo\n" + fakePHPRecipe +
			strings.ReplaceAll(makeExtra, "HOST", host) + "main.lo: main.c\n\t$(CC) -c main.c -o main.o\n\ttouch main.lo\n",
		"main.c": "int main(void) { return 0; }\n",
	}
	src := writeTree(t, tree)
	for name, target := range files {
		if err := os.Symlink(strings.ReplaceAll(target, "HOST", host), filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	b := &Builder{Exec: &Host{}, CacheDir: t.TempDir()}
	res, err := b.Build(context.Background(), Spec{Label: "head/nts", Source: src, TreeHash: "hostile", Variant: NTS, Profile: ProfileMySQL, Jobs: 1})
	got, rerr := os.ReadFile(host)
	if rerr != nil {
		t.Fatalf("the host file: %v", rerr)
	}
	return res, string(got), err
}

// TestBuildNeverWritesThroughTheTreesLinks: patchproof's build log and
// record go into the build directory, which the tree and its make wrote;
// a link they left at those names never takes patchproof's write to the
// host.
func TestBuildNeverWritesThroughTheTreesLinks(t *testing.T) {
	const want = "ssh-ed25519 AAAA runner\n"
	t.Run("a log link in the tree", func(t *testing.T) {
		res, host, err := hostileBuild(t, map[string]string{buildLogName: "HOST"}, "")
		if host != want {
			t.Fatalf("the host file now holds %q", host)
		}
		if err != nil || !res.OK {
			t.Fatalf("Build = %v, %+v; want a build, the link replaced", err, res)
		}
		if fi, err := os.Lstat(res.BuildLog); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the entry's log: %v, %v; want a regular file", fi, err)
		}
	})
	t.Run("a record link made by make", func(t *testing.T) {
		res, host, err := hostileBuild(t, nil, "\tln -sf HOST "+buildFile+"\n\tln -sf HOST "+filesFile+"\n")
		if host != want {
			t.Fatalf("the host file now holds %q", host)
		}
		if err != nil || !res.OK {
			t.Fatalf("Build = %v, %+v; want a build, the links replaced", err, res)
		}
		for _, name := range []string{buildFile, filesFile} {
			if fi, err := os.Lstat(filepath.Join(res.Dir, name)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the entry's %s: %v, %v; want a regular file", name, fi, err)
			}
		}
		if _, err := readBuild(res.Dir); err != nil {
			t.Errorf("the entry does not read back: %v", err)
		}
	})
	t.Run("the log swapped for a link by make", func(t *testing.T) {
		res, host, err := hostileBuild(t, nil, "\tln -sf HOST "+buildLogName+"\n")
		if host != want {
			t.Fatalf("the host file now holds %q", host)
		}
		if !errors.Is(err, ErrBuildFailed) || res == nil || res.OK || !strings.HasPrefix(res.Failure, "record") {
			t.Fatalf("Build = %v, %+v; want a build failed at record", err, res)
		}
	})
}

// TestBuildFailedAtRecordIsNoBuild: a build whose digests could not be
// recorded (a link among its objects) is a failed build, never "ok".
func TestBuildFailedAtRecordIsNoBuild(t *testing.T) {
	res, _, err := hostileBuild(t, nil, "\tmkdir -p ext/mysqlnd && ln -sf /etc/hostname ext/mysqlnd/evil.o\n")
	if !errors.Is(err, ErrBuildFailed) {
		t.Fatalf("Build = %v, want ErrBuildFailed", err)
	}
	if res == nil || res.OK || !strings.HasPrefix(res.Failure, "record digests") {
		t.Fatalf("result = %+v, want a build failed at record digests, not ok", res)
	}
}

// hostDir is a host directory holding a file, beside a tree a build made
// whose directory "main" is a link to it, as a head's make can leave it.
func hostDir(t *testing.T) (tree, host string) {
	t.Helper()
	host = filepath.Join(t.TempDir(), "victim")
	if err := os.MkdirAll(filepath.Join(host, ".libs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"evil.o", "evil.lo", ".libs/evil.o", "keys"} {
		if err := os.WriteFile(filepath.Join(host, f), []byte("host"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree = t.TempDir()
	if err := os.Symlink(host, filepath.Join(tree, "main")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tree, "ext/mysqlnd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(tree, "ext/mysqlnd/sub")); err != nil {
		t.Fatal(err)
	}
	return tree, host
}

// TestDeriveNeverFollowsTheBuildsLinks: a ThreadSanitizer build is derived
// from head's ZTS build, a tree head's make wrote. Removing the objects to
// instrument, and making the copy writable or read-only, never reach a
// host directory through a link of that tree.
func TestDeriveNeverFollowsTheBuildsLinks(t *testing.T) {
	tree, host := hostDir(t)
	if err := removeObjects(tree, []string{"main/evil.c", "ext/mysqlnd/"}); err == nil {
		t.Error("removeObjects through a directory link out of the tree = nil, want an error")
	}
	for _, f := range []string{"evil.o", "evil.lo", ".libs/evil.o"} {
		if _, err := os.Stat(filepath.Join(host, f)); err != nil {
			t.Errorf("the host's %s: %v", f, err)
		}
	}
	if err := makeReadOnly(tree); err != nil {
		t.Fatal(err)
	}
	if err := writableCopy(tree); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(host, "keys")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the host's keys: %v, %v; want mode 0644 untouched", fi, err)
	}
	if fi, err := os.Stat(host); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the host directory: %v, %v; want mode 0755 untouched", fi, err)
	}
	if err := removeEntry(tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(host, "keys")); err != nil {
		t.Errorf("removing the entry removed the host's keys: %v", err)
	}
}
