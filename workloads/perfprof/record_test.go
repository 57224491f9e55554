package perfprof

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// needTools skips a test where perf or gcc is not installed (CI installs
// both).
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"perf", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// start compiles testdata/NAME.c and runs it, or runs the shell command
// line given, until the test ends.
func start(t *testing.T, name string, shell ...string) *exec.Cmd {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	// Frame pointers, so that the program's frames show their callers.
	if out, err := exec.Command("gcc", "-O1", "-fno-omit-frame-pointer", "-pthread", "-o", bin, filepath.Join("testdata", name+".c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, out)
	}
	cmd := exec.Command(bin)
	if len(shell) > 0 {
		cmd = exec.Command("sh", "-c", strings.ReplaceAll(shell[0], "BIN", bin))
	}
	// A group of its own, so that a shell's child is killed with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// checkFiles asserts that a profile's files are there and its SVG is
// well-formed.
func checkFiles(t *testing.T, p *Profile) {
	t.Helper()
	for _, f := range []string{p.Data, p.Folded} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	svg, err := os.ReadFile(p.Flamegraph)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
}

func TestRecord(t *testing.T) {
	needTools(t)
	for _, tt := range []struct {
		name  string
		prog  string
		shell []string
		check func(t *testing.T, p *Profile)
	}{
		{
			name: "lock spinner",
			prog: "lockspin",
			check: func(t *testing.T, p *Profile) {
				if p.LockShare <= 0 || len(p.LockSymbols) == 0 {
					t.Errorf("lock share %.3f, lock symbols %v: want lock time", p.LockShare, p.LockSymbols)
				}
			},
		},
		{
			name: "CPU spinner",
			prog: "spin",
			check: func(t *testing.T, p *Profile) {
				if p.LockShare >= 0.2 {
					t.Errorf("lock share %.3f of a program without locks, lock symbols %v", p.LockShare, p.LockSymbols)
				}
				if p.Top[0].Name != "main" {
					t.Errorf("top symbol %+v, want main", p.Top[0])
				}
			},
		},
		{
			// As Apache's event MPM: the work is in a child of the PID asked for.
			name:  "child of a shell",
			prog:  "spin",
			shell: []string{"BIN & wait"},
			check: func(t *testing.T, p *Profile) {
				if len(p.PIDs) != 2 {
					t.Errorf("PIDs %v, want the shell and its child", p.PIDs)
				}
				if p.Top[0].Name != "main" {
					t.Errorf("top symbol %+v, want the child's main", p.Top[0])
				}
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := start(t, tt.prog, tt.shell...)
			time.Sleep(200 * time.Millisecond) // the threads started, the shell's child forked
			dir := filepath.Join(t.TempDir(), "profile")
			p, err := Record(context.Background(), cmd.Process.Pid, Options{Duration: time.Second, Dir: dir, Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d samples, lock share %.3f, warnings %q", p.Samples, p.LockShare, p.Warnings)
			for _, s := range p.Top {
				t.Logf("  %5d %5.1f%% %s (%s)", s.Samples, 100*s.Share, s.Name, s.DSO)
			}
			for _, s := range p.LockSymbols {
				t.Logf("  lock %5d %5.1f%% %s (%s)", s.Samples, 100*s.Share, s.Name, s.DSO)
			}
			if p.Samples == 0 || len(p.Top) == 0 {
				t.Fatalf("%d samples, top %v: want samples", p.Samples, p.Top)
			}
			checkFiles(t, p)
			tt.check(t, p)
		})
	}
}

// A process that sleeps throughout has no samples: a warning, and the
// files are written all the same.
func TestRecordNoSamples(t *testing.T) {
	needTools(t)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	p, err := Record(context.Background(), cmd.Process.Pid, Options{Duration: 300 * time.Millisecond, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if p.Samples != 0 || p.LockShare != 0 || len(p.Warnings) == 0 {
		t.Errorf("%d samples, lock share %v, warnings %q: want none, 0, a warning", p.Samples, p.LockShare, p.Warnings)
	}
	checkFiles(t, p)
}

func TestRecordBad(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		pid  int
		opt  Options
		want string // in the error
		is   error
	}{
		{name: "no directory", pid: os.Getpid(), want: "no output directory"},
		{name: "no such process", pid: gone.Process.Pid, opt: Options{Dir: "DIR"}, want: "No such process"},
		{name: "not a PID", pid: -1, opt: Options{Dir: "DIR"}, want: "not a process ID"},
		{name: "no perf", pid: os.Getpid(), opt: Options{Dir: "DIR", Perf: "perf-not-installed-here"}, want: "apt-get install linux-perf", is: exec.ErrNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.opt.Dir != "" {
				tt.opt.Dir = dir
			}
			tt.opt.Duration = 200 * time.Millisecond
			p, err := Record(context.Background(), tt.pid, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Record = %+v, %v; want an error saying %q", p, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			left, _ := os.ReadDir(dir)
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			if d := cmp.Diff([]string(nil), names); d != "" {
				t.Errorf("files left in the directory (-want +got):\n%s", d)
			}
		})
	}
}

// testLog writes perf's messages to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
