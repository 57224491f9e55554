// Package benchfmt writes and reads benchmark results in the Go benchmark
// format (golang.org/design/14313-benchmark-format), so that the real
// benchstat reads patchproof's bench.txt unchanged:
//
//	goos: linux
//	goarch: amd64
//	pkg: github.com/patchproof/patchproof/bench
//	cpu: AMD EPYC 7B13
//	Unit locks/req assume=exact better=lower
//	BenchmarkSelect20/build=base/stats=on 1 0.2612 ms-cpu/req 5321 req/s 771 locks/req
//	BenchmarkSelect20/build=base/stats=off 1 0.2543 ms-cpu/req 5480 req/s 8 locks/req
//
// Each pass of each arm is one result line; the arms are sub-benchmark keys
// (build=, stats=), so "benchstat -col /stats bench.txt" compares statistics
// on against off within each build and "benchstat -col /build" base against
// head. benchstat pairs nothing: the Reader keeps the order of the lines,
// which is how a caller pairs the arms of one pass.
package benchfmt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

// A Config is one "key: value" line; it applies to the results after it,
// until a line with the same key replaces it. An empty Value ("key:")
// removes the key, as golang.org/x/perf/benchfmt reads it: a file holding
// several sets of results clears what one set had and the next has not.
type Config struct {
	Key, Value string
}

// A Unit line gives metadata for a unit, such as assume=exact (benchstat
// then warns when the values vary) or better=lower.
type Unit struct {
	Name string
	Meta []Config // written as key=value
}

// A Value is one measurement of a result.
type Value struct {
	Value float64
	Unit  string
}

// A Result is one benchmark line.
type Result struct {
	// Name is the full name, "Benchmark" included:
	// "BenchmarkSelect20/build=base/stats=on".
	Name   string
	Iters  int
	Values []Value
	// Config holds the configuration in effect, in file order; the Reader
	// sets it, the Writer ignores it.
	Config []Config
}

// Value returns the value of r in unit and whether r has one.
func (r Result) Value(unit string) (float64, bool) {
	for _, v := range r.Values {
		if v.Unit == unit {
			return v.Value, true
		}
	}
	return 0, false
}

// Values returns the values in unit of every result named name, in file
// order: pass order, when each pass wrote one line per arm.
func (f File) Values(name, unit string) []float64 {
	var vs []float64
	for _, r := range f.Results {
		if r.Name != name {
			continue
		}
		if v, ok := r.Value(unit); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// HostConfig returns the header benchstat expects, describing this
// machine: goos, goarch, pkg (as given) and cpu, the model name from
// /proc/cpuinfo where there is one.
func HostConfig(pkg string) []Config {
	cs := []Config{{"goos", runtime.GOOS}, {"goarch", runtime.GOARCH}, {"pkg", pkg}}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if cpu := cpuModel(string(b)); cpu != "" {
			cs = append(cs, Config{"cpu", cpu})
		}
	}
	return cs
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

// A Writer writes the Go benchmark format. Its first error sticks: later
// calls return it without writing.
type Writer struct {
	w   io.Writer
	err error
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteConfig writes configuration lines.
func (w *Writer) WriteConfig(cs ...Config) error {
	for _, c := range cs {
		if err := checkKey(c.Key); err != nil {
			return w.fail(fmt.Errorf("write config %q: %w", c.Key, err))
		}
		if strings.ContainsAny(c.Value, "\r\n") {
			return w.fail(fmt.Errorf("write config %q: value contains a newline", c.Key))
		}
		if c.Value == "" {
			w.printf("%s:\n", c.Key)
			continue
		}
		w.printf("%s: %s\n", c.Key, c.Value)
	}
	return w.err
}

// WriteUnit writes a unit metadata line.
func (w *Writer) WriteUnit(u Unit) error {
	if err := checkWord(u.Name); err != nil {
		return w.fail(fmt.Errorf("write unit %q: %w", u.Name, err))
	}
	var b strings.Builder
	b.WriteString("Unit " + u.Name)
	for _, m := range u.Meta {
		if err := checkWord(m.Key); err != nil || strings.Contains(m.Key, "=") {
			return w.fail(fmt.Errorf("write unit %q: bad metadata key %q", u.Name, m.Key))
		}
		if err := checkWord(m.Value); err != nil {
			return w.fail(fmt.Errorf("write unit %q: metadata %s: %w", u.Name, m.Key, err))
		}
		b.WriteString(" " + m.Key + "=" + m.Value)
	}
	w.printf("%s\n", b.String())
	return w.err
}

// WriteResult writes one result line.
func (w *Writer) WriteResult(r Result) error {
	if err := checkName(r.Name); err != nil {
		return w.fail(fmt.Errorf("write result %q: %w", r.Name, err))
	}
	if r.Iters < 1 {
		return w.fail(fmt.Errorf("write result %s: %d iterations", r.Name, r.Iters))
	}
	if len(r.Values) == 0 {
		return w.fail(fmt.Errorf("write result %s: no values", r.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d", r.Name, r.Iters)
	for _, v := range r.Values {
		if err := checkWord(v.Unit); err != nil {
			return w.fail(fmt.Errorf("write result %s: unit %q: %w", r.Name, v.Unit, err))
		}
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			return w.fail(fmt.Errorf("write result %s: %s is %v", r.Name, v.Unit, v.Value))
		}
		b.WriteString(" " + strconv.FormatFloat(v.Value, 'g', -1, 64) + " " + v.Unit)
	}
	w.printf("%s\n", b.String())
	return w.err
}

func (w *Writer) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, args...)
	}
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

var (
	errEmpty = errors.New("empty")
	errSpace = errors.New("contains white space")
)

func checkWord(s string) error {
	switch {
	case s == "":
		return errEmpty
	case strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return errSpace
	}
	return nil
}

// checkKey enforces the format's rule for configuration keys: a lower-case
// first letter, no upper case, no space.
func checkKey(k string) error {
	if err := checkWord(k); err != nil {
		return err
	}
	if !unicode.IsLower([]rune(k)[0]) || strings.IndexFunc(k, unicode.IsUpper) >= 0 {
		return errors.New("must start with a lower-case letter and have no upper case")
	}
	if strings.Contains(k, ":") {
		return errors.New("contains a colon")
	}
	return nil
}

// checkName enforces "Benchmark" followed by a character that is not a
// lower-case letter, as "go test" does.
func checkName(name string) error {
	if err := checkWord(name); err != nil {
		return err
	}
	rest, ok := strings.CutPrefix(name, "Benchmark")
	if !ok || rest == "" || unicode.IsLower([]rune(rest)[0]) {
		return errors.New(`must be "Benchmark" followed by a name that does not start in lower case`)
	}
	return nil
}

// A File is what Read found: the results in file order and the unit
// metadata.
type File struct {
	Results []Result
	Units   []Unit
}

// Read parses the Go benchmark format. Lines that are neither configuration,
// unit metadata nor results (test output, PASS, ok) are skipped, as
// benchstat skips them; a malformed result line is an error naming its line.
func Read(r io.Reader, name string) (File, error) {
	var (
		f      File
		config []Config
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "Benchmark"):
			res, err := parseResult(text)
			if err != nil {
				return f, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			res.Config = config
			f.Results = append(f.Results, res)
		case strings.HasPrefix(text, "Unit "):
			u, err := parseUnit(text)
			if err != nil {
				return f, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			f.Units = append(f.Units, u)
		default:
			k, v, ok := strings.Cut(text, ":")
			if !ok || checkKey(k) != nil {
				continue
			}
			v = strings.TrimSpace(v)
			// Copy on write: results already read keep the config they had.
			next := make([]Config, 0, len(config)+1)
			replaced := false
			for _, c := range config {
				if c.Key == k {
					replaced = true
					if v == "" {
						continue
					}
					c.Value = v
				}
				next = append(next, c)
			}
			if !replaced && v != "" {
				next = append(next, Config{Key: k, Value: v})
			}
			config = next
		}
	}
	if err := sc.Err(); err != nil {
		return f, fmt.Errorf("read %s: %w", name, err)
	}
	return f, nil
}

func parseResult(text string) (Result, error) {
	fields := strings.Fields(text)
	if len(fields) < 4 || len(fields)%2 != 0 {
		return Result{}, fmt.Errorf("result %q: want name, iterations and value-unit pairs", text)
	}
	iters, err := strconv.Atoi(fields[1])
	if err != nil {
		return Result{}, fmt.Errorf("result %s: iterations: %w", fields[0], err)
	}
	r := Result{Name: fields[0], Iters: iters}
	for i := 2; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return Result{}, fmt.Errorf("result %s: value: %w", fields[0], err)
		}
		r.Values = append(r.Values, Value{Value: v, Unit: fields[i+1]})
	}
	return r, nil
}

func parseUnit(text string) (Unit, error) {
	fields := strings.Fields(text)
	if len(fields) < 2 {
		return Unit{}, errors.New("unit line without a unit")
	}
	u := Unit{Name: fields[1]}
	for _, f := range fields[2:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return Unit{}, fmt.Errorf("unit %s: metadata %q is not key=value", u.Name, f)
		}
		u.Meta = append(u.Meta, Config{Key: k, Value: v})
	}
	return u, nil
}
