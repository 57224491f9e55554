package checkout

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Entry is one file of a flattened tree.
type Entry struct {
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// Files is a flattened tree: slash-separated paths to blobs.
type Files map[string]Entry

// WriteBlob stores data as a blob.
func WriteBlob(s storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	o := s.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	o.SetSize(int64(len(data)))
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}

// WriteTree stores the trees that hold files and returns the root's hash.
func WriteTree(s storer.EncodedObjectStorer, files Files) (plumbing.Hash, error) {
	entries := map[string][]object.TreeEntry{"": nil} // dir -> its files
	subdirs := map[string][]string{}                  // dir -> its directories
	seen := map[string]bool{}
	for p, e := range files {
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		entries[dir] = append(entries[dir], object.TreeEntry{Name: name, Mode: e.Mode, Hash: e.Hash})
		for d := dir; d != "" && !seen[d]; d = parentOf(d) {
			seen[d] = true
			if _, ok := entries[d]; !ok {
				entries[d] = nil
			}
			subdirs[parentOf(d)] = append(subdirs[parentOf(d)], d)
		}
	}
	// Deepest first, so every child is stored before its parent.
	dirs := make([]string, 0, len(entries))
	for d := range entries {
		dirs = append(dirs, d)
	}
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(dirs, func(i, j int) bool {
		if depth(dirs[i]) != depth(dirs[j]) {
			return depth(dirs[i]) > depth(dirs[j])
		}
		return dirs[i] < dirs[j]
	})
	hashes := map[string]plumbing.Hash{}
	for _, d := range dirs {
		es := entries[d]
		for _, sub := range subdirs[d] {
			es = append(es, object.TreeEntry{Name: path.Base(sub), Mode: filemode.Dir, Hash: hashes[sub]})
		}
		sortTreeEntries(es)
		o := s.NewEncodedObject()
		if err := (&object.Tree{Entries: es}).Encode(o); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("encode tree %q: %w", d, err)
		}
		h, err := s.SetEncodedObject(o)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("store tree %q: %w", d, err)
		}
		hashes[d] = h
	}
	return hashes[""], nil
}

func parentOf(d string) string {
	if p := path.Dir(d); p != "." {
		return p
	}
	return ""
}

// sortTreeEntries orders entries as git does: by name, with a directory
// compared as if its name ended in "/".
func sortTreeEntries(es []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
}

// WriteCommit stores a commit of tree with the given parents.
func WriteCommit(s storer.EncodedObjectStorer, tree plumbing.Hash, parents []plumbing.Hash, msg string, sig object.Signature) (plumbing.Hash, error) {
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	o := s.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}

// Flatten lists every file of a tree.
func Flatten(t *object.Tree) (Files, error) {
	files := Files{}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if e.Mode == filemode.Dir {
			continue
		}
		files[name] = Entry{Mode: e.Mode, Hash: e.Hash}
	}
	return files, nil
}
