package cachedir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// TestSharedLock: shared holders do not keep each other out, and keep out
// an exclusive taker until the last lets go; a shared taker waits for an
// exclusive holder and gives up when its context ends.
func TestSharedLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.git.readers")
	ctx := context.Background()
	r1, err := SharedLockContext(ctx, path, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	soon, cancelSoon := context.WithTimeout(ctx, 2*time.Second)
	defer cancelSoon()
	r2, err := SharedLockContext(soon, path, &log)
	if err != nil || log.Len() > 0 {
		t.Fatalf("a second shared lock = %v (log %q); want it taken at once", err, log.String())
	}
	if _, ok, err := TryLock(path); err != nil || ok {
		t.Errorf("TryLock with two shared holders = %v, %v; want it refused", ok, err)
	}
	r1()
	if _, ok, err := TryLock(path); err != nil || ok {
		t.Errorf("TryLock with one shared holder left = %v, %v; want it refused", ok, err)
	}
	r2()
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after the shared holders let go = %v, %v; want it taken", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	log.Reset()
	if _, err := SharedLockContext(short, path, &log); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SharedLockContext under an exclusive holder = %v, want context.DeadlineExceeded", err)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("held by pid %d", os.Getpid())) {
		t.Errorf("wait log %q does not name the exclusive holder", log.String())
	}
	unlock()
	r3, err := SharedLockContext(ctx, path, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	r3()
}

// TestReadOrLock: with nothing there and no one about, the exclusive lock
// (to make the entry); once made and shared, others read it alongside and
// no exclusive taker gets in; one that waits for a writer reads what the
// writer made when it shares, though the writer still holds it.
func TestReadOrLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "builds", "key.lock")
	ctx := context.Background()
	var made atomic.Bool
	ready := made.Load

	w, shared, err := ReadOrLockContext(ctx, path, &bytes.Buffer{}, ready)
	if err != nil || shared {
		t.Fatalf("ReadOrLockContext of nothing = %v, shared %v; want the exclusive lock", err, shared)
	}
	if h, ok := ReadHolder(path); !ok || h.PID != os.Getpid() {
		t.Errorf("the writer is not recorded: %+v, %v", h, ok)
	}
	// A reader waits for the writer, and reads when it shares.
	got := make(chan bool, 1)
	var log bytes.Buffer
	var r *Held
	go func() {
		var shared bool
		var err error
		r, shared, err = ReadOrLockContext(ctx, path, &log, ready)
		got <- err == nil && shared
	}()
	select {
	case <-got:
		t.Fatal("a reader got in under the writer")
	case <-time.After(200 * time.Millisecond):
	}
	made.Store(true)
	if err := w.Share(); err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("the waiting reader did not get the entry shared")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting reader still waits for a writer that shares")
	}
	if !strings.Contains(log.String(), fmt.Sprintf("held by pid %d", os.Getpid())) {
		t.Errorf("wait log %q does not name the writer", log.String())
	}
	// Readers keep any exclusive taker (a prune) out, until the last goes.
	if _, ok, err := TryLock(path); err != nil || ok {
		t.Errorf("TryLock with two readers = %v, %v; want it refused", ok, err)
	}
	w.Release()
	w.Release() // twice is nothing
	if _, ok, err := TryLock(path); err != nil || ok {
		t.Errorf("TryLock with a reader left = %v, %v; want it refused", ok, err)
	}
	r.Release()
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after the readers = %v, %v; want it taken", ok, err)
	}
	// Under an exclusive holder, a reader gives up with its context.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, _, err := ReadOrLockContext(short, path, &bytes.Buffer{}, ready); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ReadOrLockContext under an exclusive holder = %v, want context.DeadlineExceeded", err)
	}
	unlock()
	h, err := LockHeld(ctx, path, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := TryLock(path); ok {
		t.Error("TryLock under LockHeld's lock got it")
	}
	h.Release()
}
