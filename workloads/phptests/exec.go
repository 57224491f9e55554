package phptests

import (
	"context"
	"io"
	"maps"
	"os"
	"os/exec"

	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/proc"
)

// An Executor runs one run-tests invocation somewhere: on this host, or in a
// container. Exec returns two errors: runErr (a *proc.ExitError) when the
// command ran and exited non-zero, which for run-tests may still be a
// finished run with failing tests; execErr when it could not be run or was
// stopped (ctx ended), which is infrastructure.
type Executor interface {
	Exec(ctx context.Context, c Cmd) (runErr, execErr error)
	String() string
}

// Cmd is a run-tests invocation for an Executor.
type Cmd struct {
	Dir  string   // working directory: the private copy of the tests
	Args []string // the build's php and its arguments
	// Env are the suites' own variables; the executor adds its base
	// environment.
	Env    []string
	Output io.Writer
	// ReadOnly are the directories the command reads (the build, the
	// database's socket), Writable those it writes (the work dir). A
	// container binds exactly these, at the same path; a host ignores them.
	ReadOnly, Writable []string
}

// Host runs run-tests on this machine, in its own process group, with what
// childenv allows the tests of this process's environment (hostEnv). Cancelling the context, or the end of the run, kills the group
// (tests may leave servers behind).
type Host struct{}

var _ Executor = Host{}

func (Host) String() string { return "host" }

// Exec runs c.
func (Host) Exec(ctx context.Context, c Cmd) (runErr, execErr error) {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = hostEnv(os.Environ(), c.Env)
	cmd.Stdout, cmd.Stderr = c.Output, c.Output
	proc.KillGroupOnCancel(cmd)
	err := cmd.Run()
	if cmd.Process != nil {
		_ = proc.KillGroup(cmd.Process.Pid)
	}
	code, failed, execErr := proc.ExitStatus(ctx, c.Args[0], err)
	if failed {
		return &proc.ExitError{Args: c.Args, Code: code}, nil
	}
	return nil, execErr
}

// hostEnv is a host run's environment: what childenv allows the tests of
// the parent's (a test is the PR's code: none of the CI's tokens, and
// nothing that would steer run-tests or the tests elsewhere, which the
// allow list does not name), then the suites' variables.
func hostEnv(parent, suite []string) []string {
	return append(childenv.Clean(childenv.Tests, parent), suite...)
}

// Container runs run-tests in a new container of the build image for each
// invocation, removed on every exit path (cancelling the context stops and
// removes it). The container sees only Cmd's directories (the build and the
// socket's read-only, the work dir read-write), reaches only Network (the
// database's, internal: no route out), has no capabilities, a read-only
// root with a private /tmp, memory and pids limits, and no environment but
// PATH, HOME and the suites' variables: nothing of patchproof's own (no
// token, nothing of the CI's).
type Container struct {
	Client *client.Client
	Image  string // the build image: the build's php runs where it was built
	// Network is the database container's network namespace,
	// "container:ID": the suites reach the server at 127.0.0.1 as they do
	// on a host, which some of PHP's tests require (they are skipped
	// unless the server is 127.0.0.1 or localhost, or see where the client
	// connects from), and have its network, no other. A network's name
	// works too; "" is no network.
	Network string
	User    string // uid:gid; "" for the image's default
	// Labels are added to the container's patchproof=tests (an owner).
	Labels map[string]string
	Memory int64 // bytes; default 2 GiB
	Pids   int64 // default 1024
}

var _ Executor = (*Container)(nil)

// Container defaults.
const (
	defaultMemory = 2 << 30
	defaultPids   = 1024
)

func (c *Container) String() string { return "docker" }

// Spec is the container c runs cmd in.
func (c *Container) Spec(cmd Cmd) docker.Spec {
	spec := docker.Spec{
		Image:    c.Image,
		Cmd:      cmd.Args,
		Env:      append(docker.BaseEnv(), cmd.Env...),
		Dir:      cmd.Dir,
		User:     c.User,
		Network:  c.Network,
		Labels:   map[string]string{docker.LabelRole: "tests"},
		Memory:   c.Memory,
		Pids:     c.Pids,
		Confined: true,
	}
	maps.Copy(spec.Labels, c.Labels)
	if spec.Memory == 0 {
		spec.Memory = defaultMemory
	}
	if spec.Pids == 0 {
		spec.Pids = defaultPids
	}
	for _, p := range cmd.ReadOnly {
		spec.Binds = append(spec.Binds, docker.Bind{Path: p, ReadOnly: true})
	}
	for _, p := range cmd.Writable {
		spec.Binds = append(spec.Binds, docker.Bind{Path: p})
	}
	return spec
}

// Exec runs cmd in a new container.
func (c *Container) Exec(ctx context.Context, cmd Cmd) (runErr, execErr error) {
	code, err := docker.Run(ctx, c.Client, c.Spec(cmd), cmd.Output)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return &proc.ExitError{Args: cmd.Args, Code: code}, nil
	}
	return nil, nil
}
