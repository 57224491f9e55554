// Package pipeline owns a patchproof run: its Config (the one place the
// environment is read), the plan of targets (each a base and a head commit),
// the ordered list of stages that check them and the wrappers around every
// stage (recording, selection, logs), what the stages share for the run's
// length (the MariaDB of Run.Database), and the run's end: its verdict and
// the report of it, delivered once (finish). The Result every stage adds to
// is pipeline/results'; rendering and posting the report is pipeline/report's.
//
// A failed stage does not stop the others; each stage checks its own
// inputs, so a run always ends with a report that says what passed, what
// failed and what could not run.
package pipeline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/internal/cachedir"
	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/internal/safefs"
	"github.com/patchproof/patchproof/internal/version"
	"github.com/patchproof/patchproof/pipeline/checkout"
	"github.com/patchproof/patchproof/pipeline/report"
	"github.com/patchproof/patchproof/pipeline/results"
)

// Version is patchproof's version, shown in reports: the binary's module
// version and VCS revision.
var Version = version.String()

// Run is the state of one pipeline run, shared by its stages. Stages pass
// data to each other through its typed fields, and share the run-scoped
// resources it starts on first use (Database).
type Run struct {
	Config   *Config
	Dir      string    // the run directory (--out)
	Cache    string    // the cache directory
	Log      io.Writer // the current stage's log
	Progress *Progress
	Targets  []*Target
	Result   *results.Result

	// ctx is the run's context: the run-scoped resources live as long as
	// it does.
	ctx   context.Context
	place placement // where the code under test runs (--builder)
	db    database
	dock  dockerSide // under --builder docker
	// servers is where the run's servers keep their own directories: each
	// server's configuration and docroot, what its unprivileged user
	// writes (ThreadSanitizer's reports, lock tables, callgrind dumps),
	// and the database's directory, whose socket that user connects to
	// (serverDir); "" until the first asks.
	servers string
	// serversUnlock releases the lock a servers' directory made for this
	// run holds (serverDir).
	serversUnlock func()
	// builders hold the builds the run made or reused (shared locks on
	// their cache entries), for its stages to read, until it ends.
	buildHolders []*builders.Builder

	mu   sync.Mutex
	file *resultFile
}

// stageResult returns the Result entry of a stage, creating it.
func (r *Run) stageResult(name string) *results.StageResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.Result.Stages {
		if s.Name == name {
			return s
		}
	}
	s := &results.StageResult{Name: name, Status: results.StatusPending}
	r.Result.Stages = append(r.Result.Stages, s)
	return s
}

// begin records every stage as pending and writes results.json: from
// here on, what a run that dies leaves says which stages it never
// finished.
func (r *Run) begin(stages []Stage) {
	for _, s := range stages {
		r.stageResult(s.String())
	}
	r.save()
}

// Warn records a warning of the current stage.
func (r *Run) Warn(stage, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	sr := r.stageResult(stage)
	r.mu.Lock()
	sr.Warnings = append(sr.Warnings, msg)
	r.mu.Unlock()
	fmt.Fprintf(r.Log, "warning: %s\n", msg)
	r.Progress.Warn(msg)
}

// save writes results.json. A failure to write it is reported once on the
// progress display; the run goes on.
func (r *Run) save() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.file.update(nil); err != nil {
		r.Progress.Warn(err.Error())
	}
}

// stages is the pipeline, in the order it runs. A stage is a type with
// String (its name: one of results' Stage constants), Run and Needs, in a
// file of its own, and an entry here. What else a stage needs it declares
// itself, with an optional method: checks of this machine beyond its tools
// (hostChecker), builds beyond --variants (variantNeeder), flags of its
// own (flagger), being what
// every check needs (prerequisite). --stages, results.json's stages, the
// build stage, a comment's stages= (Prerequisites) and doctor take the
// stages, their names and what they need from this list alone. The report
// that ends the run is no stage of it (finish): it walks results' list of
// each target's checks (results.TargetResult.Checks).
var stages = []Stage{
	checkoutStage{},
	buildStage{},
	modulesStage{},
	codediffStage{},
	abiStage{},
	testsStage{},
	raceStage{},
	benchStage{},
}

// Stages returns the pipeline's stages in order.
func Stages() []Stage { return slices.Clone(stages) }

// A prerequisite is a stage that makes what the checks after it read (the
// source trees, the builds): every check needs it.
type prerequisite interface{ prerequisite() }

// Prerequisites lists, in order, the names of the stages every check
// needs: a comment that names a check runs them too (pipeline/trigger).
func Prerequisites() []string {
	var names []string
	for _, s := range stages {
		if _, ok := s.(prerequisite); ok {
			names = append(names, s.String())
		}
	}
	return names
}

// A flagger is a stage with settings of its own: it defines their flags,
// into the fields of Config that hold them.
type flagger interface {
	flags(fs *flag.FlagSet, c *Config)
}

// StageFlags defines, on fs, the flags of the stages that have settings
// of their own (such as the concurrency check's --race-requests), into c.
func StageFlags(fs *flag.FlagSet, c *Config) {
	for _, s := range stages {
		if f, ok := s.(flagger); ok {
			f.flags(fs, c)
		}
	}
}

// StageNames lists the stages' names in order.
func StageNames() []string {
	names := make([]string, len(stages))
	for i, s := range stages {
		names[i] = s.String()
	}
	return names
}

// Execute runs the pipeline. It returns nil when every check passed, an
// error wrapping results.ErrCheckFailed when a check failed, and any other
// error when the run could not be completed. Input errors are
// *results.InputError and are reported before anything is written.
func Execute(ctx context.Context, cfg Config) (*results.Result, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cache := cfg.Cache
	if cache == "" {
		var err error
		if cache, err = cachedir.Default(cfg.Getenv); err != nil {
			return nil, err
		}
	}
	// Before the cache is made: an --out that overlaps it is refused
	// with nothing written.
	if err := checkOutApart(&cfg, cache); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, &results.InputError{Input: "--cache " + cache, Err: err}
	}
	// Bad input is found here, before the run directory is touched.
	if err := checkOut(cfg.Out); err != nil {
		return nil, err
	}
	progress := NewProgress(cfg.Stderr, cfg.Getenv("GITHUB_ACTIONS") == "true")
	// The patchproof process records itself where every run on this host
	// looks, and stops what killed runs left running, whatever --out they
	// used: CI removes a job's --out before the next job.
	if proc.Marked() {
		abs, _ := filepath.Abs(cfg.Out)
		killed, release, err := proc.ClaimRun(filepath.Join(cache, "runs"), abs)
		defer release()
		if len(killed) > 0 {
			progress.Warn(fmt.Sprintf("stopped %d processes that killed runs left running (pids %v)", len(killed), killed))
		}
		if err != nil {
			progress.Warn("stop what killed runs left: " + err.Error())
		}
	}
	progress.StageStart("plan")
	targets, err := plan(ctx, &cfg, cache, cfg.Stderr)
	progress.StageEnd("plan", err)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, t := range targets {
			t.Repo.Close()
		}
	}()
	out, err := prepareOut(cfg.Out)
	if err != nil {
		return nil, err
	}
	// The patchproof process marks what it starts (cmd/patchproof): it
	// claims --out, and stops what a killed run there left running.
	if proc.Marked() {
		killed, err := proc.ClaimDir(out)
		if err != nil {
			return nil, &results.InputError{Input: "--out " + cfg.Out, Err: err}
		}
		if len(killed) > 0 {
			progress.Warn(fmt.Sprintf("stopped %d processes a killed run in %s left running (pids %v)", len(killed), out, killed))
		}
	}
	r := &Run{
		Config:   &cfg,
		Dir:      out,
		Cache:    cache,
		Log:      io.Discard,
		Progress: progress,
		Targets:  targets,
		ctx:      ctx,
		place:    placementOf(cfg.Builder),
		Result: &results.Result{
			SchemaVersion: results.SchemaVersion,
			Tool:          "patchproof",
			Version:       Version,
			StartedAt:     time.Now().UTC().Truncate(time.Second),
			Status:        results.StatusRunning,
			Settings:      settingsOf(&cfg),
			Machine:       machine(),
			RunURL:        cfg.RunURL(),
		},
	}
	r.file = &resultFile{path: filepath.Join(out, "results.json"), res: r.Result}
	r.begin(stages)

	// Deferred in this order, the database goes before its network, and
	// the servers are stopped by their stages before their directories go.
	defer r.closeServerDirs()
	defer r.closeDocker()
	defer r.closeDatabase()
	defer r.releaseBuilds()
	runStages(ctx, r, stages, record, selected, logged)
	r.closeDatabase()
	r.closeDocker()
	r.closeServerDirs()
	// Nothing reads a build after the stages: a prune may take them now.
	r.releaseBuilds()

	finish(ctx, r)
	r.Progress.Summary(r.Result)
	switch r.Result.Status {
	case results.StatusPassed:
		return r.Result, nil
	case results.StatusFailed:
		return r.Result, results.CheckFailed("%s", r.Result.Error)
	}
	return r.Result, errors.New(r.Result.Error)
}

// finish ends every run, finished or interrupted, in one way: the run's
// status and exit code from its stages, then the report of it, published
// once (summary.md, $GITHUB_STEP_SUMMARY, and with --post the comment and
// commit status), then results.json. The report is the run's last step,
// not a stage: it renders the verdict it is part of. results.json is
// written with that verdict only once the report is delivered, so a run
// killed while it posts reads as incomplete.
func finish(ctx context.Context, r *Run) {
	res := r.Result
	now := time.Now().UTC().Truncate(time.Second)
	res.FinishedAt = &now
	interrupted := ctx.Err() != nil
	if interrupted {
		res.Status, res.ExitCode, res.Error = results.StatusIncomplete, 2, "interrupted"
	} else {
		v := results.StageVerdict(res.Stages)
		res.Status, res.ExitCode, res.Error = v.Status, v.ExitCode(), v.Reason
	}
	if err := publish(ctx, r, interrupted); err != nil {
		if interrupted {
			// The run is incomplete already; its summary is a courtesy.
			r.Progress.Warn("summary of the interrupted run: " + err.Error())
		} else {
			// Not delivered: the run could not do what it was asked.
			reason := "report: " + err.Error()
			if res.Status == results.StatusError {
				reason = res.Error + "; " + reason
			}
			res.Status, res.ExitCode, res.Error = results.StatusError, 2, reason
		}
	}
	r.save()
	// Last: results.json is among what a workflow uploads.
	if n, err := stageArtifacts(r.Dir); err != nil {
		r.Progress.Warn(fmt.Sprintf("artifacts (%d staged): %v", n, err))
	}
}

// reportStep names the report on the progress display and its log,
// logs/report.log.
const reportStep = "report"

// publish delivers the report of the run as it ends. An interrupted run
// still writes summary.md, which says what finished and what did not, with
// a little time of its own, and never posts.
func publish(ctx context.Context, r *Run, interrupted bool) error {
	opt := r.Config.ReportOptions()
	opt.Out = r.Dir
	// The comment lists the runs before this one: this run's entry.
	opt.GitHub.Entry = report.HistoryEntry([]*results.Result{r.Result}, nil)
	if interrupted {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		opt.Post = false
	}
	r.Progress.StageStart(reportStep)
	log, logErr := safefs.CreateIn(r.Dir, filepath.Join(r.Dir, "logs", reportStep+".log"), 0o644)
	if logErr != nil {
		r.Progress.Warn(fmt.Sprintf("report log: %v", logErr))
	} else {
		defer log.Close()
	}
	pub, err := report.Publish(ctx, opt, []*results.Result{r.Result})
	if pub != nil {
		if log != nil {
			pub.WriteLog(log)
		}
		if pub.Summary != "" {
			r.Progress.Step("summary: %s", relPath(r.Dir, pub.Summary))
		}
		if pub.Comment != nil {
			r.Progress.Step("comment %s %s", pub.Comment.Action, pub.Comment.URL)
		}
		for _, n := range pub.Notes {
			// Said after the summary was rendered: results.json keeps it.
			r.Result.Warnings = append(r.Result.Warnings, n)
			r.Progress.Warn(n)
		}
	}
	if err != nil && log != nil {
		fmt.Fprintf(log, "report: %v\n", err)
	}
	r.Progress.StageEnd(reportStep, err)
	return err
}

// checkOutApart rejects an --out that is, holds or is inside the
// repository validated (a local one) or the cache: the run writes its
// trees, builds and logs into --out and the workflow removes it, which
// would change the tree under test or the cache later runs trust.
func checkOutApart(c *Config, cache string) error {
	type place struct{ name, dir string }
	places := []place{{"the cache (--cache " + cache + ")", cache}}
	if dir, ok := checkout.LocalPath(c.Repo); ok {
		places = append(places, place{"the repository (--repo " + c.Repo + ")", dir})
	}
	out := resolvePath(c.Out)
	for _, p := range places {
		if how := overlap(out, resolvePath(p.dir)); how != "" {
			return &results.InputError{Input: "--out " + c.Out, Err: fmt.Errorf("%s %s: give a directory apart from both", how, p.name)}
		}
	}
	return nil
}

// overlap says how directory a stands to b: "is", "is inside", "holds",
// or "" when they are apart.
func overlap(a, b string) string {
	inside := func(x, y string) bool {
		rel, err := filepath.Rel(y, x)
		return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	switch {
	case a == b:
		return "is"
	case inside(a, b):
		return "is inside"
	case inside(b, a):
		return "holds"
	}
	return ""
}

// resolvePath is path made absolute with the symlinks of the part that
// exists resolved, so that a link to a directory compares as that
// directory.
func resolvePath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for d := abs; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if d == filepath.Dir(d) {
			return abs
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// checkOut rejects an output directory that cannot be made or written,
// without creating anything.
func checkOut(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return &results.InputError{Input: "--out " + dir, Err: fmt.Errorf("%s is not a directory", d)}
			}
			if err := syscall.Access(d, 2 /* W_OK */); err != nil {
				return &results.InputError{Input: "--out " + dir, Err: fmt.Errorf("%s is not writable", d)}
			}
			return nil
		}
		if d == filepath.Dir(d) {
			return &results.InputError{Input: "--out " + dir, Err: err}
		}
	}
}

// prepareOut makes the run directory and checks it is writable, before
// anything else is written.
func prepareOut(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &results.InputError{Input: "--out " + dir, Err: err}
	}
	if err := os.MkdirAll(filepath.Join(abs, "logs"), 0o755); err != nil {
		return "", &results.InputError{Input: "--out " + dir, Err: errors.Unwrap(err)}
	}
	probe, err := os.CreateTemp(abs, ".write-test-")
	if err != nil {
		return "", &results.InputError{Input: "--out " + dir, Err: fmt.Errorf("not writable")}
	}
	probe.Close()
	os.Remove(probe.Name())
	return abs, nil
}

func settingsOf(c *Config) results.Settings {
	repo := c.Repo
	if c.Demo() {
		repo = "demo (PHP 8.2.32 + mysqlnd atomic statistics)"
	}
	variants := make([]string, len(c.Variants))
	for i, v := range c.Variants {
		variants[i] = string(v)
	}
	return results.Settings{
		Repo: repo, PR: c.PR, Demo: c.Demo(), Variants: variants, Builder: string(c.Builder),
		Profile: string(c.Profile), ProfileText: c.Profile.Describe(), Jobs: c.Jobs, Stages: c.Stages.Names(), ExpectNTSNoop: c.ExpectNTSNoop,
		ABI: c.ABI.String(), Flags: c.RerunFlags,
	}
}

func machine() results.Machine {
	m := results.Machine{CPUs: runtime.NumCPU()}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	return m
}
