package builders

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/patchproof/patchproof/internal/cachedir"
)

// A build compiles through ccache in one of two ways, by the trust of its
// tree (Spec.Trusted). The shared ccache is ccache's file storage, the
// layout of its remote storage, not a CCACHE_DIR: a trusted build reads and
// writes it as its remote storage; an untrusted build reads it as a
// read-only remote storage and writes only its own CCACHE_DIR, in its build
// tree, which is removed before the build lands. So a pull request's build
// that compiles, say, main/snprintf.c through a compiler of its own, and
// stores that as the genuine file's result, stores it where no other build
// looks.
//
// In a container (Docker) the shared ccache is bound read-only into an
// untrusted build's: nothing it runs can write there. On the host, the
// build runs as the user who owns the shared ccache, and nothing keeps its
// Makefile from writing into that directory by hand: ccache's read-only
// mode only keeps ccache from doing so. The host builder is for trees one
// trusts. Making the directory unwritable for a head's build would take a
// mount namespace of its own (and, but for root, a user namespace, in
// which the build would be root and could undo the mount), and would
// change nothing: the tests and the benchmark later run the head's php on
// this host as the same user, with the whole cache in reach.
const (
	ccacheDir    = "ccache"             // the shared ccache, in the cache directory
	ownCCacheDir = ".patchproof-ccache" // a build's own ccache, in its tree

	// DefaultCCacheMaxSize is the size the shared ccache is kept under when
	// Builder.CCacheMaxSize is 0: ccache's own default for a cache
	// directory.
	DefaultCCacheMaxSize int64 = 5 << 30
)

// ccachePath is what ccache's remote storage takes for a path: it splits
// the setting at spaces (one storage each) and at "|" (attributes), and
// reads it as a URL. A path with any of those would not be the directory
// meant, or would lose its read-only attribute.
var ccachePath = regexp.MustCompile(`^/[A-Za-z0-9/._+,=@~-]*$`)

// ccacheSetup is how a build in tree compiles through ccache, with the
// shared ccache in shared: the variables it is given and the directories a
// container of it binds besides tree.
func ccacheSetup(shared, tree string, trusted bool) (env []string, mounts []Mount, err error) {
	if !ccachePath.MatchString(shared) {
		return nil, nil, fmt.Errorf("ccache dir %q: ccache takes an absolute path of letters, digits and /._+,=@~- only", shared)
	}
	env = []string{"CC=ccache gcc", "CCACHE_DIR=" + filepath.Join(tree, ownCCacheDir),
		"CCACHE_BASEDIR=" + tree, "CCACHE_NOHASHDIR=1"}
	if trusted {
		// update-mtime: a hit renews its entry, which pruneCCache removes
		// by age. Remote only: the own directory would be a second copy of
		// every result, thrown away.
		env = append(env, "CCACHE_REMOTE_STORAGE=file:"+shared+"|update-mtime=true", "CCACHE_REMOTE_ONLY=1")
		return env, []Mount{{Path: shared}}, nil
	}
	env = append(env, "CCACHE_REMOTE_STORAGE=file:"+shared+"|read-only")
	return env, []Mount{{Path: shared, ReadOnly: true}}, nil
}

// pruneCCache keeps the shared ccache dir under max bytes: ccache sizes a
// CCACHE_DIR, never its remote storage. The least recently used files go
// first (a trusted build's hit renews a file's mtime) until it is at 90% of
// max, so that not every build prunes. A prune under way in another build
// is not waited for: this one is skipped.
func pruneCCache(dir string, max int64) error {
	unlock, ok, err := cachedir.TryLock(dir + ".lock")
	if err != nil || !ok {
		return err
	}
	defer unlock()
	type file struct {
		path  string
		size  int64
		mtime time.Time
	}
	var files []file
	var total int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || d.Name() == "CACHEDIR.TAG" {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone since it was listed: another prune, or ccache's rename
		}
		files = append(files, file{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
		return nil
	})
	if err != nil {
		return fmt.Errorf("prune ccache %s: %w", dir, err)
	}
	if total <= max {
		return nil
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(a.mtime.Compare(b.mtime), cmp.Compare(a.path, b.path))
	})
	for _, f := range files {
		if total <= max/10*9 {
			break
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("prune ccache %s: %w", dir, err)
		}
		total -= f.size
	}
	return nil
}
