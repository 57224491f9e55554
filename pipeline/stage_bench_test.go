package pipeline

import (
	"bytes"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/perf/benchfmt"

	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/workloads/bench"
)

// benchResult is a target's benchmark of instructions per request: two
// passes of the four arms, base and head at their own cost.
func benchResult(cpu, cpuSource string, base, head float64) *bench.Result {
	r := &bench.Result{
		Workload: "select20", Server: "apache-event", CPUSource: cpuSource,
		Machine:  bench.Machine{GOOS: "linux", GOARCH: "amd64", CPU: cpu},
		Settings: bench.Settings{Threads: 16, Connections: 12},
		Measures: []*bench.MeasureStats{{Name: "instructions"}},
	}
	cost := map[side.Side]float64{side.Base: base, side.Head: head}
	for p := 1; p <= 2; p++ {
		pass := bench.Pass{Pass: p}
		for _, s := range []side.Side{side.Base, side.Head} {
			for _, on := range []bool{true, false} {
				pass.Order = append(pass.Order, bench.Arm{Side: s, Statistics: on})
			}
		}
		r.Passes = append(r.Passes, pass)
	}
	for _, a := range r.Passes[0].Order {
		as := &bench.ArmSamples{Name: a, Build: a.Side, Statistics: map[bool]string{true: "on", false: "off"}[a.Statistics]}
		for p := 1; p <= 2; p++ {
			v := 1e6 + float64(p)
			if a.Statistics {
				v *= cost[a.Side]
			}
			as.Samples = append(as.Samples, &bench.Sample{Pass: p, Instructions: &bench.InstructionSample{InstructionsPerRequest: v}})
		}
		r.Arms = append(r.Arms, as)
	}
	return r
}

// benchstatTool finds the real benchstat: on PATH, in the repository's
// bin/, or where "go install" puts it.
func benchstatTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	for _, p := range []string{filepath.Join("..", "bin", "benchstat"), filepath.Join(build.Default.GOPATH, "bin", "benchstat")} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("benchstat not installed (scripts/lib.sh install_tools: go install -C tools golang.org/x/perf/cmd/benchstat)")
	return ""
}

// One bench.txt holds every target's samples, each under its "target:"
// line; a key the first target set and the second has not (its CPU is
// unknown) does not carry over, and the real benchstat reads the file
// into a table per target.
func TestWriteBenchTxt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.txt")
	err := writeBenchTxt(path, []benchTarget{
		{"PHP-8.4", benchResult("Test CPU @ 2.00GHz", "cgroup2", 1.12, 1.01)},
		{"PHP-8.5", benchResult("", "", 1.20, 1.02)},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var results []*benchfmt.Result
	rd := benchfmt.NewReader(bytes.NewReader(out), path)
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
	if len(results) != 16 {
		t.Fatalf("%d results, want 2 targets × 2 passes × 4 arms:\n%s", len(results), out)
	}
	for i, r := range results {
		cfg := map[string]string{}
		for _, c := range r.Config {
			cfg[c.Key] = string(c.Value)
		}
		want := map[string]string{"target": "PHP-8.4", "goos": "linux", "goarch": "amd64",
			"pkg": "github.com/patchproof/patchproof/workloads/bench", "cpu": "Test CPU @ 2.00GHz",
			"workload": "select20", "server": "apache-event", "threads": "16", "connections": "12", "cpu-source": "cgroup2"}
		if i >= 8 {
			want["target"] = "PHP-8.5"
			delete(want, "cpu")
			delete(want, "cpu-source")
		}
		if d := cmp.Diff(want, cfg); d != "" {
			t.Errorf("result %d (%s) configuration (-want +got):\n%s", i, r.Name, d)
		}
	}

	cmd := exec.Command(benchstatTool(t), "-col", "/stats", path)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, got)
	}
	// A table per target, each with its own medians of statistics on.
	first, second, ok := strings.Cut(string(got), "target: PHP-8.5")
	if !ok || !strings.Contains(first, "target: PHP-8.4") {
		t.Fatalf("benchstat made no table per target:\n%s", got)
	}
	for _, c := range []struct{ table, want string }{
		{first, "1.120M"}, {first, "1.010M"}, {second, "1.200M"}, {second, "1.020M"},
	} {
		if !strings.Contains(c.table, c.want) || strings.Count(string(got), c.want) != 1 {
			t.Errorf("benchstat shows the median %s not once, in its target's table:\n%s", c.want, got)
		}
	}
}
