package httpd

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/workloads/cputime"
	"github.com/patchproof/patchproof/workloads/service"
)

// A Placement is where a server runs: on this host (Host, the default) or
// in a container (*Container). A caller asks it what differs between the
// two, never which it is.
type Placement interface {
	// WithBinds is the placement with more of this host's paths the
	// server reads or writes: the database's socket, a preloaded library,
	// the directory a sanitizer's reports go to. A server on this host
	// reaches them already.
	WithBinds(binds ...docker.Bind) Placement
	// WithPort is the placement of a server that runs beside others in
	// one network namespace, with a port of its own. A server on this
	// host picks a free port itself.
	WithPort(port int) Placement
	// ASLROff says why servers here cannot run with address space
	// randomisation off (setarch -R in Options.Wrap); nil where they can.
	ASLROff() error
	// CPUSource is where each server's CPU time comes from when the
	// placement measures it itself (Server.Meter): a container's cgroup.
	// "" where the caller measures it: a cgroup it makes, or /proc.
	CPUSource() cputime.Source
	// LookPath says whether a program that Options.Wrap runs (valgrind)
	// is where the server runs.
	LookPath(program string) error

	kind() Kind
	// listen is Apache's Listen for port.
	listen(port int) string
	// start starts the server s, whose files are written, and waits until
	// it is ready.
	start(ctx context.Context, s *Server) error
}

var (
	_ Placement = Host{}
	_ Placement = (*Container)(nil)
)

// Host runs the server on this host: Debian's apache2 (Options.Apache),
// listening on a free loopback port, in a process group of its own.
type Host struct{}

func (h Host) WithBinds(...docker.Bind) Placement { return h }
func (h Host) WithPort(int) Placement             { return h }
func (Host) ASLROff() error                       { return nil }
func (Host) CPUSource() cputime.Source            { return "" }

func (Host) LookPath(program string) error {
	_, err := exec.LookPath(program)
	return err
}

func (Host) kind() Kind                                 { return KindApache }
func (Host) listen(port int) string                     { return fmt.Sprintf("127.0.0.1:%d", port) }
func (Host) start(ctx context.Context, s *Server) error { return s.startHost(ctx) }

// process is the server's first process, wherever it runs.
type process interface {
	Exited() <-chan struct{}
	// diedBySelf says how it had ended before it was asked to stop, or
	// nil.
	diedBySelf() error
	// stop stops it (SIGTERM, SIGKILL after the stop timeout) and frees
	// what it holds.
	stop() error
	// meter measures the server's CPU time where it has its own; nil
	// where the caller measures it.
	meter() cputime.Meter
	// hostPID is this host's PID of the server's process pid, as that
	// process knows itself; first is the first process's host PID.
	hostPID(first, pid int) (int, error)
}

// hostProcess is Apache's parent on this host.
type hostProcess struct{ *service.Process }

func (p hostProcess) diedBySelf() error             { return p.DiedBySelf() }
func (p hostProcess) stop() error                   { return p.Stop() }
func (hostProcess) meter() cputime.Meter            { return nil }
func (hostProcess) hostPID(_, pid int) (int, error) { return pid, nil }
