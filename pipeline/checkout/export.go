package checkout

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Export writes commit's tree into dir, which must not exist yet. The tree is
// written beside dir and renamed into place, so dir is either complete or
// absent. It returns the number of files written.
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
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	defer os.RemoveAll(tmp)
	n := 0
	err = tree.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n++
		return writeFile(filepath.Join(tmp, filepath.FromSlash(f.Name)), f)
	})
	if err != nil {
		return 0, fmt.Errorf("export %s to %s: %w", short(commit), dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return 0, fmt.Errorf("export %s: %w", short(commit), err)
	}
	return n, nil
}

func writeFile(path string, f *object.File) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rd, err := f.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	switch f.Mode {
	case filemode.Symlink:
		target, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		return os.Symlink(string(target), path)
	case filemode.Submodule:
		return os.MkdirAll(path, 0o755)
	}
	perm := os.FileMode(0o644)
	if f.Mode == filemode.Executable {
		perm = 0o755
	}
	w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, rd); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
