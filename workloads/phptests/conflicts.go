package phptests

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/patchproof/patchproof/internal/safefs"
)

// Conflicts keeps the run-tests invocations of one conflict group from
// running at once across Runs: php-src's suites name in a CONFLICTS file
// the shared state their tests change (ext/mysqli/tests and
// ext/pdo_mysql/tests: "mysql", the server's SET GLOBAL, CREATE USER), and
// run-tests never runs two tests of one group in parallel; builds whose
// suites share one server must not either. Suites of no common group
// still run at once. The zero value is ready; one Conflicts is shared by
// every Run against the same server.
type Conflicts struct {
	mu     sync.Mutex
	groups map[string]chan struct{}
}

// sem is the group's one-slot semaphore.
func (c *Conflicts) sem(group string) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups == nil {
		c.groups = map[string]chan struct{}{}
	}
	ch, ok := c.groups[group]
	if !ok {
		ch = make(chan struct{}, 1)
		c.groups[group] = ch
	}
	return ch
}

// Acquire holds every group of groups until release is called, waiting
// for their holders; it gives up, holding none, when ctx ends. Groups are
// taken in sorted order, so two holders of overlapping groups never wait
// on each other. A nil Conflicts holds nothing.
func (c *Conflicts) Acquire(ctx context.Context, groups []string) (release func(), err error) {
	var held []chan struct{}
	release = func() {
		for _, ch := range held {
			<-ch
		}
		held = nil
	}
	if c == nil {
		return release, nil
	}
	sorted := slices.Compact(slices.Sorted(slices.Values(groups)))
	for _, g := range sorted {
		ch := c.sem(g)
		select {
		case ch <- struct{}{}:
			held = append(held, ch)
		case <-ctx.Done():
			release()
			return nil, fmt.Errorf("wait for conflict group %s: %w", g, context.Cause(ctx))
		}
	}
	return release, nil
}

// maxConflictsFile bounds a suite's CONFLICTS file: a few names.
const maxConflictsFile = 64 << 10

// conflictComment is what run-tests' parse_conflicts strips.
var conflictComment = regexp.MustCompile(`#.*`)

// SuiteConflicts is the conflict groups a suite's CONFLICTS file names in
// the tree src, sorted; none when it has no such file. The tree is the
// build's, the change's code: the file is read beneath it, through no
// link out of it, and bounded.
func SuiteConflicts(src, suite string) ([]string, error) {
	data, err := safefs.ReadFile(src, path.Join(suite, "CONFLICTS"), maxConflictsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the conflict groups of %s: %w", suite, err)
	}
	var groups []string
	for _, l := range strings.Split(conflictComment.ReplaceAllString(string(data), ""), "\n") {
		if g := strings.TrimSpace(l); g != "" {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}
