package builders

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
)

// Cmd is a command for an Executor.
type Cmd struct {
	Dir    string   // working directory (a path both sides see)
	Args   []string // program and arguments
	Env    []string // added to the executor's base environment
	Output io.Writer
	// Mounts are the host directories the command needs besides Dir (the
	// shared ccache): a container binds each at the same path, read-only
	// where it says so; on the host they are there as they are.
	Mounts []Mount
}

// Mount is a host directory a Cmd needs.
type Mount struct {
	Path     string
	ReadOnly bool
}

// An Executor runs build commands somewhere: on this host, or in a
// container. Exec returns two errors, as x/build's buildlet does: runErr is
// non-nil when the command ran and failed (exit status), execErr when it
// could not be run at all (no such program, the Docker engine is gone). A
// build that fails is a finding; an executor that fails is infrastructure.
type Executor interface {
	Exec(ctx context.Context, c Cmd) (runErr, execErr error)
	// ID names the executor and its environment for the build cache key:
	// the compiler's version on a host, the image ID in Docker.
	ID(ctx context.Context) (string, error)
	String() string
}

// ExecutorKind names where builds run: on this host, or in Docker
// containers, where under --builder docker the suites and servers that run
// a build's code run too. results.json spells it "host" or "docker".
type ExecutorKind string

const (
	KindHost   ExecutorKind = "host"
	KindDocker ExecutorKind = "docker"
)

// ParseExecutorKind reads an executor's name: host or docker.
func ParseExecutorKind(s string) (ExecutorKind, error) {
	switch k := ExecutorKind(s); k {
	case KindHost, KindDocker:
		return k, nil
	}
	return "", fmt.Errorf("unknown builder %q (host, docker)", s)
}

// Host runs commands on this machine, each in its own process group:
// cancelling the context kills the whole tree (make, its compilers, ...).
// What it runs is the code under test: its environment is childenv's,
// never one with the CI's tokens.
type Host struct {
	Env []string // base environment, cleaned by childenv for a build; nil means the process's own
}

var _ Executor = (*Host)(nil)

func (h *Host) String() string { return string(KindHost) }

// Exec runs c.
func (h *Host) Exec(ctx context.Context, c Cmd) (runErr, execErr error) {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	base := h.Env
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(childenv.Clean(childenv.Build, base), c.Env...)
	cmd.Stdout, cmd.Stderr = c.Output, c.Output
	proc.KillGroupOnCancel(cmd)
	err := cmd.Run()
	code, failed, execErr := proc.ExitStatus(ctx, c.Args[0], err)
	if failed {
		return &proc.ExitError{Args: c.Args, Code: code}, nil
	}
	return nil, execErr
}

// ID is the host's compiler.
func (h *Host) ID(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "gcc", "--version")
	cmd.Env = childenv.For(childenv.Tool)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("gcc --version: %w", err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return "host/" + line, nil
}
