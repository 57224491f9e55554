package bench

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/patchproof/patchproof/internal/safefs"

	"golang.org/x/perf/benchfmt"
)

// BenchmarkName is the name of the workload's lines in bench.txt:
// "BenchmarkSelect20".
func BenchmarkName(workload string) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	up := true
	for _, r := range workload {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// WriteBenchTxt writes the samples in the Go benchmark format, as a
// [BenchTxt] of this one benchmark.
func (r *Result) WriteBenchTxt(w io.Writer) error {
	var txt BenchTxt
	if err := txt.Add(r); err != nil {
		return err
	}
	return txt.Write(w)
}

// A BenchTxt is the samples of one or more benchmarks in the Go benchmark
// format, written with golang.org/x/perf/benchfmt: a line per arm and
// pass, in the order they ran, the arms as sub-benchmark keys (build=,
// stats=), so that "benchstat -col '/stats@(off on)' bench.txt" shows the
// cost of statistics in each build, and
// "benchstat -col '/build@(base head)' bench.txt" head against base. Each
// unit's metadata line says which way is better. Its zero value is empty
// and ready to use.
type BenchTxt struct {
	units   []*benchfmt.UnitMetadata
	results []*benchfmt.Result
}

// Add adds r's samples. Each line's configuration is config (what tells
// the benchmarks of one file apart, such as "target") followed by the
// machine and the settings; a key whose value is unknown is left out,
// which the Writer writes as "key:" where an earlier line had it, so that
// no line inherits another benchmark's value.
func (txt *BenchTxt) Add(r *Result, config ...benchfmt.Config) error {
	cfg := slices.Clone(config)
	for _, kv := range [][2]string{
		{"goos", r.Machine.GOOS},
		{"goarch", r.Machine.GOARCH},
		{"pkg", benchPkg},
		{"cpu", r.Machine.CPU},
		{"workload", r.Workload},
		{"server", r.Server},
		{"threads", strconv.Itoa(r.Settings.Threads)},
		{"connections", strconv.Itoa(r.Settings.Connections)},
		{"cpu-source", r.CPUSource},
	} {
		if strings.ContainsAny(kv[1], "\r\n") {
			return fmt.Errorf("%s %q contains a newline", kv[0], kv[1])
		}
		if kv[1] != "" {
			cfg = append(cfg, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
		}
	}
	var (
		defs    []measureDef
		units   = txt.units
		results []*benchfmt.Result
	)
	for _, d := range measureDefs {
		if !r.hasMeasure(d.name) {
			continue
		}
		defs = append(defs, d)
		key := benchfmt.UnitMetadataKey{Unit: d.unit, Key: "better"}
		if !slices.ContainsFunc(units, func(u *benchfmt.UnitMetadata) bool { return u.UnitMetadataKey == key }) {
			units = append(units, &benchfmt.UnitMetadata{UnitMetadataKey: key, OrigUnit: d.unit, Value: betterWord(d.better)})
		}
	}
	// The Writer puts "Benchmark" before the name.
	name := strings.TrimPrefix(BenchmarkName(r.Workload), "Benchmark")
	arms := map[Arm]*ArmSamples{}
	for _, a := range r.Arms {
		arms[a.Name] = a
	}
	for _, p := range r.Passes {
		for _, an := range p.Order {
			a := arms[an]
			s := a.sample(p.Pass)
			if s == nil {
				continue
			}
			res := &benchfmt.Result{Config: cfg, Name: benchfmt.Name(fmt.Sprintf("%s/build=%s/stats=%s", name, a.Build, a.Statistics)), Iters: 1}
			for _, d := range defs {
				v, ok := d.value(s)
				if !ok {
					continue
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("%s pass %d: %s is %v", an, p.Pass, d.unit, v)
				}
				res.Values = append(res.Values, benchfmt.Value{Value: v, Unit: d.unit})
			}
			if len(res.Values) > 0 {
				results = append(results, res)
			}
		}
	}
	txt.units = units
	txt.results = append(txt.results, results...)
	return nil
}

// Write writes the file: every unit's metadata, then the lines, each
// benchmark's configuration before its first line.
func (txt *BenchTxt) Write(w io.Writer) error {
	bw := benchfmt.NewWriter(w)
	for _, u := range txt.units {
		if err := bw.Write(u); err != nil {
			return err
		}
	}
	for _, r := range txt.results {
		if err := bw.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// thisMachine describes the machine as the header of "go test -bench"
// does: GOOS, GOARCH and the model name from /proc/cpuinfo, where there is
// one.
func thisMachine() Machine {
	m := Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(string(b))
	}
	return m
}

func cpuModel(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

func (r *Result) hasMeasure(name string) bool {
	for _, m := range r.Measures {
		if m.Name == name {
			return true
		}
	}
	return false
}

func (a *ArmSamples) sample(pass int) *Sample {
	for _, s := range a.Samples {
		if s.Pass == pass {
			return s
		}
	}
	return nil
}

func (b *bencher) writeBenchTxt() error {
	var buf bytes.Buffer
	if err := b.res.WriteBenchTxt(&buf); err != nil {
		return fmt.Errorf("write bench.txt: %w", err)
	}
	path := filepath.Join(b.opt.Dir, benchTxtName)
	if err := safefs.WritePath(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write bench.txt: %w", err)
	}
	b.res.BenchTxt = path
	return nil
}
