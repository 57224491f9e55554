package concurrency

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchproof/patchproof/workloads/mysqld"
	"github.com/patchproof/patchproof/workloads/workload"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		status int
		body   string
		ok     bool
	}{
		{200, "counted 60\n", true},
		{200, "counted 59\n", false},
		{500, "counted 60\n", false},
		{200, "", false},
	}
	for _, tt := range tests {
		if err := Check(tt.status, []byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("Check(%d, %q) = %v, want ok %v", tt.status, tt.body, err, tt.ok)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	base := Options{Module: "/m.so", Dir: "/d", DB: workload.DB{Conn: mysqld.Conn{Socket: "/s"}}}
	tests := []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"no module", func(o *Options) { o.Module = "" }, "no ZTS Apache module"},
		{"one thread", func(o *Options) { o.Threads, o.Connections = 1, 1 }, "at least 2"},
		{"more connections than threads", func(o *Options) { o.Threads, o.Connections = 4, 8 }, "8 connections"},
		{"no socket", func(o *Options) { o.DB.Socket = "" }, "no database socket"},
		{"negative requests", func(o *Options) { o.Requests = -5 }, "-5 requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.mod(&o)
			_, err := Counters(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Counters = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestTSanEnviron(t *testing.T) {
	env := TSanEnviron("/usr/lib/libtsan.so.2", "/run/tsan")
	want := []string{"LD_PRELOAD=/usr/lib/libtsan.so.2", "TSAN_OPTIONS=log_path=/run/tsan/tsan halt_on_error=0 exitcode=0 history_size=4 second_deadlock_stack=1 report_signal_unsafe=0 allow_addr2line=1"}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("TSanEnviron = %q, want %q", env, want)
	}
}

// ztsModule is a ZTS build's Apache module named by env, or skips.
func ztsModule(t *testing.T, env string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("%s is not set: scripts/test exports the demo's ZTS builds", env)
	}
	mod := filepath.Join(dir, "libs", "libphp.so")
	if _, err := os.Stat(mod); err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	for _, tool := range []string{"/usr/sbin/apache2", "/usr/sbin/mariadbd"} {
		if _, err := os.Stat(tool); err != nil {
			if _, err := exec.LookPath(filepath.Base(tool)); err != nil {
				t.Skipf("%s not installed", tool)
			}
		}
	}
	return mod
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// reachableDir is a temporary directory Apache's child (www-data) can enter.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return dir
}

// TestCountersExactOnBase serves the workload on the demo's base ZTS build,
// whose counters a mutex guards: under 16 threads every counter must grow by
// exactly what the requests did.
func TestCountersExactOnBase(t *testing.T) {
	res := countersOnBase(t, false)
	// One request opens two connections and reads, in the text protocol,
	// 20 unbuffered rows, the typed row, 20 more drained by an early free,
	// 5 of the multi-query and 1 count (47); in the binary one 20 + 20 of
	// PDO, 10 bound, the long data's, the typed row and 20 through the
	// cursor (72).
	for name, want := range map[string]int64{"connect_success": 2, "rows_fetched_from_server_normal": 47, "rows_fetched_from_server_ps": 72} {
		if got := res.PerRequest[name]; got != want {
			t.Errorf("%s per request = %d, want %d", name, got, want)
		}
	}
	if moved := movedCounters(res); moved < 90 {
		t.Errorf("a request moves %d counters, want at least 90", moved)
	}
	for name, per := range res.PerRequest {
		if strings.HasPrefix(name, "mem_") && per != 0 {
			t.Errorf("%s moved %d a request with memory statistics off", name, per)
		}
	}
}

// With memory statistics on, mysqlnd counts its every allocation: the mem_*
// counters move many times a request, and must be exact as well.
func TestCountersExactWithMemoryStatistics(t *testing.T) {
	res := countersOnBase(t, true)
	mem := 0
	for name, per := range res.PerRequest {
		if strings.HasPrefix(name, "mem_") && per != 0 {
			mem++
		}
	}
	if mem < 4 || res.PerRequest["mem_emalloc_count"] < 10 {
		t.Errorf("%d mem_* counters moved, mem_emalloc_count %d a request: memory statistics are not on", mem, res.PerRequest["mem_emalloc_count"])
	}
}

// countersOnBase runs Counters on the base ZTS build and checks what every
// run must hold: the database's count of connections, and every counter's
// growth exactly the requests' (the base has the statistics mutex).
func countersOnBase(t *testing.T, memory bool) *Result {
	t.Helper()
	if testing.Short() {
		t.Skip("a real server under load: -short")
	}
	mod := ztsModule(t, "PATCHPROOF_TEST_ZTS_BUILD")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db, err := mysqld.Start(ctx, mysqld.Options{Dir: filepath.Join(t.TempDir(), "db"), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Stop()
	const n = 2000
	res, err := Counters(ctx, Options{
		Module: mod, Dir: reachableDir(t), DB: workload.DB{Conn: db.Conn}, Requests: n, MemoryStatistics: memory, Log: testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.DBConnections != n*ConnectionsPerRequest {
		t.Errorf("the database counted %d connections, want %d", res.DBConnections, n*ConnectionsPerRequest)
	}
	for name, per := range res.PerRequest {
		if got, want := res.Grew[name], per*n; got != want {
			t.Errorf("%s grew by %d, want %d × %d = %d", name, got, n, per, want)
		}
	}
	t.Logf("%d requests in %d ms; a request moves %d of %d counters: %v", n, res.DurationMS, movedCounters(res), len(res.PerRequest), nonZeroOf(res.PerRequest))
	return res
}

func movedCounters(res *Result) int {
	moved := 0
	for _, per := range res.PerRequest {
		if per != 0 {
			moved++
		}
	}
	return moved
}

func nonZeroOf(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func TestCountCPUs(t *testing.T) {
	for list, want := range map[string]int{"0": 1, "0-1": 2, "0-3,8,10-11": 7, "": 0, "x": 0, "3-1": 0} {
		if got := countCPUs(list); got != want {
			t.Errorf("countCPUs(%q) = %d, want %d", list, got, want)
		}
	}
}
