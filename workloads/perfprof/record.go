package perfprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
)

// Options are Record's settings; the zero value, with a Dir, works.
type Options struct {
	Perf      string        // the perf binary; "" for PATH's perf
	Duration  time.Duration // how long to sample; 0 for 3 s
	Frequency int           // samples a second of a thread's CPU time; 0 for 999
	// Dir receives perf.data, folded.txt and flamegraph.svg, overwriting
	// those of an earlier profile. Required; created if missing.
	Dir   string
	Log   io.Writer // perf's messages; nil for none
	Title string    // the flame graph's; "" for one naming the process
}

// The defaults, in one place.
const (
	defaultPerf     = "perf"
	defaultDuration = 3 * time.Second
	// 999 rather than 1000 Hz so that the sampling does not run in
	// lockstep with the kernel's and the server's own periodic work.
	defaultFrequency = 999
	// topN is how many functions a profile lists: enough to see the shape
	// of a PHP server's time (the executor, the allocator, the locks, the
	// syscalls), few enough to read.
	topN = 15
)

func (o Options) withDefaults() Options {
	if o.Perf == "" {
		o.Perf = defaultPerf
	}
	if o.Duration <= 0 {
		o.Duration = defaultDuration
	}
	if o.Frequency <= 0 {
		o.Frequency = defaultFrequency
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// The files Record writes in Options.Dir.
const (
	DataFile       = "perf.data"
	FoldedFile     = "folded.txt"
	FlamegraphFile = "flamegraph.svg"
)

// A Profile is where a process's CPU time went while it was sampled.
type Profile struct {
	PIDs        []int    `json:"pids"`    // the processes sampled: the one asked for, then its descendants
	Samples     int      `json:"samples"` // on-CPU samples, all threads
	Top         []Symbol `json:"top"`     // the functions with the most self samples
	LockShare   float64  `json:"lock_share"`
	LockSymbols []Symbol `json:"lock_symbols"` // the lock functions the lock share is made of
	Data        string   `json:"data"`         // perf.data's path, for perf report
	Flamegraph  string   `json:"flamegraph"`   // the SVG's path
	Folded      string   `json:"folded"`       // the folded stacks' path
	Warnings    []string `json:"warnings,omitempty"`
}

// Record samples process pid, its descendants and all their threads with
// perf record -e cpu-clock -g for opt.Duration, reads the stacks with perf
// script, and writes the profile's files to opt.Dir. A profile without
// samples (a process that slept throughout) is a warning, not an error.
// Where Record fails, it leaves none of its files in opt.Dir.
func Record(ctx context.Context, pid int, opt Options) (*Profile, error) {
	opt = opt.withDefaults()
	if opt.Dir == "" {
		return nil, fmt.Errorf("profile pid %d: no output directory (Options.Dir)", pid)
	}
	if pid <= 0 {
		return nil, fmt.Errorf("profile pid %d: not a process ID", pid)
	}
	perf, err := exec.LookPath(opt.Perf)
	if err != nil {
		return nil, fmt.Errorf("profile pid %d: %w (apt-get install linux-perf)", pid, err)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile pid %d: %w", pid, err)
	}
	p := &Profile{
		Data:       filepath.Join(opt.Dir, DataFile),
		Folded:     filepath.Join(opt.Dir, FoldedFile),
		Flamegraph: filepath.Join(opt.Dir, FlamegraphFile),
	}
	// perf record would keep an earlier perf.data as perf.data.old.
	for _, f := range []string{p.Data, p.Folded, p.Flamegraph} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("profile pid %d: %w", pid, err)
		}
	}
	p, err = record(ctx, perf, pid, opt, p)
	if err != nil {
		for _, f := range []string{p.Data, p.Folded, p.Flamegraph} {
			os.Remove(f)
		}
		return nil, fmt.Errorf("profile pid %d: %w", pid, err)
	}
	return p, nil
}

func record(ctx context.Context, perf string, pid int, opt Options, p *Profile) (*Profile, error) {
	p.PIDs = descendants(pid)
	stderr, err := recordPIDs(ctx, perf, p.PIDs, opt, p.Data)
	// A child that exits between the look at /proc and perf's start
	// fails the whole record ("No such process"); Apache replaces its
	// children now and then, so the tree is looked at once more.
	if err != nil && ctx.Err() == nil && len(p.PIDs) > 1 && alive(pid) {
		p.PIDs = descendants(pid)
		stderr, err = recordPIDs(ctx, perf, p.PIDs, opt, p.Data)
	}
	if err != nil {
		return p, err
	}
	p.Warnings = append(p.Warnings, perfWarnings(stderr)...)

	stacks, warnings, err := script(ctx, perf, p.Data, opt.Log)
	if err != nil {
		return p, err
	}
	p.Warnings = append(p.Warnings, warnings...)
	p.Samples = stacks.Samples
	p.Top = stacks.Top(topN)
	p.LockShare, p.LockSymbols = stacks.Locks()
	if p.Samples == 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("no samples in %s: the process did not run on a CPU", opt.Duration))
	}

	if err := writeFile(p.Folded, stacks.WriteFolded); err != nil {
		return p, err
	}
	title := opt.Title
	if title == "" {
		title = fmt.Sprintf("%s (pid %d): cpu-clock, %s at %d Hz", comm(pid), pid, opt.Duration, opt.Frequency)
	}
	err = writeFile(p.Flamegraph, func(w io.Writer) error { return WriteFlamegraph(w, stacks, title) })
	return p, err
}

// recordPIDs runs perf record, and returns its standard error.
func recordPIDs(ctx context.Context, perf string, pids []int, opt Options, data string) ([]byte, error) {
	ids := make([]string, len(pids))
	for i, id := range pids {
		ids[i] = strconv.Itoa(id)
	}
	args := []string{"record",
		"-e", "cpu-clock",
		"-F", strconv.Itoa(opt.Frequency),
		"-g",
		"-p", strings.Join(ids, ","),
		"-o", data,
		// The cache would copy every binary sampled (a PHP build's libphp
		// is tens of megabytes, and each patch is another) into ~/.debug;
		// perf script runs while the process lives and finds them there.
		"--no-buildid-cache",
		// perf ends the recording when sleep does: the duration is
		// perf's own, not a signal's arrival after a timer.
		"--", "sleep", strconv.FormatFloat(opt.Duration.Seconds(), 'f', -1, 64),
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, perf, args...)
	cmd.Env = childenv.For(childenv.Tool) // no CI token reaches perf, nor the server it attaches to
	cmd.Stdout = opt.Log
	cmd.Stderr = io.MultiWriter(&stderr, opt.Log)
	// On cancellation perf is asked to stop as ^C asks it, then killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
	fmt.Fprintf(opt.Log, "perf %s\n", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("perf record: %w", ctx.Err())
		}
		return nil, fmt.Errorf("perf record: %w: %s", err, lastLine(stderr.Bytes()))
	}
	return stderr.Bytes(), nil
}

// script runs perf script on data and parses its output as it comes.
func script(ctx context.Context, perf, data string, log io.Writer) (*Stacks, []string, error) {
	args := []string{"script", "-i", data, "-F", "comm,tid,ip,sym,dso"}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, perf, args...)
	cmd.Env = childenv.For(childenv.Tool) // no CI token reaches perf, nor the server it attaches to
	cmd.Stderr = io.MultiWriter(&stderr, log)
	fmt.Fprintf(log, "perf %s\n", strings.Join(args, " "))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("perf script: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("perf script: %w", err)
	}
	stacks, parseErr := Parse(out)
	if parseErr != nil {
		io.Copy(io.Discard, out) // let perf finish rather than die of a broken pipe
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("perf script: %w", ctx.Err())
		}
		return nil, nil, fmt.Errorf("perf script: %w: %s", err, lastLine(stderr.Bytes()))
	}
	if parseErr != nil {
		return nil, nil, parseErr
	}
	return stacks, perfWarnings(stderr.Bytes()), nil
}

// perfWarnings are the lines of perf's messages that say a profile is
// incomplete: lost samples or events, a symbol table that could not be
// read.
func perfWarnings(stderr []byte) []string {
	var ws []string
	for line := range strings.Lines(string(stderr)) {
		line = strings.TrimSpace(line)
		lower := strings.ToLower(line)
		if strings.HasPrefix(lower, "warning:") || strings.Contains(lower, "lost") {
			ws = append(ws, "perf: "+line)
		}
	}
	return ws
}

// lastLine is the last non-empty line of perf's messages: the error,
// where perf failed ("Couldn't create thread/CPU maps: No such process").
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return "no message"
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := safefs.CreatePath(path, 0o644)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// descendants is pid and the processes descended from it (Apache's work
// happens in its child); just pid when /proc no longer has it, for perf to
// report.
func descendants(pid int) []int {
	pids, err := proc.Tree(pid)
	if err != nil {
		return []int{pid}
	}
	return pids
}

func alive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// comm is the process's command name, for the flame graph's title.
func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "process"
	}
	return strings.TrimSpace(string(b))
}
