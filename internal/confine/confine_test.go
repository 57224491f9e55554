package confine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The jobs of this test binary, which its children run: each does to its
// child what a hostile input could do to a parser.
var (
	echo = Job{Name: "echo", Run: func(in []byte) (any, error) {
		var s string
		err := json.Unmarshal(in, &s)
		return s + "!", err
	}}
	fail = Job{Name: "fail", Run: func([]byte) (any, error) {
		return "partial", errors.New("read object x.o: no luck")
	}}
	environ = Job{Name: "environ", Run: func([]byte) (any, error) { return os.Environ(), nil }}
	// alloc keeps allocating: it runs out of its address space.
	alloc = Job{Name: "alloc", What: "the allocator", Run: func([]byte) (any, error) {
		for {
			allocated = append(allocated, make([]byte, 64<<20))
		}
	}}
	// recurse never returns: it runs past its stack.
	recurse = Job{Name: "recurse", What: "the type walker", Run: func([]byte) (any, error) {
		return deeper(0), nil
	}}
	// spin never stops: it runs past its CPU limit.
	spin = Job{Name: "spin", Run: func([]byte) (any, error) {
		for n := 0; ; n++ {
			if n < 0 {
				return n, nil
			}
		}
	}}
	sleep = Job{Name: "sleep", Run: func([]byte) (any, error) {
		time.Sleep(time.Minute)
		return nil, nil
	}}
	killed = Job{Name: "killed", What: "the object parser", Run: func([]byte) (any, error) {
		return nil, syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}}
	chatty = Job{Name: "chatty", Run: func([]byte) (any, error) {
		return strings.Repeat("x", 1<<20), nil
	}}
)

// allocated keeps what alloc allocated reachable.
var allocated [][]byte

// deeper recurses until the stack runs out: n never goes below zero.
func deeper(n int) int {
	if n < 0 {
		return 0
	}
	return deeper(n+1) + 1
}

func TestMain(m *testing.M) {
	Main(echo, fail, environ, alloc, recurse, spin, sleep, killed, chatty)
	os.Exit(m.Run())
}

// A job's output and its error come back; the child's environment is
// the allow list's, with the job's name.
func TestConfineRuns(t *testing.T) {
	var got string
	if err := Run(t.Context(), echo, Limits{}, "hello", &got); err != nil || got != "hello!" {
		t.Errorf("echo = %q, %v; want hello!", got, err)
	}
	got = ""
	err := Run(t.Context(), fail, Limits{}, nil, &got)
	if err == nil || err.Error() != "read object x.o: no luck" || got != "partial" {
		t.Errorf("fail = %q, %v; want its output and its error", got, err)
	}
	t.Setenv("GITHUB_TOKEN", "ghs_secret")
	t.Setenv("PATCHPROOF_GITHUB_LOGIN", "bot")
	var env []string
	if err := Run(t.Context(), environ, Limits{}, nil, &env); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(env, EnvJob+"=environ") {
		t.Errorf("the child's environment %q lacks %s", env, EnvJob)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GITHUB_TOKEN=") || strings.HasPrefix(kv, "PATCHPROOF_GITHUB_LOGIN=") {
			t.Errorf("the child got %s", kv)
		}
	}
}

// A child that allocates without end, recurses without end, spins, waits,
// is killed or says too much is an error of the parent, which survives it
// and says what happened.
func TestConfineCrashes(t *testing.T) {
	tests := []struct {
		job  Job
		lim  Limits
		want string
		is   func(*CrashError) bool
	}{
		{alloc, Limits{AddressSpace: 2 << 30}, "the allocator ran out of its 2 GiB of address space (fatal error: out of memory)", (*CrashError).OutOfMemory},
		{recurse, Limits{Stack: 16 << 20}, "the type walker exited with status 2: fatal error: stack overflow (its limits: 4 GiB of address space, 16 MiB of stack, 5m0s of CPU)", func(e *CrashError) bool { return e.Status == 2 }},
		{spin, Limits{CPU: time.Second}, "the spin child ran past its CPU limit of 1s (killed by SIGKILL)", (*CrashError).PastCPU},
		{sleep, Limits{Wall: time.Second}, "the sleep child ran past its wall-clock limit of 1s", func(e *CrashError) bool { return e.Wall }},
		{killed, Limits{}, "the object parser was killed by SIGKILL after", func(e *CrashError) bool { return e.Signal == syscall.SIGKILL && !e.PastCPU() }},
		{Job{Name: "unknown"}, Limits{}, `the unknown child exited with status 3: confine: no job "unknown" in this binary`, func(e *CrashError) bool { return e.Status == 3 }},
	}
	for _, tt := range tests {
		t.Run(tt.job.Name, func(t *testing.T) {
			err := Run(t.Context(), tt.job, tt.lim, nil, nil)
			var ce *CrashError
			if !errors.As(err, &ce) {
				t.Fatalf("Run = %v, want a *CrashError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) || !tt.is(ce) {
				t.Errorf("Run = %q (%+v), want %q", err, ce, tt.want)
			}
		})
	}
	err := Run(t.Context(), chatty, Limits{Output: 1 << 10}, nil, nil)
	if !errors.Is(err, errTooMuch) {
		t.Errorf("chatty = %v, want its output beyond the bound", err)
	}
}

// A Run its caller cancels is the caller's error, not a crash.
func TestConfineCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := Run(ctx, sleep, Limits{}, nil, nil)
	var ce *CrashError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ce) {
		t.Errorf("Run = %v, want the context's error", err)
	}
}

func TestFatalLine(t *testing.T) {
	for in, want := range map[string]string{
		"runtime: out of memory: cannot allocate 64-byte block\nfatal error: out of memory\n\ngoroutine 1": "fatal error: out of memory",
		"panic: runtime error: index out of range\n\ngoroutine 1":                                          "panic: runtime error: index out of range",
		"confine: no job\n": "confine: no job",
		"":                  "no output",
	} {
		if diff := cmp.Diff(want, fatalLine([]byte(in))); diff != "" {
			t.Errorf("fatalLine(%q): %s", in, diff)
		}
	}
}
