package load

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/proc"
)

// Options for a wrk run. The zero value runs "wrk" from PATH with 2
// threads, 16 connections, for 10 seconds, with no warm-up.
type Options struct {
	// Wrk is the wrk binary.
	Wrk string
	// Threads and Connections are wrk's -t and -c.
	Threads, Connections int
	// Duration is wrk's -d: whole seconds, as wrk takes no finer unit.
	Duration time.Duration
	// Timeout is wrk's --timeout, whole seconds; zero leaves wrk's 2s.
	Timeout time.Duration
	// Warmup, when positive, runs wrk this long first and discards the
	// numbers, though not its errors. Whole seconds.
	Warmup time.Duration
	// Headers are added with -H, each "Name: value".
	Headers []string
	// CPUs, when set, pins wrk with "taskset -c CPUs" so that the load
	// generator stays off the server's CPUs.
	CPUs string
	// Log receives wrk's raw output, warm-up included.
	Log io.Writer
}

// Defaults, in one place.
const (
	defaultWrk         = "wrk"
	defaultThreads     = 2
	defaultConnections = 16
	defaultDuration    = 10 * time.Second
)

func (o Options) resolved() Options {
	if o.Wrk == "" {
		o.Wrk = defaultWrk
	}
	if o.Threads == 0 {
		o.Threads = defaultThreads
	}
	if o.Connections == 0 {
		o.Connections = defaultConnections
	}
	if o.Duration == 0 {
		o.Duration = defaultDuration
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

func (o Options) check() error {
	if o.Threads < 1 || o.Connections < o.Threads {
		return fmt.Errorf("%d threads and %d connections: wrk needs at least one connection a thread", o.Threads, o.Connections)
	}
	for _, d := range []struct {
		name     string
		d        time.Duration
		optional bool
	}{{"duration", o.Duration, false}, {"timeout", o.Timeout, true}, {"warm-up", o.Warmup, true}} {
		if d.optional && d.d == 0 {
			continue
		}
		if d.d < time.Second || d.d%time.Second != 0 {
			return fmt.Errorf("%s %v: wrk takes whole seconds", d.name, d.d)
		}
	}
	return nil
}

// A PassError says wrk ran but the pass cannot be used: a response was not
// 2xx or 3xx, a socket failed, or nothing completed. Result holds what wrk
// reported.
type PassError struct {
	URL    string
	Warmup bool // the warm-up run failed, not the measured one
	Result *Result
}

func (e *PassError) Error() string {
	var why []string
	r := e.Result
	if r.NonSuccess > 0 {
		why = append(why, fmt.Sprintf("%d of %d responses not 2xx or 3xx", r.NonSuccess, r.Requests))
	}
	if r.Errors.Total() > 0 {
		why = append(why, fmt.Sprintf("socket errors: connect %d, read %d, write %d, timeout %d",
			r.Errors.Connect, r.Errors.Read, r.Errors.Write, r.Errors.Timeout))
	}
	if r.Requests == 0 {
		why = append(why, "no request completed")
	}
	run := "load"
	if e.Warmup {
		run = "warm-up"
	}
	return fmt.Sprintf("%s %s: %s", run, e.URL, strings.Join(why, "; "))
}

// check returns a PassError when r cannot be used.
func checkPass(url string, warmup bool, r *Result) error {
	if r.NonSuccess > 0 || r.Errors.Total() > 0 || r.Requests == 0 {
		return &PassError{URL: url, Warmup: warmup, Result: r}
	}
	return nil
}

// reportScript makes wrk print its figures as JSON; see report.lua.
//
//go:embed report.lua
var reportScript []byte

// Run loads url with wrk: the warm-up run if any, then the measured one. A
// pass that wrk completed but that had errors returns its Result together
// with a *PassError; any other error means wrk could not run or its report
// could not be read. wrk runs in its own process group, killed when ctx is
// done.
func Run(ctx context.Context, url string, opts Options) (*Result, error) {
	opts = opts.resolved()
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	// wrk takes its script from a file only.
	script, err := writeScript()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	defer os.Remove(script)
	if opts.Warmup > 0 {
		r, err := runOnce(ctx, url, opts, script, opts.Warmup)
		if err != nil {
			return nil, fmt.Errorf("warm-up %s: %w", url, err)
		}
		if err := checkPass(url, true, r); err != nil {
			return r, err
		}
	}
	r, err := runOnce(ctx, url, opts, script, opts.Duration)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	return r, checkPass(url, false, r)
}

func writeScript() (string, error) {
	f, err := os.CreateTemp("", "patchproof-wrk-*.lua")
	if err != nil {
		return "", fmt.Errorf("write wrk script: %w", err)
	}
	_, err = f.Write(reportScript)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write wrk script %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// args returns the command line of one run, script being report.lua's
// path.
func (o Options) args(url, script string, d time.Duration) []string {
	var args []string
	if o.CPUs != "" {
		args = append(args, "taskset", "-c", o.CPUs)
	}
	args = append(args, o.Wrk,
		"-t", strconv.Itoa(o.Threads),
		"-c", strconv.Itoa(o.Connections),
		"-d", seconds(d),
		"-s", script)
	if o.Timeout > 0 {
		args = append(args, "--timeout", seconds(o.Timeout))
	}
	for _, h := range o.Headers {
		args = append(args, "-H", h)
	}
	return append(args, url)
}

func seconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) + "s" }

func runOnce(ctx context.Context, url string, opts Options, script string, d time.Duration) (*Result, error) {
	args := opts.args(url, script, d)
	fmt.Fprintf(opts.Log, "$ %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = childenv.For(childenv.Tool)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = io.MultiWriter(&stdout, opts.Log)
	cmd.Stderr = io.MultiWriter(&stderr, opts.Log)
	// Its own process group, so that a kill reaches taskset's child too and
	// a terminal's ^C does not reach wrk before patchproof sees it.
	proc.KillGroupOnCancel(cmd)
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("%s: %w: %s", opts.Wrk, err, firstLine(stderr.String()+stdout.String()))
		}
		return nil, err
	}
	r, err := parseReport(stdout.Bytes())
	if err != nil {
		return nil, err
	}
	r.URL, r.Threads, r.Connections = url, opts.Threads, opts.Connections
	return r, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
