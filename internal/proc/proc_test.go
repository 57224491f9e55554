package proc

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPorts(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if PortTaken(port) {
		t.Errorf("port %d is taken right after FreePort", port)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !PortTaken(port) {
		t.Errorf("port %d is not taken while listened on", port)
	}
}

func TestKillGroupOnCancel(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	// The child sleeps in the background: only a kill of the group ends it.
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 30 & wait")
	KillGroupOnCancel(cmd)
	start := time.Now()
	if err := cmd.Run(); err == nil {
		t.Fatal("Run = nil, want the kill's error")
	}
	if d := time.Since(start); d > KillGrace {
		t.Errorf("Run returned after %v", d)
	}
	// The background sleep is killed with the group; init reaps it.
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-cmd.Process.Pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has processes", cmd.Process.Pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExitStatus(t *testing.T) {
	ctx := context.Background()
	if code, failed, err := ExitStatus(ctx, "true", exec.CommandContext(ctx, "true").Run()); code != 0 || failed || err != nil {
		t.Errorf("true: %d %v %v", code, failed, err)
	}
	if code, failed, err := ExitStatus(ctx, "sh", exec.CommandContext(ctx, "sh", "-c", "exit 3").Run()); code != 3 || !failed || err != nil {
		t.Errorf("exit 3: %d %v %v, want 3, failed", code, failed, err)
	}
	if _, failed, err := ExitStatus(ctx, "no-such-program", exec.CommandContext(ctx, "no-such-program-pp").Run()); failed || err == nil || !strings.Contains(err.Error(), "run no-such-program") {
		t.Errorf("missing program: failed %v, err %v", failed, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, failed, err := ExitStatus(cctx, "sleep", exec.CommandContext(cctx, "sleep", "5").Run()); failed || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: failed %v, err %v", failed, err)
	}
}

func TestExitError(t *testing.T) {
	err := error(&ExitError{Args: []string{"make", "-j4"}, Code: 2})
	if got := err.Error(); got != "make exited with status 2" {
		t.Errorf("Error() = %q", got)
	}
}

// In this process's own namespace a PID is itself; a PID that no process
// has is an error.
func TestHostPIDSameNamespace(t *testing.T) {
	self := os.Getpid()
	got, err := HostPID(self, self)
	if err != nil || got != self {
		t.Fatalf("HostPID(self, self) = %d, %v; want %d", got, err, self)
	}
	if _, err := HostPID(self, 1<<30); err == nil {
		t.Fatal("HostPID of a PID no process has: no error")
	}
}
