package httpd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/workloads/cputime"
	"github.com/patchproof/patchproof/workloads/service"
)

// Server is a running PHP server.
type Server struct {
	Kind Kind
	// Host and Port are where the server listens: 127.0.0.1 on this host,
	// the container's address on its network for a server in a container.
	Host string
	Port int
	// PID is the server's first process (Apache's parent), by this host's
	// PID; on this host also its process group.
	PID int
	Dir string // the run dir
	// ContainerID is the server's container, for a server in one.
	ContainerID string

	DocRoot   string
	ErrorLog  string // Apache's error log; PHP's errors go there too
	AccessLog string // empty unless Options.AccessLog

	opt Options
	// opcache is the build's OPcache extension the server loads, "" for
	// none.
	opcache string
	// logStart is the error log's size when Start began: Apache appends
	// to it, and a directory used again holds an earlier server's lines.
	logStart int64
	proc     process
	stopper  service.Stopper
}

// URL returns the server's URL for path ("/index.php").
func (s *Server) URL(path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return fmt.Sprintf("http://%s%s", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), path)
}

// Exited is closed when the server's first process has exited.
func (s *Server) Exited() <-chan struct{} { return s.proc.Exited() }

// Meter is what measures the server's CPU time when it has its own: the
// cgroup of its container. For a server on this host it is nil, and the
// caller's cgroup or process group measures it.
func (s *Server) Meter() cputime.Meter {
	if s == nil || s.proc == nil {
		return nil
	}
	return s.proc.meter()
}

// HostPID is this host's PID of the server's process pid, as the process
// itself knows it (getpid() in a container differs): for a server on this
// host, pid.
func (s *Server) HostPID(pid int) (int, error) {
	return s.proc.hostPID(s.PID, pid)
}

// Start writes the server's files into opt.Dir, starts it and waits until
// opt.Probe answers as expected. Cancelling ctx stops the server at any
// time; once Start has returned a Server the caller must Stop it.
func Start(ctx context.Context, opt Options) (*Server, error) {
	opt = opt.withDefaults()
	if err := opt.Kind.Available(); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	if opt.Kind == KindApacheDocker && opt.Placement.kind() != KindApacheDocker {
		return nil, errors.New("start apache in a container: no container given")
	}
	if opt.Dir == "" {
		return nil, errors.New("start apache: no run dir given")
	}
	if opt.Module == "" {
		return nil, errors.New("start apache: no PHP module given")
	}
	if opt.Threads < 1 {
		return nil, fmt.Errorf("start apache: %d threads", opt.Threads)
	}
	dir, err := filepath.Abs(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("start apache: %w", err)
	}
	module, err := filepath.Abs(opt.Module)
	if err != nil {
		return nil, fmt.Errorf("start apache: %w", err)
	}
	if _, err := os.Stat(module); err != nil {
		return nil, fmt.Errorf("start apache: PHP module: %w", err)
	}
	opt.Module = module
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start apache: %w", err)
	}
	s := &Server{
		Kind:     opt.Placement.kind(),
		Host:     "127.0.0.1",
		Dir:      dir,
		DocRoot:  filepath.Join(dir, docRootName),
		ErrorLog: filepath.Join(dir, errorLogName),
		opt:      opt,
	}
	if opt.AccessLog {
		s.AccessLog = filepath.Join(dir, accessLogName)
	}
	if !opt.NoOPcache {
		s.opcache = OPcacheModule(module)
	}
	s.logStart = logSize(s.ErrorLog)
	if err := s.writeFiles(); err != nil {
		return nil, fmt.Errorf("start apache: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := Reachable(s.DocRoot, opt.User); err != nil {
			return nil, fmt.Errorf("start apache: %w", err)
		}
	}
	if err := opt.Placement.start(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// startHost starts Apache on this host, on a free port: another taken
// before Apache bound it is retried.
func (s *Server) startHost(ctx context.Context) error {
	opt := s.opt
	apache, err := lookApache(opt.Apache)
	if err != nil {
		return fmt.Errorf("start apache: %w", err)
	}

	for attempt := 1; ; attempt++ {
		if s.Port, err = proc.FreePort(); err != nil {
			return fmt.Errorf("start apache: %w", err)
		}
		if err := s.writeConfig(); err != nil {
			return fmt.Errorf("start apache: %w", err)
		}
		logStart := logSize(s.ErrorLog)
		p, err := s.launch(ctx, apache)
		if err != nil {
			return err
		}
		err = s.waitReady(ctx, p.Exited(), p.WaitErr, logStart)
		if err == nil {
			s.proc, s.PID = hostProcess{p}, p.Pid()
			fmt.Fprintf(opt.Log, "apache: ready on 127.0.0.1:%d (pid %d, %d threads)\n", s.Port, p.Pid(), opt.Threads)
			return nil
		}
		died := p.HasExited()
		stopErr := p.Stop()
		if died {
			stopErr = nil // err already says so
		}
		if died && attempt < portAttempts && proc.PortTaken(s.Port) && ctx.Err() == nil {
			fmt.Fprintf(opt.Log, "apache: port %d taken by another process, retrying\n", s.Port)
			continue
		}
		return errors.Join(err, stopErr)
	}
}

// args is the server's command line: taskset, the wrapper, apache2.
func (s *Server) args(apache string) []string {
	var args []string
	if s.opt.CPUs != "" {
		args = append(args, "taskset", "-c", s.opt.CPUs)
	}
	args = append(args, s.opt.Wrap...)
	args = append(args, apache, "-d", s.Dir, "-f", filepath.Join(s.Dir, confName), "-DFOREGROUND")
	if s.opt.SingleProcess {
		args = append(args, "-X")
	}
	return args
}

// serviceOptions start Apache as args says, its output to out. Debian's
// apache2 reads nothing it needs from its environment when given its own
// configuration: it gets what childenv allows a web server (PATH and the
// like; none of the CI's tokens or patchproof's settings, as it runs the
// PR's module), then the hooks (LD_PRELOAD, ...).
// No TermGroup: SIGTERM goes to Apache's parent, which stops its child in
// order; the group is killed only if that takes too long.
func (s *Server) serviceOptions(args []string, out io.Writer) service.Options {
	return service.Options{
		Name:        "apache",
		Path:        args[0],
		Args:        args[1:],
		Dir:         s.Dir,
		Kind:        childenv.WebServer,
		Env:         s.opt.Environ,
		Stdout:      out,
		Stderr:      out,
		StopTimeout: s.opt.StopTimeout,
		CgroupFD:    s.opt.CgroupFD,
		Log:         s.opt.Log,
	}
}

func (s *Server) launch(ctx context.Context, apache string) (*service.Process, error) {
	out, err := safefs.AppendPath(filepath.Join(s.Dir, outName), 0o644)
	if err != nil {
		return nil, fmt.Errorf("start apache: %w", err)
	}
	defer out.Close()
	args := s.args(apache)
	fmt.Fprintf(s.opt.Log, "apache: %s\n", strings.Join(args, " "))
	p, err := service.Start(ctx, s.serviceOptions(args, out))
	if err != nil {
		return nil, fmt.Errorf("start apache: %s: %w", args[0], err)
	}
	return p, nil
}

// waitReady polls the probe until it answers as expected; it fails at once
// when the server exits, with the new part of the error log.
func (s *Server) waitReady(ctx context.Context, exited <-chan struct{}, waitErr func() error, logStart int64) error {
	deadline := time.Now().Add(s.opt.StartTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := probeClient(10 * time.Second)
	var last error
	for {
		select {
		case <-exited:
			return fmt.Errorf("start apache: exited during start-up (%v): %s", waitErr(), s.logSince(logStart))
		case <-ctx.Done():
			return fmt.Errorf("start apache: %w", ctx.Err())
		case <-tick.C:
		}
		last = s.probe(ctx, client)
		if last == nil {
			return nil
		}
		var pe *probeError
		if errors.As(last, &pe) {
			// The server answered, wrongly: PHP or the database is broken,
			// and waiting will not mend it.
			return fmt.Errorf("start apache: %w; %s", last, s.logSince(logStart))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("start apache: not ready within %v: %v; %s", s.opt.StartTimeout, last, s.logSince(logStart))
		}
	}
}

// Answers sends the readiness probe once, on a connection of its own, and
// says whether the server answered it as expected within timeout; an error
// carries the end of its error log.
func (s *Server) Answers(ctx context.Context, timeout time.Duration) error {
	if err := s.probe(ctx, probeClient(timeout)); err != nil {
		return fmt.Errorf("apache on port %d: %w; %s", s.Port, err, s.logSince(s.logStart))
	}
	return nil
}

// probeClient sends each probe on a connection of its own: a server that
// cannot take a new one is not ready.
func probeClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
}

// A probeError is a response that came but was not the expected one.
type probeError struct{ err error }

func (e *probeError) Error() string { return "readiness probe: " + e.err.Error() }
func (e *probeError) Unwrap() error { return e.err }

func (s *Server) probe(ctx context.Context, client *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL(s.opt.Probe.Path), nil)
	if err != nil {
		return err
	}
	for k, vs := range s.opt.Probe.Header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return err // not listening yet
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	check := s.opt.Probe.Check
	if check == nil {
		check = func(status int, body []byte) error {
			if status != http.StatusOK {
				return fmt.Errorf("status %d: %.200s", status, body)
			}
			return nil
		}
	}
	if err := check(resp.StatusCode, body); err != nil {
		return &probeError{fmt.Errorf("GET %s: %w", s.opt.Probe.Path, err)}
	}
	return nil
}

// Stop stops the server: SIGTERM to Apache's parent, which stops its child
// and exits, then SIGKILL to the whole process group after StopTimeout.
// It returns once the group is gone. It is safe to call more than once and
// on a nil Server; every call returns the first one's answer. An error
// means the server had died by itself or had to be killed.
func (s *Server) Stop() error {
	if s == nil {
		return nil
	}
	return s.stopper.Stop(s.died, s.stop)
}

// died says how the server had ended by itself, with what it logged, or
// nil.
func (s *Server) died() error {
	if err := s.proc.diedBySelf(); err != nil {
		return fmt.Errorf("stop apache: %w: %s", err, s.logSince(s.logStart))
	}
	return nil
}

// stop stops Apache wherever it runs (SIGTERM to its parent, SIGKILL after
// StopTimeout) and, in a container, removes the container.
func (s *Server) stop() error { return s.proc.stop() }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func logSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

func lookApache(given string) (string, error) {
	if given != "" {
		return exec.LookPath(given)
	}
	if _, err := os.Stat(defaultApache); err == nil {
		return defaultApache, nil
	}
	p, err := exec.LookPath("apache2")
	if err != nil {
		return "", errors.New("apache2 not found (apt-get install apache2)")
	}
	return p, nil
}

// Reachable fails when user cannot reach dir: each directory from the
// root down must let it search (x), for the user, its group or everyone.
// A server started as root serves its docroot, and writes what its
// wrappers collect, as User.
func Reachable(dir, userName string) error {
	u, err := user.Lookup(userName)
	if err != nil {
		return fmt.Errorf("server user %s: %w", userName, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		ok := mode&0o001 != 0 ||
			(int(st.Uid) == uid && mode&0o100 != 0) ||
			(int(st.Gid) == gid && mode&0o010 != 0)
		if !ok {
			return fmt.Errorf("the server runs as %s, who cannot enter %s (mode %#o): make it and its parents searchable (chmod o+x)", userName, d, mode)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
