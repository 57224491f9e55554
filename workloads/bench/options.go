package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/select20"
	"github.com/patchproof/patchproof/workloads/workload"
)

// A BuildRef names a ZTS build to measure.
type BuildRef struct {
	PHP    string // sapi/cli/php, recorded with the result
	Module string // libs/libphp.so, which the server loads
	SrcDir string // the build tree, recorded with the result
}

// IsZero reports whether b names no build.
func (b BuildRef) IsZero() bool { return b == BuildRef{} }

// A Measure is one of the things measured per arm (allMeasures).
type Measure string

const (
	// MeasureCPU is the server's CPU time per request under wrk, with
	// req/s and latency.
	MeasureCPU Measure = "cpu"
	// MeasureLocks is pthread_mutex_lock calls per request over a fixed
	// number of requests (LD_PRELOAD counter).
	MeasureLocks Measure = "locks"
	// MeasureInstructions is instructions per request over a fixed number
	// of requests under callgrind.
	MeasureInstructions Measure = "instructions"

	// MeasureProfile is a perf profile of each arm's server under load.
	MeasureProfile Measure = "profile"
)

// ParseMeasure reads a measure as --bench-measures names it.
func ParseMeasure(s string) (Measure, error) {
	if m := Measure(s); slices.Contains(allMeasures, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown measure %q (%s)", s, strings.Join(MeasureNames(), ", "))
}

// MeasureNames lists the measures Options.Measures takes.
func MeasureNames() []string {
	names := make([]string, len(allMeasures))
	for i, m := range allMeasures {
		names[i] = string(m)
	}
	return names
}

// allMeasures lists the measures in the order they run in an arm.
var allMeasures = []Measure{MeasureCPU, MeasureLocks, MeasureInstructions, MeasureProfile}

// KeepAlive says whether the CPU passes keep connections alive.
type KeepAlive string

const (
	// KeepAliveAuto keeps connections alive when there are fewer
	// connections than threads, which is when Apache's event MPM can
	// honour it (see httpd's package doc).
	KeepAliveAuto KeepAlive = ""
	KeepAliveOn   KeepAlive = "on"
	KeepAliveOff  KeepAlive = "off"
)

// Options configure Run. Base.Module, DB and Dir must be given; the zero
// value of every other field works and means the report's settings for a
// runner (16 threads, 12 connections, 20 s) with 6 passes, the fewest that
// give a 95% interval of a median. Quick switches the
// defaults to CI's (2 passes of 3 s, 200-request windows).
type Options struct {
	// Base is the build without the change; Head the one with it, or zero
	// to measure Base alone.
	Base, Head BuildRef

	// DB is the database server; its data is loaded by Run unless
	// SkipLoad. DBPID, when known, lets DBCPUs pin it.
	DB       workload.DB
	DBPID    int
	SkipLoad bool

	// Workload is what each request runs; default select20, the report's.
	Workload workload.Workload
	// Server is the server kind; default Apache. A kind that cannot run
	// here makes Run return an error wrapping httpd.ErrUnavailable.
	Server httpd.Kind
	// Placement is where every server runs; default this host. In a
	// container (the PR's module is then never loaded on this host) its
	// CPU time comes from the container's cgroup, ServerCPUs is its
	// cpuset, and the lock counter is bound into it.
	Placement httpd.Placement

	// Dir is the run directory: bench.txt, bench.json, the sweep chart,
	// the profiles.
	Dir string
	// ServerDir holds a directory per pass and arm with each server's
	// configuration, docroot and logs, and what its unprivileged user
	// writes (lock tables, callgrind dumps); default Dir. Apart from Dir
	// where that user cannot enter Dir (httpd.Reachable).
	ServerDir string

	Threads     int           // PHP threads; default 16
	Connections int           // wrk -c; default 3/4 of Threads, quick Threads/2 (see reportConnections)
	LoadThreads int           // wrk -t; default 4, quick 2
	Passes      int           // CPU passes of the block; default 30, quick 40
	Duration    time.Duration // each measured wrk run, whole seconds; default 2s, quick 1s
	Warmup      time.Duration // wrk against each fresh server before its passes; default 3s, quick 1s
	// PassesPerServer is how many passes a CPU block's servers serve
	// before fresh ones start; default 2 (see cpuBlock).
	PassesPerServer int
	KeepAlive       KeepAlive // of the CPU passes; default auto
	// CountedPasses take the exact measures, each on a fresh server;
	// default 2, quick 1, at most Passes.
	CountedPasses int

	// Sweep lists more thread counts at which a CPU block measures the
	// cost of statistics (the thread scaling chart); the count Threads is
	// taken from the main block. SweepPasses and SweepDuration are those
	// blocks' passes and windows; default the fewest passes that can
	// decide the cost at a count (6 servers' worth: the signed-rank test
	// on fewer cannot reach p ≤ 0.05, however large the cost), of 3s,
	// quick of 1s. A sweep of fewer passes than that is not run: its
	// chart would show what it cannot decide.
	Sweep         []int
	SweepPasses   int
	SweepDuration time.Duration

	// ProfileDuration is the window of each arm's perf profile, taken on
	// the main block's warm server under load; default 5s, quick 2s.
	ProfileDuration time.Duration
	Perf            string // default perf on PATH

	// AA benchmarks Base against itself as if it were the head: a false
	// verdict rate is measured by repeating it.
	AA bool

	// NoPin leaves the processes unpinned on a small machine where
	// ServerCPUs, LoadCPUs and DBCPUs are all empty; see autoPin.
	NoPin bool
	// KeepASLR keeps address space randomisation on for the servers of the
	// CPU blocks; by default they run under setarch -R on this host.
	KeepASLR bool
	pinning  string // what autoPin did, for the Result

	// LockRequests and CallgrindRequests are the windows of the two
	// counted measures; default 1000 and 500, quick 200 and 200.
	LockRequests      int
	CallgrindRequests int
	// WindowConcurrency is the number of requests in flight in those
	// windows and their warm-ups; default Threads/2. It stays below
	// Threads so that Apache never closes a kept-alive connection.
	WindowConcurrency int
	// WindowWarmup is the requests sent before a window, so that every
	// PHP thread has its persistent connection; default 8×Threads.
	WindowWarmup int

	// Measures to take; default all three.
	Measures []Measure

	// ServerCPUs, LoadCPUs and DBCPUs pin the server, wrk and the database
	// (taskset lists, "0-3,8"). Empty leaves them unpinned.
	ServerCPUs, LoadCPUs, DBCPUs string

	// Quick selects CI's defaults for every field left zero.
	Quick bool

	// Thresholds decide the verdicts; zero means alpha 0.05, a minimum
	// effect of 1%, 95% intervals and a floor of 0.5% for exact measures.
	Thresholds benchstat.Thresholds

	// Tools; default found on PATH.
	Wrk, Valgrind, GCC, Apache string

	// Log receives a line per step and wrk's output.
	Log io.Writer
	// Step, when set, is told the protocol's steps as they happen (the
	// data loaded, a pass begun, an arm's measure taken), the lines Log
	// gets with a "bench: " prefix, for a progress display.
	Step func(step string)
}

// Defaults, in one place: the report's settings, and CI's.
const (
	defaultThreads         = 16
	defaultLoadThreads     = 4
	defaultPasses          = 30
	defaultCountedPasses   = 2
	defaultDuration        = 2 * time.Second
	defaultWarmup          = 2 * time.Second
	defaultPassesPerServer = 2
	defaultSweepDuration   = 3 * time.Second
	defaultProfileDuration = 5 * time.Second
	defaultLockRequests    = 1000
	defaultCallgrindReqs   = 500
	quickPasses            = 40
	quickCountedPasses     = 1
	quickLoadThreads       = 2
	quickDuration          = 1 * time.Second
	quickWarmup            = 1 * time.Second
	quickSweepDuration     = 1 * time.Second
	quickProfileDuration   = 2 * time.Second
	quickLockRequests      = 200
	quickCallgrindRequests = 200
	windowWarmupPerThread  = 8
	serverStartTimeout     = 60 * time.Second
	callgrindStartTimeout  = 180 * time.Second
	windowTimeout          = 5 * time.Minute
	settleQuiet            = 200 * time.Millisecond
	benchPkg               = "github.com/patchproof/patchproof/workloads/bench"
	statisticsINI          = "mysqlnd.collect_statistics"
	markerPath             = "/_patchproof_mark.php"
	lockDirName            = "lockcount"
	callgrindDirName       = "callgrind"
	benchTxtName           = "bench.txt"
	benchJSONName          = "bench.json"
)

func (o Options) resolved() (Options, error) {
	if o.Base.IsZero() || o.Base.Module == "" {
		return o, errors.New("no base build given")
	}
	if !o.Head.IsZero() && o.Head.Module == "" {
		return o, errors.New("head build has no module")
	}
	if o.Dir == "" {
		return o, errors.New("no run dir given")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, err
	}
	o.Dir = dir
	if o.ServerDir == "" {
		o.ServerDir = dir
	}
	if o.ServerDir, err = filepath.Abs(o.ServerDir); err != nil {
		return o, err
	}
	if o.Workload.Name == "" {
		o.Workload = select20.Workload()
	}
	if o.Server == "" {
		o.Server = httpd.KindApache
	}
	pick := func(v *int, normal, quick int) {
		if *v == 0 {
			*v = normal
			if o.Quick {
				*v = quick
			}
		}
	}
	pickD := func(v *time.Duration, normal, quick time.Duration) {
		if *v == 0 {
			*v = normal
			if o.Quick {
				*v = quick
			}
		}
	}
	pick(&o.Threads, defaultThreads, defaultThreads)
	pick(&o.Connections, reportConnections(o.Threads), max(1, o.Threads/2))
	pick(&o.LoadThreads, defaultLoadThreads, quickLoadThreads)
	o.LoadThreads = min(o.LoadThreads, o.Connections)
	pick(&o.Passes, defaultPasses, quickPasses)
	pickD(&o.Duration, defaultDuration, quickDuration)
	pickD(&o.Warmup, defaultWarmup, quickWarmup)
	pick(&o.CountedPasses, defaultCountedPasses, quickCountedPasses)
	pick(&o.PassesPerServer, defaultPassesPerServer, defaultPassesPerServer)
	o.CountedPasses = min(o.CountedPasses, o.Passes)
	decide := o.sweepPassesToDecide()
	pick(&o.SweepPasses, decide, decide)
	pickD(&o.SweepDuration, defaultSweepDuration, quickSweepDuration)
	pickD(&o.ProfileDuration, defaultProfileDuration, quickProfileDuration)
	for _, n := range o.Sweep {
		if n < 1 {
			return o, fmt.Errorf("thread count %d in the sweep: must be positive", n)
		}
	}
	if o.AA {
		o.Head = o.Base
	}
	o.autoPin(usableCPUs())
	pick(&o.LockRequests, defaultLockRequests, quickLockRequests)
	pick(&o.CallgrindRequests, defaultCallgrindReqs, quickCallgrindRequests)
	pick(&o.WindowConcurrency, max(1, o.Threads/2), max(1, o.Threads/2))
	pick(&o.WindowWarmup, windowWarmupPerThread*o.Threads, windowWarmupPerThread*o.Threads)
	if len(o.Measures) == 0 {
		o.Measures = slices.Clone(allMeasures)
	}
	for _, m := range o.Measures {
		if !slices.Contains(allMeasures, m) {
			return o, fmt.Errorf("unknown measure %q (%s)", m, strings.Join(MeasureNames(), ", "))
		}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Step == nil {
		o.Step = func(string) {}
	}
	if o.Threads < 1 || o.Passes < 1 || o.PassesPerServer < 1 || o.LockRequests < 1 || o.CallgrindRequests < 1 {
		return o, fmt.Errorf("threads %d, passes %d, windows %d and %d: all must be positive", o.Threads, o.Passes, o.LockRequests, o.CallgrindRequests)
	}
	for _, b := range []BuildRef{o.Base, o.Head} {
		if b.Module == "" {
			continue
		}
		if _, err := os.Stat(b.Module); err != nil {
			return o, fmt.Errorf("build module: %w", err)
		}
	}
	return o, nil
}

// sweepPassesToDecide is the fewest passes of a sweep's block whose test
// can decide the cost at its count: the servers the signed-rank test needs
// to reach alpha (6 at 0.05), each serving PassesPerServer passes, which
// the test averages into one.
func (o Options) sweepPassesToDecide() int {
	return benchstat.PairsToDetect(resolvedThresholds(o.Thresholds).Alpha) * max(1, o.PassesPerServer)
}

// smallMachine is the most CPUs on which the processes are pinned by
// default. With so few, an unpinned server, load generator and database
// trade CPUs from window to window, and that noise hides a cost of a few
// percent; apart, each window measures the server alone.
const smallMachine = 4

// autoPin pins by default on a small machine: the server on the upper
// half of the CPUs (one CPU of two), wrk and the database on the rest.
// Any CPU list given, or NoPin, leaves the placement to the caller.
func (o *Options) autoPin(cpus []int) {
	if o.ServerCPUs != "" || o.LoadCPUs != "" || o.DBCPUs != "" {
		o.pinning = "as given"
		return
	}
	if o.NoPin || len(cpus) < 2 || len(cpus) > smallMachine {
		o.pinning = fmt.Sprintf("unpinned, %d %s", len(cpus), plural(len(cpus), "CPU", "CPUs"))
		return
	}
	half := len(cpus) / 2
	o.ServerCPUs = cpuList(cpus[half:])
	o.LoadCPUs = cpuList(cpus[:half])
	o.DBCPUs = o.LoadCPUs
	o.pinning = fmt.Sprintf("by default on this %d-CPU machine: the server on CPU %s, wrk and the database on CPU %s", len(cpus), o.ServerCPUs, o.LoadCPUs)
	if len(cpus[half:]) == 1 {
		o.pinning += "; with the server's threads on one CPU this measures what locking costs, not contention between CPUs"
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// reportConnections is the report's load: 3/4 of the threads, 12 of 16.
// Apache's event MPM closes every kept-alive connection whenever it finds
// no worker thread idle, and no directive turns that off, so the load
// keeps fewer requests in flight than there are threads and a few threads
// spare for those still finishing a response: 12 connections on 16
// threads kept 20,000 keep-alive requests alive without a closed one.
func reportConnections(threads int) int { return max(1, threads*3/4) }

// keepAlive is the CPU passes' keep-alive setting.
func (o Options) keepAlive() bool { return o.keepAliveWith(o.Connections, o.Threads) }

// keepAliveWith is the keep-alive setting of a load of connections on a
// server of threads: as given, else on when there are fewer connections
// than threads.
func (o Options) keepAliveWith(connections, threads int) bool {
	switch o.KeepAlive {
	case KeepAliveOn:
		return true
	case KeepAliveOff:
		return false
	}
	return connections < threads
}

func (o Options) wants(m Measure) bool { return slices.Contains(o.Measures, m) }

// placement is where the servers run: Placement, or by default this host.
func (o Options) placement() httpd.Placement {
	if o.Placement == nil {
		return httpd.Host{}
	}
	return o.Placement
}
