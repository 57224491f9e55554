package pipeline

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"golang.org/x/sync/errgroup"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/suites"
	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/phptests"
)

// deflakeRuns is how many times each differing test is re-run per build.
const deflakeRuns = 3

// testsStage runs ext/mysqlnd, ext/mysqli and ext/pdo_mysql on every build
// against the run's MariaDB, then compares base and head.
type testsStage struct{}

func (testsStage) String() string { return results.StageTests }

func (testsStage) Needs(cfg *Config) []Need {
	// In containers Debian's MariaDB has an image of its own, and the
	// suites run in the build image.
	return cfg.placed(only(builders.KindHost,
		Need{Tool: "mariadbd", Package: "mariadb-server", Why: "the MySQL-compatible server the suites run against"},
		Need{Tool: "mariadb-install-db", Package: "mariadb-server", Why: "initialises the server's datadir"},
	)...)
}

type suiteJob struct {
	t     *Target
	build *builders.Build
	name  string // e.g. PHP-8.2-base-nts
}

func (s testsStage) Run(ctx context.Context, r *Run) error {
	var jobs []suiteJob
	for _, t := range r.Targets {
		for _, b := range t.Builds {
			// A TSan build is the concurrency check's alone: its speed and
			// its sanitizer's output are not PHP's.
			if b.OK && b.Variant != builders.TSan {
				jobs = append(jobs, suiteJob{t: t, build: b, name: fmt.Sprintf("%s-%s-%s", safeName(t.Name), b.Side, b.Variant)})
			}
		}
	}
	if len(jobs) == 0 {
		return Skip("no successful builds")
	}
	servers, err := r.suiteServers(ctx, min(r.Config.SuiteJobs, len(jobs)))
	if err != nil {
		return err
	}
	defer r.CloseExtraDatabases()
	if err := os.MkdirAll(filepath.Join(r.Dir, s.String()), 0o755); err != nil {
		return err
	}
	var rounds atomic.Int64 // names each re-run's private copy and database
	r.Progress.Step("tests: %s", suiteJobsText(r.Config.SuiteJobs, len(servers), jobs))
	// A build's run holds a server alone: suites that change its global
	// state (their CONFLICTS group) never meet another build's there.
	pool := make(chan *suiteServer, len(servers))
	for _, sv := range servers {
		pool <- sv
	}

	runOne := func(ctx context.Context, j suiteJob, tests []string, round int) (*suites.RunResult, error) {
		var sv *suiteServer
		select {
		case sv = <-pool:
			defer func() { pool <- sv }()
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		dbName := strings.NewReplacer("-", "_", ".", "_").Replace(fmt.Sprintf("pp_%s_%d", j.name, round))
		if err := sv.db.CreateDatabase(ctx, dbName); err != nil {
			return nil, err
		}
		work := filepath.Join(r.Dir, s.String(), fmt.Sprintf("%s-%d", j.name, round))
		logf, err := safefs.CreateIn(r.Dir, work+".log", 0o644)
		if err != nil {
			return nil, err
		}
		defer logf.Close()
		fmt.Fprintf(logf, "patchproof: against MariaDB %d of %d (%s)\n", sv.n, len(servers), sv.db.LocalConn())
		return phptests.Run(ctx, phptests.Options{
			Build: j.name, PHP: j.build.PHP, SrcDir: j.build.Dir, WorkDir: work, Tests: tests, Log: logf, Exec: sv.exec,
			DB: sv.db.LocalConn().WithDatabase(dbName), Conflicts: &sv.conflicts,
			ASan: j.build.Variant == builders.DebugZTSASan,
		})
	}

	// Every build's suites run, whatever another build's do: a run that
	// could not be made is its target's error, not the end of the others.
	runs := make([]*suites.RunResult, len(jobs))
	runErrs := make([]error, len(jobs))
	var g errgroup.Group
	g.SetLimit(r.Config.SuiteJobs)
	var mu sync.Mutex
	for i, j := range jobs {
		g.Go(func() error {
			r.Progress.Step("%s: running the suites (log tests/%s-0.log)", j.name, j.name)
			stop := heartbeat(r.Progress, time.Minute, func() string { return j.name + ": the suites are running" })
			run, err := runOne(ctx, j, nil, 0)
			stop()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				runErrs[i] = fmt.Errorf("suites on %s: %w", j.name, err)
				r.Progress.Step("%s: %v", j.name, firstLine(err.Error()))
				return nil
			}
			runs[i] = run
			r.Progress.Step("%s: %s in %.0fs", j.name, countsText(run.Counts), run.DurationSeconds)
			return nil
		})
	}
	g.Wait()

	var judged []suites.Target
	for _, t := range r.Targets {
		res := &suites.Result{Server: servers[0].db.Version}
		for i, j := range jobs {
			if j.t != t {
				continue
			}
			if runErrs[i] != nil {
				res.Errors = append(res.Errors, runErrs[i].Error())
			} else {
				res.Runs = append(res.Runs, runs[i])
			}
		}
		for _, v := range r.Config.Variants {
			base, head := findRun(jobs, runs, t, side.Base, v), findRun(jobs, runs, t, side.Head, v)
			if base == nil || head == nil {
				continue
			}
			c := suites.Compare(base, head)
			rerun := func(ctx context.Context, build string, tests []string) (map[string]suites.TestResult, error) {
				for _, j := range jobs {
					if j.name == build {
						round := int(rounds.Add(1))
						r.Progress.Step("%s: re-running %d differing tests", build, len(tests))
						run, err := runOne(ctx, j, tests, round)
						if err != nil {
							return nil, err
						}
						return run.ByName(), nil
					}
				}
				return nil, fmt.Errorf("no build %s", build)
			}
			dc, err := suites.Deflake(ctx, c, deflakeRuns, rerun)
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
				dc = c
			}
			res.Comparisons = append(res.Comparisons, &suites.VariantComparison{Variant: string(v), Comparison: dc})
		}
		r.setTarget(t, func(tr *results.TargetResult) { tr.Tests = res })
		judged = append(judged, suites.Target{Name: t.Name, Result: res})
	}
	return suites.Judge(judged)
}

// suiteServer is one of the tests stage's MariaDB servers, with the
// executor that reaches it and the conflict groups of the runs against it.
type suiteServer struct {
	n         int // 1 is the run's own
	db        *mysqld.Server
	exec      phptests.Executor
	conflicts phptests.Conflicts
}

// suiteServers are n servers for the suites: the run's own and n-1 more,
// so that each build running at once has one of its own.
func (r *Run) suiteServers(ctx context.Context, n int) ([]*suiteServer, error) {
	db, err := r.Database(ctx)
	if err != nil {
		return nil, err
	}
	dbs := []*mysqld.Server{db}
	if n > 1 {
		more, err := r.ExtraDatabases(ctx, n-1)
		if err != nil {
			return nil, err
		}
		dbs = append(dbs, more...)
	}
	var servers []*suiteServer
	for i, db := range dbs {
		exec, err := r.place.suites(ctx, r, db)
		if err != nil {
			r.CloseExtraDatabases()
			return nil, err
		}
		servers = append(servers, &suiteServer{n: i + 1, db: db, exec: exec})
	}
	return servers, nil
}

// findRun is the run of t's build of a side and variant, nil when it did
// not run.
func findRun(jobs []suiteJob, runs []*suites.RunResult, t *Target, s side.Side, v builders.Variant) *suites.RunResult {
	for i, j := range jobs {
		if j.t == t && j.build.Side == s && j.build.Variant == v {
			return runs[i]
		}
	}
	return nil
}

func countsText(c suites.Counts) string {
	return fmt.Sprintf("%d tests: %d pass, %d fail, %d skip, %d xfail, %d bork, %d leak", c.Total, c.Pass, c.Fail, c.Skip, c.XFail, c.Bork, c.Leak)
}

// suiteJobsText says how many builds run their suites at once, against how
// many servers, and which conflict groups, named by the builds' own
// CONFLICTS files, are kept apart: "jobs: 4, a MariaDB each (4 servers):
// conflict group mysql (ext/mysqli/tests, ext/pdo_mysql/tests) never
// shared by two builds". A file that cannot be read is left out here; the
// suite's run reports it.
func suiteJobsText(jobs, servers int, sj []suiteJob) string {
	bySuite := map[string][]string{} // group: its suites
	for _, j := range sj {
		for _, suite := range phptests.DefaultSuites {
			groups, err := phptests.SuiteConflicts(j.build.Dir, suite)
			if err != nil {
				continue
			}
			for _, g := range groups {
				if !slices.Contains(bySuite[g], suite) {
					bySuite[g] = append(bySuite[g], suite)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "jobs: %d, ", jobs)
	if servers == 1 {
		b.WriteString("one MariaDB, one build at a time on it")
	} else {
		fmt.Fprintf(&b, "a MariaDB each (%d servers), a build's run alone on its server", servers)
	}
	for _, g := range slices.Sorted(maps.Keys(bySuite)) {
		dirs := bySuite[g]
		slices.Sort(dirs)
		fmt.Fprintf(&b, "; conflict group %s (%s) never shared by two builds", g, strings.Join(dirs, ", "))
	}
	return b.String()
}
