package checkout

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// The limits a run has when it names none: a fetch of php-src sends
// progress or pack data every few seconds, and php-src's tree (about
// 20,000 files and 250 MB at master) fits eight times over.
const (
	DefaultFetchIdle  = 2 * time.Minute
	DefaultFetchTotal = 30 * time.Minute
	DefaultTreeBytes  = 2 << 30
	DefaultTreeFiles  = 200_000
)

// Limits bound what a remote and a tree may cost a run: a remote that stops
// answering would otherwise hold the mirror's lock, and every run waiting
// for it, for ever; a small repository whose entries share one large blob
// would fill the disk. A field that is zero takes its Default.
type Limits struct {
	// FetchIdle fails a fetch that receives nothing (no progress
	// message, no byte of pack) for this long.
	FetchIdle time.Duration
	// FetchTotal fails fetching a remote's refs that takes longer than
	// this, however it progresses.
	FetchTotal time.Duration
	// TreeBytes bounds the bytes an export writes: its files' contents
	// and its symlinks' targets.
	TreeBytes int64
	// TreeFiles bounds the entries an export writes: files, symlinks and
	// directories.
	TreeFiles int
}

func (l Limits) withDefaults() Limits {
	if l.FetchIdle <= 0 {
		l.FetchIdle = DefaultFetchIdle
	}
	if l.FetchTotal <= 0 {
		l.FetchTotal = DefaultFetchTotal
	}
	if l.TreeBytes <= 0 {
		l.TreeBytes = DefaultTreeBytes
	}
	if l.TreeFiles <= 0 {
		l.TreeFiles = DefaultTreeFiles
	}
	return l
}

// FetchTimeoutError is the error of a fetch that ran into Limits.FetchIdle
// (Idle) or Limits.FetchTotal.
type FetchTimeoutError struct {
	Remote string
	Ref    string // the ref being fetched when the idle limit was hit
	Idle   bool
	Limit  time.Duration
}

func (e *FetchTimeoutError) Error() string {
	if e.Idle {
		return fmt.Sprintf("fetch %s from %s: nothing received for %v", e.Ref, e.Remote, e.Limit)
	}
	return fmt.Sprintf("fetch from %s: not done after %v", e.Remote, e.Limit)
}

// TreeTooLargeError is the error of an export whose tree has more bytes or
// entries than Limits allow. Nothing of the export is left.
type TreeTooLargeError struct {
	Commit, Tree plumbing.Hash
	Files        bool  // the entries went over the limit, not the bytes
	Limit        int64 // the limit that was passed
}

func (e *TreeTooLargeError) Error() string {
	what := "more than " + byteSize(e.Limit) + " of files"
	if e.Files {
		what = fmt.Sprintf("more than %d files and directories", e.Limit)
	}
	return fmt.Sprintf("export %s (tree %s): %s", short(e.Commit), short(e.Tree), what)
}

// byteSize writes n in the largest binary unit that divides it.
func byteSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// watchIdle returns a context for one fetch into the repository at dir that
// is cancelled with cause once idle passes with nothing received, and the
// writer to give the fetch as its Progress (it passes what it gets on to
// log). What counts as received: a progress message from the server, or
// growth of the pack go-git writes as it reads (objects/pack/tmp_pack_*),
// whatever the transport. go-git writes the pack in pieces of 32 KiB, so a
// remote sending less than that within idle looks idle: at the default
// limit, under 300 bytes a second. stop ends the watch.
func watchIdle(ctx context.Context, dir string, idle time.Duration, cause error, log io.Writer) (_ context.Context, progress io.Writer, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &activity{log: log}
	w.touch()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(min(max(idle/4, time.Millisecond), time.Second))
		defer tick.Stop()
		var last packSize
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if p := pendingPacks(dir); p != last {
				last = p
				w.touch()
			}
			if time.Since(time.Unix(0, w.last.Load())) >= idle {
				cancel(cause)
				return
			}
		}
	}()
	return ctx, w, func() { close(done); cancel(nil) }
}

// activity is a fetch's Progress writer that notes when it last wrote.
type activity struct {
	log  io.Writer
	last atomic.Int64 // UnixNano
}

func (a *activity) touch() { a.last.Store(time.Now().UnixNano()) }

func (a *activity) Write(p []byte) (int, error) {
	a.touch()
	return a.log.Write(p)
}

// packSize is what a watch compares of the packs being written: a new
// file or a longer one is progress.
type packSize struct {
	files int
	bytes int64
}

func pendingPacks(dir string) packSize {
	var s packSize
	matches, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "tmp_pack_*"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil {
			s.files++
			s.bytes += fi.Size()
		}
	}
	return s
}
