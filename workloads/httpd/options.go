package httpd

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Kind says which server runs PHP.
type Kind string

const (
	// KindApache is Debian's apache2 with mpm_event on this machine (the
	// default).
	KindApache Kind = "apache"
	// KindApacheDocker is the same server in a container (a *Container
	// as Options.Placement).
	KindApacheDocker Kind = "apache-docker"
	// KindFrankenPHP would run FrankenPHP in worker mode, as the report
	// does, from the dunglas/frankenphp image.
	KindFrankenPHP Kind = "frankenphp"
)

// Available returns nil for a kind Start can run here, else an
// *UnavailableError saying why not.
func (k Kind) Available() error {
	switch k {
	case KindApache, "":
		return nil
	case KindFrankenPHP:
		return &UnavailableError{Kind: k, Reason: "FrankenPHP runs from the dunglas/frankenphp image, and no container registry can be reached from here"}
	case KindApacheDocker:
		return nil // given a *Container as Options.Placement
	}
	return fmt.Errorf("unknown server kind %q (apache, apache-docker, frankenphp)", k)
}

// ErrUnavailable is wrapped by every *UnavailableError.
var ErrUnavailable = errors.New("server kind unavailable")

// An UnavailableError says a server kind cannot run here and why; a
// benchmark reports it as a skip, not a failure.
type UnavailableError struct {
	Kind   Kind
	Reason string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("server %s unavailable: %s", e.Kind, e.Reason)
}

func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// A Probe is the request that tells a started server is ready: its path,
// headers, and a check of the response. A nil Check wants a 200.
type Probe struct {
	Path   string
	Header http.Header
	Check  func(status int, body []byte) error
}

// Options configure Start. Dir and Module must be given; the zero value of
// every other field works.
type Options struct {
	Kind Kind // default KindApache

	// Dir is the server's run dir: configuration, document root, logs. It
	// is created if missing.
	Dir string
	// Module is the ZTS build's Apache module, libs/libphp.so.
	Module string
	// Threads is the number of PHP threads: ThreadsPerChild, ThreadLimit
	// and MaxRequestWorkers of the one Apache child. Default 16.
	Threads int

	// Files is the document root, relative path → content.
	Files map[string][]byte
	// INI holds php.ini settings, name → value.
	INI map[string]string
	// Env is set for PHP with SetEnv: the database DSN and credentials.
	Env map[string]string

	// KeepAliveOff turns HTTP keep-alive off; with it on (the default)
	// MaxKeepAliveRequests is unlimited.
	KeepAliveOff bool
	// AccessLog writes Dir/access.log, a line a request (status, bytes,
	// microseconds). Off by default: it is work the benchmark does not
	// want to measure.
	AccessLog bool
	// NoOPcache leaves OPcache out. By default a server loads the build's
	// OPcache (OPcacheModule) with production's settings where the build
	// has it, as production PHP runs.
	NoOPcache bool

	// SingleProcess runs apache2 -X: one process, no child.
	SingleProcess bool
	// Wrap is put before apache2 on the command line (after taskset), such
	// as valgrind and its options; the wrapper must exec or run apache2 in
	// the same process group.
	Wrap []string
	// CPUs pins the server with taskset -c.
	CPUs string
	// Environ is added to the server's environment (LD_PRELOAD, ...).
	Environ []string
	// CgroupFD, when positive, is an open cgroup v2 directory the server
	// starts in (CLONE_INTO_CGROUP).
	CgroupFD int
	// Placement is where the server runs; default Host. In a *Container
	// (KindApacheDocker) CPUs is the container's cpuset, and Apache,
	// CgroupFD are not used.
	Placement Placement

	// User and Group are what Apache's child runs as when Start runs as
	// root; default www-data. Apache refuses to serve as root.
	User, Group string

	// Apache and ModulesDir name Debian's apache2 binary and its modules;
	// default /usr/sbin/apache2 (or apache2 on PATH) and
	// /usr/lib/apache2/modules.
	Apache     string
	ModulesDir string

	// Probe is the readiness request; default GET / wanting a 200.
	Probe Probe

	StartTimeout time.Duration // readiness wait; default 60s
	StopTimeout  time.Duration // SIGTERM to SIGKILL; default 15s

	// Log receives a line per lifecycle step. Apache's own logs are
	// Dir/error.log and Dir/apache.out.
	Log io.Writer
}

// DefaultUser is what Apache's child runs as, started as root, unless
// Options.User says otherwise.
const DefaultUser = "www-data"

// Defaults in one place.
const (
	defaultThreads      = 16
	defaultUser         = DefaultUser
	defaultApache       = "/usr/sbin/apache2"
	defaultModulesDir   = "/usr/lib/apache2/modules"
	defaultStartTimeout = 60 * time.Second
	defaultStopTimeout  = 15 * time.Second
	// portAttempts bounds the retries when the free port picked for the
	// server was taken by someone else before Apache bound it.
	portAttempts = 3
)

func (o Options) withDefaults() Options {
	if o.Kind == "" {
		o.Kind = KindApache
	}
	if o.Placement == nil {
		o.Placement = Host{}
	}
	if o.Threads == 0 {
		o.Threads = defaultThreads
	}
	if o.User == "" {
		o.User = defaultUser
	}
	if o.Group == "" {
		o.Group = o.User
	}
	if o.ModulesDir == "" {
		o.ModulesDir = defaultModulesDir
	}
	if o.Probe.Path == "" {
		o.Probe.Path = "/"
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
	return o
}
