package docker

import (
	cerrdefs "github.com/containerd/errdefs"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchproof/patchproof/internal/childenv"
)

// BaseEnv is the environment every container starts from: a PATH and a
// HOME of its own, nothing of the host's (childenv.Container). Callers add
// their variables.
func BaseEnv() []string { return childenv.Container() }

// User is the uid:gid containers run as: this process's, so that what
// they write in bound directories is its own; "" (the image's root) for
// root.
func User() string {
	if os.Getuid() == 0 {
		return ""
	}
	return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
}

// Spec is a container: its command and everything it may see and use.
type Spec struct {
	Image string
	Cmd   []string
	// Env is the container's whole environment, besides what the image
	// sets: the caller names every variable.
	Env  []string
	Dir  string // working directory
	User string // uid:gid; "" for the image's default
	// Binds are host directories, bound at the same path inside.
	Binds []Bind
	// Network is the network the container joins, by name or ID, or
	// "container:ID" to share that container's network namespace (its
	// networks, and its loopback); "" for none at all. Aliases are its
	// names on a network.
	Network string
	Aliases []string
	Labels  map[string]string

	Memory int64 // bytes; 0 for no limit (and then no swap limit either)
	Pids   int64 // 0 for no limit
	// CPUs is the cpuset the container's processes may run on ("0-3,8");
	// "" for any.
	CPUs string
	// Confined drops every capability, forbids gaining privileges (setuid
	// files) and makes the root filesystem read-only with a private tmpfs on
	// /tmp: for containers that run code under test.
	Confined bool
	// Caps are the capabilities a Confined container keeps (CHOWN,
	// SETUID, ...): a server that starts as root and switches to another
	// user needs SETUID, SETGID and KILL, nothing else.
	Caps []string
}

// Bind is a host directory bound into a container at the same path.
type Bind struct {
	Path     string
	ReadOnly bool
}

func (s Spec) configs() (*container.Config, *container.HostConfig, *network.NetworkingConfig, error) {
	if s.Image == "" || len(s.Cmd) == 0 {
		return nil, nil, nil, errors.New("container spec: no image or no command")
	}
	var binds []string
	for _, b := range s.Binds {
		if !filepath.IsAbs(b.Path) || strings.Contains(b.Path, ":") {
			return nil, nil, nil, fmt.Errorf("container spec: bind %q: want an absolute path without ':'", b.Path)
		}
		opt := ":rw"
		if b.ReadOnly {
			opt = ":ro"
		}
		binds = append(binds, b.Path+":"+b.Path+opt)
	}
	cfg := &container.Config{Image: s.Image, Cmd: s.Cmd, Env: s.Env, WorkingDir: s.Dir, User: s.User, Labels: s.Labels}
	host := &container.HostConfig{Binds: binds, NetworkMode: "none"}
	host.Memory = s.Memory
	if s.Memory > 0 {
		host.MemorySwap = s.Memory // no swap beyond the limit
	}
	host.CpusetCpus = s.CPUs
	if s.Pids > 0 {
		pids := s.Pids
		host.PidsLimit = &pids
	}
	if s.Confined {
		host.CapDrop = []string{"ALL"}
		host.CapAdd = s.Caps
		host.SecurityOpt = []string{"no-new-privileges"}
		host.ReadonlyRootfs = true
		host.Tmpfs = map[string]string{"/tmp": "rw,nosuid,nodev,size=256m"}
	}
	var net *network.NetworkingConfig
	switch {
	case strings.HasPrefix(s.Network, "container:"):
		// The other container's resolver settings, and no names of its own.
		if len(s.Aliases) > 0 {
			return nil, nil, nil, errors.New("container spec: aliases in another container's network namespace")
		}
		host.NetworkMode = container.NetworkMode(s.Network)
	case s.Network != "":
		host.NetworkMode = container.NetworkMode(s.Network)
		// The network is internal: the engine's DNS answers its aliases,
		// and forwards any other name to servers it cannot reach from
		// there. The resolver gives up on those after a second, not ten
		// (PHP's tests look up names that do not exist).
		host.DNSOptions = []string{"timeout:1", "attempts:1"}
		net = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			s.Network: {Aliases: s.Aliases},
		}}
	}
	return cfg, host, net, nil
}

// Create creates the container of s, not started.
func Create(ctx context.Context, c *client.Client, s Spec) (string, error) {
	cfg, host, net, err := s.configs()
	if err != nil {
		return "", err
	}
	created, err := c.ContainerCreate(ctx, cfg, host, net, nil, "")
	if err != nil {
		return "", fmt.Errorf("create container for %s: %w", s.Cmd[0], err)
	}
	return created.ID, nil
}

// removeTimeout bounds a removal, which runs on a fresh context: a
// container goes also when the caller's context was cancelled.
const removeTimeout = 30 * time.Second

// Remove stops the container id (SIGTERM, then SIGKILL after grace; 0 kills
// at once) and removes it with its anonymous volumes. It works on a fresh
// context, so it also removes after a cancellation.
func Remove(ctx context.Context, c *client.Client, id string, grace time.Duration) error {
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace+removeTimeout)
	defer cancel()
	if grace > 0 {
		secs := int((grace + time.Second - 1) / time.Second)
		// An error here (it had stopped already) is no reason not to remove.
		_ = c.ContainerStop(rmCtx, id, container.StopOptions{Timeout: &secs})
	}
	if err := c.ContainerRemove(rmCtx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s: %w", short(id), err)
	}
	return nil
}

// Run runs s in a new container to its end, streams its output to out and
// returns its exit status. The container is removed on every path, also
// when ctx is cancelled (which ends the command: Run then returns ctx's
// error). An error means the command could not be run or waited for; a
// non-zero status is not an error.
func Run(ctx context.Context, c *client.Client, s Spec, out io.Writer) (code int, err error) {
	if out == nil {
		out = io.Discard
	}
	id, err := Create(ctx, c, s)
	if err != nil {
		return 0, err
	}
	defer func() {
		if rmErr := Remove(ctx, c, id, 0); rmErr != nil && err == nil && code == 0 {
			err = rmErr
		}
	}()
	if err := c.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return 0, fmt.Errorf("start container for %s: %w", s.Cmd[0], err)
	}
	logs, err := c.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return 0, fmt.Errorf("container logs: %w", err)
	}
	defer logs.Close()
	copied := make(chan struct{})
	go func() {
		stdcopy.StdCopy(out, out, logs)
		close(copied)
	}()
	// Not-running, asked after the start: a command that ended already is
	// answered at once.
	waitC, errC := c.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	select {
	case w := <-waitC:
		if w.Error != nil {
			return 0, fmt.Errorf("wait for container: %s", w.Error.Message)
		}
		<-copied
		return int(w.StatusCode), nil
	case err := <-errC:
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("wait for container: %w", err)
	}
}

// LogTail is the last n lines of the container's output, for an error
// message; what went wrong reading it, when it cannot be read.
func LogTail(ctx context.Context, c *client.Client, id string, n int) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	rc, err := c.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: fmt.Sprint(n)})
	if err != nil {
		return fmt.Sprintf("(no container log: %v)", err)
	}
	defer rc.Close()
	var b bytes.Buffer
	stdcopy.StdCopy(&b, &b, rc)
	if s := strings.TrimSpace(b.String()); s != "" {
		return s
	}
	return "(the container wrote nothing)"
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// copyLogs demultiplexes a container's log stream into w.
func copyLogs(w io.Writer, r io.Reader) { stdcopy.StdCopy(w, w, r) }
