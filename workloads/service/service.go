// Package service runs a server the run starts: a long-running process in
// its own process group, watched from the moment it starts and stopped on
// every exit path — by Stop, when the run's context is cancelled, and by the
// kernel (Pdeathsig) when patchproof itself dies first.
//
// One-shot commands want internal/proc.KillGroupOnCancel instead: they are
// waited for, not stopped.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
)

// ErrKilled is wrapped by Stop's error when the process outlived
// StopTimeout after SIGTERM and its group had to be killed.
var ErrKilled = errors.New("killed")

// Options says what to run and how to stop it. The zero value of every
// field but Path works.
type Options struct {
	// Name is the server's name in log lines and errors ("apache").
	Name string

	Path string   // the program, resolved as exec.Command does
	Args []string // its arguments, without the program name
	Dir  string   // working directory; "" is patchproof's
	// Kind is which child the server is, which decides what it gets of
	// patchproof's environment (childenv.For); Env is added to that.
	Kind childenv.Kind
	Env  []string

	Stdout, Stderr io.Writer // nil discards

	// StopTimeout is how long Stop waits after SIGTERM before it kills the
	// process group; default 10s. It also bounds the wait for the rest of
	// the group to go.
	StopTimeout time.Duration

	// TermGroup sends SIGTERM to the whole process group rather than only
	// to the first process, for servers whose children do not hear about
	// it from their parent.
	TermGroup bool

	// DeathSignal is what the process gets when patchproof dies without
	// stopping it; default SIGKILL. A server that must shut down cleanly
	// to be reusable (a datadir) wants SIGTERM.
	DeathSignal syscall.Signal

	// CgroupFD, when positive, starts the process in that cgroup.
	CgroupFD int

	Log io.Writer // progress lines; nil discards
}

// defaultStopTimeout is Options.StopTimeout's default.
const defaultStopTimeout = 10 * time.Second

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = o.Path
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = defaultStopTimeout
	}
	if o.DeathSignal == 0 {
		o.DeathSignal = syscall.SIGKILL
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Process is a started server. Its first process leads its process group.
type Process struct {
	opt Options
	pid int

	exited  chan struct{} // closed when Wait returns
	waitErr error         // Wait's answer; read after exited is closed

	stopping  chan struct{} // closed by Stop: ends the context watcher
	requested atomic.Bool   // Stop was called: an exit is not a crash
	once      sync.Once
	stopErr   error
}

// Start starts the server in a new process group and returns at once; it
// does not wait for the server to be ready. Cancelling ctx stops the
// server as Stop does. Once Start has returned a Process the caller must
// Stop it on every path. An error is exec's, which names the program; the
// caller says which server it was starting.
func Start(ctx context.Context, opt Options) (*Process, error) {
	opt = opt.withDefaults()
	cmd := exec.Command(opt.Path, opt.Args...)
	cmd.Dir = opt.Dir
	cmd.Env = append(childenv.For(opt.Kind), opt.Env...)
	cmd.Stdout = opt.Stdout
	cmd.Stderr = opt.Stderr
	// Pdeathsig: if patchproof dies without running Stop, the server still
	// goes away instead of holding its port, datadir or CPUs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: opt.DeathSignal}
	if opt.CgroupFD > 0 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = opt.CgroupFD
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{
		opt:      opt,
		pid:      cmd.Process.Pid,
		exited:   make(chan struct{}),
		stopping: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go func() {
		select {
		case <-ctx.Done():
			fmt.Fprintf(opt.Log, "%s: %v: stopping pid %d\n", opt.Name, ctx.Err(), p.pid)
			p.Stop()
		case <-p.stopping:
		case <-p.exited:
		}
	}()
	return p, nil
}

// Pid is the server's first process, which is also its process group.
func (p *Process) Pid() int { return p.pid }

// Exited is closed when the server's first process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// HasExited reports whether the server's first process has exited.
func (p *Process) HasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// WaitErr is how the first process exited, as exec.Cmd.Wait says; nil
// until Exited is closed.
func (p *Process) WaitErr() error {
	if !p.HasExited() {
		return nil
	}
	return p.waitErr
}

// DiedBySelf is nil unless the first process ended before Stop asked it
// to: then it says how it ended.
func (p *Process) DiedBySelf() error {
	if p.HasExited() && !p.StopRequested() {
		return fmt.Errorf("it had exited by itself (%v)", p.WaitErr())
	}
	return nil
}

// Stopper is every server's Stop, on this host or in a container: the
// first call stops the server, and every call, from any goroutine,
// returns the first one's answer: that the server had died by itself
// before it was asked to stop, joined with what went wrong stopping it.
// The zero value is ready.
type Stopper struct {
	once sync.Once
	err  error
}

// Stop stops a server once. died, asked first, says how the server had
// ended by itself, or nil; stop stops it and frees what it holds.
func (s *Stopper) Stop(died, stop func() error) error {
	s.once.Do(func() {
		d := died()
		s.err = errors.Join(d, stop())
	})
	return s.err
}

// StopRequested reports whether Stop was called (directly or by cancelling
// the context): an exit after it is not a crash.
func (p *Process) StopRequested() bool { return p.requested.Load() }

// Stop sends SIGTERM (to the first process, or to the group with
// TermGroup), waits up to StopTimeout for the first process to exit, then
// kills the whole group and waits until it is gone, so that a port, a lock
// or a cgroup is free when Stop returns. The group is killed even after a
// clean exit, so that nothing the server left behind (a wrapper's helper, a
// child that missed the signal) survives it. Stop is safe to call more than
// once and from several goroutines; every call returns the first one's
// answer. The only error wraps ErrKilled.
func (p *Process) Stop() error {
	p.requested.Store(true)
	p.once.Do(func() {
		close(p.stopping)
		if p.HasExited() {
			p.killGroup()
			return
		}
		start := time.Now()
		term := p.pid
		if p.opt.TermGroup {
			term = -p.pid
		}
		_ = syscall.Kill(term, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(p.opt.StopTimeout):
			fmt.Fprintf(p.opt.Log, "%s: pid %d still running %v after SIGTERM: killing its process group\n", p.opt.Name, p.pid, p.opt.StopTimeout)
			p.stopErr = fmt.Errorf("stop %s: pid %d did not stop within %v of SIGTERM: %w", p.opt.Name, p.pid, p.opt.StopTimeout, ErrKilled)
		}
		p.killGroup()
		fmt.Fprintf(p.opt.Log, "%s stopped in %v\n", p.opt.Name, time.Since(start).Round(time.Millisecond))
	})
	return p.stopErr
}

// killGroup kills what is left of the group and waits, at most
// StopTimeout, until none of it is left.
func (p *Process) killGroup() {
	_ = proc.KillGroup(p.pid)
	<-p.exited
	deadline := time.Now().Add(p.opt.StopTimeout)
	for time.Now().Before(deadline) {
		if syscall.Kill(-p.pid, 0) != nil {
			return
		}
		_ = proc.KillGroup(p.pid)
		time.Sleep(20 * time.Millisecond)
	}
}
