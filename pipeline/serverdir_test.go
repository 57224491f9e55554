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
	r.closeServerDirs()
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the servers' directory %s outlived the run: %v", root, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("closing removed the run directory: %v", err)
	}
}
