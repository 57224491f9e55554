package phptests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/docker"
	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// fakeExec plays run-tests: it records each Cmd and writes a status file
// that passes every test it was given, as run-tests would.
type fakeExec struct {
	cmds    []Cmd
	code    int   // exit status to report
	execErr error // returned instead of running
}

func (f *fakeExec) String() string { return "fake" }

func (f *fakeExec) Exec(ctx context.Context, c Cmd) (runErr, execErr error) {
	f.cmds = append(f.cmds, c)
	if f.execErr != nil {
		return nil, f.execErr
	}
	status := c.Args[slices.Index(c.Args, "-W")+1]
	var b strings.Builder
	for _, a := range c.Args[slices.Index(c.Args, "-W")+2:] {
		files, _ := filepath.Glob(filepath.Join(c.Dir, a, "*.phpt"))
		for _, f := range files {
			fmt.Fprintf(&b, "PASSED\t%s\n", f)
		}
	}
	if err := os.WriteFile(status, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	if f.code != 0 {
		return &proc.ExitError{Args: c.Args, Code: f.code}, nil
	}
	return nil, nil
}

func fakeBuild(t *testing.T) (php, src string) {
	t.Helper()
	src = writeTree(t, miniTree)
	php = filepath.Join(src, "sapi", "cli", "php")
	os.MkdirAll(filepath.Dir(php), 0o755)
	if err := os.WriteFile(php, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return php, src
}

// Run hands its executor one Cmd a suite: the private copy as working
// directory, the build and the socket's directory to read, the work dir to
// write, and the suites' variables as the only environment it adds.
func TestRunThroughExecutor(t *testing.T) {
	php, src := fakeBuild(t)
	work := t.TempDir()
	t.Setenv("GITHUB_TOKEN", "secret")
	sockDir := t.TempDir()
	f := &fakeExec{code: 1} // run-tests' "some tests failed" is a finished run
	r, err := Run(t.Context(), Options{
		Build: "b", PHP: php, SrcDir: src, WorkDir: work, Exec: f,
		Suites: []string{"ext/mysqli/tests"},
		DB:     mysqld.Conn{Host: "mariadb", Port: 3306, Socket: filepath.Join(sockDir, "mysqld.sock"), User: "u", Password: "p", Database: "d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts.Pass == 0 || r.Counts.Pass != r.Counts.Total {
		t.Errorf("counts %+v: want every test of the fake run passed", r.Counts)
	}
	if len(f.cmds) != 1 {
		t.Fatalf("%d invocations, want 1", len(f.cmds))
	}
	c := f.cmds[0]
	if want := filepath.Join(work, "tree"); c.Dir != want {
		t.Errorf("Dir = %s, want the private copy %s", c.Dir, want)
	}
	if c.Args[0] != php || c.Args[1] != "run-tests.php" {
		t.Errorf("Args = %v, want php run-tests.php ...", c.Args)
	}
	// Each test gets the 120 s php-src's CI gives it.
	if i := slices.Index(c.Args, "--set-timeout"); i < 0 || i+1 == len(c.Args) || c.Args[i+1] != "120" {
		t.Errorf("Args = %v, want --set-timeout 120", c.Args)
	}
	if d := cmp.Diff([]string{src, sockDir}, c.ReadOnly); d != "" {
		t.Errorf("ReadOnly (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{work}, c.Writable); d != "" {
		t.Errorf("Writable (-want +got):\n%s", d)
	}
	for _, kv := range c.Env {
		if !hasAnyPrefix(kv, []string{"NO_INTERACTION=", "TEST_PHP_", "TMPDIR=", "MYSQL_TEST_", "PDO_MYSQL_TEST_"}) {
			t.Errorf("Env has %q: want only the suites' variables", kv)
		}
	}
	if !slices.Contains(c.Env, "MYSQL_TEST_HOST=mariadb") || !slices.Contains(c.Env, "PDO_MYSQL_TEST_DSN=mysql:host=mariadb;port=3306;dbname=d") {
		t.Errorf("Env lacks the connection details: %v", c.Env)
	}
}

// An AddressSanitizer build's suites run with run-tests --asan, before the
// tests; no other build's do.
func TestRunASan(t *testing.T) {
	php, src := fakeBuild(t)
	for _, asan := range []bool{false, true} {
		f := &fakeExec{}
		if _, err := Run(t.Context(), Options{
			Build: "b", PHP: php, SrcDir: src, WorkDir: t.TempDir(), Exec: f, ASan: asan,
			Suites: []string{"ext/mysqli/tests"}, DB: mysqld.Conn{Host: "mariadb"},
		}); err != nil {
			t.Fatal(err)
		}
		i := slices.Index(f.cmds[0].Args, "--asan")
		if got := i == 2; got != asan || (i >= 0 && i != 2) {
			t.Errorf("ASan %v: Args = %v", asan, f.cmds[0].Args)
		}
	}
}

// An executor that cannot run run-tests is an error, not a run with no
// results; a run-tests that exits with anything but 0 or 1 broke.
func TestRunExecutorErrors(t *testing.T) {
	php, src := fakeBuild(t)
	for _, tt := range []struct {
		name string
		f    *fakeExec
		want string
	}{
		{"executor broke", &fakeExec{execErr: errors.New("engine gone")}, "engine gone"},
		{"harness broke", &fakeExec{code: 255}, "exited with status 255"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(t.Context(), Options{PHP: php, SrcDir: src, WorkDir: t.TempDir(), Exec: tt.f, Suites: []string{"ext/mysqli/tests"}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// The container of a suite: the build and the socket bound read-only, the
// work dir read-write, the database's network only, confined, limited,
// labelled, and an environment of PATH, HOME and the suites' variables.
func TestContainerSpec(t *testing.T) {
	c := &Container{Image: "img", Network: "pp-net", User: "1000:1000", Labels: map[string]string{docker.LabelOwner: "h/1/2"}}
	got := c.Spec(Cmd{
		Dir: "/w/tree", Args: []string{"/b/sapi/cli/php", "run-tests.php"}, Env: []string{"NO_INTERACTION=1"},
		ReadOnly: []string{"/b", "/run/mysql/sock"}, Writable: []string{"/w"},
	})
	want := docker.Spec{
		Image: "img", Cmd: []string{"/b/sapi/cli/php", "run-tests.php"},
		Env: append(docker.BaseEnv(), "NO_INTERACTION=1"),
		Dir: "/w/tree", User: "1000:1000",
		Binds:   []docker.Bind{{Path: "/b", ReadOnly: true}, {Path: "/run/mysql/sock", ReadOnly: true}, {Path: "/w"}},
		Network: "pp-net",
		Labels:  map[string]string{docker.LabelRole: "tests", docker.LabelOwner: "h/1/2"},
		Memory:  defaultMemory, Pids: defaultPids, Confined: true,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Spec (-want +got):\n%s", d)
	}
}

func TestReadOnlyDirs(t *testing.T) {
	for _, tt := range []struct {
		php, socket string
		want        []string
	}{
		{"/b/sapi/cli/php", "/r/mysql/sock/mysqld.sock", []string{"/b", "/r/mysql/sock"}},
		{"/elsewhere/php", "", []string{"/b", "/elsewhere"}},
		{"/b/sapi/cli/php", "/b/sock/s.sock", []string{"/b"}},
	} {
		got := readOnlyDirs(Options{SrcDir: "/b", PHP: tt.php, DB: mysqld.Conn{Socket: tt.socket}})
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("php %s socket %s (-want +got):\n%s", tt.php, tt.socket, d)
		}
	}
}
