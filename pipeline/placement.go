package pipeline

import (
	"context"
	"errors"
	"os/exec"
	"slices"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/phptests"
)

// A placement is where the run's code under test runs, and with it what
// builds, tests and serves it: the builds, the run's MariaDB, the suites,
// the Apache servers of the race check and the benchmark. It is this host
// (--builder host) or containers (--builder docker, docker.go). The run
// holds one, made from --builder once (Execute); a stage asks it for what
// it needs, never which it is.
type placement interface {
	// builder gives b its executor, and with it ccache and apxs.
	builder(ctx context.Context, r *Run, b *builders.Builder) error
	// database says in opt where a MariaDB of the run runs, alias its
	// name beside the run's own ("" for that one), and in words where
	// that is. opt.Log is the server's log.
	database(ctx context.Context, r *Run, opt *mysqld.Options, alias string) (where string, err error)
	// suites is where the test suites run against db.
	suites(ctx context.Context, r *Run, db *mysqld.Server) (phptests.Executor, error)
	// server is where the race check and the benchmark run a build's
	// Apache module, beside db.
	server(ctx context.Context, r *Run, db *mysqld.Server) (httpd.Placement, error)
	// wants reports whether the run needs n on this host.
	wants(n Need) bool
	// cpuAccounting says what measures a server's CPU time for the run,
	// for doctor; "" where the run makes the server a cgroup of its own.
	cpuAccounting() string
}

var (
	_ placement = hostPlacement{}
	_ placement = dockerPlacement{}
)

// placementOf is the placement of --builder kind: containers under
// docker, else this host (the default). validate has refused any other
// kind a run is given.
func placementOf(kind builders.ExecutorKind) placement {
	if kind == builders.KindDocker {
		return dockerPlacement{}
	}
	return hostPlacement{}
}

// placed is the needs that the run's --builder has on this host: a Need
// that names a builder is another's.
func (c *Config) placed(needs ...Need) []Need {
	p := placementOf(c.Builder)
	return slices.DeleteFunc(needs, func(n Need) bool { return !p.wants(n) })
}

// only marks needs as those of one --builder alone.
func only(kind builders.ExecutorKind, needs ...Need) []Need {
	for i := range needs {
		needs[i].Builder = kind
	}
	return needs
}

// hostPlacement runs everything on this host: its compilers, mariadbd,
// the build's php and apache2.
type hostPlacement struct{}

func (hostPlacement) builder(_ context.Context, r *Run, b *builders.Builder) error {
	b.Exec = &builders.Host{}
	if _, err := exec.LookPath("ccache"); err == nil {
		b.CCache = true
	}
	if slices.Contains(r.Config.Variants, builders.ZTS) {
		apxs, err := exec.LookPath("apxs2")
		if err != nil {
			apxs, err = exec.LookPath("apxs")
		}
		if err != nil {
			return errors.New("ZTS builds need apxs2 for the Apache module the benchmark loads (apt-get install apache2-dev; see patchproof doctor)")
		}
		b.Apxs = apxs
	}
	return nil
}

func (hostPlacement) database(context.Context, *Run, *mysqld.Options, string) (string, error) {
	return "on this host", nil
}

func (hostPlacement) suites(context.Context, *Run, *mysqld.Server) (phptests.Executor, error) {
	return phptests.Host{}, nil
}

func (hostPlacement) server(context.Context, *Run, *mysqld.Server) (httpd.Placement, error) {
	return httpd.Host{}, nil
}

func (hostPlacement) wants(n Need) bool { return n.Builder != builders.KindDocker }

func (hostPlacement) cpuAccounting() string { return "" }
