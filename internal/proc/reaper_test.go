package proc

import (
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

// The helper process of TestClaimDirStopsWhatAKilledRunLeft: a run that
// marks its children, claims the directory and starts a server that leaves
// its process group, then waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PROC_TEST_RUN_DIR"); dir != "" {
		if err := MarkChildren(); err != nil {
			os.Exit(3)
		}
		if _, err := ClaimDir(dir); err != nil {
			os.Exit(4)
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

// A run killed with SIGKILL leaves its server running; the next run that
// claims the same directory stops it.
func TestClaimDirStopsWhatAKilledRunLeft(t *testing.T) {
	dir := t.TempDir()
	run := exec.Command(os.Args[0], "-test.run=^$")
	run.Env = append(os.Environ(), "PROC_TEST_RUN_DIR="+dir)
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
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
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
	for deadline := time.Now().Add(5 * time.Second); alive(server) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(server) {
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
