package pipeline

import (
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
	return f.res.WriteFile(f.path)
}
