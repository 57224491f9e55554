package cachedir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockContextWaitsAndCancels holds the lock through a second open file
// description (flock locks belong to those, so this is another holder even
// in one process) and checks that a waiter names the holder once and gives
// up promptly when its context ends.
func TestLockContextWaitsAndCancels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.git.lock")
	unlock, err := LockContext(context.Background(), path, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	h, ok := ReadHolder(path)
	if !ok || h.PID != os.Getpid() {
		t.Fatalf("lock file records %+v, %v; want pid %d", h, ok, os.Getpid())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var log bytes.Buffer
	start := time.Now()
	_, err = LockContext(ctx, path, &log)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockContext on a held lock = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("LockContext returned %v after its context ended", d)
	}
	want := fmt.Sprintf("waiting for %s held by pid %d since %s\n", path, os.Getpid(), h.Since.Format(time.RFC3339))
	if log.String() != want {
		t.Errorf("wait log = %q, want once %q", log.String(), want)
	}

	// Released: the next taker gets it at once and says nothing.
	unlock()
	log.Reset()
	unlock2, err := LockContext(context.Background(), path, &log)
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
	if strings.Contains(log.String(), "waiting") {
		t.Errorf("a free lock logged a wait: %q", log.String())
	}
}

// TestTryLock: a lock another holder has (another open file description,
// as another process's would be) is not taken and not waited for; a free
// one, or one whose holder let go, is taken at once.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.lock")
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock of a free lock = %v, %v; want it taken", ok, err)
	}
	if h, ok := ReadHolder(path); !ok || h.PID != os.Getpid() {
		t.Errorf("lock file records %+v, %v; want pid %d", h, ok, os.Getpid())
	}
	start := time.Now()
	if _, ok, err := TryLock(path); err != nil || ok {
		t.Errorf("TryLock of a held lock = %v, %v; want it refused", ok, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("TryLock of a held lock waited %v", d)
	}
	unlock()
	unlock2, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after release = %v, %v; want it taken", ok, err)
	}
	unlock2()
}
