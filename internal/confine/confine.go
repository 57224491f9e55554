// Package confine runs the parsers of files that code under test made (a
// build's objects and binaries, their ELF and DWARF) in a child process:
// patchproof's own executable again, which runs one named job under
// limits of address space, CPU, stack and time that it sets on itself
// before it reads its input. Whatever the input does to the parser (a
// header that claims gigabytes, a decompression bomb, a type that is its
// own type and a recursion without end), patchproof survives it and the
// runner does not run out of memory: the worst is an error, a
// *CrashError that says which limit the child met.
//
// A job's input and output are JSON, on the child's stdin and stdout, its
// output read within a bound; the limits come with the input, which is
// patchproof's own (paths, options), never a file's. A binary whose code calls Run
// calls Main first thing, with the jobs it knows (a test binary, from its
// TestMain): in the child, Main runs the job and exits.
package confine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchproof/patchproof/internal/childenv"
)

// EnvJob names, in a child's environment, the job it runs. It is not a
// secret: a name.
const EnvJob = "PATCHPROOF_CONFINE"

// Limits bound a child. The zero value is the defaults.
type Limits struct {
	// AddressSpace is the child's RLIMIT_AS: DefaultAddressSpace.
	AddressSpace int64
	// CPU is its RLIMIT_CPU, in whole seconds: DefaultCPU.
	CPU time.Duration
	// Wall is how long it may run in all: DefaultWall.
	Wall time.Duration
	// Stack is the most one goroutine's stack may take: DefaultStack.
	Stack int64
	// Output is the most its output may take, in bytes: DefaultOutput.
	Output int64
}

const (
	// DefaultAddressSpace is 4 GiB: a Go process maps some 1.2 GiB at
	// its start, and reading the DWARF of a -g libphp.so needs some
	// hundreds of MiB more; a 2 GiB runner is not taken down by it.
	DefaultAddressSpace = 4 << 30
	// DefaultCPU is 300 s: comparing mysqlnd's objects takes a second,
	// the DWARF of a ThreadSanitizer build some tens.
	DefaultCPU = 300 * time.Second
	// DefaultWall is 10 minutes, twice DefaultCPU: a child that waits
	// on nothing uses no CPU, and is still stopped.
	DefaultWall = 10 * time.Minute
	// DefaultStack is 256 MiB, a quarter of Go's: a recursion without
	// end fails in a second rather than after a GiB of stack.
	DefaultStack = 256 << 20
	// DefaultOutput is 256 MiB: a comparison's report, all of whose
	// diffs go into results.json, is a few MiB.
	DefaultOutput = 256 << 20
)

// withDefaults is l with each zero field at its default: the one place
// the defaults are applied.
func (l Limits) withDefaults() Limits {
	if l.AddressSpace <= 0 {
		l.AddressSpace = DefaultAddressSpace
	}
	if l.CPU <= 0 {
		l.CPU = DefaultCPU
	}
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	if l.Stack <= 0 {
		l.Stack = DefaultStack
	}
	if l.Output <= 0 {
		l.Output = DefaultOutput
	}
	return l
}

// A Job is work that runs in a child.
type Job struct {
	// Name is how the child knows it: unique among the jobs of a binary.
	Name string
	// What names it in an error: "the object parser".
	What string
	// Run does the job in the child: in is the JSON Run was given, and
	// the value it returns is given back as JSON, with the error's
	// message (which loses its type: a job whose caller tells errors
	// apart says so in its output).
	Run func(in []byte) (any, error)
}

// request is what a child reads on its stdin.
type request struct {
	Limits Limits          `json:"limits"`
	In     json.RawMessage `json:"in"`
}

// reply is what a child writes on its stdout.
type reply struct {
	Out json.RawMessage `json:"out,omitempty"`
	Err string          `json:"error,omitempty"`
}

// Run runs job in a child under lim, given in as JSON, and decodes the
// job's output into out, where it gave one. The job's error is an error
// of Run's, after out is decoded; a child that did not finish (killed,
// beyond its limits, crashed) is a *CrashError.
func Run(ctx context.Context, job Job, lim Limits, in, out any) error {
	lim = lim.withDefaults()
	raw, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("run %s: %w", job.Name, err)
	}
	input, err := json.Marshal(request{Limits: lim, In: raw})
	if err != nil {
		return fmt.Errorf("run %s: %w", job.Name, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("run %s: %w", job.Name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, lim.Wall)
	defer cancel()
	cmd := exec.CommandContext(wctx, exe)
	// The child gets what any tool gets (no token, no setting of
	// patchproof's), and the job's name.
	cmd.Env = append(childenv.For(childenv.Tool), EnvJob+"="+job.Name)
	cmd.Stdin = bytes.NewReader(input)
	stdout, stderr := &capped{max: lim.Output}, &capped{max: keptStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// It dies with patchproof.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("run %s: %w", job.Name, ctx.Err())
	}
	switch ps := cmd.ProcessState; {
	case ps == nil:
		return fmt.Errorf("run %s: %w", job.Name, runErr)
	case !ps.Success():
		return crash(job, lim, ps, wctx.Err() != nil, stderr.Bytes())
	case runErr != nil:
		// It exited, but its output did not all come (WaitDelay).
		return fmt.Errorf("run %s: %w", job.Name, runErr)
	}
	if stdout.over {
		return fmt.Errorf("run %s: its output is %w (%d bytes)", job.Name, errTooMuch, lim.Output)
	}
	var rep reply
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return fmt.Errorf("run %s: read its output: %w", job.Name, err)
	}
	if len(rep.Out) > 0 && out != nil {
		if err := json.Unmarshal(rep.Out, out); err != nil {
			return fmt.Errorf("run %s: read its output: %w", job.Name, err)
		}
	}
	if rep.Err != "" {
		return errors.New(rep.Err)
	}
	return nil
}

var errTooMuch = errors.New("larger than its bound")

// keptStderr is how much of a child's stderr is kept: the Go runtime's
// "fatal error" comes first, before its goroutines' stacks.
const keptStderr = 16 << 10

// capped keeps the first max bytes written to it, and whether more came:
// a child's output never fills patchproof's memory. (It holds its buffer
// rather than embedding it, whose ReadFrom io.Copy would call instead of
// Write.)
type capped struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if left := c.max - int64(c.buf.Len()); int64(len(p)) > left {
		c.over = true
		c.buf.Write(p[:max(left, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte { return c.buf.Bytes() }

// Main runs the job EnvJob names, in the child, among jobs, and exits; it
// returns at once where EnvJob is not set. Call it first thing in main,
// and in the TestMain of a test binary whose tests call Run.
func Main(jobs ...Job) {
	name, ok := os.LookupEnv(EnvJob)
	if !ok {
		return
	}
	os.Exit(child(name, jobs, os.Stdin, os.Stdout, os.Stderr))
}

// maxInput bounds what a child reads: its input is patchproof's own
// (paths and options), never a file's.
const maxInput = 16 << 20

// child runs the job named name; its result is the process's exit status.
func child(name string, jobs []Job, stdin io.Reader, stdout, stderr io.Writer) int {
	i := slices.IndexFunc(jobs, func(j Job) bool { return j.Name == name })
	if i < 0 {
		fmt.Fprintf(stderr, "confine: no job %q in this binary\n", name)
		return 3
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(stdin, maxInput)).Decode(&req); err != nil {
		fmt.Fprintf(stderr, "confine: %s: read input: %v\n", name, err)
		return 3
	}
	// Before the job reads a byte of any file.
	if err := limit(req.Limits.withDefaults()); err != nil {
		fmt.Fprintf(stderr, "confine: %s: %v\n", name, err)
		return 3
	}
	out, err := jobs[i].Run(req.In)
	var rep reply
	if err != nil {
		rep.Err = err.Error()
	}
	if out != nil {
		if rep.Out, err = json.Marshal(out); err != nil {
			fmt.Fprintf(stderr, "confine: %s: write output: %v\n", name, err)
			return 3
		}
	}
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		return 3
	}
	return 0
}

// limit sets lim on this process, before its job starts.
func limit(lim Limits) error {
	cpu := uint64((lim.CPU + time.Second - 1) / time.Second)
	for _, r := range []struct {
		what     string
		resource int
		value    uint64
	}{
		{"address space", unix.RLIMIT_AS, uint64(lim.AddressSpace)},
		// Soft and hard alike: the kernel kills at once (SIGKILL),
		// where the Go runtime would ignore a SIGXCPU.
		{"CPU", unix.RLIMIT_CPU, cpu},
		// A crash leaves no core of the parser's memory behind.
		{"core", unix.RLIMIT_CORE, 0},
	} {
		// A limit patchproof was started under already stays: a process
		// may lower its hard limit, never raise it.
		var cur unix.Rlimit
		if err := unix.Getrlimit(r.resource, &cur); err == nil && cur.Max < r.value {
			r.value = cur.Max
		}
		if err := unix.Setrlimit(r.resource, &unix.Rlimit{Cur: r.value, Max: r.value}); err != nil {
			return fmt.Errorf("limit its %s: %w", r.what, err)
		}
	}
	// The garbage collector works harder as the heap nears the address
	// space, instead of growing it twice past what is live.
	debug.SetMemoryLimit(lim.AddressSpace / 4 * 3)
	debug.SetMaxStack(int(lim.Stack))
	return nil
}
