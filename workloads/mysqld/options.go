package mysqld

import (
	"errors"
	"io"
	"time"

	"github.com/docker/docker/client"
)

// Engine says what runs the server.
type Engine string

const (
	// EngineHost runs Debian's mariadbd on this machine (the default).
	EngineHost Engine = "host"
	// EngineDocker runs Debian's mariadbd in a container of a local image
	// (EnsureImage), on a Docker network: Options.Docker says which.
	EngineDocker Engine = "docker"
)

// ErrEngineUnsupported is returned by Start for an Engine it cannot run.
var ErrEngineUnsupported = errors.New("engine not supported")

// Options configure Start. The zero value works apart from Dir, which a
// caller must name: the datadir, the logs and the socket live there.
type Options struct {
	// Dir is the server's run dir. It is created if missing; an existing
	// datadir in it is reused, so a second Start in the same Dir skips
	// mariadb-install-db.
	Dir string

	Engine Engine // default EngineHost
	// Docker is where a server of EngineDocker runs; required for it.
	Docker *DockerOptions

	User     string // default "patchproof"
	Password string // default: random

	// Mariadbd and InstallDB name the programs; default: looked up in PATH
	// and /usr/sbin, /usr/bin.
	Mariadbd  string
	InstallDB string

	MaxConnections int           // default 500
	StartTimeout   time.Duration // readiness wait; default 60s
	StopTimeout    time.Duration // SIGTERM to SIGKILL; default 30s

	// ExtraArgs are appended to mariadbd's command line, after patchproof's
	// own options, so they override them.
	ExtraArgs []string

	// Log receives a line per lifecycle step (install, start, ready, stop).
	// The server's own log is Dir/mariadbd.err. Default: discarded.
	Log io.Writer
}

// DockerOptions say where and how a server of EngineDocker runs.
type DockerOptions struct {
	Client *client.Client
	Image  string // an image with mariadb-server (EnsureImage)
	// Network is the Docker network the server joins, that of its clients
	// (an internal one: no route out). Required.
	Network string
	// Alias is the server's name on Network: its Conn's Host. Default
	// "mariadb".
	Alias string
	// User is the uid:gid the server runs as; it owns the datadir in the
	// run dir. Default: this process's.
	User   string
	Labels map[string]string // added to the container's patchproof=db
	Memory int64             // bytes; default 2 GiB
	Pids   int64             // default 4096: a thread a connection
}

// Defaults in one place.
const (
	defaultUser           = "patchproof"
	defaultMaxConnections = 500
	defaultStartTimeout   = 60 * time.Second
	defaultStopTimeout    = 30 * time.Second

	defaultAlias        = "mariadb"
	defaultDockerMemory = 2 << 30
	defaultDockerPids   = 4096
	containerPort       = 3306
)

func (o Options) withDefaults() (Options, error) {
	if o.Engine == "" {
		o.Engine = EngineHost
	}
	if o.User == "" {
		o.User = defaultUser
	}
	if o.Password == "" {
		p, err := randomHex(12)
		if err != nil {
			return o, err
		}
		o.Password = p
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = defaultMaxConnections
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = defaultStopTimeout
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o, nil
}
