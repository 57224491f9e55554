package builders

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchproof/patchproof/internal/safefs"
)

// A derived build starts from a copy of a finished build's tree (Spec.From)
// instead of a fresh copy of its source, and runs only make: configure's
// minutes, and the compiles of every file that did not change, are spent
// once. Two builds are made so:
//
//   - a head, from its base in the same variant, when the change leaves the
//     build system alone (no Spec.Buildconf): the files that differ are
//     put in from the head's source, with the current time, and make,
//     following the dependency files (-MMD) PHP's Makefile writes,
//     recompiles what they reach, headers included. What it gives is what
//     a fresh build of the head gives, so it has the same cache key.
//   - a ThreadSanitizer build, from the same tree's ZTS build: the objects
//     of the code that can race in the change (Spec.Instrument) are
//     removed and made again with -fsanitize=thread, and php and the
//     Apache module are linked again with the sanitizer's runtime. The
//     rest of PHP is the ZTS build's code, uninstrumented: a race whose
//     two accesses are both in it (the engine's own) is not seen, and
//     neither is one between it and the instrumented code, since the
//     sanitizer records only instrumented accesses. It is a build of its
//     own, with a key of its own.
//
// configure wrote the absolute path of the tree it ran in (the From
// build's temporary directory, renamed since) into the Makefile,
// config.status and libtool's files; derive rewrites it to the new tree's
// in every text file, keeping each file's time, so that make sees nothing
// else as changed.

// tsanDirs are the trees a derived ThreadSanitizer build instruments
// whatever the change: mysqlnd, the extensions that call it, and TSRM,
// PHP's thread-safety layer they run on.
var tsanDirs = []string{"TSRM/", "ext/mysqlnd/", "ext/mysqli/", "ext/pdo/", "ext/pdo_mysql/"}

// TSanInstrument is what a derived ThreadSanitizer build of a change that
// touches the files changed instruments: tsanDirs and every changed C
// file outside them, sorted. Base and head get the same set, so that what
// the sanitizer reports of each is comparable.
func TSanInstrument(changed []string) []string {
	set := slices.Clone(tsanDirs)
	for _, f := range changed {
		if !strings.HasSuffix(f, ".c") || !validRel(f) {
			continue
		}
		if slices.ContainsFunc(tsanDirs, func(d string) bool { return strings.HasPrefix(f, d) }) {
			continue
		}
		set = append(set, f)
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// validRel reports whether p is a clean, relative, slash-separated path
// inside a tree: what a git tree names, checked because it names a file
// the host writes.
func validRel(p string) bool {
	return fs.ValidPath(p) && p != "." && path.Clean(p) == p
}

// maxRewrite bounds the files derive reads to rewrite the tree's path:
// the Makefile and libtool's files are kilobytes, the largest generated
// sources a few megabytes.
const maxRewrite = 32 << 20

// maxChanged bounds a changed file copied from a head's source: php-src's
// largest sources are a few megabytes.
const maxChanged = 256 << 20

// skipRewrite are the kinds of file that never hold configure's path as
// text, or are binary: they are not read.
var skipRewrite = []string{".o", ".a", ".so", ".phpt", ".php", ".inc", ".png", ".gif", ".jpg", ".gz"}

// derive makes tmp a copy of s.From's tree ready for make: writable, its
// own metadata removed, configure's path rewritten, and then either the
// changed files put in (a head) or the instrumented objects removed (a
// TSan build).
func derive(s Spec, tmp string) error {
	if err := copyTree(s.From.Dir, tmp); err != nil {
		return err
	}
	if err := writableCopy(tmp); err != nil {
		return err
	}
	for _, f := range []string{buildFile, filesFile, buildLogName} {
		if err := os.Remove(filepath.Join(tmp, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	old, err := configuredPath(tmp)
	if err != nil {
		return err
	}
	if old != tmp {
		if err := rewritePath(tmp, old, tmp); err != nil {
			return err
		}
	}
	if s.Variant == TSan && s.From.Variant != TSan {
		return removeObjects(tmp, s.Instrument)
	}
	return putChanged(s.Source, tmp, s.Changed)
}

// configuredPath is the directory configure ran in, from the Makefile's
// top_builddir line.
func configuredPath(tree string) (string, error) {
	data, err := safefs.ReadFile(tree, "Makefile", maxRewrite)
	if err != nil {
		return "", fmt.Errorf("the derived-from tree: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "top_builddir = "); ok && filepath.IsAbs(p) {
			return filepath.Clean(p), nil
		}
	}
	return "", errors.New("the derived-from tree's Makefile has no absolute top_builddir")
}

// rewritePath replaces old by new in every text file of tree, keeping the
// file's mode and times. Symlinks are not followed and not changed; a
// file with a NUL byte is binary and left alone.
func rewritePath(tree, old, new string) error {
	from, to := []byte(old), []byte(new)
	root, err := os.OpenRoot(tree)
	if err != nil {
		return err
	}
	defer root.Close()
	return filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if slices.ContainsFunc(skipRewrite, func(ext string) bool { return strings.HasSuffix(p, ext) }) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > maxRewrite {
			return nil
		}
		rel, err := filepath.Rel(tree, p)
		if err != nil {
			return err
		}
		data, err := safefs.ReadFile(tree, rel, maxRewrite)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, from) || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		// Made anew, never written through a link the build left at p.
		if err := safefs.WriteFile(tree, rel, bytes.ReplaceAll(data, from, to), fi.Mode().Perm()); err != nil {
			return err
		}
		return root.Chtimes(rel, fi.ModTime(), fi.ModTime())
	})
}

// removeObjects removes the object files of what a TSan build instruments:
// every .lo and .o under a directory of the set (a path ending in /), and
// the objects of each C file of it, libtool's .libs copies included.
func removeObjects(tree string, instrument []string) error {
	// The tree is a build's, made by its make: a directory of the way may
	// be a link the build made, out of the tree. Beneath an os.Root, such
	// a path is refused, never followed to remove a host file.
	root, err := os.OpenRoot(tree)
	if err != nil {
		return err
	}
	defer root.Close()
	isObject := func(name string) bool { return strings.HasSuffix(name, ".lo") || strings.HasSuffix(name, ".o") }
	for _, rel := range instrument {
		if dir, ok := strings.CutSuffix(rel, "/"); ok {
			if !validRel(dir) {
				return fmt.Errorf("instrument %q: not a path in the tree", rel)
			}
			err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
				if errors.Is(err, fs.ErrNotExist) && p == dir {
					return fs.SkipAll // not built in this profile
				}
				if err != nil || !d.Type().IsRegular() || !isObject(d.Name()) {
					return err
				}
				return root.Remove(p)
			})
			if err != nil {
				return fmt.Errorf("remove the objects of %s: %w", rel, err)
			}
			continue
		}
		if !validRel(rel) || !strings.HasSuffix(rel, ".c") {
			return fmt.Errorf("instrument %q: not a C file in the tree", rel)
		}
		base := strings.TrimSuffix(rel, ".c")
		dir, name := path.Split(base)
		for _, o := range []string{base + ".lo", base + ".o", dir + ".libs/" + name + ".o"} {
			if err := root.Remove(filepath.FromSlash(o)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", o, err)
			}
		}
	}
	return nil
}

// putChanged puts the files changed between the derived-from tree and src
// into tree: each copied from src with the current time (so that make
// sees it newer than the objects it had), or removed where src has none.
// A symlink stays a symlink, as in a fresh copy. src is read through an
// os.Root: a path that leads out of it by a symlink (a directory of the
// base that is a link in the head) is an error, not a host file read.
func putChanged(src, tree string, changed []string) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range changed {
		if !validRel(rel) {
			return fmt.Errorf("changed file %q: not a path in the tree", rel)
		}
		name, to := filepath.FromSlash(rel), filepath.Join(tree, filepath.FromSlash(rel))
		fi, err := root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.RemoveAll(to); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("changed file %s: %w", rel, err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.RemoveAll(to); err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(name)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := safefs.CopyFile(src, name, to, maxChanged); err != nil {
				return err
			}
		default:
			return fmt.Errorf("changed file %s is %s", rel, fileKind(fi.Mode()))
		}
	}
	return nil
}

// writableCopy gives the owner write access to a copy of a read-only
// entry (makeReadOnly's), symlinks left alone.
func writableCopy(tree string) error {
	return chmodTree(tree, func(_ fs.DirEntry, perm fs.FileMode) (fs.FileMode, bool) { return perm | 0o200, true })
}
