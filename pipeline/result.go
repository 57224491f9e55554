package pipeline

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/patchproof/patchproof/pipeline/results"
)

// resultFile writes a Result atomically after every change, so a crash keeps
// what finished.
type resultFile struct {
	mu   sync.Mutex
	path string
	res  *results.Result
}

func (f *resultFile) update(change func(*results.Result)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if change != nil {
		change(f.res)
	}
	if err := f.res.WriteFile(f.path); err != nil {
		return err
	}
	// A copy among the artifacts, each time: a run killed before it ends
	// (the job's timeout) still leaves its results where the workflow
	// uploads from.
	dir := filepath.Join(filepath.Dir(f.path), artifactsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return f.res.WriteFile(filepath.Join(dir, filepath.Base(f.path)))
}
