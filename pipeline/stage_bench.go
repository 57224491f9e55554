package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/workloads/bench"
	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/workload"
)

// benchStage runs the contention benchmark on each target's ZTS builds:
// base vs head, statistics on vs off, against a MariaDB of its own.
type benchStage struct{}

func (benchStage) String() string { return "bench" }

func (benchStage) Run(ctx context.Context, r *Run) error {
	type job struct {
		t          *Target
		base, head *builders.Build
	}
	var jobs []job
	for _, t := range r.Targets {
		base, head := t.build("base", builders.ZTS), t.build("head", builders.ZTS)
		if base != nil && base.Module != "" {
			jobs = append(jobs, job{t, base, head})
		}
	}
	if len(jobs) == 0 {
		return Skip("no ZTS build with the Apache module")
	}
	r.Progress.Step("starting MariaDB")
	db, err := mysqld.Start(ctx, mysqld.Options{Dir: filepath.Join(r.Dir, "mysql"), Log: r.Log})
	if err != nil {
		return err
	}
	defer db.Stop()

	var regressed, errs []string
	for _, j := range jobs {
		dir := filepath.Join(r.Dir, "bench", safeName(j.t.Name))
		opt := bench.Options{
			Base: buildRef(j.base), Dir: dir, DB: workload.DB{Host: db.Host, Port: db.Port, Socket: db.Socket, User: db.User, Password: db.Password},
			DBPID: bench.ServerPID(db), Quick: r.Config.Bench != "report", Threads: r.Config.Threads, Passes: passes(r.Config),
			ServerCPUs: r.Config.ServerCPUs, LoadCPUs: r.Config.LoadCPUs, DBCPUs: r.Config.DBCPUs,
			Log: io.MultiWriter(r.Log, stepWriter{r.Progress, j.t.Name}),
		}
		if j.head != nil && j.head.Module != "" {
			opt.Head = buildRef(j.head)
		}
		res, err := bench.Run(ctx, opt)
		if res != nil {
			tr := r.targetResult(j.t)
			r.mu.Lock()
			tr.Bench = res
			r.mu.Unlock()
			r.save()
			if err := copyFile(filepath.Join(dir, "bench.txt"), filepath.Join(r.Dir, benchTxtName(j.t.Name, len(jobs)))); err != nil {
				r.Warn("bench", "bench.txt: %v", err)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", j.t.Name, err))
			continue
		}
		for _, m := range res.Measures {
			// A noisy measure on a shared machine informs; it does not gate.
			if m.Verdict == "regressed" && !m.Noisy {
				regressed = append(regressed, fmt.Sprintf("%s: %s", j.t.Name, m.Name))
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	if len(regressed) > 0 {
		return results.CheckFailed("the cost of statistics regressed: %s", strings.Join(regressed, ", "))
	}
	return nil
}

func buildRef(b *builders.Build) bench.BuildRef {
	return bench.BuildRef{PHP: b.PHP, Module: b.Module, SrcDir: b.Dir}
}

// benchTxtName is OUT/bench.txt for one target, OUT/bench-TARGET.txt for
// several.
func benchTxtName(target string, targets int) string {
	if targets == 1 {
		return "bench.txt"
	}
	return "bench-" + safeName(target) + ".txt"
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// stepWriter shows the benchmark's own step lines ("bench: ...") on the
// progress display; wrk's and Apache's output stays in the log.
type stepWriter struct {
	p      *Progress
	prefix string
}

func (w stepWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(string(b), "\n") {
		if step, ok := strings.CutPrefix(strings.TrimSpace(line), "bench: "); ok {
			w.p.Step("%s: %s", w.prefix, step)
		}
	}
	return len(b), nil
}

// passes is --passes, or for quick settings 4: the fewest with which a
// Mann-Whitney test can reach p <= 0.05, so that the exact measures (locks,
// instructions) get a verdict even in CI.
func passes(c *Config) int {
	if c.Passes == 0 && c.Bench == "quick" {
		return 4
	}
	return c.Passes
}
