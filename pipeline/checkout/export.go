package checkout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ErrUnsafeEntry is wrapped by an export's error when the tree holds an
// entry that could write outside the export or into a repository: a name
// that is empty, ".", "..", ".git" or holds a slash, or a name twice in one
// directory (a symlink "x" and a directory "x" would write through the
// link).
var ErrUnsafeEntry = errors.New("unsafe tree entry")

// Export writes commit's tree into dir, which must not exist yet. The tree is
// written beside dir and renamed into place, so dir is either complete or
// absent. It returns the number of files (and symlinks) written. A tree
// larger than the Repo's Limits fails with a *TreeTooLargeError before
// more than the limit is written.
//
// The tree is untrusted: every entry is checked before it is written, and
// every write goes through an os.Root of the export, creating what it names
// and never opening anything that is there already, so no entry, symlink or
// race can make it write outside dir.
func (r *Repo) Export(ctx context.Context, commit plumbing.Hash, dir string) (int, error) {
	c, err := r.repo.CommitObject(commit)
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	tree, err := c.Tree()
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	if err := removeDeadExports(dir); err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), exportTempPrefix(dir, os.Getpid()))
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	defer os.RemoveAll(tmp)
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	lim := r.limits.withDefaults()
	e := &exporter{ctx: ctx, store: r.repo.Storer, root: root, maxBytes: lim.TreeBytes, maxEntries: lim.TreeFiles}
	err = e.tree(tree, "")
	root.Close()
	var tooLarge *TreeTooLargeError
	if errors.As(err, &tooLarge) {
		tooLarge.Commit, tooLarge.Tree = commit, tree.Hash
		return 0, tooLarge
	}
	if err != nil {
		return 0, fmt.Errorf("export %s to %s: %w", short(commit), dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	return e.files, nil
}

// exportTempPrefix names the temporary dirs an export to dir by process pid
// is written in. The pid is in the name because an export holds no lock: it
// is what tells the next run whether the writer is still alive.
func exportTempPrefix(dir string, pid int) string {
	return fmt.Sprintf("%s.tmp-%d-", filepath.Base(dir), pid)
}

// removeDeadExports removes the temporary dirs of exports to dir whose
// process is gone: a killed run's, which would otherwise stay forever. One
// whose process lives (or whose pid is not in its name) is left alone.
func removeDeadExports(dir string) error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".tmp-*"))
	if err != nil {
		return err
	}
	prefix := filepath.Base(dir) + ".tmp-"
	for _, m := range matches {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(m), prefix), "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		if err := os.RemoveAll(m); err != nil {
			return fmt.Errorf("remove a killed export's %s: %w", m, err)
		}
	}
	return nil
}

// processAlive tells whether pid names a process. EPERM means it exists but
// is another user's: alive, as far as its files go.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// exporter writes one tree under root.
type exporter struct {
	ctx   context.Context
	store storer.EncodedObjectStorer
	root  *os.Root
	files int

	// What it has written, and may write: the tree is untrusted, and a
	// few kilobytes of trees can name one large blob many times.
	bytes, maxBytes     int64
	entries, maxEntries int
}

// addEntry counts one more entry to be written.
func (e *exporter) addEntry() error {
	if e.entries >= e.maxEntries {
		return &TreeTooLargeError{Files: true, Limit: int64(e.maxEntries)}
	}
	e.entries++
	return nil
}

// addBytes counts n more bytes to be written.
func (e *exporter) addBytes(n int64) error {
	if n > e.maxBytes-e.bytes {
		return &TreeTooLargeError{Limit: e.maxBytes}
	}
	e.bytes += n
	return nil
}

// tree writes t, the tree at dir ("" for the root), entry by entry. A name
// is checked against the others of its own tree, where git keeps it: so a
// duplicate can never turn an entry written earlier into the parent of a
// later one.
func (e *exporter) tree(t *object.Tree, dir string) error {
	seen := make(map[string]bool, len(t.Entries))
	for _, ent := range t.Entries {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		p := ent.Name
		if dir != "" {
			p = dir + "/" + ent.Name
		}
		if why := unsafeEntryName(ent.Name); why != "" {
			return fmt.Errorf("entry %q: %s: %w", p, why, ErrUnsafeEntry)
		}
		if seen[ent.Name] {
			return fmt.Errorf("entry %q: twice in %s: %w", p, treeName(dir), ErrUnsafeEntry)
		}
		seen[ent.Name] = true
		if err := e.addEntry(); err != nil {
			return err
		}
		if ent.Mode != filemode.Dir {
			if err := e.entry(ent, p); err != nil {
				var tooLarge *TreeTooLargeError
				if errors.As(err, &tooLarge) {
					return err
				}
				return fmt.Errorf("entry %q: %w", p, err)
			}
			continue
		}
		sub, err := object.GetTree(e.store, ent.Hash)
		if err != nil {
			return fmt.Errorf("entry %q: %w", p, err)
		}
		// Mkdir, not MkdirAll: it fails on anything already there, a
		// symlink included, instead of following it.
		if err := e.root.Mkdir(filepath.FromSlash(p), 0o755); err != nil {
			return fmt.Errorf("entry %q: %w", p, err)
		}
		if err := e.tree(sub, p); err != nil {
			return err
		}
	}
	return nil
}

func treeName(dir string) string {
	if dir == "" {
		return "the root tree"
	}
	return fmt.Sprintf("%q", dir)
}

// unsafeEntryName says why name cannot be written as one path component, or "".
func unsafeEntryName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case name == "." || name == "..":
		return "not a file name"
	case strings.ContainsAny(name, "/\x00"):
		return "name holds a slash"
	case strings.EqualFold(name, ".git"):
		return "a repository's own directory"
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f {
			return "name holds a control character"
		}
	}
	return ""
}

// entry writes one checked entry, not a directory, at p. Files are opened
// with O_EXCL, so that, like Mkdir and Symlink, they fail on anything already
// there, a symlink included, instead of following it.
func (e *exporter) entry(ent object.TreeEntry, p string) error {
	name := filepath.FromSlash(p)
	switch ent.Mode {
	case filemode.Submodule:
		// As git checks out a submodule it has not cloned: an empty
		// directory.
		return e.root.Mkdir(name, 0o755)
	case filemode.Symlink:
		target, err := e.symlinkTarget(ent.Hash)
		if err != nil {
			return err
		}
		if err := e.addBytes(int64(len(target))); err != nil {
			return err
		}
		// The target is written as it is and never followed here; where
		// it points is the build's business, like any file's content.
		if err := e.root.Symlink(string(target), name); err != nil {
			return err
		}
		e.files++
		return nil
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		perm := os.FileMode(0o644)
		if ent.Mode == filemode.Executable {
			perm = 0o755
		}
		if err := e.file(ent.Hash, name, perm); err != nil {
			return err
		}
		e.files++
		return nil
	}
	return fmt.Errorf("mode %o: %w", uint32(ent.Mode), ErrUnsafeEntry)
}

func (e *exporter) symlinkTarget(h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(e.store, h)
	if err != nil {
		return nil, err
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	target, err := io.ReadAll(io.LimitReader(rd, maxSymlinkTarget+1))
	if err != nil {
		return nil, err
	}
	if len(target) > maxSymlinkTarget {
		return nil, fmt.Errorf("symlink target longer than %d bytes: %w", maxSymlinkTarget, ErrUnsafeEntry)
	}
	return target, nil
}

// maxSymlinkTarget is Linux's PATH_MAX: no longer target can be a symlink.
const maxSymlinkTarget = 4096

func (e *exporter) file(h plumbing.Hash, name string, perm os.FileMode) error {
	b, err := object.GetBlob(e.store, h)
	if err != nil {
		return err
	}
	// The size is the object's header's: known before a byte is written.
	if err := e.addBytes(b.Size); err != nil {
		return err
	}
	rd, err := b.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	w, err := e.root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	// A blob never holds more than its header says; a broken store that
	// does is cut short here rather than trusted.
	n, err := io.Copy(w, io.LimitReader(rd, b.Size+1))
	if err == nil && n != b.Size {
		err = fmt.Errorf("blob %s: %d bytes, its header says %d", h, n, b.Size)
	}
	if err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
