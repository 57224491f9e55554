package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// database is the run's MariaDB: one server in OUT/mysql for every stage
// that needs one (the test suites, the benchmark), started by the first
// that asks and stopped when the run ends. Under --builder docker it runs
// in a container on the run's network (see dockerSide).
type database struct {
	mu     sync.Mutex
	server *mysqld.Server
	log    *os.File // logs/mariadb.log: the server outlives the stage that started it
}

// Database returns the run's MariaDB, starting it on first use. It lives
// as long as the run: cancelling the run's context stops it, and so does
// the end of the run, whatever a stage's own context does. A start that
// fails is not remembered, so the next stage that asks tries again. Stages
// share the server: each works in databases of its own
// (Server.CreateDatabase) and reaches it through its Conn.
func (r *Run) Database(ctx context.Context) (*mysqld.Server, error) {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	if r.db.server != nil {
		return r.db.server, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	life := r.ctx
	if life == nil {
		life = ctx
	}
	const logName = "mariadb.log"
	log, err := os.OpenFile(filepath.Join(r.Dir, "logs", logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	// The servers' user connects to its socket (serverDir).
	dir, err := r.serverDir("mysql")
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	opt := mysqld.Options{Dir: dir, Log: log}
	where := "on this host"
	if r.Config.inDocker() {
		// In a container of its own on the run's network: the suites'
		// containers reach it there, and nothing else does.
		d, err := r.databaseContainer(ctx, log)
		if err != nil {
			log.Close()
			return nil, fmt.Errorf("start mariadb: %w", err)
		}
		opt.Engine, opt.Docker, where = mysqld.EngineDocker, d, "in a container"
	}
	r.Progress.Step("starting MariaDB %s (log logs/%s)", where, logName)
	s, err := mysqld.Start(life, opt)
	if err != nil {
		log.Close()
		return nil, err
	}
	fmt.Fprintf(r.Log, "MariaDB %s %s on %s:%d and %s (pid %d, log logs/%s)\n", s.Version, where, s.Host, s.Port, s.Socket, s.PID, logName)
	r.db.server, r.db.log = s, log
	return s, nil
}

// databaseContainer says where the run's MariaDB runs under --builder
// docker: the run's network, an image of Debian's MariaDB (made once).
func (r *Run) databaseContainer(ctx context.Context, log io.Writer) (*mysqld.DockerOptions, error) {
	c, network, err := r.dockerNetwork(ctx)
	if err != nil {
		return nil, err
	}
	r.Progress.Step("docker: preparing the MariaDB image")
	img, err := mysqld.EnsureImage(ctx, c, r.imageOptions(log))
	if err != nil {
		return nil, err
	}
	return &mysqld.DockerOptions{Client: c, Image: img, Network: network, User: docker.User(), Labels: docker.Labels("db")}, nil
}

// closeDatabase stops the run's MariaDB, if a stage started it. It is safe
// to call more than once.
func (r *Run) closeDatabase() {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	if r.db.server == nil {
		return
	}
	if err := r.db.server.Stop(); err != nil {
		r.Progress.Warn(firstLine(err.Error()))
		fmt.Fprintf(r.db.log, "%v\n", err)
	}
	r.db.log.Close()
	r.db.server, r.db.log = nil, nil
}
