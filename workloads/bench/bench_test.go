package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/build"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/perf/benchfmt"

	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/select20"
)

func TestBalancedOrder(t *testing.T) {
	both := Options{Base: BuildRef{Module: "b"}, Head: BuildRef{Module: "h"}}
	names := func(as []arm) string {
		var s []string
		for _, a := range as {
			s = append(s, a.String())
		}
		return strings.Join(s, " ")
	}
	var got []string
	for p := 1; p <= 5; p++ {
		got = append(got, names(balancedOrder(both.arms(), p)))
	}
	want := []string{
		"base-on base-off head-on head-off",
		"head-off head-on base-off base-on",
		"head-on head-off base-on base-off",
		"base-off base-on head-off head-on",
		"base-on base-off head-on head-off",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"base and head", both},
		{"base alone", Options{Base: BuildRef{Module: "b"}}},
	} {
		for _, passes := range []int{2, 4, 6, 10, 20} {
			t.Run(fmt.Sprintf("%s, %d passes", tc.name, passes), func(t *testing.T) {
				onFirst := map[side.Side]int{}
				leads := map[side.Side]int{}
				for p := 1; p <= passes; p++ {
					order := balancedOrder(tc.o.arms(), p)
					if len(order) != len(tc.o.arms()) {
						t.Fatalf("pass %d: %s, want every arm once", p, names(order))
					}
					pos := map[Arm]int{}
					for i, a := range order {
						pos[a.Arm] = i
					}
					orientation := map[bool]int{}
					for _, s := range []side.Side{side.Base, side.Head} {
						on, okOn := pos[Arm{s, true}]
						off, okOff := pos[Arm{s, false}]
						if !okOn || !okOff {
							continue
						}
						if d := on - off; d != 1 && d != -1 {
							t.Errorf("pass %d: %s: %s on and off not adjacent", p, names(order), s)
						}
						if on < off {
							onFirst[s]++
						}
						orientation[on < off]++
					}
					if len(orientation) != 1 {
						t.Errorf("pass %d: %s: the builds' on and off in different orders", p, names(order))
					}
					leads[order[0].Side]++
				}
				for s, n := range onFirst {
					if 2*n != passes {
						t.Errorf("%s: on before off in %d of %d passes, want half", s, n, passes)
					}
				}
				if len(onFirst) == 0 {
					t.Error("no build had on first")
				}
				if len(leads) == 2 && passes%4 == 0 && leads[side.Base] != leads[side.Head] {
					t.Errorf("leading builds %v over %d passes, want equal", leads, passes)
				}
			})
		}
	}
}

func TestBenchmarkName(t *testing.T) {
	for in, want := range map[string]string{"select20": "BenchmarkSelect20", "jsonapi": "BenchmarkJsonapi", "json-api_v2": "BenchmarkJsonApiV2"} {
		if got := BenchmarkName(in); got != want {
			t.Errorf("BenchmarkName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolvedDefaults(t *testing.T) {
	mod := filepath.Join(t.TempDir(), "libphp.so")
	os.WriteFile(mod, nil, 0o644)
	tests := []struct {
		name string
		in   Options
		want Settings
	}{
		{"report", Options{}, Settings{Threads: 16, Connections: 12, LoadThreads: 4, Passes: 30, DurationS: 2, WarmupS: 2,
			KeepAlive: true, LockRequests: 1000, CallgrindRequests: 500, WindowConcurrency: 8, WindowWarmup: 128, CountedPasses: 2, PassesPerServer: 2, ProfileS: 5}},
		{"report, 4 threads", Options{Threads: 4}, Settings{Threads: 4, Connections: 3, LoadThreads: 3, Passes: 30, DurationS: 2, WarmupS: 2,
			KeepAlive: true, LockRequests: 1000, CallgrindRequests: 500, WindowConcurrency: 2, WindowWarmup: 32, CountedPasses: 2, PassesPerServer: 2, ProfileS: 5}},
		{"one thread cannot keep alive", Options{Threads: 1}, Settings{Threads: 1, Connections: 1, LoadThreads: 1, Passes: 30, DurationS: 2, WarmupS: 2,
			KeepAlive: false, LockRequests: 1000, CallgrindRequests: 500, WindowConcurrency: 1, WindowWarmup: 8, CountedPasses: 2, PassesPerServer: 2, ProfileS: 5}},
		{"more connections than threads", Options{Connections: 50}, Settings{Threads: 16, Connections: 50, LoadThreads: 4, Passes: 30, DurationS: 2, WarmupS: 2,
			KeepAlive: false, LockRequests: 1000, CallgrindRequests: 500, WindowConcurrency: 8, WindowWarmup: 128, CountedPasses: 2, PassesPerServer: 2, ProfileS: 5}},
		{"quick", Options{Quick: true}, Settings{Threads: 16, Connections: 8, LoadThreads: 2, Passes: 40, DurationS: 1, WarmupS: 1,
			KeepAlive: true, LockRequests: 200, CallgrindRequests: 200, WindowConcurrency: 8, WindowWarmup: 128, Quick: true, CountedPasses: 1, PassesPerServer: 2, ProfileS: 2}},
		{"given", Options{Quick: true, Threads: 4, Connections: 3, Passes: 7, Duration: 2 * time.Second, KeepAlive: KeepAliveOff, CountedPasses: 9},
			Settings{Threads: 4, Connections: 3, LoadThreads: 2, Passes: 7, DurationS: 2, WarmupS: 1,
				KeepAlive: false, LockRequests: 200, CallgrindRequests: 200, WindowConcurrency: 2, WindowWarmup: 32, Quick: true, CountedPasses: 7, PassesPerServer: 2, ProfileS: 2}},
		{"sweep, A/A", Options{Quick: true, Sweep: []int{32, 1, 4, 16}, AA: true}, Settings{Threads: 16, Connections: 8, LoadThreads: 2, Passes: 40, DurationS: 1, WarmupS: 1,
			KeepAlive: true, LockRequests: 200, CallgrindRequests: 200, WindowConcurrency: 8, WindowWarmup: 128, Quick: true, CountedPasses: 1, PassesPerServer: 2, ProfileS: 2,
			AA: true, Sweep: []int{1, 4, 16, 32}, SweepPasses: 12, SweepDurationS: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Base = BuildRef{Module: mod}
			tt.in.Dir = t.TempDir()
			o, err := tt.in.resolved()
			if err != nil {
				t.Fatal(err)
			}
			got := newResult(o).Settings
			// Pinning depends on this machine's CPUs: TestAutoPin.
			got.Measures, got.Thresholds, got.Pinning, got.ServerCPUs, got.LoadCPUs, got.DBCPUs = nil, Thresholds{}, "", "", "", ""
			// The build has no OPcache: TestOPcacheSetting.
			got.OPcache = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := (Options{Dir: "x"}).resolved(); err == nil {
		t.Error("no base build: no error")
	}
	if _, err := (Options{Base: BuildRef{Module: mod}, Dir: "x", Sweep: []int{0}}).resolved(); err == nil {
		t.Error("a sweep with 0 threads: no error")
	}
	if o, err := (Options{Base: BuildRef{Module: mod}, Dir: "x", AA: true}).resolved(); err != nil || o.Head != o.Base {
		t.Errorf("A/A: head %+v, error %v; want base's build", o.Head, err)
	}
	if _, err := (Options{Base: BuildRef{Module: mod}, Dir: "x", Measures: []Measure{"bogus"}}).resolved(); err == nil {
		t.Error("unknown measure: no error")
	}
	for _, m := range allMeasures {
		if got, err := ParseMeasure(string(m)); got != m || err != nil {
			t.Errorf("ParseMeasure(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := ParseMeasure("bogus"); err == nil || err.Error() != `unknown measure "bogus" (cpu, locks, instructions, profile)` {
		t.Errorf("ParseMeasure(bogus): %v", err)
	}
}

// One counted pass measures no spread: a build's lock calls change by
// Apache's own noise (a tenth of a call) without it being a cost, and by
// hundreds with statistics.
func TestLockResolution(t *testing.T) {
	d := defOf(LockCalls)
	tests := []struct {
		on, off float64
		want    benchstat.Change
	}{
		{6.265, 6.35, benchstat.NoChange},
		// Beyond the allowance, within it and the noise one pass of each
		// arm may have.
		{6.9, 6.35, benchstat.NoChange},
		{7.4, 6.35, benchstat.Regressed},
		{748.4, 6.37, benchstat.Regressed},
	}
	for _, tt := range tests {
		cs, _, err := buildCost(side.Head, pairs{samples: []benchstat.Sample{benchstat.NewSample(tt.on), benchstat.NewSample(tt.off)}, passes: 1}, d, benchstat.Thresholds{})
		if err != nil {
			t.Fatal(err)
		}
		if cs.Verdict != tt.want || cs.Exact.Tolerance < LockResolution {
			t.Errorf("on %v, off %v: %s (tolerance %v), want %s", tt.on, tt.off, cs.Verdict, cs.Exact.Tolerance, tt.want)
		}
	}
}

func TestAutoPin(t *testing.T) {
	tests := []struct {
		name                  string
		in                    Options
		cpus                  []int
		server, load, db, why string
	}{
		{"two CPUs", Options{}, []int{0, 1}, "1", "0", "0",
			"by default on this 2-CPU machine: the server on CPU 1, wrk and the database on CPU 0; with the server's threads on one CPU this measures what locking costs, not contention between CPUs"},
		{"four CPUs", Options{}, []int{0, 1, 2, 3}, "2,3", "0,1", "0,1",
			"by default on this 4-CPU machine: the server on CPU 2,3, wrk and the database on CPU 0,1"},
		{"eight CPUs", Options{}, []int{0, 1, 2, 3, 4, 5, 6, 7}, "", "", "", "unpinned, 8 CPUs"},
		{"one CPU", Options{}, []int{3}, "", "", "", "unpinned, 1 CPU"},
		{"no pin", Options{NoPin: true}, []int{0, 1}, "", "", "", "unpinned, 2 CPUs"},
		{"given", Options{LoadCPUs: "0"}, []int{0, 1}, "", "0", "", "as given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.in
			o.autoPin(tt.cpus)
			got := []string{o.ServerCPUs, o.LoadCPUs, o.DBCPUs, o.pinning}
			if diff := cmp.Diff([]string{tt.server, tt.load, tt.db, tt.why}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// knownResult is a six-pass result of known samples: base's statistics
// cost 118× the lock calls and 14% the instructions, head's nothing and
// 1.7%; CPU time has noise, and head's CPU cost goes up in five passes of
// six.
func knownResult(t *testing.T) *Result {
	t.Helper()
	o := Options{Base: BuildRef{Module: "/b/libs/libphp.so"}, Head: BuildRef{Module: "/h/libs/libphp.so"},
		Workload: select20.Workload(), Threads: 16, Connections: 12, LoadThreads: 4, Passes: 6,
		Duration: 20 * time.Second, Warmup: 5 * time.Second, LockRequests: 1000, CallgrindRequests: 500,
		WindowConcurrency: 8, WindowWarmup: 128, Measures: allMeasures, Server: "apache", CountedPasses: 6, PassesPerServer: 1}
	r := newResult(o)
	r.Machine = Machine{GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU @ 2.00GHz"}
	r.CPUSource = "cgroup2"
	type vals struct{ locks, top, instr, cpu, rps float64 }
	data := map[string][]vals{
		"base-on":  {{748.4, 381, 483130, 0.310, 2600}, {748.4, 381, 483078, 0.322, 2500}, {748.3, 381, 483137, 0.305, 2650}, {748.4, 381, 483101, 0.331, 2450}, {748.5, 381, 483090, 0.317, 2550}, {748.4, 381, 483115, 0.315, 2580}},
		"base-off": {{6.33, 2.33, 423978, 0.300, 2680}, {6.32, 2.32, 423980, 0.296, 2700}, {6.35, 2.35, 423969, 0.291, 2750}, {6.30, 2.30, 423990, 0.309, 2600}, {6.36, 2.36, 423975, 0.302, 2660}, {6.34, 2.34, 423982, 0.298, 2690}},
		"head-on":  {{6.36, 2.36, 430549, 0.301, 2690}, {6.37, 2.37, 430526, 0.306, 2650}, {6.34, 2.34, 430530, 0.298, 2700}, {6.38, 2.38, 430541, 0.312, 2590}, {6.35, 2.35, 430519, 0.303, 2670}, {6.35, 2.35, 430535, 0.300, 2690}},
		"head-off": {{6.32, 2.31, 423372, 0.299, 2700}, {6.38, 2.38, 423521, 0.301, 2690}, {6.33, 2.33, 423400, 0.295, 2720}, {6.31, 2.31, 423450, 0.305, 2640}, {6.36, 2.36, 423390, 0.300, 2680}, {6.34, 2.33, 423410, 0.302, 2670}},
	}
	arms := o.arms()
	byArm := map[Arm]*ArmSamples{}
	for _, a := range arms {
		ra := &ArmSamples{Name: a.Arm, Build: a.Side, Statistics: onOff(a.Statistics)}
		r.Arms = append(r.Arms, ra)
		byArm[ra.Name] = ra
	}
	for p := 1; p <= 6; p++ {
		pass := Pass{Pass: p}
		for i, a := range balancedOrder(arms, p) {
			pass.Order = append(pass.Order, a.Arm)
			v := data[a.String()][p-1]
			byArm[a.Arm].Samples = append(byArm[a.Arm].Samples, &Sample{
				Pass: p, Position: i + 1,
				CPU: &CPUSample{Requests: int64(20 * v.rps), DurationS: 20, CPUSeconds: 20 * v.rps * v.cpu / 1000, CPUMsPerRequest: v.cpu, RequestsPerSec: v.rps, LatencyAvgMs: 5, LatencyP50Ms: 4, LatencyP99Ms: 12,
					UserMsPerRequest: 0.8 * v.cpu, SystemMsPerRequest: 0.2 * v.cpu, VoluntarySwitchesPerRequest: 3 * v.cpu, InvoluntarySwitchesPerRequest: v.cpu, StealShare: 0.01, PressureShare: 0.9},
				Locks: &LockSample{Requests: 1000, Locks: uint64(1000 * v.locks), LocksPerRequest: v.locks, TopMutexPerRequest: v.top, DistinctMutexes: 44,
					SharedLocksPerRequest: v.top + 1, PerThreadLocksPerRequest: v.locks - v.top - 1, SharedMutexes: 3,
					StatsMutex: statsMutexOf(a.Arm, v.top)},
				Instructions: &InstructionSample{Requests: 500, Instructions: uint64(500 * v.instr), MarkerInstructions: 106000, InstructionsPerRequest: v.instr},
			})
		}
		r.Passes = append(r.Passes, pass)
	}
	r.Analyse()
	return r
}

// statsMutexOf is what the server's memory says of the statistics mutex:
// base with statistics on locks it as often as its top mutex; off, and in
// head, whose statistics take no mutex, nothing is locked on it.
func statsMutexOf(a Arm, top float64) *StatsMutexSample {
	sm := &StatsMutexSample{Block: "0x55d0c0a1e2b0"}
	if a == (Arm{side.Base, true}) {
		sm.Mutex, sm.Locks, sm.LocksPerRequest, sm.Shared = "0x55d0c0a1f5d0", uint64(1000*top), top, true
	}
	return sm
}

func TestAnalyseKnownSamples(t *testing.T) {
	r := knownResult(t)
	type verdicts struct {
		Measure string
		// The cost of statistics in each build; head against base with
		// statistics off, on, of the costs, and over all three.
		Base, Head                benchstat.Change
		Off, On, Cost, HeadVsBase benchstat.Change
	}
	var got []verdicts
	for _, m := range r.Measures {
		v := verdicts{Measure: m.Name, Cost: m.HeadVsBase.Verdict, HeadVsBase: m.Verdict}
		for _, c := range m.Costs {
			if c.Build == side.Base {
				v.Base = c.Verdict
			} else {
				v.Head = c.Verdict
			}
		}
		for _, a := range m.HeadVsBaseArms {
			if a.Statistics == "on" {
				v.On = a.Verdict
			} else {
				v.Off = a.Verdict
			}
		}
		got = append(got, v)
	}
	const (
		up, down, same = benchstat.Regressed, benchstat.Improved, benchstat.NoChange
		open, shown    = benchstat.NotDecided, benchstat.NotJudged
	)
	want := []verdicts{
		{"locks", up, same, same, down, down, down},
		{"stats_mutex_locks", up, same, same, down, down, down},
		// Parts of the total: shown against base, not judged.
		{"shared_locks", up, same, shown, shown, shown, shown},
		{"per_thread_locks", up, same, shown, shown, shown, shown},
		{"instructions", up, up, same, down, down, down},
		// Head's CPU cost, 5 of 6 passes up, and head against base with
		// statistics off are too noisy in six passes to have found 1%.
		{"cpu", up, open, open, down, down, down},
		// What explains CPU time is shown against base, not judged.
		{"cpu_user", up, open, shown, shown, shown, shown},
		{"cpu_system", up, open, shown, shown, shown, shown},
		{"voluntary_switches", up, open, shown, shown, shown, shown},
		{"involuntary_switches", up, open, shown, shown, shown, shown},
		{"throughput", up, open, shown, shown, shown, shown},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	locks := r.measure("locks")
	if c := locks.Costs[0]; c.Ratio.Median < 117 || c.Ratio.Median > 119 || c.Above != 6 || c.P > 0.01 || c.DecidedBy != "spread" {
		t.Errorf("base lock cost: %+v", c)
	}
	cpu := r.measure("cpu")
	if c := cpu.Costs[0]; c.DecidedBy != "wilcoxon" || c.Pairs != 6 || c.Servers != 6 || c.WilcoxonP != 2.0/64 || c.Of != "ratio" || c.Detectable == nil ||
		c.HodgesLehmann.Lo > c.HodgesLehmann.Median || c.HodgesLehmann.Median > c.HodgesLehmann.Hi {
		t.Errorf("base CPU cost: %+v", c)
	}
	if c := cpu.Costs[1]; c.Above != 5 || c.Below != 1 || c.WilcoxonP <= 0.05 {
		t.Errorf("head CPU cost: %+v, want 5 of 6 up and no verdict", c)
	}
	instr := r.measure("instructions")
	if c := instr.Costs[1]; c.Effect < 0.016 || c.Effect > 0.018 {
		t.Errorf("head instruction cost %v, want about +1.7%%", c.Effect)
	}
	// The result is JSON-safe: no NaN anywhere.
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func TestBenchTxt(t *testing.T) {
	r := knownResult(t)
	var b bytes.Buffer
	if err := r.WriteBenchTxt(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "bench.golden"), b.Bytes())

	// Read back, the lines give every arm's samples in pass order, and
	// the units which way is better.
	results, units := readBenchTxt(t, b.Bytes())
	for _, m := range r.Measures {
		for _, a := range m.Arms {
			var got []float64
			for _, res := range results {
				if res.Name.String() != fmt.Sprintf("Select20/build=%s/stats=%s", a.Arm.Side, onOff(a.Arm.Statistics)) {
					continue
				}
				if v, ok := res.Value(m.Unit); ok {
					got = append(got, v)
				}
			}
			if diff := cmp.Diff(a.Values, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", m.Unit, a.Arm, diff)
			}
		}
		if want, got := map[string]int{"lower": -1, "higher": 1}[m.Better], units.GetBetter(m.Unit); got != want {
			t.Errorf("%s: better %d, want %d (%s)", m.Unit, got, want, m.Better)
		}
	}
	for _, res := range results {
		if got := res.GetConfig("cpu-source"); got != "cgroup2" {
			t.Errorf("%s: cpu-source %q, want cgroup2", res.Name, got)
		}
	}

	// And the real benchstat reads it unchanged, as it is and as the
	// report tells readers to run it.
	tool := benchstatTool(t)
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"Select20/build=base/stats=on", "Select20/build=head/stats=off"}},
		{[]string{"-col", "/stats@(off on)"}, []string{"Select20/build=base", "Select20/build=head"}},
		{[]string{"-col", "/build@(base head)"}, []string{"Select20/stats=off", "Select20/stats=on"}},
	} {
		out, err := exec.Command(tool, append(tc.args, path)...).CombinedOutput()
		if err != nil {
			t.Fatalf("benchstat %q: %v\n%s", tc.args, err, out)
		}
		for _, want := range append([]string{"locks/req", "instr/req", "ms-cpu/req", "req/s", "cpu: Test CPU @ 2.00GHz"}, tc.want...) {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("benchstat %q output lacks %q:\n%s", tc.args, want, out)
			}
		}
	}
}

// A line the format cannot hold is an error, not a file benchstat
// misreads.
func TestBenchTxtErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(r *Result)
	}{
		{"newline in a configuration value", func(r *Result) { r.Machine.CPU = "Test CPU\nprocessor: 1" }},
		{"NaN", func(r *Result) { r.Arms[1].Samples[2].CPU.CPUMsPerRequest = math.NaN() }},
		{"infinity", func(r *Result) { r.Arms[0].Samples[0].Locks.LocksPerRequest = math.Inf(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := knownResult(t)
			tc.spoil(r)
			var txt BenchTxt
			if err := txt.Add(r); err == nil {
				t.Fatal("no error")
			}
			var b bytes.Buffer
			if err := txt.Write(&b); err != nil || b.Len() != 0 {
				t.Errorf("a failed Add left %q (%v)", b.String(), err)
			}
		})
	}
}

// readBenchTxt reads bench.txt with golang.org/x/perf/benchfmt, as
// benchstat does: its results in file order, and the units' metadata.
func readBenchTxt(t *testing.T, data []byte) ([]*benchfmt.Result, benchfmt.UnitMetadataMap) {
	t.Helper()
	var results []*benchfmt.Result
	rd := benchfmt.NewReader(bytes.NewReader(data), "bench.txt")
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Error(rec)
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return results, rd.Units()
}

// benchstatTool finds the real benchstat: on PATH, in the repository's
// bin/, where scripts/test installs it, or where "go install" puts it.
func benchstatTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	for _, p := range []string{filepath.Join("..", "..", "bin", "benchstat"), filepath.Join(build.Default.GOPATH, "bin", "benchstat")} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("benchstat not installed (scripts/lib.sh install_tools: go install -C tools golang.org/x/perf/cmd/benchstat)")
	return ""
}

func TestCPUModel(t *testing.T) {
	cpuinfo := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  CPU @ 2.20GHz\n"
	if got, want := cpuModel(cpuinfo), "Intel(R) Xeon(R) CPU @ 2.20GHz"; got != want {
		t.Errorf("cpuModel = %q, want %q", got, want)
	}
	if got := cpuModel("processor\t: 0\n"); got != "" {
		t.Errorf("cpuModel without a model name = %q", got)
	}
}

// The known results as results.json has them: verify/bench renders and
// judges these files, and a field renamed here shows.
func TestResultJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Result
	}{
		{"known", knownResult(t)},
		{"known-base", baseOnlyResult(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.MarshalIndent(tc.r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden.json"), append(b, '\n'))
		})
	}
}

// baseOnlyResult is knownResult with base alone and two passes.
func baseOnlyResult(t *testing.T) *Result {
	r := knownResult(t)
	r.Builds = r.Builds[:1]
	r.Arms = r.Arms[:2]
	r.Passes = r.Passes[:2]
	for _, a := range r.Arms {
		a.Samples = a.Samples[:2]
	}
	r.Analyse()
	return r
}
