package resultstest

import (
	"crypto/sha1"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/github"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/verify/bench"
	benchrun "github.com/patchproof/patchproof/workloads/bench"
	"github.com/patchproof/patchproof/workloads/perfprof"
)

// DemoPasses and DemoCountedPasses are the passes of the demo's
// benchmark: 40 CPU passes on warm servers, the exact measures from 3.
const (
	DemoPasses        = 40
	DemoCountedPasses = 3
)

// DemoBench is the benchmark of the demo as a 2-core machine measures it,
// in the size results.json has it: 40 passes of the four arms with CPU
// time, 3 counted passes of lock calls and instructions, a perf profile of
// each arm, and PHP crashing at shutdown in every server of both builds
// (base 62 of 62, head 62 of 62), as the demo's PHP 8.2 does under
// Apache's graceful stop. The samples are drawn from a fixed seed, so the
// statistics are the same on every call. dir is where the run put its
// files (bench/TARGET).
func DemoBench(dir string) *bench.Result {
	r := benchrun.Result{
		Workload: "select20", Server: "apache-event", CPUSource: "cgroup2",
		Machine: benchrun.Machine{GOOS: "linux", GOARCH: "amd64", CPU: "AMD EPYC 7763 64-Core Processor"},
		Settings: benchrun.Settings{
			Threads: 16, Connections: 12, LoadThreads: 4, Passes: DemoPasses, DurationS: 10, WarmupS: 3, KeepAlive: true,
			LockRequests: 1000, CallgrindRequests: 500, WindowConcurrency: 8, WindowWarmup: 128,
			Measures:   []string{"cpu", "locks", "instructions", "profile"},
			Thresholds: benchrun.Thresholds{Alpha: 0.05, MinEffect: 0.01, Confidence: 0.95, ExactFloor: 0.005},
			ServerCPUs: "1", LoadCPUs: "0", DBCPUs: "0", CountedPasses: DemoCountedPasses, PassesPerServer: 2,
			Pinning:  "the server on CPU 1, the load and the database on CPU 0: 2 CPUs cannot keep them apart further",
			OPcache:  "off: the builds have no OPcache (no modules/opcache.so: PHP's --disable-all leaves it out unless --enable-opcache puts it back), so PHP compiles the script on every request",
			ProfileS: 5,
		},
		Builds: []benchrun.Build{
			{Name: side.Base, PHP: "/cache/builds/base-zts/sapi/cli/php", Module: "/cache/builds/base-zts/libs/libphp.so"},
			{Name: side.Head, PHP: "/cache/builds/head-zts/sapi/cli/php", Module: "/cache/builds/head-zts/libs/libphp.so"},
		},
		ServerCrashes: []*benchrun.ServerCrashes{
			{Build: side.Base, Servers: 62, Crashed: 62, Signals: []string{"Segmentation fault (11)"}},
			{Build: side.Head, Servers: 62, Crashed: 62, Signals: []string{"Segmentation fault (11)"}},
		},
		BenchTxt: "bench.txt",
	}
	type means struct{ locks, top, instr, cpu, rps float64 }
	mean := map[string]means{
		"base-on":  {748.4, 381, 483120, 0.318, 2520},
		"base-off": {6.33, 2.33, 423980, 0.301, 2660},
		"head-on":  {6.36, 2.36, 430535, 0.304, 2640},
		"head-off": {6.34, 2.33, 423410, 0.300, 2670},
	}
	rng := rand.New(rand.NewPCG(27, 2026))
	noise := func(x, rel float64) float64 { return x * (1 + rel*rng.NormFloat64()) }
	var arms []benchrun.Arm
	for _, sd := range []side.Side{side.Base, side.Head} {
		for _, on := range []bool{true, false} {
			a := benchrun.Arm{Side: sd, Statistics: on}
			arms = append(arms, a)
			r.Arms = append(r.Arms, &benchrun.ArmSamples{Name: a, Build: sd, Statistics: map[bool]string{true: "on", false: "off"}[on]})
		}
	}
	for p := 1; p <= DemoPasses; p++ {
		pass := benchrun.Pass{Pass: p}
		for i := range arms {
			// A balanced order: each arm in each position as often.
			k := (i + p) % len(arms)
			if p%2 == 0 {
				k = len(arms) - 1 - k
			}
			a, as := arms[k], r.Arms[k]
			pass.Order = append(pass.Order, a)
			m := mean[a.String()]
			cpu := noise(m.cpu, 0.04)
			rps := noise(m.rps, 0.04)
			steal := 0.01 + 0.02*rng.Float64()
			s := &benchrun.Sample{Pass: p, Position: i + 1, CPU: &benchrun.CPUSample{
				Requests: int64(10 * rps), DurationS: 10, CPUSeconds: 10 * rps * cpu / 1000, CPUMsPerRequest: cpu, RequestsPerSec: rps,
				UserMsPerRequest: 0.8 * cpu, SystemMsPerRequest: 0.2 * cpu, VoluntarySwitchesPerRequest: noise(3, 0.05), InvoluntarySwitchesPerRequest: noise(1, 0.05),
				StealShare: steal, PressureShare: 0.9, LatencyAvgMs: noise(4.7, 0.05), LatencyP50Ms: noise(4.1, 0.05), LatencyP99Ms: noise(12, 0.1),
			}}
			if p == 17 {
				s.CPU.StealShare, s.CPU.HeavySteal = 0.071, true
				s.Warnings = []string{"the hypervisor took 7.1% of the CPU time in this window (steal): its CPU time is less certain"}
			}
			if p <= DemoCountedPasses {
				sm := &benchrun.StatsMutexSample{Block: "0x55d0c0a1e2b0"}
				if a == (benchrun.Arm{Side: side.Base, Statistics: true}) {
					sm.Mutex, sm.Locks, sm.LocksPerRequest, sm.Shared = "0x55d0c0a1f5d0", uint64(1000*m.top), m.top, true
				}
				locks := m.locks + 0.02*rng.NormFloat64()
				s.Locks = &benchrun.LockSample{Requests: 1000, Locks: uint64(1000 * locks), LocksPerRequest: locks, TopMutexPerRequest: m.top,
					DistinctMutexes: 44, SharedLocksPerRequest: m.top + 1, PerThreadLocksPerRequest: locks - m.top - 1, SharedMutexes: 3, StatsMutex: sm}
				instr := noise(m.instr, 0.00003)
				s.Instructions = &benchrun.InstructionSample{Requests: 500, Instructions: uint64(500 * instr), MarkerInstructions: 106000, InstructionsPerRequest: instr}
			}
			as.Samples = append(as.Samples, s)
		}
		r.Passes = append(r.Passes, pass)
	}
	for _, a := range arms {
		d := fmt.Sprintf("%s/profile/%s", dir, a)
		pr := &perfprof.Profile{PIDs: []int{4101}, Samples: 4870, LockShare: 0.021,
			Data: d + "/perf.data", Flamegraph: d + "/flamegraph.svg", Folded: d + "/folded.txt"}
		if a == (benchrun.Arm{Side: side.Base, Statistics: true}) {
			pr.LockShare = 0.094
		}
		for i, name := range []string{"zend_execute_ex", "_emalloc", "php_mysqlnd_rowp_read", "pthread_mutex_lock", "zend_hash_find"} {
			pr.Top = append(pr.Top, perfprof.Symbol{Name: name, DSO: "libphp.so", Samples: 600 - 100*i, Share: float64(600-100*i) / 4870})
		}
		r.Profiles = append(r.Profiles, &benchrun.ArmProfile{Arm: a, Profile: pr})
	}
	r.Analyse()
	return &bench.Result{Result: r}
}

// DemoRun is the demo's run with its benchmark: Demo, bench included.
func DemoRun() *results.Result {
	res := Demo()
	res.Settings.Stages = []string{results.StageCheckout, results.StageBuild, results.StageCodeDiff, results.StageTests, results.StageRace, results.StageBench}
	res.Targets[0].Bench = DemoBench("bench/PHP-8.2")
	for _, s := range res.Stages {
		if s.Name == results.StageBench {
			*s = *stage(results.StageBench, results.StatusPassed, 20*time.Minute+21*time.Second, 31*time.Minute+12*time.Second, "")
		}
	}
	res.FinishedAt = at(51*time.Minute + 40*time.Second)
	return res
}

// PRJob is the result of one job of the validation workflow for PR 4242:
// the demo run's findings (its benchmark included) for the one target
// name, master or a backport of the PR's change to a release branch.
func PRJob(name string) *results.Result {
	res := AsPRJob(DemoRun(), name)
	res.Targets[0].Bench = DemoBench("bench/" + name)
	return res
}

// AsPRJob makes res, a run of one target, the result of PR 4242's job for
// the target name, as PRJob does: the PR's repository, commits and
// settings, the target's name in its builds' labels and logs. The checks'
// findings stay res's own, so that a real demo run's results.json reads
// as a job of a real PR's run.
func AsPRJob(res *results.Result, name string) *results.Result {
	res.Settings = settings(PHPSrc, 4242, false)
	res.Settings.Stages = []string{results.StageCheckout, results.StageBuild, results.StageCodeDiff, results.StageTests, results.StageRace, results.StageBench}
	res.RunURL = "https://github.com/patchproof/patchproof/actions/runs/9003"
	tr := res.Targets[0]
	tr.Name, tr.Repo = name, PHPSrc
	tr.Base = results.CommitRef{Ref: "master", Commit: PRBase, BranchTip: PRTip, IsMergeBase: true, Subject: "Merge branch 'PHP-8.5'"}
	tr.Head = results.CommitRef{Ref: github.HeadRef(4242), Commit: PRHead, Subject: "mysqlnd: use relaxed atomics for statistics"}
	for _, b := range tr.Builds {
		b.Label = strings.Replace(b.Label, "PHP-8.2", name, 1)
		b.BuildLog = strings.Replace(b.BuildLog, "PHP-8.2", name, 1)
	}
	if tr.Race != nil {
		for _, c := range tr.Race.Counters {
			c.Build = strings.Replace(c.Build, "PHP-8.2", name, 1)
		}
		if tr.Race.TSan != nil {
			for _, s := range tr.Race.TSan.Sides {
				s.Build = strings.Replace(s.Build, "PHP-8.2", name, 1)
				s.Log = strings.Replace(s.Log, "PHP-8.2", name, 1)
			}
		}
	}
	if name != "master" {
		// A backport: the change applied onto the branch's tip.
		tip, commit := madeUpCommit("tip of "+name), madeUpCommit("backport onto "+name)
		tr.Base = results.CommitRef{Ref: name, Commit: tip, BranchTip: tip}
		tr.Head = results.CommitRef{Ref: shortPRHead + " onto " + name, Commit: commit, Subject: "mysqlnd: use relaxed atomics for statistics"}
		tr.Backport = &results.BackportResult{From: "master", FromCommit: PRHead, Branch: name, Applied: true, Commit: commit}
	}
	for _, b := range tr.Builds {
		b.PHPVersion = strings.Replace(b.PHPVersion, "8.2.32", versionOf(name), 1)
	}
	return res
}

const shortPRHead = "2c3d4e5f6071"

// madeUpCommit is a commit hash that looks like one, the same for the
// same words.
func madeUpCommit(words string) string {
	return fmt.Sprintf("%x", sha1.Sum([]byte(words)))
}

// versionOf is a made-up version of a target branch's PHP.
func versionOf(name string) string {
	switch name {
	case "master":
		return "8.6.0-dev"
	case "PHP-8.5":
		return "8.5.2-dev"
	case "PHP-8.4":
		return "8.4.17-dev"
	case "PHP-8.3":
		return "8.3.30-dev"
	}
	return "8.2.31-dev"
}

// PRTargets are the targets of the PR the tool exists for, its two
// backports with it; FiveTargets two more release branches beside them.
var (
	PRTargets   = []string{"master", "PHP-8.5", "PHP-8.4"}
	FiveTargets = []string{"master", "PHP-8.5", "PHP-8.4", "PHP-8.3", "PHP-8.2"}
)

// PRJobs are one PRJob per name, as the workflow's jobs leave them for
// `patchproof report --merge`.
func PRJobs(names ...string) []*results.Result {
	var rs []*results.Result
	for _, n := range names {
		rs = append(rs, PRJob(n))
	}
	return rs
}
