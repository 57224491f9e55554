package safefs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteNeverThroughALink writes, as patchproof writes its build log and
// record into a build directory, at names the tree under test made links,
// FIFOs or links on the way: the host file is never written, and what is
// written lands as a regular file inside the tree or is refused.
func TestWriteNeverThroughALink(t *testing.T) {
	for _, tt := range []struct {
		rel    string
		wantOK bool // the write lands, as a regular file at rel
	}{
		{"run-tests.php", true},        // an absolute link out: replaced
		{"sub/x", true},                // a relative link out: replaced
		{"main/alias.h", true},         // a link inside: replaced, not followed
		{"fifo", true},                 // a FIFO: replaced, never opened
		{"new/dir/record.json", true},  // directories made on the way
		{"sub/main/record.json", true}, // a directory link that stays inside
		{"../host-credentials", false}, // .. out of the tree
		{"main", false},                // a directory is not removed
	} {
		t.Run(tt.rel, func(t *testing.T) {
			dir, secret := tree(t)
			err := WriteFile(dir, tt.rel, []byte("patchproof's record\n"), 0o644)
			if got, _ := os.ReadFile(secret); string(got) != "TOKEN=hunter2\n" {
				t.Fatalf("the host file now holds %q", got)
			}
			if !tt.wantOK {
				if err == nil {
					t.Fatalf("WriteFile(%q) = nil, want an error", tt.rel)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteFile(%q): %v", tt.rel, err)
			}
			fi, err := os.Lstat(filepath.Join(dir, tt.rel))
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s after the write: %v, %v; want a regular file", tt.rel, fi, err)
			}
		})
	}
}

// TestWriteInRefusesALinkOnTheWay: a directory of the way that the tree made
// a link out of the root is not followed.
func TestWriteInRefusesALinkOnTheWay(t *testing.T) {
	dir, secret := tree(t)
	out := filepath.Dir(secret)
	if err := os.Symlink(out, filepath.Join(dir, "logs")); err != nil {
		t.Fatal(err)
	}
	err := WriteIn(dir, filepath.Join(dir, "logs", "host-credentials"), []byte("x"), 0o644)
	if err == nil {
		t.Fatal("WriteIn through a directory link out of the root succeeded")
	}
	if got, _ := os.ReadFile(secret); string(got) != "TOKEN=hunter2\n" {
		t.Fatalf("the host file now holds %q", got)
	}
	if err := WriteIn(dir, filepath.Join(out, "elsewhere"), []byte("x"), 0o644); err == nil {
		t.Fatal("WriteIn of a path outside the root succeeded")
	}
}

func TestAppendPath(t *testing.T) {
	dir, secret := tree(t)
	for _, rel := range []string{"run-tests.php", "sub/x", "fifo", "main"} {
		f, err := AppendPath(filepath.Join(dir, rel), 0o644)
		if err == nil {
			f.Close()
			t.Errorf("AppendPath(%s) = nil, want an error", rel)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "TOKEN=hunter2\n" {
		t.Fatalf("the host file now holds %q", got)
	}
	p := filepath.Join(dir, "server.out")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := AppendPath(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if got, _ := os.ReadFile(p); string(got) != "one\ntwo\n" {
		t.Fatalf("appended file holds %q", got)
	}
}

// TestDirReplacesALink: a server's dump directory that the server's code
// made a link to a host directory is made a directory of its own again;
// the host directory keeps its mode and its files.
func TestDirReplacesALink(t *testing.T) {
	dir, secret := tree(t)
	host := filepath.Dir(secret)
	if err := os.Symlink(host, filepath.Join(dir, "tsan")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(host)
	if err := Dir(filepath.Join(dir, "tsan"), 0o1777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(host); after.Mode() != before.Mode() {
		t.Errorf("the host directory's mode went from %v to %v", before.Mode(), after.Mode())
	}
	fi, err := os.Lstat(filepath.Join(dir, "tsan"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("tsan: %v, %v; want a sticky directory of mode 1777", fi, err)
	}
	os.WriteFile(filepath.Join(dir, "tsan", "tsan.1"), nil, 0o644)
	os.Symlink(secret, filepath.Join(dir, "tsan", "tsan.2"))
	if err := RemoveMatching(filepath.Join(dir, "tsan"), "tsan.*"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tsan")); len(ents) != 0 {
		t.Errorf("left in tsan: %v", ents)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("the host file: %v", err)
	}
}
