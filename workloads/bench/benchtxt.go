package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/patchproof/patchproof/verify/benchstat/benchfmt"
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

// WriteBenchTxt writes the samples in the Go benchmark format: a line per
// arm and pass, in the order they ran, the arms as sub-benchmark keys
// (build=, stats=), so that "benchstat -col '/stats@(off on)' bench.txt"
// shows the cost of statistics in each build, and
// "benchstat -col '/build@(base head)' bench.txt" head against base.
//
// Every key is written, an unknown one empty ("cpu:"), so that results
// written after another's in the same file never inherit its values.
func (r *Result) WriteBenchTxt(w io.Writer) error {
	bw := benchfmt.NewWriter(w)
	bw.WriteConfig(
		benchfmt.Config{Key: "goos", Value: r.Machine.GOOS},
		benchfmt.Config{Key: "goarch", Value: r.Machine.GOARCH},
		benchfmt.Config{Key: "pkg", Value: benchPkg},
		benchfmt.Config{Key: "cpu", Value: r.Machine.CPU},
		benchfmt.Config{Key: "workload", Value: r.Workload},
		benchfmt.Config{Key: "server", Value: r.Server},
		benchfmt.Config{Key: "threads", Value: strconv.Itoa(r.Settings.Threads)},
		benchfmt.Config{Key: "connections", Value: strconv.Itoa(r.Settings.Connections)},
		benchfmt.Config{Key: "cpu-source", Value: r.CPUSource},
	)
	var defs []measureDef
	for _, d := range measureDefs {
		if r.hasMeasure(d.name) {
			defs = append(defs, d)
			bw.WriteUnit(benchfmt.Unit{Name: d.unit, Meta: []benchfmt.Config{{Key: "better", Value: betterWord(d.better)}}})
		}
	}
	name := BenchmarkName(r.Workload)
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
			res := benchfmt.Result{Name: fmt.Sprintf("%s/build=%s/stats=%s", name, a.Build, a.Statistics), Iters: 1}
			for _, d := range defs {
				if v, ok := d.value(s); ok {
					res.Values = append(res.Values, benchfmt.Value{Value: v, Unit: d.unit})
				}
			}
			if len(res.Values) > 0 {
				bw.WriteResult(res)
			}
		}
	}
	return bw.WriteConfig() // the first error, if any
}

// thisMachine describes the machine as benchfmt.HostConfig does.
func thisMachine() Machine {
	var m Machine
	for _, c := range benchfmt.HostConfig(benchPkg) {
		switch c.Key {
		case "goos":
			m.GOOS = c.Value
		case "goarch":
			m.GOARCH = c.Value
		case "cpu":
			m.CPU = c.Value
		}
	}
	return m
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
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write bench.txt: %w", err)
	}
	b.res.BenchTxt = path
	return nil
}
