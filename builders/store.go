package builders

// The build cache's store: reading an entry back and verifying it before
// use, the digests of what later stages read, an entry made read-only and
// removed, the record written, what killed builds left, and the run's hold
// on the entries it made or reuses until it ends.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/safefs"
)

// errNoEntry is readBuild's error when the cache has no entry at all.
var errNoEntry = errors.New("no cache entry")

// readBuild reads the cache entry dir and verifies it before it is used:
// the entry is a directory, its paths lie inside it, and what they name is
// what the build produced. Any error but errNoEntry means an entry is there
// and must not be used.
func readBuild(dir string) (*Build, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoEntry
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is %s, not a directory", dir, fileKind(fi.Mode()))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := safefs.ReadFile(dir, buildFile, maxFilesFile)
	if err != nil {
		return nil, err
	}
	var b Build
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("read %s: %w", buildFile, err)
	}
	if !b.OK {
		return nil, errors.New("not a finished build")
	}
	if err := verifyEntry(root, dir, &b); err != nil {
		if errors.Is(err, errNoFiles) {
			return &b, err
		}
		return nil, err
	}
	return &b, nil
}

// verifyEntry checks that b, read from the entry dir (opened as root),
// names only files of that entry, and that they still have the digests
// recorded when they were built.
func verifyEntry(root *os.Root, dir string, b *Build) error {
	if !samePath(b.Dir, dir) {
		return fmt.Errorf("the entry names %s as its directory", b.Dir)
	}
	if b.PHP == "" {
		return errors.New("the entry names no php")
	}
	for _, p := range []struct{ what, path string }{{"php", b.PHP}, {"module", b.Module}} {
		if p.path == "" {
			continue // no module
		}
		rel, ok := inside(dir, p.path)
		if !ok {
			return fmt.Errorf("%s %q is outside the entry", p.what, p.path)
		}
		if _, ok := b.Digests[rel]; !ok {
			return fmt.Errorf("no digest of %s", rel)
		}
	}
	files, hasFiles := b.Digests[filesFile]
	rels := make([]string, 0, len(b.Digests))
	for rel := range b.Digests {
		if rel != filesFile {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	for _, rel := range rels {
		got, err := digest(root, rel)
		if err != nil {
			return err
		}
		if want := b.Digests[rel]; got != want {
			return fmt.Errorf("%s has digest %s, the entry recorded %s", rel, got, want)
		}
	}
	if !hasFiles {
		return errNoFiles
	}
	return verifyFiles(root, files)
}

// upgradeEntry records the digests of the files later stages read in an
// entry an older patchproof made, whose php and module digests held
// (readBuild), so that from now on every use checks them too. The caller
// holds the entry's lock. What the older entry held before this first use
// is taken as it is: an entry is planted by someone who can write the
// cache, and the digests guard against a change after they are recorded.
func upgradeEntry(dir string, b *Build) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, fi.Mode().Perm()|0o200); err != nil {
		return err
	}
	defer os.Chmod(dir, fi.Mode().Perm())
	files, err := recordFiles(dir)
	if err != nil {
		return err
	}
	b.Digests[filesFile] = files
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".meta-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := writeBuild(tmp, b); err != nil {
		return err
	}
	return os.Rename(filepath.Join(tmp, buildFile), filepath.Join(dir, buildFile))
}

// tmpDir matches a build being made: KEY.tmp-RANDOM, in the builds dir.
var tmpDir = regexp.MustCompile(`^([0-9a-f]{24})\.tmp-[0-9]+$`)

// removeDeadBuilds removes what killed builds left in root: a whole source
// copy and its build each, otherwise never removed. A KEY.tmp-* dir is made
// and written only under KEY's lock, so one whose lock no one holds is a
// dead build's; key's is, as its lock is the caller's. A leftover of
// another key that cannot be removed is only logged: another build's mess
// does not fail this one.
func removeDeadBuilds(root, key string, log io.Writer) error {
	ents, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		m := tmpDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		p := filepath.Join(root, e.Name())
		if m[1] == key {
			if err := removeEntry(p); err != nil {
				return fmt.Errorf("remove a killed build's %s: %w", p, err)
			}
			continue
		}
		unlock, ok, err := cachedir.TryLock(filepath.Join(root, m[1]+".lock"))
		if err != nil || !ok {
			continue // being built; or a lock that cannot be taken is a writer's for all we know
		}
		if err := removeEntry(p); err != nil {
			fmt.Fprintf(log, "warning: remove a killed build's %s: %v\n", p, err)
		}
		unlock()
	}
	return nil
}

// inside returns p relative to dir, slash-separated, if it lies inside dir.
func inside(dir, p string) (string, bool) {
	absDir, err1 := filepath.Abs(dir)
	absP, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(absDir, absP)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func samePath(a, b string) bool {
	absA, err1 := filepath.Abs(a)
	absB, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && absA == absB
}

// digests returns the digests of the files rels in dir.
func digests(dir string, rels []string) (map[string]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	m := make(map[string]string, len(rels))
	for _, rel := range rels {
		if m[rel], err = digest(root, rel); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// digest is the SHA-256 of the regular file rel under root. The file is
// opened through root and without following a final symlink, so that
// neither a symlink nor a ".." in rel can make it the digest of a file
// outside the entry.
func digest(root *os.Root, rel string) (string, error) {
	name := filepath.FromSlash(rel)
	if fi, err := root.Lstat(name); err != nil {
		return "", fmt.Errorf("digest %s: %w", rel, err)
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("digest %s: %s, not a regular file", rel, fileKind(fi.Mode()))
	}
	// O_NOFOLLOW: the file cannot be swapped for a symlink since Lstat.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", fmt.Errorf("digest %s: %w", rel, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("digest %s: %w", rel, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// fileKind names a mode's file type for an error.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a file"
	}
	return fmt.Sprintf("a special file (%v)", m.Type())
}

// makeReadOnly takes the write bits off a finished entry, so that nothing
// that uses the build (the tests, the benchmark) changes it by accident.
// Symlinks are left alone: chmod would follow them.
func makeReadOnly(dir string) error {
	return chmodTree(dir, func(d fs.DirEntry, perm fs.FileMode) (fs.FileMode, bool) {
		if d.IsDir() || perm&0o111 != 0 {
			return 0o555, true
		}
		return 0o444, true
	})
}

// removeEntry removes a cache entry made read-only by makeReadOnly: its
// directories are made writable again first, each before it is read.
func removeEntry(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	err := chmodTree(dir, func(d fs.DirEntry, _ fs.FileMode) (fs.FileMode, bool) { return 0o755, d.IsDir() })
	if err != nil {
		return err
	}
	// RemoveAll unlinks a link, never what it points at.
	return os.RemoveAll(dir)
}

// chmodTree sets the mode of each file and directory beneath dir that
// mode chooses, walked and changed beneath an os.Root: the build that
// wrote dir may swap a directory for a link while it is walked (a process
// it left running), and a path that leads out of dir is refused, never
// followed to a host file. Links are left alone.
func chmodTree(dir string, mode func(d fs.DirEntry, perm fs.FileMode) (fs.FileMode, bool)) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if m, ok := mode(d, fi.Mode().Perm()); ok {
			return root.Chmod(p, m)
		}
		return nil
	})
}

// writeBuild writes the record of b in dir, a build directory whose make
// could have put a link at its name.
func writeBuild(dir string, b *Build) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return safefs.WriteFile(dir, buildFile, data, 0o644)
}

// reuse returns the cached build of s, which this run now holds (lock,
// shared) and reads.
func (b *Builder) reuse(s Spec, root, key, dir string, cached *Build, lock *cachedir.Held) *Build {
	cached.Label, cached.Side, cached.Cached = s.Label, s.Side, true
	cached.Warnings = nil // the build that wrote the entry had them, not this one
	fmt.Fprintf(s.Log, "cached build %s in %s\n", key, dir)
	b.use(root, key, lock)
	return cached
}

// share makes the exclusive lock on the entry dir shared, for this run to
// keep, and checks the entry is still there: flock's conversion may let
// an exclusive taker (a prune) in between.
func share(lock *cachedir.Held, dir string) error {
	if err := lock.Share(); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(dir, buildFile)); err != nil {
		return fmt.Errorf("the cache entry %s went as its lock was shared: %w", dir, err)
	}
	return nil
}

// exists says something is at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// use records that this run reads the entry key of the builds dir root,
// and keeps its shared lock on it until Release.
func (b *Builder) use(root, key string, lock *cachedir.Held) {
	markUsed(root, key)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = append(b.held, lock)
	if !slices.Contains(b.used, key) {
		b.used = append(b.used, key)
	}
}

// uses says this run holds the entry key.
func (b *Builder) uses(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.used, key)
}

// Release lets go of every build this builder made or reused, which its
// run's stages have done reading: a prune (this host's other runs',
// 'patchproof cache prune') may remove them from then on. The run calls
// it when it ends; a process that dies lets go of them with its locks.
// Build may be called again after it.
func (b *Builder) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.held {
		h.Release()
	}
	b.held, b.used = nil, nil
}

// prune keeps the builds under b.CacheMax, sparing every entry this run
// has used. A cache it cannot prune is a warning: the build it follows is
// fine.
func (b *Builder) prune(log io.Writer) {
	max := b.CacheMax
	if max < 0 {
		return
	}
	if max == 0 {
		var err error
		if max, err = DefaultCacheMax(b.CacheDir); err != nil {
			fmt.Fprintf(log, "warning: %v\n", err)
			return
		}
	}
	b.mu.Lock()
	inUse := slices.Clone(b.used)
	b.mu.Unlock()
	if _, err := Prune(b.CacheDir, max, inUse, log); err != nil {
		fmt.Fprintf(log, "warning: %v\n", err)
	}
}
