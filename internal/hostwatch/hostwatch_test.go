package hostwatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// start runs a command until the test ends.
func start(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func copyExe(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A program, a script and a namespaced program run from the watched
// directory are found, each as what it is; a process that only reads a
// file from there is not.
func TestScanFindsWhatRunsFromRoots(t *testing.T) {
	root := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	copyExe(t, sleep, filepath.Join(root, "php"))
	os.WriteFile(filepath.Join(root, "configure"), []byte("sleep 30\n"), 0o755)
	os.WriteFile(filepath.Join(root, "data"), []byte("x\n"), 0o644)

	exe := start(t, filepath.Join(root, "php"), "30")
	script := start(t, "sh", filepath.Join(root, "configure"))
	reader := start(t, "tail", "-f", filepath.Join(root, "data"))
	var ns *exec.Cmd
	if _, err := exec.LookPath("unshare"); err == nil && os.Geteuid() == 0 {
		// A PID namespace of its own, as a container's process has.
		ns = start(t, "unshare", "--pid", "--fork", filepath.Join(root, "php"), "30")
	}
	time.Sleep(300 * time.Millisecond) // the children have exec'd

	var r Report
	r.Add(Scan([]string{root}))
	find := func(list []Finding, how, file string) bool {
		return slices.ContainsFunc(list, func(f Finding) bool { return f.How == how && f.File == file })
	}
	if !find(r.Host, "exe", filepath.Join(root, "php")) {
		t.Errorf("the program run from the root (pid %d) not found: %+v", exe.Process.Pid, r.Host)
	}
	if !find(r.Host, "script", filepath.Join(root, "configure")) {
		t.Errorf("the script run from the root (pid %d) not found: %+v", script.Process.Pid, r.Host)
	}
	for _, f := range append(r.Host, r.Container...) {
		if f.PID == reader.Process.Pid {
			t.Errorf("a process that only reads from the root was found: %+v", f)
		}
	}
	if ns == nil {
		t.Log("no unshare as root here: the container case is not exercised")
		return
	}
	if !find(r.Container, "exe", filepath.Join(root, "php")) {
		t.Errorf("the program in a PID namespace of its own is not counted as a container's: host %+v, container %+v", r.Host, r.Container)
	}
	if r.Samples != 1 {
		t.Errorf("samples %d, want 1", r.Samples)
	}
}
