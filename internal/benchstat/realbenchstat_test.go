package benchstat_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"go/build"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/patchproof/patchproof/internal/benchstat"
)

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

type arm struct{ build, stats string }

var units = []string{"ms-cpu/req", "req/s", "locks/req", "instr/req"}

// passes makes n passes of the four arms, off before on in each build, with
// continuous noise so that no two values tie.
func passes(n int) map[arm][][]float64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := map[arm][][]float64{}
	cost := map[string]float64{"base": 1.03, "head": 1.004}
	locks := map[arm]float64{{"base", "on"}: 771, {"base", "off"}: 8, {"head", "on"}: 8, {"head", "off"}: 8}
	for range n {
		for _, b := range []string{"base", "head"} {
			cpu := 0.25 * (1 + 0.02*r.NormFloat64())
			for _, s := range []string{"off", "on"} {
				c := cpu
				if s == "on" {
					c *= cost[b] * (1 + 0.01*r.NormFloat64())
				}
				instr := 1.1e6 * (1 + 0.001*r.NormFloat64())
				if s == "on" && b == "base" {
					instr *= 1.12
				}
				out[arm{b, s}] = append(out[arm{b, s}], []float64{c, 16 / c * 1000 * (1 + 0.005*r.NormFloat64()), locks[arm{b, s}], instr})
			}
		}
	}
	return out
}

// writeBench writes the passes with golang.org/x/perf/benchfmt, as
// workloads/bench writes bench.txt: a result per arm and pass, the arms
// as sub-benchmark keys.
func writeBench(t *testing.T, path string, data map[arm][][]float64, n int) {
	t.Helper()
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	exact := &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "locks/req", Key: "assume"}, OrigUnit: "locks/req", Value: "exact"}
	if err := w.Write(exact); err != nil {
		t.Fatal(err)
	}
	var config []benchfmt.Config
	for _, kv := range [][2]string{{"goos", runtime.GOOS}, {"goarch", runtime.GOARCH}, {"pkg", "github.com/patchproof/patchproof/bench"}} {
		config = append(config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
	}
	for i := range n {
		for _, b := range []string{"base", "head"} {
			for _, s := range []string{"off", "on"} {
				r := &benchfmt.Result{Config: config, Name: benchfmt.Name("Select20/build=" + b + "/stats=" + s), Iters: 1}
				for j, u := range units {
					r.Values = append(r.Values, benchfmt.Value{Value: data[arm{b, s}][i][j], Unit: u})
				}
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sample(data map[arm][][]float64, a arm, unit int) benchstat.Sample {
	var s benchstat.Sample
	for _, p := range data[a] {
		s.Values = append(s.Values, p[unit])
	}
	return s
}

// benchstatCSV runs benchstat -format csv and returns, for each unit and
// row, the cells after the row name.
func benchstatCSV(t *testing.T, tool string, args ...string) map[string]map[string][]string {
	t.Helper()
	cmd := exec.Command(tool, append([]string{"-format", "csv"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchstat %v: %v\n%s", args, err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("benchstat %v complained:\n%s", args, stderr.String())
	}
	tables := map[string]map[string][]string{}
	var unit string
	for _, block := range strings.Split(stdout.String(), "\n\n") {
		r := csv.NewReader(strings.NewReader(block))
		r.FieldsPerRecord = -1 // the config header has one field a line
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("benchstat %v: %v", args, err)
		}
		for _, rec := range recs {
			switch {
			case len(rec) < 3:
				// configuration
			case rec[0] == "" && rec[1] != "" && rec[2] == "CI":
				unit = rec[1]
				tables[unit] = map[string][]string{}
			case rec[0] != "" && rec[0] != "geomean" && unit != "":
				tables[unit][rec[0]] = rec[1:]
			}
		}
	}
	return tables
}

// TestRealBenchstat writes passes with benchfmt, has the real benchstat
// read them, and checks that it finds the medians, the deltas and the
// p-values this package computes.
func TestRealBenchstat(t *testing.T) {
	tool := benchstatTool(t)
	const n = 12
	data := passes(n)
	path := filepath.Join(t.TempDir(), "bench.txt")
	writeBench(t, path, data, n)

	check := func(t *testing.T, tables map[string]map[string][]string, row string, old, new arm) {
		for ui, unit := range units {
			cells := tables[unit][row]
			if len(cells) != 6 {
				t.Errorf("%s %s: benchstat row %q, want 6 cells", unit, row, cells)
				continue
			}
			t.Logf("%s %s: %q", unit, row, cells)
			os, ns := sample(data, old, ui), sample(data, new, ui)
			osum, nsum := benchstat.Summarize(os, 0), benchstat.Summarize(ns, 0)
			oc, nc := osum.Center, nsum.Center
			for _, c := range []struct {
				median, ci string
				want       benchstat.Summary
			}{{cells[0], cells[1], osum}, {cells[2], cells[3], nsum}} {
				got, err := parseFloat(c.median)
				if err != nil || math.Abs(got-c.want.Center) > 1e-3*math.Abs(c.want.Center) {
					t.Errorf("%s %s: benchstat median %q, ours %v", unit, row, c.median, c.want.Center)
				}
				// benchstat shows the interval as ± its larger half-width,
				// in whole per cent of the median.
				half := 100 * max(c.want.Hi-c.want.Center, c.want.Center-c.want.Lo) / math.Abs(c.want.Center)
				got, err = parseFloat(strings.TrimSuffix(c.ci, "%"))
				if err != nil || math.Abs(got-half) > 0.5+1e-9 {
					t.Errorf("%s %s: benchstat interval ±%s, ours %v [%v, %v] (±%.1f%%)", unit, row, c.ci, c.want.Center, c.want.Lo, c.want.Hi, half)
				}
			}
			if got, err := parseFloat(strings.TrimSuffix(cells[4], "%")); cells[4] != "~" &&
				(err != nil || math.Abs(got-100*(nc/oc-1)) > 0.005+1e-9) {
				t.Errorf("%s %s: benchstat delta %q, ours %+.2f%%", unit, row, cells[4], 100*(nc/oc-1))
			}
			if unit == "locks/req" {
				continue // assume=exact: no test
			}
			u, err := benchstat.MannWhitney(os.Values, ns.Values, 0)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("p=%.3f n=%d", u.P, n); cells[5] != want {
				t.Errorf("%s %s: benchstat %q, ours %q", unit, row, cells[5], want)
			}
			cmp := benchstat.Compare(os, ns, benchstat.LowerIsBetter, benchstat.Thresholds{})
			if (cells[4] == "~") != !cmp.Significant() {
				t.Errorf("%s %s: benchstat delta %q, ours significant=%v", unit, row, cells[4], cmp.Significant())
			}
		}
	}
	t.Run("on against off", func(t *testing.T) {
		tables := benchstatCSV(t, tool, "-col", "/stats", path)
		for _, b := range []string{"base", "head"} {
			check(t, tables, "Select20/build="+b, arm{b, "off"}, arm{b, "on"})
		}
	})
	t.Run("head against base", func(t *testing.T) {
		tables := benchstatCSV(t, tool, "-col", "/build", path)
		for _, s := range []string{"off", "on"} {
			check(t, tables, "Select20/stats="+s, arm{"base", s}, arm{"head", s})
		}
	})
}

func parseFloat(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return f, err
}
