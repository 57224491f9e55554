package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/patchproof/patchproof/internal/safefs"

	"golang.org/x/sync/errgroup"

	"github.com/patchproof/patchproof/workloads/mysqld"
)

// database is the run's MariaDB: one server in OUT/mysql for every stage
// that needs one (the test suites, the benchmark), started by the first
// that asks and stopped when the run ends. Under --builder docker it runs
// in a container on the run's network (see dockerSide). extra are the
// tests stage's servers beyond it (ExtraDatabases).
type database struct {
	mu     sync.Mutex
	server *mysqld.Server
	log    *os.File // logs/mariadb.log: the server outlives the stage that started it
	extra  []runningDB
}

type runningDB struct {
	server *mysqld.Server
	log    *os.File
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
	s, log, err := r.startDatabase(ctx, 1)
	if err != nil {
		return nil, err
	}
	r.db.server, r.db.log = s, log
	return s, nil
}

// ExtraDatabases starts n more servers beside the run's own, at once, for
// a stage whose clients change a server's global state (the suites' SET
// GLOBAL, CREATE USER): each concurrently running build then has a server
// of its own. They are the second to the n+1th: OUT/mysql-2…, logs
// mariadb-2.log…, on the run's network as mariadb-2…. The stage stops them
// with CloseExtraDatabases; the run's end does too, whatever the stage
// did. If one fails to start, those that did are stopped.
func (r *Run) ExtraDatabases(ctx context.Context, n int) ([]*mysqld.Server, error) {
	started := make([]runningDB, n)
	var g errgroup.Group
	for i := range n {
		g.Go(func() error {
			s, log, err := r.startDatabase(ctx, i+2)
			started[i] = runningDB{s, log}
			return err
		})
	}
	err := g.Wait()
	r.db.mu.Lock()
	var servers []*mysqld.Server
	for _, d := range started {
		if d.server != nil {
			r.db.extra = append(r.db.extra, d)
			servers = append(servers, d.server)
		}
	}
	r.db.mu.Unlock()
	if err != nil {
		r.CloseExtraDatabases()
		return nil, err
	}
	return servers, nil
}

// CloseExtraDatabases stops the servers ExtraDatabases started. It is safe
// to call more than once.
func (r *Run) CloseExtraDatabases() {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	r.closeExtraLocked()
}

func (r *Run) closeExtraLocked() {
	for _, d := range r.db.extra {
		r.stopDatabase(d.server, d.log)
	}
	r.db.extra = nil
}

// startDatabase starts the run's nth server (1 the run's own): its
// directory, its log and, under --builder docker, its name on the run's
// network are numbered past the first.
func (r *Run) startDatabase(ctx context.Context, n int) (*mysqld.Server, *os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	life := r.ctx
	if life == nil {
		life = ctx
	}
	dirName, logName, alias := "mysql", "mariadb.log", ""
	if n > 1 {
		dirName, logName, alias = fmt.Sprintf("mysql-%d", n), fmt.Sprintf("mariadb-%d.log", n), fmt.Sprintf("mariadb-%d", n)
	}
	log, err := safefs.AppendPath(filepath.Join(r.Dir, "logs", logName), 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("start mariadb: %w", err)
	}
	// The servers' user connects to its socket (serverDir).
	dir, err := r.serverDir(dirName)
	if err != nil {
		log.Close()
		return nil, nil, fmt.Errorf("start mariadb: %w", err)
	}
	opt := mysqld.Options{Dir: dir, Log: log}
	where, err := r.place.database(ctx, r, &opt, alias)
	if err != nil {
		log.Close()
		return nil, nil, fmt.Errorf("start mariadb: %w", err)
	}
	r.Progress.Step("starting MariaDB %s (log logs/%s)", where, logName)
	s, err := mysqld.Start(life, opt)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	fmt.Fprintf(r.Log, "MariaDB %s %s on %s:%d and %s (pid %d, log logs/%s), TLS with a CA made at its start\n", s.Version, where, s.Host, s.Port, s.Socket, s.PID, logName)
	return s, log, nil
}

// closeDatabase stops the run's MariaDB, if a stage started it. It is safe
// to call more than once.
func (r *Run) closeDatabase() {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	r.closeExtraLocked()
	if r.db.server == nil {
		return
	}
	r.stopDatabase(r.db.server, r.db.log)
	r.db.server, r.db.log = nil, nil
}

func (r *Run) stopDatabase(s *mysqld.Server, log *os.File) {
	if err := s.Stop(); err != nil {
		r.Progress.Warn(firstLine(err.Error()))
		fmt.Fprintf(log, "%v\n", err)
	}
	log.Close()
}
