package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The writes below are patchproof's own into a directory the code under
// test could have written: a build directory (the tree is copied in, then
// configure and make run there), a server's directory, a run's logs. What
// is there when patchproof writes may be a link the tree planted, to a host
// file such as ~/.ssh/authorized_keys, or a FIFO. So a write never follows
// a link: the name is removed and made anew with O_CREATE|O_EXCL beneath an
// os.Root (EEXIST on a link, even a dangling one, and no ".." or link on
// the way leaves the root), and an append opens only the regular file it
// found there, the same one it then holds.

// Create makes the regular file rel beneath dir anew, for writing:
// whatever was at rel (a file, a link, a FIFO; not a directory) is removed
// first. The directories on the way are made as needed, beneath dir.
func Create(dir, rel string, perm fs.FileMode) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Join(dir, rel), err)
	}
	defer root.Close()
	return createIn(root, dir, rel, perm)
}

func createIn(root *os.Root, dir, rel string, perm fs.FileMode) (*os.File, error) {
	name := filepath.Join(dir, rel)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("create %s: not beneath %s", rel, dir)
	}
	if parent := filepath.Dir(rel); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
	}
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("create %s: remove what is there: %w", name, err)
	}
	// Whatever the tree puts at rel between the remove and this open makes
	// it fail with EEXIST: the write is refused, never redirected.
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return f, nil
}

// WriteFile writes data to rel beneath dir as Create makes it.
func WriteFile(dir, rel string, data []byte, perm fs.FileMode) error {
	f, err := Create(dir, rel, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, rel), err)
	}
	return nil
}

// CreateIn is Create of a path beneath root, made from root: a link on
// any directory of the way cannot take the write out of root. root is a
// directory patchproof made and the code under test cannot replace (the
// run directory, a cache entry being built).
func CreateIn(root, path string, perm fs.FileMode) (*os.File, error) {
	rel, err := relIn(root, path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return Create(root, rel, perm)
}

// WriteIn is WriteFile of a path beneath root, made from root (CreateIn).
func WriteIn(root, path string, data []byte, perm fs.FileMode) error {
	rel, err := relIn(root, path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFile(root, rel, data, perm)
}

// CreatePath is Create of a path's last component beneath its directory:
// for a file in a directory patchproof made, whose name the code under
// test could have made a link or a FIFO.
func CreatePath(path string, perm fs.FileMode) (*os.File, error) {
	return Create(filepath.Dir(path), filepath.Base(path), perm)
}

// WritePath is WriteFile of a path's last component beneath its directory.
func WritePath(path string, data []byte, perm fs.FileMode) error {
	return WriteFile(filepath.Dir(path), filepath.Base(path), data, perm)
}

// AppendPath opens the file path for appending, made if it is not there:
// a file that is there must be a regular file, the one opened (a link or a
// FIFO put there, or swapped in while it is opened, is an error, and
// nothing is written).
func AppendPath(path string, perm fs.FileMode) (*os.File, error) {
	dir, rel := filepath.Dir(path), filepath.Base(path)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", path, err)
	}
	defer root.Close()
	before, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return nil, fmt.Errorf("append to %s: %w", path, err)
		}
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", path, err)
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("append to %s: not a regular file (%s)", path, before.Mode().Type())
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", path, err)
	}
	after, err := f.Stat()
	if err == nil && !os.SameFile(before, after) {
		err = errors.New("replaced while it was opened")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("append to %s: %w", path, err)
	}
	return f, nil
}

func relIn(root, path string) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("not beneath %s", root)
	}
	return rel, nil
}

// Holds checks that rel beneath dir is still the file f, made there by
// Create: not a link, nor another file renamed over it since.
func Holds(dir, rel string, f *os.File) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	at, err := root.Lstat(rel)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, rel), err)
	}
	held, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(at, held) {
		return fmt.Errorf("%s: replaced by the code under test (now %s)", filepath.Join(dir, rel), modeName(at.Mode()))
	}
	return nil
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "another file"
	}
	return "a special file"
}

// Dir makes path a directory with mode perm (exactly, past the umask) for
// the code under test to write into: a server's dump or report directory.
// What that code put at its name (a link to a host directory, a file) is
// removed first, and the mode is set beneath the parent's os.Root, so a
// chmod never follows a link to a host directory. The parent directories
// are made as needed.
func Dir(path string, perm fs.FileMode) error {
	parent, name := filepath.Dir(path), filepath.Base(path)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case fi.IsDir():
		return root.Chmod(name, perm)
	default:
		if err := root.Remove(name); err != nil {
			return fmt.Errorf("make directory %s: remove the %s there: %w", path, modeName(fi.Mode()), err)
		}
	}
	if err := root.Mkdir(name, 0o755); err != nil {
		return fmt.Errorf("make directory %s: %w", path, err)
	}
	return root.Chmod(name, perm)
}

// RemoveMatching removes the files of dir whose names match pattern
// (filepath.Match), beneath dir's os.Root: links are removed, never
// followed.
func RemoveMatching(dir, pattern string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if ok, _ := filepath.Match(pattern, e.Name()); ok && !e.IsDir() {
			if err := root.Remove(e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
