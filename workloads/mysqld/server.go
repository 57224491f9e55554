package mysqld

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/workloads/service"
)

// Server is a running MariaDB. Connect over TCP to Host:Port or over the unix
// socket Socket, as User with Password: its Conn. For a server in a
// container, Host:Port is its name and port on its Docker network, and
// Socket a path on this host that containers reach by binding its
// directory.
type Server struct {
	Conn
	// PID is mariadbd's process id on this host, for pinning it to CPUs;
	// on this host also its process group.
	PID int
	// ContainerID is the server's container, for EngineDocker: a client
	// container that shares its network namespace (network mode
	// container:ID) reaches it at LocalConn, as a client on this host
	// reaches a host server.
	ContainerID string

	// Version is what VERSION() answers: the short version given to the
	// server, e.g. "10.11.19-MariaDB".
	Version string

	Dir      string // the run dir
	ErrorLog string // mariadbd's error log, inside Dir
	// TLS is the server's authority and certificate: it accepts TLS
	// (and requires it of no one).
	TLS TLSFiles

	opt      Options
	sockDir  string   // a short directory made under /tmp for Socket, or ""
	accounts []string // the hosts the user is created for
	proc     process  // mariadbd on this host, or its container
	stopper  service.Stopper
}

// maxSunPath is the usable length of sockaddr_un.sun_path on Linux (108
// bytes including the terminating NUL).
const maxSunPath = 107

// portAttempts bounds the retries when the free port picked for the server
// was taken by someone else before mariadbd bound it.
const portAttempts = 3

var safeName = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)
var safePassword = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,64}$`)

// Start initialises (once) and starts a MariaDB server in opt.Dir and waits
// until it answers. Cancelling ctx stops the server at any time; the caller
// must call Stop on every path once Start has returned a Server.
func Start(ctx context.Context, opt Options) (*Server, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if opt.Dir == "" {
		return nil, errors.New("start mariadb: no run dir given")
	}
	if !safeName.MatchString(opt.User) {
		return nil, fmt.Errorf("start mariadb: user %q: want letters, digits and _", opt.User)
	}
	if !safePassword.MatchString(opt.Password) {
		return nil, errors.New("start mariadb: password: want letters, digits and _.+-")
	}
	switch opt.Engine {
	case EngineHost:
	case EngineDocker:
		return startContainer(ctx, opt)
	default:
		return nil, fmt.Errorf("start mariadb: engine %q: %w", opt.Engine, ErrEngineUnsupported)
	}
	dir, err := filepath.Abs(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	mariadbd, err := lookTool(opt.Mariadbd, "mariadbd")
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	installDB, err := lookTool(opt.InstallDB, "mariadb-install-db")
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	osUser, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	version, err := shortVersion(ctx, mariadbd)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if err := installOnce(ctx, installDB, dir, osUser.Username, opt.Log); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}

	s := &Server{
		Conn:     Conn{Host: "127.0.0.1", User: opt.User, Password: opt.Password},
		accounts: []string{"localhost", "127.0.0.1"},
		Version:  version,
		Dir:      dir,
		ErrorLog: filepath.Join(dir, errorLogName),
		opt:      opt,
	}
	if err := s.pickSocket(s.Dir); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	initFile, err := s.writeInitFile(dir)
	if err != nil {
		return nil, err
	}
	if s.TLS, err = makeTLS(dir, []string{"127.0.0.1", "localhost"}); err != nil {
		s.removeSockDir()
		return nil, fmt.Errorf("start mariadb: %w", err)
	}

	for attempt := 1; ; attempt++ {
		port, err := proc.FreePort()
		if err != nil {
			s.removeSockDir()
			return nil, fmt.Errorf("start mariadb: %w", err)
		}
		s.Port = port
		p, err := launch(ctx, s.serverArgs(mariadbd, osUser.Username, initFile), s.Dir, opt)
		if err != nil {
			s.removeSockDir()
			return nil, err
		}
		err = s.waitReady(ctx, p)
		if err == nil {
			err = s.checkTLS(ctx)
		}
		if err == nil {
			s.proc, s.PID = hostProcess{p}, p.Pid()
			fmt.Fprintf(opt.Log, "mariadb %s ready on 127.0.0.1:%d and %s\n", s.Version, s.Port, s.Socket)
			return s, nil
		}
		died := p.HasExited()
		stopErr := p.Stop()
		if died {
			stopErr = nil // err already says so, with the log tail
		}
		if died && attempt < portAttempts && proc.PortTaken(port) && ctx.Err() == nil {
			fmt.Fprintf(opt.Log, "mariadb: port %d taken by another process, retrying\n", port)
			continue
		}
		s.removeSockDir()
		return nil, errors.Join(err, stopErr)
	}
}

// serverArgs is mariadbd's command line on this host. --no-defaults keeps
// /etc/mysql out: everything the server needs is here.
func (s *Server) serverArgs(mariadbd, osUser, initFile string) []string {
	args := []string{
		mariadbd,
		"--no-defaults",
		// mariadbd refuses to run as root unless told to.
		"--user=" + osUser,
		"--version=" + s.Version,
		"--bind-address=127.0.0.1",
	}
	return append(args, s.settings(initFile)...)
}

// settings are mariadbd's options wherever it runs: its files in the run
// dir, and what makes it behave as PHP's tests expect (see the package
// doc). Options.ExtraArgs come last, so they override.
func (s *Server) settings(initFile string) []string {
	args := []string{
		"--datadir=" + filepath.Join(s.Dir, "data"),
		"--tmpdir=" + filepath.Join(s.Dir, "tmp"),
		"--socket=" + s.Socket,
		"--port=" + strconv.Itoa(s.Port),
		"--pid-file=" + filepath.Join(s.Dir, "mariadbd.pid"),
		"--log-error=" + s.ErrorLog,
		"--init-file=" + initFile,
		"--skip-name-resolve",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--max-connections=" + strconv.Itoa(s.opt.MaxConnections),
		"--local-infile=1",
		"--secure-file-priv=",
		"--skip-log-bin",
		// MySQL has it on, and two tests of connection attributes need it.
		"--performance-schema=ON",
		"--innodb-buffer-pool-size=64M",
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0",
		"--sync-binlog=0",
	}
	args = append(args, s.TLS.args()...)
	return append(args, s.opt.ExtraArgs...)
}

// waitReady waits until the user logs in over TCP (as PHP does) and over
// the socket (as patchproof does) and VERSION() is the version given, or
// fails with the tail of the error log when the server exits or the start
// timeout passes.
func (s *Server) waitReady(ctx context.Context, p *service.Process) error {
	st := startup{
		op:       "start mariadbd",
		deadline: time.Now().Add(s.opt.StartTimeout),
		exited:   p.Exited(),
		status:   func() string { return fmt.Sprint(p.WaitErr()) },
		logs:     func() string { return s.ErrorLog + ":\n" + s.logTail() },
	}
	tcp := s.Conn
	tcp.Socket = ""
	for _, c := range []Conn{tcp, s.Conn} {
		v, err := s.awaitLogin(ctx, st, c)
		if err != nil {
			return err
		}
		if v != s.Version {
			return fmt.Errorf("start mariadbd: VERSION() is %q, want %q", v, s.Version)
		}
	}
	return nil
}

// Stop shuts the server down: SIGTERM to its process group, SIGKILL after
// Options.StopTimeout. It is safe to call more than once, from several
// goroutines and on a nil Server; every call returns the first call's
// answer. An error means the server had to be killed or had died by itself.
func (s *Server) Stop() error {
	if s == nil {
		return nil
	}
	return s.stopper.Stop(s.died, s.stop)
}

// process is mariadbd running, wherever it runs.
type process interface {
	Exited() <-chan struct{}
	// died says how the server s had ended by itself, with its logs, or
	// nil.
	died(s *Server) error
	// stop stops it (SIGTERM; SIGKILL after the stop timeout) and
	// removes its container.
	stop() error
}

// hostProcess is mariadbd on this host, in a process group of its own.
type hostProcess struct{ *service.Process }

func (p hostProcess) died(s *Server) error {
	if err := p.DiedBySelf(); err != nil {
		return fmt.Errorf("stop mariadbd: %w; %s:\n%s", err, s.ErrorLog, s.logTail())
	}
	return nil
}

func (p hostProcess) stop() error { return p.Stop() }

// died says how the server had ended by itself, with its logs, or nil.
func (s *Server) died() error {
	if s.proc == nil {
		return nil
	}
	return s.proc.died(s)
}

// stop stops mariadbd wherever it runs, and removes the socket's
// directory.
func (s *Server) stop() error {
	defer s.removeSockDir()
	if s.proc == nil {
		return nil
	}
	return s.proc.stop()
}

// launch starts mariadbd in its own process group; cancelling ctx stops it.
func launch(ctx context.Context, args []string, dir string, opt Options) (*service.Process, error) {
	out, err := safefs.AppendPath(filepath.Join(dir, outName), 0o644)
	if err != nil {
		return nil, fmt.Errorf("start mariadbd: %w", err)
	}
	defer out.Close()
	fmt.Fprintf(opt.Log, "mariadb: %s\n", strings.Join(args, " "))
	p, err := service.Start(ctx, service.Options{
		Name:        "mariadb",
		Path:        args[0],
		Args:        args[1:],
		Dir:         dir,
		Kind:        childenv.Database,
		Stdout:      out,
		Stderr:      out,
		StopTimeout: opt.StopTimeout,
		TermGroup:   true,
		// Even when patchproof dies, let mariadbd shut down as Stop asks it to.
		DeathSignal: syscall.SIGTERM,
		Log:         opt.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("start mariadbd: %w", err)
	}
	return p, nil
}

// pickSocket puts the socket in dir, or in a short directory under /tmp
// when dir's path would not fit in sun_path.
func (s *Server) pickSocket(dir string) error {
	s.Socket = filepath.Join(dir, "mysqld.sock")
	if len(s.Socket) <= maxSunPath {
		return nil
	}
	d, err := os.MkdirTemp("/tmp", "ppmy-")
	if err != nil {
		return err
	}
	s.sockDir = d
	s.Socket = filepath.Join(d, "mysqld.sock")
	return nil
}

func (s *Server) removeSockDir() {
	if s.sockDir != "" {
		os.RemoveAll(s.sockDir)
		s.sockDir = ""
	}
}

// logTail is the end of the server's error log, for error messages: its
// errors and warnings when it has any, else its last lines.
func (s *Server) logTail() string {
	t := tail(s.ErrorLog, 40)
	var keep []string
	for _, l := range strings.Split(t, "\n") {
		if !strings.Contains(l, "[Note]") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return tail(s.ErrorLog, 12)
	}
	if len(keep) > 12 {
		keep = keep[len(keep)-12:]
	}
	return strings.Join(keep, "\n")
}

// initSQL runs at every server start with full privileges: it creates the
// test user (again) with the current password. The tests create users,
// grant, create databases and set globals, hence the global grant. It is a
// file and not a client's statements because no client can log in before
// it has run: root authenticates by unix_socket, as the OS user root only.
// Start refuses a user or password that could close the quotes.
func initSQL(user, password string, hosts []string) string {
	var b strings.Builder
	for _, host := range hosts {
		acct := account(user, host)
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY '%s';\n", acct, password)
		fmt.Fprintf(&b, "ALTER USER %s IDENTIFIED BY '%s';\n", acct, password)
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON *.* TO %s WITH GRANT OPTION;\n", acct)
	}
	return b.String()
}

// installOnce runs mariadb-install-db unless the datadir already holds the
// system tables. A failed install leaves no datadir behind.
func installOnce(ctx context.Context, installDB, dir, osUser string, log io.Writer) error {
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "mysql", "user.frm")); err == nil {
		return nil
	} else if _, err := os.Stat(filepath.Join(data, "mysql", "global_priv.frm")); err == nil {
		return nil
	}
	os.RemoveAll(data)
	logPath := filepath.Join(dir, installLogName)
	f, err := safefs.CreatePath(logPath, 0o644)
	if err != nil {
		return fmt.Errorf("install datadir: %w", err)
	}
	defer f.Close()
	// The bootstrap server removes every #sql* file in its tmpdir when it
	// starts: in a shared one (TMPDIR, /tmp) each of the servers a run
	// installs at once deletes the others' temporary tables, and one
	// install in a dozen fails with "Unknown table 'mysql.tmp_user_sys'".
	// The server's own tmp is private; mariadb-install-db passes the
	// option on to the server.
	cmd := exec.CommandContext(ctx, installDB,
		"--no-defaults",
		"--datadir="+data,
		"--tmpdir="+filepath.Join(dir, "tmp"),
		"--user="+osUser,
		"--skip-test-db",
		"--auth-root-authentication-method=socket",
	)
	cmd.Env = childenv.For(childenv.Database)
	cmd.Stdout = f
	cmd.Stderr = f
	proc.KillGroupOnCancel(cmd)
	fmt.Fprintf(log, "mariadb: %s\n", strings.Join(cmd.Args, " "))
	start := time.Now()
	if err := cmd.Run(); err != nil {
		os.RemoveAll(data)
		return fmt.Errorf("install datadir: %s: %w; %s:\n%s", installDB, err, logPath, installErrors(logPath))
	}
	fmt.Fprintf(log, "mariadb: datadir installed in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// lookTool resolves a program: the name given, else name in PATH, else in
// the sbin directories a non-root PATH often lacks.
func lookTool(given, name string) (string, error) {
	if given != "" {
		return exec.LookPath(given)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("find %s: not in PATH nor /usr/sbin (install mariadb-server)", name)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// maxLogRead bounds what tail reads of a log.
const maxLogRead = 64 << 20

// tail returns the last n lines of a file, or a note that it cannot be read.
func tail(path string, n int) string {
	b, err := safefs.ReadPath(path, maxLogRead)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(bytes.TrimSpace(b)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// installErrors is what a failed install's log says went wrong: its
// lines that say error (the end of the log is mariadb-install-db's
// advice, the same whatever failed), else its last lines.
func installErrors(path string) string {
	b, err := safefs.ReadPath(path, maxLogRead)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	var picked []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(strings.ToLower(l), "error") {
			picked = append(picked, strings.TrimSpace(l))
		}
	}
	if len(picked) == 0 {
		return tail(path, 20)
	}
	if len(picked) > 20 {
		picked = picked[len(picked)-20:]
	}
	return strings.Join(picked, "\n")
}

// writeInitFile writes the server's init file (its accounts) into dir,
// mode 0600: it holds the password. It returns the init file's path; on
// failure the socket dir is removed.
func (s *Server) writeInitFile(dir string) (string, error) {
	initFile := filepath.Join(dir, "init.sql")
	if err := safefs.WritePath(initFile, []byte(initSQL(s.opt.User, s.opt.Password, s.accounts)), 0o600); err != nil {
		s.removeSockDir()
		return "", fmt.Errorf("start mariadb: %w", err)
	}
	return initFile, nil
}

// The server's logs, in its directory.
const (
	errorLogName   = "mariadbd.err"
	outName        = "mariadbd.out"
	installLogName = "install.log"
)

// LogNames are the names of the files in which a server says what went
// wrong: its error log, its own output and that of the data directory's
// install.
func LogNames() []string { return []string{errorLogName, outName, installLogName} }
