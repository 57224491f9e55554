package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// A Service is a container started to run in the background (a server),
// its output streamed to a writer, until Stop removes it.
type Service struct {
	ID     string
	client *client.Client

	exited   chan struct{}
	exitCode int64
	exitErr  error

	endWatch context.CancelFunc
	logsDone chan struct{}

	stopOnce sync.Once
	stopErr  error
}

// StartService creates and starts the container of s and streams its output
// to out (nil for nowhere) until it ends. On an error nothing is left:
// the container is removed.
func StartService(ctx context.Context, c *client.Client, s Spec, out io.Writer) (*Service, error) {
	if out == nil {
		out = io.Discard
	}
	id, err := Create(ctx, c, s)
	if err != nil {
		return nil, err
	}
	svc := &Service{ID: id, client: c, exited: make(chan struct{}), logsDone: make(chan struct{})}
	if err := c.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return nil, errors.Join(fmt.Errorf("start container for %s: %w", s.Cmd[0], err), Remove(ctx, c, id, 0))
	}
	// The watch and the log stream live as long as the container, not as
	// the caller's context: Stop ends them.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	svc.endWatch = cancel
	waitC, errC := c.ContainerWait(wctx, id, container.WaitConditionNotRunning)
	go func() {
		defer close(svc.exited)
		select {
		case w := <-waitC:
			svc.exitCode = w.StatusCode
			if w.Error != nil {
				svc.exitErr = errors.New(w.Error.Message)
			}
		case err := <-errC:
			svc.exitCode, svc.exitErr = -1, err
		}
	}()
	logs, err := c.ContainerLogs(wctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		close(svc.logsDone)
		return nil, errors.Join(fmt.Errorf("container logs: %w", err), svc.Stop(0))
	}
	go func() {
		defer close(svc.logsDone)
		defer logs.Close()
		copyLogs(out, logs)
	}()
	return svc, nil
}

// Exited is closed when the container has stopped running.
func (s *Service) Exited() <-chan struct{} { return s.exited }

// HasExited reports whether the container has stopped running.
func (s *Service) HasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// ExitErr says how the container ended, once it has: nil for status 0.
func (s *Service) ExitErr() error {
	if !s.HasExited() {
		return nil
	}
	if s.exitErr != nil {
		return s.exitErr
	}
	if s.exitCode != 0 {
		return fmt.Errorf("exit status %d", s.exitCode)
	}
	return nil
}

// Stop stops the container (SIGTERM to its first process, SIGKILL after
// grace) and removes it; once its output has been copied, it returns. It
// works after a cancellation too, and every call returns the first one's
// answer.
func (s *Service) Stop(grace time.Duration) error {
	s.stopOnce.Do(func() {
		s.stopErr = Remove(context.Background(), s.client, s.ID, grace)
		select {
		case <-s.logsDone:
		case <-time.After(10 * time.Second):
		}
		s.endWatch()
	})
	return s.stopErr
}

// LogTail is the last n lines of the container's output, for an error
// message.
func (s *Service) LogTail(ctx context.Context, n int) string { return LogTail(ctx, s.client, s.ID, n) }

// IP is the container's address on network.
func (s *Service) IP(ctx context.Context, network string) (string, error) {
	info, err := s.client.ContainerInspect(ctx, s.ID)
	if err != nil {
		return "", fmt.Errorf("inspect container %s: %w", short(s.ID), err)
	}
	if info.NetworkSettings != nil {
		if ep, ok := info.NetworkSettings.Networks[network]; ok && ep != nil && ep.IPAddress != "" {
			return ep.IPAddress, nil
		}
	}
	return "", fmt.Errorf("container %s has no address on network %s", short(s.ID), network)
}

// Address is the address of container id on its first network (by name),
// for a container whose network namespace another shares: what this host
// reaches the sharer at.
func Address(ctx context.Context, c *client.Client, id string) (string, error) {
	info, err := c.ContainerInspect(ctx, id)
	if err != nil {
		return "", fmt.Errorf("inspect container %s: %w", short(id), err)
	}
	if info.NetworkSettings != nil {
		names := make([]string, 0, len(info.NetworkSettings.Networks))
		for n := range info.NetworkSettings.Networks {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if ep := info.NetworkSettings.Networks[n]; ep != nil && ep.IPAddress != "" {
				return ep.IPAddress, nil
			}
		}
	}
	return "", fmt.Errorf("container %s has no network address", short(id))
}

// InitPID is the host's PID of the container's first process.
func (s *Service) InitPID(ctx context.Context) (int, error) {
	info, err := s.client.ContainerInspect(ctx, s.ID)
	if err != nil {
		return 0, fmt.Errorf("inspect container %s: %w", short(s.ID), err)
	}
	if info.State == nil || info.State.Pid == 0 {
		return 0, fmt.Errorf("container %s is not running", short(s.ID))
	}
	return info.State.Pid, nil
}

// statsTimeout bounds one read of a container's CPU time.
const statsTimeout = 10 * time.Second

// CPUTime is a container's CPU time: in all, in user and in kernel mode.
type CPUTime struct {
	Total, User, System time.Duration
}

// CPUUsage is the CPU time every process of the container has used so far,
// those that exited included: its cgroup's count, as the engine reads it
// (cpuacct on cgroup v1, cpu.stat on v2).
func (s *Service) CPUUsage() (CPUTime, error) {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	st, err := s.client.ContainerStatsOneShot(ctx, s.ID)
	if err != nil {
		return CPUTime{}, fmt.Errorf("CPU time of container %s: %w", short(s.ID), err)
	}
	defer st.Body.Close()
	var v container.StatsResponse
	if err := json.NewDecoder(st.Body).Decode(&v); err != nil {
		return CPUTime{}, fmt.Errorf("CPU time of container %s: %w", short(s.ID), err)
	}
	u := v.CPUStats.CPUUsage
	if u.TotalUsage == 0 {
		return CPUTime{}, fmt.Errorf("CPU time of container %s: the engine reports none (is it running?)", short(s.ID))
	}
	return CPUTime{time.Duration(u.TotalUsage), time.Duration(u.UsageInUsermode), time.Duration(u.UsageInKernelmode)}, nil
}
