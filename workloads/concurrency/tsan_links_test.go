package concurrency

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTSanLogsRefusesLinksOut: a report file that the server's user made a
// link to a host file is an error, and the host file's text is nowhere.
func TestTSanLogsRefusesLinksOut(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tsan.100"), []byte("WARNING: ThreadSanitizer: data race\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "tsan.200")); err != nil {
		t.Fatal(err)
	}
	b, err := TSanLogs(dir)
	if err == nil {
		t.Errorf("read a report linked out of the directory: %q", b)
	}
	if strings.Contains(string(b), "hunter2") || (err != nil && strings.Contains(err.Error(), "hunter2")) {
		t.Errorf("the host file's text came back: %q, %v", b, err)
	}
}
