package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchproof/patchproof/internal/childenv"
)

// MarkChildren makes this process the owner of every process it starts
// from now on: it sets childenv.OwnerVar to Self in its environment (which
// childenv passes on to every child, and they to theirs), and makes it
// the subreaper of its descendants, so that one that leaves its process
// group and loses its parent is reparented here, not to init. Sweep
// finds them all by the mark.
func MarkChildren() error {
	if err := os.Setenv(childenv.OwnerVar, Self().String()); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become the subreaper of the run's processes: %w", err)
	}
	return nil
}

// Marked reports whether this process has called MarkChildren.
func Marked() bool { return os.Getenv(childenv.OwnerVar) == Self().String() }

// sweepRounds bounds Sweep: a process may fork while it is being killed,
// and its child is found in the next round.
const sweepRounds = 5

// Sweep kills (SIGKILL) every process of this host but this one whose
// environment carries owner's mark, and returns their PIDs. Call it when
// no command this process started is being waited for (see reapChildren). Processes of
// other users it may not read are not seen.
func Sweep(owner string) ([]int, error) {
	mark := []byte(childenv.OwnerVar + "=" + owner + "\x00")
	var killed []int
	for range sweepRounds {
		found := 0
		dirs, err := filepath.Glob("/proc/[0-9]*")
		if err != nil {
			return killed, err
		}
		for _, d := range dirs {
			pid, err := strconv.Atoi(filepath.Base(d))
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(d + "/environ")
			if err != nil || !containsEntry(env, mark) || ended(d) {
				continue
			}
			// One killed in an earlier round may take a moment to die: a
			// new round is for the processes found since.
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil && !slices.Contains(killed, pid) {
				killed = append(killed, pid)
				found++
			}
		}
		reapChildren()
		if found == 0 {
			return killed, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return killed, fmt.Errorf("processes of %s still appear after %d rounds of killing", owner, sweepRounds)
}

// ended reports whether the process of /proc dir d has exited (a zombie,
// or dead): killing it again changes nothing.
func ended(d string) bool {
	b, err := os.ReadFile(d + "/stat")
	if err != nil {
		return true
	}
	f, err := statFields(string(b))
	return err != nil || len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// containsEntry reports whether the NUL-separated environ holds entry
// (which ends in NUL) as a whole entry.
func containsEntry(environ, entry []byte) bool {
	s, e := string(environ), string(entry)
	return strings.HasPrefix(s, e) || strings.Contains(s, "\x00"+e)
}

// reapChildren collects the exit status of this process's children that
// have ended as zombies (orphans reparented here), so that they do not
// stay. It would take the status of a child an exec.Cmd still waits for,
// so Sweep is for when no command of this process runs: at the start of a
// run (ClaimDir) and at its end.
func reapChildren() {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		f, err := statFields(string(b)) // state, ppid, ...
		if err != nil || len(f) < 2 || f[0] != "Z" || f[1] != strconv.Itoa(self) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// ownerFile is where a run directory names the process that runs in it.
const ownerFile = ".patchproof-owner"

// ClaimDir names this process as the owner of the run in dir, and stops
// what the run it replaces left: when dir names an owner that is gone (a
// run killed with SIGKILL), every process still carrying its mark is
// killed. A live owner is another run in the same directory: an error.
func ClaimDir(dir string) (killed []int, err error) {
	path := filepath.Join(dir, ownerFile)
	if b, err := os.ReadFile(path); err == nil {
		prev, perr := ParseOwner(strings.TrimSpace(string(b)))
		switch {
		case perr != nil:
			// Not ours to judge: replaced below.
		case prev == Self():
		case !prev.Gone():
			return nil, fmt.Errorf("%s is in use by patchproof process %d (%s), which is still running", dir, prev.PID, prev)
		default:
			if killed, err = Sweep(prev.String()); err != nil {
				return killed, err
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return killed, os.WriteFile(path, []byte(Self().String()+"\n"), 0o644)
}
