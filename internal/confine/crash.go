package confine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A CrashError is a child that did not finish its job: killed by a signal
// (the kernel's at its CPU limit, the OOM killer's), stopped at its
// wall-clock limit, or exited without its output (the Go runtime's fatal
// error: out of its address space, past its stack).
type CrashError struct {
	Job    string // the Job's Name
	What   string // and What
	Limits Limits // it ran under
	// Signal is the signal that killed it; 0 where it exited.
	Signal syscall.Signal
	// Status is its exit status; -1 where a signal killed it.
	Status int
	// CPU is the user and system time it took.
	CPU time.Duration
	// Wall says that it was stopped at Limits.Wall.
	Wall bool
	// Fatal is the line of its stderr that says why it exited: the Go
	// runtime's "fatal error: ...", a panic's, or the first.
	Fatal string
}

func (e *CrashError) Error() string {
	what := e.What
	if what == "" {
		what = "the " + e.Job + " child"
	}
	limits := fmt.Sprintf("its limits: %s of address space, %s of stack, %s of CPU",
		size(e.Limits.AddressSpace), size(e.Limits.Stack), e.Limits.CPU)
	switch {
	case e.Wall:
		return fmt.Sprintf("%s ran past its wall-clock limit of %s", what, e.Limits.Wall)
	case e.Signal != 0 && e.PastCPU():
		return fmt.Sprintf("%s ran past its CPU limit of %s (killed by %s)", what, e.Limits.CPU, unix.SignalName(e.Signal))
	case e.Signal != 0:
		return fmt.Sprintf("%s was killed by %s after %s of CPU (%s)", what, unix.SignalName(e.Signal), e.CPU.Round(time.Millisecond), limits)
	case e.OutOfMemory():
		return fmt.Sprintf("%s ran out of its %s of address space (%s)", what, size(e.Limits.AddressSpace), e.Fatal)
	}
	return fmt.Sprintf("%s exited with status %d: %s (%s)", what, e.Status, e.Fatal, limits)
}

// PastCPU says whether the child took its whole CPU limit: the kernel's
// accounting is by the tick, and what the parent reads of a killed
// child's threads lagged by 102 ms on a loaded 2-core machine, so a
// quarter of a second short counts.
func (e *CrashError) PastCPU() bool { return e.CPU+time.Second/4 >= e.Limits.CPU }

// OutOfMemory says whether the Go runtime said that the child ran out of
// memory: an allocation past its address space.
func (e *CrashError) OutOfMemory() bool { return strings.Contains(e.Fatal, "out of memory") }

// crash is the CrashError of a child that exited as ps says, with stderr.
func crash(job Job, lim Limits, ps *os.ProcessState, wall bool, stderr []byte) *CrashError {
	e := &CrashError{Job: job.Name, What: job.What, Limits: lim, Status: ps.ExitCode(), Wall: wall,
		CPU: ps.UserTime() + ps.SystemTime(), Fatal: fatalLine(stderr)}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
	}
	return e
}

// fatalLine is the line of a crashed Go program's stderr that says why.
func fatalLine(stderr []byte) string {
	lines := strings.Split(string(bytes.TrimSpace(stderr)), "\n")
	for _, prefix := range []string{"fatal error:", "panic:"} {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
	}
	if lines[0] == "" {
		return "no output"
	}
	return lines[0]
}

// size is n bytes in GiB, MiB or KiB, as a limit is set.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// Rejection is the output of a job that reads one side's files alone: it
// says whether they were beyond the reader's bounds.
type Rejection struct{ Rejected bool }

// Blame says whether err, what a confined comparison of base's files with
// head's returned, is head's doing: rejected (the child said head's files
// were beyond the reader's bounds), or a crash of the child that the job
// alone, reading head's files (headIn) by themselves, repeats or rejects.
// A crash is rare (a file made to cause it), so reading head's files twice
// costs nothing in practice. The error returned is the one to report.
func Blame(ctx context.Context, err error, rejected bool, alone Job, lim Limits, headIn any) (bool, error) {
	if rejected {
		return true, err
	}
	if !errors.As(err, new(*CrashError)) {
		return false, err
	}
	var out Rejection
	aerr := Run(ctx, alone, lim, headIn, &out)
	switch {
	case errors.As(aerr, new(*CrashError)):
		return true, fmt.Errorf("%v, and again on head's files alone", err)
	case out.Rejected:
		return true, aerr
	}
	return false, err
}
