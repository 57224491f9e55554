package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/cputime"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/lockcount"
	"github.com/patchproof/patchproof/workloads/workload"
)

// An arm is an Arm with the build it runs.
type arm struct {
	Arm
	build BuildRef
}

// arms lists the arms in their canonical order: base on, base off, head
// on, head off.
func (o Options) arms() []arm {
	as := []arm{{Arm{side.Base, true}, o.Base}, {Arm{side.Base, false}, o.Base}}
	if !o.Head.IsZero() {
		as = append(as, arm{Arm{side.Head, true}, o.Head}, arm{Arm{side.Head, false}, o.Head})
	}
	return as
}

// balancedOrder returns the arms in the order of pass p (from 1). The two
// arms of a build run back to back, so that a drift between slots moves
// on and off alike, and which of them goes first alternates from pass to
// pass, so that over every two passes on runs first exactly once: a drift
// adds +d to a build's cost in one pass and −d in the next instead of
// faking a cost. Within a pass every build has the same orientation, so
// the drift cancels in head's cost against base's. Even passes run the
// previous pass backwards, and every other pair of passes swaps the
// builds, so each build also leads half of every four passes.
func balancedOrder(as []arm, p int) []arm {
	builds := [][]arm{}
	for i := 0; i+1 < len(as); i += 2 {
		builds = append(builds, as[i:i+2]) // on, off
	}
	q := p - 1
	if (q/2)%2 == 1 {
		slices.Reverse(builds)
	}
	var out []arm
	for _, b := range builds {
		out = append(out, b...)
	}
	if q%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

// passOrders is the order of the arms in each of n passes.
func passOrders(as []arm, n int) []Pass {
	var ps []Pass
	for p := 1; p <= n; p++ {
		pass := Pass{Pass: p}
		for _, a := range balancedOrder(as, p) {
			pass.Order = append(pass.Order, a.Arm)
		}
		ps = append(ps, pass)
	}
	return ps
}

// bencher carries what the passes share.
type bencher struct {
	opt      Options
	res      *Result
	lockSO   string // the lock counter library, when locks are measured
	cgroupOK bool
	nonce    string // keeps cgroup names apart between runs

	mu sync.Mutex // guards res.ServerCrashes
}

// Run runs the protocol: Options.Passes passes; in each, every arm once,
// in a balanced order (see balancedOrder); each measure of an arm on a
// fresh server. It returns the Result with its statistics, and writes
// bench.txt and bench.json into Options.Dir.
//
// A pass that fails (a non-2xx response, a socket error, a server that
// does not start or dies) ends the run: Run returns the Result so far (raw
// samples, no statistics) with the error. A server kind that cannot run
// here returns an error wrapping httpd.ErrUnavailable, to be reported as a
// skip.
func Run(ctx context.Context, opt Options) (*Result, error) {
	opt, err := opt.resolved()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := opt.Server.Available(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	b := &bencher{opt: opt, res: newResult(opt), nonce: fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)}
	if err := b.prepare(ctx); err != nil {
		return b.res, fmt.Errorf("bench: %w", err)
	}
	arms := opt.arms()
	byArm := map[Arm]*ArmSamples{}
	for _, a := range arms {
		ra := &ArmSamples{Name: a.Arm, Build: a.Side, Statistics: onOff(a.Statistics)}
		b.res.Arms = append(b.res.Arms, ra)
		byArm[ra.Name] = ra
	}
	b.res.Passes = passOrders(arms, opt.Passes)
	// sample is an arm's sample of pass p, made on first use.
	sample := func(a Arm, p int) *Sample {
		ra := byArm[a]
		if s := ra.sample(p); s != nil {
			return s
		}
		s := &Sample{Pass: p, Position: slices.Index(b.res.Passes[p-1].Order, a) + 1}
		ra.Samples = append(ra.Samples, s)
		slices.SortFunc(ra.Samples, func(x, y *Sample) int { return x.Pass - y.Pass })
		return s
	}
	fail := func(err error) (*Result, error) {
		b.writeJSON()
		return b.res, fmt.Errorf("bench: %w", err)
	}
	// The exact measures first, each on a fresh server: a few passes
	// suffice, as they repeat to a fraction of a percent.
	if opt.wants(MeasureLocks) || opt.wants(MeasureInstructions) {
		for p := 1; p <= opt.CountedPasses; p++ {
			order := balancedOrder(arms, p)
			b.step("counted pass %d of %d: %s", p, opt.CountedPasses, joinArms(b.res.Passes[p-1].Order))
			for _, a := range order {
				if err := b.runCounted(ctx, a, sample(a.Arm, p)); err != nil {
					return fail(fmt.Errorf("pass %d, %s: %w", p, a, err))
				}
			}
		}
	}
	if opt.wants(MeasureCPU) || opt.wants(MeasureProfile) {
		main := block{name: "cpu", threads: opt.Threads, connections: opt.Connections,
			passes: opt.Passes, perServer: opt.PassesPerServer, duration: opt.Duration, warmup: opt.Warmup}
		if !opt.wants(MeasureCPU) {
			main.passes = 0 // the profiles alone
		}
		b.step("CPU block: %d passes of %v, fresh warm servers every %d, %d threads, %d connections", main.passes, opt.Duration, opt.PassesPerServer, opt.Threads, opt.Connections)
		var with func(context.Context, []*blockServer) error
		if opt.wants(MeasureProfile) {
			with = b.profiles
		}
		got, err := b.cpuBlock(ctx, main, with)
		for a, ss := range got {
			for i, s := range ss {
				sample(a, i+1).CPU = s
			}
		}
		if err != nil {
			return fail(fmt.Errorf("CPU block: %w", err))
		}
		if err := b.sweep(ctx); err != nil {
			return fail(err)
		}
	}
	b.res.Analyse()
	if n, of := b.res.heavySteal(); n > 0 {
		b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("%d of %d CPU windows lost more than %.0f%% of the machine's CPU time to steal: their CPU time a request is inflated (flagged in the samples)", n, of, 100*heavySteal))
	}
	if err := b.res.writeSweepChart(opt.Dir); err != nil {
		b.res.Warnings = append(b.res.Warnings, err.Error())
	}
	if err := b.writeBenchTxt(); err != nil {
		return b.res, fmt.Errorf("bench: %w", err)
	}
	if err := b.writeJSON(); err != nil {
		return b.res, fmt.Errorf("bench: %w", err)
	}
	return b.res, nil
}

func newResult(o Options) *Result {
	th := o.Thresholds
	// The same defaults benchstat applies to a zero Thresholds.
	res := &Result{
		Workload: o.Workload.Name,
		Server:   serverName(o.Server),
		Machine:  thisMachine(),
		Settings: Settings{
			Threads: o.Threads, Connections: o.Connections, LoadThreads: o.LoadThreads,
			Passes: o.Passes, DurationS: o.Duration.Seconds(), WarmupS: o.Warmup.Seconds(),
			KeepAlive: o.keepAlive(), LockRequests: o.LockRequests, CallgrindRequests: o.CallgrindRequests,
			WindowConcurrency: o.WindowConcurrency, WindowWarmup: o.WindowWarmup,
			ServerCPUs: o.ServerCPUs, LoadCPUs: o.LoadCPUs, DBCPUs: o.DBCPUs, Quick: o.Quick,
			Thresholds:    resolvedThresholds(th),
			CountedPasses: o.CountedPasses, PassesPerServer: o.PassesPerServer, Pinning: o.pinning,
			ASLR: o.KeepASLR || o.placement().ASLROff() != nil, AA: o.AA,
		},
	}
	var opcacheWarning string
	res.Settings.OPcache, opcacheWarning = opcacheSetting(o)
	if opcacheWarning != "" {
		res.Warnings = append(res.Warnings, opcacheWarning)
	}
	if len(o.Sweep) > 0 {
		res.Settings.Sweep, res.Settings.SweepPasses, res.Settings.SweepDurationS = o.sweepCounts(), o.SweepPasses, o.SweepDuration.Seconds()
		if !o.sweepDecides() {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"the thread sweep was not run: %d passes at a count, on %d servers, cannot decide its cost (the signed-rank test needs %d passes, %d servers, to reach p ≤ %v)",
				o.SweepPasses, (o.SweepPasses+o.PassesPerServer-1)/o.PassesPerServer, o.sweepPassesToDecide(),
				benchstat.PairsToDetect(res.Settings.Thresholds.Alpha), res.Settings.Thresholds.Alpha))
		}
	}
	if o.wants(MeasureProfile) {
		res.Settings.ProfileS = o.ProfileDuration.Seconds()
	}
	if o.AA {
		res.Warnings = append(res.Warnings, "A/A run: head is base's build itself, so any verdict of head against base is a false one")
	}
	if err := o.placement().ASLROff(); err != nil && !o.KeepASLR && o.wants(MeasureCPU) {
		res.Warnings = append(res.Warnings, err.Error())
	}
	for _, m := range o.Measures {
		res.Settings.Measures = append(res.Settings.Measures, string(m))
	}
	res.Builds = append(res.Builds, Build{side.Base, o.Base.PHP, o.Base.Module, o.Base.SrcDir})
	if !o.Head.IsZero() {
		res.Builds = append(res.Builds, Build{side.Head, o.Head.PHP, o.Head.Module, o.Head.SrcDir})
	} else {
		res.Warnings = append(res.Warnings, "no head build: base measured alone, no comparison")
	}
	if !o.keepAlive() && o.wants(MeasureCPU) {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"keep-alive off in the CPU passes: with %d connections and %d threads Apache's event MPM would close kept-alive connections whenever no thread is idle, so every request opens a connection",
			o.Connections, o.Threads))
	}
	return res
}

// opcacheSetting says whether the servers run OPcache (httpd loads a
// build's own where it has one), with which settings, or why not; and a
// warning where one build has it and the other not, which no comparison
// of the two survives.
func opcacheSetting(o Options) (setting, warning string) {
	var ms []httpd.Named
	for _, a := range o.arms() {
		if a.Statistics {
			ms = append(ms, httpd.Named{Name: string(a.Side), Module: a.build.Module})
		}
	}
	setting, with, without := httpd.OPcacheState(ms...)
	if len(with) > 0 && len(without) > 0 {
		warning = fmt.Sprintf("OPcache is off in %s's servers only: the build has none, so head against base compares a script compiled on every request with one compiled once", strings.Join(without, ", "))
	}
	return setting, warning
}

// serverName says what served the requests, for the report.
func serverName(k httpd.Kind) string {
	if k == httpd.KindApache {
		return "apache-event" // mpm_event, one process
	}
	return string(k)
}

// prepare loads the data, pins the database, builds the lock counter and
// finds out whether a cgroup can measure CPU time.
func (b *bencher) prepare(ctx context.Context) error {
	o := b.opt
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	if !o.SkipLoad {
		b.step("loading %s into the database", o.Workload.Name)
		if err := workload.Load(ctx, o.DB, o.Workload); err != nil {
			return err
		}
	}
	// The database stays pinned after the run: it is the caller's server.
	if o.DBCPUs != "" {
		if o.DBPID <= 0 {
			b.res.Warnings = append(b.res.Warnings, "--db-cpus given but the database's process is unknown: not pinned")
		} else if out, err := pin(ctx, o.DBCPUs, o.DBPID); err != nil {
			return fmt.Errorf("pin database %d to CPUs %s: %w: %s", o.DBPID, o.DBCPUs, err, strings.TrimSpace(string(out)))
		}
	}
	if o.wants(MeasureLocks) {
		so, err := lockcount.Build(ctx, o.GCC, filepath.Join(o.Dir, "lockcount-lib"))
		if err != nil {
			return err
		}
		b.lockSO = so
	}
	if o.wants(MeasureInstructions) {
		v := o.Valgrind
		if v == "" {
			v = "valgrind"
		}
		if err := o.placement().LookPath(v); err != nil {
			return fmt.Errorf("instructions need valgrind: %w (apt-get install valgrind)", err)
		}
	}
	if o.wants(MeasureProfile) {
		p := o.Perf
		if p == "" {
			p = "perf"
		}
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("profiles need perf: %w (apt-get install linux-perf)", err)
		}
	}
	if o.wants(MeasureCPU) || o.wants(MeasureProfile) {
		w := o.Wrk
		if w == "" {
			w = "wrk"
		}
		if _, err := exec.LookPath(w); err != nil {
			return fmt.Errorf("CPU passes need wrk: %w (apt-get install wrk)", err)
		}
		if src := o.placement().CPUSource(); src != "" {
			// Each server has a cgroup of its own already.
			b.res.CPUSource = string(src)
			return nil
		}
		cg, err := cputime.NewCgroup("patchproof-probe-" + b.nonce)
		if err == nil {
			cg.Close()
			b.cgroupOK = true
			b.res.CPUSource = string(cputime.SourceCgroup2)
		} else {
			b.res.CPUSource = string(cputime.SourceProc)
			b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("no cgroup of the server's own (%v): CPU time summed from /proc over the server's processes", err))
		}
	}
	return nil
}

// runCounted takes the exact measures of one arm in one pass, each on a
// fresh server.
func (b *bencher) runCounted(ctx context.Context, a arm, s *Sample) error {
	dir := filepath.Join(b.opt.ServerDir, fmt.Sprintf("pass-%02d", s.Pass), a.String())
	var err error
	if b.opt.wants(MeasureLocks) {
		if s.Locks, err = b.lockRun(ctx, a, filepath.Join(dir, string(MeasureLocks)), s); err != nil {
			return fmt.Errorf("%s: %w", MeasureLocks, err)
		}
	}
	if b.opt.wants(MeasureInstructions) {
		if s.Instructions, err = b.instrRun(ctx, a, filepath.Join(dir, string(MeasureInstructions)), s); err != nil {
			return fmt.Errorf("%s: %w", MeasureInstructions, err)
		}
	}
	return nil
}

// serverOptions is what every server of an arm shares.
func (b *bencher) serverOptions(a arm, dir string) httpd.Options {
	o := b.opt
	w := o.Workload
	stats := "0"
	if a.Statistics {
		stats = "1"
	}
	place := o.placement()
	if b.lockSO != "" {
		place = place.WithBinds(docker.Bind{Path: filepath.Dir(b.lockSO), ReadOnly: true})
	}
	return httpd.Options{
		Placement:    place,
		Kind:         o.Server,
		Dir:          dir,
		Module:       a.build.Module,
		Threads:      o.Threads,
		Files:        w.Files,
		INI:          map[string]string{statisticsINI: stats},
		Env:          o.DB.WithName(w.Name).Env(),
		CPUs:         o.ServerCPUs,
		Apache:       o.Apache,
		Probe:        httpd.Probe{Path: w.Path, Header: w.Header, Check: w.Check},
		StartTimeout: serverStartTimeout,
		Log:          o.Log,
	}
}

// stopServer stops a's server s, counts it in the crashes of a's build,
// and turns a server that had died into the error of the run; err, if
// any, comes first.
func (b *bencher) stopServer(a arm, s *httpd.Server, err error) error {
	err = errors.Join(err, s.Stop())
	signals, ok := s.ChildSignals()
	if !ok {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.res.CrashesOf(a.Side)
	if c == nil {
		c = &ServerCrashes{Build: a.Side}
		b.res.ServerCrashes = append(b.res.ServerCrashes, c)
		slices.SortFunc(b.res.ServerCrashes, func(x, y *ServerCrashes) int { return cmp.Compare(x.Build, y.Build) })
	}
	c.Servers++
	if len(signals) > 0 {
		c.Crashed++
		for _, sig := range signals {
			if !slices.Contains(c.Signals, sig) {
				c.Signals = append(c.Signals, sig)
			}
		}
	}
	return err
}

// step says what the protocol is doing: a line in the log, and a step for
// Options.Step.
func (b *bencher) step(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintf(b.opt.Log, "bench: %s\n", msg)
	b.opt.Step(msg)
}

func joinArms(as []Arm) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func (b *bencher) writeJSON() error {
	data, err := json.MarshalIndent(b.res, "", "  ")
	if err != nil {
		return err
	}
	return safefs.WriteFile(b.opt.Dir, benchJSONName, append(data, '\n'), 0o644)
}

// pin pins every thread of process pid to cpus with taskset.
func pin(ctx context.Context, cpus string, pid int) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", cpus, fmt.Sprint(pid))
	cmd.Env = childenv.For(childenv.Tool)
	return cmd.CombinedOutput()
}
