package phptests

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// phpBuild is the PHP build the integration tests run: PATCHPROOF_TEST_PHP
// (its php CLI) and PATCHPROOF_TEST_PHP_SRC (its source tree). CI sets them.
func phpBuild(t *testing.T) (php, src string) {
	t.Helper()
	php, src = os.Getenv("PATCHPROOF_TEST_PHP"), os.Getenv("PATCHPROOF_TEST_PHP_SRC")
	if php == "" || src == "" {
		t.Skip("set PATCHPROOF_TEST_PHP (a php CLI built with mysqli and pdo_mysql) and PATCHPROOF_TEST_PHP_SRC (its source tree) to run PHP's tests")
	}
	return php, src
}

// startServer starts a private MariaDB for the test, with one database.
func startServer(t *testing.T, db string) *mysqld.Server {
	t.Helper()
	s, err := mysqld.Start(t.Context(), mysqld.Options{Dir: filepath.Join(t.TempDir(), "db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	if err := s.CreateDatabase(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return s
}

func dbOf(s *mysqld.Server, database string) mysqld.Conn { return s.Conn.WithDatabase(database) }

// A handful of real tests, among them those the server settings fix
// (mysqli_query: VERSION() into a VARCHAR(25); *_connect_attr: the
// performance schema) and two of ext/pdo's, reached through pdo_mysql's
// common.phpt.
var handful = []string{
	"ext/mysqli/tests/bug74021.phpt",
	"ext/mysqli/tests/mysqli_connect.phpt",
	"ext/mysqli/tests/mysqli_connect_attr.phpt",
	"ext/mysqli/tests/mysqli_query.phpt",
	"ext/pdo/tests/pdo_001.phpt",
	"ext/pdo/tests/pdo_022.phpt",
	"ext/pdo_mysql/tests/pdo_mysql_connect_attr.phpt",
	"ext/pdo_mysql/tests/pdo_mysql_connect_charset.phpt",
}

func outcomes(r *RunResult) map[string]Outcome {
	out := map[string]Outcome{}
	for name, t := range r.ByName() {
		out[name] = t.Outcome
	}
	return out
}

func listDir(t *testing.T, dirs ...string) []string {
	t.Helper()
	var all []string
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			all = append(all, filepath.Join(d, e.Name()))
		}
	}
	return all
}

func TestIntegration(t *testing.T) {
	php, src := phpBuild(t)
	s := startServer(t, "pp_it")
	srcDirs := []string{filepath.Join(src, "ext/mysqli/tests"), filepath.Join(src, "ext/pdo_mysql/tests"), filepath.Join(src, "ext/pdo/tests")}
	before := listDir(t, srcDirs...)

	var log bytes.Buffer
	work := t.TempDir()
	opt := Options{
		Build: "it", PHP: php, SrcDir: src, WorkDir: work, Log: &log,
		Suites: []string{"ext/mysqli/tests", "ext/pdo_mysql/tests"},
		Tests:  handful,
		DB:     dbOf(s, "pp_it"),
	}
	r, err := Run(t.Context(), opt)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	want := map[string]Outcome{}
	for _, name := range handful {
		want[name] = Pass
	}
	want["ext/pdo/tests/pdo_022.phpt"] = XFail
	if diff := cmp.Diff(want, outcomes(r)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s\nlog:\n%s", diff, log.String())
	}
	for _, tr := range r.ByName() {
		if tr.DurationSeconds <= 0 || tr.Title == "" {
			t.Errorf("%s: want a duration and a title from the JUnit file, got %+v", tr.Name, tr)
		}
	}
	if got := r.ByName()["ext/pdo/tests/pdo_001.phpt"].Via; got != "ext/pdo_mysql/tests/common.phpt" {
		t.Errorf("pdo_001 Via = %q, want ext/pdo_mysql/tests/common.phpt", got)
	}
	if err := Guard(r, GuardOptions{}); err != nil {
		t.Errorf("Guard on a good run: %v", err)
	}
	if diff := cmp.Diff(before, listDir(t, srcDirs...)); diff != "" {
		t.Errorf("the source tree changed (-before +after):\n%s", diff)
	}

	t.Run("re-runs", func(t *testing.T) {
		// As the tests stage re-runs what differs: the same build, the
		// tests named, a work dir of its own.
		again := opt
		again.Tests = []string{"ext/mysqli/tests/mysqli_connect.phpt", "ext/pdo/tests/pdo_022.phpt"}
		again.WorkDir = filepath.Join(work, "rerun-1")
		r, err := Run(t.Context(), again)
		if err != nil {
			t.Fatal(err)
		}
		got := r.ByName()
		if len(got) != 2 || got["ext/mysqli/tests/mysqli_connect.phpt"].Outcome != Pass || got["ext/pdo/tests/pdo_022.phpt"].Outcome != XFail {
			t.Errorf("re-run results: %+v", got)
		}
		if _, err := os.Stat(filepath.Join(work, "rerun-1", "tree")); err != nil {
			t.Errorf("re-run did not use its own work dir: %v", err)
		}
	})

	t.Run("wrong password trips the guard", func(t *testing.T) {
		bad := opt
		bad.Build, bad.WorkDir, bad.Log = "it-broken", t.TempDir(), &bytes.Buffer{}
		bad.DB.Password = "not-the-password"
		bad.Tests = slices.DeleteFunc(slices.Clone(handful), func(s string) bool { return strings.HasPrefix(s, "ext/pdo/") })
		r, err := Run(t.Context(), bad)
		if err != nil {
			t.Fatal(err)
		}
		if r.Counts.Skip != r.Counts.Total {
			t.Errorf("counts %+v: want every test skipped", r.Counts)
		}
		var ie *InfraError
		if err := Guard(r, GuardOptions{}); !errors.As(err, &ie) {
			t.Errorf("Guard = %v, want *InfraError", err)
		} else {
			t.Logf("guard: %v", ie)
		}
	})
}

// Cancelling the context kills run-tests and every test it started.
func TestCancelKillsRunTests(t *testing.T) {
	php, src := phpBuild(t)
	s := startServer(t, "pp_cancel")
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Options{
		PHP: php, SrcDir: src, WorkDir: work,
		Suites: []string{"ext/mysqli/tests"},
		DB:     dbOf(s, "pp_cancel"),
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second+proc.KillGrace+5*time.Second {
		t.Errorf("Run returned %v after the context ended", d)
	}
	if left := processesIn(t, work); len(left) > 0 {
		t.Errorf("processes left running in %s: %v", work, left)
	}
}

// processesIn lists the processes whose working directory is under dir.
func processesIn(t *testing.T, dir string) []string {
	t.Helper()
	dir, _ = filepath.EvalSymlinks(dir)
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	var out []string
	for _, p := range procs {
		cwd, err := os.Readlink(p)
		if err == nil && strings.HasPrefix(cwd, dir) {
			cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			out = append(out, filepath.Base(filepath.Dir(p))+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}
