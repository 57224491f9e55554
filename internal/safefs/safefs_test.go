package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree makes a directory as a hostile build might leave it, beside a
// "host" file it must not be able to expose.
func tree(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	secret = filepath.Join(base, "host-credentials")
	if err := os.WriteFile(secret, []byte("TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "build")
	for _, d := range []string{"main", "sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "main", "php_version.h"), []byte("#define PHP_VERSION \"8.2.32\"\n"), 0o644))
	must(os.Symlink(secret, filepath.Join(dir, "run-tests.php")))              // absolute link out
	must(os.Symlink("../../host-credentials", filepath.Join(dir, "sub", "x"))) // relative link out
	must(os.Symlink("../main", filepath.Join(dir, "sub", "main")))             // a directory link inside
	must(os.Symlink("php_version.h", filepath.Join(dir, "main", "alias.h")))   // a file link inside
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	return dir, secret
}

func TestReadFile(t *testing.T) {
	dir, _ := tree(t)
	for _, tt := range []struct {
		rel  string
		max  int64
		want string // "" for an error
	}{
		{"main/php_version.h", 1 << 10, "#define"},
		{"sub/main/php_version.h", 1 << 10, "#define"}, // a link that stays inside, on the way
		{"run-tests.php", 1 << 10, ""},                 // a link out of the tree
		{"sub/x", 1 << 10, ""},                         // a relative link out of it
		{"../host-credentials", 1 << 10, ""},           // .. out of it
		{"main/alias.h", 1 << 10, "#define"},           // a file link that stays inside
		{"fifo", 1 << 10, ""},                          // not a regular file: would block
		{"main/php_version.h", 8, ""},                  // over its bound
	} {
		t.Run(tt.rel, func(t *testing.T) {
			b, err := ReadFile(dir, tt.rel, tt.max)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("read %q: %q, want an error", tt.rel, b)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("the error tells the host file: %v", err)
				}
				return
			}
			if err != nil || !strings.Contains(string(b), tt.want) {
				t.Fatalf("read %q: %q, %v; want %q", tt.rel, b, err, tt.want)
			}
		})
	}
	if _, err := ReadFile(dir, "main/php_version.h", 8); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the bound: %v, want ErrTooLarge", err)
	}
}

func TestTreeBudget(t *testing.T) {
	dir, secret := tree(t)
	tr, err := OpenTree(dir, 40)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := tr.CopyFile("main/php_version.h", filepath.Join(dst, "a")); err != nil {
		t.Fatal(err)
	}
	// 29 bytes used of 40: a second copy goes over the tree's budget.
	if err := tr.CopyFile("main/php_version.h", filepath.Join(dst, "b")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("second copy: %v, want ErrTooLarge", err)
	}
	if err := tr.CopyFile("run-tests.php", filepath.Join(dst, "c")); err == nil {
		t.Error("copied a link out of the tree")
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "c")); strings.Contains(string(b), "hunter2") {
		t.Errorf("the copy holds %s", secret)
	}
}

// ReadIn guards the whole way from its root: a directory of the way that
// is a link out (where ReadPath, which opens beneath the file's own
// directory, reads the host's file), and a path not beneath the root.
func TestReadIn(t *testing.T) {
	dir, secret := tree(t)
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	through := filepath.Join(dir, "out", filepath.Base(secret))
	if b, err := ReadPath(through, 1<<10); err != nil || !strings.Contains(string(b), "hunter2") {
		t.Fatalf("ReadPath through the link: %q, %v; the case no longer shows the hole", b, err)
	}
	if b, err := ReadIn(dir, through, 1<<10); err == nil {
		t.Errorf("ReadIn read %q through a directory link out of the tree", b)
	}
	if b, err := ReadIn(dir, secret, 1<<10); err == nil || !strings.Contains(err.Error(), "not beneath") {
		t.Errorf("ReadIn of a path outside the root: %q, %v", b, err)
	}
	if b, err := ReadIn(dir, filepath.Join(dir, "sub/main/php_version.h"), 1<<10); err != nil || !strings.Contains(string(b), "#define") {
		t.Errorf("ReadIn through a link that stays inside: %q, %v", b, err)
	}
}
