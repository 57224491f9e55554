package proc

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// A shell's child is in its tree, the test process is not, and a PID
// that does not exist is an error.
func TestTree(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var got []int
	for range 50 {
		var err error
		if got, err = Tree(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if len(got) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != 2 || got[0] != cmd.Process.Pid {
		t.Fatalf("tree of the shell %d: %v, want it and its sleep", cmd.Process.Pid, got)
	}
	if self, _ := Tree(1); !slices.Contains(self, got[1]) {
		t.Errorf("the sleep %d is not in init's tree %v", got[1], self)
	}
	if _, err := Tree(1 << 30); err == nil {
		t.Error("a process that does not exist: no error")
	}
}
