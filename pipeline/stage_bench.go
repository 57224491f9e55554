package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/patchproof/patchproof/internal/safefs"

	"golang.org/x/perf/benchfmt"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	benchcheck "github.com/patchproof/patchproof/verify/bench"
	"github.com/patchproof/patchproof/workloads/bench"
	"github.com/patchproof/patchproof/workloads/workload"
)

// benchStage runs the contention benchmark on each target's ZTS builds:
// base vs head, statistics on vs off, against the run's MariaDB.
type benchStage struct{}

func (benchStage) String() string { return results.StageBench }

func (benchStage) Needs(cfg *Config) []Need {
	// In containers Apache and valgrind are in the serve image.
	needs := only(builders.KindHost,
		Need{Tool: "apache2", Package: "apache2", Why: "mpm_event with 16 threads loads the ZTS module"},
		Need{Tool: "valgrind", Package: "valgrind", Why: "callgrind counts instructions per request"},
	)
	return cfg.placed(append(needs,
		Need{Tool: "wrk", Package: "wrk", Why: "the HTTP load"},
		Need{Tool: "gcc", Package: "gcc", Why: "compiles the lock counter"},
		// On this host in both modes: it samples the server's processes
		// by their PIDs here.
		Need{Tool: "perf", Package: "linux-perf", Why: "perf record -e cpu-clock profiles each arm (the default measures)"},
	)...)
}

func (s benchStage) Run(ctx context.Context, r *Run) error {
	type job struct {
		t          *Target
		base, head *builders.Build
	}
	var jobs []job
	for _, t := range r.Targets {
		base, head := t.build(side.Base, builders.ZTS), t.build(side.Head, builders.ZTS)
		if base != nil && base.Module != "" {
			jobs = append(jobs, job{t, base, head})
		}
	}
	if len(jobs) == 0 {
		return Skip("no ZTS build with the Apache module")
	}
	db, err := r.Database(ctx)
	if err != nil {
		return err
	}
	place, err := r.place.server(ctx, r, db)
	if err != nil {
		return err
	}

	var (
		judged []benchcheck.Target
		txt    []benchTarget
	)
	for _, j := range jobs {
		servers, err := r.serverDir(s.String(), safeName(j.t.Name))
		if err != nil {
			return err
		}
		opt := bench.Options{
			Measures: r.Config.BenchMeasures,
			Base:     buildRef(j.base), Dir: filepath.Join(r.Dir, s.String(), safeName(j.t.Name)), ServerDir: servers,
			DB: workload.DB{Conn: db.LocalConn()}, DBPID: db.PID,
			Quick: r.Config.Bench != BenchReport, Threads: r.Config.Threads, Passes: r.Config.Passes,
			Sweep: r.Config.Sweep, AA: r.Config.AA, NoPin: r.Config.NoPin,
			Placement:  place,
			ServerCPUs: r.Config.ServerCPUs, LoadCPUs: r.Config.LoadCPUs, DBCPUs: r.Config.DBCPUs,
			Log:  r.Log,
			Step: func(step string) { r.Progress.Step("%s: %s", j.t.Name, step) },
		}
		if j.head != nil && j.head.Module != "" {
			opt.Head = buildRef(j.head)
		}
		res, err := bench.Run(ctx, opt)
		var checked *benchcheck.Result
		if res != nil {
			checked = &benchcheck.Result{Result: *res}
			r.setTarget(j.t, func(tr *results.TargetResult) { tr.Bench = checked })
		}
		judged = append(judged, benchcheck.Target{Name: j.t.Name, Result: checked, Err: err})
		if err == nil {
			txt = append(txt, benchTarget{j.t.Name, res})
		}
	}
	if len(txt) > 0 {
		if err := writeBenchTxt(filepath.Join(r.Dir, "bench.txt"), txt); err != nil {
			r.Warn(s.String(), "bench.txt: %v", err)
		}
	}
	return benchcheck.Judge(judged)
}

func buildRef(b *builders.Build) bench.BuildRef {
	return bench.BuildRef{PHP: b.PHP, Module: b.Module, SrcDir: b.Dir}
}

// benchTarget is one target's benchmark, for bench.txt.
type benchTarget struct {
	name string
	res  *bench.Result
}

// writeBenchTxt writes every target's samples, in plan order, into one
// file in the Go benchmark format, each under a "target: NAME"
// configuration line. A configuration line applies to the results after
// it, so every result carries its target, and benchstat, whose tables are
// split by configuration, compares a target's arms with each other only.
func writeBenchTxt(path string, targets []benchTarget) error {
	var txt bench.BenchTxt
	for _, t := range targets {
		if err := txt.Add(t.res, benchfmt.Config{Key: "target", Value: []byte(t.name), File: true}); err != nil {
			return fmt.Errorf("write %s: target %s: %w", path, t.name, err)
		}
	}
	f, err := safefs.CreatePath(path, 0o644)
	if err != nil {
		return err
	}
	if err := txt.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// HostChecks are what the benchmark needs of this machine beyond its
// tools: perf may profile this user's processes, and a server's CPU time
// is read from a cgroup of its own where this user may make one.
func (benchStage) HostChecks(o HostOptions) []HostCheck {
	return []HostCheck{paranoidCheck(o), cgroupCheck(o)}
}
