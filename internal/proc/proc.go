// Package proc owns the two things every command and server patchproof
// starts needs from the operating system: a process group of its own, so
// that stopping it stops its children too (make's compilers, taskset's
// child, the servers a test starts), and a free loopback port to listen on.
//
// A run also marks every process it starts (MarkChildren), so that what
// outlives it is found and stopped: at its end (Sweep), or after it was
// killed by the next run in its directory (ClaimDir) or on its host
// (ClaimRun).
//
// Long-running servers want workloads/service, which builds on the same
// process groups but also watches and stops them; one-shot commands use
// KillGroupOnCancel and are waited for.
package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// KillGrace is how long Wait waits for a command's output pipes after its
// process group was killed: a grandchild that holds them open does not hang
// the caller.
const KillGrace = 5 * time.Second

// KillGroupOnCancel makes cmd the leader of a new process group and, when
// its context is cancelled, kills the whole group, then waits at most
// KillGrace for the output pipes to close. A new group also keeps a
// terminal's ^C from reaching the command before patchproof sees it.
func KillGroupOnCancel(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return KillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = KillGrace
}

// KillGroup sends SIGKILL to the process group led by pid: what a command
// left behind goes with it.
func KillGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// FreePort asks the kernel for a free loopback port. The port is released
// before the caller's server binds it, so a server that fails to start
// should ask PortTaken whether it lost a race for it, and retry.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortTaken reports whether another process holds a loopback port, i.e.
// whether a failed start may have been a lost race for it.
func PortTaken(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return true
	}
	l.Close()
	return false
}

// ExitError is an executor's runErr: the command ran and exited non-zero.
// The builds' executors and the suites' return it alike.
type ExitError struct {
	Args []string
	Code int
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s exited with status %d", e.Args[0], e.Code)
}

// ExitStatus splits what exec.Cmd.Run returned into the two outcomes an
// executor reports: failed with the exit code of a command that ran and
// exited non-zero, or execErr when it could not be run or was cancelled
// (the context's error first). Neither, and the command succeeded.
func ExitStatus(ctx context.Context, name string, err error) (code int, failed bool, execErr error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, false, nil
	case ctx.Err() != nil:
		return 0, false, ctx.Err()
	case errors.As(err, &ee):
		return ee.ExitCode(), true, nil
	}
	return 0, false, fmt.Errorf("run %s: %w", name, err)
}
