// Package phptests runs PHP's own test harness, run-tests.php, over the
// MySQL extensions' test suites of one build against a MySQL-compatible
// server, and turns its status and JUnit files into per-test results
// (verify/RunResult).
//
// Each Run copies run-tests.php and the suites' directories (with what they
// include: ext/pdo/tests for pdo_mysql's common.phpt, and back) into a
// private work dir, because run-tests writes its .php/.out/.diff files next
// to the tests: the build's own tree is never written to, and two runs never
// share files. Each suite is its own run-tests invocation (the suites carry a
// CONFLICTS file, so -j gives nothing inside one), run by an Executor: on
// this host in its own process group (Host), killed with its children when
// the context ends, or in a container of the build image (Container) that
// sees only the build (read-only), the private copy and the database, and
// is removed when the invocation ends, however it ends. Both give the same
// results: the same files at the same paths, the same variables. Runs of
// several builds against one server share a Conflicts: an invocation holds
// its suite's CONFLICTS groups while it runs, so that no two builds run
// suites of one group (mysqli's and pdo_mysql's "mysql") at once.
//
// The environment is what the suites read: NO_INTERACTION,
// TEST_PHP_EXECUTABLE, MYSQL_TEST_* and PDO_MYSQL_TEST_*, with
// MYSQL_TEST_SKIP_CONNECT_FAILURE on, so an unreachable server shows as
// skips, which verify/suites.Guard then refuses. The server is given as a
// workloads/mysqld.Conn.
package phptests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/proc"
	"github.com/patchproof/patchproof/workloads/mysqld"
)

// DefaultSuites are run when Options.Suites is empty, those the tree has.
var DefaultSuites = []string{"ext/mysqlnd/tests", "ext/mysqli/tests", "ext/pdo_mysql/tests"}

// Options configure Run. PHP, SrcDir and WorkDir are required.
type Options struct {
	Build   string // names the build in the result, e.g. "base-nts"
	PHP     string // the build's php CLI binary
	SrcDir  string // the build's source tree: run-tests.php, ext/*/tests
	WorkDir string // private to this run; the copy of the tests goes here

	// Suites are test directories from the tree root. Default: those of
	// DefaultSuites the tree has.
	Suites []string
	// Tests, when set, are the only tests run (paths from the tree root, as
	// in TestResult.Name), for re-runs. A test reached through a redirect
	// (ext/pdo/tests/x.phpt) runs its redirecting test and keeps only x.
	Tests []string

	// DB is the server and how to log in: Host default 127.0.0.1, Port
	// 3306, Database "test"; Socket is optional.
	DB mysqld.Conn

	// Exec runs run-tests. Default: Host{}.
	Exec Executor

	// Conflicts, shared by the Runs against one server, keeps suites of
	// one conflict group (their CONFLICTS file) from running at once.
	// Default: nil, no Run waits for another.
	Conflicts *Conflicts

	// ASan says the build is AddressSanitizer's: run-tests --asan, which
	// turns Zend's allocator off (ASan sees every block) and reports a
	// leak LeakSanitizer finds as LEAK.
	ASan bool

	// Log receives run-tests' output. Default: discarded.
	Log io.Writer
	// SuiteTimeout bounds one run-tests invocation; default 30 minutes.
	SuiteTimeout time.Duration
}

const (
	defaultSuiteTimeout = 30 * time.Minute
	// testTimeout is run-tests' --set-timeout, in seconds, as php-src's CI
	// passes it (.github/actions/test-linux): run-tests' own 60 is exceeded
	// by slow tests on a loaded runner, and a test it kills fails, so with
	// less time than CI's a test would fail here that passes there.
	testTimeout     = "120"
	defaultDatabase = "test"
	defaultPort     = 3306
)

func (o Options) withDefaults() Options {
	if o.Build == "" {
		o.Build = filepath.Base(o.SrcDir)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Exec == nil {
		o.Exec = Host{}
	}
	if o.SuiteTimeout == 0 {
		o.SuiteTimeout = defaultSuiteTimeout
	}
	if o.DB.Host == "" {
		o.DB.Host = "127.0.0.1"
	}
	if o.DB.Port == 0 {
		o.DB.Port = defaultPort
	}
	if o.DB.Database == "" {
		o.DB.Database = defaultDatabase
	}
	return o
}

// Run runs the suites and returns their results. The error says that a
// suite could not be run (no php, no tests, run-tests broke, ctx ended);
// failing tests are results, not errors. With an error, the result holds
// the suites that did run.
func Run(ctx context.Context, opt Options) (*RunResult, error) {
	opt = opt.withDefaults()
	if err := opt.check(); err != nil {
		return nil, err
	}
	// Real paths: a container binds them, and sees what it is bound at.
	if err := os.MkdirAll(opt.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("run tests: %w", err)
	}
	for _, p := range []*string{&opt.PHP, &opt.SrcDir, &opt.WorkDir} {
		real, err := realPath(*p)
		if err != nil {
			return nil, fmt.Errorf("run tests: %w", err)
		}
		*p = real
	}
	suiteDirs := opt.Suites
	if len(suiteDirs) == 0 {
		for _, s := range DefaultSuites {
			if isDir(opt.SrcDir, s) {
				suiteDirs = append(suiteDirs, s)
			}
		}
	}
	for _, s := range suiteDirs {
		if !isDir(opt.SrcDir, s) {
			return nil, fmt.Errorf("run tests: suite %s: not a directory in %s", s, opt.SrcDir)
		}
	}
	if len(suiteDirs) == 0 {
		return nil, fmt.Errorf("run tests: %s has none of %v", opt.SrcDir, DefaultSuites)
	}

	tree := filepath.Join(opt.WorkDir, "tree")
	copied, err := copyTests(opt.SrcDir, tree, suiteDirs)
	if err != nil {
		return nil, fmt.Errorf("run tests: %w", err)
	}
	fmt.Fprintf(opt.Log, "phptests: copied %s into %s\n", strings.Join(copied, ", "), tree)
	// run-tests names tests by their real path; compare against the same.
	if tree, err = filepath.EvalSymlinks(tree); err != nil {
		return nil, fmt.Errorf("run tests: %w", err)
	}
	for _, d := range []string{"tmp", "results"} {
		if err := os.MkdirAll(filepath.Join(opt.WorkDir, d), 0o755); err != nil {
			return nil, fmt.Errorf("run tests: %w", err)
		}
	}

	plan, err := planTargets(tree, suiteDirs, opt.Tests)
	if err != nil {
		return nil, fmt.Errorf("run tests: %w", err)
	}
	res := &RunResult{Build: opt.Build}
	var errs []error
	for _, p := range plan {
		s, warnings, err := runSuite(ctx, opt, tree, p)
		res.Warnings = append(res.Warnings, warnings...)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		res.Add(s)
	}
	return res, errors.Join(errs...)
}

func (o Options) check() error {
	switch {
	case o.PHP == "":
		return errors.New("run tests: no php binary given")
	case o.SrcDir == "":
		return errors.New("run tests: no source tree given")
	case o.WorkDir == "":
		return errors.New("run tests: no work dir given")
	}
	if fi, err := os.Stat(o.PHP); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("run tests: php %s: not an executable file", o.PHP)
	}
	if _, err := os.Stat(filepath.Join(o.SrcDir, "run-tests.php")); err != nil {
		return fmt.Errorf("run tests: %w", err)
	}
	src, err := filepath.Abs(o.SrcDir)
	if err != nil {
		return fmt.Errorf("run tests: %w", err)
	}
	work, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return fmt.Errorf("run tests: %w", err)
	}
	if work == src || strings.HasPrefix(work, src+string(filepath.Separator)) {
		// A work dir inside the tree would be copied into itself and make
		// run-tests write into the build's tree.
		return fmt.Errorf("run tests: work dir %s is inside the source tree %s", work, src)
	}
	return nil
}

// target is one run-tests invocation.
type target struct {
	Suite string   // the suite directory, from the tree root
	Args  []string // what run-tests is given: the suite dir or test files
	Keep  []string // when set, only these results are kept
}

// planTargets makes one target per suite; for re-runs, only the suites and
// files that hold the requested tests.
func planTargets(tree string, suiteDirs, tests []string) ([]target, error) {
	if len(tests) == 0 {
		out := make([]target, len(suiteDirs))
		for i, s := range suiteDirs {
			out[i] = target{Suite: s, Args: []string{s}}
		}
		return out, nil
	}
	redirects, err := findRedirects(tree, suiteDirs)
	if err != nil {
		return nil, err
	}
	bySuite := make(map[string]*target)
	var order []string
	for _, t := range tests {
		dir, file := filepath.ToSlash(filepath.Dir(t)), t
		if via, ok := redirects[dir]; ok {
			file = via
			dir = filepath.ToSlash(filepath.Dir(via))
		}
		if !slices.Contains(suiteDirs, dir) {
			return nil, fmt.Errorf("test %s: not in the suites %v", t, suiteDirs)
		}
		p := bySuite[dir]
		if p == nil {
			p = &target{Suite: dir}
			bySuite[dir] = p
			order = append(order, dir)
		}
		if !slices.Contains(p.Args, file) {
			p.Args = append(p.Args, file)
		}
		p.Keep = append(p.Keep, t)
	}
	out := make([]target, 0, len(order))
	for _, s := range suiteDirs { // suite order, as for a full run
		if p, ok := bySuite[s]; ok {
			out = append(out, *p)
		}
	}
	return out, nil
}

// runSuite runs run-tests.php once and parses what it wrote.
func runSuite(ctx context.Context, opt Options, tree string, t target) (SuiteRun, []string, error) {
	slug := strings.NewReplacer("/", "_", ".", "_").Replace(t.Suite)
	statusPath := filepath.Join(opt.WorkDir, "results", slug+".status.txt")
	junitPath := filepath.Join(opt.WorkDir, "results", slug+".junit.xml")
	os.Remove(statusPath)
	os.Remove(junitPath)

	groups, err := SuiteConflicts(opt.SrcDir, t.Suite)
	if err != nil {
		return SuiteRun{}, nil, fmt.Errorf("run %s on %s: %w", t.Suite, opt.Build, err)
	}
	// The wait is no part of the suite's time.
	waited := time.Now()
	release, err := opt.Conflicts.Acquire(ctx, groups)
	if err != nil {
		return SuiteRun{}, nil, fmt.Errorf("run %s on %s: %w", t.Suite, opt.Build, err)
	}
	defer release()
	if len(groups) > 0 && opt.Conflicts != nil {
		fmt.Fprintf(opt.Log, "phptests: %s: %s holds conflict group %s (waited %v)\n", opt.Build, t.Suite, strings.Join(groups, ", "), time.Since(waited).Round(time.Millisecond))
	}

	ctx, cancel := context.WithTimeout(ctx, opt.SuiteTimeout)
	defer cancel()
	args := append([]string{opt.PHP, "run-tests.php",
		"-q", "--offline", "--show-diff", "--no-color", "--no-progress",
		"--set-timeout", testTimeout,
		"-g", "FAIL,BORK,LEAK,XLEAK",
		"-W", statusPath,
	}, t.Args...)
	if opt.ASan {
		args = append(args[:2], append([]string{"--asan"}, args[2:]...)...)
	}
	tail := &tailBuffer{max: 16 * 1024}
	w := io.MultiWriter(opt.Log, tail)
	cmd := Cmd{
		Dir: tree, Args: args, Env: suiteEnv(opt, junitPath), Output: w,
		ReadOnly: readOnlyDirs(opt), Writable: []string{opt.WorkDir},
	}

	fmt.Fprintf(opt.Log, "phptests: %s: %s %s (%s)\n", opt.Build, opt.PHP, strings.Join(args[1:], " "), opt.Exec)
	start := time.Now()
	runErr, execErr := opt.Exec.Exec(ctx, cmd)
	elapsed := time.Since(start)
	release()
	fmt.Fprintf(opt.Log, "phptests: %s: %s done in %v (%v)\n", opt.Build, t.Suite, elapsed.Round(time.Millisecond), errors.Join(runErr, execErr))
	if ctx.Err() != nil {
		return SuiteRun{}, nil, fmt.Errorf("run %s on %s: %w after %v", t.Suite, opt.Build, context.Cause(ctx), elapsed.Round(time.Second))
	}
	if execErr != nil {
		return SuiteRun{}, nil, fmt.Errorf("run %s on %s: %w; output ends:\n%s", t.Suite, opt.Build, execErr, tail.String())
	}

	// What run-tests wrote is the tree's code's output: read beneath the
	// work directory, through no link out of it, and bounded.
	f, err := safefs.Open(opt.WorkDir, filepath.Join("results", slug+".status.txt"))
	if err != nil {
		return SuiteRun{}, nil, fmt.Errorf("run %s on %s: run-tests wrote no status file (%v); output ends:\n%s", t.Suite, opt.Build, runErr, tail.String())
	}
	defer f.Close()
	entries, warnings, err := parseStatus(io.LimitReader(f, maxOutputFile), tree)
	if err != nil {
		return SuiteRun{}, warnings, fmt.Errorf("run %s on %s: %w", t.Suite, opt.Build, err)
	}
	if len(entries) == 0 {
		return SuiteRun{}, warnings, fmt.Errorf("run %s on %s: run-tests ran no test (%v); output ends:\n%s", t.Suite, opt.Build, runErr, tail.String())
	}
	var exit *proc.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.Code == 1) {
		// Exit status 1 is run-tests' "some tests failed"; anything else
		// is the harness breaking.
		return SuiteRun{}, warnings, fmt.Errorf("run %s on %s: %w; output ends:\n%s", t.Suite, opt.Build, runErr, tail.String())
	}
	junit := map[string]junitDetail{}
	if jf, err := safefs.Open(opt.WorkDir, filepath.Join("results", slug+".junit.xml")); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: no JUnit file, so no durations nor skip reasons: %v", t.Suite, err))
	} else {
		junit, err = parseJUnit(io.LimitReader(jf, maxOutputFile))
		jf.Close()
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v", t.Suite, err))
		}
	}
	tests := results(tree, entries, junit)
	if len(t.Keep) > 0 {
		tests = keep(tests, t.Keep)
	}
	return NewSuiteRun(t.Suite, tests, elapsed), warnings, nil
}

// suiteEnv is the test configuration: what the suites read, and all an
// executor adds to its base environment.
func suiteEnv(opt Options, junitPath string) []string {
	db := opt.DB
	port := strconv.Itoa(db.Port)
	return []string{
		"NO_INTERACTION=1",
		"TEST_PHP_EXECUTABLE=" + opt.PHP,
		"TEST_PHP_JUNIT=" + junitPath,
		"TMPDIR=" + filepath.Join(opt.WorkDir, "tmp"),
		"MYSQL_TEST_HOST=" + db.Host,
		"MYSQL_TEST_PORT=" + port,
		"MYSQL_TEST_USER=" + db.User,
		"MYSQL_TEST_PASSWD=" + db.Password,
		"MYSQL_TEST_DB=" + db.Database,
		"MYSQL_TEST_ENGINE=InnoDB",
		"MYSQL_TEST_SOCKET=" + db.Socket,
		"MYSQL_TEST_SKIP_CONNECT_FAILURE=1",
		"PDO_MYSQL_TEST_DSN=mysql:host=" + db.Host + ";port=" + port + ";dbname=" + db.Database,
		"PDO_MYSQL_TEST_USER=" + db.User,
		"PDO_MYSQL_TEST_PASS=" + db.Password,
		"PDO_MYSQL_TEST_HOST=" + db.Host,
		"PDO_MYSQL_TEST_PORT=" + port,
		"PDO_MYSQL_TEST_DB=" + db.Database,
		"PDO_MYSQL_TEST_SOCKET=" + db.Socket,
		"PDO_MYSQL_TEST_ENGINE=InnoDB",
	}
}

// readOnlyDirs are the directories run-tests reads outside its work dir:
// the build's tree, php's directory when it lies elsewhere, and the
// database socket's directory.
func readOnlyDirs(opt Options) []string {
	dirs := []string{opt.SrcDir}
	for _, d := range []string{filepath.Dir(opt.PHP), filepath.Dir(opt.DB.Socket)} {
		if d == "." || d == "/" || slices.ContainsFunc(dirs, func(p string) bool { return within(d, p) }) {
			continue
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// realPath is p absolute, with its symlinks resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func keep(tests []TestResult, names []string) []TestResult {
	var out []TestResult
	for _, t := range tests {
		if slices.Contains(names, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(bytes.TrimSpace(b.buf))
	if lines := strings.Split(s, "\n"); len(lines) > 30 {
		s = strings.Join(lines[len(lines)-30:], "\n")
	}
	return s
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isDir reports whether rel is a directory beneath src, reached through
// no link out of it.
func isDir(src, rel string) bool {
	root, err := os.OpenRoot(src)
	if err != nil {
		return false
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	return err == nil && fi.IsDir()
}

// maxOutputFile bounds each file of run-tests' output patchproof reads:
// a status or JUnit file of the three suites is well under 1 MiB.
const maxOutputFile = 64 << 20
