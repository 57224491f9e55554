package mysqld

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/images"
	"github.com/patchproof/patchproof/internal/docker"
)

// ImageRecipe is the database image's: images/mariadb.Dockerfile.
var ImageRecipe = docker.Recipe{Name: "database", Dockerfile: images.MariaDB}

// EnsureImage returns the image a server of EngineDocker runs in, making it
// when missing: Debian's MariaDB installed into the same Debian base image
// the build image starts from, so that no registry is needed.
func EnsureImage(ctx context.Context, c *client.Client, opt docker.ImageOptions) (string, error) {
	return docker.EnsureImage(ctx, c, "patchproof-mariadb", ImageRecipe, opt)
}

// containerScript is the server container's command: it installs the
// datadir when it holds no system tables (and leaves none behind when that
// fails), then becomes mariadbd with the short version (see the package
// doc) and the options it is given. $1 is the datadir, $2 the --user to
// give (root's must be named; another uid runs as itself).
const containerScript = `set -e
data=$1 user=$2
shift 2
if [ ! -e "$data/mysql/global_priv.frm" ] && [ ! -e "$data/mysql/user.frm" ]; then
	rm -rf "$data"
	echo "patchproof: installing the datadir" >&2
	if ! mariadb-install-db --no-defaults --datadir="$data" ${user:+--user="$user"} --skip-test-db --auth-root-authentication-method=socket; then
		rm -rf "$data"
		echo "patchproof: mariadb-install-db failed" >&2
		exit 1
	fi
fi
version=$(mariadbd --version | sed -n 's/.*Ver[[:space:]]*\([0-9]*\.[0-9]*\.[0-9]*\)\(-MariaDB\)\{0,1\}.*/\1\2/p')
exec mariadbd --no-defaults --version="$version" ${user:+--user="$user"} "$@"
`

// shortVersionRE is what VERSION() answers with the short version.
var shortVersionRE = regexp.MustCompile(`^\d+\.\d+\.\d+(-MariaDB)?$`)

// dbContainer is a server's container: a docker.Service, watched from its
// start, removed by stop or when the context given to Start ends.
type dbContainer struct {
	*docker.Service
	stopTimeout time.Duration
	stopping    atomic.Bool
}

func (c *dbContainer) died(s *Server) error {
	if c.HasExited() && !c.stopping.Load() {
		return fmt.Errorf("stop mariadbd: its container had exited by itself (%s); %s", c.status(), s.containerLogs(context.Background(), c))
	}
	return nil
}

func (c *dbContainer) stop() error {
	c.stopping.Store(true)
	if err := c.Stop(c.stopTimeout); err != nil {
		return fmt.Errorf("stop mariadbd: %w", err)
	}
	return nil
}

// status is how the container ended.
func (c *dbContainer) status() string {
	if err := c.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// startContainer is Start for EngineDocker: the same settings, users and
// readiness as on the host, in a container on opt.Docker.Network. The
// datadir, the logs and the socket's directory are bind-mounted from the
// run dir, so the server's files are where a host server's are; this host
// logs in over the socket, for readiness and CreateDatabase.
func startContainer(ctx context.Context, opt Options) (*Server, error) {
	d := opt.Docker
	if d == nil || d.Client == nil || d.Image == "" || d.Network == "" {
		return nil, errors.New("start mariadb in a container: no Docker client, image or network given")
	}
	alias, user, memory, pids := d.Alias, d.User, d.Memory, d.Pids
	if alias == "" {
		alias = defaultAlias
	}
	if user == "" {
		user = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	}
	if memory == 0 {
		memory = defaultDockerMemory
	}
	if pids == 0 {
		pids = defaultDockerPids
	}
	dir, err := filepath.Abs(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	for _, sub := range []string{"tmp", "sock"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("start mariadb: %w", err)
		}
	}
	s := &Server{
		Conn:     Conn{Host: alias, Port: containerPort, User: opt.User, Password: opt.Password},
		Dir:      dir,
		ErrorLog: filepath.Join(dir, errorLogName),
		opt:      opt,
		// A host server's accounts, not one for any host: PHP's tests see
		// the difference (with user@'%', a failed login is answered
		// "using password: YES", without it not: mysqli_report_new).
		// Clients log in from the server's network namespace (LocalConn).
		accounts: []string{"localhost", "127.0.0.1"},
	}
	// The socket has a directory of its own, so that a client container
	// can be given the socket without the datadir.
	if err := s.pickSocket(filepath.Join(dir, "sock")); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	initFile, err := s.writeInitFile(dir)
	if err != nil {
		return nil, err
	}
	// The clients on the run's network reach it by its alias.
	if s.TLS, err = makeTLS(dir, []string{alias, "localhost", "127.0.0.1"}); err != nil {
		s.removeSockDir()
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	installUser := ""
	if strings.HasPrefix(user, "0:") || user == "0" {
		installUser = "root"
	}
	binds := []docker.Bind{{Path: dir}}
	if s.sockDir != "" {
		binds = append(binds, docker.Bind{Path: s.sockDir})
	}
	args := append([]string{"sh", "-c", containerScript, "sh", filepath.Join(dir, "data"), installUser, "--bind-address=0.0.0.0"}, s.settings(initFile)...)
	labels := map[string]string{docker.LabelRole: "db"}
	maps.Copy(labels, d.Labels)
	spec := docker.Spec{
		Image:   d.Image,
		Cmd:     args,
		Env:     docker.BaseEnv(),
		Dir:     dir,
		User:    user,
		Binds:   binds,
		Network: d.Network,
		Aliases: []string{alias},
		Labels:  labels,
		Memory:  memory,
		Pids:    pids,
	}
	fmt.Fprintf(opt.Log, "mariadb: container of %s on network %s as %s\n", d.Image, d.Network, alias)
	// Its output is read when it fails (containerLogs), not streamed.
	svc, err := docker.StartService(ctx, d.Client, spec, nil)
	if err != nil {
		s.removeSockDir()
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	c := &dbContainer{Service: svc, stopTimeout: opt.StopTimeout}
	s.proc, s.ContainerID = c, svc.ID
	fail := func(err error) (*Server, error) {
		if stopErr := svc.Stop(0); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		s.removeSockDir()
		return nil, err
	}
	if err := s.waitReadyContainer(ctx, c); err != nil {
		return fail(err)
	}
	if err := s.checkTLS(ctx); err != nil {
		return fail(err)
	}
	// The container's first process execs mariadbd: its host PID is the
	// server's, for pinning (--db-cpus).
	if info, err := d.Client.ContainerInspect(ctx, svc.ID); err == nil && info.State != nil {
		s.PID = info.State.Pid
	}
	// Cancelling ctx stops the server, as it does a host server.
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-svc.Exited():
		}
	}()
	fmt.Fprintf(opt.Log, "mariadb %s ready in container %s as %s:%d and %s\n", s.Version, svc.ID[:12], s.Host, s.Port, s.Socket)
	return s, nil
}

// waitReadyContainer waits until the user logs in over the socket (from
// this host, through the bind mount) and VERSION() is a short version, or
// fails with the container's output and the error log's tail when the
// container exits or the start timeout passes.
func (s *Server) waitReadyContainer(ctx context.Context, c *dbContainer) error {
	st := startup{
		op:       "start mariadbd in a container",
		deadline: time.Now().Add(s.opt.StartTimeout),
		exited:   c.Exited(),
		status:   c.status,
		logs:     func() string { return s.containerLogs(ctx, c) },
	}
	v, err := s.awaitLogin(ctx, st, s.Conn)
	if err != nil {
		return err
	}
	if !shortVersionRE.MatchString(v) || len(v) > maxVersionLen {
		return fmt.Errorf("start mariadbd in a container: VERSION() is %q, want a short version of at most %d characters", v, maxVersionLen)
	}
	s.Version = v
	return nil
}

// containerLogs is the container's own output (the datadir's install, a
// shell error) and the error log's tail, for an error message.
func (s *Server) containerLogs(ctx context.Context, c *dbContainer) string {
	return fmt.Sprintf("container output ends:\n%s\n%s:\n%s", c.LogTail(ctx, 12), s.ErrorLog, s.logTail())
}
