package bench

import (
	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/internal/side"
)

// Result is what a benchmark run found. It becomes part of results.json:
// names are a published interface; add fields, never rename them.
type Result struct {
	Workload string   `json:"workload"`
	Server   string   `json:"server"` // "apache-event"
	Settings Settings `json:"settings"`
	Machine  Machine  `json:"machine"`
	// CPUSource is where CPU time came from: "cgroup2" (a cgroup of the
	// server's own) or "proc" (its processes' /proc/PID/stat).
	CPUSource string  `json:"cpu_source,omitempty"`
	Builds    []Build `json:"builds"`
	// Passes lists the order the arms ran in, pass by pass.
	Passes []Pass `json:"passes"`
	// Arms holds the raw samples, one per pass.
	Arms []*ArmSamples `json:"arms"`
	// Measures holds the statistics of each measure.
	Measures []*MeasureStats `json:"measures"`
	// Profiles are each arm's perf profile under load.
	Profiles []*ArmProfile `json:"profiles,omitempty"`
	// Sweep is the cost of statistics at each thread count of
	// Options.Sweep, ascending; SweepChart the SVG chart of it.
	Sweep      []*SweepPoint `json:"sweep,omitempty"`
	SweepChart string        `json:"sweep_chart,omitempty"`
	Warnings   []string      `json:"warnings,omitempty"`
	// ServerCrashes counts, build by build, the servers whose PHP crashed.
	ServerCrashes []*ServerCrashes `json:"server_crashes,omitempty"`
	// BenchTxt is the path of bench.txt, the samples in the Go benchmark
	// format.
	BenchTxt string `json:"bench_txt,omitempty"`
}

// Settings are the run's parameters, shown next to its numbers.
type Settings struct {
	Threads           int        `json:"threads"`
	Connections       int        `json:"connections"`
	LoadThreads       int        `json:"load_threads"`
	Passes            int        `json:"passes"`
	DurationS         float64    `json:"duration_s"`
	WarmupS           float64    `json:"warmup_s"`
	KeepAlive         bool       `json:"keep_alive"`
	LockRequests      int        `json:"lock_requests"`
	CallgrindRequests int        `json:"callgrind_requests"`
	WindowConcurrency int        `json:"window_concurrency"`
	WindowWarmup      int        `json:"window_warmup"`
	Measures          []string   `json:"measures"`
	ServerCPUs        string     `json:"server_cpus,omitempty"`
	LoadCPUs          string     `json:"load_cpus,omitempty"`
	DBCPUs            string     `json:"db_cpus,omitempty"`
	Quick             bool       `json:"quick"`
	Thresholds        Thresholds `json:"thresholds"`
	// CountedPasses is how many passes took the exact measures (locks,
	// instructions); every pass takes the CPU measure, in a block of warm
	// servers.
	CountedPasses int `json:"counted_passes"`
	// PassesPerServer is how many CPU passes a server served before fresh
	// ones started.
	PassesPerServer int `json:"passes_per_server"`
	// Pinning says how the server, the load and the database were placed
	// on the CPUs, and why.
	Pinning string `json:"pinning,omitempty"`
	// ASLR is false when the servers of the CPU blocks ran with address
	// space randomisation off (setarch -R).
	ASLR bool `json:"aslr"`
	// OPcache says whether the servers ran PHP with OPcache, as production
	// does, and with which settings; or why not: "off: ..." where the
	// builds were configured without it.
	OPcache string `json:"opcache,omitempty"`
	// AA marks an A/A run: "head" is base itself, so any verdict between
	// them is a false one.
	AA bool `json:"aa,omitempty"`
	// Sweep lists the thread counts of the sweep; SweepPasses and
	// SweepDurationS its blocks' passes and windows. ProfileS is each
	// profile's window.
	Sweep          []int   `json:"sweep,omitempty"`
	SweepPasses    int     `json:"sweep_passes,omitempty"`
	SweepDurationS float64 `json:"sweep_duration_s,omitempty"`
	ProfileS       float64 `json:"profile_s,omitempty"`
}

// Machine is where the benchmark ran, as bench.txt's header says it.
type Machine struct {
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	CPU    string `json:"cpu,omitempty"`
}

// Thresholds are the ones the verdicts were reached with.
type Thresholds struct {
	Alpha      float64 `json:"alpha"`
	MinEffect  float64 `json:"min_effect"`
	Confidence float64 `json:"confidence"`
	// ExactFloor is the smallest relative change of an exact measure that
	// counts, however small its spread.
	ExactFloor float64 `json:"exact_floor"`
}

// Build is a measured build.
type Build struct {
	Name   side.Side `json:"name"`
	PHP    string    `json:"php,omitempty"`
	Module string    `json:"module"`
	SrcDir string    `json:"src_dir,omitempty"`
}

// CrashesOf is the count of build's servers whose PHP crashed; nil when
// none of its servers was counted.
func (r *Result) CrashesOf(build side.Side) *ServerCrashes {
	for _, c := range r.ServerCrashes {
		if c.Build == build {
			return c
		}
	}
	return nil
}

// ServerCrashes is how many of a build's servers had an Apache child end
// by a signal, while serving or as it shut down: a crash of PHP, which a
// load does not see when it comes at shutdown. Single-process servers
// (callgrind's) are not counted, as their children are not told of.
type ServerCrashes struct {
	Build   side.Side `json:"build"`
	Servers int       `json:"servers"`
	Crashed int       `json:"crashed"`
	// Signals are the signals, as Apache names them: "Segmentation
	// fault (11)".
	Signals []string `json:"signals,omitempty"`
}

// Pass is the order of one pass's arms.
type Pass struct {
	Pass  int   `json:"pass"`
	Order []Arm `json:"order"`
}

// ArmSamples are an arm's samples, pass by pass.
type ArmSamples struct {
	Name       Arm       `json:"name"`
	Build      side.Side `json:"build"`
	Statistics string    `json:"statistics"` // on or off
	Samples    []*Sample `json:"samples"`
}

// Sample is what one arm measured in one pass, each measure from a fresh
// server.
type Sample struct {
	Pass         int                `json:"pass"`     // from 1
	Position     int                `json:"position"` // from 1: the arm's turn in the pass
	CPU          *CPUSample         `json:"cpu,omitempty"`
	Locks        *LockSample        `json:"locks,omitempty"`
	Instructions *InstructionSample `json:"instructions,omitempty"`
	Warnings     []string           `json:"warnings,omitempty"`
}

// CPUSample is one measured wrk run of a CPU block.
type CPUSample struct {
	Requests        int64   `json:"requests"`
	DurationS       float64 `json:"duration_s"`
	CPUSeconds      float64 `json:"cpu_s"`
	CPUMsPerRequest float64 `json:"cpu_ms_per_request"`
	// The CPU time in user and in kernel mode; a contended lock's futex
	// waits are system time.
	UserMsPerRequest   float64 `json:"user_ms_per_request"`
	SystemMsPerRequest float64 `json:"system_ms_per_request"`
	// Context switches of the server's threads per request: voluntary (a
	// thread blocked, as on a contended mutex) and involuntary (preempted).
	VoluntarySwitchesPerRequest   float64 `json:"voluntary_switches_per_request"`
	InvoluntarySwitchesPerRequest float64 `json:"involuntary_switches_per_request"`
	// StealShare is the share of the machine's CPU time the hypervisor
	// took during the window; HeavySteal flags a window above 5%.
	// PressureShare is the share of the window in which some task waited
	// for a CPU (/proc/pressure/cpu), high by design when the server's
	// threads share one CPU.
	StealShare     float64 `json:"steal_share"`
	HeavySteal     bool    `json:"heavy_steal,omitempty"`
	PressureShare  float64 `json:"pressure_share,omitempty"`
	RequestsPerSec float64 `json:"requests_per_s"`
	LatencyAvgMs   float64 `json:"latency_avg_ms"`
	LatencyP50Ms   float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Ms   float64 `json:"latency_p99_ms,omitempty"`
}

// LockSample is one lock-count window.
type LockSample struct {
	Requests int    `json:"requests"`
	Locks    uint64 `json:"locks"`
	Trylocks uint64 `json:"trylocks"`
	// LocksPerRequest counts pthread_mutex_lock calls; TopMutexPerRequest
	// those on the arm's most-locked mutex, which is a different mutex in
	// different arms (StatsMutex is the same one in all).
	LocksPerRequest    float64 `json:"locks_per_request"`
	TopMutexPerRequest float64 `json:"top_mutex_per_request"`
	DistinctMutexes    int     `json:"distinct_mutexes"`
	// The lock calls split by who locks the mutex: one locked by more than
	// one thread (shared: where threads can contend) or by one only
	// (per-thread: never contended); SharedMutexes counts the shared ones
	// called in the window.
	SharedLocksPerRequest    float64 `json:"shared_locks_per_request"`
	PerThreadLocksPerRequest float64 `json:"per_thread_locks_per_request"`
	SharedMutexes            int     `json:"shared_mutexes"`
	// NewDBConnections counts database connections opened in the window,
	// when it could be read: a PHP thread that connects in the window adds
	// its connection's locks.
	NewDBConnections *int64 `json:"new_db_connections,omitempty"`
	// StatsMutex is the calls on mysqlnd's global statistics mutex; absent
	// when the server's memory could not be read.
	StatsMutex *StatsMutexSample `json:"stats_mutex,omitempty"`
}

// StatsMutexSample counts the calls on the mutex of mysqlnd's global
// statistics, the same mutex in every arm: the one whose address is a word
// of the heap block mysqlnd_global_stats points to (its LOCK_access), read
// from the server's memory. A build whose statistics take no mutex, or
// statistics off, count zero.
type StatsMutexSample struct {
	// Block is the address of mysqlnd_global_stats' block in the process
	// that served the window; Mutex that of the mutex it holds, when that
	// was locked in the window.
	Block string `json:"block"`
	Mutex string `json:"mutex,omitempty"`
	// Shared says more than one thread locked it.
	Shared          bool    `json:"shared,omitempty"`
	Locks           uint64  `json:"locks"`
	LocksPerRequest float64 `json:"locks_per_request"`
}

// InstructionSample is one callgrind window.
type InstructionSample struct {
	Requests     int    `json:"requests"`
	Instructions uint64 `json:"instructions"`
	// MarkerInstructions is the cost of one marker request, subtracted.
	MarkerInstructions     uint64  `json:"marker_instructions"`
	InstructionsPerRequest float64 `json:"instructions_per_request"`
	NewDBConnections       *int64  `json:"new_db_connections,omitempty"`
}

// MeasureStats are the statistics of one measure.
type MeasureStats struct {
	Name   string `json:"name"`   // cpu, throughput, locks, stats_mutex_locks, instructions
	Unit   string `json:"unit"`   // as in bench.txt: ms-cpu/req, ...
	Better string `json:"better"` // lower or higher
	// Noisy marks a measure that depends on the machine's load (CPU time,
	// throughput): report it with its spread, do not gate on it on a
	// shared machine.
	Noisy bool         `json:"noisy,omitempty"`
	Arms  []ArmSummary `json:"arms"`
	Costs []CostStats  `json:"costs"`
	// HeadVsBase compares head's cost of statistics with base's; absent
	// without a head build.
	HeadVsBase *Comparison `json:"head_vs_base,omitempty"`
	// HeadVsBaseArms compares head with base in each arm, statistics off
	// and on, paired by pass: a head slower than base in both arms has
	// the cost of statistics base has, and one slower only with
	// statistics off a smaller cost; either is a regression.
	HeadVsBaseArms []ArmComparison `json:"head_vs_base_arms,omitempty"`
	// Verdict is head against base over HeadVsBase and HeadVsBaseArms:
	// regressed where any of them is, else improved where one is, else
	// not decided where one could not decide, else no change; "not
	// judged" for a part of a judged measure (what explains CPU time, the
	// shared and per-thread lock calls). Without a head, empty.
	Verdict  benchstat.Change `json:"verdict,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
}

// ArmSummary is one arm's median with its confidence interval.
type ArmSummary struct {
	Arm        Arm       `json:"arm"`
	N          int       `json:"n"`
	Median     float64   `json:"median"`
	Lo         float64   `json:"lo"`
	Hi         float64   `json:"hi"`
	Confidence float64   `json:"confidence"`
	Values     []float64 `json:"values"`
}

// CostStats is the cost of statistics in one build: on against off,
// paired by pass.
type CostStats struct {
	Build side.Side `json:"build"`
	// Ratio is the median on/off ratio of the passes with its interval;
	// absent (zero N) when an off value is not positive.
	Ratio Interval `json:"ratio"`
	// Diff is the median on−off difference with its interval.
	Diff Interval `json:"diff"`
	// Above and Below count the passes where on was above and below off;
	// SignP is the sign test on them.
	Above int     `json:"above"`
	Below int     `json:"below"`
	SignP float64 `json:"sign_p"`
	// P is the Mann-Whitney U test of the on against the off sample,
	// unpaired as benchstat computes it; it decides nothing.
	P float64 `json:"p"`
	// Effect is the relative cost the verdict weighs: the Hodges-Lehmann
	// estimate for a noisy measure, the ratio of the medians for an exact
	// one, less 1.
	Effect  float64          `json:"effect"`
	Verdict benchstat.Change `json:"verdict"`
	// DecidedBy says what reached the verdict: "wilcoxon" (the
	// signed-rank test on the per-pass log(on/off), or on on−off when Of
	// is "diff") or "spread" (an exact measure: Exact).
	DecidedBy string `json:"decided_by,omitempty"`
	// Of is what the pairs were compared on: "ratio" (log on/off) or
	// "diff" (on−off, when a value is not positive).
	Of string `json:"of,omitempty"`
	// Pairs counts the passes paired; WilcoxonP is the signed-rank test's
	// two-sided p-value on them or, for a noisy measure, on its Servers.
	Pairs     int     `json:"pairs"`
	WilcoxonP float64 `json:"wilcoxon_p"`
	// Servers counts the pairs a noisy measure's test ran on: the passes
	// of one round of servers averaged into one (the server is the unit:
	// its passes share its offset).
	Servers int `json:"servers,omitempty"`
	// Detectable is the smallest relative change a noisy measure's test
	// finds with 80% power at alpha, sized from the run's own noise;
	// absent where it has too few servers to find any (fewer than 6 at
	// 0.05). A comparison that finds nothing is no change only where this
	// is at most the minimum effect, else not decided.
	Detectable *float64 `json:"detectable,omitempty"`
	// HodgesLehmann is the cost as the Hodges-Lehmann estimate of the
	// median per-pass log(on/off), with the interval that inverts the
	// signed-rank test, given as a ratio on/off; or, when Of is "diff", of
	// on−off.
	HodgesLehmann Interval `json:"hodges_lehmann"`
	// Exact is the judgment by spread of an exact measure: off (old)
	// against on (new).
	Exact *ExactStats `json:"exact,omitempty"`
}

// Interval is a median with its confidence interval.
type Interval struct {
	N          int     `json:"n"`
	Median     float64 `json:"median"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
}

// ExactStats judge an exact measure (see benchstat.ExactRule): a change
// is one where the means differ by more than Tolerance, the Floor (the
// smallest change worth finding: max(the exact floor of the old mean,
// Allowance)) plus the t quantile times StdErr, the standard error of
// the difference from the two samples' pooled Noise, or the noise the
// rule assumes where that is larger or one value a side measures none
// (NoiseAssumed). Apart (the two ranges do not overlap) is shown and
// decides nothing.
type ExactStats struct {
	Old       Range   `json:"old"`
	New       Range   `json:"new"`
	Tolerance float64 `json:"tolerance"`
	Apart     bool    `json:"apart"`
	Floor     float64 `json:"floor"`
	// Allowance is the rule's absolute part of the floor, in the measure's
	// units: 0.5 lock calls a request, whose changes the report shows as
	// differences.
	Allowance    float64 `json:"allowance,omitempty"`
	Noise        float64 `json:"noise"`
	NoiseAssumed bool    `json:"noise_assumed,omitempty"`
	StdErr       float64 `json:"std_err"`
	// Detectable is the smallest true difference the rule finds with 80%
	// power, in the measure's units.
	Detectable float64 `json:"detectable"`
}

// Range is the spread of repeated measurements.
type Range struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Max    float64 `json:"max"`
}

// Comparison of head against base, paired by pass: of their costs of
// statistics (the signed-rank test on log(head's on/off ÷ base's on/off)
// of each pass, or on the difference of the on−off differences), or of
// their values in one arm (on log(head/base)); with the sign test, the
// Hodges-Lehmann estimate, and the verdict. A noisy measure's test runs
// on its servers, an exact measure's verdict is its rule's (Exact).
type Comparison struct {
	// Of says what was compared: "ratio" or "diff".
	Of   string   `json:"of"`
	Base Interval `json:"base"`
	Head Interval `json:"head"`
	// Ratio is head's cost over base's (the exponential of the
	// Hodges-Lehmann estimate of the per-pass log ratio) with its
	// interval; Diff the Hodges-Lehmann estimate of head−base of the
	// per-pass costs.
	Ratio Interval `json:"ratio"`
	Diff  Interval `json:"diff"`
	// P is the Mann-Whitney U test of the two builds' per-pass costs,
	// unpaired; it decides nothing.
	P       float64          `json:"p"`
	Effect  float64          `json:"effect"`
	Verdict benchstat.Change `json:"verdict"`
	// DecidedBy, Pairs, WilcoxonP, Servers, Detectable, Above, Below,
	// SignP and Exact as in CostStats, head against base.
	DecidedBy  string      `json:"decided_by,omitempty"`
	Pairs      int         `json:"pairs"`
	WilcoxonP  float64     `json:"wilcoxon_p"`
	Servers    int         `json:"servers,omitempty"`
	Detectable *float64    `json:"detectable,omitempty"`
	Above      int         `json:"above"`
	Below      int         `json:"below"`
	SignP      float64     `json:"sign_p"`
	Exact      *ExactStats `json:"exact,omitempty"`
}

// ArmComparison is head against base in one arm: Statistics "on" or
// "off".
type ArmComparison struct {
	Statistics string `json:"statistics"`
	Comparison
}
