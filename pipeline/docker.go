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

// suiteExecutor is where the test suites run against db: on this host, or
// under --builder docker in containers of the build image that share the
// database container's network namespace, so that they reach it at
// 127.0.0.1 as on a host, and the run's internal network, nothing else.
func (r *Run) suiteExecutor(ctx context.Context, db *mysqld.Server) (phptests.Executor, error) {
	if !r.Config.inDocker() {
		return phptests.Host{}, nil
	}
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

// serverContainer is where the race check and the benchmark run a build's
// Apache module: this host but under --builder docker, where it is a
// container of the serve image in the network namespace of the database's
// container (db), as the suites are: PHP reaches the server at 127.0.0.1
// with a host server's accounts (db.LocalConn), the run's internal network
// and nothing else, and this host reaches Apache at the database
// container's address.
func (r *Run) serverContainer(ctx context.Context, db *mysqld.Server) (httpd.Placement, error) {
	if !r.Config.inDocker() {
		return httpd.Host{}, nil
	}
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
