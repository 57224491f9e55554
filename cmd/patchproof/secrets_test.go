package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const runtimeToken = "eyJRuntimeT0kenThatMustNeverBeSeen00001"

// patchproof itself (main, as TestMain runs it), started with the GitHub
// token and the Actions runtime's in its environment, shows neither in its
// /proc files while it runs (another process of its user reads them while
// it waits for its event on a FIFO), and still plans with the token.
func TestMainHidesItsSecrets(t *testing.T) {
	f := planFake(t)
	event, err := os.ReadFile(commentFile(t, "maintainer", "/patchproof PHP-8.4"))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "event.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "plan", "--github-api", f.URL(), "--event-name", "issue_comment",
		"--repository", "php/php-src", "--event", fifo)
	cmd.Env = append(os.Environ(), "PATCHPROOF_TEST_AS_MAIN=1",
		"GITHUB_TOKEN="+planToken, "GH_TOKEN="+planToken, "ACTIONS_RUNTIME_TOKEN="+runtimeToken)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// The FIFO opens for writing once patchproof has opened it to read its
	// event: it is past its start, and waits.
	w := openWhenRead(t, fifo)
	for _, file := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", cmd.Process.Pid, file))
		switch {
		case file == "environ" && errors.Is(err, fs.ErrPermission):
			continue // not dumpable: closed to its own user
		case err != nil:
			t.Errorf("read %s: %v", file, err)
		case file == "environ" && !strings.Contains(string(b), "PATCHPROOF_TEST_AS_MAIN=1\x00"):
			t.Errorf("%s is not patchproof's: it lacks PATCHPROOF_TEST_AS_MAIN", file)
		}
		// The environment is not printed: it is this test's, the CI's.
		for name, secret := range map[string]string{"the GitHub token": planToken, "ACTIONS_RUNTIME_TOKEN": runtimeToken} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("patchproof's /proc/PID/%s holds %s", file, name)
			}
		}
	}
	if _, err := w.Write(event); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("plan: %v\n%s", err, stderr.String())
	}
	if d := cmp.Diff(planOutputs, stdout.String()); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// openWhenRead opens fifo for writing as soon as a reader has it open.
func openWhenRead(t *testing.T, fifo string) *os.File {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Non-blocking, an open for writing fails (ENXIO) while no one
		// reads.
		w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return w
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			t.Fatalf("open %s for writing: %v", fifo, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
