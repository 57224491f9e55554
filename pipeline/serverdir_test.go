package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/workloads/httpd"
)

// A run directory the servers' user cannot enter (a clone under /root)
// gets its servers' directories elsewhere, which that user can enter, for
// the run only; an open one keeps them inside.
func TestServerDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only a root run switches the servers' user")
	}
	if _, err := os.Stat("/etc/apache2"); err != nil {
		t.Skip("needs Apache's user (apt-get install apache2)")
	}
	// t.TempDir's own directories are 0700.
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755)
	os.Chmod(base, 0o755)

	open := filepath.Join(base, "open")
	os.MkdirAll(open, 0o755)
	r := &Run{Dir: open, Progress: NewProgress(&bytes.Buffer{}, false)}
	got, err := r.serverDir("race", "PHP-8.2")
	if err != nil || got != filepath.Join(open, "race", "PHP-8.2") {
		t.Errorf("open run dir: %q, %v; want it inside", got, err)
	}
	r.closeServerDirs()
	if _, err := os.Stat(open); err != nil {
		t.Errorf("closing removed the run directory itself: %v", err)
	}

	closed := filepath.Join(base, "home")
	out := filepath.Join(closed, "patchproof", "patchproof-out")
	os.MkdirAll(out, 0o755)
	os.Chmod(closed, 0o700)
	var progress bytes.Buffer
	r = &Run{Dir: out, Progress: NewProgress(&progress, false)}
	t.Cleanup(r.closeServerDirs)
	got, err = r.serverDir("race", "PHP-8.2")
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(got, closed) {
		t.Fatalf("closed run dir: servers in %s, which %s cannot enter", got, httpd.DefaultUser)
	}
	root := filepath.Dir(filepath.Dir(got))
	if again, _ := r.serverDir("bench", "PHP-8.2"); filepath.Dir(filepath.Dir(again)) != root {
		t.Errorf("a second stage's servers in %s, not beside the first's in %s", again, root)
	}
	if err := os.MkdirAll(got, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := httpd.Reachable(got, httpd.DefaultUser); err != nil {
		t.Errorf("closed run dir: %v", err)
	}
	if !strings.Contains(progress.String(), root) {
		t.Errorf("the run does not say where its servers went; progress:\n%s", progress.String())
	}
	// What the servers say is kept where the run directory would have had
	// it; the rest of their files is not.
	os.WriteFile(filepath.Join(got, "error.log"), []byte("AH00558: the log\n"), 0o644)
	os.MkdirAll(filepath.Join(got, "docroot"), 0o755)
	os.WriteFile(filepath.Join(got, "docroot", "index.php"), []byte("<?php"), 0o644)
	r.closeServerDirs()
	if b, err := os.ReadFile(filepath.Join(out, "race", "PHP-8.2", "error.log")); string(b) != "AH00558: the log\n" {
		t.Errorf("the server's error log was not kept in the run directory: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "race", "PHP-8.2", "docroot")); !os.IsNotExist(err) {
		t.Errorf("a server's docroot was kept too: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the servers' directory %s outlived the run: %v", root, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("closing removed the run directory: %v", err)
	}
}

// A kept log is its end, where the failure is told.
func TestCopyTail(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "error.log")
	os.WriteFile(src, []byte("start\nmiddle\nthe end\n"), 0o644)
	for _, c := range []struct {
		n    int64
		want string
	}{{8, "the end\n"}, {1 << 20, "start\nmiddle\nthe end\n"}} {
		dst := filepath.Join(dir, "kept", "error.log")
		if err := copyTail(src, dst, c.n); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(dst); string(b) != c.want {
			t.Errorf("the last %d bytes: %q, want %q", c.n, b, c.want)
		}
	}
}

// A killed run leaves its servers' directory behind: the next run that
// makes one removes those whose run is gone, and no live run's.
func TestSweepServerDirs(t *testing.T) {
	tmp := t.TempDir()
	now := time.Now()
	mk := func(name string, lock bool, age time.Duration) string {
		dir := filepath.Join(tmp, serverDirPrefix+name)
		os.MkdirAll(filepath.Join(dir, "mysql", "data"), 0o755)
		os.WriteFile(filepath.Join(dir, "mysql", "data", "ibdata1"), []byte("x"), 0o644)
		if lock {
			os.WriteFile(filepath.Join(dir, serverDirLock), nil, 0o644)
		}
		os.Chtimes(dir, now.Add(-age), now.Add(-age))
		return dir
	}
	dead := mk("dead", true, 0)
	live := mk("live", true, 0)
	unlock, ok, err := cachedir.TryLock(filepath.Join(live, serverDirLock))
	if err != nil || !ok {
		t.Fatalf("lock the live run's directory: %v %v", ok, err)
	}
	defer unlock()
	oldUnlocked := mk("old", false, 2*unlockedGrace)
	newUnlocked := mk("new", false, unlockedGrace/2)
	other := filepath.Join(tmp, "patchproof-other")
	os.MkdirAll(other, 0o755)

	n, err := sweepServerDirs(tmp, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("removed %d, want 2 (the dead run's and the old unlocked one)", n)
	}
	for dir, want := range map[string]bool{dead: false, oldUnlocked: false, live: true, newUnlocked: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// The directory a run makes holds its lock until the run closes it: a
// sweep by a second run leaves it, and one after the close would not find
// it.
func TestServerDirHoldsItsLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only a root run switches the servers' user")
	}
	if _, err := os.Stat("/etc/apache2"); err != nil {
		t.Skip("needs Apache's user (apt-get install apache2)")
	}
	tmp := t.TempDir()
	os.Chmod(tmp, 0o755)
	t.Setenv("TMPDIR", tmp)
	closed := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(closed, 0o700)
	r := &Run{Dir: closed, Progress: NewProgress(&bytes.Buffer{}, false)}
	t.Cleanup(r.closeServerDirs)
	got, err := r.serverDir("mysql")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(got)
	if !strings.HasPrefix(root, tmp) {
		t.Fatalf("servers in %s, not in TMPDIR %s", root, tmp)
	}
	if n, err := sweepServerDirs(tmp, time.Now().Add(2*unlockedGrace)); n != 0 || err != nil {
		t.Errorf("a sweep while the run lives removed %d (%v)", n, err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("the live run's directory was swept: %v", err)
	}
	r.closeServerDirs()
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("closed, the directory is still there: %v", err)
	}
}
