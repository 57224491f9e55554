package builders

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/safefs"
	"github.com/patchproof/patchproof/internal/side"
)

// The build cache is bounded: after a build lands, the least recently used
// entries are removed until the entries' files take at most the limit.
// Use is recorded in KEY.used, a sidecar of the read-only entry, whose
// mtime a build renews whenever it lands or is reused; an entry from
// before the sidecar counts as used when its directory was last written.
// An entry is never removed while it is in use: while its lock KEY.lock is
// held, exclusively while it is being built or verified, shared by every
// live run that made or reused it (Builder.Release lets go at the run's
// end), or when the caller names it (the builds of the run that prunes).

// Entry is one finished build in the cache.
type Entry struct {
	Key      string    `json:"key"`
	Label    string    `json:"label,omitempty"` // of the build that made it
	Side     side.Side `json:"side,omitempty"`
	Variant  Variant   `json:"variant,omitempty"`
	Size     int64     `json:"size"` // bytes of its files
	LastUsed time.Time `json:"last_used"`
	InUse    bool      `json:"in_use"` // its lock is held
	// Damaged says why its record could not be read: it is listed, and
	// pruned like any other, but rebuilt rather than used.
	Damaged string `json:"damaged,omitempty"`
}

const (
	usedSuffix = ".used"
	lockSuffix = ".lock"
	// pruneLock serialises prunes, so that two of them do not both remove
	// entries for the same excess.
	pruneLock = "prune.lock"
	// maxBuildRecord bounds the read of an entry's patchproof-build.json.
	maxBuildRecord = 4 << 20

	// DefaultCacheMaxCap caps DefaultCacheMax: enough for the builds of
	// many branches and a day's pull requests.
	DefaultCacheMaxCap int64 = 50 << 30
)

// entryName matches a finished entry's directory name: its key.
var entryName = regexp.MustCompile(`^[0-9a-f]{24}$`)

// DefaultCacheMax is the limit of the builds when none is given: a quarter
// of the file system the cache directory is on (or would be on: the
// nearest directory of its path that exists), at most DefaultCacheMaxCap.
func DefaultCacheMax(cacheDir string) (int64, error) {
	dir, err := filepath.Abs(cacheDir)
	if err != nil {
		return 0, err
	}
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(dir, &st)
		if err == nil {
			return min(DefaultCacheMaxCap, int64(st.Blocks)*st.Bsize/4), nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, syscall.ENOENT) || parent == dir {
			return 0, fmt.Errorf("size of the file system of %s: %w", cacheDir, err)
		}
		dir = parent
	}
}

// Entries lists the finished builds in cacheDir, least recently used
// first.
func Entries(cacheDir string) ([]Entry, error) {
	root := filepath.Join(cacheDir, "builds")
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the build cache %s: %w", root, err)
	}
	var out []Entry
	for _, d := range ents {
		if !entryName.MatchString(d.Name()) || !d.IsDir() {
			continue
		}
		e, err := readEntry(root, d.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned or rejected since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("list the build cache %s: %w", root, err)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(a.LastUsed.Compare(b.LastUsed), cmp.Compare(a.Key, b.Key))
	})
	return out, nil
}

// readEntry describes the entry key in the builds dir root.
func readEntry(root, key string) (Entry, error) {
	dir := filepath.Join(root, key)
	fi, err := os.Lstat(dir)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Key: key, LastUsed: fi.ModTime()}
	if fi, err := os.Stat(filepath.Join(root, key+usedSuffix)); err == nil {
		e.LastUsed = fi.ModTime()
	}
	// The record is the entry's, which the build it holds could have
	// written: read beneath the entry, bounded.
	var b Build
	if data, err := safefs.ReadFile(dir, buildFile, maxBuildRecord); err != nil {
		e.Damaged = err.Error()
	} else if err := json.Unmarshal(data, &b); err != nil {
		e.Damaged = fmt.Sprintf("read %s: %v", buildFile, err)
	} else {
		e.Label, e.Side, e.Variant = b.Label, b.Side, b.Variant
	}
	if e.Size, err = treeSize(dir); err != nil {
		return Entry{}, err
	}
	unlock, ok, err := cachedir.TryLock(filepath.Join(root, key+lockSuffix))
	if err != nil {
		return Entry{}, err
	}
	if ok {
		unlock()
	}
	e.InUse = !ok
	return e, nil
}

// treeSize is the bytes of the files (symlinks not followed) under dir.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// markUsed renews the last use of the entry key in the builds dir root.
// It is only the order of pruning: failing to record it is not an error of
// the build that used the entry.
func markUsed(root, key string) {
	p := filepath.Join(root, key+usedSuffix)
	now := time.Now()
	if err := os.Chtimes(p, now, now); errors.Is(err, fs.ErrNotExist) {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Close()
		}
	}
}

// Prune removes the least recently used builds of cacheDir until their
// files take at most max bytes, and returns what it removed. It never
// removes an entry whose lock is held or whose key is in inUse; when what
// is left of those is over max, it says so on log and leaves them.
func Prune(cacheDir string, max int64, inUse []string, log io.Writer) (removed []Entry, err error) {
	return prune(cacheDir, max, inUse, log, false)
}

// PrunePlan returns what Prune would remove now, removing nothing.
func PrunePlan(cacheDir string, max int64, inUse []string, log io.Writer) ([]Entry, error) {
	return prune(cacheDir, max, inUse, log, true)
}

func prune(cacheDir string, max int64, inUse []string, log io.Writer, dry bool) ([]Entry, error) {
	if log == nil {
		log = io.Discard
	}
	root := filepath.Join(cacheDir, "builds")
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	unlock, err := cachedir.Lock(filepath.Join(root, pruneLock))
	if err != nil {
		return nil, fmt.Errorf("prune the build cache: %w", err)
	}
	defer unlock()
	ents, err := Entries(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("prune the build cache: %w", err)
	}
	var total int64
	for _, e := range ents {
		total += e.Size
	}
	var removed []Entry
	kept := 0
	for _, e := range ents {
		if total <= max {
			break
		}
		if slices.Contains(inUse, e.Key) {
			kept++
			continue
		}
		ok, err := removeIfFree(root, e.Key, dry)
		if err != nil {
			return removed, fmt.Errorf("prune the build cache: remove %s: %w", e.Key, err)
		}
		if !ok {
			kept++ // being built or used by another run
			continue
		}
		verb := "removed"
		if dry {
			verb = "would remove"
		}
		fmt.Fprintf(log, "build cache over %d bytes: %s build %s (%s, %d bytes, last used %s)\n",
			max, verb, e.Key, cmp.Or(e.Label, "no label"), e.Size, e.LastUsed.UTC().Format(time.RFC3339))
		total -= e.Size
		removed = append(removed, e)
	}
	if total > max {
		fmt.Fprintf(log, "warning: build cache holds %d bytes, over its %d: %d builds in use are kept\n", total, max, kept)
	}
	return removed, nil
}

// removeIfFree removes the entry key of the builds dir root under its
// lock, if no one holds that; ok is false when someone does. dry only
// takes and releases the lock.
func removeIfFree(root, key string, dry bool) (ok bool, err error) {
	unlock, ok, err := cachedir.TryLock(filepath.Join(root, key+lockSuffix))
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	if dry {
		return true, nil
	}
	// The lock file stays: removing a lock file others may have opened
	// would let two of them hold "the" lock at once.
	if err := removeEntry(filepath.Join(root, key)); err != nil {
		return false, err
	}
	if err := os.Remove(filepath.Join(root, key+usedSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}
