package builders

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTSanInstrument(t *testing.T) {
	got := TSanInstrument([]string{"ext/mysqlnd/mysqlnd_statistics.c", "ext/mysqlnd/mysqlnd_statistics.h",
		"main/main.c", "Zend/zend_alloc.h", "ext/standard/tests/x.phpt", "../evil.c", "main/main.c"})
	want := []string{"TSRM/", "ext/mysqli/", "ext/mysqlnd/", "ext/pdo/", "ext/pdo_mysql/", "main/main.c"}
	if !slices.Equal(got, want) {
		t.Errorf("TSanInstrument = %q, want %q", got, want)
	}
}

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveObjects(t *testing.T) {
	tree := t.TempDir()
	for _, f := range []string{"ext/mysqlnd/a.lo", "ext/mysqlnd/a.o", "ext/mysqlnd/.libs/a.o", "ext/mysqlnd/a.c",
		"ext/mysqlnd/a.dep", "main/main.lo", "main/main.o", "main/.libs/main.o", "main/main.c", "main/other.o", "Zend/z.o"} {
		write(t, filepath.Join(tree, f), "x")
	}
	// ext/pdo is not built here: no error.
	if err := removeObjects(tree, []string{"ext/mysqlnd/", "ext/pdo/", "main/main.c"}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{
		"ext/mysqlnd/a.lo": false, "ext/mysqlnd/a.o": false, "ext/mysqlnd/.libs/a.o": false, "ext/mysqlnd/a.c": true,
		"ext/mysqlnd/a.dep": true, "main/main.lo": false, "main/main.o": false, "main/.libs/main.o": false,
		"main/main.c": true, "main/other.o": true, "Zend/z.o": true,
	} {
		if got := fileExists(filepath.Join(tree, f)); got != want {
			t.Errorf("%s exists: %v, want %v", f, got, want)
		}
	}
	for _, bad := range []string{"../x/", "/etc/", "main/../../x.c", "main/main.h"} {
		if err := removeObjects(tree, []string{bad}); err == nil {
			t.Errorf("removeObjects(%q) = nil, want an error", bad)
		}
	}
}

func TestRewritePath(t *testing.T) {
	tree := t.TempDir()
	old := "/cache/builds/0123.tmp-42"
	write(t, filepath.Join(tree, "Makefile"), "top_builddir = "+old+"\nsrcdir = "+old+"\n")
	write(t, filepath.Join(tree, "bin.dat"), "\x00"+old)
	write(t, filepath.Join(tree, "x.o"), old)
	outside := filepath.Join(t.TempDir(), "outside")
	write(t, outside, old)
	if err := os.Symlink(outside, filepath.Join(tree, "link")); err != nil {
		t.Fatal(err)
	}
	then := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, f := range []string{"Makefile", "bin.dat", "x.o"} {
		if err := os.Chtimes(filepath.Join(tree, f), then, then); err != nil {
			t.Fatal(err)
		}
	}
	got, err := configuredPath(tree)
	if err != nil || got != old {
		t.Fatalf("configuredPath = %q, %v; want %q", got, err, old)
	}
	if err := rewritePath(tree, old, tree); err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if m := read(filepath.Join(tree, "Makefile")); m != "top_builddir = "+tree+"\nsrcdir = "+tree+"\n" {
		t.Errorf("Makefile = %q", m)
	}
	if fi, err := os.Stat(filepath.Join(tree, "Makefile")); err != nil || !fi.ModTime().Equal(then) {
		t.Errorf("Makefile's time: %v, %v; want %v kept", fi.ModTime(), err, then)
	}
	for _, p := range []string{filepath.Join(tree, "bin.dat"), filepath.Join(tree, "x.o"), outside} {
		if !strings.HasSuffix(read(p), old) {
			t.Errorf("%s was rewritten: binary files and what a symlink names are left alone", p)
		}
	}
}

func TestPutChanged(t *testing.T) {
	src, tree := t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, "ext/mysqlnd/a.c"), "new")
	write(t, filepath.Join(src, "new/dir/b.h"), "added")
	write(t, filepath.Join(tree, "ext/mysqlnd/a.c"), "old")
	write(t, filepath.Join(tree, "gone.c"), "deleted in head")
	then := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(src, "ext/mysqlnd/a.c"), then, then); err != nil {
		t.Fatal(err)
	}
	if err := putChanged(src, tree, []string{"ext/mysqlnd/a.c", "gone.c", "new/dir/b.h"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(tree, "ext/mysqlnd/a.c"))
	if err != nil || string(data) != "new" {
		t.Errorf("a.c = %q, %v; want the head's", data, err)
	}
	if fi, err := os.Stat(filepath.Join(tree, "ext/mysqlnd/a.c")); err != nil || !fi.ModTime().After(then.Add(30*time.Minute)) {
		t.Errorf("a.c's time is the source's (%v): make would not see it as newer", fi.ModTime())
	}
	if fileExists(filepath.Join(tree, "gone.c")) {
		t.Error("gone.c, not in the head, is still there")
	}
	if !fileExists(filepath.Join(tree, "new/dir/b.h")) {
		t.Error("new/dir/b.h, added in the head, is missing")
	}

	// A directory of the base that the head made a symlink out of the
	// tree: its files are not read through it.
	secret := t.TempDir()
	write(t, filepath.Join(secret, "passwd"), "host secret")
	if err := os.Symlink(secret, filepath.Join(src, "etc")); err != nil {
		t.Fatal(err)
	}
	if err := putChanged(src, tree, []string{"etc/passwd"}); err == nil {
		t.Error("putChanged read etc/passwd through a symlink out of the source")
	}
	if fileExists(filepath.Join(tree, "etc/passwd")) {
		t.Error("the host's file was copied into the tree")
	}
	for _, bad := range []string{"../x.c", "/etc/passwd", "a/../../x"} {
		if err := putChanged(src, tree, []string{bad}); err == nil {
			t.Errorf("putChanged(%q) = nil, want an error", bad)
		}
	}
}

func TestDerivable(t *testing.T) {
	zts := &Build{Label: "base/zts", OK: true, Dir: "/c/builds/k", Variant: ZTS, Profile: ProfileMySQL, TreeHash: "t1", Key: "k"}
	for _, c := range []struct {
		name string
		spec Spec
		ok   bool
	}{
		{"tsan from its zts", Spec{Variant: TSan, Profile: ProfileMySQL, TreeHash: "t1", From: zts, Instrument: []string{"ext/mysqlnd/"}}, true},
		{"tsan from another tree", Spec{Variant: TSan, Profile: ProfileMySQL, TreeHash: "t2", From: zts, Instrument: []string{"ext/mysqlnd/"}}, false},
		{"tsan with nothing to instrument", Spec{Variant: TSan, Profile: ProfileMySQL, TreeHash: "t1", From: zts}, false},
		{"head from base", Spec{Variant: ZTS, Profile: ProfileMySQL, TreeHash: "t2", From: zts}, true},
		{"head of another variant", Spec{Variant: NTS, Profile: ProfileMySQL, TreeHash: "t2", From: zts}, false},
		{"head of another profile", Spec{Variant: ZTS, Profile: ProfileOfficial, TreeHash: "t2", From: zts}, false},
		{"head with a build-system change", Spec{Variant: ZTS, Profile: ProfileMySQL, TreeHash: "t2", From: zts, Buildconf: true}, false},
		{"from a failed build", Spec{Variant: ZTS, Profile: ProfileMySQL, TreeHash: "t2", From: &Build{Label: "x", Variant: ZTS, Profile: ProfileMySQL}}, false},
	} {
		if err := c.spec.derivable(); (err == nil) != c.ok {
			t.Errorf("%s: derivable = %v, want ok %v", c.name, err, c.ok)
		}
	}
}
