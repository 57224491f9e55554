package proc

import (
	"context"
	"net"
	"os/exec"
	"strconv"
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
