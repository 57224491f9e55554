package phptests

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/patchproof/patchproof/verify/suites"
)

// NewRerunner returns a suites.Rerunner that runs tests again on the build
// named, with that build's Options: the same php, tree and database, each
// re-run in a fresh work dir under the build's WorkDir.
func NewRerunner(builds map[string]Options) suites.Rerunner {
	var mu sync.Mutex
	calls := make(map[string]int)
	return func(ctx context.Context, build string, tests []string) (map[string]suites.TestResult, error) {
		opt, ok := builds[build]
		if !ok {
			return nil, fmt.Errorf("re-run on %s: no such build", build)
		}
		mu.Lock()
		calls[build]++
		n := calls[build]
		mu.Unlock()
		opt.Build = build
		opt.Tests = tests
		opt.WorkDir = filepath.Join(opt.WorkDir, fmt.Sprintf("rerun-%d", n))
		r, err := Run(ctx, opt)
		if err != nil {
			return nil, err
		}
		return r.ByName(), nil
	}
}
