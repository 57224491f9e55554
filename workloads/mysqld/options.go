package mysqld

import (
	"errors"
	"io"
	"time"
)

// Engine says what runs the server.
type Engine string

const (
	// EngineHost runs Debian's mariadbd on this machine (the default).
	EngineHost Engine = "host"
	// EngineDocker would run a mysql:8.4 container; not implemented yet.
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

	User     string // default "patchproof"
	Password string // default: random

	// Mariadbd and InstallDB name the programs; default: looked up in PATH
	// and /usr/sbin, /usr/bin.
	Mariadbd  string
	InstallDB string
	Client    string // the mariadb client, for CreateDatabase; default "mariadb"

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

// Defaults in one place.
const (
	defaultUser           = "patchproof"
	defaultMaxConnections = 500
	defaultStartTimeout   = 60 * time.Second
	defaultStopTimeout    = 30 * time.Second
	defaultClient         = "mariadb"
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
	if o.Client == "" {
		o.Client = defaultClient
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o, nil
}
