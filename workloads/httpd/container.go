package httpd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/workloads/cputime"
)

// Container runs the server in a container of an image that has Debian's
// apache2 (and valgrind, for a Wrap), instead of on this host: the
// module under test is then never loaded by a process of this host. The
// container binds the run dir read-write, the module's directory and Binds
// as given, all at their host paths, so the configuration reads the same
// on both sides. It is on Network: "container:ID" to share the database
// container's network namespace (PHP then reaches the database at
// 127.0.0.1 as on a host, with a host's accounts, and this host reaches
// Apache at that container's address), or a network's name (the run's
// internal network, no route out); it has no
// capabilities but those Apache needs to switch to its user, a read-only
// root, memory and pids limits, and an environment of PATH, HOME and
// Options.Environ alone.
type Container struct {
	Client  *client.Client
	Image   string
	Network string
	// Binds are what else the server reads or writes: the database's
	// socket, a preloaded library, a directory its reports go to.
	Binds  []docker.Bind
	Labels map[string]string // added to patchproof=server (an owner)
	Memory int64             // bytes; default 4 GiB
	Pids   int64             // default 4096
	// Port is Apache's port; default 8080. Servers that share one network
	// namespace at the same time need a port each.
	Port int
}

// Container defaults. Apache's port is in the container's network
// namespace, which only the database and other servers share.
const (
	containerPort   = 8080
	containerMemory = 4 << 30
	containerPids   = 4096
	containerApache = "/usr/sbin/apache2"
)

func (c *Container) WithBinds(binds ...docker.Bind) Placement {
	d := *c
	d.Binds = append(slices.Clone(c.Binds), binds...)
	return &d
}

func (c *Container) WithPort(port int) Placement {
	d := *c
	d.Port = port
	return &d
}

func (*Container) ASLROff() error {
	return errors.New("address space randomisation stays on in the container: the engine's seccomp profile refuses personality(ADDR_NO_RANDOMIZE)")
}

// CPUSource is the container's cgroup: the engine makes one a container.
func (*Container) CPUSource() cputime.Source { return cputime.SourceContainer }

// LookPath finds every program: the serve image has Apache and valgrind.
func (*Container) LookPath(string) error { return nil }

func (*Container) kind() Kind { return KindApacheDocker }

// listen is every address of the container's own network namespace: the
// load comes from outside it.
func (*Container) listen(port int) string { return fmt.Sprint(port) }

func (c *Container) start(ctx context.Context, s *Server) error { return s.startContainer(ctx, c) }

// spec is the container c the server runs in.
func (s *Server) spec(c *Container) docker.Spec {
	// CPUs become the container's cpuset, not a taskset inside it.
	args := append(append([]string{}, s.opt.Wrap...), containerApache, "-d", s.Dir, "-f", filepath.Join(s.Dir, confName), "-DFOREGROUND")
	if s.opt.SingleProcess {
		args = append(args, "-X")
	}
	spec := docker.Spec{
		Image:    c.Image,
		Cmd:      args,
		Env:      append(docker.BaseEnv(), s.opt.Environ...),
		Dir:      s.Dir,
		User:     docker.User(),
		Network:  c.Network,
		Labels:   map[string]string{docker.LabelRole: "server"},
		Memory:   c.Memory,
		Pids:     c.Pids,
		CPUs:     s.opt.CPUs,
		Confined: true,
		Binds:    append([]docker.Bind{{Path: s.Dir}, {Path: filepath.Dir(s.opt.Module), ReadOnly: true}}, c.Binds...),
	}
	if s.opcache != "" {
		spec.Binds = append(spec.Binds, docker.Bind{Path: filepath.Dir(s.opcache), ReadOnly: true})
	}
	if spec.User == "" {
		// Apache starts as root and switches to its user: it needs to set
		// its IDs, and to signal its child once it has.
		spec.Caps = []string{"SETUID", "SETGID", "KILL"}
	}
	maps.Copy(spec.Labels, c.Labels)
	if spec.Memory == 0 {
		spec.Memory = containerMemory
	}
	if spec.Pids == 0 {
		spec.Pids = containerPids
	}
	return spec
}

func (s *Server) startContainer(ctx context.Context, c *Container) error {
	if c.Client == nil || c.Image == "" || c.Network == "" {
		return errors.New("start apache in a container: no Docker client, image or network given")
	}
	s.Port = containerPort
	if c.Port > 0 {
		s.Port = c.Port
	}
	if err := s.writeConfig(); err != nil {
		return fmt.Errorf("start apache: %w", err)
	}
	out, err := safefs.AppendPath(filepath.Join(s.Dir, outName), 0o644)
	if err != nil {
		return fmt.Errorf("start apache: %w", err)
	}
	spec := s.spec(c)
	fmt.Fprintf(s.opt.Log, "apache: container of %s on network %s: %s\n", c.Image, c.Network, strings.Join(spec.Cmd, " "))
	svc, err := docker.StartService(ctx, c.Client, spec, out)
	if err != nil {
		out.Close()
		return fmt.Errorf("start apache: %w", err)
	}
	s.proc, s.ContainerID = containerProcess{svc, s.opt.StopTimeout}, svc.ID
	fail := func(err error) error {
		return errors.Join(err, s.Stop())
	}
	go func() {
		<-svc.Exited()
		svc.Stop(0) // the log stream ends with the container
		out.Close()
	}()
	if other, ok := strings.CutPrefix(c.Network, "container:"); ok {
		s.Host, err = docker.Address(ctx, c.Client, other)
	} else {
		s.Host, err = svc.IP(ctx, c.Network)
	}
	if err != nil {
		return fail(fmt.Errorf("start apache: %w", err))
	}
	if s.PID, err = svc.InitPID(ctx); err != nil {
		return fail(fmt.Errorf("start apache: %w", err))
	}
	if err := s.waitReady(ctx, svc.Exited(), svc.ExitErr, 0); err != nil {
		return fail(err)
	}
	// Cancelling ctx stops the server, as it does one on this host.
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-svc.Exited():
		}
	}()
	fmt.Fprintf(s.opt.Log, "apache: ready in container %.12s on %s:%d (%d threads)\n", svc.ID, s.Host, s.Port, s.opt.Threads)
	return nil
}

// containerProcess is the server's container.
type containerProcess struct {
	svc         *docker.Service
	stopTimeout time.Duration
}

func (c containerProcess) Exited() <-chan struct{} { return c.svc.Exited() }

func (c containerProcess) diedBySelf() error {
	if c.svc.HasExited() {
		return fmt.Errorf("its container had exited by itself (%v)", c.svc.ExitErr())
	}
	return nil
}

// stop stops Apache and removes the container.
func (c containerProcess) stop() error          { return c.svc.Stop(c.stopTimeout) }
func (c containerProcess) meter() cputime.Meter { return containerMeter{c.svc} }

func (containerProcess) hostPID(first, pid int) (int, error) { return proc.HostPID(first, pid) }

// containerMeter reads the CPU time of the server's container.
type containerMeter struct{ svc *docker.Service }

func (m containerMeter) Usage() (cputime.Usage, error) {
	t, err := m.svc.CPUUsage()
	return cputime.Usage{Total: t.Total, User: t.User, System: t.System}, err
}
func (containerMeter) Source() cputime.Source { return cputime.SourceContainer }
