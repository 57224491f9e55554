package pipeline

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/docker/docker/client"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/aptsource"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/phptests"
)

// dockerSide is the run's share of the Docker engine under --builder
// docker: the client, and the internal network (no route out) the
// database's container is on, and with it the suites' containers, which
// share its network namespace: nothing else.
// Both are made on first use; the network goes when the run ends.
type dockerSide struct {
	mu      sync.Mutex
	client  *client.Client
	network string
}

// dockerClient connects to the engine once a run. The first connection
// also removes what a killed run of this host left behind: its containers
// and networks, found by their owner label.
func (r *Run) dockerClient(ctx context.Context) (*client.Client, error) {
	r.dock.mu.Lock()
	defer r.dock.mu.Unlock()
	return r.dockerClientLocked(ctx)
}

func (r *Run) dockerClientLocked(ctx context.Context) (*client.Client, error) {
	if r.dock.client != nil {
		return r.dock.client, nil
	}
	c, err := docker.Connect(ctx)
	if err != nil {
		return nil, err
	}
	removed, err := docker.RemoveLeftovers(ctx, c)
	if len(removed) > 0 {
		r.Progress.Step("docker: removed what a killed run left: %s", strings.Join(removed, ", "))
	}
	if err != nil {
		r.Progress.Warn("docker: " + firstLine(err.Error()))
	}
	r.dock.client = c
	return c, nil
}

// dockerNetwork is the run's internal network, created on first use.
func (r *Run) dockerNetwork(ctx context.Context) (*client.Client, string, error) {
	r.dock.mu.Lock()
	defer r.dock.mu.Unlock()
	c, err := r.dockerClientLocked(ctx)
	if err != nil {
		return nil, "", err
	}
	if r.dock.network == "" {
		if r.dock.network, err = docker.CreateNetwork(ctx, c, "patchproof", docker.Labels("network")); err != nil {
			return nil, "", err
		}
	}
	return c, r.dock.network, nil
}

// closeDocker removes the run's network (its containers are gone by now:
// closeDatabase runs first) and closes the client. Safe to call more than
// once.
func (r *Run) closeDocker() {
	r.dock.mu.Lock()
	defer r.dock.mu.Unlock()
	if r.dock.client == nil {
		return
	}
	if r.dock.network != "" {
		if err := docker.RemoveNetwork(context.Background(), r.dock.client, r.dock.network); err != nil {
			r.Progress.Warn(firstLine(err.Error()))
		}
		r.dock.network = ""
	}
	r.dock.client.Close()
	r.dock.client = nil
}

// imageOptions are how the run's images are made: from the Debian mirror,
// with the suites and security archive this machine's apt uses, so that
// the images have the package versions (MariaDB's, the libraries') a host
// run has. A mirror named by $PATCHPROOF_DEBIAN_MIRROR gives its release
// suite alone.
func (r *Run) imageOptions(log io.Writer) docker.ImageOptions {
	opt := docker.ImageOptions{CacheDir: r.Cache, Mirror: r.Config.debianMirror(), Log: log}
	if r.Config.Getenv("PATCHPROOF_DEBIAN_MIRROR") == "" {
		opt.Sources, _ = aptsource.Default.ImageSources(docker.DefaultSuite)
	}
	return opt
}

// dockerPlacement runs the code under test in containers: the builds in
// the build image, the database in an image of Debian's MariaDB on the
// run's internal network, and the suites and servers in containers that
// share the database container's network namespace. This host keeps the
// engine, and what measures from outside (wrk, perf, gcc for the lock
// counter, addr2line).
type dockerPlacement struct{}

func (dockerPlacement) builder(ctx context.Context, r *Run, b *builders.Builder) error {
	c, err := r.dockerClient(ctx)
	if err != nil {
		return err
	}
	r.Progress.Step("docker: preparing the build image")
	img, err := builders.EnsureBuildImage(ctx, c, r.imageOptions(r.Log))
	if err != nil {
		return err
	}
	// A build container binds its own directory and the shared ccache
	// (read-only for a head), nothing else of the cache: the other
	// builds are out of the code under test's reach.
	d := &builders.Docker{Client: c, Image: img, User: docker.User(), Labels: docker.Labels("build")}
	b.Exec, b.CCache, b.Apxs = d, true, "/usr/bin/apxs2"
	return nil
}

// database is a container of its own on the run's network, of an image
// of Debian's MariaDB (made once): the suites' containers reach it there,
// and nothing else does.
func (dockerPlacement) database(ctx context.Context, r *Run, opt *mysqld.Options, alias string) (string, error) {
	c, network, err := r.dockerNetwork(ctx)
	if err != nil {
		return "", err
	}
	r.Progress.Step("docker: preparing the MariaDB image")
	img, err := mysqld.EnsureImage(ctx, c, r.imageOptions(opt.Log))
	if err != nil {
		return "", err
	}
	opt.Engine = mysqld.EngineDocker
	opt.Docker = &mysqld.DockerOptions{Client: c, Image: img, Network: network, Alias: alias, User: docker.User(), Labels: docker.Labels("db")}
	return "in a container", nil
}

// suites are containers of the build image that share the database
// container's network namespace, so that they reach it at 127.0.0.1 as on
// a host, and the run's internal network, nothing else.
func (dockerPlacement) suites(ctx context.Context, r *Run, db *mysqld.Server) (phptests.Executor, error) {
	if db.ContainerID == "" {
		return nil, errors.New("suites in containers: the database is not in a container")
	}
	c, err := r.dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	img, err := builders.EnsureBuildImage(ctx, c, r.imageOptions(r.Log))
	if err != nil {
		return nil, err
	}
	return &phptests.Container{Client: c, Image: img, Network: "container:" + db.ContainerID, User: docker.User(), Labels: docker.Labels("tests")}, nil
}

// server is a container of the serve image in the network namespace of
// the database's container (db), as the suites are: PHP reaches the
// server at 127.0.0.1 with a host server's accounts (db.LocalConn), the
// run's internal network and nothing else, and this host reaches Apache
// at the database container's address.
func (dockerPlacement) server(ctx context.Context, r *Run, db *mysqld.Server) (httpd.Placement, error) {
	if db.ContainerID == "" {
		return nil, errors.New("apache in a container: the database is not in a container")
	}
	c, err := r.dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	r.Progress.Step("docker: preparing the serve image (Apache, valgrind)")
	img, err := builders.EnsureServeImage(ctx, c, r.imageOptions(r.Log))
	if err != nil {
		return nil, err
	}
	return &httpd.Container{Client: c, Image: img, Network: "container:" + db.ContainerID, Labels: docker.Labels("server")}, nil
}

// wants leaves out what the images have: the compilers, Apache, valgrind
// and MariaDB.
func (dockerPlacement) wants(n Need) bool { return n.Builder != builders.KindHost }

func (dockerPlacement) cpuAccounting() string { return "the engine accounts each container's CPU time" }
