package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchproof/patchproof/internal/childenv"
	"github.com/patchproof/patchproof/internal/confine"
	"github.com/patchproof/patchproof/pipeline"
	"github.com/patchproof/patchproof/pipeline/github/githubfake"
	"github.com/patchproof/patchproof/pipeline/results"
)

// TestMain lets a test run this binary as patchproof itself, a process
// that can be killed: with PATCHPROOF_TEST_AS_MAIN=1 it is main. First, it
// runs the checks' confined parsers, where it is their child.
func TestMain(m *testing.M) {
	confine.Main(pipeline.ConfinedJobs()...)
	if os.Getenv("PATCHPROOF_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// A run killed with SIGKILL while its report posts (the GitHub API
// accepts and never answers) leaves results.json running; report --post of
// it on the GitHub fake says incomplete, sets an error status and exits 2.
func TestKilledRunReportsIncomplete(t *testing.T) {
	cleanEnv(t)
	repo := smallPHPRepo(t)
	out := filepath.Join(t.TempDir(), "out")
	asked := make(chan struct{}, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer hung.Close()

	cmd := exec.Command(os.Args[0], "run", "--cache", t.TempDir(), "--out", out,
		"--repo", repo, "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats", "--stages", "checkout",
		"--post", "--post-to", "php/php-src#4242", "--github-api", hung.URL)
	cmd.Env = append(os.Environ(), "PATCHPROOF_TEST_AS_MAIN=1", "GITHUB_TOKEN="+cmdToken)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the run never posted:\n%s", log.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	path := filepath.Join(out, "results.json")
	res, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.StatusRunning || len(res.Targets) != 1 {
		t.Fatalf("killed run: status %s, %d targets; want running, 1", res.Status, len(res.Targets))
	}
	f := githubfake.New(t)
	f.AddUser("patchproof-bot", cmdToken)
	f.AddPR(githubfake.PR{Owner: "php", Repo: "php-src", Number: 4242,
		Base: githubfake.Branch{Ref: "PHP-8.2", SHA: res.Targets[0].Base.Commit},
		Head: githubfake.Branch{Ref: "mysqlnd-atomic-stats", SHA: res.Targets[0].Head.Commit}})
	t.Setenv("GITHUB_TOKEN", cmdToken)
	code, _, stderr := runReport(t, path, "--post", "--pr", "4242", "--repo", pipeline.DefaultRepo, "--github-api", f.URL())
	if code != 2 || !strings.Contains(stderr, "incomplete: did not finish: the run: running") {
		t.Errorf("report: exit %d, stderr %q; want 2, incomplete", code, stderr)
	}
	cs := f.Comments("php", "php-src", 4242)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "## ⏹️ patchproof: incomplete") {
		t.Errorf("want one comment saying incomplete, got %+v", cs)
	}
	st := f.Statuses("php", "php-src", res.Targets[0].Head.Commit)
	if len(st) != 1 || st[0].State != "error" {
		t.Errorf("statuses %+v, want one error", st)
	}
}

// A run killed with SIGKILL leaves a process it started running (here a
// sleep, marked as the run marks its children); the next run, with another
// --out as CI's next job has, stops it, and leaves alone what a run that
// still runs started.
func TestNextRunStopsWhatAKilledRunLeft(t *testing.T) {
	cleanEnv(t)
	cache := t.TempDir()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(silent.Close) // after the runs that wait on it are killed
	// A run that waits in its fetch, and the process it "started": the
	// run's mark is read from the record it made in the cache.
	start := func(name string) (run, child *exec.Cmd) {
		t.Helper()
		run = exec.Command(os.Args[0], "run", "--cache", cache, "--out", filepath.Join(t.TempDir(), name),
			"--repo", silent.URL+"/php/php-src.git", "--base", "PHP-8.2", "--head", "topic", "--fetch-idle-timeout", "10m")
		run.Env = append(os.Environ(), "PATCHPROOF_TEST_AS_MAIN=1")
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { run.Process.Kill(); run.Wait() })
		var owner string
		for deadline := time.Now().Add(30 * time.Second); owner == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			records, _ := filepath.Glob(filepath.Join(cache, "runs", strconv.Itoa(run.Process.Pid)+"-*.json"))
			if len(records) == 1 {
				var rec struct{ Owner string }
				if b, err := os.ReadFile(records[0]); err == nil && json.Unmarshal(b, &rec) == nil {
					owner = rec.Owner
				}
			}
		}
		if owner == "" {
			t.Fatalf("run %s recorded no owner in %s/runs", name, cache)
		}
		child = exec.Command("sleep", "300")
		child.Env = []string{"PATH=/usr/bin:/bin", childenv.OwnerVar + "=" + owner}
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { child.Process.Kill(); child.Wait() })
		return run, child
	}
	killed, leftover := start("killed")
	_, liveChild := start("live")
	killed.Process.Kill()
	killed.Wait()

	waited := make(chan struct{})
	go func() { leftover.Wait(); close(waited) }()
	var log strings.Builder
	next := exec.Command(os.Args[0], "run", "--cache", cache, "--out", filepath.Join(t.TempDir(), "next"),
		"--repo", smallPHPRepo(t), "--base", "PHP-8.2", "--head", "mysqlnd-atomic-stats", "--stages", "checkout")
	next.Env = append(os.Environ(), "PATCHPROOF_TEST_AS_MAIN=1")
	next.Stdout, next.Stderr = &log, &log
	// A run of the checkout alone checks nothing: exit 2, and no other
	// failure.
	var exit *exec.ExitError
	if err := next.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(log.String(), "nothing was checked") {
		t.Fatalf("the next run: %v, want exit 2 for nothing checked\n%s", err, log.String())
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatalf("the killed run's process %d still runs after the next run:\n%s", leftover.Process.Pid, log.String())
	}
	if !strings.Contains(log.String(), "stopped 1 processes that killed runs left running (pids ["+strconv.Itoa(leftover.Process.Pid)+"])") {
		t.Errorf("the next run did not say what it stopped:\n%s", log.String())
	}
	if err := liveChild.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the live run's process was stopped: %v", err)
	}
}
