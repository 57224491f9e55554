package service

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchproof/patchproof/internal/childenv"
)

// start starts sh -c script in dir and waits until the script has written
// the file "ready" (its child's pid, or anything), which it must do once its
// traps are set.
func start(t *testing.T, ctx context.Context, opt Options, script string) (*Process, string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	opt.Path, opt.Args, opt.Dir = "sh", []string{"-c", script}, dir
	p, err := Start(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	ready := filepath.Join(dir, "ready")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(ready)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return p, strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready within 10s", script)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone reports whether pid is no longer running: absent, or a zombie
// waiting for a parent (init, after it was orphaned) to reap it.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(s[i+1:], " Z")
}

func waitExited(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("still running after 30s")
	}
}

func TestStopKillsGroup(t *testing.T) {
	// SIGTERM goes to sh only; its child, in the same group, dies when the
	// group is killed.
	p, child := start(t, context.Background(), Options{Name: "sleeper"},
		`sleep 300 & echo $! > ready; wait`)
	childPid, err := strconv.Atoi(child)
	if err != nil {
		t.Fatal(err)
	}
	if p.HasExited() || p.StopRequested() {
		t.Fatal("exited or stop requested before Stop")
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Stop() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop #%d: %v", i, err)
		}
	}
	if !p.HasExited() || !p.StopRequested() {
		t.Errorf("after Stop: HasExited %v, StopRequested %v", p.HasExited(), p.StopRequested())
	}
	if !gone(childPid) {
		t.Errorf("child %d still running after Stop", childPid)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	p, child := start(t, context.Background(), Options{Name: "stubborn", StopTimeout: 300 * time.Millisecond, TermGroup: true},
		`trap "" TERM; sleep 300 & echo $! > ready; wait`)
	childPid, err := strconv.Atoi(child)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Stop()
	if !errors.Is(err, ErrKilled) {
		t.Fatalf("Stop: %v, want ErrKilled", err)
	}
	if want := "stop stubborn: pid " + strconv.Itoa(p.Pid()) + " did not stop within 300ms of SIGTERM: killed"; err.Error() != want {
		t.Errorf("Stop: %q, want %q", err, want)
	}
	if err2 := p.Stop(); err2 != err {
		t.Errorf("second Stop: %v, want the first one's %v", err2, err)
	}
	if !gone(childPid) {
		t.Errorf("child %d, which ignores SIGTERM, still running after Stop", childPid)
	}
}

func TestCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, _ := start(t, ctx, Options{Name: "sleeper"}, `echo > ready; exec sleep 300`)
	cancel()
	waitExited(t, p)
	if !p.StopRequested() {
		t.Error("exit after cancel not seen as requested")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop after cancel: %v", err)
	}
}

func TestExitsByItself(t *testing.T) {
	p, _ := start(t, context.Background(), Options{Name: "quitter"}, `echo > ready; exit 3`)
	waitExited(t, p)
	if !p.HasExited() || p.StopRequested() {
		t.Errorf("HasExited %v, StopRequested %v; want true, false", p.HasExited(), p.StopRequested())
	}
	var ee *exec.ExitError
	if err := p.WaitErr(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("WaitErr: %v, want exit status 3", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// A server gets what childenv allows its kind of patchproof's environment,
// then its own variables: none of the CI's tokens or other secrets.
func TestEnvironmentHasNoTokens(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_ServiceMustNeverSeeThis0000000001")
	t.Setenv("GH_TOKEN", "gho_ServiceMustNeverSeeThis0000000002")
	t.Setenv("MYSQL_PWD", "ServiceMustNeverSeeThis0000000003")
	t.Setenv("GPG_PASSPHRASE", "ServiceMustNeverSeeThis0000000004")
	p, _ := start(t, context.Background(), Options{Kind: childenv.Database, Env: []string{"OWN=1"}},
		`env > env.txt; echo ok > ready; sleep 300`)
	p.Stop()
	env, err := os.ReadFile(filepath.Join(p.opt.Dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"GITHUB_TOKEN", "GH_TOKEN", "ServiceMustNeverSeeThis"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("the server saw %s", secret)
		}
	}
	if !strings.Contains(string(env), "PATH=") || !strings.Contains(string(env), "\nOWN=1\n") {
		t.Errorf("the server has no PATH or not its own variable:\n%s", env)
	}
}
