package pipeline

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchproof/patchproof/workloads/httpd"
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
			dir, err := os.MkdirTemp("", "patchproof-servers-")
			if err != nil {
				return "", fmt.Errorf("a directory for the servers: %w", err)
			}
			// MkdirTemp makes it 0700: the servers' user has to enter it.
			if err := os.Chmod(dir, 0o755); err != nil {
				os.RemoveAll(dir)
				return "", fmt.Errorf("a directory for the servers: %w", err)
			}
			r.servers = dir
			r.Progress.Warn(fmt.Sprintf("%s cannot enter %s: the servers' directories are in %s for this run", httpd.DefaultUser, r.Dir, dir))
		}
	}
	return filepath.Join(append([]string{r.servers}, parts...)...), nil
}

// closeServerDirs removes the servers' directories made for this run (any
// but the run directory).
func (r *Run) closeServerDirs() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.servers != "" && r.servers != r.Dir {
		if err := os.RemoveAll(r.servers); err != nil {
			r.Progress.Warn(firstLine(err.Error()))
		}
	}
	r.servers = ""
}
