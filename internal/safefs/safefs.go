// Package safefs is how patchproof reads, on the host, files that code
// under test could have written or placed: a build directory, an exported
// tree, a server's logs and reports, a suite's output. Such a file is
// opened beneath a directory through os.Root, so that no symbolic link or
// ".." takes the read outside it (a link that stays beneath it is
// harmless, and followed); it must be a regular file (a FIFO would block, a device
// could be endless), and it is read only up to a bound.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrTooLarge is a file larger than the bound its reader set.
var ErrTooLarge = errors.New("larger than its bound")

// Open opens the regular file rel beneath dir for reading. A symbolic
// link anywhere on the way that leaves dir, or a file that is not regular,
// is an error.
func Open(dir, rel string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return openIn(root, dir, rel)
}

func openIn(root *os.Root, dir, rel string) (*os.File, error) {
	// O_NONBLOCK: opening a FIFO does not wait for its writer.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s beneath %s: %w", rel, dir, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s beneath %s: not a regular file (%s)", rel, dir, fi.Mode().Type())
	}
	return f, nil
}

// ReadFile reads the regular file rel beneath dir, at most max bytes: a
// larger file is an error wrapping ErrTooLarge.
func ReadFile(dir, rel string, max int64) ([]byte, error) {
	f, err := Open(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, filepath.Join(dir, rel), max)
}

// OpenIn is Open of a path that lies beneath root, opened from root: a
// link on any directory of the way (a build's ext/mysqlnd made a link to
// a host directory) cannot take the read out of root, as it can with
// OpenPath, which only guards the last component. A path that is not
// beneath root is an error.
func OpenIn(root, path string) (*os.File, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("open %s: not beneath %s", path, root)
	}
	return Open(root, rel)
}

// ReadIn is ReadFile of a path beneath root, read from root (OpenIn).
func ReadIn(root, path string, max int64) ([]byte, error) {
	f, err := OpenIn(root, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, max)
}

// ReadPath is ReadFile for a path: the file beneath its own directory.
func ReadPath(path string, max int64) ([]byte, error) {
	return ReadFile(filepath.Dir(path), filepath.Base(path), max)
}

func readBounded(r io.Reader, name string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: %w (%d bytes)", name, ErrTooLarge, max)
	}
	return b, nil
}

// CopyFile copies the regular file rel beneath dir to dst (made with the
// source's permission bits and owner write), at most max bytes.
func CopyFile(dir, rel, dst string, max int64) error {
	in, err := Open(dir, rel)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > max {
		return fmt.Errorf("copy %s: %w (%d bytes)", filepath.Join(dir, rel), ErrTooLarge, max)
	}
	// The size was checked, but the file may still grow while it is read.
	_, err = copyTo(dst, fi.Mode().Perm()|0o200, in, filepath.Join(dir, rel), max)
	return err
}

// copyTo copies what is left of in (name, in errors) to dst, made anew
// with perm, at most max bytes; it returns how many it read. A copy cut
// short, or past max, is removed: no part of a file left out stays.
func copyTo(dst string, perm fs.FileMode, in io.Reader, name string, max int64) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	out, err := CreatePath(dst, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(in, max+1))
	if err == nil && n > max {
		err = fmt.Errorf("copy %s: %w (%d bytes)", name, ErrTooLarge, max)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return n, err
}

// Tree is a directory whose files are read with a budget: at most Max
// bytes in all, each file beneath Dir as Open says.
type Tree struct {
	Dir  string
	Max  int64 // bytes in all that reads through this Tree may take
	root *os.Root
	used int64
}

// OpenTree opens dir for bounded reads.
func OpenTree(dir string, max int64) (*Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Tree{Dir: dir, Max: max, root: root}, nil
}

// Close releases the tree's directory.
func (t *Tree) Close() error { return t.root.Close() }

// ReadFile reads rel beneath the tree, within what is left of its budget.
func (t *Tree) ReadFile(rel string) ([]byte, error) {
	f, err := openIn(t.root, t.Dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readBounded(f, filepath.Join(t.Dir, rel), t.Max-t.used)
	t.used += int64(len(b))
	return b, err
}

// CopyFile copies rel beneath the tree to dst, within what is left of its
// budget.
func (t *Tree) CopyFile(rel, dst string) error {
	f, err := openIn(t.root, t.Dir, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	n, err := copyTo(dst, fi.Mode().Perm()|0o200, f, filepath.Join(t.Dir, rel), t.Max-t.used)
	t.used += n
	return err
}

// Stat is the tree's Lstat of rel: a link is reported as a link.
func (t *Tree) Stat(rel string) (fs.FileInfo, error) { return t.root.Lstat(rel) }

// FS is the tree as an fs.FS, for walking it (fs.WalkDir reports links as
// links and does not follow them).
func (t *Tree) FS() fs.FS { return t.root.FS() }

// OpenPath is Open of a path's last component beneath its directory: for a
// file in a directory patchproof made, whose name the tree's code could
// have made a link or a FIFO.
func OpenPath(path string) (*os.File, error) {
	return Open(filepath.Dir(path), filepath.Base(path))
}

// CopyRegular copies rel beneath the tree to dst, made anew as Create
// makes it, at most max bytes and within what is left of the tree's
// budget: rel must be a regular file, not a link even one that stays in
// the tree, and the file opened must be the one found there.
func (t *Tree) CopyRegular(rel, dst string, max int64) error {
	name := filepath.Join(t.Dir, rel)
	before, err := t.root.Lstat(rel)
	if err != nil {
		return err
	}
	if !before.Mode().IsRegular() {
		return fmt.Errorf("copy %s: not a regular file (%s)", name, before.Mode().Type())
	}
	max = min(max, t.Max-t.used)
	if before.Size() > max {
		return fmt.Errorf("copy %s: %w (%d bytes)", name, ErrTooLarge, max)
	}
	f, err := openIn(t.root, t.Dir, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		return fmt.Errorf("copy %s: replaced while it was opened", name)
	}
	n, err := copyTo(dst, 0o644, f, name, max)
	t.used += n
	return err
}
