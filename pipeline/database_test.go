package pipeline

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func needMariaDB(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				t.Skipf("MariaDB is not installed (apt-get install mariadb-server): no %s", tool)
			}
		}
	}
}

// gone waits until no process of pid's group is left.
func gone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(45 * time.Second); !errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH); {
		if time.Now().After(deadline) {
			t.Fatalf("mariadbd %d still running", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The run's MariaDB is one server for every stage, whatever a stage's own
// context does, and it stops when the run ends or is cancelled.
func TestDatabase(t *testing.T) {
	needMariaDB(t)
	r, _ := newTestRun(t, Config{})
	runCtx, cancelRun := context.WithCancel(t.Context())
	defer cancelRun()
	r.ctx = runCtx

	stageCtx, endStage := context.WithCancel(runCtx)
	first, err := r.Database(stageCtx)
	if err != nil {
		t.Fatal(err)
	}
	endStage() // the stage that started it ends
	second, err := r.Database(runCtx)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("a second stage got a second server")
	}
	if first.PID <= 0 || first.Port == 0 || first.Socket == "" || first.User == "" || first.Password == "" {
		t.Errorf("connection details missing: %+v", first.Conn)
	}
	if err := second.CreateDatabase(runCtx, "pp_shared"); err != nil {
		t.Errorf("the server stopped with the stage that started it: %v", err)
	}
	r.closeDatabase()
	gone(t, first.PID)

	// Started again, it goes when the run is cancelled.
	again, err := r.Database(runCtx)
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Error("a stopped server was handed out again")
	}
	cancelRun()
	gone(t, again.PID)
	r.closeDatabase()
}
