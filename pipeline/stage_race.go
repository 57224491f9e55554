package pipeline

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/race"
	"github.com/patchproof/patchproof/workloads/concurrency"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/workload"
)

// raceStage is the concurrency check: on each target's ZTS base and head,
// the threaded server serves a fixed workload with 16 threads at once, and
// mysqlnd's counters must grow by exactly what the requests did; the TSan
// builds serve the same load, and a data race head has and base has not, in
// the change's code or ext/mysqlnd, fails the run.
type raceStage struct{}

// flags: how many requests the concurrency check serves at once.
func (raceStage) flags(fs *flag.FlagSet, c *Config) {
	fs.IntVar(&c.RaceRequests, "race-requests", 0, fmt.Sprintf("requests the concurrency check serves at once on each ZTS build, %d to %d (default 20000)", MinRaceRequests, MaxRaceRequests))
}

func (raceStage) String() string { return results.StageRace }

func (raceStage) Needs(cfg *Config) []Need {
	return cfg.placed(
		// In containers Apache is in the serve image.
		Need{Tool: "apache2", Package: "apache2", Why: "16 threads of one process serve the concurrency check", Builder: builders.KindHost},
		Need{Tool: "addr2line", Package: "binutils", Why: "names the frames of ThreadSanitizer's reports"},
		Need{Tool: "gcc", Package: "libtsan2", Why: "-fsanitize=thread and the TSan runtime (gcc -print-file-name=libtsan.so)"},
	)
}

// tsanRequests is the TSan runs' load: ThreadSanitizer makes every request
// several times slower, and it reports a race on the first two unordered
// accesses it sees, so a few thousand requests find what tens of thousands
// would.
const tsanRequests = 2000

type raceJob struct {
	t          *Target
	base, head *builders.Build // ZTS
	tsan       [2]*builders.Build
}

func (s raceStage) Run(ctx context.Context, r *Run) error {
	var jobs []raceJob
	for _, t := range r.Targets {
		j := raceJob{t: t, base: t.build(side.Base, builders.ZTS), head: t.build(side.Head, builders.ZTS)}
		if j.base == nil || j.head == nil || j.base.Module == "" || j.head.Module == "" {
			continue
		}
		j.tsan = [2]*builders.Build{t.build(side.Base, builders.TSan), t.build(side.Head, builders.TSan)}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return Skip("no ZTS base and head with the Apache module (--variants without zts, or a ZTS build failed)")
	}
	db, err := r.Database(ctx)
	if err != nil {
		return err
	}
	place, err := r.place.server(ctx, r, db)
	if err != nil {
		return err
	}
	var judged []race.Target
	for _, j := range jobs {
		res := &race.Result{Threads: threads(r.Config), OPcache: opcacheState(j.base.Module, j.head.Module)}
		s.measure(ctx, r, j, workload.DB{Conn: db.LocalConn()}, place, res)
		r.setTarget(j.t, func(tr *results.TargetResult) { tr.Race = res })
		judged = append(judged, race.Target{Name: j.t.Name, Result: res})
	}
	return race.Judge(judged)
}

// opcacheState is how the counters' servers of the builds base and head
// run OPcache (httpd loads a build's own where it has one), as the race
// check's result states it; ThreadSanitizer's servers never do.
func opcacheState(base, head string) string {
	state, with, _ := httpd.OPcacheState(httpd.Named{Name: string(side.Base), Module: base}, httpd.Named{Name: string(side.Head), Module: head})
	if len(with) == 0 {
		return state
	}
	return state + "; in the counters' servers, not ThreadSanitizer's (PHP loads it with RTLD_DEEPBIND, which the sanitizer's runtime refuses)"
}

// measure runs both parts on one target, recording into res what it
// measured and what could not run; race.Judge decides what it means.
func (s raceStage) measure(ctx context.Context, r *Run, j raceJob, db workload.DB, place httpd.Placement, res *race.Result) {
	dir, err := r.serverDir(s.String(), safeName(j.t.Name))
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return
	}
	step := func(format string, a ...any) { r.Progress.Step("%s: %s", j.t.Name, fmt.Sprintf(format, a...)) }

	// Memory statistics off first, as mysqlnd's default has them; then on,
	// in a phase of its own with a quarter of the requests: its mem_*
	// counters move on every allocation, dozens of times a request, so
	// fewer requests make as many chances to lose an update.
	for _, memory := range []bool{false, true} {
		requests := phaseRequests(r.Config.RaceRequests, memory)
		for i, b := range []*builders.Build{j.base, j.head} {
			sd := side.Sides[i]
			c := &race.Counters{Side: sd, Build: b.Label, Memory: memory}
			step("%s under %d threads", c.Name(), res.Threads)
			run, err := concurrency.Counters(ctx, concurrency.Options{
				Module: b.Module, Dir: filepath.Join(dir, counterDir(sd, memory)), DB: db,
				Threads: res.Threads, Requests: requests, MemoryStatistics: memory, Placement: place,
				Log: r.Log, Step: func(msg string) { step("%s: %s", c.Name(), msg) },
			})
			if err != nil {
				res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", c.Name(), err))
				continue
			}
			c.Check = race.JudgeCounters(race.CounterRun{
				Requests: run.Requests, PerRequest: run.PerRequest, Grew: run.Grew,
				DBConnections: run.DBConnections, ConnsPerReq: concurrency.ConnectionsPerRequest, CPUs: run.CPUs,
			})
			c.Run = run
			res.Counters = append(res.Counters, c)
			step("%s: %s", c.Name(), c.Check)
			if len(run.ChildSignals) > 0 {
				step("%s: PHP crashed in Apache's child: %s", c.Name(), strings.Join(run.ChildSignals, ", "))
			}
		}
	}

	tsan, err := s.tsan(ctx, r, j, db, place, filepath.Join(dir, "tsan"), filepath.Join(r.Dir, s.String(), safeName(j.t.Name), "tsan"), step)
	if err != nil {
		res.Errors = append(res.Errors, "ThreadSanitizer: "+err.Error())
		return
	}
	res.TSan = tsan
}

// phaseRequests is how many requests a counter phase serves: the
// configured count (setDefaults has resolved "the default"), a quarter of
// it with memory statistics on.
func phaseRequests(configured int, memory bool) int {
	if memory {
		return max(1, configured/4)
	}
	return configured
}

// counterDir is the run directory of a side's counter run.
func counterDir(sd side.Side, memory bool) string {
	if memory {
		return string(sd) + "-memory"
	}
	return string(sd)
}

// tsan serves the same load on both TSan builds and compares their
// reports. The servers and the runtime's reports are in dir; each side's
// reports, read together, are kept in keep, which the results name.
func (raceStage) tsan(ctx context.Context, r *Run, j raceJob, db workload.DB, place httpd.Placement, dir, keep string, step func(string, ...any)) (*race.TSan, error) {
	for i, b := range j.tsan {
		if b == nil {
			return nil, fmt.Errorf("no TSan build of %s (the build stage says why)", side.Sides[i])
		}
		if b.Module == "" {
			return nil, fmt.Errorf("the TSan build of %s has no Apache module", side.Sides[i])
		}
	}
	runtime, err := concurrency.TSanRuntime(ctx, "")
	if err != nil {
		return nil, err
	}
	touched, err := j.t.Repo.ChangedFiles(j.t.Base, j.t.Head)
	if err != nil {
		return nil, err
	}
	out := &race.TSan{Requests: tsanRequests, Touched: touched}
	var reports [2][]race.Report
	for i, b := range j.tsan {
		sd := side.Sides[i]
		logs := filepath.Join(dir, string(sd)+"-reports")
		if err := concurrency.PrepareTSanLogs(logs); err != nil {
			return nil, err
		}
		step("%s: ThreadSanitizer build under %d threads, %d requests", sd, threads(r.Config), tsanRequests)
		start := time.Now()
		err := concurrency.Hammer(ctx, concurrency.Options{
			Module: b.Module, Dir: filepath.Join(dir, string(sd)), DB: db,
			Threads: threads(r.Config), Requests: tsanRequests,
			// The reports are written where this host reads them.
			Placement: place.WithBinds(docker.Bind{Path: logs}),
			Environ:   concurrency.TSanEnviron(runtime, logs),
			Log:       r.Log, Step: func(msg string) { step("%s (TSan): %s", sd, msg) },
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sd, err)
		}
		data, err := concurrency.TSanLogs(logs)
		if err != nil {
			return nil, err
		}
		raw := filepath.Join(keep, string(sd)+".tsan.log")
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return nil, err
		}
		if err := safefs.WriteIn(r.Dir, raw, data, 0o644); err != nil {
			return nil, err
		}
		reports[i], err = race.Parse(data, race.Addr2Line(ctx, map[string]string{filepath.Base(b.Module): b.Module}))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sd, err)
		}
		out.Sides = append(out.Sides, &race.TSanSide{
			Side: sd, Build: b.Label, Reports: reports[i], Log: relPath(r.Dir, raw), DurationMS: time.Since(start).Milliseconds(),
		})
		step("%s (TSan): %s", sd, pluralOf(len(reports[i]), "distinct report", "distinct reports"))
	}
	out.Diff = race.CompareRaces(reports[0], reports[1], race.Scope{Touched: touched, Dirs: race.DefaultDirs})
	return out, nil
}

func threads(c *Config) int {
	if c.Threads > 0 {
		return c.Threads
	}
	return concurrency.DefaultThreads
}

func pluralOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// extraVariants are the ThreadSanitizer builds the check serves its load
// on, made from the ZTS builds: none without them.
func (raceStage) extraVariants(cfg *Config) []builders.Variant {
	if slices.Contains(cfg.Variants, builders.ZTS) {
		return []builders.Variant{builders.TSan}
	}
	return nil
}
