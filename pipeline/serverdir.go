package pipeline

import (
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/safefs"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// serverDir returns the directory for a server's files under parts. That is
// in the run directory, unless the run is root's and the servers' user
// cannot enter the run directory: a clone under /root, or under a home of
// Debian 12's default mode 0700. Then it is a directory of the system's
// temporary one for this run, which the user can enter, made once and
// removed when the run ends; the run directory keeps what the stages
// report (logs, bench.txt, the TSan reports).
func (r *Run) serverDir(parts ...string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.servers == "" {
		if os.Geteuid() != 0 || httpd.Reachable(r.Dir, httpd.DefaultUser) == nil {
			r.servers = r.Dir
		} else {
			// A killed run could not remove its own: the first run after
			// it does, or a runner's temp dir fills, 100 MB a run.
			if n, err := sweepServerDirs(os.TempDir(), time.Now()); n > 0 || err != nil {
				r.Progress.Warn(fmt.Sprintf("removed %d servers' directories that killed runs left in %s%s", n, os.TempDir(), errSuffix(err)))
			}
			dir, err := os.MkdirTemp("", serverDirPrefix)
			if err != nil {
				return "", fmt.Errorf("a directory for the servers: %w", err)
			}
			// Held for the run's life: a sweep removes only a directory
			// whose lock is free, proof that its run is gone.
			unlock, _, err := cachedir.TryLock(filepath.Join(dir, serverDirLock))
			if err == nil {
				// MkdirTemp makes it 0700: the servers' user has to enter it.
				err = os.Chmod(dir, 0o755)
			}
			if err != nil {
				if unlock != nil {
					unlock()
				}
				os.RemoveAll(dir)
				return "", fmt.Errorf("a directory for the servers: %w", err)
			}
			r.servers, r.serversUnlock = dir, unlock
			r.Progress.Warn(fmt.Sprintf("%s cannot enter %s: the servers' directories are in %s for this run, and their logs are copied to the same paths under %s when it ends", httpd.DefaultUser, r.Dir, dir, r.Dir))
		}
	}
	return filepath.Join(append([]string{r.servers}, parts...)...), nil
}

// closeServerDirs removes the servers' directories made for this run (any
// but the run directory), keeping their logs first where the run directory
// would have had them: a server that failed is told by its error log, and
// the run directory then reads the same wherever its servers ran.
func (r *Run) closeServerDirs() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.servers != "" && r.servers != r.Dir {
		if err := keepLogs(r.servers, r.Dir); err != nil {
			r.Progress.Warn("the servers' logs: " + firstLine(err.Error()))
		}
		if err := os.RemoveAll(r.servers); err != nil {
			r.Progress.Warn(firstLine(err.Error()))
		}
	}
	if r.serversUnlock != nil {
		r.serversUnlock()
	}
	r.servers, r.serversUnlock = "", nil
}

const (
	serverDirPrefix = "patchproof-servers-"
	serverDirLock   = ".run.lock"
	// unlockedGrace is how old a servers' directory without a lock file
	// must be to be another run's leftover: one made a moment ago has not
	// taken its lock yet, and an older patchproof took none.
	unlockedGrace = time.Hour
)

// sweepServerDirs removes the servers' directories in tmp whose run is
// gone: their lock is free, or they have none and are older than
// unlockedGrace. Only this user's are looked at. It returns how many it
// removed and the first error.
func sweepServerDirs(tmp string, now time.Time) (int, error) {
	matches, err := filepath.Glob(filepath.Join(tmp, serverDirPrefix+"*"))
	if err != nil {
		return 0, err
	}
	var n int
	var first error
	for _, dir := range matches {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		lock := filepath.Join(dir, serverDirLock)
		if _, err := os.Lstat(lock); err != nil {
			if !os.IsNotExist(err) || now.Sub(fi.ModTime()) < unlockedGrace {
				continue
			}
		} else {
			unlock, ok, err := cachedir.TryLock(lock)
			if err != nil || !ok {
				continue
			}
			// Held while removing, so that no second sweep races this one.
			defer unlock()
		}
		if err := os.RemoveAll(dir); err != nil {
			first = cmp.Or(first, err)
			continue
		}
		n++
	}
	return n, first
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + firstLine(err.Error()) + ")"
}

// keepLogTail is the most of a log kept: its end, where a failure is told.
const keepLogTail = 8 << 20

// keepLogs copies the servers' logs under from to the same paths under to.
// It goes on past a file it cannot copy, and returns the first error.
func keepLogs(from, to string) error {
	names := append(httpd.LogNames(), mysqld.LogNames()...)
	var first error
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// A directory a server's user made unreadable: the rest is kept.
			first = cmp.Or(first, err)
			return nil
		}
		if !d.Type().IsRegular() || !slices.Contains(names, d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(from, path)
		if err == nil {
			err = copyTail(path, filepath.Join(to, rel), keepLogTail)
		}
		first = cmp.Or(first, err)
		return nil
	})
	return cmp.Or(first, err)
}

// copyTail copies at most the last n bytes of src to dst, making dst's
// directory.
func copyTail(src, dst string, n int64) error {
	// A server's log is written where the tree's code runs: no link as
	// its name.
	in, err := safefs.OpenPath(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err == nil && fi.Size() > n {
		if _, err := in.Seek(-n, io.SeekEnd); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := safefs.CreatePath(dst, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return cmp.Or(err, out.Close())
}
