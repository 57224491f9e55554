package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchproof/patchproof/internal/childenv"
)

// alive reports whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool { return !ended("/proc/" + strconv.Itoa(pid)) }

func sleeper(t *testing.T, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // out of any group the run would kill
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// Sweep kills the processes that carry the owner's mark, in a session of
// their own or not, and nothing else.
func TestSweepKillsMarkedOnly(t *testing.T) {
	owner := "test-host/1/" + strconv.FormatInt(time.Now().UnixNano(), 10)
	marked := sleeper(t, []string{"PATH=/usr/bin:/bin", childenv.OwnerVar + "=" + owner})
	other := sleeper(t, []string{"PATH=/usr/bin:/bin", childenv.OwnerVar + "=" + owner + "0"})
	killed, err := Sweep(owner)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(killed, []int{marked.Process.Pid}) {
		t.Errorf("killed %v, want [%d]", killed, marked.Process.Pid)
	}
	marked.Wait()
	if !alive(other.Process.Pid) {
		t.Error("a process of another owner was killed")
	}
}

// The helper process of TestClaimDirStopsWhatAKilledRunLeft and
// TestClaimRunStopsWhatAKilledRunLeft: a run that marks its children,
// claims the directory (and records itself in $PROC_TEST_RUNS, when set)
// and starts a server that leaves its process group, then waits to be
// killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PROC_TEST_RUN_DIR"); dir != "" {
		if err := MarkChildren(); err != nil {
			os.Exit(3)
		}
		if _, err := ClaimDir(dir); err != nil {
			os.Exit(4)
		}
		if runs := os.Getenv("PROC_TEST_RUNS"); runs != "" {
			if _, _, err := ClaimRun(runs, dir); err != nil {
				os.Exit(6)
			}
		}
		cmd := exec.Command("sleep", "300")
		cmd.Env = childenv.For(childenv.Tool)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			os.Exit(5)
		}
		os.WriteFile(filepath.Join(dir, "server.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startRun starts the helper run of TestMain in dir, recording itself in
// runs unless that is "", and returns it and its server's PID once the
// server runs. Both are killed when the test ends.
func startRun(t *testing.T, dir, runs string) (*exec.Cmd, int) {
	t.Helper()
	run := exec.Command(os.Args[0], "-test.run=^$")
	run.Env = append(os.Environ(), "PROC_TEST_RUN_DIR="+dir, "PROC_TEST_RUNS="+runs)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var server int
	for deadline := time.Now().Add(10 * time.Second); server == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "server.pid")); err == nil {
			server, _ = strconv.Atoi(string(b))
		}
	}
	if server == 0 {
		run.Process.Kill()
		t.Fatalf("the run never started its server (%v)", run.Wait())
	}
	t.Cleanup(func() {
		syscall.Kill(server, syscall.SIGKILL)
		run.Process.Kill()
		run.Wait()
	})
	return run, server
}

// waitGone waits a little for pid to end, and reports whether it did.
func waitGone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	return !alive(pid)
}

// A run killed with SIGKILL leaves its server running; the next run that
// claims the same directory stops it.
func TestClaimDirStopsWhatAKilledRunLeft(t *testing.T) {
	dir := t.TempDir()
	run, server := startRun(t, dir, "")
	run.Process.Kill()
	run.Wait()
	if !alive(server) {
		t.Fatal("the server died with its run: nothing to test")
	}
	killed, err := ClaimDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(killed, server) {
		t.Errorf("killed %v, want the server %d among them", killed, server)
	}
	if !waitGone(server) {
		t.Errorf("the server %d of the killed run still runs", server)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ownerFile)); strings.TrimSpace(string(b)) != Self().String() {
		t.Errorf("owner file %q, want this process %s", b, Self())
	}
	// A live owner's directory is not taken.
	os.WriteFile(filepath.Join(dir, ownerFile), []byte(Owner{Host: self.Host, PID: 1, Start: mustStart(t, 1)}.String()), 0o644)
	if _, err := ClaimDir(dir); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("a directory of a live run: %v", err)
	}
}

func mustStart(t *testing.T, pid int) uint64 {
	t.Helper()
	s, err := processStart(pid)
	if err != nil {
		t.Skipf("no start time of pid %d: %v", pid, err)
	}
	return s
}

// A run killed with SIGKILL leaves its server running, and the next run
// writes to another directory (CI removes the last one's): claiming a run
// in the runs directory they share stops the killed run's server, and
// leaves a live run's alone.
func TestClaimRunStopsWhatAKilledRunLeft(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	killedRun, killedServer := startRun(t, t.TempDir(), runs)
	liveRun, liveServer := startRun(t, t.TempDir(), runs)
	killedRun.Process.Kill()
	killedRun.Wait()
	if !alive(killedServer) {
		t.Fatal("the server died with its run: nothing to test")
	}
	liveStart, err := processStart(liveRun.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	liveRecord := filepath.Join(runs, fmt.Sprintf("%d-%d.json", liveRun.Process.Pid, liveStart))
	if _, err := os.Stat(liveRecord); err != nil {
		t.Fatalf("the live run's record: %v", err)
	}
	killedRecords, _ := filepath.Glob(filepath.Join(runs, strconv.Itoa(killedRun.Process.Pid)+"-*.json"))
	if len(killedRecords) != 1 {
		t.Fatalf("the killed run's records: %v", killedRecords)
	}

	killed, release, err := ClaimRun(runs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(killed, killedServer) || slices.Contains(killed, liveServer) {
		t.Errorf("killed %v, want the killed run's server %d and not the live run's %d", killed, killedServer, liveServer)
	}
	if !waitGone(killedServer) {
		t.Errorf("the server %d of the killed run still runs", killedServer)
	}
	if !alive(liveServer) || !alive(liveRun.Process.Pid) {
		t.Error("the live run or its server was stopped")
	}
	if _, err := os.Stat(killedRecords[0]); !os.IsNotExist(err) {
		t.Errorf("the killed run's record is still there: %v", err)
	}
	if _, err := os.Stat(liveRecord); err != nil {
		t.Errorf("the live run's record: %v", err)
	}
	own := filepath.Join(runs, fmt.Sprintf("%d-%d.json", self.PID, self.Start))
	b, err := os.ReadFile(own)
	if err != nil || !strings.Contains(string(b), `"owner":"`+self.String()+`"`) {
		t.Errorf("this run's record %q, %v; want it to name %s", b, err, self)
	}
	release()
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("this run's record is still there after release: %v", err)
	}
	// Claimed again, nothing is left to stop.
	if killed, release, err := ClaimRun(runs, t.TempDir()); err != nil || len(killed) > 0 {
		t.Errorf("a second claim killed %v (%v)", killed, err)
	} else {
		release()
	}
}
