package checkout

import (
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// ChangedFiles returns the paths that differ between two commits' trees,
// sorted: what a change touches, for judging where a finding lies.
func (r *Repo) ChangedFiles(base, head plumbing.Hash) ([]string, error) {
	a, err := r.repo.CommitObject(base)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", base, err)
	}
	b, err := r.repo.CommitObject(head)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", head, err)
	}
	ta, err := a.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", base, err)
	}
	tb, err := b.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", head, err)
	}
	changes, err := ta.Diff(tb)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", short(base), short(head), err)
	}
	var files []string
	for _, c := range changes {
		for _, name := range []string{c.From.Name, c.To.Name} {
			if name != "" && !slices.Contains(files, name) {
				files = append(files, name)
			}
		}
	}
	slices.Sort(files)
	return files, nil
}
