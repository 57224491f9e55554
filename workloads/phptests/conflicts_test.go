package phptests

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/safefs"
)

// overlapExec is fakeExec counting the invocations under way at once. An
// invocation waits for a second one to start, up to patience: where
// nothing keeps them apart they meet, and the count shows it.
type overlapExec struct {
	fakeExec
	mu       sync.Mutex
	cur, max int
	met      chan struct{} // closed when two are under way
	patience time.Duration // 0: wait for the other as long as ctx lasts
}

func (o *overlapExec) Exec(ctx context.Context, c Cmd) (runErr, execErr error) {
	o.mu.Lock()
	o.cur++
	o.max = max(o.max, o.cur)
	if o.cur == 2 {
		close(o.met)
	}
	o.mu.Unlock()
	defer func() { o.mu.Lock(); o.cur--; o.mu.Unlock() }()
	var timeout <-chan time.Time
	if o.patience > 0 {
		timeout = time.After(o.patience)
	}
	select {
	case <-o.met:
	case <-timeout:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fakeExec.Exec(ctx, c)
}

// Two builds' runs of suites of one conflict group never run at once;
// suites of different groups, or of none, do. The patience only decides
// how long a run waits for a partner that, kept apart, never comes: with
// no lock the two meet at once, whatever it is.
func TestConflictGroupsNeverOverlap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		conflicts [2]string // each build's ext/mysqli/tests/CONFLICTS; "" for none
		wantMax   int
	}{
		{"one group", [2]string{"mysql\n", "# the server's global state\nmysql\n"}, 1},
		{"different groups", [2]string{"a\n", "b\n"}, 2},
		{"no group", [2]string{"", ""}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			exec := &overlapExec{met: make(chan struct{})}
			if tc.wantMax == 1 {
				exec.patience = 200 * time.Millisecond
			}
			var conflicts Conflicts
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, c := range tc.conflicts {
				files := maps.Clone(miniTree)
				delete(files, "ext/mysqli/tests/CONFLICTS")
				if c != "" {
					files["ext/mysqli/tests/CONFLICTS"] = c
				}
				src := writeTree(t, files)
				php := filepath.Join(src, "sapi/cli/php")
				os.MkdirAll(filepath.Dir(php), 0o755)
				if err := os.WriteFile(php, []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				work := t.TempDir()
				wg.Go(func() {
					_, errs[i] = Run(ctx, Options{PHP: php, SrcDir: src, WorkDir: work, Exec: exec,
						Suites: []string{"ext/mysqli/tests"}, Conflicts: &conflicts})
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if exec.max != tc.wantMax {
				t.Errorf("at most %d suite runs at once, want %d", exec.max, tc.wantMax)
			}
			if n := len(exec.cmds); n != 2 {
				t.Errorf("%d run-tests invocations, want 2", n)
			}
		})
	}
}

// A holder of two groups and one of either never deadlock, and a waiter
// whose context ends gives up holding nothing.
func TestConflictsAcquire(t *testing.T) {
	var c Conflicts
	release, err := c.Acquire(t.Context(), []string{"b", "a", "a"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Acquire(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire of a held group with an ended context = %v, want context.Canceled", err)
	}
	release()
	release() // twice is once
	for _, g := range [][]string{{"a"}, {"b"}, {"b", "a"}} {
		r, err := c.Acquire(t.Context(), g)
		if err != nil {
			t.Fatalf("Acquire(%v) after release: %v", g, err)
		}
		r()
	}
	var none *Conflicts
	if r, err := none.Acquire(t.Context(), []string{"a"}); err != nil {
		t.Errorf("a nil Conflicts: %v", err)
	} else {
		r()
	}
}

func TestSuiteConflicts(t *testing.T) {
	src := writeTree(t, map[string]string{
		"ext/mysqli/tests/CONFLICTS":    "mysql\n",
		"ext/pdo_mysql/tests/CONFLICTS": "# changes server-global state\n mysql # the server\n\nall\nmysql\n",
		"ext/big/tests/CONFLICTS":       strings.Repeat("x", maxConflictsFile+1),
		"outside":                       "mysql\n",
	})
	os.MkdirAll(filepath.Join(src, "ext/mysqlnd/tests"), 0o755)
	os.MkdirAll(filepath.Join(src, "ext/link/tests"), 0o755)
	if err := os.Symlink("/etc/hostname", filepath.Join(src, "ext/link/tests/CONFLICTS")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		suite   string
		want    []string
		wantErr string
	}{
		{"ext/mysqli/tests", []string{"mysql"}, ""},
		{"ext/pdo_mysql/tests", []string{"all", "mysql"}, ""},
		{"ext/mysqlnd/tests", nil, ""},
		{"ext/big/tests", nil, "larger than its bound"},
		{"ext/link/tests", nil, "read the conflict groups of ext/link/tests"},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			got, err := SuiteConflicts(src, tc.suite)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("SuiteConflicts = %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				if tc.suite == "ext/big/tests" && !errors.Is(err, safefs.ErrTooLarge) {
					t.Errorf("error %v is not ErrTooLarge", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("groups (-want +got):\n%s", d)
			}
		})
	}
}
