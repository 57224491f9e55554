package benchfmt

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchproof/patchproof/internal/golden"
)

var header = []Config{
	{"goos", "linux"},
	{"goarch", "amd64"},
	{"pkg", "github.com/patchproof/patchproof/bench"},
	{"cpu", "Intel(R) Xeon(R) CPU @ 2.20GHz"},
}

func sampleResults() []Result {
	line := func(build, stats string, cpu, rps, locks, instr float64) Result {
		return Result{
			Name:  "BenchmarkSelect20/build=" + build + "/stats=" + stats,
			Iters: 1,
			Values: []Value{
				{cpu, "ms-cpu/req"}, {rps, "req/s"}, {locks, "locks/req"}, {instr, "instr/req"},
			},
		}
	}
	return []Result{
		line("base", "off", 0.2543, 5480, 8, 1.1e6),
		line("base", "on", 0.2612, 5321, 771, 1.23e6),
		line("base", "off", 0.2519, 5502.5, 8, 1.1e6),
		line("base", "on", 0.2655, 5290, 771, 1.2300004e6),
	}
}

func TestWriteGolden(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteConfig(header...); err != nil {
		t.Fatal(err)
	}
	for _, u := range []Unit{
		{Name: "locks/req", Meta: []Config{{"assume", "exact"}, {"better", "lower"}}},
		{Name: "req/s", Meta: []Config{{"better", "higher"}}},
	} {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range sampleResults() {
		if err := w.WriteResult(r); err != nil {
			t.Fatal(err)
		}
	}
	goldenPath := filepath.Join("testdata", "bench.golden")
	golden.Check(t, goldenPath, buf.Bytes())

	// Reading it back gives the same results, each with the header.
	f, err := Read(bytes.NewReader(buf.Bytes()), goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	wantResults := sampleResults()
	for i := range wantResults {
		wantResults[i].Config = header
	}
	if diff := cmp.Diff(wantResults, f.Results); diff != "" {
		t.Errorf("Read results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{0.2612, 0.2655}, f.Values("BenchmarkSelect20/build=base/stats=on", "ms-cpu/req")); diff != "" {
		t.Errorf("Values (-want +got):\n%s", diff)
	}
	if got, ok := f.Results[1].Value("locks/req"); !ok || got != 771 {
		t.Errorf("Value(locks/req) = %v, %v; want 771, true", got, ok)
	}
	if len(f.Units) != 2 || f.Units[0].Meta[0] != (Config{"assume", "exact"}) {
		t.Errorf("Read units = %+v", f.Units)
	}
}

func TestRead(t *testing.T) {
	in := `goos: linux
pkg: a
some test output
BenchmarkA/x=1 1 2 ns/op
PASS
pkg: b
BenchmarkA/x=1-8 3 4.5 ns/op 1e3 B/op
ok  	b	0.1s
pkg:
BenchmarkA/x=1 1 3 ns/op
`
	f, err := Read(strings.NewReader(in), "in.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Name: "BenchmarkA/x=1", Iters: 1, Values: []Value{{2, "ns/op"}},
			Config: []Config{{"goos", "linux"}, {"pkg", "a"}}},
		{Name: "BenchmarkA/x=1-8", Iters: 3, Values: []Value{{4.5, "ns/op"}, {1000, "B/op"}},
			Config: []Config{{"goos", "linux"}, {"pkg", "b"}}},
		// "pkg:" with no value removes it.
		{Name: "BenchmarkA/x=1", Iters: 1, Values: []Value{{3, "ns/op"}},
			Config: []Config{{"goos", "linux"}}},
	}
	if diff := cmp.Diff(want, f.Results, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}

	for _, bad := range []string{"BenchmarkA 1 2", "BenchmarkA x 2 ns/op", "BenchmarkA 1 two ns/op", "Unit u notkv"} {
		if _, err := Read(strings.NewReader("goos: linux\n"+bad+"\n"), "bad.txt"); err == nil || !strings.HasPrefix(err.Error(), "bad.txt:2: ") {
			t.Errorf("Read(%q) error = %v, want one at bad.txt:2", bad, err)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	ok := []Value{{1, "ns/op"}}
	for _, tc := range []struct {
		name  string
		write func(w *Writer) error
	}{
		{"lower-case name", func(w *Writer) error { return w.WriteResult(Result{Name: "Benchmarkselect", Iters: 1, Values: ok}) }},
		{"no Benchmark prefix", func(w *Writer) error { return w.WriteResult(Result{Name: "Select", Iters: 1, Values: ok}) }},
		{"space in name", func(w *Writer) error { return w.WriteResult(Result{Name: "BenchmarkA B", Iters: 1, Values: ok}) }},
		{"no iterations", func(w *Writer) error { return w.WriteResult(Result{Name: "BenchmarkA", Values: ok}) }},
		{"no values", func(w *Writer) error { return w.WriteResult(Result{Name: "BenchmarkA", Iters: 1}) }},
		{"space in unit", func(w *Writer) error {
			return w.WriteResult(Result{Name: "BenchmarkA", Iters: 1, Values: []Value{{1, "ms cpu"}}})
		}},
		{"NaN", func(w *Writer) error {
			return w.WriteResult(Result{Name: "BenchmarkA", Iters: 1, Values: []Value{{nan(), "ns/op"}}})
		}},
		{"upper-case key", func(w *Writer) error { return w.WriteConfig(Config{"GOOS", "linux"}) }},
		{"newline in value", func(w *Writer) error { return w.WriteConfig(Config{"cpu", "a\nb"}) }},
		{"bad unit metadata", func(w *Writer) error { return w.WriteUnit(Unit{Name: "x", Meta: []Config{{"a=b", "c"}}}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			err := tc.write(w)
			if err == nil {
				t.Fatal("no error")
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q before failing", buf.String())
			}
			// The error sticks.
			if err2 := w.WriteConfig(Config{"goos", "linux"}); err2 != err {
				t.Errorf("next write: %v, want the first error %v", err2, err)
			}
		})
	}
}

func TestHostConfig(t *testing.T) {
	got := HostConfig("p")
	if len(got) < 3 || got[0].Key != "goos" || got[1].Key != "goarch" || got[2] != (Config{"pkg", "p"}) {
		t.Errorf("HostConfig = %v", got)
	}
	if err := NewWriter(io.Discard).WriteConfig(got...); err != nil {
		t.Errorf("HostConfig does not write: %v", err)
	}
	cpuinfo := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  CPU @ 2.20GHz\n"
	if got := cpuModel(cpuinfo); got != "Intel(R) Xeon(R) CPU @ 2.20GHz" {
		t.Errorf("cpuModel = %q", got)
	}
}

func nan() float64 { var z float64; return z / z }

// An unknown value is written "key:", which removes what a set of results
// before it in the same file gave the key.
func TestWriteEmptyConfig(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteConfig(Config{"cpu", "Test CPU"})
	w.WriteResult(Result{Name: "BenchmarkA", Iters: 1, Values: []Value{{1, "ns/op"}}})
	if err := w.WriteConfig(Config{"cpu", ""}); err != nil {
		t.Fatal(err)
	}
	w.WriteResult(Result{Name: "BenchmarkA", Iters: 1, Values: []Value{{2, "ns/op"}}})
	if want := "cpu: Test CPU\nBenchmarkA 1 1 ns/op\ncpu:\nBenchmarkA 1 2 ns/op\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
	f, err := Read(&buf, "cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 2 || len(f.Results[0].Config) != 1 || len(f.Results[1].Config) != 0 {
		t.Errorf("read back %+v, want cpu on the first result only", f.Results)
	}
}
