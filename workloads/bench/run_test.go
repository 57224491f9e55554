package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/workload"
)

// ztsBuild finds a ZTS build from env (a build dir with sapi/cli/php and
// libs/libphp.so), or at def; "" when there is none.
func ztsBuild(env, def string) BuildRef {
	dir := os.Getenv(env)
	if dir == "" {
		dir = def
	}
	if dir == "" {
		return BuildRef{}
	}
	b := BuildRef{PHP: filepath.Join(dir, "sapi", "cli", "php"), Module: filepath.Join(dir, "libs", "libphp.so"), SrcDir: dir}
	if _, err := os.Stat(b.Module); err != nil {
		return BuildRef{}
	}
	return b
}

// needTools skips when a tool the benchmark runs is missing.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"apache2", "wrk", "valgrind", "gcc", "mariadbd", "mariadb", "taskset", "perf", "setarch"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				t.Skipf("%s not installed", tool)
			}
		}
	}
}

// reachableDir is a temporary directory that Apache's child (www-data)
// can enter.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return dir
}

func startDB(t *testing.T, ctx context.Context) *mysqld.Server {
	t.Helper()
	db, err := mysqld.Start(ctx, mysqld.Options{Dir: filepath.Join(t.TempDir(), "db"), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop() })
	return db
}

// TestQuickRun runs the protocol with CI's settings on the real ZTS
// build(s) and checks the counts the report is about. It never asserts on
// time.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a real benchmark run: -short")
	}
	base := ztsBuild("PATCHPROOF_TEST_ZTS_BUILD", "/tmp/pp-builds/zts")
	if base.IsZero() {
		t.Skip("no ZTS build: set PATCHPROOF_TEST_ZTS_BUILD to a build dir with sapi/cli/php and libs/libphp.so")
	}
	head := ztsBuild("PATCHPROOF_TEST_ZTS_HEAD_BUILD", "")
	needTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	db := startDB(t, ctx)
	dir := reachableDir(t)
	// CI's settings, with fewer CPU passes and a two-count sweep: the
	// test is about what every part measures, not about a verdict.
	const passes = 3
	res, err := Run(ctx, Options{
		Base: base, Head: head,
		DB: workload.DB{Conn: db.Conn}, DBPID: db.PID,
		Dir: dir, Quick: true, Passes: passes, Sweep: []int{2},
		Log: testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.CPUSource == "" {
		t.Error("no CPU source recorded")
	}
	arms := map[string]*ArmSamples{}
	for _, a := range res.Arms {
		arms[a.Name.String()] = a
		if len(a.Samples) != passes {
			t.Fatalf("%s: %d samples, want %d", a.Name, len(a.Samples), passes)
		}
		for _, s := range a.Samples {
			c := s.CPU
			if c == nil || c.Requests == 0 || c.CPUMsPerRequest <= 0 || c.UserMsPerRequest <= 0 {
				t.Fatalf("%s pass %d: CPU sample %+v", a.Name, s.Pass, c)
			}
			// User and system add up to the total, to the clock's tick.
			if d := c.CPUMsPerRequest - c.UserMsPerRequest - c.SystemMsPerRequest; math.Abs(d) > 0.02*c.CPUMsPerRequest {
				t.Errorf("%s pass %d: user %.4f + system %.4f ms is not the total %.4f", a.Name, s.Pass, c.UserMsPerRequest, c.SystemMsPerRequest, c.CPUMsPerRequest)
			}
			// 16 threads on the CPUs of a small machine: they block and are
			// preempted.
			if c.VoluntarySwitchesPerRequest <= 0 {
				t.Errorf("%s pass %d: no voluntary context switches", a.Name, s.Pass)
			}
			// The exact measures come from the one counted pass.
			if (s.Locks != nil) != (s.Pass == 1) || (s.Instructions != nil) != (s.Pass == 1) {
				t.Errorf("%s pass %d: locks %v, instructions %v; want them in pass 1 only", a.Name, s.Pass, s.Locks != nil, s.Instructions != nil)
			}
		}
	}
	on, off := arms["base-on"].Samples[0], arms["base-off"].Samples[0]
	// Measured with PHP 8.2.32: 771 calls with statistics on, 393 on the
	// global mutex.
	if l := on.Locks; l.LocksPerRequest < 300 || l.TopMutexPerRequest < 100 {
		t.Errorf("base, statistics on: %.1f lock calls a request, %.1f on the top mutex; want > 300 and > 100", l.LocksPerRequest, l.TopMutexPerRequest)
	}
	// The statistics mutex, named from the server's memory, is the top
	// mutex with statistics on, and every PHP thread locks it.
	if sm := on.Locks.StatsMutex; sm == nil || sm.Mutex == "" || sm.LocksPerRequest != on.Locks.TopMutexPerRequest || !sm.Shared {
		t.Errorf("base, statistics on: statistics mutex %+v, want the top mutex's %.1f calls, shared", sm, on.Locks.TopMutexPerRequest)
	}
	// The split: the shared side holds the statistics mutex's calls, and
	// the two sides add up to the calls (trylocks aside).
	if l := on.Locks; l.SharedLocksPerRequest < l.StatsMutex.LocksPerRequest || l.SharedMutexes < 1 ||
		math.Abs(l.SharedLocksPerRequest+l.PerThreadLocksPerRequest-l.LocksPerRequest) > 0.01 {
		t.Errorf("base, statistics on: %.2f shared + %.2f per-thread of %.2f lock calls, %d shared mutexes", l.SharedLocksPerRequest, l.PerThreadLocksPerRequest, l.LocksPerRequest, l.SharedMutexes)
	}
	if l := off.Locks; l.LocksPerRequest > 50 {
		t.Errorf("base, statistics off: %.1f lock calls a request, want < 50", l.LocksPerRequest)
	}
	if sm := off.Locks.StatsMutex; sm == nil || sm.Locks != 0 {
		t.Errorf("base, statistics off: statistics mutex %+v, want named and not locked", sm)
	}
	if on.Instructions.InstructionsPerRequest <= off.Instructions.InstructionsPerRequest {
		t.Errorf("base: %.0f instructions a request with statistics on, %.0f off: want more on",
			on.Instructions.InstructionsPerRequest, off.Instructions.InstructionsPerRequest)
	}
	if !head.IsZero() {
		on, off := arms["head-on"].Samples[0].Locks, arms["head-off"].Samples[0].Locks
		if d := on.LocksPerRequest - off.LocksPerRequest; d > 10 || d < -10 {
			t.Errorf("head: %.1f lock calls a request on, %.1f off: want the mysqlnd share gone", on.LocksPerRequest, off.LocksPerRequest)
		}
	}
	// A profile per arm, with samples, a flame graph; base-on spends some
	// of its CPU in lock functions.
	if len(res.Profiles) != len(res.Arms) {
		t.Fatalf("%d profiles for %d arms", len(res.Profiles), len(res.Arms))
	}
	for _, ap := range res.Profiles {
		p := ap.Profile
		if p == nil || p.Samples == 0 || len(p.Top) == 0 {
			t.Errorf("%s: profile %+v (%s)", ap.Arm, p, ap.Error)
			continue
		}
		if _, err := os.Stat(p.Flamegraph); err != nil {
			t.Errorf("%s: flame graph: %v", ap.Arm, err)
		}
		if ap.Arm == (Arm{side.Base, true}) && p.LockShare <= 0 {
			t.Errorf("base-on: no CPU in lock functions: %+v", p.Top)
		}
	}
	// The sweep: 2 threads from a block of its own, 16 from the main one,
	// each with a cost per build; the chart is written.
	if len(res.Sweep) != 2 || res.Sweep[0].Threads != 2 || res.Sweep[1].Threads != 16 || !res.Sweep[1].Main {
		t.Fatalf("sweep %+v, want 2 then 16 (main)", res.Sweep)
	}
	for _, pt := range res.Sweep {
		if pt.CPU == nil || len(pt.CPU.Costs) != len(res.Builds) {
			t.Errorf("sweep at %d threads: CPU statistics %+v", pt.Threads, pt.CPU)
		}
	}
	if _, err := os.Stat(res.SweepChart); err != nil {
		t.Errorf("sweep chart: %v", err)
	}

	// bench.txt is there and holds a line per arm and pass.
	b, err := os.ReadFile(res.BenchTxt)
	if err != nil {
		t.Fatal(err)
	}
	results, _ := readBenchTxt(t, b)
	if got, want := len(results), passes*len(res.Arms); got != want {
		t.Errorf("bench.txt: %d results, want %d", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, benchJSONName)); err != nil {
		t.Error(err)
	}
	assertNoServers(t, dir)
}

// assertNoServers fails if an Apache whose configuration lies under dir
// is still running.
func assertNoServers(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte(dir)) {
			t.Errorf("process %s still running: %s", e.Name(), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		}
	}
}

func TestUnavailableServer(t *testing.T) {
	mod := filepath.Join(t.TempDir(), "libphp.so")
	os.WriteFile(mod, nil, 0o644)
	_, err := Run(context.Background(), Options{Base: BuildRef{Module: mod}, Dir: t.TempDir(), Server: httpd.KindFrankenPHP})
	if !errors.Is(err, httpd.ErrUnavailable) {
		t.Errorf("error %v, want one wrapping httpd.ErrUnavailable", err)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
