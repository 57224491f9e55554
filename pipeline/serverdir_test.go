package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
