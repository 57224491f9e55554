// Package cachedir owns patchproof's cache directory: where it is, and the
// locks that keep it consistent when runs overlap or are killed. Everything
// in the cache lands by rename, so a reader sees a whole entry or none.
package cachedir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Default is the cache directory when --cache is not given:
// $PATCHPROOF_CACHE as getenv reads it, else $XDG_CACHE_HOME/patchproof or
// ~/.cache/patchproof.
func Default(getenv func(string) string) (string, error) {
	if d := getenv("PATCHPROOF_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache dir (use --cache): %w", err)
	}
	return filepath.Join(d, "patchproof"), nil
}

// Lock takes an exclusive flock on path, waiting for it without a deadline
// and silently. Use LockContext where a wait must be seen or cancelled.
func Lock(path string) (func(), error) {
	return LockContext(context.Background(), path, io.Discard)
}

// pollInterval is how often LockContext retries a held lock: flock has no
// timeout, so a wait that honours the context polls with LOCK_NB.
const pollInterval = 50 * time.Millisecond

// LockContext takes an exclusive flock on path (created if needed). While
// another process holds it, it tells log once who that is (from the pid and
// start time the holder wrote into the file) and waits until the lock is
// free or ctx is done, returning ctx.Err() then. The kernel drops a flock
// when its process dies, so a killed run never leaves a stale lock. The
// returned func releases it.
func LockContext(ctx context.Context, path string, log io.Writer) (func(), error) {
	f, err := lockContext(ctx, path, syscall.LOCK_EX, log)
	if err != nil {
		return nil, err
	}
	return held(f), nil
}

// SharedLockContext takes a shared flock on path (created if needed): any
// number of holders at once, none while someone holds it exclusively
// (LockContext, TryLock). A reader holds it to keep whoever would rewrite
// what it reads off, without keeping other readers out. It waits as
// LockContext does; a shared holder does not write itself into the file,
// which names the last exclusive one. The returned func releases it.
func SharedLockContext(ctx context.Context, path string, log io.Writer) (func(), error) {
	f, err := lockContext(ctx, path, syscall.LOCK_SH, log)
	if err != nil {
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// lockContext takes the flock how (LOCK_EX or LOCK_SH) on path, waiting as
// LockContext says, and returns the file that holds it.
func lockContext(ctx context.Context, path string, how int, log io.Writer) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !told {
			told = true
			fmt.Fprintf(log, "waiting for %s held by %s\n", path, holder(path))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// TryLock takes the exclusive flock on path (created if needed) if no one
// holds it, without waiting: ok is false while another process, or another
// open file of this one, holds it. As flocks die with their process, a
// lock that TryLock gets is proof that whatever its holder was writing
// under it was left by a process that is gone.
func TryLock(path string) (unlock func(), ok bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	f, ok, err := tryFlock(path, syscall.LOCK_EX)
	if err != nil || !ok {
		return nil, false, err
	}
	return held(f), true, nil
}

// Held is a flock this process holds on a lock file, exclusive or
// shared, kept for as long as what it guards is in use: a build cache
// entry a run reads from its build stage to its end.
type Held struct {
	f    *os.File
	path string
}

// Release releases the lock; a second Release does nothing.
func (h *Held) Release() {
	if h == nil || h.f == nil {
		return
	}
	syscall.Flock(int(h.f.Fd()), syscall.LOCK_UN)
	h.f.Close()
	h.f = nil
}

// Share makes an exclusive lock shared, in place, so that other readers
// may take it while no writer can: a writer that made an entry goes on
// reading it. flock(2) does not promise the conversion is atomic (the
// exclusive lock may be dropped before the shared one is placed), so a
// caller checks afterwards that what it guards is still there.
func (h *Held) Share() error {
	if err := syscall.Flock(int(h.f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("share the lock %s: %w", h.path, err)
	}
	return nil
}

// LockHeld is LockContext returning the lock as a Held, which Share can
// make shared.
func LockHeld(ctx context.Context, path string, log io.Writer) (*Held, error) {
	f, err := lockContext(ctx, path, syscall.LOCK_EX, log)
	if err != nil {
		return nil, err
	}
	held(f)
	return &Held{f: f, path: path}, nil
}

// ReadOrLockContext waits for one of two locks on path, for an entry that
// one writer makes and any number of readers then use: a shared lock while
// ready says the entry is there to read (shared is true), else the
// exclusive lock, to make it. A reader that finds no entry and a writer
// under way waits for the writer and then reads what it made, though
// other readers hold the entry from then on; one that finds no entry and
// no one about makes it. It tells log once whom it waits for, and gives
// up with ctx.Err() when ctx is done, as LockContext does.
func ReadOrLockContext(ctx context.Context, path string, log io.Writer, ready func() bool) (h *Held, shared bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	told := false
	for {
		f, ok, err := tryFlock(path, syscall.LOCK_SH)
		if err != nil {
			return nil, false, err
		}
		if ok {
			if ready() {
				return &Held{f: f, path: path}, true, nil
			}
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
		if f, ok, err = tryFlock(path, syscall.LOCK_EX); err != nil {
			return nil, false, err
		} else if ok {
			held(f)
			return &Held{f: f, path: path}, false, nil
		}
		if !told {
			told = true
			fmt.Fprintf(log, "waiting for %s held by %s\n", path, holder(path))
		}
		select {
		case <-ctx.Done():
			return nil, false, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// tryFlock opens path (created if needed) and takes the flock how on it if
// no one holds a conflicting one; ok is false, and nothing is open, if
// someone does.
func tryFlock(path string, how int) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	switch err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, false, nil
	case err != nil:
		f.Close()
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, true, nil
}

// held records this process as the holder of the lock just taken on f and
// returns its release.
func held(f *os.File) func() {
	// Who holds the lock is only a message for waiters: failing to write it
	// does not make the lock any less held.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%d %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// Holder is who last took a lock, as it wrote itself into the lock file.
type Holder struct {
	PID   int
	Since time.Time
}

// ReadHolder reads the holder a lock file records. ok is false when the
// file records none (never taken, or written by an older patchproof).
func ReadHolder(path string) (h Holder, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Holder{}, false
	}
	var since string
	if _, err := fmt.Sscanf(string(b), "%d %s", &h.PID, &since); err != nil {
		return Holder{}, false
	}
	t, err := time.Parse(time.RFC3339, since)
	if err != nil {
		return Holder{}, false
	}
	h.Since = t
	return h, true
}

func holder(path string) string {
	h, ok := ReadHolder(path)
	if !ok {
		return "an unknown process"
	}
	return fmt.Sprintf("pid %d since %s", h.PID, h.Since.Format(time.RFC3339))
}
