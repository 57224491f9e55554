package builders

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cacheDir is a t.TempDir for a build cache. Finished entries are
// read-only, which the testing package's own clean-up cannot remove.
func cacheDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := removeEntry(dir); err != nil {
			t.Errorf("remove the cache: %v", err)
		}
	})
	return dir
}

// makeWritable undoes a finished entry's read-only modes, as an attacker
// who owns the cache can.
func makeWritable(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		return os.Chmod(p, 0o755)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sha256File(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// editBuild rewrites an entry's patchproof-build.json.
func editBuild(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, buildFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCacheEntryVerified(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	// evil is a php outside the cache; the tests stage would run it.
	evilPHP := "#!/bin/sh\necho 'PHP 8.2.99 (cli) (ZTS)'\n"
	tests := []struct {
		name   string
		tamper func(t *testing.T, entry, evil string)
		why    string // what the warning must say; EVIL and ENTRY stand for their paths
	}{
		{
			name: "php outside the cache",
			tamper: func(t *testing.T, entry, evil string) {
				editBuild(t, entry, func(m map[string]any) { m["php"] = filepath.Join(evil, "php") })
			},
			why: "php \"EVIL/php\" is outside the entry",
		},
		{
			name: "module outside the cache",
			tamper: func(t *testing.T, entry, evil string) {
				editBuild(t, entry, func(m map[string]any) { m["module"] = filepath.Join(evil, "libphp.so") })
			},
			why: "module \"EVIL/libphp.so\" is outside the entry",
		},
		{
			name: "the whole build elsewhere",
			tamper: func(t *testing.T, entry, evil string) {
				editBuild(t, entry, func(m map[string]any) {
					m["dir"], m["php"] = evil, filepath.Join(evil, "php")
					delete(m, "module")
				})
			},
			why: "the entry names EVIL as its directory",
		},
		{
			name: "php replaced",
			tamper: func(t *testing.T, entry, evil string) {
				if err := os.WriteFile(filepath.Join(entry, "sapi/cli/php"), []byte(evilPHP), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			why: "sapi/cli/php has digest sha256:",
		},
		{
			name: "module replaced",
			tamper: func(t *testing.T, entry, evil string) {
				if err := os.WriteFile(filepath.Join(entry, "libs/libphp.so"), []byte("not ELF"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			why: "libs/libphp.so has digest sha256:",
		},
		{
			name: "php a symlink out of the entry, with its digest",
			tamper: func(t *testing.T, entry, evil string) {
				php := filepath.Join(entry, "sapi/cli/php")
				if err := os.Remove(php); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(evil, "php"), php); err != nil {
					t.Fatal(err)
				}
				editBuild(t, entry, func(m map[string]any) {
					digests, _ := m["digests"].(map[string]any)
					if digests == nil {
						digests = map[string]any{}
					}
					digests["sapi/cli/php"] = sha256File(t, filepath.Join(evil, "php"))
					m["digests"] = digests
				})
			},
			why: "digest sapi/cli/php: a symlink, not a regular file",
		},
		{
			name: "no digests (an entry of an older patchproof)",
			tamper: func(t *testing.T, entry, evil string) {
				editBuild(t, entry, func(m map[string]any) { delete(m, "digests") })
			},
			why: "no digest of sapi/cli/php",
		},
		{
			// codediff would compare the planted object, and pass.
			name: "object file replaced",
			tamper: func(t *testing.T, entry, evil string) {
				if err := os.WriteFile(filepath.Join(entry, "ext/mysqlnd/mysqlnd.o"), []byte("planted"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			why: "ext/mysqlnd/mysqlnd.o has digest sha256:",
		},
		{
			name: "object file added",
			tamper: func(t *testing.T, entry, evil string) {
				if err := os.WriteFile(filepath.Join(entry, "ext/mysqlnd/mysqlnd_evil.o"), []byte("planted"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			why: "ext/mysqlnd/mysqlnd_evil.o is not a file the build made",
		},
		{
			name: "object file removed",
			tamper: func(t *testing.T, entry, evil string) {
				if err := os.Remove(filepath.Join(entry, "ext/mysqlnd/mysqlnd.o")); err != nil {
					t.Fatal(err)
				}
			},
			why: "digest ext/mysqlnd/mysqlnd.o: ",
		},
		{
			name: "object file a symlink out of the entry",
			tamper: func(t *testing.T, entry, evil string) {
				o := filepath.Join(entry, "ext/mysqlnd/mysqlnd.o")
				if err := os.Remove(o); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(evil, "libphp.so"), o); err != nil {
					t.Fatal(err)
				}
			},
			why: "digest ext/mysqlnd/mysqlnd.o: a symlink, not a regular file",
		},
		{
			name: "test replaced",
			tamper: func(t *testing.T, entry, evil string) {
				if err := os.WriteFile(filepath.Join(entry, "ext/mysqli/tests/001.phpt"), []byte("--TEST--\nx\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			why: "ext/mysqli/tests/001.phpt has digest sha256:",
		},
		{
			name: "the list of files rewritten with the planted object's digest",
			tamper: func(t *testing.T, entry, evil string) {
				o := filepath.Join(entry, "ext/mysqlnd/mysqlnd.o")
				if err := os.WriteFile(o, []byte("planted"), 0o644); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(entry, filesFile)
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				m := map[string]string{}
				if err := json.Unmarshal(data, &m); err != nil {
					t.Fatal(err)
				}
				m["ext/mysqlnd/mysqlnd.o"] = sha256File(t, o)
				if data, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			why: filesFile + " has digest sha256:",
		},
		{
			name: "the entry a symlink to a copy outside the cache",
			tamper: func(t *testing.T, entry, evil string) {
				copy := filepath.Join(evil, "entry")
				if out, err := exec.Command("cp", "-a", entry, copy).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
				if err := os.RemoveAll(entry); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(copy, entry); err != nil {
					t.Fatal(err)
				}
			},
			why: "ENTRY is a symlink, not a directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter := filepath.Join(t.TempDir(), "count")
			t.Setenv("COUNT", counter)
			evil := t.TempDir()
			if err := os.WriteFile(filepath.Join(evil, "php"), []byte(evilPHP), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(evil, "libphp.so"), []byte("not ELF"), 0o644); err != nil {
				t.Fatal(err)
			}
			b := &Builder{Exec: &Host{}, CacheDir: cacheDir(t)}
			spec := Spec{Label: "base/zts", Source: fakeTree(t, "int main(void) { return 0; }\n"), TreeHash: "tree1", Variant: ZTS, Profile: ProfileMySQL, Jobs: 1}
			ctx := context.Background()
			first, err := b.Build(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if first.Module == "" {
				t.Fatal("the fake ZTS build made no module")
			}
			// That run ended; the entry is tampered with before the next.
			b.Release()
			entry := first.Dir
			makeWritable(t, entry)
			tt.tamper(t, entry, evil)
			// Read-only again, as a careful attacker leaves it: removing it
			// must still work.
			if err := makeReadOnly(entry); err != nil {
				t.Fatal(err)
			}

			why := strings.NewReplacer("EVIL", evil, "ENTRY", entry).Replace(tt.why)
			var log bytes.Buffer
			spec.Log = &log
			again, err := b.Build(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if again.Cached || count(t, counter) != 2 {
				t.Errorf("the tampered entry was used: cached %v, configure ran %d times, want a rebuild", again.Cached, count(t, counter))
			}
			want := "warning: cached build " + first.Key + " rejected, rebuilding: " + why
			if !strings.Contains(log.String(), want) {
				t.Errorf("build log lacks %q:\n%s", want, log.String())
			}
			if len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0], why) {
				t.Errorf("warnings = %q, want the rejected entry", again.Warnings)
			}
			if again.Dir != entry || again.PHP != filepath.Join(entry, "sapi/cli/php") || again.Module != filepath.Join(entry, "libs/libphp.so") {
				t.Errorf("rebuilt dir %s php %s module %s, want them in %s", again.Dir, again.PHP, again.Module, entry)
			}
			if fi, err := os.Lstat(again.PHP); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("rebuilt php: %v %v, want a regular file", fi, err)
			}
			// The rebuilt entry is trusted again.
			third, err := b.Build(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if !third.Cached || count(t, counter) != 2 || len(third.Warnings) != 0 {
				t.Errorf("the rebuilt entry was not used as it is: cached %v, warnings %q", third.Cached, third.Warnings)
			}
		})
	}
}

func TestCacheEntryReadOnly(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	t.Setenv("COUNT", filepath.Join(t.TempDir(), "count"))
	b := &Builder{Exec: &Host{}, CacheDir: cacheDir(t)}
	res, err := b.Build(context.Background(), Spec{Label: "base/zts", Source: fakeTree(t, "int main(void) { return 0; }\n"), TreeHash: "tree1", Variant: ZTS, Profile: ProfileMySQL, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"sapi/cli/php", "libs/libphp.so"} {
		if got, want := res.Digests[rel], sha256File(t, filepath.Join(res.Dir, rel)); got != want {
			t.Errorf("digest of %s = %q, want %q", rel, got, want)
		}
	}
	err = filepath.WalkDir(res.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(res.Dir, p)
		switch perm := fi.Mode().Perm(); {
		case d.IsDir() && perm != 0o555:
			t.Errorf("directory %s is %v, want dr-xr-xr-x", rel, fi.Mode())
		case fi.Mode().IsRegular() && perm&0o222 != 0:
			t.Errorf("file %s is %v, want it read-only", rel, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(res.PHP); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("php is %v (%v), want -r-xr-xr-x", fi.Mode(), err)
	}
}

// The files a cache entry records the digests of: what a later stage
// reads, not the source tree the build was made from.
func TestReadLater(t *testing.T) {
	for _, tt := range []struct {
		rel  string
		want bool
	}{
		{"ext/mysqlnd/mysqlnd.o", true},
		{"main/snprintf.o", true},
		{"ext/mysqlnd/.libs/mysqlnd.o", true},
		{"sapi/cli/php", true},
		{"libs/libphp.so", true},
		{"modules/mysqli.so", true},
		{"run-tests.php", true},
		{"main/php_version.h", true},
		{"ext/mysqli/tests/connect.inc", true},
		{"ext/pdo/tests/pdo_test.inc", true},
		{"ext/pdo_mysql/tests/common.phpt", true},
		{"ext/mysqlnd/mysqlnd.c", false},
		{"ext/mysqlnd/mysqlnd.lo", false},
		{"Zend/tests/bug1.phpt", false},
		{"configure", false},
		{buildFile, false},
		{filesFile, false},
	} {
		t.Run(tt.rel, func(t *testing.T) {
			if got := readLater(tt.rel); got != tt.want {
				t.Errorf("readLater(%q) = %v, want %v", tt.rel, got, tt.want)
			}
		})
	}
}

// TestOlderEntryUpgraded: an entry an older patchproof made, without the
// digests of its files, is used (its php's and module's digests hold) and
// gets them recorded, so that a file planted after that is caught.
func TestOlderEntryUpgraded(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "count")
	t.Setenv("COUNT", counter)
	b := &Builder{Exec: &Host{}, CacheDir: cacheDir(t)}
	spec := Spec{Label: "base/zts", Source: fakeTree(t, "int main(void) { return 0; }\n"), TreeHash: "tree1", Variant: ZTS, Profile: ProfileMySQL, Jobs: 1}
	ctx := context.Background()
	first, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	b.Release() // each Build below is the next run's
	entry := first.Dir
	makeWritable(t, entry)
	editBuild(t, entry, func(m map[string]any) { delete(m["digests"].(map[string]any), filesFile) })
	if err := os.Remove(filepath.Join(entry, filesFile)); err != nil {
		t.Fatal(err)
	}
	if err := makeReadOnly(entry); err != nil {
		t.Fatal(err)
	}
	again, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || count(t, counter) != 1 || len(again.Warnings) != 0 {
		t.Fatalf("the older entry was not used: cached %v, configure ran %d times, warnings %q", again.Cached, count(t, counter), again.Warnings)
	}
	if _, ok := again.Digests[filesFile]; !ok {
		t.Fatalf("the older entry's files were not digested: %v", again.Digests)
	}
	b.Release()
	makeWritable(t, entry)
	if err := os.WriteFile(filepath.Join(entry, "ext/mysqlnd/mysqlnd.o"), []byte("planted"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := b.Build(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if third.Cached || count(t, counter) != 2 {
		t.Errorf("a planted object in the upgraded entry was used: cached %v, configure ran %d times", third.Cached, count(t, counter))
	}
}
